"""HASFL P1 (46): batch sizes given the cuts and the auxiliary latencies T, by Newton–Jacobi iterations on
∂Θ'/∂b = 0 and Proposition 1's rounding (choices in :mod:`fedlib.hasfl.optimiser.bcd`'s docstring)."""
from __future__ import annotations

import functools

import numpy as np

from ...core.validate import check_array, check_bool, check_float, check_instance, check_int
from ..bound.problem import Problem, batch_caps, check_cuts, check_problem
from .memo import SolverCall


def _check_inputs(problem: Problem, cuts, T: dict) -> np.ndarray:
    """The problem, ``cuts`` (``[N]`` integers in 1..L) and ``T`` (the dict of :func:`fedlib.hasfl.aux_variables`:
    T1..T6, finite numbers >= 0) of P1; returns the cuts as an array."""
    check_problem(problem)
    cuts = check_cuts(problem, cuts)
    if cuts.shape != (problem.num_devices,):
        raise ValueError(f"cuts must hold one cut per device (N = {problem.num_devices}), got shape {cuts.shape}")
    check_instance("T", T, dict, "the dict of fedlib.hasfl.aux_variables (T1..T6)")
    missing = [k for k in ("T1", "T2", "T3", "T4", "T5", "T6") if k not in T]
    if missing:
        raise ValueError(f"T lacks {missing}: expected the dict of fedlib.hasfl.aux_variables (T1..T6)")
    for k in ("T1", "T2", "T3", "T4", "T5", "T6"):
        check_float(f"T[{k!r}]", T[k], 0)
    return cuts


def _check_abcd(A, B, C, D) -> tuple[float, float, np.ndarray, float]:
    return (check_float("A", A), check_float("B", B), check_array("C", C, low=0, ndim=1),
            check_float("D", D, 0))


def p1_coefficients(problem: Problem, cuts, T: dict) -> tuple[float, float, np.ndarray, float]:
    """A, B, C_i, D of P1 (46): Θ'(b) = 2ϑ(Σ b_i C_i + D) / (γ(A − Σ_i B/b_i)).

    A = ε − 1{I>1}·4β²γ²I²T1, B = (βγ/N²) Σ_j σ_j², C_i = (ρ_L − ρ_{L_i} + ϖ_L − ϖ_{L_i})/f_s (s per sample),
    D = T3 + T4 + (T5 + T6)/I (s).
    """
    cuts = _check_inputs(problem, cuts, T)
    p, c = problem, problem.constants
    n = p.num_devices
    k = cuts - 1
    a = p.eps - (p.interval > 1) * 4 * c.beta ** 2 * p.gamma ** 2 * p.interval ** 2 * T["T1"]
    bb = c.beta * p.gamma * c.sigma2.sum() / n ** 2
    prof = p.profile
    ci = (prof.fwd_flops[-1] - prof.fwd_flops[k] + prof.bwd_flops[-1] - prof.bwd_flops[k]) / p.servers.flops
    d = T["T3"] + T["T4"] + (T["T5"] + T["T6"]) / p.interval
    return float(a), float(bb), ci, float(d)


