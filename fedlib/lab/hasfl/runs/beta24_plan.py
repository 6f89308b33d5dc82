"""HASFL decided under [24]'s β (:mod:`fedlib.hasfl.bound.beta24`) and its training runs.

The decisions' β is the Hessian's (:mod:`fedlib.hasfl.bound.estimate`). Here [24]'s β, measured on a federated
pilot of the first model over the training runs' device partition of each data setting (:func:`beta24_record`),
replaces it in the pilot constants (σ_j², G_j², ϑ unchanged), C1's ε follows the notebooks' rule on those constants
(ε moves with β, as in :func:`fedlib.lab.hasfl.runs.plan_analysis.decisions_by_beta`), and HASFL (BCD) decides on
the Table I system of the seed (:func:`beta24_decisions`). :func:`beta24_runs` trains that decision where it
differs from HASFL's decision under the Hessian β (Fig. 5's HASFL run under the pilot constants); where b and cuts
are the same the run would be that one, so nothing is trained and the row says so.

Choices (ours; the notebook's Deviations): the pilot runs ``ceil(pilot_steps / interval)`` rounds (at least 1),
so that each device takes about as many local SGD steps as the Hessian pilot's SGD steps, at the Hessian
pilot's step size and batch size (``pilot_lr``, ``pilot_batch``); the moving average's holding parameter is
[24]'s default, :data:`HOLDING` = 0.0, so the last round's D_i-weighted node average decides (the value [24]'s
controller would hold at the pilot's end). One β per data setting: the non-IID nodes' local losses differ, and so
does [24]'s β, while the Hessian β is one for both settings.
"""
from __future__ import annotations

import math
from dataclasses import replace

from fedlib.lab.store import ResultStore
from fedlib.data import TensorDataset
from fedlib.split import time_to_target
from fedlib.hasfl.bound.theory import HasflConstants, bound_floor, rounds_needed
from fedlib.lab.hasfl.runs.experiments import beta24_config, estimated_beta24
from fedlib.lab.hasfl.runs.train_config import extension_config, run_config, summary_row, train
from fedlib.lab.hasfl.runs.train_jobs import _train_parallel
from fedlib.lab.hasfl.runs.training import TrainSettings, bound_constants, decide, floors_by_cut, pilot, target_eps, training_problem

#: the moving average's holding parameter of the deciding β: [24]'s ``config.py`` default (module docstring)
HOLDING = 0.0
#: the method name of a run decided under [24]'s β
METHOD = "HASFL-beta24"


def beta24_rounds(s: TrainSettings) -> int:
    """The federated pilot's rounds: ``ceil(s.pilot_steps / s.interval)``, at least 1 (module docstring)."""
    return max(1, math.ceil(s.pilot_steps / s.interval))


def beta24_record(store: ResultStore, s: TrainSettings, setting: str, num_devices: int, seed: int,
                  data: TensorDataset | None = None, holding: float = HOLDING) -> dict:
    """The cached [24] β record (:func:`fedlib.lab.hasfl.runs.experiments.estimated_beta24`) of ``s``'s model and width
    on ``num_devices`` devices holding the training runs' partition of ``setting``, :func:`beta24_rounds` rounds of
    ``s.interval`` local steps at ``s.pilot_lr`` and ``s.pilot_batch``."""
    cfg = beta24_config(s.model, s.dataset, setting, num_devices, s.shards_per_client, s.interval, beta24_rounds(s),
                        s.pilot_lr, s.pilot_batch, holding, seed, s.width)
    return estimated_beta24(store, cfg, data)


def _decided(store, s, settings, num_devices, seed, data, holding):
    """Per setting: (row, problem, decision or None) under [24]'s β, and HASFL's decision under the Hessian β."""
    s = replace(s, constants="pilot")
    rec = pilot(store, s, seed, data)
    base = bound_constants(rec, "pilot")
    try:
        today = decide(training_problem(s, base, target_eps(rec, base, s, num_devices), num_devices, seed), "HASFL",
                       seed)
    except ValueError:                      # no decision under the Hessian β: nothing to compare with
        today = {"b": None, "cuts": None}
    out = []
    for setting in settings:
        b24 = beta24_record(store, s, setting, num_devices, seed, data, holding)
        rounds = f"{b24['rounds']} round{'s' if b24['rounds'] > 1 else ''}"
        row = {"beta_estimator": f"[24], {setting} (p = {holding:g}, {rounds})", "setting": setting,
               "beta": b24["beta"], "note": None}
        problem = decision = None
        try:
            consts = HasflConstants(b24["beta"], base.sigma2, base.G2, base.vartheta)
            problem = training_problem(s, consts, target_eps(rec, consts, s, num_devices), num_devices, seed)
            row.update(eps=problem.eps, floor_cut1=floors_by_cut(problem, 64)[0])
            decision = decide(problem, "HASFL", seed)
            row.update(b_mean=sum(decision["b"]) / len(decision["b"]), cuts=sorted(set(decision["cuts"])),
                       theta=decision["theta"])
            if (decision["b"], decision["cuts"]) == (today["b"], today["cuts"]):
                row["note"] = "same b and cuts as under the Hessian β (Fig. 5's HASFL run)"
        except ValueError as err:
            row.update(b_mean=None, cuts=None, theta=None, unreachable=str(err).split("\n")[0][:160])
            decision = None
        out.append((row, problem, decision))
    return out


