"""One DTFL round (and one FedAvg round) as a per-client timeline (:mod:`fedlib.lab.split.timeline`), laid out from
DTFL's time model (Sec. 3.3, eq. 5; :class:`fedlib.dtfl.TimeModel`) and FedAvg's
(:func:`fedlib.dtfl.baseline_time.method_times`), in the units of :mod:`fedlib.dtfl.timing` (seconds, Mbit/s).

Eq. 5 charges client k in tier m T_k = max{T_c + T_com, T_s + T_com}: the client's compute T_c and its copy's
server compute T_s side by side, the communication T_com once; the round ends with the slowest client (max_k T_k,
:func:`fedlib.dtfl.simulate`'s ``round_s`` without noise). The layout, one phase ending at that straggler:

- downlink: the client-side model's download, 8·model_bytes/ν_k (the first of T_com's two model transfers:
  :mod:`fedlib.dtfl.timing`'s docstring sends the model both ways at ν_k);
- compute T_c beside server T_s (the row's upper and lower half);
- uplink: the rest of T_com, T_com − download (smashed data z, labels and the model's upload), so that download
  and uplink add up to the model's T_com;
- wait for the slowest client.

FedAvg (and FedYogi, the same time model): downlink (the whole model's download, 8·model_bytes/ν_k), compute T_c,
uplink T_com − download (the model's upload); no server compute. The only arithmetic here is that split of T_com
into its download and the rest; every other duration is the time model's own, and the layout's end is checked
against max_k T_k to float precision.
"""
from __future__ import annotations

import numpy as np

from fedlib.core.validate import ParameterTypeError, check_array, check_per_client
from fedlib.lab.split.timeline import Step, Timeline, build_timeline
from fedlib.lab.units import check_plausible, check_plausible_all
from fedlib.dtfl.baseline_time import MethodCosts, method_times
from fedlib.dtfl.scheduler import TierScheduler
from fedlib.dtfl.timing import CORE_FLOPS, SERVER_FLOPS, TimeModel


