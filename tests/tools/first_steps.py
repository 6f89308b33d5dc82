"""The first training steps of each paper's ``paper`` profile at its largest full-width configuration, on this
machine: does it start, does it fit in memory, how many seconds per step (``python -m tests.tools.first_steps``,
from the repository root: a measurement for whoever sizes the profiles; ``tests/test_first_steps.py`` runs it).

The ``paper`` profiles (``notebooks/profiles/paper/``) are the papers' own settings, sized for a GPU or a cluster;
nobody runs them whole on a 2-core CPU. This command builds the largest configuration of each and trains a few
steps of it, with the profile's model, width, optimiser, batch size and number of clients, on real Fashion-MNIST
(the dataset ``dataset: auto`` resolves to here; CIFAR-10's 32x32x3 inputs cost about (32/28)^2 = 1.3x more
convolution FLOPs):

- ``hist``: HIST with N = 5 cells (Figs. 2-3's largest), 60 clients, MLP 784-300-10, batch 32, H = 40, E = 200;
  a step = one local SGD step of every client (timed by global rounds of E steps).
- ``dtfl``: ResNet-110 at width 1, batch 100, K = 200 clients (Table 4's largest K, ``dtfl_6_scaling``), tiers
  1..7, Adam, auxiliary heads (``mode="copies"``: every client holds every unit, so all K copies are allocated);
  a step = one client's batch, ``active`` clients per step (a DTFL round of the whole training set is
  ceil(N_k / B) steps of each participating client).
- ``hasfl``: VGG-16 at width 1 with N = 50 devices (Fig. 9's largest N), every device at b = 16 and cut 8 (the
  batch and cut of Figs. 2a / 3a's fixed runs), Adam, the common part shared (``mode="common"``); a step = one
  round of every device.

Each paper runs in its own process (:func:`main` starts them), so ``peak_rss_mib`` is that paper's peak resident
memory (``getrusage``), data and interpreter included. ``state_mib`` counts the engine's tensors (parameters,
buffers, optimiser state) after the steps; ``state_mib_trained`` is what they grow to once every client has its
optimiser state (DTFL's clients that have not trained yet hold none). Seconds per step are the median over the
timed steps after one untimed warm-up step; ``s_per_sample`` divides by the samples a step trains.
``run_samples`` / ``run_h``: the training samples of one run of the profile and its projected hours on this
device at the measured rate (training only; evaluations add to it). These are measurements of one machine, not
tests of speed.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

from fedlib import __version__
from fedlib.lab.cli import ArgumentParser
from fedlib.lab.paths import PAPERS, REPO_ROOT
from fedlib.core.seeding import resolve_device
from fedlib.split.backends import ALL_BACKENDS, resolve_backend
from fedlib.core.validate import check_choice, check_int


def _state_mib(tensors) -> float:
    return sum(t.numel() * t.element_size() for t in tensors) / 2 ** 20


def _engine_tensors(st) -> list:
    if hasattr(st, "layout"):                       # the stacked backend: [N, ...] stacks, all state allocated
        out = [v for d in st.per for v in d.values()]
        out += [v for d in st.opt for s in d.values() for v in s.values()]
        out += [v for d in st.aux.values() for v in d.values()]
        return out + [v for d in st.aux_opt.values() for s in d.values() for v in s.values()]
    out = [v for copies in st.units for d in copies for v in d.values()]
    out += [v for copies in st.opt for d in copies for s in d.values() for v in s.values() if torch.is_tensor(v)]
    out += [v for d in st.aux if d is not None for v in d.values()]
    out += [v for d in st.aux_opt for s in d.values() for v in s.values() if torch.is_tensor(v)]
    return out


def _timed_steps(step, steps: int) -> tuple[list[float], float]:
    """``step(0)`` untimed (warm-up: allocator, kernel choice, lazily created optimiser state), then ``steps``
    timed steps; returns their wall times (s) and the last step's training loss."""
    loss = step(0)
    times = []
    for s in range(1, steps + 1):
        t = time.perf_counter()
        loss = step(s)
        times.append(time.perf_counter() - t)
    return times, float(loss)


def _hist(steps: int, device: str) -> dict:
    from fedlib.data import load_fashion_mnist
    from fedlib.hist import HistConfig, iterate_hist, prepare
    h, e = 40, 200                           # Figs. 2-3's edge and cloud aggregation intervals
    cfg = HistConfig(method="hist", num_cells=5, num_clients=60, hidden=300, batch_size=32, H=h, E=e,
                     global_rounds=steps + 1)
    prepared = prepare(cfg, load_fashion_mnist(), device)
    it = iter(iterate_hist(prepared))
    next(it)                                 # m = 0: the initial model, no step
    times, loss = _timed_steps(lambda s: next(it)[2], steps)
    times = [t / e for t in times]          # a global round is E steps
    return {"config": {"method": "hist", "num_cells": 5, "num_clients": 60, "hidden": 300, "batch_size": 32,
                       "H": h, "E": e}, "samples_per_step": 60 * 32, "times": times, "loss": loss, "state_mib": None,
            "state_mib_trained": None, "run_samples": None}


