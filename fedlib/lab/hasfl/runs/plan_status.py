"""Where a HASFL training plan stands in its result store, without training anything
(``python -m fedlib.lab.hasfl.runs.plan_status --profile converged``).

The ``converged`` profile is hours of training on 2 cores, longer than one sitting; it resumes from the records
in its store (``figures/converged/store/``, tracked in git). This module answers, for a profile: which of the
plan's distinct training runs are stored, in the order :func:`fedlib.lab.hasfl.runs.train_plan.run_plan` trains them
(:data:`fedlib.lab.hasfl.runs.train_plan.TRAIN_ORDER`), how much worker time the stored ones took, and the converged time and
accuracy (the paper's rule) of every stored run. It builds the :class:`TrainSettings` and :class:`TrainPlan` of a
profile from the notebooks' parameters (:func:`settings_and_plan`), as ``hasfl_4_train_experiments``'s design cell
builds them (a test holds the two equal), so that this report and the notebooks describe one plan.

Decisions need the pilot constants (a pilot run when they are not stored yet: about a minute per model); the
calibrated runs are decided only when every IID calibration run of their model is stored (the fit would otherwise
train them) and are listed as ``waits for calibration`` before that.
"""
from __future__ import annotations

import ast
import json
import warnings
from pathlib import Path

from fedlib.lab.cli import ArgumentParser, committed_folder, store_dir
from fedlib.lab.paths import PROFILES, REPO_ROOT, committing, use_profile
from fedlib.lab.store import cache_only
from fedlib.core.validate import check_choice, check_float
from fedlib.data import TensorDataset, load_dataset
from fedlib.split import time_to_target
from fedlib.lab.hasfl.runs.experiments import resolve_dataset, result_store
from fedlib.lab.hasfl.runs.train_jobs import TRAIN_ORDER, stored_run, train_priority
from fedlib.lab.hasfl.runs.train_plan import TrainPlan, _check_inputs, decided_runs, calibrated_models, calibration_runs
from fedlib.lab.hasfl.runs.train_run import AnyBackendRecords
from fedlib.lab.hasfl.runs.train_config import train
from fedlib.lab.hasfl.runs.training import TrainSettings

NOTEBOOK = REPO_ROOT / "notebooks" / "hasfl" / "hasfl_4_train_experiments.ipynb"
"""The notebook whose parameters define the training plan (``hasfl_5_train_figures`` declares the same ones)."""

GROUP_NAMES = tuple("/".join(g) for g in TRAIN_ORDER) + ("other",)


def settings_and_plan(p: dict, dataset: str) -> tuple[TrainSettings, TrainPlan]:
    """The :class:`TrainSettings` (first model) and :class:`TrainPlan` of the training notebooks' parameters ``p``
    (the names of ``hasfl_4_train_experiments``'s parameters cell; ``dataset`` already resolved by
    :func:`fedlib.lab.hasfl.runs.experiments.resolve_dataset`). Optional parts are switched by ``sweep`` and
    ``calibrate_later_models``.

    Raises:
        KeyError: a parameter is missing from ``p``. ValueError / TypeError: as :class:`TrainSettings` and
        :class:`TrainPlan` (naming the field).
    """
    s = TrainSettings(model=p["models"][0], width=p["widths"][0], dataset=dataset, interval=p["interval"],
                      optimizer=p["optimizer"], lr=p["lr"], epochs=p["epochs"], min_rounds=p["min_rounds"],
                      max_rounds=p["max_rounds"], evals=p["evals"], test_subset=p["test_subset"], gamma=p["gamma"],
                      pilot_steps=p["pilot_steps"], pilot_lr=p["pilot_lr"], pilot_batch=p["pilot_batch"],
                      num_batches=p["num_batches"], power_iters=p["power_iters"], constants=p["constants"],
                      eps_mode=p["eps_mode"], eps_factor=p["eps_factor"],
                      stop_at_convergence=p["stop_at_convergence"], extend_epochs=p["extend_epochs"])
    plan = TrainPlan(settings=tuple(p["settings"]), num_devices=p["num_devices"], batch_grid=tuple(p["batch_grid"]),
                     fixed_cut=p["fixed_cut"], cut_grid=tuple(p["cut_grid"]), fixed_batch=p["fixed_batch"],
                     models=tuple(p["models"]), widths=tuple(p["widths"]), device_counts=tuple(p["device_counts"]),
                     n_methods=tuple(p["n_methods"]), fig9_settings=tuple(p["fig9_settings"]),
                     fig9_draws=p["fig9_draws"],
                     sweep_factors=tuple(p["sweep_factors"]) if p["sweep"] else (),
                     sweep_methods=tuple(p["sweep_methods"]), calibrate_variance=p["calibrate_variance"],
                     model_cut_grids=(tuple(tuple(g) for g in p["model_cut_grids"])
                                      if p["calibrate_later_models"] else ()))
    return s, plan


