"""HASFL convergence bound (Theorem 1, Corollary 1), the latency objective Θ (eqs. 42/43) and estimators of
β, σ_j², G_j², ϑ from a short pilot training on real data.

Source: HASFL Sec. IV and V-B (spec ``shared/spec/hasfl.md``). Notation: N devices, batch sizes b_i, cut layers
L_i, L_c = max_i L_i, aggregation interval I, step size γ, per-layer constants over the model's L units.

Estimation method (the paper only says the constants are "estimated from training"; our choice, also in the
README's deviations list):

- σ_j² (per-sample gradient variance of unit j): from M minibatch gradients of size b0 at a point w,
  σ_j² = b0 · (1/(M−1)) Σ_m ‖g_{m,j} − ḡ_j‖² (minibatch variance is σ_j²/b0, Assumption of Theorem 1).
- G_j²: Assumption 2 bounds the second moment of the *mini-batch* stochastic gradient, E‖∇_j F_i(w; ξ_i)‖²; we
  evaluate it at the pilot's batch size b0: G_j² = ‖ḡ_j‖² + σ_j²/b0 (E‖g‖² = ‖E g‖² + Var g). The paper treats
  it as independent of b; a smaller b0 gives a larger G_j² (b0 = 1: the per-sample moment).
- β: largest |Hessian eigenvalue| of the minibatch loss by power iteration
  (:func:`fedlib.estimators.hessian_top_eigenvalue`).
- ϑ = f(w⁰) − f*: f(w⁰) on b0·M random training samples with f* replaced by 0 (cross-entropy >= 0), an upper
  bound.
- Each is maximised over the pilot's points (w⁰ and the model after the pilot steps).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import estimators


@dataclass(frozen=True)
class HasflConstants:
    """Constants of HASFL Theorem 1.

    Attributes:
        beta: β, smoothness. sigma2: ``[L]`` σ_j² per unit (per sample). G2: ``[L]`` G_j² per unit.
        vartheta: ϑ = f(w⁰) − f*.
    """

    beta: float
    sigma2: np.ndarray
    G2: np.ndarray
    vartheta: float

    def __post_init__(self):
        s, g = np.asarray(self.sigma2, float), np.asarray(self.G2, float)
        if s.ndim != 1 or s.shape != g.shape:
            raise ValueError(f"sigma2 and G2 must be 1-D arrays of equal length L, got {s.shape} and {g.shape}")
        if self.beta <= 0 or self.vartheta <= 0 or np.any(s < 0) or np.any(g < 0):
            raise ValueError("beta and vartheta must be > 0; sigma2 and G2 must be >= 0")
        object.__setattr__(self, "sigma2", s)
        object.__setattr__(self, "G2", g)

    @property
    def G2_cum(self) -> np.ndarray:
        """G̃_j² = Σ_{k<=j} G_k² (eq. 44), ``[L]``."""
        return np.cumsum(self.G2)

    def to_dict(self) -> dict:
        return {"beta": self.beta, "sigma2": self.sigma2.tolist(), "G2": self.G2.tolist(), "vartheta": self.vartheta}

    @classmethod
    def from_dict(cls, d: dict) -> "HasflConstants":
        return cls(d["beta"], np.asarray(d["sigma2"]), np.asarray(d["G2"]), d["vartheta"])


def _check_gamma(c: HasflConstants, gamma: float) -> None:
    if not 0 < gamma <= 1 / c.beta:
        raise ValueError(f"gamma must satisfy 0 < gamma <= 1/beta = {1 / c.beta:.4g} (Theorem 1), got {gamma!r}")


def _floor_terms(c: HasflConstants, gamma: float, b, cut_max, interval: int) -> tuple:
    """(variance, split) terms of Theorem 1: βγ Σ_i Σ_j σ_j²/(b_i N²) and 1{I>1}·4β²γ²I² Σ_{j<=L_c} G_j²."""
    b = np.asarray(b, dtype=float)
    variance = c.beta * gamma * c.sigma2.sum() * (1.0 / b).sum(-1) / b.shape[-1] ** 2
    split = (interval > 1) * 4 * c.beta ** 2 * gamma ** 2 * interval ** 2 * c.G2_cum[np.asarray(cut_max) - 1]
    return variance, split


def bound_floor(c: HasflConstants, gamma: float, b, cut_max, interval: int) -> np.ndarray:
    """The terms of Theorem 1 that do not vanish with R: βγ Σ_i Σ_j σ_j²/(b_i N²) + 1{I>1}·4β²γ²I² Σ_{j<=L_c} G_j².

    Args:
        b: ``[..., N]`` batch sizes. cut_max: L_c = max_i L_i (``[...]``). interval: I.
    """
    variance, split = _floor_terms(c, gamma, b, cut_max, interval)
    return variance + split


def theorem1_bound(c: HasflConstants, gamma: float, b, cuts, interval: int, rounds: int) -> dict:
    """Theorem 1's right-hand side term by term: ``init`` = 2ϑ/(γR), ``variance``, ``split`` and ``total``.

    Raises:
        ValueError: γ outside (0, 1/β], R < 1.
    """
    _check_gamma(c, gamma)
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    variance, split = _floor_terms(c, gamma, b, np.asarray(cuts).max(-1), interval)
    init = 2 * c.vartheta / (gamma * rounds)
    return {"init": init, "variance": variance, "split": split, "total": init + variance + split}


def rounds_needed(c: HasflConstants, gamma: float, b, cuts, interval: int, eps: float) -> int:
    """Corollary 1: the smallest R with bound <= ε, R = ⌈2ϑ / (γ(ε − floor))⌉.

    Raises:
        ValueError: ε <= the bound's floor (unreachable for these b and cuts; the message names the floor), or γ
        outside (0, 1/β].
    """
    _check_gamma(c, gamma)
    floor = float(bound_floor(c, gamma, b, np.asarray(cuts).max(), interval))
    if eps <= floor:
        raise ValueError(f"eps = {eps:.4g} is at or below the bound's floor {floor:.4g} for these batch sizes and "
                         f"cuts (variance + split terms of Theorem 1): no number of rounds reaches it")
    return int(math.ceil(2 * c.vartheta / (gamma * (eps - floor))))


# ---------------------------------------------------------------------------------------------------------
# estimation from a pilot run


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
        ValueError: ``num_batches`` < 2 or ``batch_size`` < 1.
    """
    if num_batches < 2 or batch_size < 1:
        raise ValueError(f"num_batches must be >= 2 and batch_size >= 1, got {num_batches}, {batch_size}")
    grads = []
    for _ in range(num_batches):
        idx = torch.from_numpy(rng.integers(0, len(x), batch_size))
        grads.append(_unit_grads(model, x[idx], y[idx]))
    per_unit = [torch.stack([g[j] for g in grads]).double() for j in range(len(model))]
    mean = [g.mean(0) for g in per_unit]
    sigma2 = np.array([batch_size * float(((g - m) ** 2).sum(1).sum() / (num_batches - 1))
                       for g, m in zip(per_unit, mean)])
    g2 = np.array([float((m ** 2).sum()) for m in mean]) + sigma2 / batch_size
    idx = torch.from_numpy(rng.integers(0, len(x), batch_size))
    params = [p for p in model.parameters()]
    gen = torch.Generator().manual_seed(int(rng.integers(2 ** 62)))
    beta = estimators.hessian_top_eigenvalue(lambda: F.cross_entropy(model(x[idx]), y[idx]), params, power_iters, gen)
    with torch.no_grad():  # f(w) on batch_size·num_batches samples (the VGG forward pass is the costly part)
        idx = torch.from_numpy(rng.choice(len(x), batch_size * num_batches, replace=False))
        loss = float(F.cross_entropy(model(x[idx]), y[idx]))
    return {"sigma2": sigma2.tolist(), "G2": g2.tolist(), "beta": beta, "loss": loss}