def _clients(cpus, mbps, samples, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``cpus``, ``mbps`` (finite > 0) and ``samples`` (finite >= 1) as ``[K]`` arrays (one number: every client),
    each within the plausible range of its unit (:mod:`fedlib.lab.units`: a link in bit/s where ``mbps`` is in
    Mbit/s is refused by name)."""
    out = (check_per_client("cpus", cpus, k, allow_scalar=True, low=0, low_open=True),
           check_per_client("mbps", mbps, k, allow_scalar=True, low=0, low_open=True),
           check_per_client("samples", samples, k, allow_scalar=True, low=1))
    for name, arr, unit in zip(("cpus", "mbps", "samples"), out, (("cpus", "CPUs"), ("rate", "Mbit/s"),
                                                                  ("samples", "samples"))):
        check_plausible_all(name, arr, *unit)
    return out


def _speeds(core_flops, server_flops) -> None:
    check_plausible("core_flops", core_flops, "compute", "FLOP/s")
    check_plausible("server_flops", server_flops, "compute", "FLOP/s")


def _tiers(time_model: TimeModel, tiers) -> np.ndarray:
    if not isinstance(time_model, TimeModel):
        raise ParameterTypeError(f"time_model must be a fedlib.dtfl.TimeModel, got {type(time_model).__name__}")
    return check_array("tiers", tiers, low=1, high=time_model.costs.num_tiers, ndim=1, integer=True)


def scheduled_tiers(time_model: TimeModel, cpus, mbps, samples) -> np.ndarray:
    """The tiers DTFL's :class:`fedlib.dtfl.TierScheduler` assigns after one round at its initial tier M observed
    without noise (what :func:`fedlib.dtfl.simulate` with ``noise=0`` runs in round 2 when no profile changes): with
    exact client times its estimates are eq. 5's, so each client gets the largest tier whose time is at most
    T_max = max_k min_m T_k(m) (eq. 6). ``[K]`` ints in 1..M.

    Args:
        time_model: the tiers' time model. cpus, mbps, samples: ``[K]`` per client (or one number for all): CPUs
            (> 0), link speed in Mbit/s (> 0), N_k (>= 1). K is the length of the first ``[K]`` array.

    Raises:
        ValueError / ParameterTypeError: as :func:`tier_timeline`.
    """
    if not isinstance(time_model, TimeModel):
        raise ParameterTypeError(f"time_model must be a fedlib.dtfl.TimeModel, got {type(time_model).__name__}")
    k = max((np.size(v) for v in (cpus, mbps, samples) if np.ndim(v) == 1), default=1)
    cpus, mbps, samples = _clients(cpus, mbps, samples, k)
    sched = TierScheduler(time_model, k)
    start = np.full(k, sched.initial_tier)
    sched.observe(start, time_model.times(start, cpus, mbps, samples)["T_c"])
    return sched.assign(mbps, samples)


def tier_timeline(time_model: TimeModel, tiers, cpus, mbps, samples) -> Timeline:
    """The timeline of one DTFL round with clients in ``tiers`` (module docstring).

    Args:
        time_model: :class:`fedlib.dtfl.TimeModel`. tiers: ``[K]`` tier per client, integers in 1..M. cpus, mbps,
            samples: ``[K]`` per client (or one number for all): CPUs (> 0), link speed in Mbit/s (> 0), N_k (>= 1).

    Returns:
        A :class:`fedlib.lab.split.timeline.Timeline` with K client rows (``client k · CPUs / Mbps · tier m``),
        ``latency`` = max_k T_k (eq. 5, seconds).

    Raises:
        ValueError / ParameterTypeError: ``time_model`` not a TimeModel; tiers not a 1-D array of integers in
            1..M; cpus / mbps / samples not one number or ``[K]``, NaN, infinite, cpus or mbps <= 0 or samples
            < 1 (each naming the parameter).
        RuntimeError: the layout's end differs from max_k T_k (a term dropped or doubled).
    """
    tiers = _tiers(time_model, tiers)
    _speeds(time_model.core_flops, time_model.server_flops)
    k = len(tiers)
    cpus, mbps, samples = _clients(cpus, mbps, samples, k)
    t = time_model.times(tiers, cpus, mbps, samples)
    down = 8 * time_model.costs.model_bytes[tiers - 1] / (mbps * 1e6)
    phase = [[Step("downlink", "client-side model download", down)],
             [Step("compute", "T_c", t["T_c"]), Step("server", "T_s", t["T_s"])],
             [Step("uplink", "z + labels + model upload (T_com - download)", t["T_com"] - down)]]
    names = [f"client {i} · {cpus[i]:g} CPU / {mbps[i]:g} Mbps · tier {tiers[i]}" for i in range(k)]
    return build_timeline(names, [phase], float(np.max(t["T"])), "max_k T_k, eq. 5")


def method_timeline(costs: MethodCosts, cpus, mbps, samples, core_flops: float = CORE_FLOPS,
                    server_flops: float = SERVER_FLOPS) -> Timeline:
    """The timeline of one FedAvg (or FedYogi) round on DTFL's clients (module docstring), charged by
    :func:`fedlib.dtfl.baseline_time.method_times`.

    Args:
        costs: :func:`fedlib.dtfl.baseline_time.method_costs` of ``fedavg`` or ``fedyogi``. cpus, mbps, samples:
            ``[K]`` per client (or one number for all), as :func:`tier_timeline`. core_flops / server_flops: FLOP/s
            of one client CPU / of the server per client (> 0; the notebook's TimeModel's).

    Returns:
        A :class:`fedlib.lab.split.timeline.Timeline` with K client rows, ``latency`` = max_k T_k (seconds).

    Raises:
        ValueError / ParameterTypeError: ``costs`` not MethodCosts, or of a method whose server compute lies on
            the critical path (SplitFed, FedGKT: their per-batch exchange is not laid out here); bad cpus, mbps,
            samples or speeds (naming them; a value outside its unit's plausible range, :mod:`fedlib.lab.units`).
        RuntimeError: the layout's end differs from max_k T_k.
    """
    if not isinstance(costs, MethodCosts):
        raise ParameterTypeError(f"costs must be fedlib.dtfl.baseline_time.MethodCosts, got {type(costs).__name__}")
    if costs.method not in ("fedavg", "fedyogi"):
        raise ValueError(f"costs.method must be 'fedavg' or 'fedyogi' (no server compute), got {costs.method!r}")
    _speeds(core_flops, server_flops)
    k = max((np.size(v) for v in (cpus, mbps, samples) if np.ndim(v) == 1), default=1)
    cpus, mbps, samples = _clients(cpus, mbps, samples, k)
    t = method_times(costs, cpus, mbps, samples, core_flops, server_flops)
    down = 8 * costs.model_bytes / (mbps * 1e6)
    phase = [[Step("downlink", "model download", down)], [Step("compute", "T_c", t["T_c"])],
             [Step("uplink", "model upload (T_com - download)", t["T_com"] - down)]]
    names = [f"client {i} · {cpus[i]:g} CPU / {mbps[i]:g} Mbps" for i in range(k)]
    return build_timeline(names, [phase], float(np.max(t["T"])), f"max_k T_k ({costs.method})")
