"""Exhaustive search over (b, cuts): the reference optimum of problem (41) for small N and few cuts."""
from __future__ import annotations

import itertools
import time

import numpy as np

from ..core.validate import check_int
from .problem import Decision, Problem, check_problem, theta


def exhaustive(problem: Problem, b_max: int = 64, chunk: int = 2 ** 20) -> Decision:
    """Reference optimum: Θ (eq. 42) over every b ∈ {1..b_max}^N and every cut in ``allowed_cuts``^N.

    Only for small instances (work grows as (b_max·|cuts|)^N); raises ``ValueError`` above 5·10⁸ candidates, or
    when ``b_max`` / ``chunk`` is not an integer >= 1.
    """
    check_problem(problem)
    check_int("b_max", b_max, 1)
    check_int("chunk", chunk, 1)
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
