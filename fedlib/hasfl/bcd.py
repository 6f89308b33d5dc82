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
- Feasibility first (:func:`fedlib.hasfl.problem.common_cut_floors`): before any start, one check decides whether
  a decision exists, and the error names the binding constraint for the whole problem (C4: the device that fits
  no allowed cut even at b = 1, with its memory; C1: ε against the bound's smallest floor, every device at its
  largest memory-feasible batch size). Integer batch bounds are exact (:func:`fedlib.hasfl.problem.batch_caps`
  checks C4 with the same arithmetic as Θ; no tolerance drops a feasible b).
- Initial points of Algorithm 2 are per device (:func:`start_batches`): 4 × the smallest common batch size that
  keeps the variance term below ε, capped by each device's own memory C4 and ``max_batch``, and every device at
  its cap; never one b for all, never above ``max_batch``. (The paper's
  single start, and our earlier common starts 8/32/128, failed on instances where only a mixed vector such as
  b = [61, 17, 17, 57] is feasible.) The first P2 picks the cuts for the start.
- Group moves of the cuts (:func:`uniform_cut_candidates`): the split term of the bound depends on the cuts only
  through L_c = max_i L_i, and the alternation can stall at a wrong common cut where each block is optimal given
  the other (e.g. cuts [4, 4, 4] against the optimum [7, 7, 7]: P2 at the batch sizes of cut 4 prefers cut 4, P1 at
  cut 4 keeps those batch sizes). We also evaluate every "all devices at cut j" decision with P1's batch sizes
  (and an exact batch search for N <= 10) and keep the best. Restricting the alternation to cuts <= L_c for every
  L_c was tried first: it did not leave these points (P2 still picks the shallower cut) and cost 20× the time.