def pilot_constants(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor, pilot_steps: int, lr: float,
                    batch_size: int, num_batches: int, power_iters: int, seed: int) -> dict:
    """Estimate HASFL's constants at w⁰ and after ``pilot_steps`` SGD steps (lr, batch) on (x, y).

    Returns:
        ``{"constants": HasflConstants.to_dict(), "per_point": [...], "elapsed_s"}``; the constants are the
        maxima over the points, ϑ the loss at w⁰.
    """
    import time

    from .seeding import numpy_rng

    t0 = time.perf_counter()
    rng = numpy_rng(seed, "data")
    model.train()
    points = [estimate_at(model, x, y, batch_size, num_batches, power_iters, rng)]
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(pilot_steps):
        idx = torch.from_numpy(rng.integers(0, len(x), batch_size))
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x[idx]), y[idx]).backward()
        opt.step()
    if pilot_steps > 0:
        points.append(estimate_at(model, x, y, batch_size, num_batches, power_iters, rng))
    consts = HasflConstants(max(p["beta"] for p in points), np.max([p["sigma2"] for p in points], axis=0),
                            np.max([p["G2"] for p in points], axis=0), points[0]["loss"])
    return {"constants": consts.to_dict(), "per_point": points, "elapsed_s": time.perf_counter() - t0}
