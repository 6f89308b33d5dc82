"""Benchmarks (commands, not tests): ``python -m fedlib.bench hist`` prints one JSON line.

``hist``: client-steps/s on the HIST paper workload (60 clients, MLP 784-300-10, batch 32, H = 40, real
Fashion-MNIST) of

- (a) ``loop``: the literal per-client ``nn.Module`` + ``torch.optim.SGD`` loop (:func:`fedlib.hist.iterate_reference`),
  HFedAvg;
- (b) ``hfedavg``: the batched engine (:func:`fedlib.hist.iterate_hist`), HFedAvg;
- (c) ``hist_n3``: the batched engine, HIST with N = 3;

measured interleaved in one process (median of ``--repeats`` rounds), plus the roofline: client-steps/s at
the machine's measured large-matmul GFLOP/s counting only the FLOPs a step needs
(:func:`fedlib.hist.step_flops`). Each timed call runs one global round of E steps (edge aggregations
included; evaluation excluded).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

from . import __version__


def matmul_gflops(n: int = 2048, reps: int = 10, device: torch.device | str = "cpu") -> float:
    """Best-of-3 GFLOP/s of an ``n x n`` float32 matmul (2n³ FLOPs each) on ``device``."""
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    a @ b
    best = 0.0
    for _ in range(3):
        if a.is_cuda:
            torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            a @ b
        if a.is_cuda:
            torch.cuda.synchronize()
        best = max(best, 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9)
    return best


def _steps_per_s(iterate, prepared, steps: int, clients: int) -> float:
    if prepared.device.type == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in iterate(prepared):
        pass
    if prepared.device.type == "cuda":
        torch.cuda.synchronize()
    return steps * clients / (time.perf_counter() - t)


def bench_hist(repeats: int = 3, loop_steps: int = 40, engine_steps: int = 200, device: str = "auto") -> dict:
    """Measure (a), (b), (c) and the rooflines; returns the JSON-able dict printed by the CLI."""
    from .data import load_fashion_mnist
    from .hist import HistConfig, iterate_hist, iterate_reference, prepare, step_flops

    ds = load_fashion_mnist()
    common = dict(num_clients=60, hidden=300, batch_size=32, H=40, global_rounds=1)
    loop = prepare(HistConfig(method="hfedavg", num_cells=3, E=loop_steps, **common), ds, device)
    hfedavg = prepare(HistConfig(method="hfedavg", num_cells=3, E=engine_steps, **common), ds, device)
    hist3 = prepare(HistConfig(method="hist", num_cells=3, E=engine_steps, **common), ds, device)
    gflops = matmul_gflops(device=hfedavg.device)
    results: dict[str, list[float]] = {"loop": [], "hfedavg": [], "hist_n3": []}
    _steps_per_s(iterate_hist, hist3, engine_steps, 60)  # warm-up
    for _ in range(repeats):
        results["loop"].append(_steps_per_s(iterate_reference, loop, loop_steps, 60))
        results["hfedavg"].append(_steps_per_s(iterate_hist, hfedavg, engine_steps, 60))
        results["hist_n3"].append(_steps_per_s(iterate_hist, hist3, engine_steps, 60))
    med = {k: statistics.median(v) for k, v in results.items()}
    roof_full = gflops * 1e9 / step_flops(32, 784, 300, 10)
    roof_n3 = gflops * 1e9 / step_flops(32, 784, 100, 10)
    return {"bench": "hist", "loop_steps_per_s": round(med["loop"], 1),
            "hfedavg_steps_per_s": round(med["hfedavg"], 1), "hist_n3_steps_per_s": round(med["hist_n3"], 1),
            "roofline_hfedavg_steps_per_s": round(roof_full, 1), "roofline_hist_n3_steps_per_s": round(roof_n3, 1),
            "matmul_gflops": round(gflops, 1),
            "hfedavg_vs_loop": round(med["hfedavg"] / med["loop"], 2),
            "hist_n3_vs_hfedavg": round(med["hist_n3"] / med["hfedavg"], 2),
            "hfedavg_frac_of_roofline": round(med["hfedavg"] / roof_full, 3),
            "hist_n3_frac_of_roofline": round(med["hist_n3"] / roof_n3, 3),
            "device": str(hfedavg.device), "threads": torch.get_num_threads(), "torch": torch.__version__,
            "fedlib": __version__, "repeats": repeats}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="fedlib benchmarks; prints one JSON line.")
    parser.add_argument("which", choices=["hist"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args(argv)
    print(json.dumps(bench_hist(args.repeats, device=args.device)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
