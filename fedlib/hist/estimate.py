"""Estimators of HIST's constants L, σ², δ1², δ2², f(x̄0) − f* on the real model and data (choices in
:mod:`fedlib.hist.theory`'s docstring); L by the shared Hessian power iteration
(:func:`fedlib.core.estimators.hessian_top_eigenvalue`)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..core.estimators import hessian_top_eigenvalue
from ..core.seeding import numpy_rng
from ..core.validate import ParameterTypeError, check_choice, check_float, check_instance, check_int, check_list
from .config import SETTINGS, HistConfig
from .run import iterate_hist, prepare
from .sampling import client_partition
from .engine import MLPState
from .theory import (corollary1_min_T, corollary1_step_size, max_E_order, max_H_order, step_size_ok, step_size_terms,
                     theorem1_bound)


def _check_rng(name: str, rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"{name} must be a numpy.random.Generator, got {type(rng).__name__}")


def _int_list(name: str, value, low: int = 1) -> list:
    return check_list(name, value, lambda n, v: check_int(n, v, low))


def _params(state: MLPState) -> list[torch.Tensor]:
    return [t.detach().clone().requires_grad_(True) for t in (state.w1, state.b1, state.w2, state.b2)]


def _loss(params: list[torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    w1, b1, w2, b2 = params
    return F.cross_entropy(torch.addmm(b2, torch.relu(torch.addmm(b1, x, w1.T)), w2.T), y)


def full_loss(state: MLPState, x: torch.Tensor, y: torch.Tensor) -> float:
    """Mean cross-entropy of the global model on ``x [n, d]``, ``y [n]`` (f(x) on the training set)."""
    with torch.no_grad():
        return float(_loss([state.w1, state.b1, state.w2, state.b2], x, y))


def client_gradients(state: MLPState, x: torch.Tensor, y: torch.Tensor, parts: list[np.ndarray]) -> torch.Tensor:
    """Exact full-batch gradients ∇F_i(x) of every client: ``[U, P]`` (P = number of parameters)."""
    out = []
    for idx in parts:
        params = _params(state)
        grads = torch.autograd.grad(_loss(params, x[idx], y[idx]), params)
        out.append(torch.cat([g.reshape(-1) for g in grads]))
    return torch.stack(out)


def dissimilarities(client_grads: torch.Tensor, num_cells: int) -> tuple[float, float]:
    """δ1² (eq. 10) and δ2² (eq. 11) at one point from ``[U, P]`` client gradients (cell-major clients).

    δ1² = (1/N) Σ_j ‖∇f_j − ∇f‖², ∇f_j = mean of cell j's clients, ∇f = mean of the ∇f_j;
    δ2² = max_j (1/n_j) Σ_{i∈C_j} ‖∇F_i − ∇f_j‖².

    Raises:
        ValueError: N < 1 or N does not divide U. ParameterTypeError: N not an integer, grads not a 2-D tensor.
    """
    check_int("num_cells", num_cells, 1)
    if not isinstance(client_grads, torch.Tensor) or client_grads.ndim != 2:
        raise ParameterTypeError(f"client_grads must be a [U, P] tensor, got {type(client_grads).__name__}")
    u = client_grads.shape[0]
    if u % num_cells:
        raise ValueError(f"num_cells ({num_cells}) must divide the number of clients ({u})")
    cells = client_grads.view(num_cells, u // num_cells, -1).double()
    cell_mean = cells.mean(1)
    glob = cell_mean.mean(0)
    delta1 = float(((cell_mean - glob) ** 2).sum(1).mean())
    delta2 = float(((cells - cell_mean[:, None]) ** 2).sum(2).mean(1).max())
    return delta1, delta2


def gradient_variance(state: MLPState, x: torch.Tensor, y: torch.Tensor, parts: list[np.ndarray],
                      batch_size: int, num_draws: int, rng: np.random.Generator,
                      client_grads: torch.Tensor | None = None) -> np.ndarray:
    """σ_i² = E‖∇l(x, ξ) − ∇F_i(x)‖² per client (Assumption 4), for minibatches of ``batch_size`` drawn
    with replacement (as the engine draws them), by Monte Carlo over ``num_draws`` minibatches.

    Returns:
        ``[U]`` float64 array.
    """
    check_int("num_draws", num_draws, 1)
    check_int("batch_size", batch_size, 1)
    _check_rng("rng", rng)
    full = client_grads if client_grads is not None else client_gradients(state, x, y, parts)
    out = np.zeros(len(parts))
    for i, idx in enumerate(parts):
        acc = 0.0
        for _ in range(num_draws):
            batch = torch.from_numpy(idx[rng.integers(0, len(idx), batch_size)]).to(x.device)
            params = _params(state)
            grads = torch.autograd.grad(_loss(params, x[batch], y[batch]), params)
            acc += float(((torch.cat([g.reshape(-1) for g in grads]) - full[i]) ** 2).sum())
        out[i] = acc / num_draws
    return out


def _hessian_top(state: MLPState, x: torch.Tensor, y: torch.Tensor, iters: int, generator: torch.Generator) -> float:
    params = _params(state)
    return hessian_top_eigenvalue(lambda: _loss(params, x, y), params, iters, generator)


def estimate_constants(points: list[MLPState], x: torch.Tensor, y: torch.Tensor, parts: list[np.ndarray],
                       num_cells_list: Sequence[int], batch_size: int, seed_rng: np.random.Generator,
                       sigma_draws: int = 8, smoothness_clients: int = 6, power_iters: int = 15,
                       init_state: MLPState | None = None, parts_for_cells: dict | None = None) -> dict:
    """Estimate L, σ², δ1²(N), δ2²(N) and f(x̄0) − f* at ``points`` (global models of a pilot run).

    Args:
        points: models at which to evaluate (e.g. x̄^{mE} for a few m).
        x, y: training inputs ``[n, d]`` and labels ``[n]``.
        parts: per-client index arrays (cell-major) used for σ² and L.
        num_cells_list: the N for which δ1², δ2² are wanted (clients grouped u // (U/N)).
        batch_size: minibatch size of σ².
        seed_rng: numpy generator (``system`` stream) for minibatches, clients and power-iteration starts.
        sigma_draws: minibatches per client for σ². smoothness_clients: clients sampled for L (1..len(parts);
            more than there are clients is refused, never clamped).
        power_iters: power-iteration steps for L.
        init_state: x̄0 for f(x̄0) (default ``points[0]``).
        parts_for_cells: optional ``{N: parts}`` when the partition depends on N (cell-i.i.d. setting).

    Returns:
        ``{"L", "sigma2", "sigma2_mean", "delta1_sq": {N: ...}, "delta2_sq": {N: ...}, "f_gap",
        "per_point": [...]}`` (maxima over points, as the assumptions hold for every x).
    """
    if not isinstance(points, (list, tuple)) or not points:
        raise ValueError(f"points must be a non-empty list of models, got {points!r}")
    _int_list("num_cells_list", num_cells_list)
    for name, value in (("batch_size", batch_size), ("sigma_draws", sigma_draws),
                        ("smoothness_clients", smoothness_clients), ("power_iters", power_iters)):
        check_int(name, value, 1)
    _check_rng("seed_rng", seed_rng)
    check_int("smoothness_clients", smoothness_clients, 1, len(parts), extra=f" (the {len(parts)} clients of parts)")
    gen = torch.Generator(device="cpu").manual_seed(int(seed_rng.integers(2 ** 62)))  # device-independent start
    per_point = []
    for state in points:
        grads = client_gradients(state, x, y, parts)
        sig = gradient_variance(state, x, y, parts, batch_size, sigma_draws, seed_rng, grads)
        d1, d2 = {}, {}
        for n in num_cells_list:
            g = grads if parts_for_cells is None else client_gradients(state, x, y, parts_for_cells[n])
            d1[n], d2[n] = dissimilarities(g, n)
        sample = seed_rng.choice(len(parts), size=smoothness_clients, replace=False)
        lip = max(_hessian_top(state, x[torch.from_numpy(parts[i]).to(x.device)],
                               y[torch.from_numpy(parts[i]).to(x.device)], power_iters, gen)
                  for i in sample)
        per_point.append({"L": lip, "sigma2": float(sig.max()), "sigma2_mean": float(sig.mean()),
                          "delta1_sq": d1, "delta2_sq": d2, "sq_norm": state.sq_norm()})
    init = init_state if init_state is not None else points[0]
    return {"L": max(p["L"] for p in per_point), "sigma2": max(p["sigma2"] for p in per_point),
            "sigma2_mean": max(p["sigma2_mean"] for p in per_point),
            "delta1_sq": {n: max(p["delta1_sq"][n] for p in per_point) for n in num_cells_list},
            "delta2_sq": {n: max(p["delta2_sq"][n] for p in per_point) for n in num_cells_list},
            "f_gap": full_loss(init, x, y), "per_point": per_point}


def _cells_key(name: str, key) -> int:
    """A cell count N from a constants dict key (an int, or its string after a JSON round trip)."""
    try:
        return int(key)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be keyed by cell counts N (integers), got the key {key!r}") from None


def bound_sweeps(constants: dict, num_cells: Sequence[int], num_clients: int, H: int, E: int, T: int,
                 gamma: float, mean_sq_norm: float, H_grid: Sequence[int], E_over_H_grid: Sequence[int],
                 T_grid: Sequence[int], form: str = "telescoped") -> dict:
    """Everything the HIST bounds figure shows, from estimated ``constants`` (:func:`estimate_constants`).

    Returns a dict of plain lists:
        ``vs_N``: {N: theorem1_bound at (gamma, H, E, T)} with δ1²(N), δ2²(N);
        ``vs_T``: {N: [bound with Corollary 1's γ(T) for T in T_grid]};
        ``gamma_max_grid``: [len(H_grid)][len(E_over_H_grid)] γ_max of (12) for N = 3 (else the middle N);
        ``orders``: {N: {"H": [...], "E": [...]}} over T_grid; ``min_T_corollary``: {N: T};
        ``step_size_ok``: {N: bool} for ``gamma`` at (H, E).
    """
    if not isinstance(constants, dict):
        raise ParameterTypeError(f"constants must be the dict of estimate_constants, got {type(constants).__name__}")
    missing = [k for k in ("L", "sigma2", "f_gap", "delta1_sq", "delta2_sq") if k not in constants]
    if missing:
        raise ValueError(f"constants lacks {missing} (expected the dict of estimate_constants / pilot_constants)")
    L = check_float("constants['L']", constants["L"], 0, low_open=True)
    sigma2 = check_float("constants['sigma2']", constants["sigma2"], 0)
    f_gap = check_float("constants['f_gap']", constants["f_gap"], 0)
    d1, d2 = ({_cells_key(f"constants['{key}']", k): check_float(f"constants['{key}'][{k!r}]", v, 0)
               for k, v in check_instance(f"constants['{key}']", constants[key], dict, "a dict {N: value}").items()}
              for key in ("delta1_sq", "delta2_sq"))
    num_clients = check_int("num_clients", num_clients, 2)
    for n in _int_list("num_cells", num_cells, 2):
        if num_clients % n:
            raise ValueError(f"num_cells must hold N >= 2 dividing num_clients ({num_clients}), got {n}")
        if n not in d1 or n not in d2:
            raise ValueError(f"num_cells holds N={n}, for which constants has no delta1_sq / delta2_sq (has "
                             f"{sorted(d1)})")
    for name, value in (("H", H), ("E", E), ("T", T)):
        check_int(name, value, 1)
    check_float("gamma", gamma, 0, low_open=True)
    check_float("mean_sq_norm", mean_sq_norm, 0)
    for name, value in (("H_grid", H_grid), ("E_over_H_grid", E_over_H_grid), ("T_grid", T_grid)):
        _int_list(name, value)
    check_choice("form", form, ("telescoped", "printed"))
    out: dict = {"vs_N": {}, "vs_T": {}, "orders": {}, "min_T_corollary": {}, "step_size_ok": {}}
    for n in num_cells:
        cpc = [num_clients // n] * n
        out["vs_N"][n] = theorem1_bound(gamma, L, sigma2, d1[n], d2[n], f_gap, cpc, E, T, mean_sq_norm, form)
        out["vs_T"][n] = [theorem1_bound(corollary1_step_size(t, cpc), L, sigma2, d1[n], d2[n], f_gap, cpc, E, t,
                                         mean_sq_norm, form) for t in T_grid]
        out["orders"][n] = {"H": [max_H_order(cpc, t) for t in T_grid], "E": [max_E_order(cpc, t) for t in T_grid]}
        out["min_T_corollary"][n] = corollary1_min_T(L, cpc, H, E)
        out["step_size_ok"][n] = step_size_ok(gamma, L, cpc, H, E)
    mid = 3 if 3 in num_cells else sorted(num_cells)[len(num_cells) // 2]  # the paper's Fig. 4 uses N = 3
    cpc = [num_clients // mid] * mid
    out["grid_N"] = mid
    out["gamma_max_grid"] = [[step_size_terms(L, cpc, h, k * h)["gamma_max"] for k in E_over_H_grid] for h in H_grid]
    out.update(H_grid=list(H_grid), E_over_H_grid=list(E_over_H_grid), T_grid=list(T_grid), gamma=gamma, T=T)
    return out


def pilot_constants(setting: str, num_cells: Sequence[int], H: int, E: int, pilot_rounds: int, num_clients: int,
                    lr: float, batch_size: int, seed: int, sigma_draws: int, smoothness_clients: int,
                    power_iters: int, dataset=None, device: str = "auto", pilot_num_cells: int = 3) -> dict:
    """Estimate the constants of Theorem 1 along a pilot HFedAvg run (full model) on real data.

    The pilot runs ``pilot_rounds`` global rounds of HFedAvg with ``pilot_num_cells`` cells; its global models
    x̄^{mE}, m = 0..pilot_rounds, are the points of :func:`estimate_constants`. δ1², δ2² are computed for each
    N in ``num_cells`` (for ``cell_iid`` with that N's own partition). ``mean_sq_norm`` is the mean of
    ‖x̄^{mE}‖² over the pilot's synchronisations (eq. 13's last term).

    Returns:
        A JSON-serialisable dict: the constants, ``mean_sq_norm``, ``config`` and ``elapsed_s``.

    Raises:
        ValueError / ParameterTypeError: naming the parameter (the run's own checks are :class:`HistConfig`'s,
            for each N of ``num_cells`` and for ``pilot_num_cells``); ``smoothness_clients`` above
            ``num_clients``.
    """
    import time

    check_choice("setting", setting, SETTINGS)
    _int_list("num_cells", num_cells)
    for name, value in (("pilot_rounds", pilot_rounds), ("sigma_draws", sigma_draws),
                        ("smoothness_clients", smoothness_clients), ("power_iters", power_iters),
                        ("pilot_num_cells", pilot_num_cells)):
        check_int(name, value, 1)
    check_int("smoothness_clients", smoothness_clients, 1, num_clients, extra=f" (num_clients = {num_clients})")
    for n in num_cells:   # every N must be a valid HIST cell count for this U (the δ² grouping u // (U/N))
        HistConfig(method="hfedavg", num_cells=n, num_clients=num_clients, H=H, E=E, lr=lr, batch_size=batch_size,
                   seed=seed, setting=setting)
    t0 = time.perf_counter()
    common = dict(setting=setting, H=H, E=E, num_clients=num_clients, lr=lr, batch_size=batch_size, seed=seed)
    cfg = HistConfig(method="hfedavg", num_cells=pilot_num_cells, global_rounds=pilot_rounds, **common)
    p = prepare(cfg, dataset, device)
    points = [g.clone() for _, g, _ in iterate_hist(p)]
    labels = p.y_train.cpu().numpy()
    parts = client_partition(cfg, labels)
    by_n = None
    if setting == "cell_iid":
        by_n = {n: client_partition(HistConfig(method="hfedavg", num_cells=n, **common), labels) for n in num_cells}
    est = estimate_constants(points, p.x_train, p.y_train, parts, list(num_cells), batch_size,
                             numpy_rng(seed, "system"), sigma_draws, smoothness_clients, power_iters,
                             parts_for_cells=by_n)
    est["delta1_sq"] = {str(k): v for k, v in est["delta1_sq"].items()}
    est["delta2_sq"] = {str(k): v for k, v in est["delta2_sq"].items()}
    for pp in est["per_point"]:
        pp["delta1_sq"] = {str(k): v for k, v in pp["delta1_sq"].items()}
        pp["delta2_sq"] = {str(k): v for k, v in pp["delta2_sq"].items()}
    est["mean_sq_norm"] = float(np.mean([pt.sq_norm() for pt in points]))
    est["config"] = dict(common, num_cells=list(num_cells), pilot_rounds=pilot_rounds, sigma_draws=sigma_draws,
                         smoothness_clients=smoothness_clients, power_iters=power_iters,
                         pilot_num_cells=pilot_num_cells)
    est["elapsed_s"] = time.perf_counter() - t0
    return est


def constants_record(config: dict, device: str = "auto") -> dict:
    """The record a ``hist_constants`` key stores: :func:`pilot_constants` of ``config``'s fields (all but ``kind``
    and ``dataset``) on the dataset ``config["dataset"]``, loaded by name."""
    from ..data import load_dataset
    run = {k: v for k, v in config.items() if k not in ("kind", "dataset")}
    return pilot_constants(**run, dataset=load_dataset(config["dataset"]), device=device)
