"""The paper's benchmark strategies (random batch size RBS, random split RMS, RHAMS) beside HASFL, with one
interface (:func:`strategy`)."""
from __future__ import annotations


import numpy as np

from ...core.validate import check_instance
from ..bound.problem import Decision, Problem, admissible_cuts, aux_variables, check_problem, theta
from .bcd import bcd
from .p1 import solve_p1
from .p2 import min_round_latency_cuts, solve_p2


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
        ValueError: unknown name (the message names ``name`` and lists :data:`STRATEGIES`).
        ParameterTypeError: ``problem`` not a :class:`Problem`, ``rng`` not a numpy Generator.
    """
    check_problem(problem)
    if not isinstance(name, str) or name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got name={name!r}")
    check_instance("rng", rng, np.random.Generator, "a numpy.random.Generator")
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
