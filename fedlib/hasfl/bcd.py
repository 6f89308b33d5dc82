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

import time

import numpy as np

from .problem import Decision, Problem, aux_variables, initial_cuts, theta
from .p1 import solve_p1
from .p2 import solve_p2


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
