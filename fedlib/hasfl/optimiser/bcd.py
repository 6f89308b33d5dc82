"""HASFL optimiser: batch sizes b_i and cut layers L_i that minimise the predicted total latency Θ.

Reading order: :func:`algorithm2` is the paper's Algorithm 2 (the alternation of P1 (46) and P2 (59)); everything
below the banner "Our additions" is ours (starts, group moves of the cuts, restarts, refinement), composed with it by
:func:`bcd`.

Source: HASFL Sec. V-B and VI: problem (41) with R from
Corollary 1 gives Θ(b, μ) (42)/(43); the linearised Θ'(b, μ, T) (44) with auxiliary T1..T6 is minimised by
block-coordinate descent (Algorithm 2) over

- P1 (46), b given μ and T: ∂Θ'/∂b = 0 by Newton–Jacobi iterations, then Proposition 1's rounding with κ_i;
- P2 (59), μ and T given b: a mixed-integer linear-fractional program solved by Dinkelbach's method, each step
  a MILP solved by HiGHS through cvxpy.

Choices where the paper is silent (also in the README's deviations list):

- P1 as written, (46) with T fixed, pins every b_i at κ_i, the budget of the starting straggler (b̂ ≫ κ_i when the
  server is fast). :func:`latency_budget_search` also optimises the budgets (T3, T4) = s·(T3⁰, T4⁰) by a bounded
  scalar search before Proposition 1 (our addition; ``solve_p1(..., budget_search=False)`` is the paper's).
- Feasibility first (:func:`fedlib.hasfl.bound.problem.common_cut_floors`): before any start, one check decides whether
  a decision exists, and the error names the binding constraint for the whole problem (C4: the device that fits
  no allowed cut even at b = 1, with its memory; C1: ε against the bound's smallest floor, every device at its
  largest memory-feasible batch size). Integer batch bounds are exact (:func:`fedlib.hasfl.bound.problem.batch_caps`
  checks C4 with the same arithmetic as Θ; no tolerance drops a feasible b).
- Initial points of Algorithm 2 are per device (:func:`start_batches`): 4 × the smallest common batch size that
  keeps the variance term below ε, capped by each device's own memory C4 and ``max_batch``, and every device at
  its cap; never one b for all, never above ``max_batch`` (a single start misses instances where only a mixed
  vector is feasible). The first P2 picks the cuts for the start.
- Group moves of the cuts (:func:`uniform_cut_candidates`): the split term of the bound depends on the cuts only
  through L_c = max_i L_i, and the alternation can stall at a wrong common cut where each block is optimal given
  the other (e.g. cuts [4, 4, 4] against the optimum [7, 7, 7]: P2 at the batch sizes of cut 4 prefers cut 4, P1 at
  cut 4 keeps those batch sizes). We also evaluate every "all devices at cut j" decision with P1's batch sizes
  (and an exact batch search for N <= 10) and keep the best.
- Refinement: integer steepest descent (:func:`polish`: b_i ± 1 for one, all-but-one or all devices; one
  device's cut) alternated with the exact batch sizes at the current cuts
  (:func:`fedlib.hasfl.optimiser.batch_search.exact_batches`: Dinkelbach over the straggler thresholds, a global optimum at
  fixed cuts; :func:`line_search_batches` where its enumeration is too large), because Proposition 1 rounds each
  b_i separately and can leave a batch vector that no ±1 move improves (:func:`refine`). For N <= 8, then
  :func:`cut_moves`: single-device cut changes scored with the batch sizes re-optimised exactly, since a cut move
  usually pays only together with other devices' batch sizes. Where at most 256 cut vectors fit every device's
  memory, :func:`enumerate_cuts` scores each at its exact batch sizes, which is the optimum (coordinate moves can
  miss cut pairs that only pay together).
- Restarts: the alternation again from each common-cut decision of the group moves (every common cut for
  N <= 100, the three best above, to keep N = 1000 within the benchmark's 60 s).
- Stopping rule of Algorithm 2: the relative change of Θ (42) between rounds <= ``tol`` (1e-6), at most
  ``max_iter`` rounds (the paper: the absolute change of Θ' (44) <= ε; :func:`algorithm2`).
- P1 and P2 are memoised on their arguments (:mod:`fedlib.hasfl.optimiser.memo`): the restarts revisit points.
- Dinkelbach stops when |N(x) − λD(x)| <= 1e-9·max(1, |λ|) or after 50 MILPs.
- RHAMS (ref. [55], CoopFL, whose rule is not restated): given b, the cuts that minimise the *per-round*
  latency T_S + T_A/I (eqs. 38-39), ignoring convergence — the same MILP as P2 with the convergence
  denominator dropped.
- RBS, RMS and their ``(C1)`` variants: :mod:`.strategies`; HABS: this module's batch block at fixed cuts.
- ε is a parameter; :func:`eps_with_slack` sets it to (1 + slack)·floor(b_i = 64, L_c = 1), the bound's floor
  at the shallowest cut, because the estimated split term 4β²γ²I²ΣG_j² dominates the bound.
"""
from __future__ import annotations

