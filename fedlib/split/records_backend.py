"""Runs of the split engine on a chosen backend: :func:`fedlib.split.records.run_split`'s run and record, with the
round computed by the loop backend (:mod:`.engine`, what ``run_split`` uses) or a stacked one (:mod:`.stacked`,
fastest on a GPU; :mod:`.backends`).

With the loop backend :func:`run_split_backend` *is* :func:`fedlib.split.records.run_split` (same call, same
record), so records keyed without a backend stay valid. With a stacked backend the run is the same step for step
(data partition and batches from the ``data`` stream, evaluations, clock, schedule, stop rule), with two
differences of execution, not of the computation:

- the round runs without host syncs (``train_round_nosync``): the loss stays on the device and is read only at
  the evaluations (``train_loss`` is the mean main loss of the round before each evaluation, as in ``run_split``);
- the labels are checked once, before the first round, instead of every round.

The two backends are float-close, not bit-identical (the tests check both against the literal per-device loop in
float64), so a store keys a stacked record apart (:func:`fedlib.lab.hasfl.runs.train_backend.train_record_backend`).
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np
import torch

from ..core.seeding import resolve_device, torch_generator
from ..core.validate import check_callable, check_instance
from ..data import TensorDataset, load_dataset
from .backends import backend_functions, resolve_backend
from .config import SplitConfig, build_model
from .records import client_partition, draw_batches, evaluate, run_split


def run_split_backend(cfg: SplitConfig, dataset: TensorDataset | None = None, device: str = "auto",
                      backend: str = "auto", clock: Callable | None = None, aux_head: Callable | None = None,
                      weights=None, schedule: Callable | None = None, stop: Callable | None = None) -> dict:
    """:func:`fedlib.split.records.run_split` on ``backend`` (``"auto"``: stacked on CUDA, the loop elsewhere;
    :func:`fedlib.split.backends.resolve_backend`). Arguments and record as ``run_split``; a stacked backend's
    record also holds ``"backend"`` (its name). The loop backend calls ``run_split`` itself.

    Raises:
        ValueError: an unknown backend or device; as ``run_split`` otherwise (a label outside the dataset's classes
            before the first round).
    """
    check_instance("cfg", cfg, SplitConfig)
    check_instance("dataset", dataset, TensorDataset, "a fedlib.data.TensorDataset", allow_none=True)
    for name, fn in (("clock", clock), ("aux_head", aux_head), ("schedule", schedule), ("stop", stop)):
        check_callable(name, fn)
    dev = resolve_device(device)
    used = resolve_backend(backend, dev)
    if used == "loop":
        return run_split(cfg, dataset, device, clock, aux_head, weights, schedule, stop)
    f = backend_functions(used)
    t0 = time.perf_counter()
    ds = dataset if dataset is not None else load_dataset(cfg.dataset)
    if int(ds.y_train.min()) < 0 or int(ds.y_train.max()) >= ds.num_classes:
        raise ValueError(f"dataset labels must lie in 0..{ds.num_classes - 1}, got {int(ds.y_train.min())}.."
                         f"{int(ds.y_train.max())}")
    parts = [torch.from_numpy(np.asarray(p, dtype=np.int64)).to(dev) for p in client_partition(cfg, ds.y_train)]
    x_train, y_train = ds.x_train.to(dev), ds.y_train.to(dev)
    x_test, y_test = ds.x_test.to(dev), ds.y_test.to(dev)
    shape = tuple(ds.x_train.shape[1:])
    model = build_model(cfg, shape[0], shape[1], ds.num_classes)
    st = f["init_state"](cfg, model, shape, dev, aux_head)
    gen = torch_generator(cfg.seed, "data")
    rec = {"config": cfg.to_dict(), "device": str(dev), "backend": used, "round": [], "epoch": [], "sim_s": [],
           "test_acc": [], "test_loss": [], "train_loss": [], "elapsed_s": []}
    sim, loss = 0.0, None

    def record(r):
        acc, tl = evaluate(f["global_model"](st, weights), x_test, y_test)
        for k, v in (("round", r), ("epoch", st.samples / len(y_train)), ("sim_s", sim), ("test_acc", acc),
                     ("test_loss", tl), ("train_loss", None if loss is None else float(loss)),
                     ("elapsed_s", time.perf_counter() - t0)):
            rec[k].append(v)

    record(0)
    for r in range(1, cfg.rounds + 1):
        if schedule is not None:
            new = schedule(r, st)
            if new is not None:
                f["set_decision"](st, *new, weights=weights, seed=cfg.seed)
        idx = draw_batches(parts, st.b, gen)
        loss = f["train_round_nosync"](st, [x_train[i] for i in idx], [y_train[i] for i in idx], weights)
        aggregated = r % cfg.interval == 0
        if aggregated:
            f["aggregate"](st, weights)
        if clock is not None:
            sim += float(clock(r, st.b.copy(), st.cuts.copy(), aggregated))
        if r % cfg.eval_every == 0 or r == cfg.rounds:
            record(r)
            if stop is not None and stop(rec):
                break
    return rec
