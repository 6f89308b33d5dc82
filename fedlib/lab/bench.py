"""Benchmarks (commands, not tests): ``python -m fedlib.lab.bench {hist,hasfl,sfl,dtfl,dtfl_sweep,explore}`` prints one JSON line.

``sfl``: one split-training round by the per-client loop, the engine (its loop backend) and its stacked backend
(:func:`fedlib.lab.split.bench.bench_sfl`; no roofline: its docstring says why); ``dtfl``: DTFL and FedAvg by the same
three, on the converged profile's workload (:func:`fedlib.lab.dtfl.bench.bench_dtfl`). Output names:
``per_client_loop``, ``engine_loop_backend``, ``stacked_backend``.

``explore``: explorer updates as a reader waits for them, display included, against the speed targets
(:func:`bench_explore`).

``dtfl_sweep``: runs per hour of a sweep of DTFL seeds, one run at a time against batched as rows of one stacked
call (:func:`fedlib.lab.dtfl.bench.bench_dtfl_sweep`; ``--runs``, ``--rounds``, ``--width``).

``hasfl``: see :func:`bench_hasfl` (keys ``solve_s_n20``, ``solve_s_n200``, ``bcd_iters_n20``,
``gap_vs_exhaustive``).

``hist``: client-steps/s on the HIST paper workload (60 clients, MLP 784-300-10, batch 32, H = 40, real
Fashion-MNIST) of

- (a) ``per_client_loop``: the per-client loop, the literal per-client ``nn.Module`` + ``torch.optim.SGD`` loop
  (``iterate_reference``, ``tests/reference_hist.py``: run from the repository root), HFedAvg;
- (b) ``engine_hfedavg``: the batched engine (:func:`fedlib.hist.iterate_hist`), HFedAvg;
- (c) ``engine_hist_n3``: the batched engine, HIST with N = 3;

each timed call one global round of E steps (edge aggregations included; evaluation excluded), each variant run
once untimed, then ``--repeats`` times interleaved (:mod:`fedlib.lab.benchtime`: median, interquartile range and
min-max of each rate and of each ratio within a repeat), plus the roofline: client-steps/s at the machine's
measured large-matmul GFLOP/s (:func:`fedlib.lab.benchtime.matmul_gflops`) counting only the FLOPs a step needs
(:func:`fedlib.hist.step_flops`). A step's counted work is float32 matmuls (two forward, three backward), the
same operation as the probe at a size where it runs near the machine's peak, so the probe serves as the ceiling
here (measured fractions 0.62-0.75, ``notebooks/hist/RUN_LOG.md``); a fraction above 1 would say the probe
underestimates the machine. ``bench sfl`` reports no roofline (:mod:`fedlib.lab.split.bench` says why).

Every benchmark's output records the machine it ran on (``device``, ``threads``, ``cpus``, ``load_1min``, ...).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import torch

from fedlib import __version__
from fedlib.lab.benchtime import machine, matmul_gflops, rate_spread, ratio_spread, time_interleaved
from fedlib.lab.cli import ArgumentParser, positive_int

#: ``bench hist``: output name -> what it times
HIST_BASELINES = {"per_client_loop": "the per-client loop: literal nn.Module + torch.optim.SGD per client "
                                     "(tests/reference_hist.py: iterate_reference), HFedAvg",
                  "engine_hfedavg": "the batched engine (fedlib.hist.iterate_hist), HFedAvg",
                  "engine_hist_n3": "the batched engine (fedlib.hist.iterate_hist), HIST with N = 3"}


def bench_hist(repeats: int = 3, loop_steps: int = 40, engine_steps: int = 200, device: str = "auto",
               data=None) -> dict:
    """Measure (a), (b), (c) and the rooflines; returns the JSON-able dict printed by the CLI.

    Returns:
        ``{"bench": "hist", "baselines": HIST_BASELINES, "client_steps_per_s": {name: {"median", "iqr": [p25,
        p75], "min_max": [min, max], "n"}}, "engine_hfedavg_vs_per_client_loop", "engine_hist_n3_vs_engine_hfedavg"
        (the same statistics of the ratio within each repeat), "roofline_client_steps_per_s": {"engine_hfedavg",
        "engine_hist_n3"}, "frac_of_roofline" (median / roofline), "matmul_gflops", "repeats", device and machine
        keys}``.
    """
    from fedlib.hist import HistConfig, iterate_hist, prepare, step_flops
    from fedlib.lab.split.bench import from_tests
    iterate_reference = from_tests("reference_hist").iterate_reference

    if data is None:
        from fedlib.data import load_fashion_mnist
        data = load_fashion_mnist()
    common = dict(num_clients=60, hidden=300, batch_size=32, H=40, global_rounds=1)
    loop = prepare(HistConfig(method="hfedavg", num_cells=3, E=loop_steps, **common), data, device)
    hfedavg = prepare(HistConfig(method="hfedavg", num_cells=3, E=engine_steps, **common), data, device)
    hist3 = prepare(HistConfig(method="hist", num_cells=3, E=engine_steps, **common), data, device)
    gflops = matmul_gflops(device=hfedavg.device)

    def round_of(iterate, prepared):
        def call():
            for _ in iterate(prepared):
                pass
        return call

    times, _ = time_interleaved({"per_client_loop": round_of(iterate_reference, loop),
                                 "engine_hfedavg": round_of(iterate_hist, hfedavg),
                                 "engine_hist_n3": round_of(iterate_hist, hist3)}, repeats, warmup=1,
                                device=hfedavg.device)
    work = {"per_client_loop": loop_steps * 60, "engine_hfedavg": engine_steps * 60, "engine_hist_n3": engine_steps * 60}
    rates = {k: rate_spread(m, work[k]) for k, m in times.items()}
    roof = {"engine_hfedavg": gflops * 1e9 / step_flops(32, 784, 300, 10),
            "engine_hist_n3": gflops * 1e9 / step_flops(32, 784, 100, 10)}
    return {"bench": "hist", "baselines": HIST_BASELINES, "client_steps_per_s": rates,
            "engine_hfedavg_vs_per_client_loop": ratio_spread(times["engine_hfedavg"], work["engine_hfedavg"],
                                                              times["per_client_loop"], work["per_client_loop"]),
            "engine_hist_n3_vs_engine_hfedavg": ratio_spread(times["engine_hist_n3"], work["engine_hist_n3"],
                                                             times["engine_hfedavg"], work["engine_hfedavg"]),
            "roofline_client_steps_per_s": {k: round(v, 1) for k, v in roof.items()},
            "frac_of_roofline": {k: round(rates[k]["median"] / v, 3) for k, v in roof.items()},
            "matmul_gflops": round(gflops, 1), "repeats": repeats, **machine(hfedavg.device)}


def bench_hasfl(seed: int = 0, random_set: int = 60) -> dict:
    """HASFL optimiser wall time (Algorithm 2, all starts + polish) on Table I's system with N = 20, 200 and 1000
    (VGG-16 at CIFAR's 3x32x32, γ = 5e-4, I = 15, ε 10 % above the floor), and the relative gap of BCD to
    exhaustive search on small instances (N = 3, cuts {1, 4, 7, 13}, b <= 64; I = 1, 5 and 15), solved first
    (so the timed solves do not include cvxpy's first-call set-up); ``fail_rate``, ``gap_p95``, ``gap_max`` over
    ``random_set`` seeded instances of :func:`tests.hasfl_instances.random_instance` (``tests/hasfl_instances.py``, run from the repository root) (N 2-4) that exhaustive
    search finds feasible.

    The constants come from a short pilot of VGG-16 on real Fashion-MNIST (CIFAR is not available here).
    """
    from dataclasses import replace


    from fedlib.core import numpy_rng
    from fedlib.data import load_fashion_mnist
    from fedlib.hasfl import TABLE_I, HasflConstants, Problem, bcd, eps_with_slack, exhaustive, pilot_constants, sample_system
    from fedlib.lab.hasfl.runs.experiments import make_problem
    from fedlib.lab.split.bench import from_tests
    from fedlib.split import model_profile, vgg16

    random_instance = from_tests("hasfl_instances").random_instance   # tests/hasfl_instances.py: run from the repository root

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
    # a seeded random set (tests/hasfl_instances.py): failure rate and gap distribution against exhaustive search
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


#: what each benchmark measures, and its targets (``--help``)
WHAT = """what each measures (medians over --repeats; speed targets are the bench's, never a test's):
  explore     each paper's explorer update as a reader waits for it: one control moved from the defaults to a
              state not computed before; update_s = compute + views + the display of what changed, compute_s its
              compute part. Targets on 2 idle cores, one torch thread (the notebooks' kernel): HASFL <= 2 s
              (a new system: BCD, the benchmarks, the timeline) and <= 5 s at the sliders' slow corners (N = 50,
              N = 100, I = 1); DTFL and HIST <= 0.5 s. meets_target says whether each met them; load_1min_start
              and load_1min the machine's load (a loaded machine times slower: rerun idle before reading a miss).
  hist        client-steps/s on HIST's paper workload (60 clients, MLP 784-300-10, batch 32, H = 40).
  hasfl       HASFL's solve time at N = 20 and N = 200, BCD iterations, the gap to exhaustive search.
  sfl         one split-training round: the per-client loop, the engine's loop backend, its stacked backend.
  dtfl        DTFL and FedAvg rounds by the same three, on the converged profile's workload.
  dtfl_sweep  runs per hour of a sweep of DTFL seeds, one at a time against batched rows of one stacked call."""


def bench_explore(repeats: int = 3) -> dict:
    """Updates of each paper's explorer as a reader waits for them (:func:`fedlib.lab.explore.bench`: each moves one
    control from the defaults to a state not computed before; ``update_s`` = compute, views and the display of what
    changed, ``compute_s`` its compute part; medians over ``repeats``), against the targets: HASFL <= 2 s (a new
    system each time: BCD, the benchmarks, the timeline; the converged plan's constants, N = 20, one draw) and
    <= 5 s at the sliders' slow corners (``corners_update_s``: N = 50, N = 100, I = 1, one timing each), with
    ``timeline_benchmark_update_s`` a move that changes no problem (the timeline alone redrawn); DTFL (new clients
    each time: the draw's seed; K = 10, ResNet-20 at width 0.5, M = 7) and HIST (a new per-client budget each time,
    the quick profile's store; ``bound``: whether its pilot record was there) <= 0.5 s; on 2 cores, on one torch
    thread as the notebooks' kernel runs. ``load_1min``: the machine's load average when the timing ended (a loaded
    machine times slower), ``load_1min_start`` when it began."""
    import os

    import matplotlib

    from fedlib.lab.dtfl import explore as dtfl_explore
    from fedlib.lab.explore import bench
    from fedlib.lab.hasfl import explore as hasfl_explore
    from fedlib.lab.hist import explore as hist_explore
    from fedlib.lab.parallel import set_threads
    from fedlib.lab.paths import use_profile
    matplotlib.use("Agg")
    set_threads(1)                      # as the notebooks' kernel runs (fedlib.lab.jupyter_setup.KERNEL_ENV)
    out = {"fedlib": __version__, "threads": torch.get_num_threads(), "cpus": os.cpu_count(),
           "load_1min_start": round(os.getloadavg()[0], 2)}
    use_profile("converged")
    ex = hasfl_explore.explorer(hasfl_explore.setup("converged"), draws=1)       # the committed store's pilot
    out["hasfl"] = dict(bench(ex, repeats, [{"system_seed": 1 + k} for k in range(repeats)]),
                        N=ex.defaults()["num_devices"], target_update_s=2.0, moved="system_seed", target_corners_s=5.0)
    out["hasfl"]["corners_update_s"] = {name: bench(ex, 1, [values])["update_s"] for name, values in
                                        (("N=50", {"num_devices": 50}), ("N=100", {"num_devices": 100}),
                                         ("I=1", {"interval": 1}))}
    out["hasfl"]["timeline_benchmark_update_s"] = bench(ex, 1, [{"timeline_benchmark": "RBS+HAMS"}])["update_s"]
    ex = dtfl_explore.explorer()
    out["dtfl"] = dict(bench(ex, repeats, [{"seed": 1 + k} for k in range(repeats)]),
                       K=ex.defaults()["num_clients"], target_update_s=0.5, moved="seed")
    use_profile("quick")
    ex = hist_explore.explorer("quick")
    # a new budget each time (log-spaced, as its slider moves): the rounds, T, the bound and the figure change
    moves = [{"comm_budget_L0": round(30.0 * 1.25 ** (k + 1), 2)} for k in range(repeats)]
    out["hist"] = dict(bench(ex, repeats, moves), target_update_s=0.5, moved="comm_budget_L0",
                       bound=ex.evaluate()[0]["bound"] is not None)
    for res in (out["hasfl"], out["dtfl"], out["hist"]):
        res["meets_target"] = res["update_s"] <= res["target_update_s"] and all(
            v <= res.get("target_corners_s", float("inf")) for v in res.get("corners_update_s", {}).values())
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


def _variants(text: str) -> tuple:
    """``--variants``: comma-separated names of :data:`fedlib.lab.dtfl.bench.EXTRA`, each once."""
    from fedlib.lab.dtfl.bench import EXTRA
    names = tuple(v.strip() for v in text.split(",") if v.strip())
    bad = [v for v in names if v not in EXTRA]
    if not names or bad or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"must be distinct names among {', '.join(EXTRA)}, comma-separated; got {text!r}")
    return names


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m fedlib.lab.bench {hist,hasfl,sfl,dtfl,dtfl_sweep,explore}`` prints one JSON line (``--device`` for hist,
    sfl, dtfl and dtfl_sweep; ``--repeats`` for all but hasfl; ``--rounds`` for dtfl and dtfl_sweep; ``--variants``
    for dtfl; ``--runs`` for dtfl_sweep; ``--width`` for sfl, dtfl and dtfl_sweep). Arguments are checked before any work: a bad one exits 2 with argparse's message naming it."""
    parser = ArgumentParser(prog="python -m fedlib.lab.bench", description="fedlib benchmarks; prints one JSON line.",
                            formatter_class=argparse.RawDescriptionHelpFormatter, epilog=WHAT)
    parser.add_argument("which", choices=["hist", "hasfl", "sfl", "dtfl", "dtfl_sweep", "explore"])
    parser.add_argument("--repeats", type=positive_int, default=None,
                        help="timed repeats (>= 1; hist, sfl, dtfl, explore; default 3)")
    parser.add_argument("--device", type=_device, default=None,
                        help="auto, cpu, cuda or cuda:N (hist, sfl, dtfl; default auto)")
    parser.add_argument("--rounds", type=positive_int, default=None, help="rounds per timing (>= 1; dtfl; default 3)")
    parser.add_argument("--width", type=_width, default=None,
                        help="width multiplier in (0, 4] (dtfl: ResNet-20's, default 0.25, the converged "
                             "profile's, 1: the paper's; sfl: VGG-16's, default both 0.25 and 1)")
    parser.add_argument("--variants", type=_variants, default=None,
                        help="comma-separated stacked variants timed beside the three (dtfl): "
                             "stacked_cl, stacked_compile, stacked_cl_compile, stacked_graphs")
    parser.add_argument("--runs", type=positive_int, default=None,
                        help="runs of the sweep (>= 2; dtfl_sweep; default 3)")
    args = parser.parse_args(argv)
    takes = {"repeats": ("hist", "sfl", "dtfl", "dtfl_sweep", "explore"), "device": ("hist", "sfl", "dtfl", "dtfl_sweep"),
             "rounds": ("dtfl", "dtfl_sweep"), "width": ("sfl", "dtfl", "dtfl_sweep"), "variants": ("dtfl",),
             "runs": ("dtfl_sweep",)}
    for name, which in takes.items():
        if getattr(args, name) is not None and args.which not in which:
            parser.error(f"argument --{name}: applies to {', '.join(which)} only, not {args.which}")
    args.repeats, args.rounds = args.repeats or 3, args.rounds or 3
    args.device = args.device or "auto"
    if args.which == "dtfl_sweep" and args.runs is not None and args.runs < 2:
        parser.error(f"argument --runs: must be an integer >= 2, got {args.runs}")
    try:
        from fedlib.core.seeding import resolve_device
        resolve_device(args.device)                     # CUDA asked for on a machine without: before any work
    except ValueError as exc:
        parser.error(f"argument --device: {exc}")
    if args.which == "explore":
        print(json.dumps(bench_explore(args.repeats)))
    elif args.which == "sfl":
        from fedlib.lab.split.bench import bench_sfl
        widths = (args.width,) if args.width is not None else (0.25, 1.0)
        print(json.dumps(bench_sfl(widths=widths, repeats=args.repeats, device=args.device)))
    elif args.which == "dtfl":
        from fedlib.lab.dtfl.bench import bench_dtfl
        print(json.dumps(bench_dtfl(args.rounds, device=args.device, width=args.width or 0.25,
                                    repeats=args.repeats, variants=args.variants or ())))
    elif args.which == "dtfl_sweep":
        from fedlib.lab.dtfl.bench import bench_dtfl_sweep
        print(json.dumps(bench_dtfl_sweep(args.runs or 3, args.rounds, device=args.device, width=args.width or 0.25,
                                          repeats=args.repeats)))
    else:
        print(json.dumps(bench_hist(args.repeats, device=args.device) if args.which == "hist" else bench_hasfl()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
