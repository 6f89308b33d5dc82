"""Benchmark of DTFL's training (``python -m fedlib.lab.bench dtfl``): samples/s of whole rounds on the converged
profile's workload (ResNet-20 at width 0.25, or 1 with ``--width 1``, K = 10 clients, batch 50, Adam lr 3e-3,
the first 6,000 training samples of real Fashion-MNIST, IID; one evaluation of the global model on 2,000 test
images per round), for DTFL and for FedAvg, each by three implementations (output names in brackets):

- the per-client loop (``per_client_loop``): the tests' literal references (``tests/reference_dtfl.py``, so the
  benchmark runs from the repository root): ``run_literal`` for DTFL, ``run_literal_baseline`` (cut 8) for FedAvg
  (per-client ``nn.Module`` s and ``torch.optim.Adam`` s, clients one after another: the literal Algorithm 1);
- the engine, its loop backend (``engine_loop_backend``): :func:`fedlib.dtfl.run_dtfl` /
  :func:`fedlib.dtfl.run_baseline` (``"fedavg"``) with ``backend="loop"`` (the shared split engine, local loss at
  each client's tier; per-client tensors, clients one after another);
- the engine, its stacked backend (``stacked_backend``): the same calls with ``backend="stacked"`` (per-client
  state stacked ``[K, ...]``, one batched call per unit for all clients; :mod:`fedlib.split.stacked`).

All three compute the same round (Algorithm 1 with the eq. 1 average; the tests check they agree); only their
speed is compared here.

The clients sit at fixed tiers 1..7 (``cuts`` below: every tier held, as mid-run in Table 3). Timing
(:mod:`fedlib.lab.benchtime`): each variant is first run untimed for one round of the same workload (warm-up:
allocator, kernel selection), then ``repeats`` timed calls of ``rounds`` rounds each, the six variants interleaved,
CUDA synchronised around each call. A rate is samples trained per second of one call (the model build and first
evaluation included, so rounds >= 3 keep that fixed cost small), reported as the median, interquartile range and
min-max over the repeats; a speed-up over the per-client loop is the ratio of rates within each repeat, reported
the same way. One process, torch's thread setting unchanged. This is a command, not a test: speed depends on the
machine, so no threshold is asserted anywhere.
"""
from __future__ import annotations

import numpy as np

import time

from fedlib.lab.benchtime import machine, rate_spread, ratio_spread, time_interleaved
from fedlib.core.seeding import resolve_device
from fedlib.core.validate import check_choice, check_float, check_int, check_list
from fedlib.split.backends import ALL_BACKENDS
from fedlib.dtfl.baselines import run_baseline
from fedlib.dtfl.run import run_dtfl
from fedlib.dtfl.training import DtflConfig
from fedlib.lab.split.bench import from_tests

#: tiers of the 10 clients (cut layer = tier, 1..7), held every round
CUTS = (1, 2, 3, 4, 5, 6, 7, 1, 4, 7)

#: output name -> what it times (printed with every result)
BASELINES = {"per_client_loop": "the per-client loop: the literal Algorithm 1 (tests/reference_dtfl.py: run_literal; "
                                "FedAvg: run_literal_baseline), clients one after another",
             "engine_loop_backend": "the engine, its loop backend (run_dtfl / run_baseline, backend='loop')",
             "stacked_backend": "the engine, its stacked backend (run_dtfl / run_baseline, backend='stacked')"}
#: ``variants``: backend name -> what it times
VARIANTS = {"stacked_cl": "the stacked backend, channels-last grouped convolutions (backend='stacked_cl')",
            "stacked_compile": "the stacked backend, each grouped unit through torch.compile (backend='stacked_compile')",
            "stacked_cl_compile": "the stacked backend, channels-last and torch.compile (backend='stacked_cl_compile')",
            "stacked_graphs": "the stacked backend, torch.compile mode 'reduce-overhead': CUDA graphs where the "
                              "compiled graph allows (backend='stacked_graphs')"}
#: the variants ``bench_dtfl`` accepts
EXTRA = tuple(b for b in ALL_BACKENDS if b not in ("loop", "stacked"))


