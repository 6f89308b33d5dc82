"""HASFL optimiser: batch sizes b_i and cut layers L_i that minimise the predicted total latency Θ.

Source: HASFL Sec. V-B and VI (spec ``shared/spec/hasfl.md``, "Optimisation"): problem (41) with R from
Corollary 1 gives Θ(b, μ) (42)/(43); the linearised Θ'(b, μ, T) (44) with auxiliary T1..T6 is minimised by
block-coordinate descent (Algorithm 2) over

- P1 (46), b given μ and T: ∂Θ'/∂b = 0 by Newton–Jacobi iterations, then Proposition 1's rounding with κ_i;
- P2 (59), μ and T given b: a mixed-integer linear-fractional program solved by Dinkelbach's method, each step
  a MILP solved by HiGHS through cvxpy.

Also: :func:`exhaustive` (reference optimum for small N and few cuts) and the paper's benchmark strategies
(random batch size RBS, random split RMS, RHAMS) with the same interface (:func:`strategy`).

Choices where the paper is silent (also in the README's deviations list):

- P1 as written, (46) with T fixed, pins every b_i at κ_i, the budget of the starting straggler (b̂ ≫ κ_i when the
  server is fast). :func:`latency_budget_search` also optimises the budgets (T3, T4) = s·(T3⁰, T4⁰) by a bounded
  scalar search before Proposition 1 (our addition; ``solve_p1(..., budget_search=False)`` is the paper's).
- Initial point of Algorithm 2: every device at batch size ``b0`` and at its admissible cut with the smallest
  per-sample compute + transfer time; several ``b0`` (multi-start, default 8, 32, 128), best result kept.
- Stopping rule of Algorithm 2: relative change of Θ' <= ``tol`` (1e-6), at most ``max_iter`` rounds.
- Dinkelbach stops when |N(x) − λD(x)| <= 1e-9·max(1, |λ|) or after 50 MILPs.
- RHAMS (ref. [55], CoopFL, whose rule is not restated): given b, the cuts that minimise the *per-round*
  latency T_S + T_A/I (eqs. 38-39), ignoring convergence — the same MILP as P2 with the convergence
  denominator dropped.
- RBS draws b_i uniformly from 1..64; RMS draws each cut uniformly among the device's cuts that satisfy memory
  C4 and keep ε reachable (a cut past that point makes C1 impossible whatever the batch sizes).
- ε is a parameter; :func:`eps_with_slack` sets it to (1 + slack)·floor(b_i = 64, L_c = 1), the bound's floor
  at the shallowest cut, because the estimated split term 4β²γ²I²ΣG_j² dominates the bound.
"""
from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from .hasfl_theory import HasflConstants, bound_floor
from .latency import EdgeDevices, Servers, memory_bits, round_latency
from .split_models import LayerProfile


@dataclass(frozen=True)
class Problem:
    """One instance of problem (41).

    Attributes:
        profile: model profile. devices, servers: the system. constants: Theorem 1's constants.
        gamma: step size γ (<= 1/β). eps: target ε of C1. interval: I, aggregation interval.
        allowed_cuts: cut layers that may be chosen (default all 1..L).
        max_batch: optional upper bound on every b_i (the paper has none; RBS draws from 1..64).
    """

    profile: LayerProfile
    devices: EdgeDevices
    servers: Servers
    constants: HasflConstants
    gamma: float
    eps: float
    interval: int
    allowed_cuts: tuple = ()
    max_batch: int | None = None

    def __post_init__(self):
        if self.max_batch is not None and self.max_batch < 1:
            raise ValueError(f"max_batch must be >= 1 or None, got {self.max_batch}")
        if len(self.constants.sigma2) != self.profile.num_layers:
            raise ValueError(f"constants have {len(self.constants.sigma2)} layers, the profile "
                             f"{self.profile.num_layers}")
        if not 0 < self.gamma <= 1 / self.constants.beta:
            raise ValueError(f"gamma must satisfy 0 < gamma <= 1/beta = {1 / self.constants.beta:.4g}")
        if self.eps <= 0 or self.interval < 1:
            raise ValueError(f"eps must be > 0 and interval I >= 1, got {self.eps}, {self.interval}")
        cuts = tuple(self.allowed_cuts) or tuple(range(1, self.profile.num_layers + 1))
        if any(not 1 <= c <= self.profile.num_layers for c in cuts):
            raise ValueError(f"allowed_cuts must lie in 1..{self.profile.num_layers}, got {cuts}")
        object.__setattr__(self, "allowed_cuts", tuple(sorted(set(cuts))))

    @property
    def num_devices(self) -> int:
        return self.devices.num_devices