def _dtfl(steps: int, device: str, active: int, backend: str = "loop") -> dict:
    from fedlib.data import load_fashion_mnist
    from fedlib.dtfl.local_loss import local_loss_step
    from fedlib.dtfl.tiers import aux_head_factory
    from fedlib.split import SplitConfig, build_model
    from fedlib.split.backends import split_backend
    f = split_backend(backend)
    init_state, train_round, local_step = f.init_state, f.train_round, local_loss_step(backend)
    data = load_fashion_mnist()
    k, b = 200, 100
    tiers = tuple(1 + i % 7 for i in range(k))
    cfg = SplitConfig(model="resnet110", width=1.0, num_devices=k, batch_sizes=(b,) * k, cuts=tiers, interval=1,
                      lr=1e-3, optimizer="adam", mode="copies", local_loss=True, rounds=1, seed=0)
    shape = tuple(data.x_train.shape[1:])
    st = init_state(cfg, build_model(cfg, shape[0], shape[1], data.num_classes), shape, device,
                    aux_head_factory(data.num_classes), channels_last=True)
    x, y = data.x_train.to(device), data.y_train.to(device)
    weights = np.full(k, 1.0 / k)

    def step(s):
        xs, ys = [None] * k, [None] * k
        for j in range(active):              # other clients each step: their optimiser state is created as it runs
            i = (s * active + j) % k
            xs[i], ys[i] = x[i * b:(i + 1) * b], y[i * b:(i + 1) * b]
        return train_round(st, xs, ys, weights, sync_copies=False, local_step=local_step)

    times, loss = _timed_steps(step, steps)
    state = _state_mib(_engine_tensors(st))
    if hasattr(st, "layout"):                       # stacked: every client's optimiser state exists from the start
        per_client, trained = 0.0, k
    else:
        per_client = _state_mib(v for d in st.opt for s in d[0].values() for v in s.values() if torch.is_tensor(v))
        trained = sum(1 for d in st.opt[0] if d)
    return {"config": {"model": "resnet110", "width": 1.0, "num_clients": k, "batch_size": b, "optimizer": "adam",
                       "tiers": "1..7", "active_clients_per_step": active},
            "samples_per_step": active * b, "times": times, "loss": loss, "state_mib": state,
            "state_mib_trained": state + (k - trained) * per_client,
            # one run: 300 rounds of the whole training set (CIFAR-10: 50,000 samples)
            "run_samples": 300 * 50_000}


def _hasfl(steps: int, device: str, backend: str = "loop") -> dict:
    from fedlib.data import load_fashion_mnist
    from fedlib.split import SplitConfig, build_model
    from fedlib.split.backends import split_backend
    f = split_backend(backend)
    init_state, train_round = f.init_state, f.train_round
    data = load_fashion_mnist()
    n, b, cut = 50, 16, 8
    cfg = SplitConfig(model="vgg16", width=1.0, num_devices=n, batch_sizes=(b,) * n, cuts=(cut,) * n, interval=15,
                      lr=1e-3, optimizer="adam", mode="common", rounds=1, seed=0)
    shape = tuple(data.x_train.shape[1:])
    st = init_state(cfg, build_model(cfg, shape[0], shape[1], data.num_classes), shape, device, channels_last=True)
    x, y = data.x_train.to(device), data.y_train.to(device)

    def step(s):
        off = (s * n * b) % (len(x) - n * b)
        return train_round(st, [x[off + i * b: off + (i + 1) * b] for i in range(n)],
                    [y[off + i * b: off + (i + 1) * b] for i in range(n)])

    times, loss = _timed_steps(step, steps)
    state = _state_mib(_engine_tensors(st))
    return {"config": {"model": "vgg16", "width": 1.0, "num_devices": n, "batch_size": b, "cut": cut,
                       "optimizer": "adam"},
            "samples_per_step": n * b, "times": times, "loss": loss, "state_mib": state, "state_mib_trained": state,
            # one run: 20 epochs of device samples (the paper profile's epochs) of CIFAR-10's 50,000
            "run_samples": 20 * 50_000}