def newton_jacobi(A: float, B: float, C: np.ndarray, D: float, tol: float = 1e-12, max_iter: int = 200) -> np.ndarray:
    """Stationary point b̂ of Θ'(b) = (Σ b_i C_i + D)/(A − Σ B/b_i) (P1), by Newton–Jacobi iterations.

    Setting ∂Θ'/∂b_i = 0 gives F_i(b) = C_i(A − Σ_k B/b_k) − (Σ_k b_k C_k + D)·B/b_i² = 0; each sweep takes one
    Newton step on every F_i in its own variable (Jacobi), ∂F_i/∂b_i = 2B(Σ b C + D)/b_i³, halving a step that
    would leave b_i > 0. Devices with C_i = 0 (whole model on the device) have ∂Θ'/∂b_i < 0: b̂_i = +inf.

    Returns:
        ``[N]`` b̂ (float, may hold inf).

    Raises:
        ValueError: A <= 0 or B <= 0 (ε unreachable: the split term alone exceeds ε), or no convergence; NaN or
            inf coefficients, C empty or negative, D < 0, tol NaN or < 0, max_iter < 1.
    """
    A, B, C, D = _check_abcd(A, B, C, D)
    check_float("tol", tol, 0)
    check_int("max_iter", max_iter, 1)
    if A <= 0:
        raise ValueError(f"convergence constraint C1: eps is unreachable, A = eps - split term = {A:.4g} <= 0")
    if B <= 0:
        raise ValueError(f"B must be > 0 (sum of sigma_j^2 > 0), got {B}")
    C = np.asarray(C, dtype=float)
    active = C > 0
    b = np.full(len(C), np.inf)
    if not active.any():
        return b
    ca = C[active]
    x = np.full(ca.shape, max(1.0, 2 * B * len(ca) / A))  # start where A − ΣB/b > 0
    for _ in range(max_iter):
        s = (x * ca).sum() + D
        q = A - (B / x).sum()
        f = ca * q - s * B / x ** 2
        step = f / (2 * B * s / x ** 3)
        new = x - step
        while np.any(new <= 0) or A - (B / new).sum() <= 0:
            step = step / 2
            new = x - step
        if np.max(np.abs(new - x) / new) < tol:
            x = new
            break
        x = new
    else:
        raise ValueError("Newton–Jacobi did not converge for P1")
    b[active] = x
    return b


def p1_closed_form(A: float, B: float, C: np.ndarray, D: float) -> np.ndarray:
    """The same stationary point in closed form (used to test :func:`newton_jacobi`): b̂_i = k/√C_i with
    k = (B s + √(B²s² + A B D))/A, s = Σ √C_i (all F_i = 0 force b_i √C_i to be equal).

    Raises:
        ValueError: A <= 0 or B <= 0, NaN or inf coefficients, C empty or negative, D < 0."""
    A, B, C, D = _check_abcd(A, B, C, D)
    for name, v in (("A", A), ("B", B)):
        if v <= 0:
            raise ValueError(f"{name} must be > 0 (A = eps - split term, B = variance coefficient), got {v}")
    s = np.sqrt(C[C > 0]).sum()
    k = (B * s + np.sqrt(B ** 2 * s ** 2 + A * B * D)) / A
    return np.where(C > 0, k / np.sqrt(np.where(C > 0, C, 1.0)), np.inf)


def kappa(problem: Problem, cuts, T: dict) -> np.ndarray:
    """κ_i of Proposition 1: the largest b_i allowed by memory C4, R3 (T3) and R4 (T4) at the device's cut
    (and by ``max_batch`` when set)."""
    cuts = _check_inputs(problem, cuts, T)
    p = problem
    k = cuts - 1
    prof, dev = p.profile, p.devices
    mem = batch_caps(p, cuts).astype(float)   # exact integer bound of C4 (strict) and max_batch, no tolerance
    r3 = T["T3"] / (prof.fwd_flops[k] / dev.flops + prof.act_bits[k] / dev.rate_up)
    r4 = T["T4"] / (prof.grad_bits[k] / dev.rate_down + prof.bwd_flops[k] / dev.flops)
    return np.minimum(mem, np.minimum(r3, r4))


def _p1_relaxed(problem: Problem, cuts, T: dict, A: float, B: float, C: np.ndarray) -> tuple[float, np.ndarray]:
    """Θ'/(2ϑ/γ) at the clipped stationary point min(b̂, κ) for budgets T (inf when infeasible)."""
    D = T["T3"] + T["T4"] + (T["T5"] + T["T6"]) / problem.interval
    kap = kappa(problem, cuts, T)
    if np.any(kap < 1):
        return np.inf, kap
    b = np.minimum(newton_jacobi(A, B, C, D), kap)
    q = A - (B / b).sum()
    return ((b * C).sum() + D) / q if q > 0 else np.inf, kap