import time

import numpy as np

from ...core.validate import check_bool, check_float, check_instance, check_int, check_list
from ..bound.problem import (Decision, Problem, aux_variables, batch_caps, check_problem, common_cut_floors,
                      initial_cuts, theta)
from ..bound.theory import bound_floor
from .batch_search import exact_batches
from .p1 import solve_p1
from .p2 import solve_p2
from .refinement import cut_moves, enumerate_cuts, line_search_batches, polish, refine


def algorithm2(problem: Problem, b: np.ndarray, tol: float, max_iter: int) -> tuple:
    """HASFL Algorithm 2 (BCD) from the batch sizes ``b`` ``[N]`` = b⁽⁰⁾: μ⁽⁰⁾ and T⁽⁰⁾ are P2's at b⁽⁰⁾ (the paper
    takes all three as input); then round τ = 1, 2, ... solves P1 (46) for b⁽ᵗ⁾ given μ⁽ᵗ⁻¹⁾, T⁽ᵗ⁻¹⁾ (line 4) and P2
    (59) for μ⁽ᵗ⁾, T⁽ᵗ⁾ given b⁽ᵗ⁾ (line 5).

    Stopping rule (line 6, as this code applies it): stop after round τ when Θ (42) of the decision (b⁽ᵗ⁾, μ⁽ᵗ⁾)
    changed by at most ``tol`` relative to round τ − 1's, |Θ⁽ᵗ⁾ − Θ⁽ᵗ⁻¹⁾| <= ``tol``·|Θ⁽ᵗ⁻¹⁾| (never while
    Θ⁽ᵗ⁻¹⁾ is inf), or after ``max_iter`` rounds. The paper tests the absolute change of the linearised Θ' (44) at
    (b⁽ᵗ⁾, μ⁽ᵗ⁾, T⁽ᵗ⁾) against ε; we test Θ, the latency the decision is judged by, with a relative tolerance, since
    ε is also C1's accuracy target and Θ is in seconds.

    P1 and P2 are memoised where they are defined (:mod:`fedlib.hasfl.optimiser.memo`): :func:`bcd`'s restarts
    revisit points, and read them instead of solving again.

    Returns:
        ``(b, cuts, rounds, Θ per round)``: b⁽ᵗ⁾ and μ⁽ᵗ⁾ as ``[N]`` int64 (cut layers in 1..L), the rounds run, and
        ``[Θ⁽⁰⁾, ..., Θ⁽ᵗ⁾]`` in seconds.

    Raises:
        ValueError: P1 or P2 finds no feasible point from ``b``.
    """
    cuts, T, _ = solve_p2(problem, b)                                   # μ⁽⁰⁾, T⁽⁰⁾ given b⁽⁰⁾
    thetas = [float(theta(problem, b, cuts))]
    tau = 0
    for tau in range(1, max_iter + 1):
        b = solve_p1(problem, cuts, T)                                  # line 4: P1 (46), b⁽ᵗ⁾
        cuts, T, _ = solve_p2(problem, b)                               # line 5: P2 (59), μ⁽ᵗ⁾ and T⁽ᵗ⁾
        thetas.append(float(theta(problem, b, cuts)))                   # Θ (42) of (b⁽ᵗ⁾, μ⁽ᵗ⁾)
        if np.isfinite(thetas[-2]) and abs(thetas[-2] - thetas[-1]) <= tol * abs(thetas[-2]):   # line 6
            break
    return b, cuts, tau, thetas


# ---- Our additions (the paper is silent; choices in the module docstring) -------------------------------------------


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


