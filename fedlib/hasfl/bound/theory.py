"""HASFL convergence bound (Theorem 1, Corollary 1): the constants, the bound's floor and the rounds R(ε).

Source: HASFL Sec. IV and V-B. Notation: N devices, batch sizes b_i, cut layers
L_i, L_c = max_i L_i, aggregation interval I, step size γ, per-layer constants over the model's L units. The
constants are estimated by :mod:`fedlib.hasfl.bound.estimate`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.validate import ParameterTypeError, check_array, check_float, check_int


@dataclass(frozen=True)
class HasflConstants:
    """Constants of HASFL Theorem 1.

    Attributes:
        beta: β, smoothness. sigma2: ``[L]`` σ_j² per unit (per sample). G2: ``[L]`` G_j² per unit.
        vartheta: ϑ = f(w⁰) − f*.

    Raises:
        ValueError: β or ϑ not a finite number > 0, σ² or G² not finite and >= 0 (NaN / inf refused, so a diverged
            pilot is never cached as constants), shapes. ParameterTypeError: non-numeric values.
    """

    beta: float
    sigma2: np.ndarray
    G2: np.ndarray
    vartheta: float

    def __post_init__(self):
        check_float("beta", self.beta, 0, low_open=True)
        check_float("vartheta", self.vartheta, 0, low_open=True)
        s = check_array("sigma2", self.sigma2, low=0)
        g = check_array("G2", self.G2, low=0)
        if s.ndim != 1 or s.shape != g.shape:
            raise ValueError(f"sigma2 and G2 must be 1-D arrays of equal length L, got {s.shape} and {g.shape}")
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
        """The constants of :meth:`to_dict`'s dict. Raises ``ValueError`` naming a missing key."""
        if not isinstance(d, dict):
            raise ParameterTypeError(f"d must be a dict of HasflConstants.to_dict, got {type(d).__name__}")
        missing = [k for k in ("beta", "sigma2", "G2", "vartheta") if k not in d]
        if missing:
            raise ValueError(f"d lacks the constant(s) {missing}; expected keys beta, sigma2, G2, vartheta")
        return cls(d["beta"], np.asarray(d["sigma2"]), np.asarray(d["G2"]), d["vartheta"])


def _check_gamma(c: HasflConstants, gamma: float) -> None:
    if not isinstance(c, HasflConstants):
        raise ParameterTypeError(f"c must be HasflConstants, got {type(c).__name__}")
    check_float("gamma", gamma)   # a finite number; then the range of Theorem 1
    if not 0 < gamma <= 1 / c.beta:
        raise ValueError(f"gamma must satisfy 0 < gamma <= 1/beta = {1 / c.beta:.4g} (Theorem 1), got {gamma!r}")


def _floor_terms(c: HasflConstants, gamma: float, b, cut_max, interval: int) -> tuple:
    """(variance, split) terms of Theorem 1: βγ Σ_i Σ_j σ_j²/(b_i N²) and 1{I>1}·4β²γ²I² Σ_{j<=L_c} G_j²."""
    _check_gamma(c, gamma)
    check_int("interval", interval, 1)
    b = check_array("b", b, low=1, allow_inf=True)           # +inf: the large-batch limit (no variance term)
    cm = check_array("cut_max", cut_max, low=1, high=len(c.G2), integer=True)   # cut 0 must not wrap to layer L
    if b.ndim == 0 or cm.shape not in ((), b.shape[:-1]):
        raise ValueError(f"b must be [..., N] batch sizes (one per device) and cut_max one L_c per row of b "
                         f"([...] = {b.shape[:-1]}), got shapes {b.shape} and {cm.shape}")
    variance = c.beta * gamma * c.sigma2.sum() * (1.0 / b).sum(-1) / b.shape[-1] ** 2
    split = (interval > 1) * 4 * c.beta ** 2 * gamma ** 2 * interval ** 2 * c.G2_cum[np.asarray(cut_max) - 1]
    return variance, split


def _check_device_axes(b, cuts: np.ndarray, one: bool = False) -> np.ndarray:
    """``cuts`` has the shape of ``b`` (one cut per device: ``[..., N]``, or ``[N]`` when ``one``)."""
    shape = np.shape(b)
    if cuts.shape != shape or not shape or (one and len(shape) != 1):
        want = "[N]" if one else "[..., N]"
        raise ValueError(f"b and cuts must hold one entry per device, both {want} of the same shape, got shapes "
                         f"{shape} and {cuts.shape}")
    return cuts


def bound_floor(c: HasflConstants, gamma: float, b, cut_max, interval: int) -> np.ndarray:
    """The terms of Theorem 1 that do not vanish with R: βγ Σ_i Σ_j σ_j²/(b_i N²) + 1{I>1}·4β²γ²I² Σ_{j<=L_c} G_j².

    Args:
        b: ``[..., N]`` batch sizes (>= 1; +inf allowed: no variance term). cut_max: L_c = max_i L_i (``[...]``,
            integers in 1..L). interval: I (an integer >= 1).

    Raises:
        ValueError: γ outside (0, 1/β], I < 1, b < 1 or NaN, L_c outside 1..L, cut_max neither one number nor
            one per row of b. ParameterTypeError: I = 2.5, ...
    """
    variance, split = _floor_terms(c, gamma, b, cut_max, interval)
    return variance + split


def theorem1_bound(c: HasflConstants, gamma: float, b, cuts, interval: int, rounds: int) -> dict:
    """Theorem 1's right-hand side term by term: ``init`` = 2ϑ/(γR), ``variance``, ``split`` and ``total``.

    Raises:
        ValueError: γ outside (0, 1/β], R < 1, I < 1, b < 1, cuts outside 1..L, b and cuts of different shapes
            (one entry per device each). ParameterTypeError: non-integers.
    """
    _check_gamma(c, gamma)
    check_int("rounds", rounds, 1)
    cuts = _check_device_axes(b, check_array("cuts", cuts, low=1, high=len(c.G2), integer=True))
    variance, split = _floor_terms(c, gamma, b, np.asarray(cuts).max(-1), interval)
    init = 2 * c.vartheta / (gamma * rounds)
    return {"init": init, "variance": variance, "split": split, "total": init + variance + split}


def rounds_needed(c: HasflConstants, gamma: float, b, cuts, interval: int, eps: float) -> int:
    """Corollary 1: the smallest R with bound <= ε, R = ⌈2ϑ / (γ(ε − floor))⌉.

    Raises:
        ValueError: ε <= the bound's floor (unreachable for these b and cuts; the message names the floor), γ
        outside (0, 1/β], or b and cuts not both ``[N]`` (one entry per device).
    """
    _check_gamma(c, gamma)
    check_float("eps", eps, 0, low_open=True)
    cuts = _check_device_axes(b, check_array("cuts", cuts, low=1, high=len(c.G2), integer=True), one=True)
    floor = float(bound_floor(c, gamma, b, np.asarray(cuts).max(), interval))
    if eps <= floor:
        raise ValueError(f"eps = {eps:.4g} is at or below the bound's floor {floor:.4g} for these batch sizes and "
                         f"cuts (variance + split terms of Theorem 1): no number of rounds reaches it")
    return int(math.ceil(2 * c.vartheta / (gamma * (eps - floor))))