def latency_budget_search(problem: Problem, cuts, T: dict, A: float, B: float, C: np.ndarray) -> dict:
    """Scale the device-latency budgets (T3, T4) = s·(T3⁰, T4⁰) to minimise P1's relaxed objective.

    (46) holds T3 and T4 fixed, so κ_i caps every b_i at the budget of the starting straggler and, with a fast
    server (C_i small), b̂ ≫ κ_i: the batch sizes could never leave their start. We search s on a log grid over
    [10⁻³, 10³] and refine with ``scipy.optimize.minimize_scalar`` (bounded); P1 + Proposition 1 are then
    solved exactly as in the paper at the chosen budgets. (Our addition; see the module docstring.)
    """
    from scipy.optimize import minimize_scalar

    def f(log_s: float) -> float:
        scaled = dict(T, T3=T["T3"] * 10 ** log_s, T4=T["T4"] * 10 ** log_s)
        val = _p1_relaxed(problem, cuts, scaled, A, B, C)[0]
        return val if np.isfinite(val) else 1e300

    grid = np.linspace(-3, 3, 61)
    vals = np.array([f(g) for g in grid])
    k = int(np.argmin(vals))
    if vals[k] >= 1e300:
        return T
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    best = res.x if res.fun <= vals[k] else grid[k]
    return dict(T, T3=T["T3"] * 10 ** best, T4=T["T4"] * 10 ** best)


def solve_p1(problem: Problem, cuts, T: dict, budget_search: bool = True) -> np.ndarray:
    """P1 + Proposition 1: integer batch sizes for fixed cuts (``[N]`` int).

    b̂ from :func:`newton_jacobi`; b_i = 1 if b̂_i <= 1; the better of ⌊b̂_i⌋, ⌈b̂_i⌉ (by Θ', others at their
    continuous values) if 1 < b̂_i < κ_i; ⌊κ_i⌋ if b̂_i >= κ_i. With ``budget_search`` the budgets T3, T4 are
    first chosen by :func:`latency_budget_search` (else held at ``T`` as in (46)).

    Memoised (ours; :mod:`fedlib.hasfl.optimiser.memo`): a call whose problem (every field, by value), cuts, T and
    budget_search equal one of the last 1,024 calls' returns a copy of that call's result without solving again (a
    call that raised is solved again).

    Raises:
        ValueError: κ_i < 1 for some device (names the device: memory or latency budget too small), or ε
        unreachable (A <= 0).
    """
    check_bool("budget_search", budget_search)
    cuts = _check_inputs(problem, cuts, T)
    return _proposition1(SolverCall(problem, cuts, T, budget_search)).copy()


@functools.lru_cache(maxsize=1024)
def _proposition1(call: SolverCall) -> np.ndarray:
    """:func:`solve_p1` for its checked arguments ``call.args = (problem, cuts, T, budget_search)``, memoised on
    them."""
    problem, cuts, T, budget_search = call.args
    A, B, C, _ = p1_coefficients(problem, cuts, T)
    if A <= 0:
        raise ValueError(f"convergence constraint C1: eps is unreachable, A = eps - split term = {A:.4g} <= 0")
    if budget_search:
        T = latency_budget_search(problem, cuts, T, A, B, C)
    D = T["T3"] + T["T4"] + (T["T5"] + T["T6"]) / problem.interval
    bhat = newton_jacobi(A, B, C, D)
    kap = kappa(problem, cuts, T)
    bad = np.flatnonzero(kap < 1)
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"device {i}: no batch size >= 1 satisfies memory C4 and R3/R4 at cut {int(cuts[i])} "
                         f"(kappa = {kap[i]:.3g})")
    cont = np.minimum(bhat, kap)

    def obj(b):
        q = A - (B / b).sum()
        return np.inf if q <= 0 else ((b * C).sum() + D) / q

    out = np.empty(len(C), dtype=np.int64)
    for i, (bh, k) in enumerate(zip(bhat, kap)):
        if bh <= 1:
            out[i] = 1
        elif bh >= k:
            out[i] = int(np.floor(k))
        else:
            lo, hi = np.floor(bh), np.ceil(bh)
            trial_lo, trial_hi = cont.copy(), cont.copy()
            trial_lo[i], trial_hi[i] = lo, hi
            out[i] = int(lo if obj(trial_lo) <= obj(trial_hi) or hi > k else hi)
    return out
