"""Benchmark of the split-training engine (``python -m fedlib.bench sfl``): device-samples/s of one HASFL-style
round (N = 20 devices, b = 16, cuts mixed among 3 / 5 / 8 so L_c = 8, VGG-16 with BN on real 28×28×1
Fashion-MNIST, plain SGD) for

- ``loop``: the literal per-device reference (:class:`fedlib.split.reference.Reference`: per-device modules and
  ``torch.optim.SGD``, devices one after another);
- ``engine``: :func:`fedlib.split.train_round` (per-device loop over units 1..L_c, one concatenated pass with
  per-device BN over the common part; conv weights channels-last);
- ``stacked``: :func:`fedlib.split.stacked.train_round_stacked` (units 1..L_c stacked ``[N, ...]``, one batched
  call per unit for the devices of one batch size, the same common part; without its two optional host syncs,
  ``sync=False, check_labels=False``, as a training loop calls it after checking the dataset's labels once);

timed interleaved in one process (median of ``repeats``), and the roofline: samples/s at the machine's measured
large-matmul GFLOP/s for the forward + backward FLOPs per sample that :func:`fedlib.split.model_profile` counts
(convolutions and matmuls only), at width 0.25 and 1.
"""
from __future__ import annotations

import statistics
import time

import torch

from ..core.roofline import matmul_gflops
from .config import SplitConfig, build_model
from .engine import init_state, train_round
from .profile import model_profile
from .records import client_partition, draw_batches
from .reference import Reference
from .stacked import init_stacked, train_round_stacked


def _rate(step, batches, samples: int, device: torch.device, peaks: dict | None = None, key: str = "") -> float:
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(device)
    t = time.perf_counter()
    for xs, ys in batches:
        step(xs, ys)
    if device.type == "cuda":
        torch.cuda.synchronize()
        if peaks is not None:
            peaks[key] = max(peaks.get(key, 0.0), round(torch.cuda.max_memory_allocated(device) / 2 ** 20, 1))
    return samples * len(batches) / (time.perf_counter() - t)


def bench_sfl(widths: tuple = (0.25, 1.0), repeats: int = 3, rounds: dict | None = None, device: str = "auto",
              threads: int | None = None) -> dict:
    """Measure loop / engine / roofline samples/s at each width; returns the JSON-able dict of the CLI.

    Keys ``loop_samples_per_s_w025``, ``engine_samples_per_s_w025``, ``stacked_samples_per_s_w025``,
    ``roofline_samples_per_s_w025`` (and ``_w1``), ``speedup_w025`` (engine / loop), ``stacked_speedup_w025``
    (stacked / loop), ``roofline_frac_w025`` (engine / roofline), ``gflops``,
    ``device``, ``threads``; on CUDA ``peak_gpu_mib_w025`` (MiB per variant: peak allocated memory during its
    timed rounds; the state of all three variants stays allocated, so each peak includes the others' state) and
    ``gpu``. ``rounds``: rounds per timed call per width (default 4 at width 0.25, 1 at width 1;
    width 1 is timed at most twice). ``threads``: torch CPU threads during the benchmark (default: unchanged).
    On a shared machine, 2 threads next to other busy processes collapse (spin-waiting): compare loop and engine
    only within one call.
    """
    old = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return _bench(widths, repeats, rounds, device)
    finally:
        torch.set_num_threads(old)


def _bench(widths, repeats, rounds, device) -> dict:
    from ..core.seeding import resolve_device, torch_generator
    from ..data import load_fashion_mnist

    dev = resolve_device(device)
    ds = load_fashion_mnist()
    x_train, y_train = ds.x_train.to(dev), ds.y_train.to(dev)
    gflops = matmul_gflops(reps=5, device=dev)
    out: dict = {"device": str(dev), "gflops": round(gflops, 1), "threads": torch.get_num_threads()}
    for width in widths:
        tag = "w" + f"{width:g}".replace("0.", "0").replace(".", "")
        n_rounds = (rounds or {}).get(width, 4 if width < 1 else 1)
        cfg = SplitConfig(model="vgg16", width=width, num_devices=20, batch_sizes=(16,) * 20,
                          cuts=tuple([3, 5, 8] * 7)[:20], interval=15, lr=5e-4)
        model = build_model(cfg, 1, 28, 10).to(dev)
        st = init_state(cfg, model, (1, 28, 28), dev, channels_last=True)
        ref = Reference(cfg, model)
        stk = init_stacked(cfg, model, (1, 28, 28), dev)
        parts = [torch.as_tensor(p).to(dev) for p in client_partition(cfg, ds.y_train)]
        gen = torch_generator(0, "data")
        batches = []
        for _ in range(n_rounds):
            idx = draw_batches(parts, st.b, gen)
            batches.append(([x_train[i] for i in idx], [y_train[i] for i in idx]))
        samples = int(st.b.sum())
        train_round(st, *batches[0])          # warm-up (allocator, kernel selection)
        ref.round(*batches[0])
        train_round_stacked(stk, *batches[0])
        res = {"loop": [], "engine": [], "stacked": []}
        peaks: dict = {}
        for _ in range(repeats if width < 1 else min(repeats, 2)):
            res["loop"].append(_rate(ref.round, batches, samples, dev, peaks, "loop"))
            res["engine"].append(_rate(lambda xs, ys: train_round(st, xs, ys), batches, samples, dev, peaks,
                                       "engine"))
            res["stacked"].append(_rate(lambda xs, ys: train_round_stacked(stk, xs, ys, sync=False, check_labels=False),
                                        batches, samples, dev, peaks, "stacked"))
        prof = model_profile("vgg16", 1, 28, 10, width=width)
        roof = gflops * 1e9 / (prof.fwd_flops[-1] + prof.bwd_flops[-1])
        loop, eng, stacked = (statistics.median(res[k]) for k in ("loop", "engine", "stacked"))
        out |= {f"loop_samples_per_s_{tag}": round(loop, 1), f"engine_samples_per_s_{tag}": round(eng, 1),
                f"stacked_samples_per_s_{tag}": round(stacked, 1),
                f"roofline_samples_per_s_{tag}": round(roof, 1), f"speedup_{tag}": round(eng / loop, 3),
                f"stacked_speedup_{tag}": round(stacked / loop, 3),
                f"roofline_frac_{tag}": round(eng / roof, 3)}
        if dev.type == "cuda":
            out[f"peak_gpu_mib_{tag}"] = peaks
    if dev.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(dev)
    return out


if __name__ == "__main__":
    import json

    from ..core.cli import ArgumentParser
    ArgumentParser(prog="python -m fedlib.split.bench",
                   description="The split engine's benchmark at its defaults; one JSON line (options: python -m "
                               "fedlib.bench sfl).").parse_args()
    print(json.dumps(bench_sfl()))
