"""Estimators of HASFL's constants β, σ_j², G_j², ϑ (Theorem 1) from a short pilot training on real data.

Source: HASFL Sec. IV and V-B. Notation: N devices, batch sizes b_i, cut layers
L_i, L_c = max_i L_i, aggregation interval I, step size γ, per-layer constants over the model's L units.

The paper says that β, G_j² and σ_j² "are estimated following the approach in [24]" (Wang et al., "Adaptive
federated learning in resource constrained edge computing systems", IEEE JSAC 2019): [24] estimates the
smoothness online, at each aggregation, as ‖∇F(w_local) − ∇F(w_global)‖ / ‖w_local − w_global‖, and the
gradient's divergence and variance from the same gradients. What we do, and where it departs from [24] (also in
the README's deviations list):

- σ_j² (per-sample gradient variance of unit j): from M minibatch gradients of size b0 at a point w,
  σ_j² = b0 · (1/(M−1)) Σ_m ‖g_{m,j} − ḡ_j‖² (minibatch variance is σ_j²/b0, Assumption of Theorem 1).
- G_j²: Assumption 2 bounds the second moment of the *mini-batch* stochastic gradient, E‖∇_j F_i(w; ξ_i)‖²; we
  evaluate it at the pilot's batch size b0: G_j² = ‖∇_j f‖² + σ_j²/b0 (E‖g‖² = ‖E g‖² + Var g), with ‖∇_j f‖²
  estimated without bias as ‖ḡ_j‖² − σ_j²/(b0·M) (the mean of M minibatch gradients has variance σ_j²/(b0·M)), so
  G_j² = ‖ḡ_j‖² + σ_j²(M − 1)/(b0·M). The paper treats G_j² as independent of b; a smaller b0 gives a larger
  G_j².
- β, used by the decisions: largest |Hessian eigenvalue| (power iteration,
  :func:`fedlib.core.estimators.hessian_top_eigenvalue`) of the loss on b0·M distinct random training samples,
  the samples ϑ is taken on. Assumption 1 bounds the smoothness everywhere; the top eigenvalue at the pilot's
  points is that curvature, whereas [24]'s ratio is the curvature averaged along one step's direction, which is
  at most the top eigenvalue there (it can understate β several times). One minibatch of b0 samples would not do:
  its top eigenvalue varies several times between minibatches (HASFL run log).
- β_online, recorded beside it (:func:`online_beta`): at every aggregation point of the pilot (each ``interval``
  SGD steps) ‖g(w_t) − g(w_{t−I})‖ / ‖w_t − w_{t−I}‖, with g the full gradient on one fixed set of b0·M training
  samples, the maximum over the pilot's aggregation points. It is [24]'s ratio on consecutive points of one
  centralised run, not [24]'s estimator, which pairs each node's last local model with the new global model,
  averages over the nodes and smooths over rounds: that one is :mod:`fedlib.hasfl.bound.beta24`, on a federated
  pilot. ``notebooks/hasfl/hasfl_5_train_figures.ipynb`` shows the decisions under the Hessian's β, β_online and
  [24]'s.
- ϑ = f(w⁰) − f*: f(w⁰) on b0·M random training samples with f* replaced by 0 (cross-entropy >= 0), an upper
  bound.
- Each is maximised over the pilot's points (w⁰ and the model after the pilot steps).
- The pilot runs on one torch thread (:func:`pilot_constants` sets it and restores the caller's count): its SGD
  steps amplify the floating-point order of the reductions, which depends on the thread count. Another
  instruction set still moves β by a few per cent (the initial weights already differ in the last bit; the
  measurements are in the HASFL run log).
"""
from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...core.estimators import hessian_top_eigenvalue
from ...core.seeding import numpy_rng
from ...core.validate import ParameterTypeError, check_float, check_int
from ... import __version__
from ...core.seeding import seed_sequence
from ...data import DATASET_SHAPES, load_dataset
from ...split.models import make_model
from .theory import HasflConstants


def _check_model_data(model, x, y) -> None:
    if not isinstance(model, nn.Sequential) or len(model) == 0:
        raise ParameterTypeError(f"model must be a cuttable nn.Sequential of units, got {type(model).__name__}")
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        raise ParameterTypeError(f"x and y must be tensors, got {type(x).__name__} and {type(y).__name__}")
    if len(x) != len(y) or len(x) == 0:
        raise ValueError(f"x and y must hold the same non-zero number of samples, got {len(x)} and {len(y)}")