def profile_parameters(profile: str, notebook: Path = NOTEBOOK) -> dict:
    """Every parameter of ``notebook`` at ``profile``: its parameters cell's defaults updated by the profile's files
    (:func:`fedlib.lab.notebooks.notebook_parameters`).

    Raises:
        ValueError: unknown profile, or one with no HASFL file.
    """
    from fedlib.lab.notebooks import PROFILES, notebook_parameters
    import papermill as pm

    check_choice("profile", profile, PROFILES)
    params = {name: ast.literal_eval(v["default"]) for name, v in pm.inspect_notebook(str(notebook)).items()}
    params.update(notebook_parameters(notebook, profile))
    return params


def _calibration_stored(store, s: TrainSettings, plan: TrainPlan, runs: list[dict], data: TensorDataset) -> bool:
    """Every IID calibration run of every calibrated model (:func:`calibration_runs`) is among ``runs`` and stored
    (with its extension when it needs one)."""
    rs, want = AnyBackendRecords(store), set()
    for k in calibrated_models(plan):
        model, width = plan.models[k], plan.widths[k]
        want |= {(model, width, b, c) for b, c in calibration_runs(plan, k)}
    have = {(r["sm"].model, r["sm"].width, r["batch"], r["cut"]) for r in runs
            if r["setting"] == "iid" and r["method"] == "fixed" and r["scale"] is None
            and r["n"] == plan.num_devices and stored_run(rs, r["config"], r["extend"], data)}
    return want <= have