@dataclass
class Decision:
    """Batch sizes ``b [N]`` (int >= 1), cut layers ``cuts [N]`` (1..L), the predicted total latency ``theta``
    (s, eq. 42), and solver information."""

    b: np.ndarray
    cuts: np.ndarray
    theta: float
    info: dict = field(default_factory=dict)


def eps_with_slack(constants: HasflConstants, gamma: float, interval: int, num_devices: int,
                   slack: float) -> float:
    """ε = (1 + slack)·floor(b_i = 64 ∀i, L_c = 1): a target just above the smallest floor Theorem 1 allows
    at the shallowest cut (see the module docstring). Raises ``ValueError`` for slack <= 0."""
    if slack <= 0:
        raise ValueError(f"slack must be > 0, got {slack}")
    return float((1 + slack) * bound_floor(constants, gamma, np.full(num_devices, 64.0), 1, interval))


# ---------------------------------------------------------------------------------------------------------
# objective and constraints


def theta(problem: Problem, b, cuts) -> np.ndarray:
    """Θ(b, μ) of eq. (42): 2ϑ(T_S + T_A/I) / (γ(ε − floor)), in seconds, for ``[..., N]`` decisions.

    ``inf`` where a decision is infeasible: memory C4 violated on some device, a cut outside
    ``allowed_cuts``, or ε at or below the bound's floor (C1 unreachable).
    """
    p, c = problem, problem.constants
    b = np.asarray(b, dtype=float)
    cuts = np.asarray(cuts)
    lat = round_latency(p.profile, b, cuts, p.devices, p.servers)
    den = p.gamma * (p.eps - bound_floor(c, p.gamma, b, cuts.max(-1), p.interval))
    val = 2 * c.vartheta * (lat["T_S"] + lat["T_A"] / p.interval) / np.where(den > 0, den, np.nan)
    ok = (den > 0) & (memory_bits(p.profile, b, cuts) < p.devices.memory_bits).all(-1)
    ok &= np.isin(cuts, p.allowed_cuts).all(-1)
    if p.max_batch is not None:
        ok &= (b <= p.max_batch).all(-1)
    return np.where(ok, val, np.inf)


def feasible_cuts(problem: Problem, b) -> np.ndarray:
    """``[N, L]`` bool: cut j is allowed for device i and satisfies memory C4 at batch size b_i.

    Raises:
        ValueError: some device has no feasible cut (names the device and its memory).
    """
    p = problem
    L = p.profile.num_layers
    b = np.asarray(b, dtype=float).reshape(-1, 1)
    cuts = np.arange(1, L + 1)[None, :]
    ok = memory_bits(p.profile, b, np.broadcast_to(cuts, (len(b), L))) < p.devices.memory_bits[:, None]
    ok &= np.isin(cuts, p.allowed_cuts)
    bad = np.flatnonzero(~ok.any(1))
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"memory constraint C4: device {i} (memory {p.devices.memory_bits[i] / 8e6:.1f} MB) fits no "
                         f"allowed cut at batch size {int(b[i, 0])}")
    return ok


def aux_variables(problem: Problem, b, cuts) -> dict:
    """The tightest T1..T6 of (44) for a decision: T1 = max G̃²_{L_i}, T2 = max δ_{L_i}, T3 = max(T_F + T_aU),
    T4 = max(T_gD + T_B), T5 = max(max T_cU, T_sU), T6 = max(max T_cD, T_sD)."""
    p = problem
    lat = round_latency(p.profile, b, cuts, p.devices, p.servers)
    k = np.asarray(cuts) - 1
    return {"T1": float(p.constants.G2_cum[k].max()), "T2": float(p.profile.param_bits[k].max()),
            "T3": float((lat["T_F"] + lat["T_aU"]).max()), "T4": float((lat["T_gD"] + lat["T_B"]).max()),
            "T5": float(max(lat["T_cU"].max(), lat["T_sU"])), "T6": float(max(lat["T_cD"].max(), lat["T_sD"]))}


# ---------------------------------------------------------------------------------------------------------
# P1: batch sizes