@contextmanager
def one_torch_thread():
    """Run the block on one torch (intra-op) thread, then restore the caller's count."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _unit_grads(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    return [torch.cat([p.grad.reshape(-1) for p in unit.parameters()]) if any(True for _ in unit.parameters())
            else torch.zeros(1) for unit in model]


def estimate_at(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor, batch_size: int, num_batches: int,
                power_iters: int, rng: np.random.Generator) -> dict:
    """σ_j², G_j², β and the loss at the model's current weights from ``num_batches`` minibatches of
    ``batch_size`` samples of (x, y) (see the module docstring). Returns plain lists/floats.

    Raises:
        ValueError: ``num_batches`` < 2, ``batch_size`` < 1, ``power_iters`` < 1, or ``batch_size * num_batches``
            more than the samples (the loss is taken on that many distinct samples).
        ParameterTypeError: non-integer counts, ``rng`` not a numpy Generator, model / data of the wrong type.
    """
    _check_model_data(model, x, y)
    check_int("num_batches", num_batches, 2)
    check_int("batch_size", batch_size, 1)
    check_int("power_iters", power_iters, 1)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if batch_size * num_batches > len(x):
        raise ValueError(f"batch_size * num_batches = {batch_size * num_batches} must be <= the {len(x)} samples")
    grads = []
    for _ in range(num_batches):
        idx = torch.from_numpy(rng.integers(0, len(x), batch_size))
        grads.append(_unit_grads(model, x[idx], y[idx]))
    per_unit = [torch.stack([g[j] for g in grads]).double() for j in range(len(model))]
    mean = [g.mean(0) for g in per_unit]
    sigma2 = np.array([batch_size * float(((g - m) ** 2).sum(1).sum() / (num_batches - 1))
                       for g, m in zip(per_unit, mean)])
    # E‖ḡ‖² = ‖∇f‖² + σ²/(b0·M): remove that bias, then add the minibatch variance σ²/b0 (module docstring)
    g2 = np.array([float((m ** 2).sum()) for m in mean]) + sigma2 * (num_batches - 1) / (batch_size * num_batches)
    # β and f(w) on the same batch_size·num_batches distinct samples (the VGG passes are the costly part)
    idx = torch.from_numpy(rng.choice(len(x), batch_size * num_batches, replace=False))
    xb, yb = x[idx], y[idx]
    gen = torch.Generator().manual_seed(int(rng.integers(2 ** 62)))
    beta = hessian_top_eigenvalue(lambda: F.cross_entropy(model(xb), yb), list(model.parameters()), power_iters,
                                  gen)
    with torch.no_grad():
        loss = float(F.cross_entropy(model(xb), yb))
    return {"sigma2": sigma2.tolist(), "G2": g2.tolist(), "beta": beta, "loss": loss}


def _flat_grad(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    model.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()]).double()


def _flat_params(model: nn.Sequential) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double()


def online_beta(points: list[tuple[torch.Tensor, torch.Tensor]]) -> list[float]:
    """[24]'s ratio on one run (not [24]'s estimator, :mod:`fedlib.hasfl.bound.beta24`): for consecutive
    aggregation points (w_{t−I}, g(w_{t−I})), (w_t, g(w_t)) of a pilot, ‖g(w_t) − g(w_{t−I})‖ / ‖w_t − w_{t−I}‖
    (1/step-size units of the loss: the same as β).

    Args:
        points: ``[(w, g)]``, each a flat parameter vector ``[P]`` and the gradient ``[P]`` at it, on one fixed
            set of samples, in training order (at least 2).

    Returns:
        One estimate per consecutive pair (``len(points) - 1`` floats); a pair whose weights did not move is
        skipped (no direction to measure).

    Raises:
        ValueError: fewer than 2 points, or vectors of different sizes.
    """
    if len(points) < 2:
        raise ValueError(f"points must hold at least 2 aggregation points, got {len(points)}")
    if len({int(t.numel()) for pair in points for t in pair}) != 1:
        raise ValueError("points must hold weight and gradient vectors of one size")
    out = []
    for (w0, g0), (w1, g1) in zip(points, points[1:]):
        dw = float(torch.linalg.vector_norm(w1 - w0))
        if dw > 0:
            out.append(float(torch.linalg.vector_norm(g1 - g0)) / dw)
    return out


def pilot_constants(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor, pilot_steps: int, lr: float,
                    batch_size: int, num_batches: int, power_iters: int, seed: int, interval: int = 15) -> dict:
    """Estimate HASFL's constants at w⁰ and after ``pilot_steps`` SGD steps (lr, batch) on (x, y), on one torch
    thread, and [24]'s online β at every ``interval`` steps (see the module docstring).

    Returns:
        ``{"constants": HasflConstants.to_dict(), "per_point": [...], "beta_online": float or None (no two
        aggregation points: ``pilot_steps < interval``), "beta_online_trace": [per aggregation], "interval",
        "elapsed_s"}``; the constants are the maxima over the points (β the Hessian's), ϑ the loss at w⁰.

    Raises:
        ValueError: bad counts / lr (see :func:`estimate_at`), ``interval`` < 1, or a diverged pilot (NaN / inf
            constants are refused by :class:`HasflConstants`, so they are never cached).
    """
    _check_model_data(model, x, y)
    check_int("pilot_steps", pilot_steps, 0)
    check_int("interval", interval, 1)
    check_float("lr", lr, 0, low_open=True)
    t0 = time.perf_counter()
    rng = numpy_rng(seed, "data")
    # [24]'s gradients are taken on one fixed sample set, drawn from a stream of its own (the others unchanged)
    fixed = torch.from_numpy(numpy_rng(seed, "data/online_beta").choice(len(x), min(len(x), batch_size * num_batches),
                                                                          replace=False))
    xf, yf = x[fixed], y[fixed]
    model.train()
    with one_torch_thread():
        points = [estimate_at(model, x, y, batch_size, num_batches, power_iters, rng)]
        trace = [(_flat_params(model), _flat_grad(model, xf, yf))]
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        for step in range(1, pilot_steps + 1):
            idx = torch.from_numpy(rng.integers(0, len(x), batch_size))
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()
            if step % interval == 0:
                trace.append((_flat_params(model), _flat_grad(model, xf, yf)))
        model.zero_grad(set_to_none=True)
        if pilot_steps > 0:
            points.append(estimate_at(model, x, y, batch_size, num_batches, power_iters, rng))
    betas = online_beta(trace) if len(trace) >= 2 else []
    consts = HasflConstants(max(p["beta"] for p in points), np.max([p["sigma2"] for p in points], axis=0),
                            np.max([p["G2"] for p in points], axis=0), points[0]["loss"])
    return {"constants": consts.to_dict(), "per_point": points, "beta_online": max(betas) if betas else None,
            "beta_online_trace": betas, "interval": interval, "elapsed_s": time.perf_counter() - t0}


def constants_record(config: dict, data=None) -> dict:
    """The record a ``hasfl_constants`` key stores (``config`` as
    :func:`fedlib.lab.hasfl.runs.experiments.constants_config` builds it): :func:`pilot_constants` of
    ``config["model"]`` (built from the ``model`` seed stream, torchvision's initialisation) on the real training set
    of ``config["dataset"]`` (``data``, or loaded by name).

    Returns:
        ``pilot_constants``' dict (``constants``: a :class:`HasflConstants` dict, ``per_point``, ...) with
        ``config``, ``fedlib_version`` and ``data_source``.
    """
    ds = data if data is not None else load_dataset(config["dataset"])
    ch, size, classes = DATASET_SHAPES[config["dataset"]]
    torch.manual_seed(int(seed_sequence(config["seed"], "model").generate_state(1)[0]))  # torchvision init
    model = make_model(config["model"], ch, size, classes, config.get("width", 1.0))   # yours too: import path
    rec = pilot_constants(model, ds.x_train, ds.y_train, config["pilot_steps"], config["lr"],
                          config["batch_size"], config["num_batches"], config["power_iters"], config["seed"],
                          config.get("interval", 15))
    return dict(rec, config=config, fedlib_version=__version__, data_source=ds.source)
