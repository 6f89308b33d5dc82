"""One HASFL round as a per-device timeline (:mod:`fedlib.lab.split.timeline`): a decision (b, cuts) on a problem's
system, laid out from the latency model's own terms, with or without the aggregation round.

Source: HASFL Sec. V-A, eqs. (28)-(39); every duration is a term
of :func:`fedlib.hasfl.round_latency` (the function the optimiser's Θ, the training clock
:func:`fedlib.lab.hasfl.runs.train_config.hasfl_clock` and the latency figures use); this module adds no arithmetic
of its own. Phases, each ending at a barrier as the maxima of eqs. (38)-(39) do:

1. every device: forward T_F (28), then the smashed data's upload T_aU (29); the phase lasts max_i{T_F + T_aU}
   (the optimiser's T3);
2. the edge server: forward T_sF (30), then backward T_sB (31) of all devices' server-side parts, one after
   another; each device's row shows the server segment too (its activation gradients come back after it);
3. every device: activation gradients' download T_gD (32), then backward T_B (33); max_i{T_gD + T_B} (T4);
4. (aggregation round, every I rounds) client-side models' upload T_cU (34) beside the edge server's upload of
   the non-common parts T_sU (35); max{max_i T_cU, T_sU} (T5);
5. (aggregation round) the models' download T_cD (36) beside T_sD (37); max{max_i T_cD, T_sD} (T6).

The round's latency is T_S (38), or T_S + T_A (39) with the aggregation round: the layout's end is checked against
``hasfl_clock(problem)`` to float precision.
"""
from __future__ import annotations

import numpy as np

from fedlib.core.validate import check_bool, check_per_client
from fedlib.lab.split.timeline import Step, Timeline, build_timeline
from fedlib.hasfl.bound.latency import round_latency
from fedlib.hasfl.bound.problem import Problem, check_problem
from fedlib.lab.hasfl.runs.train_config import hasfl_clock


def round_timeline(problem: Problem, b, cuts, aggregated: bool = False) -> Timeline:
    """The timeline of one round of decision (``b``, ``cuts``) on ``problem``'s system and model profile.

    Args:
        problem: a :class:`fedlib.hasfl.Problem` (profile, devices, servers). b: ``[N]`` batch sizes (finite,
            >= 1). cuts: ``[N]`` cut layers L_i in 1..L. aggregated: also the aggregation round (eq. 39).

    Returns:
        A :class:`fedlib.lab.split.timeline.Timeline` with N device rows (``device i · b · cut``) and one
        ``edge server`` row; ``latency`` = T_S (+ T_A) in seconds; with ``aggregated`` a mark at T_S.

    Raises:
        ValueError / ParameterTypeError: ``problem`` not a Problem; ``b`` / ``cuts`` not ``[N]`` (naming them and
            N), b NaN, infinite or < 1, cuts not integers in 1..L; ``aggregated`` not a bool.
        RuntimeError: the layout's end differs from the model's round latency (a term dropped or doubled).
    """
    p = check_problem(problem)
    n, L = p.num_devices, p.profile.num_layers
    b = check_per_client("b", b, n, what="N", low=1)
    cuts = check_per_client("cuts", cuts, n, what="N", integer=True, low=1, high=L)
    aggregated = check_bool("aggregated", aggregated)
    lat = round_latency(p.profile, b, cuts, p.devices, p.servers)
    dev = lambda key: np.append(lat[key], 0.0)          # the device term [N], nothing on the server row
    srv = lambda key: np.append(np.zeros(n), lat[key])   # the server term on the server row only
    shared = lambda key: np.full(n + 1, float(lat[key]))  # the server's compute: every row waits for it
    phases = [[[Step("compute", "T_F (28)", dev("T_F"))], [Step("uplink", "T_aU (29)", dev("T_aU"))]],
              [[Step("server", "T_sF (30)", shared("T_sF"))], [Step("server", "T_sB (31)", shared("T_sB"))]],
              [[Step("downlink", "T_gD (32)", dev("T_gD"))], [Step("compute", "T_B (33)", dev("T_B"))]]]
    if aggregated:
        phases += [[[Step("uplink", "T_cU (34)", dev("T_cU")), Step("uplink", "T_sU (35)", srv("T_sU"))]],
                   [[Step("downlink", "T_cD (36)", dev("T_cD")), Step("downlink", "T_sD (37)", srv("T_sD"))]]]
    names = [f"device {i} · b {b[i]:g} · cut {cuts[i]}" for i in range(n)] + ["edge server"]
    model = hasfl_clock(p)(0, b, cuts, aggregated)
    marks = ((float(lat["T_S"]), "split round ends, T_S (38)"),) if aggregated else ()
    return build_timeline(names, phases, model, "T_S + T_A, eqs. 38-39" if aggregated else "T_S, eq. 38",
                          devices=n, marks=marks)
