"""Timing for the benchmark commands (``python -m fedlib.lab.bench``): warm-up, interleaved timed calls, median and
spread.

:func:`time_interleaved` calls each variant ``warmup`` times untimed (allocator, kernel selection, lazy
initialisation), then ``repeats`` times timed, the variants interleaved (variant 1, 2, 3, 1, 2, 3, ...) so that a
change in the machine's load during the benchmark (a shared machine) falls on every variant alike. The clock is
:func:`torch.utils.benchmark.timer`, the one :class:`torch.utils.benchmark.Timer` uses: it synchronises the
accelerator (CUDA) before reading ``time.perf_counter``, so queued GPU work is counted in the call that queued it.
Each variant's times come back as a :class:`torch.utils.benchmark.Measurement` (one call per replicate, in the
order timed). Each timed call is a whole training round or more (0.1 s to tens of seconds), so the adaptive
block sizes of ``Timer.blocked_autorange`` would buy nothing and would time the variants one after another, not
interleaved; the thread setting is the caller's (``Timer`` would set one thread unless told otherwise).

:func:`rate_spread` turns a measurement into ``work / seconds`` per replicate and reports the median, the
interquartile range and the min-max range of those rates (linear quantiles, so ``min <= p25 <= median <= p75 <=
max``); :func:`ratio_spread` does the same for the ratio of two variants' rates within each replicate (the
variants of one replicate ran back to back, under the same load).
"""
from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np
import torch
from torch.utils.benchmark import Measurement, TaskSpec, timer


def time_interleaved(calls: dict[str, Callable[[], object]], repeats: int, warmup: int = 1,
                     device: torch.device | str = "cpu") -> tuple[dict[str, Measurement], dict[str, float]]:
    """Time each of ``calls`` ``repeats`` times, interleaved, after ``warmup`` untimed calls of each.

    Returns:
        ``(measurements, peak_gpu_mib)``: per name, a :class:`torch.utils.benchmark.Measurement` of ``repeats``
        seconds (one call each, in the order timed); on CUDA, per name, the largest peak allocated GPU memory of
        its timed calls in MiB (memory other variants hold stays allocated, so it counts in every peak); ``{}``
        on other devices.

    Raises:
        ValueError: no calls, ``repeats`` < 1 or ``warmup`` < 0.
    """
    if not calls or repeats < 1 or warmup < 0:
        raise ValueError(f"need calls, repeats >= 1 and warmup >= 0, got {len(calls)} calls, repeats={repeats}, "
                         f"warmup={warmup}")
    device = torch.device(device)
    cuda = device.type == "cuda"
    for fn in calls.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {name: [] for name in calls}
    peaks: dict[str, float] = {}
    for _ in range(repeats):
        for name, fn in calls.items():
            if cuda:
                torch.cuda.synchronize(device)
                torch.cuda.reset_peak_memory_stats(device)
            start = timer()
            fn()
            if cuda:
                torch.cuda.synchronize(device)      # timer() syncs the current device; device may be another
            times[name].append(timer() - start)
            if cuda:
                peaks[name] = max(peaks.get(name, 0.0), round(torch.cuda.max_memory_allocated(device) / 2 ** 20, 1))
    threads = torch.get_num_threads()
    return ({name: Measurement(1, t, TaskSpec(stmt=f"{name}()", setup="pass", label="fedlib.lab.bench",
                                              description=name, num_threads=threads)) for name, t in times.items()},
            peaks)


def spread(values, digits: int = 1) -> dict:
    """``{"median", "iqr": [p25, p75], "min_max": [min, max], "n"}`` of ``values`` (linear quantiles), each
    rounded to ``digits`` decimals (rounding keeps their order)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ValueError("spread of no values")
    p25, med, p75 = (round(float(q), digits) for q in np.quantile(v, [0.25, 0.5, 0.75]))
    return {"median": med, "iqr": [p25, p75], "min_max": [round(float(v.min()), digits), round(float(v.max()), digits)],
            "n": int(v.size)}


def rate_spread(m: Measurement, work: float, digits: int = 1) -> dict:
    """:func:`spread` of ``work / seconds`` over the replicates of ``m`` (e.g. samples per second)."""
    return spread([work / t for t in m.times], digits)


def ratio_spread(num: Measurement, num_work: float, den: Measurement, den_work: float, digits: int = 3) -> dict:
    """:func:`spread` of rate(num) / rate(den) within each replicate (the i-th times of both, timed back to
    back by :func:`time_interleaved`)."""
    if len(num.times) != len(den.times):
        raise ValueError(f"unpaired measurements: {len(num.times)} and {len(den.times)} replicates")
    return spread([(num_work / a) / (den_work / b) for a, b in zip(num.times, den.times)], digits)


def machine(device: torch.device | str) -> dict:
    """What the timings depend on: ``device``, torch ``threads``, ``cpus``, ``torch``, ``fedlib`` versions,
    ``load_1min`` (the 1-minute load average when called: a loaded machine times slower and noisier), and on
    CUDA ``gpu`` (the card's name)."""
    from fedlib import __version__
    device = torch.device(device)
    out = {"device": str(device), "threads": torch.get_num_threads(), "cpus": os.cpu_count(),
           "torch": torch.__version__, "fedlib": __version__, "load_1min": round(os.getloadavg()[0], 2)}
    if device.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(device)
    return out


def matmul_gflops(n: int = 2048, reps: int = 10, device: torch.device | str = "cpu") -> float:
    """The machine's large-matmul throughput, the roofline of ``python -m fedlib.lab.bench hist`` (whose steps are
    matmuls; ``bench sfl`` reports none: for convolutions it is no ceiling, :mod:`fedlib.lab.split.bench` says why):
    best-of-3 GFLOP/s of an ``n x n`` float32 matmul (2n³ FLOPs each, ``reps`` per timing) on ``device``, timed by
    :func:`torch.utils.benchmark.timer` (which synchronises CUDA).

    Raises:
        ValueError: ``n`` or ``reps`` < 1.
    """
    if n < 1 or reps < 1:
        raise ValueError(f"n and reps must be >= 1, got n={n}, reps={reps}")
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    a @ b
    best = 0.0
    for _ in range(3):
        start = timer()
        for _ in range(reps):
            a @ b
        best = max(best, 2 * n ** 3 * reps / (timer() - start) / 1e9)
    return best
