"""Benchmark of the split-training engine (``python -m fedlib.lab.bench sfl``): device-samples/s of one HASFL-style
round (N = 20 devices, b = 16, cuts mixed among 3 / 5 / 8 so L_c = 8, VGG-16 with BN on real 28×28×1
Fashion-MNIST, plain SGD) for three implementations of the same round (output names in brackets):

- the per-client loop (``per_client_loop``): the tests' literal per-device reference (``Reference`` of
  ``tests/reference_split.py``, so the benchmark runs from the repository root: per-device modules and
  ``torch.optim.SGD``, devices one after another);
- the engine, its loop backend (``engine_loop_backend``): :func:`fedlib.split.train_round` (per-device loop over
  units 1..L_c, one concatenated pass with per-device BN over the common part; conv weights channels-last);
- the engine, its stacked backend (``stacked_backend``): :func:`fedlib.split.stacked.train_round_stacked` (units
  1..L_c stacked ``[N, ...]``, one batched call per unit for the devices of one batch size, the same common part;
  without its two optional host syncs, ``sync=False, check_labels=False``, as a training loop calls it after
  checking the dataset's labels once);

at width 0.25 and 1 (``--width``: one width of your choice). Timing (:mod:`fedlib.lab.benchtime`): each variant's timed call (``rounds`` rounds on
fixed batches) is run once untimed, then ``repeats`` times, the three interleaved; CUDA is synchronised around
each call. Each rate is reported as its median, interquartile range and min-max over the repeats; each speed-up
over the per-client loop is the ratio within each repeat, reported the same way.

No roofline. An earlier version reported the engine's fraction of a "roofline": samples/s at the machine's
large-matmul GFLOP/s (:func:`fedlib.lab.benchtime.matmul_gflops`) for the convolution and matmul FLOPs that
:func:`fedlib.split.model_profile` counts (``FlopCounterMode``: the direct-convolution count). The fraction came out
above 1 (105.5 % at width 1 on a 2-core AMD EPYC, ``notebooks/hasfl/RUN_LOG.md``; 1.72 in a later run on an AMD
EPYC with AVX-512), so it bounded nothing: oneDNN's convolution kernels are not limited to what one large matmul
reaches, and the counted FLOPs need not be the arithmetic the kernels do. The same layers run alone in one
batched call would be no ceiling either: the engine runs them at other batch sizes and layouts (channels-last;
per-device batches of 16 that stay in cache), which can be faster per sample. Without a ceiling the engine
provably cannot beat, the benchmark compares the three implementations with each other only, the per-client loop
as the baseline.
"""
from __future__ import annotations

import importlib

import torch

from fedlib.lab.benchtime import machine, rate_spread, ratio_spread, time_interleaved
from fedlib.split.config import SplitConfig, build_model
from fedlib.split.engine import init_state, train_round
from fedlib.split.records import client_partition, draw_batches
from fedlib.split.stacked import init_stacked, train_round_stacked


def from_tests(module: str):
    """The module ``tests/<module>.py``: the benchmarks' per-client loops are the tests' literal references (and
    ``dtfl_sweep``'s batched runs the tests' too), importable as ``tests.<module>`` when the benchmark runs from the
    repository's root. Raises ModuleNotFoundError saying so when it runs elsewhere."""
    try:
        return importlib.import_module(f"tests.{module}")
    except ModuleNotFoundError as err:
        if err.name not in ("tests", f"tests.{module}"):
            raise
        raise ModuleNotFoundError(f"no module tests.{module}: the benchmark's per-client loop is tests/{module}.py; "
                                  "run python -m fedlib.lab.bench from the repository's root") from None


Reference = from_tests("reference_split").Reference

#: output name -> what it times (printed with every result)
BASELINES = {"per_client_loop": "the per-client loop: the literal per-device reference "
                                 "(tests/reference_split.py: Reference), devices one after another",
             "engine_loop_backend": "the engine, its loop backend (fedlib.split.train_round)",
             "stacked_backend": "the engine, its stacked backend (fedlib.split.stacked.train_round_stacked)"}


