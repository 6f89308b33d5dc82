"""The paper's benchmark strategies (random batch size RBS, random split RMS, RHAMS) beside HASFL, with one
interface (:func:`strategy`).

RMS, as the paper defines it (Sec. VII-A: "randomly selecting model split points during model training"): each
device's cut drawn uniformly among the cuts that fit its memory (C4) at its batch size. Our reading: drawn once
per run, as RBS's batch sizes are, so that a run is one decision that the latency model charges and the bound
scores (a re-draw every round would make the per-round latency and L_c random). The draw does not look at ε:
a deep cut may make C1 unreachable, and then Θ = inf (the run is still trained). The variants ``HABS+RMS(C1)``
and ``RBS+RMS(C1)`` draw only among the cuts that also keep ε reachable (:func:`fedlib.hasfl.bound.problem.
admissible_cuts`), our earlier definition, kept beside the paper's: under the pilot constants and ε rule that
leaves cut 1 alone. A variant draws from the same stream as its paper strategy (:func:`draw_stream`), so RBS+RMS
and RBS+RMS(C1) share their batch sizes and differ only in the cuts.

A strategy of your own: ``fn(problem, rng)`` returning a :class:`fedlib.hasfl.Decision` or ``(b, cuts)``, named by
import path ``"package.module:fn"`` (:func:`own_strategy`); its Θ is scored here (eq. 42), whatever it reports."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...core.components import call, check_output, is_path, resolve
from ...core.validate import ParameterTypeError, check_instance
from ...split import memory_bits
from ..bound.problem import Decision, Problem, admissible_cuts, check_problem, feasible_cuts, theta
from ..bound.theory import bound_floor
from .bcd import bcd
from .p2 import min_round_latency_cuts, solve_p2
from .refinement import habs_batches


#: HASFL, the paper's four benchmarks, and the two RMS variants restricted to cuts that keep ε reachable
STRATEGIES = ("HASFL", "RBS+HAMS", "HABS+RMS", "RBS+RMS", "RBS+RHAMS", "HABS+RMS(C1)", "RBS+RMS(C1)")
#: the paper's five (Figs. 5, 6, 9)
PAPER_STRATEGIES = STRATEGIES[:5]


def draw_stream(name: str) -> str:
    """The name of the random stream a strategy draws from: the paper strategy's for its ``(C1)`` variant."""
    return name.removesuffix("(C1)")


def random_batch_sizes(n: int, rng: np.random.Generator, low: int = 1, high: int = 64) -> np.ndarray:
    """RBS: b_i uniform in {low..high}."""
    return rng.integers(low, high + 1, n)


def random_cuts(problem: Problem, b, rng: np.random.Generator, reachable: bool = False) -> np.ndarray:
    """RMS: each device's cut uniform among its memory-feasible cuts at batch size b_i (C4 and ``allowed_cuts``:
    :func:`fedlib.hasfl.bound.problem.feasible_cuts`), the paper's; ``reachable``: only among those that also keep
    ε reachable (:func:`fedlib.hasfl.bound.problem.admissible_cuts`), the ``(C1)`` variants. ``[N]`` int64.

    Raises:
        ValueError: a device fits no cut (C4), or, with ``reachable``, no cut keeps ε reachable (C1)."""
    ok = admissible_cuts(problem, b) if reachable else feasible_cuts(problem, b)
    return np.array([rng.choice(np.flatnonzero(row)) + 1 for row in ok], dtype=np.int64)


def infeasible(problem: Problem, b: np.ndarray, cuts: np.ndarray, th: float) -> str | None:
    """Why the decision ``(b [N], cuts [N])`` with Θ = ``th`` (s, eq. 42) is infeasible, or None: memory C4 first
    (some device's :func:`fedlib.split.memory_bits` at its b and cut reaches its memory: Θ is inf for it too, and it
    is the reason), else C1 (Θ inf: ε at or below the bound's floor at these cuts)."""
    need, have = memory_bits(problem.profile, b, cuts), problem.devices.memory_bits
    over = np.flatnonzero(need >= have)
    if len(over):
        i = int(over[0])
        return (f"memory constraint C4: {len(over)} device(s) exceed their memory, e.g. device {i} needs "
                f"{need[i] / 8e6:.1f} MB at b = {b[i]}, cut {cuts[i]} and has {have[i] / 8e6:.1f} MB")
    if not np.isfinite(th):
        return "convergence constraint C1: eps is at or below the bound's floor at these cuts"
    return None