def first_steps(paper: str, steps: int = 2, device: str = "cpu", active: int | None = None,
                backend: str | None = None) -> dict:
    """Train ``steps`` timed steps (after one warm-up step) of ``paper``'s largest ``paper``-profile configuration
    in this process (module docstring); returns the JSON-able measurement.

    Args:
        paper: ``"hist"``, ``"dtfl"`` or ``"hasfl"``. steps: timed steps (>= 0; 0 = the warm-up step only, no
            timing: does the configuration start and fit). device: torch device.
        active: DTFL's clients per step (>= 1; default 2; DTFL only). backend: the split engine's backend for
            DTFL and HASFL (default ``"loop"``, ``"auto"``: stacked on CUDA, or a stacked variant, :data:`fedlib.split.backends.BACKENDS`;
            HIST has its own engine). The stacked backend runs a step's active clients in one call, so its seconds
            per sample fall as ``active`` grows; the loop backend's stay about flat.

    Returns:
        ``{"paper", "config", "steps", "samples_per_step", "loss" (the last step's training loss),
        "s_per_step" (median, s; None with steps = 0), "s_per_sample" (s),
        "peak_rss_mib" (MiB, this process), "state_mib", "state_mib_trained" (MiB; None for HIST), "run_samples",
        "run_h" (h; None for HIST), "backend" (None for HIST), "threads", "device", "torch", "fedlib"}``.

    Raises:
        ValueError / ParameterTypeError: unknown paper or backend, steps < 0, active < 1, an unknown device or CUDA
        asked for but absent, ``backend`` given for HIST or ``active`` for another paper than DTFL.
    """
    check_choice("paper", paper, PAPERS)
    if backend is not None and paper == "hist":
        raise ValueError(f"backend applies to dtfl and hasfl only (HIST has its own engine), got {backend!r} for hist")
    if active is not None and paper != "dtfl":
        raise ValueError(f"active applies to dtfl only, got {active!r} for {paper}")
    steps = check_int("steps", steps, 0)
    active = check_int("active", 2 if active is None else active, 1)
    backend = "loop" if backend is None else backend
    device = str(resolve_device(device))
    backend = resolve_backend(backend, device)
    out = {"hist": lambda: _hist(steps, device), "dtfl": lambda: _dtfl(steps, device, active, backend),
           "hasfl": lambda: _hasfl(steps, device, backend)}[paper]()
    times = out.pop("times")
    s_step = statistics.median(times) if times else None
    s_sample = None if s_step is None else s_step / out["samples_per_step"]
    out = {"paper": paper, **out, "steps": steps, "s_per_step": None if s_step is None else round(s_step, 4),
           "s_per_sample": s_sample, "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
           "run_h": None if out["run_samples"] is None or s_sample is None
           else round(out["run_samples"] * s_sample / 3600, 1),
           "backend": None if paper == "hist" else backend,
           "threads": torch.get_num_threads(), "device": str(device), "torch": torch.__version__,
           "fedlib": __version__}
    if str(device).startswith("cuda"):
        out["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated() / 2 ** 20, 1)
        out["gpu"] = torch.cuda.get_device_name()
    for key in ("state_mib", "state_mib_trained"):
        if out[key] is not None:
            out[key] = round(out[key], 1)
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: ``python -m tests.tools.first_steps [--paper hist dtfl hasfl] [--steps 2] [--device cpu] [--backend loop]
    [--active 2]`` prints one JSON
    line per paper, each measured in a fresh process (its own peak memory; on CUDA also ``peak_gpu_mib``)."""
    parser = ArgumentParser(prog="python -m tests.tools.first_steps",
                            description="First steps of each paper's paper profile; one JSON line each.")
    parser.add_argument("--paper", nargs="+", choices=PAPERS, default=list(PAPERS), help="papers, each once (default all)")
    parser.add_argument("--steps", type=int, default=2,
                        help="timed steps after one warm-up (>= 0; 0: the warm-up only; default 2)")
    parser.add_argument("--device", default="cpu", help="torch device (cpu, cuda, cuda:N; default cpu)")
    parser.add_argument("--backend", choices=("auto",) + ALL_BACKENDS, default=None,
                        help="split-engine backend for dtfl and hasfl (auto: stacked on CUDA; default loop); "
                             "refused when neither is among --paper")
    parser.add_argument("--active", type=int, default=None,
                        help="DTFL's clients per step (>= 1; default 2); refused when dtfl is not among --paper")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if len(set(args.paper)) < len(args.paper):
        parser.error(f"argument --paper: names a paper twice ({' '.join(args.paper)}); name each once")
    if args.steps < 0:
        parser.error(f"argument --steps: must be an integer >= 0, got {args.steps}")
    takes = {"backend": ("dtfl", "hasfl"), "active": ("dtfl",)}      # an option no chosen paper uses is refused
    for name, papers in takes.items():
        if getattr(args, name) is not None and not set(args.paper) & set(papers):
            parser.error(f"argument --{name}: applies to {' and '.join(papers)} only, not {' '.join(args.paper)}")
    args.backend = args.backend or "loop"
    args.active = 2 if args.active is None else args.active
    if args.active < 1:
        parser.error(f"argument --active: must be an integer >= 1, got {args.active}")
    try:
        resolve_device(args.device)
    except ValueError as exc:
        parser.error(f"argument --device: {exc}")
    if args.child:
        paper = args.paper[0]
        print(json.dumps(first_steps(paper, args.steps, args.device, args.active if paper in takes["active"] else None,
                                     args.backend if paper in takes["backend"] else None)))
        return 0
    for paper in args.paper:
        applies = [*(["--backend", args.backend] if paper in takes["backend"] else []),
                   *(["--active", str(args.active)] if paper in takes["active"] else [])]
        done = subprocess.run([sys.executable, "-m", "tests.tools.first_steps", "--child", "--paper", paper,
                               "--steps", str(args.steps), "--device", args.device, *applies],
                              capture_output=True, text=True, cwd=REPO_ROOT)
        if done.returncode:
            sys.stderr.write(done.stderr)
            return done.returncode
        print(done.stdout.strip().splitlines()[-1], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
