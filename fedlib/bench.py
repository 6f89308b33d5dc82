"""Benchmarks (commands, not tests): ``python -m fedlib.bench {hist,hasfl,sfl,dtfl}`` prints one JSON line.

``sfl``: the split engine against its per-device loop (:func:`fedlib.split.bench.bench_sfl`); ``dtfl``: DTFL and
FedAvg, engine against literal loop, on the converged profile's workload (:func:`fedlib.dtfl.bench.bench_dtfl`).

``explore``: one update of each explorer against its speed target (:func:`bench_explore`).

``hasfl``: see :func:`bench_hasfl` (keys ``solve_s_n20``, ``solve_s_n200``, ``bcd_iters_n20``,
``gap_vs_exhaustive``).

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

import numpy as np
import torch

from . import __version__
from .core.cli import ArgumentParser, positive_int
from .core.roofline import matmul_gflops


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


def bench_hasfl(seed: int = 0, random_set: int = 60) -> dict:
    """HASFL optimiser wall time (Algorithm 2, all starts + polish) on Table I's system with N = 20, 200 and 1000
    (VGG-16 at CIFAR's 3x32x32, γ = 5e-4, I = 15, ε 10 % above the floor), and the relative gap of BCD to
    exhaustive search on small instances (N = 3, cuts {1, 4, 7, 13}, b <= 64; I = 1, 5 and 15), solved first
    (so the timed solves do not include cvxpy's first-call set-up); ``fail_rate``, ``gap_p95``, ``gap_max`` over
    ``random_set`` seeded instances of :func:`fedlib.hasfl.optimiser.instances.random_instance` (N 2-4) that exhaustive
    search finds feasible.

    The constants come from a short pilot of VGG-16 on real Fashion-MNIST (CIFAR is not available here).
    """
    from dataclasses import replace


    from .core import numpy_rng
    from .data import load_fashion_mnist
    from .hasfl import TABLE_I, HasflConstants, Problem, bcd, eps_with_slack, exhaustive, pilot_constants, sample_system
    from .hasfl.runs.experiments import make_problem
    from .hasfl.optimiser.instances import random_instance
    from .split import model_profile, vgg16

    ds = load_fashion_mnist()
    torch.manual_seed(seed)
    rec = pilot_constants(vgg16(1, 28, 10), ds.x_train, ds.y_train, pilot_steps=1, lr=5e-4, batch_size=16,
                          num_batches=4, power_iters=5, seed=seed)
    consts = HasflConstants.from_dict(rec["constants"])
    out = {"bench": "hasfl"}
    gaps = []
    profile = model_profile("vgg16")
    for k, interval in enumerate((1, 5, 15)):
        devices, servers = sample_system(replace(TABLE_I, num_devices=3), numpy_rng(seed + k, "system"))
        small = Problem(profile, devices, servers, consts, 5e-4, eps_with_slack(consts, 5e-4, interval, 3, 0.5),
                        interval, (1, 4, 7, 13), max_batch=64)
        gaps.append(bcd(small).theta / exhaustive(small, b_max=64).theta - 1)
    for n in (20, 200, 1000):
        problem = make_problem("vgg16", "cifar10", consts, n, seed, 5e-4, 15, 0.1)
        t = time.perf_counter()
        dec = bcd(problem)
        out[f"solve_s_n{n}"] = round(time.perf_counter() - t, 3)
        out[f"bcd_iters_n{n}"] = dec.info["bcd_iters"]
        out[f"theta_n{n}"] = round(dec.theta, 3)
    out["gap_vs_exhaustive"] = round(float(max(gaps)), 6)
    out["gaps_per_instance"] = [round(float(g), 6) for g in gaps]
    # a seeded random set (fedlib.hasfl.optimiser.instances): failure rate and gap distribution against exhaustive search
    fails, rand_gaps, solved = 0, [], 0
    for s in range(random_set):
        nd = 2 + s % 3
        inst = random_instance(10_000 + s, num_devices=(nd, nd), num_cuts=(4, 8) if nd == 2 else (4, 5),
                               b_max=(32, 64) if nd == 2 else (16, 24) if nd == 3 else (8, 12))
        try:
            ref = exhaustive(inst, b_max=inst.max_batch).theta
        except ValueError:
            continue
        solved += 1
        try:
            rand_gaps.append(bcd(inst).theta / ref - 1)
        except ValueError:
            fails += 1
    out["random_instances"] = solved
    out["fail_rate"] = round(fails / max(solved, 1), 4)
    out["gap_p95"] = round(float(np.percentile(rand_gaps, 95)), 6) if rand_gaps else None
    out["gap_max"] = round(float(max(rand_gaps)), 6) if rand_gaps else None
    out.update(fedlib=__version__, threads=torch.get_num_threads(), pilot_s=round(rec["elapsed_s"], 1))
    return out


def bench_explore(repeats: int = 3) -> dict:
    """One update of each paper's explorer at its defaults (:func:`fedlib.core.explore.bench`: compute alone, and
    compute + views + PNG rendering, medians over ``repeats``), against the targets: HASFL <= 2 s (one decision:
    BCD, the benchmarks, the timeline), DTFL and HIST <= 0.5 s, on 2 cores, on one torch thread as the notebooks'
    kernel runs. ``load_1min``: the machine's load average when the timing ended (a loaded machine times slower)."""
    import os

    from .core.parallel import set_threads
    from .dtfl import explore as dtfl_explore
    from .hasfl import explore as hasfl_explore
    from .hist import explore as hist_explore
    set_threads(1)                      # as the notebooks' kernel runs (fedlib.core.jupyter_setup.KERNEL_ENV)
    out = {"fedlib": __version__, "threads": torch.get_num_threads(), "cpus": os.cpu_count()}
    for name, mod in (("hasfl", hasfl_explore), ("dtfl", dtfl_explore), ("hist", hist_explore)):
        res = mod.bench_update(repeats=repeats)
        res["meets_target"] = res["update_s"] <= res["target_update_s"]
        out[name] = res
    out["load_1min"] = round(os.getloadavg()[0], 2)
    return out


def _device(text: str) -> str:
    """argparse type: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``."""
    if text in ("auto", "cpu", "cuda") or (text.startswith("cuda:") and text[5:].isdigit()):
        return text
    raise argparse.ArgumentTypeError(f"must be auto, cpu, cuda or cuda:N, got {text!r}")


def _width(text: str) -> float:
    """argparse type: a finite number in (0, 4]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 4], got {text!r}") from None
    if not 0 < value <= 4:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 4], got {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m fedlib.bench {hist,hasfl,sfl,dtfl,explore}`` prints one JSON line (``--device`` for hist,
    sfl and dtfl; ``--repeats`` for hist, sfl and explore; ``--rounds`` and ``--width`` for dtfl). Arguments are checked before any work: a bad one
    exits 2 with argparse's message naming it."""
    parser = ArgumentParser(prog="python -m fedlib.bench", description="fedlib benchmarks; prints one JSON line.")
    parser.add_argument("which", choices=["hist", "hasfl", "sfl", "dtfl", "explore"])
    parser.add_argument("--repeats", type=positive_int, default=None,
                        help="timed repeats (>= 1; hist, sfl, explore; default 3)")
    parser.add_argument("--device", type=_device, default=None,
                        help="auto, cpu, cuda or cuda:N (hist, sfl, dtfl; default auto)")
    parser.add_argument("--rounds", type=positive_int, default=None, help="rounds per timing (>= 1; dtfl; default 3)")
    parser.add_argument("--width", type=_width, default=None,
                        help="ResNet-20 width multiplier in (0, 4] (dtfl; default 0.25, the converged profile's; "
                             "1: the paper's)")
    args = parser.parse_args(argv)
    takes = {"repeats": ("hist", "sfl", "explore"), "device": ("hist", "sfl", "dtfl"), "rounds": ("dtfl",), "width": ("dtfl",)}
    for name, which in takes.items():
        if getattr(args, name) is not None and args.which not in which:
            parser.error(f"argument --{name}: applies to {', '.join(which)} only, not {args.which}")
    args.repeats, args.rounds = args.repeats or 3, args.rounds or 3
    args.device = args.device or "auto"
    if args.which == "explore":
        print(json.dumps(bench_explore(args.repeats)))
    elif args.which == "sfl":
        from .split.bench import bench_sfl
        print(json.dumps(bench_sfl(repeats=args.repeats, device=args.device)))
    elif args.which == "dtfl":
        from .dtfl.bench import bench_dtfl
        print(json.dumps(bench_dtfl(args.rounds, device=args.device, width=args.width or 0.25)))
    else:
        print(json.dumps(bench_hist(args.repeats, device=args.device) if args.which == "hist" else bench_hasfl()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