def p1_coefficients(problem: Problem, cuts, T: dict) -> tuple[float, float, np.ndarray, float]:
    """A, B, C_i, D of P1 (46): Θ'(b) = 2ϑ(Σ b_i C_i + D) / (γ(A − Σ_i B/b_i)).

    A = ε − 1{I>1}·4β²γ²I²T1, B = (βγ/N²) Σ_j σ_j², C_i = (ρ_L − ρ_{L_i} + ϖ_L − ϖ_{L_i})/f_s (s per sample),
    D = T3 + T4 + (T5 + T6)/I (s).
    """
    p, c = problem, problem.constants
    n = p.num_devices
    k = np.asarray(cuts) - 1
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
        ValueError: A <= 0 or B <= 0 (ε unreachable: the split term alone exceeds ε), or no convergence.
    """
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
    k = (B s + √(B²s² + A B D))/A, s = Σ √C_i (all F_i = 0 force b_i √C_i to be equal)."""
    C = np.asarray(C, dtype=float)
    s = np.sqrt(C[C > 0]).sum()
    k = (B * s + np.sqrt(B ** 2 * s ** 2 + A * B * D)) / A
    return np.where(C > 0, k / np.sqrt(np.where(C > 0, C, 1.0)), np.inf)


def kappa(problem: Problem, cuts, T: dict) -> np.ndarray:
    """κ_i of Proposition 1: the largest b_i allowed by memory C4, R3 (T3) and R4 (T4) at the device's cut
    (and by ``max_batch`` when set)."""
    p = problem
    k = np.asarray(cuts) - 1
    prof, dev = p.profile, p.devices
    mem = (dev.memory_bits - prof.opt_state_bits[k] - prof.param_bits[k]) / (prof.act_bits_cum[k] + prof.grad_bits_cum[k])
    r3 = T["T3"] / (prof.fwd_flops[k] / dev.flops + prof.act_bits[k] / dev.rate_up)
    r4 = T["T4"] / (prof.grad_bits[k] / dev.rate_down + prof.bwd_flops[k] / dev.flops)
    # C4 is strict (<): the largest integer strictly below the memory bound
    mem = np.where(np.isclose(mem, np.round(mem)), np.round(mem) - 1e-9, mem)
    out = np.minimum(mem, np.minimum(r3, r4))
    return out if p.max_batch is None else np.minimum(out, p.max_batch)


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

    Raises:
        ValueError: κ_i < 1 for some device (names the device: memory or latency budget too small), or ε
        unreachable (A <= 0).
    """
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


# ---------------------------------------------------------------------------------------------------------
# P2: cut layers (Dinkelbach over MILPs)


def _p2_model(problem: Problem, b: np.ndarray, with_convergence: bool):
    import cvxpy as cp

    p, c = problem, problem.constants
    n, L = p.num_devices, p.profile.num_layers
    prof, dev, srv = p.profile, p.devices, p.servers
    ok = feasible_cuts(problem, b)
    mu = cp.Variable((n, L), boolean=True)
    T = cp.Variable(6, nonneg=True)
    T1, T2, T3, T4, T5, T6 = (T[i] for i in range(6))
    bcol = b.astype(float)[:, None]
    server = cp.sum(cp.multiply(mu, bcol * (prof.fwd_flops[-1] - prof.fwd_flops + prof.bwd_flops[-1]
                                             - prof.bwd_flops)[None, :] / srv.flops))
    sum_delta = cp.sum(mu @ prof.param_bits)
    cons = [cp.sum(mu, axis=1) == 1,                                                        # C3
            mu @ c.G2_cum <= T1,                                                              # R1
            mu @ prof.param_bits <= T2,                                                       # R2
            cp.multiply(b, mu @ prof.fwd_flops) / dev.flops
            + cp.multiply(b, mu @ prof.act_bits) / dev.rate_up <= T3,                          # R3
            cp.multiply(b, mu @ prof.grad_bits) / dev.rate_down
            + cp.multiply(b, mu @ prof.bwd_flops) / dev.flops <= T4,                           # R4
            (mu @ prof.param_bits) / dev.rate_up_fed <= T5,                                    # R5
            (n * T2 - sum_delta) / srv.rate_to_fed <= T5,                                      # R6
            (mu @ prof.param_bits) / dev.rate_down_fed <= T6,                                  # R7
            (n * T2 - sum_delta) / srv.rate_from_fed <= T6]                                    # R8
    if (~ok).any():
        cons.append(mu[~ok] == 0)                                                             # C4
    num = 2 * c.vartheta * (T3 + server + T4 + (T5 + T6) / p.interval)
    variance = c.beta * p.gamma * c.sigma2.sum() * float((1.0 / b).sum()) / n ** 2
    den = p.gamma * (p.eps - variance - (p.interval > 1) * 4 * c.beta ** 2 * p.gamma ** 2 * p.interval ** 2 * T1)
    if with_convergence:
        cons.append(den >= 1e-12 * p.gamma)
    return cp, mu, T, num, den, cons


def solve_p2(problem: Problem, b, tol: float = 1e-9, max_iter: int = 50) -> tuple[np.ndarray, dict, dict]:
    """P2 (59): cut layers for fixed batch sizes by Dinkelbach's method (each step a MILP, HiGHS via cvxpy).

    Minimises N(μ, T)/D(μ, T) with N = 2ϑ(T3 + T_s^F + T_s^B + T4 + (T5+T6)/I) and
    D = γ(ε − βγΣ_iΣ_j σ_j²/(b_iN²) − 1{I>1}4β²γ²I²T1) under R1-R8, C3 and C4: λ ← N/D, solve
    min N − λD, repeat until |N − λD| <= tol·max(1, |λ|).

    Returns:
        (cuts ``[N]``, T dict, info ``{"dinkelbach_iters", "lambda"}``).

    Raises:
        ValueError: no cut satisfies C4 on some device, or ε is unreachable for these batch sizes.
    """
    b = np.asarray(b, dtype=np.int64)
    start = initial_cuts(problem, b)  # a feasible point (raises the C1 / C4 error when there is none)
    cp, mu, T, num, den, cons = _p2_model(problem, b, with_convergence=True)
    lam = cp.Parameter(nonneg=True)
    prob = cp.Problem(cp.Minimize(num - lam * den), cons)
    lam.value = float(theta(problem, b, start))  # Dinkelbach may start from any feasible point's ratio
    it = 0
    for it in range(1, max_iter + 1):
        prob.solve(solver=cp.HIGHS)
        if prob.status not in ("optimal", "optimal_inaccurate"):
            raise ValueError(f"P2 MILP is {prob.status} (eps = {problem.eps:.4g})")
        gap = float(num.value) - lam.value * float(den.value)
        if abs(gap) <= tol * max(1.0, lam.value) or float(den.value) <= 0:
            break
        lam.value = float(num.value) / float(den.value)
    cuts = np.asarray(np.argmax(mu.value, axis=1) + 1, dtype=np.int64)
    return cuts, aux_variables(problem, b, cuts), {"dinkelbach_iters": it, "lambda": float(lam.value)}


def min_round_latency_cuts(problem: Problem, b) -> np.ndarray:
    """RHAMS: cuts that minimise the per-round latency T_S + T_A/I for fixed b (P2's MILP without the
    convergence denominator)."""
    b = np.asarray(b, dtype=np.int64)
    cp, mu, T, num, den, cons = _p2_model(problem, b, with_convergence=False)
    prob = cp.Problem(cp.Minimize(num), cons)
    prob.solve(solver=cp.HIGHS)
    return np.asarray(np.argmax(mu.value, axis=1) + 1, dtype=np.int64)


# ---------------------------------------------------------------------------------------------------------
# Algorithm 2


def admissible_cuts(problem: Problem, b) -> np.ndarray:
    """``[N, L]`` bool: cut j satisfies memory C4 for device i at b_i and keeps ε reachable with L_c = j
    (the bound's floor at these batch sizes is below ε).

    Raises:
        ValueError: C4 unsatisfiable on a device, or no cut keeps ε reachable (C1), naming the floor.
    """
    p = problem
    ok = feasible_cuts(problem, b)
    b = np.broadcast_to(np.asarray(b, dtype=float), (p.num_devices,))
    floors = np.array([bound_floor(p.constants, p.gamma, b, j, p.interval) for j in range(1, p.profile.num_layers + 1)])
    ok = ok & (floors < p.eps)[None, :]
    if not ok.any(1).all():
        raise ValueError(f"convergence constraint C1: eps = {p.eps:.4g} is below the bound's floor "
                         f"{floors.min():.4g} for every memory-feasible cut at these batch sizes")
    return ok


def initial_cuts(problem: Problem, b) -> np.ndarray:
    """The BCD start (see the module docstring): each device's admissible cut (:func:`admissible_cuts`) with the
    smallest per-sample device time (ρ_j + ϖ_j)/f_i + ψ_j/r_i^U + χ_j/r_i^D."""
    p = problem
    ok = admissible_cuts(problem, b)
    prof, dev = p.profile, p.devices
    t = ((prof.fwd_flops + prof.bwd_flops)[None, :] / dev.flops[:, None]
         + prof.act_bits[None, :] / dev.rate_up[:, None] + prof.grad_bits[None, :] / dev.rate_down[:, None])
    return np.argmin(np.where(ok, t, np.inf), axis=1).astype(np.int64) + 1


def polish(problem: Problem, b: np.ndarray, cuts: np.ndarray, max_moves: int | None = None) -> tuple:
    """Integer steepest descent on Θ (eq. 42): repeatedly apply the best move, b_i ± 1 for one device, for all
    devices but one, or for all, or another cut for one device, while Θ decreases. All candidates of a move are scored in one vectorised call.

    Returns:
        (b, cuts, moves made).
    """
    n, L = problem.num_devices, problem.profile.num_layers
    b, cuts = b.astype(np.int64).copy(), cuts.astype(np.int64).copy()
    cur = float(theta(problem, b, cuts))
    eye = np.eye(n, dtype=np.int64)
    moves = 0
    for moves in range(max_moves if max_moves is not None else 10 * n + 10):
        others = 1 - eye  # every device but one: moves the non-stragglers together
        cb = np.concatenate([b + eye, np.maximum(b - eye, 1), b + others, np.maximum(b - others, 1),
                             (b + 1)[None], np.maximum(b - 1, 1)[None], np.repeat(b[None], n * L, 0)])
        cc = np.repeat(cuts[None], len(cb), 0)
        rows = np.arange(n * L)
        cc[4 * n + 2 + rows, rows // L] = rows % L + 1
        vals = theta(problem, cb, cc)
        k = int(np.argmin(vals))
        if not vals[k] < cur * (1 - 1e-12):
            break
        b, cuts, cur = cb[k].copy(), cc[k].copy(), float(vals[k])
    return b, cuts, moves


def bcd(problem: Problem, starts: tuple = (8, 32, 128), tol: float = 1e-6, max_iter: int = 30,
        polish_result: bool = True) -> Decision:
    """Algorithm 2 (BCD): alternate P1 (b) and P2 (μ, T) until Θ' changes by <= ``tol`` (relative).

    Runs once from each start batch size in ``starts`` (see the module docstring) and keeps the decision with
    the smallest Θ (eq. 42), then (``polish_result``) refines it by :func:`polish` (our addition: Proposition
    1 rounds each b_i separately; the integer descent removes the remaining ~1 % gap to exhaustive search). Every returned decision satisfies C3-C5 (one cut per device in 1..L, memory,
    b_i >= 1 integer).

    Returns:
        :class:`Decision` with ``info = {"bcd_iters": [...per start], "history": [...], "solve_s"}``.

    Raises:
        ValueError: infeasible inputs (C1 unreachable, C4 unsatisfiable), from the sub-problems.
    """
    t0 = time.perf_counter()
    best, iters, history = None, [], []
    last_err = None
    for b0 in starts:
        try:
            b = np.full(problem.num_devices, int(b0), dtype=np.int64)
            cuts = initial_cuts(problem, b)
            prev = float(theta(problem, b, cuts))
            hist = [prev]
            it = 0
            for it in range(1, max_iter + 1):
                T = aux_variables(problem, b, cuts)
                b = solve_p1(problem, cuts, T)
                cuts, T, _ = solve_p2(problem, b)
                cur = float(theta(problem, b, cuts))
                hist.append(cur)
                if np.isfinite(prev) and abs(prev - cur) <= tol * abs(prev):
                    break
                prev = cur
        except ValueError as err:  # this start is infeasible (e.g. C4 at b0); others may not be
            last_err = err
            continue
        iters.append(it)
        history.append(hist)
        val = float(theta(problem, b, cuts))
        if best is None or val < best.theta:
            best = Decision(b.copy(), cuts.copy(), val)
    if best is None:
        raise last_err
    info = {"bcd_iters": iters, "history": history, "theta_bcd": best.theta}
    if polish_result:
        b, cuts, moves = polish(problem, best.b, best.cuts)
        best = Decision(b, cuts, float(theta(problem, b, cuts)))
        info["polish_moves"] = moves
    best.info = dict(info, solve_s=time.perf_counter() - t0)
    return best


def exhaustive(problem: Problem, b_max: int = 64, chunk: int = 2 ** 20) -> Decision:
    """Reference optimum: Θ (eq. 42) over every b ∈ {1..b_max}^N and every cut in ``allowed_cuts``^N.

    Only for small instances (work grows as (b_max·|cuts|)^N); raises ``ValueError`` above 5·10⁸ candidates.
    """
    n = problem.num_devices
    cuts_list = problem.allowed_cuts
    total = (b_max * len(cuts_list)) ** n
    if total > 5e8:
        raise ValueError(f"exhaustive search over {total:.3g} candidates is too large (N={n}, b_max={b_max}, "
                         f"{len(cuts_list)} cuts); use fewer devices, cuts or a smaller b_max")
    t0 = time.perf_counter()
    bgrid = np.stack(np.meshgrid(*[np.arange(1, b_max + 1)] * n, indexing="ij"), -1).reshape(-1, n)
    best = (np.inf, None, None)
    for cut in itertools.product(cuts_list, repeat=n):
        cut = np.asarray(cut, dtype=np.int64)
        for s in range(0, len(bgrid), chunk):
            vals = theta(problem, bgrid[s:s + chunk], np.broadcast_to(cut, (min(chunk, len(bgrid) - s), n)))
            k = int(np.argmin(vals))
            if vals[k] < best[0]:
                best = (float(vals[k]), bgrid[s + k].copy(), cut.copy())
    if best[1] is None:
        raise ValueError("no feasible decision: eps unreachable or memory C4 violated for every candidate")
    return Decision(best[1], best[2], best[0], {"candidates": total, "solve_s": time.perf_counter() - t0})


# ---------------------------------------------------------------------------------------------------------
# the paper's benchmark strategies


STRATEGIES = ("HASFL", "RBS+HAMS", "HABS+RMS", "RBS+RMS", "RBS+RHAMS")


def random_batch_sizes(n: int, rng: np.random.Generator, low: int = 1, high: int = 64) -> np.ndarray:
    """RBS: b_i uniform in {low..high}."""
    return rng.integers(low, high + 1, n)


def random_cuts(problem: Problem, b, rng: np.random.Generator) -> np.ndarray:
    """RMS: each device's cut uniform among its admissible cuts (memory C4 and ε reachable:
    :func:`admissible_cuts`), so that a random split never makes C1 unreachable by itself."""
    ok = admissible_cuts(problem, b)
    return np.array([rng.choice(np.flatnonzero(row)) + 1 for row in ok], dtype=np.int64)


def strategy(problem: Problem, name: str, rng: np.random.Generator) -> Decision:
    """Decision of a named strategy (one of :data:`STRATEGIES`), scored by Θ (eq. 42).

    HASFL = :func:`bcd`; RBS+HAMS = random b, cuts by P2; HABS+RMS = random cuts, b by P1 (T from the random
    cuts at b = 64, then P1); RBS+RMS = both random; RBS+RHAMS = random b, cuts by :func:`min_round_latency_cuts`.
    Random strategies whose draw makes ε unreachable get Θ = inf.

    Raises:
        ValueError: unknown name.
    """
    if name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {name!r}")
    n = problem.num_devices
    if name == "HASFL":
        return bcd(problem)
    b = np.full(n, 64, dtype=np.int64) if name == "HABS+RMS" else random_batch_sizes(n, rng)
    cuts = np.ones(n, dtype=np.int64)
    try:
        if name == "HABS+RMS":
            cuts = random_cuts(problem, b, rng)
            b = solve_p1(problem, cuts, aux_variables(problem, b, cuts))
        elif name == "RBS+RMS":
            cuts = random_cuts(problem, b, rng)
        elif name == "RBS+HAMS":
            cuts = solve_p2(problem, b)[0]
        else:
            cuts = min_round_latency_cuts(problem, b)
    except ValueError as err:  # this random draw makes C1 or C4 unsatisfiable
        return Decision(b, cuts, np.inf, {"infeasible": str(err)})
    return Decision(b, cuts, float(theta(problem, b, cuts)))
