"""HASFL P2 (59): cut layers given the batch sizes, a mixed-integer linear-fractional program solved by
Dinkelbach's method, each step a MILP solved by HiGHS through cvxpy."""
from __future__ import annotations

import functools

import numpy as np

from ...core.validate import check_array, check_float, check_int
from ..bound.problem import Problem, aux_variables, check_problem, feasible_cuts, initial_cuts, theta
from .memo import SolverCall


def _check_b(problem: Problem, b) -> np.ndarray:
    """``b``: ``[N]`` integer batch sizes >= 1 (a fraction, NaN or bool is refused, never truncated)."""
    check_problem(problem)
    b = check_array("b", b, low=1, integer=True)
    if b.shape != (problem.num_devices,):
        raise ValueError(f"b must hold one batch size per device (N = {problem.num_devices}), got shape {b.shape}")
    return b.astype(np.int64)


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

    Memoised (ours; :mod:`fedlib.hasfl.optimiser.memo`): a call whose problem (every field, by value), b, tol and
    max_iter equal one of the last 1,024 calls' returns copies of that call's result without solving again (a call
    that raised is solved again).

    Returns:
        (cuts ``[N]``, T dict, info ``{"dinkelbach_iters", "lambda"}``).

    Raises:
        ValueError: no cut satisfies C4 on some device, or ε is unreachable for these batch sizes; b not N
            integers >= 1, tol NaN or < 0, max_iter < 1.
    """
    b = _check_b(problem, b)
    check_float("tol", tol, 0)
    check_int("max_iter", max_iter, 1)
    cuts, T, info = _dinkelbach(SolverCall(problem, b, tol, max_iter))
    return cuts.copy(), dict(T), dict(info)


@functools.lru_cache(maxsize=1024)
def _dinkelbach(call: SolverCall) -> tuple[np.ndarray, dict, dict]:
    """:func:`solve_p2` for its checked arguments ``call.args = (problem, b, tol, max_iter)``, memoised on them."""
    problem, b, tol, max_iter = call.args
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
    b = _check_b(problem, b)
    cp, mu, T, num, den, cons = _p2_model(problem, b, with_convergence=False)
    prob = cp.Problem(cp.Minimize(num), cons)
    prob.solve(solver=cp.HIGHS)
    return np.asarray(np.argmax(mu.value, axis=1) + 1, dtype=np.int64)
