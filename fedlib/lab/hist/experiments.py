"""HIST experiments: cached sweeps (:func:`run_sweep`) and the summary rows of their records. The runs behind
Figs. 2-4 are built in the notebooks that run and draw them (``hist_1_experiments``, ``hist_2_figures``)."""
from __future__ import annotations

import functools
from concurrent.futures import Executor, as_completed
from typing import Callable

import numpy as np

from tqdm import tqdm

from fedlib.core.components import is_path
from fedlib.lab.store import RECORD_CODE, ResultStore, component_key, path_key
from fedlib.lab.parallel import torch_threads
from fedlib.lab import datasets as own_data
from fedlib.lab.own_components import load_own
from fedlib.data import TensorDataset, load_dataset
from fedlib.hist.config import HistConfig
from fedlib.hist.run import run_hist


STORE_CODE = ("fedlib.hist.config", "fedlib.hist.engine", "fedlib.hist.estimate", "fedlib.hist.model",
              "fedlib.hist.run", "fedlib.hist.sampling", "fedlib.hist.theory", *RECORD_CODE, "fedlib.core.components",
              "fedlib.data")
"""The source a HIST result depends on: the modules of ``fedlib.hist`` that compute records (runs:
:mod:`.run`, :mod:`.engine`, :mod:`.model`, :mod:`.sampling`, :mod:`.config`; the bounds' pilot
constants: :mod:`.estimate`, :mod:`.theory`), core's :data:`fedlib.lab.RECORD_CODE` and data. Editing them invalidates HIST's cached runs (and
nothing else does). The figure module (:mod:`.plots`), the literal test reference (:mod:`.reference`) and the
package's ``__init__`` (re-exports only) compute no record, so a figure edit redraws from the cache."""


def result_store(root: str | None = None) -> ResultStore:
    """The result store of HIST's runs: keys cover the config, the seed and the source of :data:`STORE_CODE`."""
    return ResultStore(root, code=STORE_CODE)


def _dataset(name: str) -> TensorDataset:
    """The dataset ``name``, loaded once per process (each executor worker loads its own copy from disk); a
    dataset of your own by import path through :func:`fedlib.lab.datasets.use_dataset` (each worker imports it)."""
    return own_data.dataset_by_name(name, _builtin_dataset)


@functools.lru_cache(maxsize=4)
def _builtin_dataset(name: str) -> TensorDataset:
    return load_dataset(name)


def _run_cached(cfg: HistConfig, store, device: str, force: bool, runner: Callable[..., dict],
                dataset: TensorDataset | None = None, threads: int = 1, progress: bool = False,
                runner_key: dict | None = None) -> dict:
    """One run through ``store`` on ``threads`` torch threads (module level, so that process pools and Dask
    workers can unpickle it); ``progress`` is the runner's own progress display. ``runner_key``: a runner of
    your own's :func:`fedlib.lab.store.component_key`, part of the record's config (None: :func:`run_hist`)."""
    ds = dataset if dataset is not None and dataset.name == cfg.dataset else _dataset(cfg.dataset)
    config = cfg.to_dict() if runner_key is None else {**cfg.to_dict(), "runner": runner_key}
    if is_path(cfg.setting):                          # a partition of your own: keyed by its path and source,
        load_own(cfg.setting, "setting")              # run from that source (imported again after an edit)
        config["partition"] = path_key(cfg.setting)
    config.update(own_data.dataset_key(cfg.dataset))  # a dataset of your own: likewise ({} for the built-ins)
    with torch_threads(threads):
        return store.get_or_run(config, functools.partial(runner, cfg, ds, device, progress), force=force)


def run_sweep(configs: list[HistConfig], store, dataset: TensorDataset | None = None, device: str = "auto",
              force: bool = False, progress: bool = True, runner: Callable[..., dict] = run_hist,
              executor: Executor | None = None, threads: int = 1) -> list[dict]:
    """Run every config through ``store`` (a :class:`fedlib.lab.ResultStore`); finished runs are cache hits.

    An interrupted sweep resumes where it stopped: each finished run was written atomically.

    Args:
        configs: the runs. store: the result store (the only state shared between workers). A config's dataset
            may be one of your own by import path ``"module:function"``: :func:`fedlib.lab.datasets.use_dataset`
            registers it before ``HistConfig(dataset=path)`` accepts it; each worker loads it by that path, and
            its records are keyed by its path and its module's source (:func:`fedlib.lab.datasets.dataset_key`).
        dataset: preloaded dataset used in-process (workers load their own from disk).
        device: ``"auto"``, ``"cpu"``, ``"cuda"`` for every run. force: recompute cached runs.
        progress: tqdm bar over runs (and over rounds when sequential).
        runner: ``runner(cfg, dataset, device, progress) -> record`` (default :func:`run_hist`). A runner of your
            own is keyed by its import path and the source of its module (:func:`fedlib.lab.store.component_key`):
            its records never stand in for :func:`run_hist`'s or another runner's, and editing its module
            computes new ones.
        executor: any ``concurrent.futures.Executor`` (a ``ProcessPoolExecutor``, or Dask's
            ``Client(...).get_executor()`` for a cluster whose workers share the store's folder); ``None`` runs
            the configs one after another in this process. Records do not depend on the executor: every run
            draws from its own seed streams on the CPU, on ``threads`` torch threads.
        threads: torch threads of every run, in this process and in each worker (>= 1; the caller's count is
            restored after each run). Pinned because a thread count chosen by the machine (torch's default, the
            BLAS library's dynamic threads on a loaded machine) may change the order of float sums, which the
            cache key does not see (the same rule as :func:`fedlib.lab.map_jobs`).

    Returns:
        The result records, in ``configs`` order.

    Raises:
        ValueError: a runner of your own that cannot be imported by its path (a lambda, a closure, one defined
            in a notebook): :func:`fedlib.lab.store.component_key`.
    """
    runner_key = None if runner is run_hist else component_key(runner, "runner")
    if executor is None:
        return [_run_cached(c, store, device, force, runner, dataset, threads, progress, runner_key)
                for c in tqdm(configs, desc="runs", disable=not progress)]
    futures = {executor.submit(_run_cached, c, store, device, force, runner, None, threads, False, runner_key): i
               for i, c in enumerate(configs)}
    out: list[dict | None] = [None] * len(configs)
    for fut in tqdm(as_completed(futures), total=len(futures), desc="runs", disable=not progress):
        out[futures[fut]] = fut.result()
    return out


