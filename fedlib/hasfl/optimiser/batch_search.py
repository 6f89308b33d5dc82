"""HASFL: the exact integer batch sizes at fixed cut layers (our addition to Algorithm 2; see :mod:`.bcd`).

At fixed cuts, Θ (eq. 42) is a ratio whose numerator holds two maxima (the stragglers of eq. 38):

    Θ(b) = K · (max_i a_i b_i + Σ_i c_i b_i + max_i d_i b_i + E) / (A − B Σ_i 1/b_i),

with K = 2ϑ/γ, a_i = (ρ_{L_i}/f_i + ψ_{L_i}/r_i^U) (T_F + T_aU per sample, eqs. 28-29), d_i = (χ_{L_i}/r_i^D +
ϖ_{L_i}/f_i) (T_gD + T_B, eqs. 32-33), c_i = (ρ_L − ρ_{L_i} + ϖ_L − ϖ_{L_i})/f_s (the edge server's share, eqs.
30-31), E = T_A/I (eq. 39, independent of b), A = ε − 1{I>1}·4β²γ²I²Σ_{j<=L_c}G_j² and B = βγΣ_jσ_j²/N²
(Theorem 1's floor), each b_i an integer in 1..cap_i (memory C4 and ``max_batch``: :func:`batch_caps`).

:func:`exact_batches` finds the global integer minimiser. Dinkelbach's method over λ: each step minimises
num(b) − λ·den(b). Writing the two maxima as thresholds U >= a_i b_i and V >= d_i b_i (the straggler times),
that step is min over (U, V) of U + V + E − λA + Σ_i min_{1 <= b_i <= m_i} (c_i b_i + λB/b_i) with
m_i = min(cap_i, ⌊U/a_i⌋, ⌊V/d_i⌋): separable, and each term is convex in b_i, so its minimiser is the
unconstrained integer minimiser b*_i(λ) (⌊√(λB/c_i)⌋ or ⌈·⌉; +inf when c_i = 0) clipped to [1, m_i]. The
thresholds that matter are the straggler times themselves, U ∈ {a_k·b : b <= cap_k}, V ∈ {d_k·b : b <= cap_k},
so every pair is enumerated (vectorised): (Σ_i cap_i)² · N work per Dinkelbach step. Dinkelbach on a finite set
ends, at the optimum, after finitely many steps (λ strictly decreases until the parametric minimum is 0).
"""
from __future__ import annotations

import numpy as np

from ...core.validate import check_int
from ..bound.latency import round_latency
from .p1 import p1_coefficients
from ..bound.problem import Problem, aux_variables, batch_caps, check_cuts, check_problem

#: Default work limit of :func:`exact_batches` (threshold pairs × devices per Dinkelbach step, ~1 s of numpy).
EXACT_WORK = 60_000_000


def batch_coefficients(problem: Problem, cuts) -> dict:
    """The coefficients of Θ at fixed cuts (module docstring): ``a``, ``c``, ``d`` (``[N]``, s per sample), ``E`` (s),
    ``A`` (ε minus the split term; may be <= 0: ε unreachable at these cuts), ``B`` (> 0 unless Σσ² = 0), ``K`` (s per
    unit of the ratio: 2ϑ/γ) and ``caps`` (``[N]`` int64, :func:`batch_caps`).

    Raises:
        ValueError: ``cuts`` not N integers in 1..L.
    """
    p = check_problem(problem)
    cuts = check_cuts(p, cuts)
    if cuts.shape != (p.num_devices,):
        raise ValueError(f"cuts must hold one cut per device (N = {p.num_devices}), got shape {cuts.shape}")
    # the per-sample device terms are eqs. (28)-(29), (32)-(33) at b = 1; A, B, C_i are P1's (46) with T1 at these cuts
    lat = round_latency(p.profile, np.ones(p.num_devices), cuts, p.devices, p.servers)
    A, B, C, _ = p1_coefficients(p, cuts, aux_variables(p, np.ones(p.num_devices), cuts))
    return {"a": lat["T_F"] + lat["T_aU"], "d": lat["T_gD"] + lat["T_B"], "c": C,
            "E": float(lat["T_A"]) / p.interval, "A": A, "B": B,
            "K": 2 * p.constants.vartheta / p.gamma, "caps": batch_caps(p, cuts)}


