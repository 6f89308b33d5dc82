"""The runs cell of ``notebooks/hasfl/hasfl_4_train_experiments.ipynb`` as one function, for tests that drive a
whole HASFL training plan (with training replaced by hand-made records, ``monkeypatch.setattr(train_plan,
"train", ...)``): every run of :func:`fedlib.lab.hasfl.runs.train_plan.decided_runs` trained through the store
and read into its metrics row, as the notebook reads it."""
from __future__ import annotations

from fedlib.lab.hasfl.runs import train_plan


def run_plan(store, s, plan, seeds, target_acc, data, device="auto", progress=False, calibration_target=None,
             workers=1, fit_seed=None, only_figures=()) -> list[dict]:
    """One entry per (run, seed) of ``plan``: ``row`` (:func:`fedlib.lab.hasfl.runs.train_plan.decision_row`),
    ``decision`` and ``curve`` (``epoch``, ``sim_s``, ``round``, ``test_acc``). ``calibration_target``: the target
    the calibrated decisions are fitted at (default ``target_acc``); ``workers`` > 1 trains the missing runs first
    in worker processes (:func:`fedlib.lab.hasfl.runs.train_plan.train_in_workers`)."""
    calibration_target = target_acc if calibration_target is None else calibration_target
    args = (store, s, plan, list(seeds), calibration_target, data, device)
    extra = dict(fit_seed=fit_seed, only_figures=tuple(only_figures))
    if workers > 1:
        train_plan.train_in_workers(*args, workers, **extra)
    out = []
    for r in train_plan.decided_runs(*args, **extra):
        record = train_plan.train(store, r["config"], r["problem"], data, device, r["extend"])
        row = train_plan.decision_row(record, r["problem"], r["decision"], target_acc, r["figs"], r["method"],
                                      r["sm"], r["setting"], r["batch"], r["cut"], r["draw"], r["ss"].constants,
                                      r["scale"], r["fit"])
        out.append({"row": row, "decision": r["decision"],
                    "curve": {k: record[k] for k in ("epoch", "sim_s", "round", "test_acc")}})
    return out