def uniform_cut_candidates(problem: Problem, line_search: bool, floors: dict | None = None) -> list[Decision]:
    """Group moves of the cuts: for every allowed cut j that keeps ε reachable, all devices at cut j with batch
    sizes from P1 (+ Proposition 1) at budgets taken from every device's memory cap, replaced by the exact batch
    sizes at that cut (:func:`fedlib.hasfl.optimiser.batch_search.exact_batches`) when its enumeration is small enough, else
    refined by :func:`line_search_batches` when ``line_search``. Infeasible cuts are skipped. ``floors``: the result of
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
        exact = exact_batches(problem, cuts)
        if exact is not None and theta(problem, exact, cuts) <= theta(problem, b, cuts):
            b = exact
        elif line_search:
            b = line_search_batches(problem, b, cuts)
        val = float(theta(problem, b, cuts))
        if np.isfinite(val):
            out.append(Decision(b, cuts, val))
    return out


def bcd(problem: Problem, starts: tuple = (4.0, np.inf), tol: float = 1e-6, max_iter: int = 30,
        polish_result: bool = True, group_moves: bool = True, restarts: bool = True) -> Decision:
    """Algorithm 2 (BCD): alternate P1 (b) and P2 (μ, T) until Θ (42) changes by <= ``tol`` (relative), from
    per-device starts, then leave its fixed points by group moves and restarts, and refine; returns the decision
    with the smallest Θ (eq. 42).

    Steps (our additions to the paper's method are documented in the module docstring):

    1. Feasibility first (:func:`common_cut_floors`): one error for the whole problem when no decision exists.
    2. The paper's alternation from every start of :func:`start_batches` (per-device batch sizes from C1 and
       each device's memory C4; never above ``max_batch``).
    3. ``group_moves``: :func:`uniform_cut_candidates` (all devices at one cut, every cut that keeps ε
       reachable, with the exact batch sizes at that cut where the enumeration is small enough), because the
       alternation can stall at a wrong common cut where each block is optimal given the other.
    4. ``restarts`` (with ``group_moves``): the alternation again from each of those common-cut decisions (the
       three best for N > 100).
    5. ``polish_result``: :func:`refine` (exact batch sizes at the cuts, :func:`polish`'s integer steepest descent
       over b ± 1 and single-cut moves, repeated) on every candidate for N <= 10, else on the best three; then,
       for N <= 8, :func:`cut_moves` (single-device cut changes with the batch sizes re-optimised exactly); and
       where at most 256 cut vectors fit memory, :func:`enumerate_cuts` (each at its exact batch sizes: the
       optimum).

    Every returned decision satisfies C1 and C3-C5 (one cut per device in ``allowed_cuts``, memory, integer
    b_i in 1..``max_batch``).

    Returns:
        :class:`Decision` with ``info = {"bcd_iters", "history", "theta_bcd", "theta_group", "theta_restarts",
        "candidates", "solve_s"}``.

    Raises:
        ValueError: no decision exists (C1 with the bound's smallest floor, or C4 with the device and its memory).
    """
    check_problem(problem)
    starts = check_list("starts", starts, lambda k, v: check_float(k, v, 0, low_open=True, allow_inf=True))
    check_float("tol", tol, 0)
    check_int("max_iter", max_iter, 1)
    check_bool("polish_result", polish_result)
    check_bool("group_moves", group_moves)
    check_bool("restarts", restarts)
    t0 = time.perf_counter()
    floors = common_cut_floors(problem)             # raises the one error when no decision exists
    small = problem.num_devices <= 10
    cands, iters, history = [], [], []

    def add(b, cuts):
        val = float(theta(problem, b, cuts))
        if np.isfinite(val):
            cands.append(Decision(np.asarray(b, dtype=np.int64).copy(), np.asarray(cuts, dtype=np.int64).copy(), val))

    for scale in starts:
        try:
            b, cuts, it, hist = algorithm2(problem, start_batches(problem, scale), tol, max_iter)
        except ValueError:  # this start is infeasible for P1/P2; another start or a group move may not be
            continue
        iters.append(it)
        history.append(hist)
        add(b, cuts)
    info = {"bcd_iters": iters, "history": history, "theta_bcd": min((d.theta for d in cands), default=None)}
    if group_moves or not cands:
        group = uniform_cut_candidates(problem, line_search=small, floors=floors)
        info["theta_group"] = min((d.theta for d in group), default=None)
        cands += group
        if restarts:
            n_before = len(cands)
            ranked = sorted(group, key=lambda d: d.theta)
            for d in ranked if problem.num_devices <= 100 else ranked[:3]:
                try:
                    add(*algorithm2(problem, d.b, tol, max_iter)[:2])
                except ValueError:   # P1/P2 find no feasible point from this start
                    continue
            info["theta_restarts"] = min((d.theta for d in cands[n_before:]), default=None)
    if not cands:   # no start and no group move is feasible: the memory-cap start at its initial cuts
        b = start_batches(problem, np.inf)
        cuts = initial_cuts(problem, b)
        cands.append(Decision(b, cuts, float(theta(problem, b, cuts))))
    cands.sort(key=lambda d: d.theta)
    info["candidates"] = len(cands)
    best = cands[0]
    if polish_result:
        seen = set()
        for d in cands if small else cands[:3]:
            key = (tuple(d.b), tuple(d.cuts))
            if key in seen:
                continue
            seen.add(key)
            b, cuts = refine(problem, d.b, d.cuts, line_search=small)
            val = float(theta(problem, b, cuts))
            if val < best.theta:
                best = Decision(b, cuts, val)
        if problem.num_devices <= 8:
            b, cuts = cut_moves(problem, best.b, best.cuts)
            b, cuts = refine(problem, b, cuts, line_search=True)
            best = Decision(b, cuts, float(theta(problem, b, cuts)))
        every = enumerate_cuts(problem)       # at most 256 memory-feasible cut vectors: the exact optimum
        if every is not None and theta(problem, *every) < best.theta:
            best = Decision(every[0], every[1], float(theta(problem, *every)))
            info["enumerated"] = True
    best = Decision(best.b, best.cuts, float(theta(problem, best.b, best.cuts)))
    best.info = dict(info, solve_s=time.perf_counter() - t0)
    return best
