"""One HASFL training run on the shared split engine, cached under its own code hash (:data:`TRAIN_CODE`).

A training run is fixed by its :func:`fedlib.hasfl.runs.training.run_config`: the model, data, optimiser, every
device's batch size and cut layer, the rounds and the seed. How that decision was reached (the bound, its
constants, the optimiser: ``bcd``, ``p1``, ``p2``, ...) is not part of the run, and neither is the latency model
that charges it (the clock is applied afterwards, :func:`fedlib.hasfl.runs.training.train`). So the run's record is
stored by a store that hashes only the code that trains it (:data:`TRAIN_CODE`): an edit of the optimiser or the
bound recomputes the decisions, and a run whose b and cuts come out unchanged is a cache hit, while an edit of the
engine, the models, the data or this module retrains everything. Choice (ours): the paper has no cache; this
keeps the hours of converged training valid across edits that cannot change them.
"""
from __future__ import annotations

import time
from dataclasses import replace

from ...core import RECORD_CODE, ResultStore
from ...data import TensorDataset
from ...split import SplitConfig, converged_at, run_split

TRAIN_CODE = ("fedlib.hasfl.runs.train_run", *RECORD_CODE, "fedlib.data", "fedlib.split.config", "fedlib.split.engine",
              "fedlib.split.models", "fedlib.split.ops", "fedlib.split.records")
"""The source a HASFL training record depends on: this module, core's :data:`fedlib.core.RECORD_CODE`, data and the modules of ``fedlib.split``
that train (not the latency model, the profiles or the system draw: they enter through the clock, applied after
the cached run)."""


def train_store(store: ResultStore) -> ResultStore:
    """The store of training records beside ``store`` (same folder, code :data:`TRAIN_CODE`).

    Raises:
        TypeError: ``store`` is not a :class:`fedlib.core.ResultStore`.
    """
    if not isinstance(store, ResultStore):
        raise TypeError(f"store must be a fedlib.core.ResultStore, got {type(store).__name__}")
    return store.with_code(TRAIN_CODE)


def split_config(config: dict) -> SplitConfig:
    """The engine's :class:`fedlib.split.SplitConfig` of a :func:`fedlib.hasfl.runs.training.run_config`."""
    part = "iid" if config["setting"] == "iid" else "shards"
    return SplitConfig(model=config["model"], width=config["width"], num_devices=config["num_devices"],
                       batch_sizes=tuple(config["b"]), cuts=tuple(config["cuts"]), interval=config["interval"],
                       lr=config["lr"], optimizer=config["optimizer"], momentum=config["momentum"],
                       rounds=config["rounds"], eval_every=config["eval_every"], partition=part,
                       shards_per_client=config["shards_per_client"], dataset=config["dataset"], seed=config["seed"])


def converged_index(accs: list[float], chance: float) -> int | None:
    """The paper's rule (:func:`fedlib.split.converged_at`) on a run's test accuracies (fractions), looked at from
    the first evaluation at or above twice ``chance`` (:mod:`fedlib.hasfl.runs.training`, "Convergence"); None if it
    never fires."""
    start = next((i for i, a in enumerate(accs) if a >= 2 * chance), len(accs))
    return converged_at(accs, start=start)


def train_record(store: ResultStore, config: dict, data: TensorDataset, device: str = "auto") -> dict:
    """Train one run config through ``train_store(store)`` without a clock (a rerun is a cache hit).

    Returns:
        :func:`fedlib.split.run_split`'s record without ``sim_s`` (per evaluation: round, epoch, test_acc,
        test_loss, train_loss, elapsed_s) plus ``converged_index`` and ``converged_acc`` (None when the rule never
        fires), ``test_samples`` and ``elapsed_s`` (the whole run, s).
    """
    def run() -> dict:
        t0 = time.perf_counter()
        ds = data
        if config["test_subset"]:
            ds = replace(data, x_test=data.x_test[:config["test_subset"]], y_test=data.y_test[:config["test_subset"]])
        chance = 1 / data.num_classes
        stop = ((lambda r: converged_index(r["test_acc"], chance) is not None)
                if config.get("stop_at_convergence") else None)
        rec = run_split(split_config(config), ds, device, stop=stop)
        rec.pop("sim_s")
        k = converged_index(rec["test_acc"], chance)
        rec.update(converged_index=k, converged_acc=None if k is None else max(rec["test_acc"][:k + 1]),
                   test_samples=len(ds.y_test), data_source=data.source, elapsed_s=time.perf_counter() - t0)
        return rec
    return train_store(store).get_or_run(config, run)