def plan_progress(store, s: TrainSettings, plan: TrainPlan, seeds: list[int], target_acc: float,
                  target_acc_noniid: float, data: TensorDataset, device: str = "cpu") -> list[dict]:
    """One row per distinct training run of ``plan`` (a config that several figures share once, under its first
    :data:`TRAIN_ORDER` group), in training order: ``group``, ``figures``, ``method``, ``model``, ``setting``,
    ``N``, ``draw`` (Fig. 9's draw of a random benchmark, else 0), ``scale``, ``b_mean``, ``cut_max``, ``stored``
    (bool) and, when stored, ``worker_s`` (the run's wall time, s), ``epochs``, ``rounds``, ``converged_time_s``
    (simulated s, the paper's rule; None if it never fired), ``converged_acc``, ``time_to_target_s`` (the setting's target). The calibrated runs are one row
    ``waits for calibration`` per (model, setting) until their calibration runs are stored.

    Raises:
        ValueError / TypeError: as :func:`fedlib.lab.hasfl.runs.train_plan.run_plan`.
    """
    _check_inputs(store, s, plan, data)
    check_float("target_acc", target_acc, 0, 1, low_open=True)
    check_float("target_acc_noniid", target_acc_noniid, 0, 1, low_open=True)
    rs = AnyBackendRecords(store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = list(decided_runs(store, s, plan, seeds, target_acc, data, device, which="plain"))
        waiting = not _calibration_stored(store, s, plan, runs, data)
        if not waiting:
            runs += list(decided_runs(store, s, plan, seeds, target_acc, data, device, which="calibrated"))
    rows: dict = {}
    for r in runs:
        key, prio = rs.key(r["config"]), train_priority(r["figs"], r["scale"])
        if key in rows:
            rows[key]["priority"] = min(rows[key]["priority"], prio)
            rows[key]["figures"] = ",".join(dict.fromkeys(rows[key]["figures"].split(",") + list(r["figs"])))
            continue
        d = r["decision"]
        row = dict(priority=prio, figures=",".join(r["figs"]), method=r["method"], model=r["sm"].model,
                   setting=r["setting"], N=r["n"], draw=r["draw"], scale=None if not r["scale"] else f"{r['scale'][0][0]} x {r['scale'][0][1]:g}",
                   b_mean=sum(d["b"]) / len(d["b"]), cut_max=max(d["cuts"]),
                   stored=stored_run(rs, r["config"], r["extend"], data))
        if row["stored"]:
            rec = train(store, r["config"], r["problem"], data, device, r["extend"])   # cache hits, clock applied
            tgt = target_acc if r["setting"] == "iid" else target_acc_noniid
            row.update(worker_s=rec["elapsed_s"] + rec.get("capped_elapsed_s", 0.0), epochs=rec["epoch"][-1], rounds=rec["round"][-1],
                       converged_time_s=rec["converged_time_s"], converged_acc=rec["converged_acc"],
                       time_to_target_s=time_to_target(rec, tgt))
        rows[key] = row
    out = sorted(rows.values(), key=lambda row: row["priority"])
    if waiting:
        for k, model in enumerate(plan.models):
            for setting in plan.settings:
                out.append(dict(priority=0, figures="fig5,fig6,fig10,fig11", method="calibrated variants",
                                model=model, setting=setting, N=plan.num_devices, stored=False,
                                note="waits for calibration"))
    for row in out:
        row["group"] = GROUP_NAMES[row.pop("priority")]
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m fedlib.lab.hasfl.runs.plan_status [--profile converged] [--store DIR] [--json FILE]``: print the plan's
    progress (one line per distinct run, then per group stored / total and worker time). The store defaults to
    the profile's, as a notebook's (:mod:`fedlib.lab.paths`): ``$FEDLIB_CACHE_DIR``, else ``.cache/results`` read
    before the committed ``figures/<profile>/store`` (the committed store alone with ``FEDLIB_COMMIT=1``)."""
    from fedlib.lab.plotting import format_table

    ap = ArgumentParser(prog="python -m fedlib.lab.hasfl.runs.plan_status", description=main.__doc__)
    ap.add_argument("--profile", default="converged", choices=PROFILES)
    ap.add_argument("--store", type=store_dir, default=None,
                    help="result store folder (an existing one, holding only records; a committed store under "
                         "figures/ only with FEDLIB_CACHE_ONLY=1 or FEDLIB_COMMIT=1: without --store the profile's "
                         "is read)")
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file (in an existing folder "
                                                 "outside the committed ones)")
    a = ap.parse_args(argv)
    if a.json is not None and (not a.json.strip() or Path(a.json).is_dir() or not Path(a.json).parent.is_dir()):
        ap.error(f"argument --json: must name a file in an existing folder, got {a.json!r}")
    if a.json is not None and committed_folder(Path(a.json).parent):
        ap.error(f"argument --json: {a.json} is in {committed_folder(Path(a.json).parent)}, a committed folder; "
                 f"name a file of your own")
    if a.store is not None and committed_folder(a.store) and not committing() and not cache_only():
        # a pilot or decision the store lacks is computed and written into --store
        ap.error(f"argument --store: {a.store} is in {committed_folder(a.store)}, a committed folder, which this "
                 f"command would write; without --store it reads the profile's committed store and writes new "
                 f"records to .cache/results (FEDLIB_CACHE_ONLY=1 reads it alone and computes nothing; "
                 f"FEDLIB_COMMIT=1 writes it)")
    try:
        p = profile_parameters(a.profile)
    except ValueError as exc:
        ap.error(f"argument --profile: {exc}")
    use_profile(a.profile)                 # the store follows the profile, as in the notebooks (fedlib.lab.paths)
    store = result_store(a.store)
    dataset = resolve_dataset(p["dataset"], p["models"][0])
    s, plan = settings_and_plan(p, dataset)
    rows = plan_progress(store, s, plan, p["seeds"], p["target_acc"], p["target_acc_noniid"], load_dataset(dataset))
    print(format_table(rows, ["group", "figures", "method", "model", "setting", "N", "draw", "scale", "b_mean", "cut_max",
                              "stored", "worker_s", "epochs", "converged_time_s", "converged_acc", "time_to_target_s",
                              "note"]))
    print()
    summary = []
    for g in GROUP_NAMES:
        mine = [r for r in rows if r["group"] == g]
        if mine:
            summary.append(dict(group=g, stored=sum(r["stored"] for r in mine), runs=len(mine),
                                worker_min=sum(r.get("worker_s") or 0 for r in mine) / 60))
    print(format_table(summary, ["group", "stored", "runs", "worker_min"]))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