- Refinement: integer steepest descent (:func:`polish`: b_i ± 1 for one, all-but-one or all devices; one
  device's cut), and for N <= 10 an exact per-device batch-size search at fixed cuts
  (:func:`line_search_batches`), because Proposition 1 rounds each b_i separately and can leave a batch vector
  that no ±1 move improves.
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

from ..core.validate import check_array, check_bool, check_float, check_instance, check_int, check_list
from .problem import (Decision, Problem, aux_variables, batch_caps, check_cuts, check_problem, common_cut_floors,
                      initial_cuts, theta)
from .theory import bound_floor
from .p1 import solve_p1
from .p2 import solve_p2


def _decision(problem: Problem, b, cuts) -> tuple[np.ndarray, np.ndarray]:
    """``b`` (integers >= 1) and ``cuts`` (integers in 1..L), ``[N]`` each, as int64 copies."""
    n = problem.num_devices
    b = check_array("b", b, low=1, integer=True)
    cuts = check_cuts(problem, cuts)
    if b.shape != (n,) or cuts.shape != (n,):
        raise ValueError(f"b and cuts must hold one value per device (N = {n}), got shapes {b.shape} and {cuts.shape}")
    return b.astype(np.int64).copy(), cuts.astype(np.int64).copy()


def polish(problem: Problem, b: np.ndarray, cuts: np.ndarray, max_moves: int | None = None) -> tuple:
    """Integer steepest descent on Θ (eq. 42): repeatedly apply the best move, b_i ± 1 for one device, for all
    devices but one, or for all, or another cut for one device (its b_i lowered to the new cut's memory cap when
    it must), while Θ decreases. All candidates of a move are scored in one vectorised call.

    Returns:
        (b, cuts, moves made).
    """
    check_problem(problem)
    n, L = problem.num_devices, problem.profile.num_layers
    b, cuts = _decision(problem, b, cuts)
    if max_moves is not None:
        check_int("max_moves", max_moves, 0, extra=" or None")
    cur = float(theta(problem, b, cuts))
    eye = np.eye(n, dtype=np.int64)
    caps_by_cut = batch_caps(problem, np.repeat(np.arange(1, L + 1)[:, None], n, 1))     # [L, N]
    moves = 0
    for moves in range(max_moves if max_moves is not None else 10 * n + 10):
        others = 1 - eye  # every device but one: moves the non-stragglers together
        cb = np.concatenate([b + eye, np.maximum(b - eye, 1), b + others, np.maximum(b - others, 1),
                             (b + 1)[None], np.maximum(b - 1, 1)[None], np.repeat(b[None], n * L, 0)])
        cc = np.repeat(cuts[None], len(cb), 0)
        rows = np.arange(n * L)
        cc[4 * n + 2 + rows, rows // L] = rows % L + 1
        # a cut move takes the device's batch size down to what fits the new cut's memory (C4), if it must
        dev, new = rows // L, rows % L
        cb[4 * n + 2 + rows, dev] = np.maximum(np.minimum(b[dev], caps_by_cut[new, dev]), 1)
        vals = theta(problem, cb, cc)
        k = int(np.argmin(vals))
        if not vals[k] < cur * (1 - 1e-12):
            break
        b, cuts, cur = cb[k].copy(), cc[k].copy(), float(vals[k])
    return b, cuts, moves


def start_batches(problem: Problem, scale: float) -> np.ndarray:
    """A per-device start for Algorithm 2 (never one b for all): ``scale`` times the smallest common batch size
    that keeps the variance term of the floor below ε at the problem's shallowest common cut, capped by each
    device's own memory C4 and ``max_batch`` at its largest-batch cut (:func:`batch_caps`); ``scale=inf``: every
    device at that cap. ``[N]`` int64 >= 1."""
    p = check_problem(problem)
    scale = check_float("scale", scale, 0, low_open=True, allow_inf=True)
    cuts = np.asarray(p.allowed_cuts)
    caps = batch_caps(p, np.broadcast_to(cuts[:, None], (len(cuts), p.num_devices))).max(0)
    if not np.isfinite(scale):
        return np.maximum(caps, 1)
    c = p.constants
    room = p.eps - bound_floor(c, p.gamma, np.full(p.num_devices, np.inf), cuts[0], p.interval)
    b_c1 = c.beta * p.gamma * c.sigma2.sum() / p.num_devices / room if room > 0 else float(caps.max())
    return np.clip(np.ceil(scale * b_c1), 1, np.maximum(caps, 1)).astype(np.int64)


def _alternate(problem: Problem, b: np.ndarray, tol: float, max_iter: int) -> tuple:
    """Algorithm 2's loop from batch sizes ``b``: P2 (cuts) then P1 (b) until Θ' changes by <= ``tol``."""
    cuts, _, _ = solve_p2(problem, b)
    prev = float(theta(problem, b, cuts))
    hist, it = [prev], 0
    for it in range(1, max_iter + 1):
        b = solve_p1(problem, cuts, aux_variables(problem, b, cuts))
        cuts, _, _ = solve_p2(problem, b)
        cur = float(theta(problem, b, cuts))
        hist.append(cur)
        if np.isfinite(prev) and abs(prev - cur) <= tol * abs(prev):
            break
        prev = cur
    return b, cuts, it, hist


def line_search_batches(problem: Problem, b: np.ndarray, cuts: np.ndarray, max_candidates: int = 4096,
                        sweeps: int = 8) -> np.ndarray:
    """Exact coordinate search on the integer batch sizes at fixed cuts: each device's b_i is set to the best of
    every value 1..cap_i (cap from C4 and ``max_batch``, at most ``max_candidates`` values), the others fixed,
    until a sweep changes nothing. ``[N]`` int64."""
    check_problem(problem)
    b, cuts = _decision(problem, b, cuts)
    check_int("max_candidates", max_candidates, 1)
    check_int("sweeps", sweeps, 1)
    caps = np.minimum(batch_caps(problem, cuts), max_candidates)
    cur = float(theta(problem, b, cuts))
    for _ in range(sweeps):
        changed = False
        for i in range(problem.num_devices):
            if caps[i] < 1:
                continue
            cand = np.repeat(b[None], caps[i], 0)
            cand[:, i] = np.arange(1, caps[i] + 1)
            vals = theta(problem, cand, np.broadcast_to(cuts, cand.shape))
            k = int(np.argmin(vals))
            if vals[k] < cur * (1 - 1e-12):
                b, cur, changed = cand[k].copy(), float(vals[k]), True
        if not changed:
            break
    return b


def uniform_cut_candidates(problem: Problem, line_search: bool, floors: dict | None = None) -> list[Decision]:
    """Group moves of the cuts: for every allowed cut j that keeps ε reachable, all devices at cut j with batch
    sizes from P1 (+ Proposition 1) at budgets taken from every device's memory cap, refined by
    :func:`line_search_batches` when ``line_search``. Infeasible cuts are skipped. ``floors``: the result of
    :func:`common_cut_floors` when the caller has it (else computed; raises its ``ValueError``)."""
    check_problem(problem)
    check_bool("line_search", line_search)
    check_instance("floors", floors, dict, "the dict of common_cut_floors", allow_none=True)
    out = []
    floors = common_cut_floors(problem) if floors is None else floors
    for j in problem.allowed_cuts:
        if j not in floors:
            continue
        cuts = np.full(problem.num_devices, j, dtype=np.int64)
        caps = batch_caps(problem, cuts)
        if (caps < 1).any():
            continue
        try:
            b = solve_p1(problem, cuts, aux_variables(problem, caps, cuts))
        except ValueError:
            b = caps
        if line_search:
            b = line_search_batches(problem, b, cuts)
        val = float(theta(problem, b, cuts))
        if np.isfinite(val):
            out.append(Decision(b, cuts, val))
    return out


def bcd(problem: Problem, starts: tuple = (4.0, np.inf), tol: float = 1e-6, max_iter: int = 30,
        polish_result: bool = True, group_moves: bool = True) -> Decision:
    """Algorithm 2 (BCD): alternate P2 (μ, T) and P1 (b) until Θ' changes by <= ``tol`` (relative), from
    per-device starts, then leave its fixed points by group moves and refine; returns the decision with the
    smallest Θ (eq. 42).

    Steps (our additions to the paper's method are documented in the module docstring):

    1. Feasibility first (:func:`common_cut_floors`): one error for the whole problem when no decision exists.
    2. The paper's alternation from every start of :func:`start_batches` (per-device batch sizes from C1 and
       each device's memory C4; never above ``max_batch``).
    3. ``group_moves``: :func:`uniform_cut_candidates` (all devices at one cut, every cut that keeps ε
       reachable), because the alternation can stall at a wrong common cut where each block is optimal given
       the other.
    4. ``polish_result``: :func:`polish` (integer steepest descent over b ± 1 and single-cut moves), and for
       N <= 10 :func:`line_search_batches` (exact per-device batch search at fixed cuts) and a last polish.

    Every returned decision satisfies C1 and C3-C5 (one cut per device in ``allowed_cuts``, memory, integer
    b_i in 1..``max_batch``).

    Returns:
        :class:`Decision` with ``info = {"bcd_iters", "history", "theta_bcd", "theta_group", "polish_moves",
        "solve_s"}``.

    Raises:
        ValueError: no decision exists (C1 with the bound's smallest floor, or C4 with the device and its memory).
    """
    check_problem(problem)
    starts = check_list("starts", starts, lambda k, v: check_float(k, v, 0, low_open=True, allow_inf=True))
    check_float("tol", tol, 0)
    check_int("max_iter", max_iter, 1)
    check_bool("polish_result", polish_result)
    check_bool("group_moves", group_moves)
    t0 = time.perf_counter()
    floors = common_cut_floors(problem)             # raises the one error when no decision exists
    small = problem.num_devices <= 10
    best, iters, history = None, [], []
    for scale in starts:
        try:
            b, cuts, it, hist = _alternate(problem, start_batches(problem, scale), tol, max_iter)
        except ValueError:  # this start is infeasible for P1/P2; another start or a group move may not be
            continue
        iters.append(it)
        history.append(hist)
        val = float(theta(problem, b, cuts))
        if np.isfinite(val) and (best is None or val < best.theta):
            best = Decision(b.copy(), cuts.copy(), val)
    info = {"bcd_iters": iters, "history": history, "theta_bcd": None if best is None else best.theta}
    if group_moves or best is None:
        group = uniform_cut_candidates(problem, line_search=small, floors=floors)
        info["theta_group"] = min((d.theta for d in group), default=None)
        for d in group:
            if best is None or d.theta < best.theta:
                best = d
    if best is None:   # no start and no group move is feasible: the memory-cap start at its initial cuts
        b = start_batches(problem, np.inf)
        cuts = initial_cuts(problem, b)
        best = Decision(b, cuts, float(theta(problem, b, cuts)))
    if polish_result:
        b, cuts, moves = polish(problem, best.b, best.cuts)
        if small:
            b = line_search_batches(problem, b, cuts)
            b, cuts, more = polish(problem, b, cuts)
            moves += more
        best = Decision(b, cuts, float(theta(problem, b, cuts)))
        info["polish_moves"] = moves
    best.info = dict(info, solve_s=time.perf_counter() - t0)
    return best
