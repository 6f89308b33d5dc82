"""fedlib.lab.hasfl.runs.plan_status: the notebooks' plan from their parameters, and the progress report of a store, with
training replaced by hand-made records (as tests/test_hasfl_calibrate.py)."""

import json

import pytest

from fedlib.lab.hasfl.runs import plan_status, train_plan
from fedlib.lab.hasfl.runs.train_plan import TrainPlan
from fedlib.lab.hasfl.runs.training import TrainSettings
from tests.test_hasfl_calibrate import DATA, PLAN, S, Store, _fake, fake_calibrated_decisions


def test_converged_profile_builds_the_plan_the_profile_file_states():
    p = plan_status.profile_parameters("converged")
    s, plan = plan_status.settings_and_plan(p, "fashion-mnist")
    assert (s.model, s.width, s.epochs, s.evals, s.test_subset, s.stop_at_convergence) == ("vgg16", 0.25, 3.0, 40, 2000, True)
    assert s.extend_epochs == 6.0                                          # runs the rule has not stopped: to 6 epochs
    assert plan.num_devices == 20 and plan.models == ("vgg16", "resnet18") and plan.widths == (0.25, 0.125)
    assert plan.fig9_settings == ("iid", "noniid") and plan.device_counts == (5, 10, 20)
    assert plan.sweep_factors == (0.25, 4.0) and plan.model_cut_grids == ((2, 4, 6, 8),)
    assert (p["target_acc"], p["target_acc_noniid"], p["workers"]) == (0.86, 0.67, 2)
    # the switches: off means no sweep and no later-model calibration, whatever the lists hold
    _, plan = plan_status.settings_and_plan(dict(p, sweep=False, calibrate_later_models=False), "fashion-mnist")
    assert plan.sweep_factors == () and plan.model_cut_grids == ()
    with pytest.raises(ValueError, match="profile"):
        plan_status.profile_parameters("slow")


@pytest.mark.parametrize("name", ["hasfl_4_train_experiments", "hasfl_5_train_figures"])
def test_the_notebooks_design_cell_builds_the_plan_this_report_reads(name):
    # hasfl_4 and hasfl_5 build their TrainSettings / TrainPlan in a visible cell; this report from the same parameters
    nb = json.loads((plan_status.NOTEBOOK.parent / f"{name}.ipynb").read_text())
    cell = next("".join(c["source"]) for c in nb["cells"] if "plan = TrainPlan(" in "".join(c["source"]))
    for profile in ("smoke", "converged"):
        p = plan_status.profile_parameters(profile)
        for switches in ({}, dict(sweep=False, calibrate_later_models=False)):   # converged: both on, then off
            ns = dict(p, **switches, dataset="fashion-mnist", TrainSettings=TrainSettings, TrainPlan=TrainPlan)
            exec(cell, ns)
            assert (ns["settings_"], ns["plan"]) == plan_status.settings_and_plan(dict(p, **switches), "fashion-mnist")


def test_progress_lists_each_distinct_run_once_in_training_order_and_waits_for_the_calibration(monkeypatch):
    configs, _ = _fake(monkeypatch, {2: 20, 8: 30})
    fake_calibrated_decisions(monkeypatch)                                 # calibrated decisions: b = 5
    store = Store()
    monkeypatch.setattr(plan_status, "AnyBackendRecords", lambda s: s)
    fake_train = train_plan.train                                          # the fake's hand-made records
    monkeypatch.setattr(plan_status, "train", lambda *a: dict(fake_train(*a), elapsed_s=7.0))
    rows = plan_status.plan_progress(store, S, PLAN, [0], 0.6, 0.45, DATA)
    assert not any(r["stored"] for r in rows)
    waiting = [r for r in rows if r.get("note") == "waits for calibration"]
    assert [(r["model"], r["setting"]) for r in waiting] == [("vgg16", "iid"), ("vgg16", "noniid")]
    plain = [r for r in rows if r not in waiting]
    groups = [plan_status.GROUP_NAMES.index(r["group"]) for r in plain]
    assert groups == sorted(groups) and plain[0]["group"] == "fig5/fig6"
    # Fig. 9's N = 3 HASFL run is Fig. 5's run (N = 3 here): one row, under Fig. 5's group, with both tags
    shared = [r for r in plain if r["method"] == "HASFL" and r["setting"] == "iid"]
    assert len(shared) == 1 and shared[0]["group"] == "fig5/fig6" and "fig9" in shared[0]["figures"]
    keys = {store.key(r["config"]) for r in train_plan.decided_runs(store, S, PLAN, [0], 0.6, DATA, "cpu", "plain")}
    assert len(plain) == len(keys) == 10                                   # each distinct config once
    assert not configs                                                     # nothing trained

    store.done |= keys                                                     # every plain run stored
    rows = plan_status.plan_progress(store, S, PLAN, [0], 0.6, 0.45, DATA)
    calibrated = [r for r in rows if r["b_mean"] == 5]                      # decided from the stored fit, not stored
    assert not any(r["stored"] or r.get("note") for r in calibrated)
    # per setting: HABS-calibrated (b 5 at cut 8) and HAMS-calibrated (b 5 at cut 1), whose config HASFL-calibrated
    # shares here (the fake decides alike), so that row moves to Fig. 5's group with both tags
    assert sorted((r["setting"], r["method"], r["group"], r["figures"]) for r in calibrated) == [
        (st, m, g, f) for st in ("iid", "noniid") for m, g, f in
        (("HABS-calibrated", "fig10/fig11", "fig10"), ("HAMS-calibrated", "fig5/fig6", "fig11,fig5,fig6"))]
    stored = [r for r in rows if r["stored"]]
    assert len(stored) == len(keys) and len(rows) == len(keys) + 4
    # the fake record reaches 0.7 at round 20 (sim 2 s) for every non-fixed run: target 0.6 / 0.45 at 2.0 s
    assert all(r["time_to_target_s"] == 2.0 for r in stored if r["method"] == "HASFL")
    assert all(r["epochs"] == 0.4 and r["rounds"] == 40 and r["worker_s"] == 7.0 for r in stored)
    with pytest.raises(ValueError, match="target_acc_noniid"):
        plan_status.plan_progress(store, S, PLAN, [0], 0.6, 1.5, DATA)