def _workload(width: float, train_subset: int, test_subset: int, device: str, data, seeds) -> tuple:
    """Both benchmarks' workload: ``(device, data, cfgs)``, the resolved torch device, ``data`` (default: real
    Fashion-MNIST) and one :class:`fedlib.dtfl.DtflConfig` per seed of ``seeds`` (ResNet-20 at ``width``, K = 10,
    batch 50, Adam lr 3e-3, ``train_subset`` / ``test_subset`` samples, evaluated every round: the converged profile's).

    Raises:
        ValueError / ParameterTypeError: width not in (0, 4]; a subset < 1; an unknown device or CUDA absent."""
    width = check_float("width", width, 0, 4, low_open=True)
    train_subset = check_int("train_subset", train_subset, 1)
    test_subset = check_int("test_subset", test_subset, 1)
    dev = resolve_device(device)
    if data is None:
        from fedlib.data import load_fashion_mnist
        data = load_fashion_mnist()
    return dev, data, [DtflConfig(model="resnet20", width=width, num_clients=10, batch_size=50, lr=3e-3,
                                  train_subset=train_subset, test_subset=test_subset, eval_every=1, seed=s)
                       for s in seeds]


def bench_dtfl(rounds: int = 3, loop_rounds: int | None = None, device: str = "auto", data=None,
               width: float = 0.25, repeats: int = 3, train_subset: int = 6000, test_subset: int = 2000,
               variants: tuple = ()) -> dict:
    """Samples/s of DTFL and FedAvg, each by the per-client loop and the engine's two backends, on one device;
    returns the CLI's JSON-able dict.

    Args:
        rounds: rounds per engine call (>= 1); loop_rounds: rounds per per-client-loop call (default ``rounds``).
        device: ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``. data: a :class:`fedlib.data.TensorDataset`
            (default: real Fashion-MNIST). width: ResNet-20's width multiplier (0.25: the converged profile's;
            1: the paper's full width). repeats: timed calls per variant (>= 1). train_subset / test_subset:
            training samples and evaluation images (>= 1; defaults: the converged profile's). variants: more
            stacked variants to time beside the three, by backend name (:data:`fedlib.split.backends.ALL_BACKENDS`
            but ``loop`` and ``stacked``: ``stacked_cl``, ``stacked_compile``, ``stacked_cl_compile``,
            ``stacked_graphs``); each is reported under its backend name. A compiled variant compiles in the
            warm-up round (its compile time is reported as ``warmup_s``), and its timed calls reuse the compiled
            units.

    Returns:
        ``{"bench": "dtfl", "baselines": BASELINES, "dtfl": {...}, "fedavg": {...}, "width", "rounds",
        "loop_rounds", "repeats", "train_subset", "device", "threads", "cpus", "torch", "fedlib", "load_1min",
        ["gpu"]}``; per method ``samples_per_s`` (per variant of :data:`BASELINES`: ``{"median", "iqr": [p25,
        p75], "min_max": [min, max], "n"}``, samples/s = train_subset x rounds / wall seconds of a call),
        ``speedup_vs_per_client_loop`` (per engine backend, the same statistics of the ratio within each repeat)
        and, on CUDA, ``peak_gpu_mib`` (MiB per variant: the largest peak allocated memory of its timed calls).

    Raises:
        ValueError / ParameterTypeError: rounds, loop_rounds, repeats, train_subset or test_subset < 1; width not in
        (0, 4]; unknown device or CUDA asked for but absent.
    """
    rounds = check_int("rounds", rounds, 1)
    loop_rounds = rounds if loop_rounds is None else check_int("loop_rounds", loop_rounds, 1)
    repeats = check_int("repeats", repeats, 1)
    variants = tuple(check_list("variants", list(variants), lambda k, v: check_choice(k, v, EXTRA), min_len=0))
    if len(set(variants)) != len(variants):
        raise ValueError(f"variants must not repeat a name, got {list(variants)}")
    dev, data, (cfg,) = _workload(width, train_subset, test_subset, device, data, seeds=(0,))
    cuts = lambda r: np.tile(np.array(CUTS), (r, 1))             # noqa: E731  [R, K] tiers
    literal = from_tests("reference_dtfl")                         # the per-client loop

    engines = {"engine_loop_backend": "loop", "stacked_backend": "stacked", **{v: v for v in variants}}

    def calls_of(r_engine, r_loop):
        return {"dtfl": {"per_client_loop": lambda: literal.run_literal(cfg, data, cuts(r_loop), device=str(dev)),
                         **{name: (lambda b=b: run_dtfl(cfg, data, cuts(r_engine), str(dev), backend=b))
                            for name, b in engines.items()}},
                "fedavg": {"per_client_loop": lambda: literal.run_literal_baseline(cfg, data, 8, r_loop,
                                                                                   device=str(dev)),
                           **{name: (lambda b=b: run_baseline(cfg, data, "fedavg", r_engine, device=str(dev),
                                                              backend=b))
                              for name, b in engines.items()}}}

    warm = {}
    for method, per_method in calls_of(1, 1).items():            # warm-up: one round of each, untimed
        for name, fn in per_method.items():
            t0 = time.perf_counter()
            fn()
            warm[f"{method}.{name}"] = round(time.perf_counter() - t0, 3)
    calls = {(method, k): fn for method, per_method in calls_of(rounds, loop_rounds).items()
             for k, fn in per_method.items()}
    times, peaks = time_interleaved({f"{m}.{k}": fn for (m, k), fn in calls.items()}, repeats, warmup=0, device=dev)
    names = ("per_client_loop", *engines)
    work = {k: cfg.train_subset * (loop_rounds if k == "per_client_loop" else rounds) for k in names}
    out: dict = {"bench": "dtfl", "baselines": {**BASELINES, **{v: VARIANTS[v] for v in variants}}}
    for method in ("dtfl", "fedavg"):
        t = {k: times[f"{method}.{k}"] for k in names}
        res = {"samples_per_s": {k: rate_spread(m, work[k]) for k, m in t.items()},
               "speedup_vs_per_client_loop": {k: ratio_spread(t[k], work[k], t["per_client_loop"],
                                                              work["per_client_loop"])
                                              for k in engines},
               "warmup_s": {k: warm[f"{method}.{k}"] for k in names}}
        if dev.type == "cuda":
            res["peak_gpu_mib"] = {k: peaks[f"{method}.{k}"] for k in names}
        out[method] = res
    out |= {"width": cfg.width, "rounds": rounds, "loop_rounds": loop_rounds, "repeats": repeats,
            "train_subset": cfg.train_subset, "variants": list(variants), **machine(dev)}
    return out