def _best_unconstrained(c: np.ndarray, lam_b: float, cap_max: int) -> np.ndarray:
    """Integer minimiser of c_i b + lam_b/b over b >= 1 (``cap_max + 1`` stands for +inf when c_i = 0)."""
    with np.errstate(divide="ignore"):
        x = np.sqrt(lam_b / np.where(c > 0, c, np.nan))
    lo = np.maximum(np.floor(x), 1)
    hi = lo + 1
    g = lambda b: c * b + lam_b / b                                         # noqa: E731
    out = np.where(g(hi) < g(lo), hi, lo)
    return np.where(c > 0, np.minimum(out, cap_max + 1), cap_max + 1)


def _threshold_values(coef: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """Sorted distinct straggler times coef_k·b, b = 1..cap_k, at or above max_i coef_i (every b_i >= 1)."""
    vals = np.concatenate([coef[k] * np.arange(1, caps[k] + 1) for k in range(len(caps))])
    return np.unique(vals[vals >= coef.max()])


def exact_batches(problem: Problem, cuts, work_limit: int = EXACT_WORK, max_steps: int = 100) -> np.ndarray | None:
    """The integer batch sizes that minimise Θ (eq. 42) at fixed ``cuts``: a global optimum (module docstring),
    ``[N]`` int64; ``None`` when the enumeration would exceed ``work_limit`` (threshold pairs × N) or no batch
    vector is feasible (memory C4 at b = 1, or ε unreachable at these cuts).

    Raises:
        ValueError: ``cuts`` not N integers in 1..L; ``work_limit`` or ``max_steps`` not an integer >= 1.
    """
    p = check_problem(problem)
    check_int("work_limit", work_limit, 1)
    check_int("max_steps", max_steps, 1)
    co = batch_coefficients(p, cuts)
    a, d, c, caps, A, B, E = co["a"], co["d"], co["c"], co["caps"], co["A"], co["B"], co["E"]
    n = p.num_devices
    if (caps < 1).any() or A <= 0:
        return None
    us, vs = _threshold_values(a, caps), _threshold_values(d, caps)
    if len(us) * len(vs) * n > work_limit:
        return None
    tiny = 1 + 1e-12                                            # U = a_k·b_k must admit b_k despite rounding
    m_u = np.minimum(caps[None, :], np.floor(us[:, None] / a[None, :] * tiny)).astype(np.int64)    # [U, N]
    m_v = np.minimum(caps[None, :], np.floor(vs[:, None] / d[None, :] * tiny)).astype(np.int64)    # [V, N]

    def ratio(b):
        den = A - B * (1.0 / b).sum()
        return ((a * b).max() + (c * b).sum() + (d * b).max() + E) / den if den > 0 else np.inf

    best = np.maximum(caps, 1).astype(np.int64)                 # every device at its cap: the least variance
    lam = ratio(best)
    if not np.isfinite(lam):
        return None
    rows = max(1, int(4_000_000 // max(1, len(vs) * n)))
    for _ in range(max_steps):
        star = _best_unconstrained(c, lam * B, int(caps.max()))
        t_u = np.minimum(m_u, star[None, :])                    # [U, N] each device's best b below U
        val_best, arg = np.inf, None
        for s in range(0, len(us), rows):
            bb = np.minimum(t_u[s:s + rows, None, :], m_v[None, :, :]).astype(float)      # [u, V, N]
            val = us[s:s + rows, None] + vs[None, :] + (c * bb + lam * B / bb).sum(-1)
            k = int(np.argmin(val))
            if val.flat[k] < val_best:
                val_best, arg = float(val.flat[k]), (s + k // len(vs), k % len(vs))
        cand = np.minimum(t_u[arg[0]], m_v[arg[1]]).astype(np.int64)
        new = ratio(cand)
        if not new < lam * (1 - 1e-13):
            break
        best, lam = cand, new
    return best
