"""Training a HASFL plan's runs in worker processes (:func:`fedlib.lab.hasfl.runs.train_plan.train_in_workers`):
one job per not yet stored run config (or the extension it needs), started in :data:`TRAIN_ORDER`, costliest first
within a group; each worker loads the dataset once and trains through the result store, so the rows are then built
from cache hits.
"""
from __future__ import annotations

import functools

from fedlib.lab.datasets import dataset_by_name
from fedlib.lab.store import ResultStore
from fedlib.lab.parallel import map_jobs
from fedlib.data import TensorDataset, load_dataset
from fedlib.lab.hasfl.runs.train_config import needs_extension, train
from fedlib.lab.hasfl.runs.train_run import AnyBackendRecords


def _dataset(name: str) -> TensorDataset:
    """The dataset ``name``, loaded once per worker process (a dataset of your own by import path: imported and
    loaded by the worker itself, :func:`fedlib.lab.datasets.use_dataset`)."""
    return dataset_by_name(name, _builtin_dataset)


@functools.lru_cache(maxsize=2)
def _builtin_dataset(name: str) -> TensorDataset:
    return load_dataset(name)


def train_job(store: ResultStore, config: dict, problem, dataset: str, device: str = "auto",
              extend: dict | None = None) -> None:
    """:func:`fedlib.lab.hasfl.runs.train_config.train` of one run config (and its ``extend`` run when it needs one) with the
    dataset loaded by name (a job for :func:`fedlib.lab.map_jobs`; the records land in ``store``, nothing is
    returned)."""
    train(store, config, problem, _dataset(dataset), device, extend)


TRAIN_ORDER = (("fig5", "fig6"), ("fig2a", "fig3a", "calibration"), ("fig10", "fig11"), ("fig9",),
               ("fig7", "fig8"))
"""The order in which :func:`fedlib.lab.hasfl.runs.train_plan.train_in_workers` trains: the headline runs first (Figs. 5 / 6 on Table I),
then the calibration's inputs, Figs. 10 / 11, Fig. 9 and Figs. 7-8; costliest first within a group. Choice
(ours): a profile that takes longer than one sitting (``converged`` on 2 cores) resumes from the store, so the
runs that test the paper's main claim are the first to exist."""


def train_priority(figs, scale=None) -> int:
    """Index in :data:`TRAIN_ORDER` of the first group that holds one of ``figs`` (a run on a scaled system,
    ``scale`` not None, is a Figs. 7-8 run whatever it is tagged); ``len(TRAIN_ORDER)`` if none does."""
    if scale:
        return len(TRAIN_ORDER) - 1
    return min((i for i, group in enumerate(TRAIN_ORDER) if set(group) & set(figs)), default=len(TRAIN_ORDER))


def stored_run(runs_store: ResultStore, config: dict, extend: dict | None, data: TensorDataset) -> bool:
    """True when ``config``'s training record is in ``runs_store`` (:class:`fedlib.lab.hasfl.runs.train_run.AnyBackendRecords`: either backend)
    and, if it needs its ``extend`` run (:func:`fedlib.lab.hasfl.runs.train_config.needs_extension`, chance = 1 /
    ``data.num_classes``), so is that one."""
    if not runs_store.has(config):
        return False
    return (extend is None or runs_store.has(extend)
            or not needs_extension(runs_store.load(config), 1 / data.num_classes))


def train_parallel(store, runs: list[dict], data: TensorDataset, device: str, workers: int) -> None:
    """Train the not yet cached configs of ``runs`` (dicts with ``figs``, ``scale``, ``config``, ``problem`` and
    ``extend``, as :func:`fedlib.lab.hasfl.runs.train_plan.decided_runs` yields them) in ``workers`` processes (one
    torch thread each), in
    :data:`TRAIN_ORDER` (a config that several figures share takes its earliest group), costliest (most device
    samples x rounds) first within a group; identical configs once. A stored run that needs its extension
    (:func:`fedlib.lab.hasfl.runs.train_config.needs_extension`) is a job for that extension."""
    todo, runs_store = {}, AnyBackendRecords(store)
    for r in runs:
        key = runs_store.key(r["config"])
        prio = train_priority(r["figs"], r["scale"])
        if key in todo:
            todo[key]["priority"] = min(todo[key]["priority"], prio)
        elif not stored_run(runs_store, r["config"], r["extend"], data):
            todo[key] = dict(store=store, config=r["config"], problem=r["problem"], dataset=data.name,
                             device=device, extend=r["extend"], priority=prio)
    if todo:
        def cost(job):
            cfg = job["extend"] if runs_store.has(job["config"]) else job["config"]
            return -cfg["rounds"] * sum(cfg["b"])
        jobs = sorted(todo.values(), key=lambda job: (job["priority"], cost(job)))
        for job in jobs:
            del job["priority"]
        map_jobs(train_job, jobs, workers, desc="HASFL training runs (workers)")    # started in this order