def bench_dtfl_sweep(runs: int = 3, rounds: int = 2, device: str = "auto", data=None, width: float = 0.25,
                     repeats: int = 3, train_subset: int = 6000, test_subset: int = 2000,
                     backend: str = "stacked") -> dict:
    """Runs per hour of a sweep of ``runs`` DTFL seeds (the converged workload of :func:`bench_dtfl`, tiers 1..7,
    ``rounds`` rounds each), trained one run at a time (:func:`fedlib.dtfl.run.run_engine` on ``backend``)
    against all together as rows of one stacked call (``run_batched``, ``tests/dtfl_batched.py``); returns the CLI's
    JSON-able dict: ``runs_per_hour`` ``{"one_at_a_time", "batched"}`` and ``speedup`` (median, IQR, min-max over
    the interleaved repeats, :mod:`fedlib.lab.benchtime`), plus the machine.

    Raises:
        ValueError / ParameterTypeError: runs < 2, rounds / repeats / subsets < 1, width not in (0, 4], an unknown
        device or backend.
    """
    from fedlib.dtfl.run import run_engine
    run_batched = from_tests("dtfl_batched").run_batched
    runs = check_int("runs", runs, 2)
    rounds = check_int("rounds", rounds, 1)
    repeats = check_int("repeats", repeats, 1)
    dev, data, cfgs = _workload(width, train_subset, test_subset, device, data, seeds=range(runs))
    cuts = np.tile(np.array(CUTS), (rounds, 1))
    calls = {"one_at_a_time": lambda: [run_engine(c, data, cuts, "dtfl", str(dev), backend=backend) for c in cfgs],
             "batched": lambda: run_batched(cfgs, data, [cuts] * runs, "dtfl", str(dev), backend=backend)}
    times, peaks = time_interleaved(calls, repeats, warmup=1, device=dev)
    out = {"bench": "dtfl_sweep", "runs": runs, "rounds": rounds, "width": cfgs[0].width, "backend": backend,
           "runs_per_hour": {k: rate_spread(m, runs * 3600) for k, m in times.items()},
           "speedup": ratio_spread(times["batched"], runs, times["one_at_a_time"], runs),
           "repeats": repeats, "train_subset": cfgs[0].train_subset, **machine(dev)}
    if dev.type == "cuda":
        out["peak_gpu_mib"] = peaks
    return out
