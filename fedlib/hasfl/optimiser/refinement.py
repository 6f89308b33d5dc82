"""HASFL optimiser, refinement of a decision (our additions to Algorithm 2; choices in :mod:`.bcd`'s docstring):
integer steepest descent (:func:`polish`), the per-device batch line search (:func:`line_search_batches`), the exact
batch sizes at fixed cuts alternated with polish (:func:`refine`), single-device cut moves scored at exact batch
sizes (:func:`cut_moves`), the enumeration of every memory-feasible cut vector when there are few
(:func:`enumerate_cuts`), and HABS's batch sizes at fixed cuts (:func:`habs_batches`). Every function but the last returns a decision never worse (by Θ, eq. 42) than its
input."""
from __future__ import annotations

import itertools

import numpy as np

from ...core.validate import check_array, check_bool, check_int
from .batch_search import exact_batches
from .p1 import solve_p1
from ..bound.problem import Problem, aux_variables, batch_caps, check_cuts, check_problem, theta


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


def theta_rows(problem: Problem, cand: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """Θ (42) of each row of ``cand`` ``[K, N]`` at one cut vector ``cuts`` ``[N]``, ``[K]``: in blocks of about 2^16
    values, the same values as one call on all rows (a row's Θ depends on that row only) with fewer page faults."""
    rows = max(1, 2 ** 16 // problem.num_devices)
    return np.concatenate([theta(problem, cand[s:s + rows], cuts) for s in range(0, len(cand), rows)])


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
            k = int(np.argmin(vals := theta_rows(problem, cand, cuts)))
            if vals[k] < cur * (1 - 1e-12):
                b, cur, changed = cand[k].copy(), float(vals[k]), True
        if not changed:
            break
    return b


def refine(problem: Problem, b: np.ndarray, cuts: np.ndarray, line_search: bool = False, max_rounds: int = 10) -> tuple:
    """Alternate the exact batch sizes at the current cuts (:func:`fedlib.hasfl.optimiser.batch_search.exact_batches`, or
    :func:`line_search_batches` when ``line_search`` and the enumeration is too large) and :func:`polish` (which
    may move cuts), until Θ stops decreasing. Returns ``(b, cuts)`` ([N] int64 each), never worse than the input."""
    check_bool("line_search", line_search)
    check_int("max_rounds", max_rounds, 1)
    b, cuts = _decision(problem, b, cuts)
    cur = float(theta(problem, b, cuts))
    for _ in range(max_rounds):
        nb = exact_batches(problem, cuts)
        if nb is None and line_search:
            nb = line_search_batches(problem, b, cuts)
        if nb is not None and theta(problem, nb, cuts) < cur:
            b = nb
        b, cuts, _ = polish(problem, b, cuts)
        new = float(theta(problem, b, cuts))
        if not new < cur * (1 - 1e-12):
            break
        cur = new
    return b, cuts


def cut_moves(problem: Problem, b: np.ndarray, cuts: np.ndarray, max_sweeps: int = 20) -> tuple:
    """Coordinate descent over the cuts with the batch sizes re-optimised exactly: the best single-device cut
    change, each scored at :func:`fedlib.hasfl.optimiser.batch_search.exact_batches` for the new cuts (a cut move usually pays
    only together with other devices' batch sizes, which :func:`polish`'s ±1 steps cannot reach), repeated while Θ
    decreases. Returns ``(b, cuts)``, never worse than the input; for small N (|cuts|·N exact searches a sweep)."""
    check_int("max_sweeps", max_sweeps, 1)
    b, cuts = _decision(problem, b, cuts)
    cur = float(theta(problem, b, cuts))
    for _ in range(max_sweeps):
        best = None
        for i in range(problem.num_devices):
            for j in problem.allowed_cuts:
                if j == cuts[i]:
                    continue
                trial = cuts.copy()
                trial[i] = j
                nb = exact_batches(problem, trial)
                if nb is None:
                    continue
                val = float(theta(problem, nb, trial))
                if val < cur * (1 - 1e-12) and (best is None or val < best[0]):
                    best = (val, nb, trial)
        if best is None:
            break
        cur, b, cuts = best
    return b, cuts


def enumerate_cuts(problem: Problem, limit: int = 256) -> tuple | None:
    """Every cut vector whose cuts each fit their device's memory at b = 1 (C4), each scored at its exact batch
    sizes (:func:`fedlib.hasfl.optimiser.batch_search.exact_batches`): the global optimum of problem (41) when that is at most
    ``limit`` vectors (small N, or tight memory leaving few cuts per device) and each exact search fits its work
    limit. Returns ``(b, cuts)``, or ``None`` when there are more vectors than ``limit`` or none is feasible.

    Raises:
        ValueError: ``limit`` not an integer >= 1.
    """
    check_int("limit", limit, 1)
    p = check_problem(problem)
    cuts = np.asarray(p.allowed_cuts)
    fits = batch_caps(p, np.broadcast_to(cuts[:, None], (len(cuts), p.num_devices))) >= 1      # [cuts, N]
    options = [cuts[fits[:, i]] for i in range(p.num_devices)]
    if any(len(o) == 0 for o in options) or sum(np.log(len(o)) for o in options) > np.log(limit) + 1e-9:
        return None
    best = None
    for vec in itertools.product(*options):
        vec = np.asarray(vec, dtype=np.int64)
        b = exact_batches(p, vec)
        if b is None:
            continue
        val = float(theta(p, b, vec))
        if np.isfinite(val) and (best is None or val < best[0]):
            best = (val, b, vec)
    return None if best is None else (best[1], best[2])


def habs_batches(problem: Problem, cuts) -> np.ndarray:
    """HABS, the batch sizes of HASFL's batch block for fixed ``cuts`` (``[N]`` cut layers): P1 + Proposition 1
    (:func:`fedlib.hasfl.optimiser.p1.solve_p1`) with the auxiliary budgets T of every device at b = 64, then the
    exact integer optimum of Θ (eq. 42) at these cuts (:func:`fedlib.hasfl.optimiser.batch_search.exact_batches`),
    or, where its enumeration is too large, :func:`line_search_batches` from P1's answer; the better by Θ.

    Choice (README's deviations): P1 alone sets one latency budget for every device, so it keeps near-equal batch
    sizes beside a slow device (b = [6, 6, 6], Θ 568 s, against the optimum [29, 2, 29], 262 s, on a three-device
    instance with one 5 Mbit/s uplink); the exact search at fixed cuts is the batch block of :func:`fedlib.hasfl.bcd`.

    Returns:
        ``[N]`` int64 batch sizes >= 1.

    Raises:
        ValueError: ``cuts`` not N cut layers in 1..L; ε unreachable at these cuts or a device that fits no batch
            size (P1's message, naming C1 or the device).
    """
    p = check_problem(problem)
    cuts = check_cuts(p, cuts)
    if cuts.shape != (p.num_devices,):
        raise ValueError(f"cuts must hold one cut per device (N = {p.num_devices}), got shape {cuts.shape}")
    b = solve_p1(p, cuts, aux_variables(p, np.full(p.num_devices, 64), cuts)).astype(np.int64)
    best = exact_batches(p, cuts)
    if best is None:
        best = line_search_batches(p, np.maximum(b, 1), cuts)
    return best if theta(p, best, cuts) < theta(p, b, cuts) else b
