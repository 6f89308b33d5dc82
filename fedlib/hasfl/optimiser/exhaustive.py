"""Exhaustive search over (b, cuts): the reference optimum of problem (41) for small N and few cuts."""
from __future__ import annotations

import itertools
import time

import numpy as np

from ...core.validate import check_int
from ...split import memory_bits
from ..bound.problem import Decision, Problem, check_problem, theta


def exhaustive(problem: Problem, b_max: int = 64, chunk: int = 2 ** 20) -> Decision:
    """Reference optimum: Θ (eq. 42) over every cut vector in ``allowed_cuts``^N and, for each, every batch vector
    b ∈ {1..b_max}^N that memory C4 admits (each device's range cut at the largest b whose
    :func:`fedlib.split.memory_bits` is below its memory, computed here literally; larger b are infeasible).

    Only for small instances; raises ``ValueError`` above 5·10⁸ candidates (counted after the memory cut), when
    no candidate is feasible, or when ``b_max`` / ``chunk`` is not an integer >= 1.
    """
    check_problem(problem)
    check_int("b_max", b_max, 1)
    check_int("chunk", chunk, 1)
    n = problem.num_devices
    cuts_list = problem.allowed_cuts
    bs = np.arange(1, b_max + 1)
    fits = {j: (memory_bits(problem.profile, bs[:, None], np.full((1, n), j))
                < problem.devices.memory_bits[None, :]).sum(0) for j in cuts_list}
    # memory grows with b, so the count of fitting b in 1..b_max is the largest fitting b
    # candidates: sum over cut vectors of prod_i fits = prod_i sum_j fits[j][i] (no cut vector is listed here)
    total = float(np.prod([sum(float(fits[j][i]) for j in cuts_list) for i in range(n)]))
    if total > 5e8:
        raise ValueError(f"exhaustive search over {total:.3g} candidates is too large (N={n}, b_max={b_max}, "
                         f"{len(cuts_list)} cuts); use fewer devices, cuts or a smaller b_max")
    t0 = time.perf_counter()
    best = (np.inf, None, None)
    for cut in itertools.product(cuts_list, repeat=n):
        caps = [int(fits[c][i]) for i, c in enumerate(cut)]
        if min(caps) < 1:
            continue
        bgrid = np.stack(np.meshgrid(*[np.arange(1, c + 1) for c in caps], indexing="ij"), -1).reshape(-1, n)
        cut = np.asarray(cut, dtype=np.int64)
        for s in range(0, len(bgrid), chunk):
            vals = theta(problem, bgrid[s:s + chunk], np.broadcast_to(cut, (min(chunk, len(bgrid) - s), n)))
            k = int(np.argmin(vals))
            if vals[k] < best[0]:
                best = (float(vals[k]), bgrid[s + k].copy(), cut.copy())
    if best[1] is None:
        raise ValueError("no feasible decision: eps unreachable or memory C4 violated for every candidate")
    return Decision(best[1], best[2], best[0], {"candidates": total, "solve_s": time.perf_counter() - t0})