def bench_sfl(widths: tuple = (0.25, 1.0), repeats: int = 3, rounds: dict | None = None, device: str = "auto",
              threads: int | None = None, data=None) -> dict:
    """Device-samples/s of the three implementations at each width; returns the JSON-able dict of the CLI.

    Args:
        widths: VGG-16 width multipliers. repeats: timed calls per variant (width >= 1: at most 2).
        rounds: rounds per timed call, per width (default 4 below width 1, else 1). device: ``"auto"``,
            ``"cpu"``, ``"cuda"``. threads: torch CPU threads during the benchmark (default: unchanged).
            data: a :class:`fedlib.data.TensorDataset` of 1×28×28 images (default: real Fashion-MNIST).

    Returns:
        ``{"bench": "sfl", "baselines": BASELINES, "device", "threads", "cpus", "torch", "fedlib",
        "load_1min", ["gpu"], "widths": {tag: {...}}}`` with, per width tag (``"w025"``, ``"w1"``):
        ``width``, ``rounds_per_call``, ``samples_per_call``, ``samples_per_s`` (per variant of
        :data:`BASELINES`: ``{"median", "iqr": [p25, p75], "min_max": [min, max], "n"}``),
        ``speedup_vs_per_client_loop`` (per engine backend, the same statistics of the ratio within each repeat)
        and, on CUDA, ``peak_gpu_mib`` (per variant: peak allocated memory of its timed calls; the state of all
        three variants stays allocated, so each peak includes the others' state).

    On a shared machine, 2 threads next to other busy processes collapse (spin-waiting): compare the variants only
    within one call, and read the spread.
    """
    old = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return _bench(widths, repeats, rounds, device, data)
    finally:
        torch.set_num_threads(old)


def _bench(widths, repeats, rounds, device, data) -> dict:
    from fedlib.core.seeding import resolve_device, torch_generator

    dev = resolve_device(device)
    if data is None:
        from fedlib.data import load_fashion_mnist
        data = load_fashion_mnist()
    x_train, y_train = data.x_train.to(dev), data.y_train.to(dev)
    per_width = {}
    for width in widths:
        tag = "w" + f"{width:g}".replace("0.", "0").replace(".", "")
        n_rounds = (rounds or {}).get(width, 4 if width < 1 else 1)
        cfg = SplitConfig(model="vgg16", width=width, num_devices=20, batch_sizes=(16,) * 20,
                          cuts=tuple([3, 5, 8] * 7)[:20], interval=15, lr=5e-4)
        model = build_model(cfg, 1, 28, 10).to(dev)
        st = init_state(cfg, model, (1, 28, 28), dev, channels_last=True)
        ref = Reference(cfg, model)
        stk = init_stacked(cfg, model, (1, 28, 28), dev)
        parts = [torch.as_tensor(p).to(dev) for p in client_partition(cfg, data.y_train)]
        gen = torch_generator(0, "data")
        batches = []
        for _ in range(n_rounds):
            idx = draw_batches(parts, st.b, gen)
            batches.append(([x_train[i] for i in idx], [y_train[i] for i in idx]))
        samples = int(st.b.sum()) * n_rounds

        def rounds_of(step, batches=batches):
            def call():
                for xs, ys in batches:
                    step(xs, ys)
            return call

        calls = {"per_client_loop": rounds_of(ref.round),
                 "engine_loop_backend": rounds_of(lambda xs, ys: train_round(st, xs, ys)),
                 "stacked_backend": rounds_of(lambda xs, ys: train_round_stacked(stk, xs, ys, sync=False,
                                                                                 check_labels=False))}
        times, peaks = time_interleaved(calls, repeats if width < 1 else min(repeats, 2), warmup=1, device=dev)
        loop = times["per_client_loop"]
        res = {"width": width, "rounds_per_call": n_rounds, "samples_per_call": samples,
               "samples_per_s": {k: rate_spread(m, samples) for k, m in times.items()},
               "speedup_vs_per_client_loop": {k: ratio_spread(times[k], samples, loop, samples)
                                              for k in ("engine_loop_backend", "stacked_backend")}}
        if dev.type == "cuda":
            res["peak_gpu_mib"] = peaks
        per_width[tag] = res
    return {"bench": "sfl", "baselines": BASELINES, **machine(dev), "widths": per_width}


if __name__ == "__main__":
    import json

    from fedlib.lab.cli import ArgumentParser
    ArgumentParser(prog="python -m fedlib.lab.split.bench",
                   description="The split engine's benchmark at its defaults; one JSON line (options: python -m "
                               "fedlib.lab.bench sfl).").parse_args()
    print(json.dumps(bench_sfl()))
