"""DTFL's comparison runs as jobs, for the tests: one method's run of a setting (DTFL with its scheduler or one of
yours, a built-in baseline, a baseline of your own) from its :class:`fedlib.lab.dtfl.experiments.Setup`, its system
simulated and its training through the store, as one call a process pool can run (:func:`fedlib.lab.map_jobs`).

The notebooks do not call these: ``dtfl_5_baselines``, ``dtfl_6_scaling`` and ``dtfl_your_method`` build the same runs
in their own cells (the configs, the systems, then ``train_record`` / ``baseline_record`` / ``own_record`` through
the store by the keys of :mod:`fedlib.lab.dtfl.experiments` and :mod:`fedlib.lab.dtfl.compare`). The tests use
these to run one method of a setting in a worker process, by its import path, the same way every time. Moved from
``fedlib.lab.dtfl.compare`` on 2026-12-08 (issue 68: the lab holds no orchestration the notebooks do not use)."""
from __future__ import annotations

import functools
import time

from fedlib.core.components import is_path, resolve
from fedlib.core.validate import ParameterTypeError, check_choice
from fedlib.data import TensorDataset
from fedlib.dtfl.baselines import baseline_record
from fedlib.dtfl.scheduler import TierScheduler
from fedlib.lab.dtfl.compare import (METHODS, TRAINED_AS, baseline_key, baseline_row, baseline_system, check_baseline,
                                     own_baseline_key, own_record)
from fedlib.lab.dtfl.experiments import Setup, dataset_by_name, run_entry
from fedlib.lab.store import ResultStore, component_key


def baseline_entry(store: ResultStore, s: Setup, data: TensorDataset, method: str, setting: str, seed: int,
                   target_acc: float, case: str = "all", change_every: int = 0, change_frac: float = 0.3,
                   fraction: float = 1.0, device: str = "cpu") -> dict:
    """One baseline run: its simulated system (the setting's, :func:`fedlib.lab.dtfl.experiments.system_inputs`) and its training through
    ``store`` (:func:`fedlib.lab.dtfl.compare.baseline_key`); returns ``{"row", "record", "sim"}`` with the row of :func:`fedlib.lab.dtfl.compare.baseline_row`."""
    check_choice("method", method, METHODS[1:])
    t0 = time.perf_counter()
    sim, part = baseline_system(s, data, method, setting, seed, case, change_every, change_frac, fraction)
    cfg = s.config(setting, seed)
    store, config, backend = baseline_key(store, cfg, method, s.rounds, part, device)
    rec = store.get_or_run(config, functools.partial(baseline_record, cfg, data, TRAINED_AS.get(method, method),
                                                     s.rounds, part, device, backend))
    row = baseline_row(rec, sim, cfg, method, setting, target_acc, t0, case, fraction)
    return {"row": row, "record": rec, "sim": sim}


def compare_job(store: ResultStore, s: Setup, method, **kwargs) -> dict:
    """One method's run for a setting (a job for :func:`fedlib.lab.map_jobs`): DTFL through
    :func:`fedlib.lab.dtfl.experiments.run_entry` (``num_tiers`` default 7; ``method`` an import path
    ``"package.module:Class"`` naming a :class:`fedlib.dtfl.TierScheduler` subclass: DTFL with that scheduler of
    your own), a built-in baseline through :func:`baseline_entry`, and a baseline of your own (``method`` an import
    path ``"package.module:function"``, or the function itself when it can be imported by its path) through
    :func:`own_baseline_entry`. Each worker imports a component of yours by its path; the dataset of ``s`` is loaded
    by name.

    Raises:
        ValueError / ParameterTypeError: a path that does not import, or names neither a TierScheduler subclass
            nor a function; a function workers cannot import (a lambda, a closure: define it at the top level of
            a module of your own); as the entries (naming the parameter), before any work."""
    if callable(method) and not isinstance(method, str):          # the function itself: by its import path
        method = component_key(method, "method")["path"]
    if is_path(method):
        obj = resolve(method, "method", METHODS)
        if isinstance(obj, type) and not issubclass(obj, TierScheduler):
            raise ParameterTypeError(f"method {method!r} must name a fedlib.dtfl.TierScheduler subclass (a scheduler "
                                     f"of your own) or a function (a baseline of your own), got class {obj!r}")
    data = dataset_by_name(s.dataset)
    if method in ("dtfl", "dtfl_authors") or (is_path(method) and isinstance(obj, type)):   # yours: DTFL with it
        kwargs.setdefault("num_tiers", 7)
        scheduler = {"dtfl": "ours", "dtfl_authors": "authors"}.get(method, method)
        return run_entry(store, s, data, scheduler=scheduler, **kwargs)
    if is_path(method):
        return own_baseline_entry(store, s, data, method, **kwargs)
    return baseline_entry(store, s, data, method, **kwargs)


def own_baseline_entry(store: ResultStore, s: Setup, data: TensorDataset, baseline: str, setting: str, seed: int,
                       target_acc: float, case: str = "all", change_every: int = 0, change_frac: float = 0.3,
                       fraction: float = 1.0, device: str = "cpu", charged_as: str = "fedavg") -> dict:
    """One run of a baseline of your own: ``baseline`` = ``"package.module:function"`` names ``fn(cfg, data,
    rounds, participants, device, backend)``, called with what the built-in baselines are computed from
    (:func:`fedlib.dtfl.baselines.baseline_record`): ``cfg`` the setting's :class:`fedlib.dtfl.DtflConfig`
    (model, clients, batch, Adam lr, partition, seed), ``data`` the :class:`fedlib.data.TensorDataset` (``cfg``'s
    subsets not yet applied), ``rounds`` = R, ``participants`` ``[R, K]`` bools or None (all clients), ``device``
    and the split engine's ``backend`` (``"loop"`` / ``"stacked"``). It returns a record as
    :func:`fedlib.dtfl.run_baseline` does (:func:`fedlib.lab.dtfl.compare.check_record`; built from the public ``fedlib.dtfl`` functions,
    e.g. ``run_baseline``, ``run_engine``). Its system is that of the same setting
    (:func:`fedlib.lab.dtfl.compare.baseline_system`) charged as the built-in baseline ``charged_as`` (default FedAvg's: every client
    trains the whole model; the time model never enters the record).

    The record's key holds ``baseline``'s path and the hash of its module's source
    (:func:`fedlib.lab.own_components.load_own`: the module imported again after an edit), so an edit re-keys its
    records only and two functions never share one. Returns ``{"row", "record", "sim"}``: the row of
    :func:`baseline_entry` with ``method`` the path, ``charged_as`` and ``baseline_code``.

    Raises:
        ValueError / ParameterTypeError: as :func:`fedlib.lab.dtfl.compare.check_baseline` and :func:`fedlib.lab.dtfl.compare.baseline_system`, before any work;
            as :func:`fedlib.lab.dtfl.compare.check_record` after the run, before anything is stored."""
    check_baseline(baseline, "method")
    check_choice("charged_as", charged_as, METHODS[1:])
    t0 = time.perf_counter()
    sim, part = baseline_system(s, data, charged_as, setting, seed, case, change_every, change_frac, fraction)
    cfg = s.config(setting, seed)
    store, config, backend = own_baseline_key(store, cfg, baseline, s.rounds, part, device)
    rec = store.get_or_run(config, functools.partial(own_record, baseline, cfg, data, s.rounds, part, device, backend))
    row = dict(baseline_row(rec, sim, cfg, baseline, setting, target_acc, t0, case, fraction), charged_as=charged_as,
               baseline_code=config["baseline"]["code"])
    return {"row": row, "record": rec, "sim": sim}