def comm_to_target(record: dict, target_acc: float) -> float | None:
    """Per-client communication (L0) at the first global round whose test accuracy is >= ``target_acc``;
    ``None`` if the run never reaches it (HIST Fig. 3's y-axis). ``record``: a record of
    :func:`fedlib.hist.run_hist`; ``target_acc`` a fraction in (0, 1] (the notebook's checked parameter)."""
    for acc, comm in zip(record["test_acc"], record["comm_client_L0"]):
        if acc >= target_acc:
            return comm
    return None


def summarize(records: list[dict], target_acc: float) -> list[dict]:
    """One metrics row per record: method, setting, N, H, E, seed, final_test_acc, target_acc, comm_to_target,
    best_test_acc, comm_total_L0, global_rounds, elapsed_s (``records``: of :func:`fedlib.hist.run_hist`)."""
    rows = []
    for r in records:
        c = r["config"]
        rows.append({"method": c["method"], "setting": c["setting"], "N": c["num_cells"], "H": c["H"], "seed": c["seed"],
                     "E": c["E"], "global_rounds": c["global_rounds"], "final_test_acc": r["test_acc"][-1],
                     "best_test_acc": max(r["test_acc"]), "target_acc": target_acc,
                     "comm_to_target": comm_to_target(r, target_acc), "comm_total_L0": r["comm_client_L0"][-1],
                     "elapsed_s": r["elapsed_s"]})
    return rows


def seed_groups(records: list[dict]) -> list[list[dict]]:
    """Records grouped by their config without the seed, in first-seen order (one group = one curve with a band)."""
    groups: dict[str, list[dict]] = {}
    for r in records:
        key = repr(sorted((k, v) for k, v in r["config"].items() if k != "seed"))
        groups.setdefault(key, []).append(r)
    return list(groups.values())


def seed_band(group: list[dict], x: str, y: str = "test_acc") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x, mean, min, max)`` of ``y`` over the seeds of one group (their ``x`` values must agree).

    Raises:
        ValueError: the seeds' x values differ (not one curve).
    """
    xs = np.asarray(group[0][x], dtype=float)
    if any(not np.array_equal(np.asarray(r[x], dtype=float), xs) for r in group):
        raise ValueError(f"records of one group have different {x!r} values; they are not one curve")
    ys = np.asarray([r[y] for r in group], dtype=float)
    return xs, ys.mean(0), ys.min(0), ys.max(0)


def summarize_seeds(rows: list[dict]) -> list[dict]:
    """One row per config over its seeds (rows from :func:`summarize`): the seeds, ``final_test_acc`` mean /
    min / max / sd (population), ``comm_to_target`` mean / min / max over the seeds that reach the target and
    ``reached`` (how many of them do)."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in ("method", "setting", "N", "H", "E", "global_rounds")), []).append(r)
    out = []
    for (method, setting, n, h, e, rounds), g in groups.items():
        acc = np.array([r["final_test_acc"] for r in g])
        comm = [r["comm_to_target"] for r in g if r["comm_to_target"] is not None]
        out.append({"method": method, "setting": setting, "N": n, "H": h, "E": e, "global_rounds": rounds,
                    "seeds": [r["seed"] for r in g], "final_test_acc": float(acc.mean()),
                    "final_test_acc_min": float(acc.min()), "final_test_acc_max": float(acc.max()),
                    "final_test_acc_sd": float(acc.std()), "target_acc": g[0]["target_acc"],
                    "comm_to_target": float(np.mean(comm)) if len(comm) == len(g) else None,
                    "comm_to_target_min": min(comm) if comm else None,
                    "comm_to_target_max": max(comm) if len(comm) == len(g) else None, "reached": len(comm)})
    return out
