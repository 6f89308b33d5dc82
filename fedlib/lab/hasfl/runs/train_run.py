"""One HASFL training run on the shared split engine, cached under its own code hash (:data:`TRAIN_CODE`).

A training run is fixed by its :func:`fedlib.lab.hasfl.runs.training.run_config`: the model, data, optimiser, every
device's batch size and cut layer, the rounds and the seed. How that decision was reached (the bound, its
constants, the optimiser: ``bcd``, ``p1``, ``p2``, ...) is not part of the run, and neither is the latency model
that charges it (the clock is applied afterwards, :func:`fedlib.lab.hasfl.runs.training.train`). So the run's record is
stored by a store that hashes only the code that trains it (:data:`TRAIN_CODE`): an edit of the optimiser or the
bound recomputes the decisions, and a run whose b and cuts come out unchanged is a cache hit, while an edit of the
engine, the models, the data or this module retrains everything. Choice (ours): the paper has no cache; this
keeps the hours of converged training valid across edits that cannot change them.
"""
from __future__ import annotations

import functools


from fedlib.lab.store import RECORD_CODE, ResultStore
from fedlib.data import TensorDataset
from fedlib.hasfl.training import converged_index, split_config, train_run  # noqa: F401  (re-exported)

TRAIN_CODE = ("fedlib.hasfl.training", *RECORD_CODE, "fedlib.data", "fedlib.split.config", "fedlib.split.engine",
              "fedlib.split.models", "fedlib.split.ops", "fedlib.split.records")
"""The source a HASFL training record depends on: this module, core's :data:`fedlib.lab.RECORD_CODE`, data and the modules of ``fedlib.split``
that train (not the latency model, the profiles or the system draw: they enter through the clock, applied after
the cached run)."""


def train_store(store: ResultStore) -> ResultStore:
    """The store of training records beside ``store`` (same folder, code :data:`TRAIN_CODE`).

    Raises:
        TypeError: ``store`` is not a :class:`fedlib.lab.ResultStore`.
    """
    if not isinstance(store, ResultStore):
        raise TypeError(f"store must be a fedlib.lab.ResultStore, got {type(store).__name__}")
    return store.with_code(TRAIN_CODE)


def train_record(store: ResultStore, config: dict, data: TensorDataset, device: str = "auto") -> dict:
    """Train one run config through ``train_store(store)`` without a clock (a rerun is a cache hit).

    Returns:
        :func:`fedlib.split.run_split`'s record without ``sim_s`` (per evaluation: round, epoch, test_acc,
        test_loss, train_loss, elapsed_s) plus ``converged_index`` and ``converged_acc`` (None when the rule never
        fires), ``test_samples`` and ``elapsed_s`` (the whole run, s).
    """
    return train_store(store).get_or_run(config, functools.partial(train_run, config, data, device))