def own_strategy(problem: Problem, path: str, rng: np.random.Generator) -> Decision:
    """The decision of the strategy ``path`` (``"package.module:fn"``) on ``problem``: b ``[N]`` >= 1 and cuts ``[N]``
    in 1..L checked, Θ scored (eq. 42; inf where memory C4 is violated or C1 is unreachable, ``info["infeasible"]``
    says which, C4 first). Raises ValueError (unimportable, out of range: naming it), ParameterTypeError (its
    signature cannot take ``(problem, rng)``; neither a Decision nor (b, cuts)) or
    :class:`fedlib.core.components.ComponentError` (it raised: named, the original as the cause)."""
    fn = resolve(path, "strategy", STRATEGIES)
    out = call(fn, f"strategy {path!r}", "(problem, rng)", problem, rng)
    if isinstance(out, Decision):
        b, cuts, info = out.b, out.cuts, dict(out.info)
    elif isinstance(out, (tuple, list)) and len(out) == 2:
        (b, cuts), info = out, {}
    else:
        raise ParameterTypeError(f"strategy {path} must return a fedlib.hasfl.Decision or (b, cuts), got "
                                 f"{type(out).__name__}")
    n = problem.num_devices
    b = check_output(f"strategy {path}", "b", b, n, 1)
    cuts = check_output(f"strategy {path}", "cuts", cuts, n, 1, problem.profile.num_layers)
    th = float(theta(problem, b, cuts))
    reason = infeasible(problem, b, cuts, th)
    if reason:
        info["infeasible"] = reason
    return Decision(b, cuts, th, {**info, "strategy": path})


def strategy(problem: Problem, name: str, rng: np.random.Generator) -> Decision:
    """Decision of a named strategy (one of :data:`STRATEGIES`), scored by Θ (eq. 42).

    HASFL = :func:`bcd`; RBS+HAMS = random b, cuts by P2; HABS+RMS = random cuts (drawn at b = 64), b by HABS
    (:func:`fedlib.hasfl.optimiser.refinement.habs_batches`; choice: where the drawn cuts leave ε unreachable,
    HABS is solved for ε = 1.1 x the floor at those cuts with b = 64, as
    :func:`fedlib.lab.hasfl.runs.training.decide`'s HABS does, and ``info["note"]`` says so); RBS+RMS = both
    random; RBS+RHAMS = random b, cuts by
    :func:`min_round_latency_cuts`; the ``(C1)`` variants draw their cuts among those that keep ε reachable
    (module docstring). A decision whose ε is unreachable gets Θ = inf (``info["infeasible"]`` says why).

    ``name`` may also be a strategy of your own's import path (:func:`own_strategy`).

    Raises:
        ValueError: unknown name (the message names ``name`` and lists :data:`STRATEGIES`); as :func:`own_strategy`.
        ParameterTypeError: ``problem`` not a :class:`Problem`, ``rng`` not a numpy Generator.
    """
    check_problem(problem)
    own = is_path(name)
    if not own and (not isinstance(name, str) or name not in STRATEGIES):
        raise ValueError(f"strategy must be one of {STRATEGIES} or an import path 'package.module:fn', "
                         f"got name={name!r}")
    check_instance("rng", rng, np.random.Generator, "a numpy.random.Generator")
    n = problem.num_devices
    if own:
        return own_strategy(problem, name, rng)
    if name == "HASFL":
        return bcd(problem)
    base, reachable = draw_stream(name), name.endswith("(C1)")
    b = np.full(n, 64, dtype=np.int64) if base == "HABS+RMS" else random_batch_sizes(n, rng)
    cuts = np.ones(n, dtype=np.int64)
    info = {}
    try:
        if base == "HABS+RMS":
            cuts = random_cuts(problem, b, rng, reachable)
            target = problem
            floor = float(bound_floor(problem.constants, problem.gamma, b.astype(float), cuts.max(), problem.interval))
            if problem.eps <= floor:          # choice: ε unreachable at the drawn cuts -> 1.1 x their floor
                target = replace(problem, eps=1.1 * floor)
                info["note"] = f"HABS solved for eps = 1.1 x the floor at the drawn cuts: {target.eps:.4g}"
            b = habs_batches(target, cuts)
        elif base == "RBS+RMS":
            cuts = random_cuts(problem, b, rng, reachable)
        elif base == "RBS+HAMS":
            cuts = solve_p2(problem, b)[0]
        else:
            cuts = min_round_latency_cuts(problem, b)
    except ValueError as err:  # this random draw makes C1 or C4 unsatisfiable
        return Decision(b, cuts, np.inf, {"infeasible": str(err)})
    th = float(theta(problem, b, cuts))
    reason = infeasible(problem, b, cuts, th)
    if reason:
        info["infeasible"] = reason
    return Decision(b, cuts, th, info)
