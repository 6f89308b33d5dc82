"""Benchmark of DTFL's training (``python -m fedlib.bench dtfl``): samples/s of whole rounds on the converged
profile's workload (ResNet-20 at width 0.25, or 1 with ``--width 1``, K = 10 clients, batch 50, Adam lr 3e-3,
the first 6,000 training samples of real Fashion-MNIST, IID; one evaluation of the global model on 2,000 test
images per round), for

- ``dtfl_engine``: :func:`fedlib.dtfl.run_dtfl` with ``backend="loop"`` (the shared split engine, local loss at
  each client's tier);
- ``dtfl_loop``: :func:`fedlib.dtfl.reference.run_literal` (per-client ``nn.Module`` s and ``torch.optim.Adam``
  s, clients one after another: the literal Algorithm 1);
- ``fedavg_engine`` / ``fedavg_loop``: :func:`fedlib.dtfl.run_baseline` ("fedavg", ``backend="loop"``) and
  :func:`fedlib.dtfl.reference.run_literal_baseline` (cut 8), the same way;
- ``dtfl_stacked`` / ``fedavg_stacked``: the same engine calls with ``backend="stacked"`` (per-client state
  stacked ``[K, ...]``, one batched call per unit for all clients; :mod:`fedlib.split.stacked`).

Both sides compute the same DTFL round (Algorithm 1 with the eq. 1 average; the tests check they agree); only
their speed is compared here.

The clients sit at fixed tiers 1..7 (``cuts`` below: every tier held, as mid-run in Table 3). Each rate is
samples trained per second of wall time of one call (the model build and first evaluation included, so rounds
>= 3 keep the fixed cost small); one process, torch's thread setting unchanged. This is a command, not a test:
speed depends on the machine, so no threshold is asserted anywhere.
"""
from __future__ import annotations

import time

import numpy as np
import torch

from ..core.seeding import resolve_device
from ..core.validate import check_float, check_int
from .baselines import run_baseline
from .reference import run_literal, run_literal_baseline
from .training import DtflConfig, run_dtfl

#: tiers of the 10 clients (cut layer = tier, 1..7), held every round
CUTS = (1, 2, 3, 4, 5, 6, 7, 1, 4, 7)


def _timed(fn, device: torch.device, peaks: dict | None = None, key: str = "") -> float:
    """Wall seconds of ``fn()`` (CUDA synchronised before and after); on CUDA, ``peaks[key]`` = the call's peak
    allocated GPU memory (MiB)."""
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(device)
    t = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
        if peaks is not None:
            peaks[key] = round(torch.cuda.max_memory_allocated(device) / 2 ** 20, 1)
    return time.perf_counter() - t


def bench_dtfl(rounds: int = 3, loop_rounds: int | None = None, device: str = "auto", data=None,
               width: float = 0.25) -> dict:
    """Samples/s of DTFL and FedAvg, engine and literal loop, on one device; returns the CLI's JSON-able dict.

    Args:
        rounds: rounds per engine call (>= 1); loop_rounds: rounds per loop call (default ``rounds``).
        device: ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``. data: a :class:`fedlib.data.TensorDataset`
            (default: real Fashion-MNIST). width: ResNet-20's width multiplier (0.25: the converged profile's;
            1: the paper's full width).

    Returns:
        ``{"dtfl_engine_samples_per_s", "dtfl_loop_samples_per_s", "fedavg_engine_samples_per_s",
        "fedavg_loop_samples_per_s", "dtfl_speedup", "fedavg_speedup", "device", "threads", "rounds", ...}``;
        samples/s = 6,000 x rounds / wall seconds of the call. On CUDA also ``peak_gpu_mib`` (MiB per variant:
        the call's peak allocated memory) and ``gpu`` (the card's name).

    Raises:
        ValueError / ParameterTypeError: rounds < 1; width not in (0, 4]; unknown device or CUDA asked for but
        absent.
    """
    rounds = check_int("rounds", rounds, 1)
    loop_rounds = rounds if loop_rounds is None else check_int("loop_rounds", loop_rounds, 1)
    width = check_float("width", width, 0, 4, low_open=True)
    dev = resolve_device(device)
    if data is None:
        from ..data import load_fashion_mnist
        data = load_fashion_mnist()
    cfg = DtflConfig(model="resnet20", width=width, num_clients=10, batch_size=50, lr=3e-3, train_subset=6000,
                     test_subset=2000, eval_every=1, seed=0)
    cuts = lambda r: np.tile(np.array(CUTS), (r, 1))             # noqa: E731  [R, K] tiers
    warm = DtflConfig(**{**cfg.to_dict(), "train_subset": 500, "test_subset": 100})
    run_dtfl(warm, data, cuts(1), str(dev), backend="loop")      # warm-up: allocator, kernel selection
    run_literal(warm, data, cuts(1), device=str(dev))
    run_dtfl(warm, data, cuts(1), str(dev), backend="stacked")
    calls = {
        "dtfl_engine": (lambda: run_dtfl(cfg, data, cuts(rounds), str(dev), backend="loop"), rounds),
        "dtfl_loop": (lambda: run_literal(cfg, data, cuts(loop_rounds), device=str(dev)), loop_rounds),
        "fedavg_engine": (lambda: run_baseline(cfg, data, "fedavg", rounds, device=str(dev), backend="loop"),
                          rounds),
        "fedavg_loop": (lambda: run_literal_baseline(cfg, data, 8, loop_rounds, device=str(dev)), loop_rounds),
        "dtfl_stacked": (lambda: run_dtfl(cfg, data, cuts(rounds), str(dev), backend="stacked"), rounds),
        "fedavg_stacked": (lambda: run_baseline(cfg, data, "fedavg", rounds, device=str(dev), backend="stacked"),
                           rounds),
    }
    peaks: dict = {}
    secs = {k: _timed(fn, dev, peaks, k) / r for k, (fn, r) in calls.items()}
    out = {f"{k}_samples_per_s": round(cfg.train_subset / s, 1) for k, s in secs.items()}
    out |= {"dtfl_speedup": round(secs["dtfl_loop"] / secs["dtfl_engine"], 3),
            "fedavg_speedup": round(secs["fedavg_loop"] / secs["fedavg_engine"], 3),
            "dtfl_stacked_speedup": round(secs["dtfl_loop"] / secs["dtfl_stacked"], 3),
            "fedavg_stacked_speedup": round(secs["fedavg_loop"] / secs["fedavg_stacked"], 3),
            "device": str(dev), "threads": torch.get_num_threads(), "rounds": rounds, "loop_rounds": loop_rounds,
            "width": width, "torch": torch.__version__}
    if dev.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(dev)
        out["peak_gpu_mib"] = peaks
    return out