def beta24_decisions(store: ResultStore, s: TrainSettings, settings: list[str], num_devices: int, seed: int,
                     data: TensorDataset, holding: float = HOLDING) -> list[dict]:
    """HASFL's decision under [24]'s β of each data setting (module docstring), rows beside
    :func:`fedlib.lab.hasfl.runs.plan_analysis.decisions_by_beta`'s.

    Returns:
        One row per setting: ``beta_estimator`` (``"[24], <setting> (p = <holding>, <R> rounds)"``), ``setting``,
        ``beta`` ([24]'s deciding value), ``eps``, ``floor_cut1``, ``b_mean``, ``cuts`` (sorted distinct),
        ``theta`` (predicted Θ, s), ``note`` (says when b and cuts equal the decision under the Hessian β, else
        None), or
        ``unreachable`` (the optimiser's message).
    """
    return [row for row, _, _ in _decided(store, s, settings, num_devices, seed, data, holding)]


def beta24_runs(store: ResultStore, s: TrainSettings, settings: list[str], targets: dict, num_devices: int,
                seed: int, data: TensorDataset, device: str = "auto", workers: int = 1,
                holding: float = HOLDING) -> list[dict]:
    """Train HASFL decided under [24]'s β in each data setting where that decision differs from the one under
    the Hessian β (module docstring), through ``store`` (cache hits when trained; the extension as the plan's runs,
    :func:`fedlib.lab.hasfl.runs.train_config.extension_config`).

    Args:
        s: the plan's settings of the first model (its training settings are the runs'). settings: data settings.
        targets: the target accuracy of each setting (``{"iid": ..., "noniid": ...}``). workers: > 1 trains the
            runs not yet stored in that many processes first (:func:`fedlib.lab.hasfl.runs.train_jobs._train_parallel`).

    Returns:
        One row per setting: :func:`beta24_decisions`' row, and for a trained run
        :func:`fedlib.lab.hasfl.runs.train_config.summary_row` (``method`` = :data:`METHOD`, ``model``, ``width``,
        ``setting``, ``N``, ``eps``, ``floor``, ``rounds_pred``, ``rounds_to_target``, the decision's summary and
        the run's times and accuracies); an untrained row has ``note`` saying why (same decision, or ε unreachable).
    """
    decided = _decided(store, s, settings, num_devices, seed, data, holding)
    jobs = []
    for row, problem, decision in decided:
        if decision is not None and not row["note"]:
            config = run_config(s, row["setting"], decision, seed, len(data.y_train))
            jobs.append(dict(figs=("fig5",), scale=None, config=config, problem=problem,
                             extend=extension_config(s, config, len(data.y_train))))
    if workers > 1 and jobs:
        _train_parallel(store, jobs, data, device, workers)
    out, todo = [], iter(jobs)
    for row, problem, decision in decided:
        if decision is None or row["note"]:
            out.append(dict(row, method=METHOD, model=s.model, width=s.width, N=num_devices,
                            note=row["note"] or "not trained: " + row.get("unreachable", "no decision")))
            continue
        job = next(todo)
        record = train(store, job["config"], problem, data, device, job["extend"])
        target = targets[row["setting"]]
        pred = (rounds_needed(problem.constants, problem.gamma, decision["b"], decision["cuts"], problem.interval,
                              problem.eps) if decision["theta"] is not None else None)
        out.append(summary_row(record, decision, target, method=METHOD, model=s.model, width=s.width,
                               setting=row["setting"], N=num_devices, cuts=row["cuts"], beta_estimator=row["beta_estimator"],
                               beta=row["beta"], eps=problem.eps, note="trained", rounds_pred=pred,
                               floor=float(bound_floor(problem.constants, problem.gamma, decision["b"],
                                                       max(decision["cuts"]), problem.interval)),
                               rounds_to_target=time_to_target(record, target, key="round")))
    return out
