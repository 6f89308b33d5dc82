"""The calibrated estimator of HASFL's bound (fedlib.hasfl.bound.calibrate) against hand-computed fits, and its wiring
into the training plan (fedlib.lab.hasfl.runs.train_plan) with training replaced by hand-made records."""
import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from fedlib.hasfl import HasflConstants
from fedlib.lab.hasfl.runs import train_jobs, train_plan
from fedlib.hasfl.bound.calibrate import calibrated_constants, fit_calibration, fitted_rounds
from fedlib.lab.hasfl.runs.training import TrainSettings, bound_constants
from tests.hasfl_plan import run_plan

# β = 1, γ = 0.1, I = 2, N = 2, b = 5, Σσ² = 10, ϑ = 2.4:
#   v = βγ Σσ² (Σ_i 1/b_i) / N² = 0.1 x 10 x 0.4 / 4 = 0.1;  2ϑ/γ = 48
#   s(c) = 4β²γ²I² Σ_{j<=c} G_j² = 0.16 x (5, 10, 12.5, 15) = (0.8, 1.6, 2.0, 2.4)
# with ε = 8.1, κ = 2.5: ε − v − κ s = (6, 4, 3, 2), so R = 48 / that = (8, 12, 16, 24).
C = HasflConstants(1.0, np.full(4, 2.5), np.array([5.0, 5.0, 2.5, 2.5]), 2.4)
ARGS = dict(constants=C, gamma=0.1, interval=2, num_devices=2, batch=5)


def test_fit_recovers_eps_and_kappa_exactly():
    fit = fit_calibration(**ARGS, cuts=[1, 2, 3, 4], rounds=[8, 12, 16, 24], target_acc=0.6)
    assert fit.eps == pytest.approx(8.1, abs=1e-9) and fit.kappa == pytest.approx(2.5, abs=1e-9)
    assert fit.cuts == (1, 2, 3, 4) and fit.rounds == (8.0, 12.0, 16.0, 24.0) and fit.dropped == ()
    assert fit.rounds_fit == pytest.approx((8.0, 12.0, 16.0, 24.0)) and fit.residual == pytest.approx(0, abs=1e-12)
    assert fitted_rounds(calibrated_constants(C, 2.5), 0.1, [5, 5], 4, 2, 8.1) == pytest.approx(24.0)
    assert fitted_rounds(calibrated_constants(C, 2.5), 0.1, [5, 5], 4, 2, 6.1) is None   # ε − floor = 0


def test_kappa_clamped_at_zero_when_deeper_cuts_are_faster():
    # R = (24, 16, 12, 8): y = 48/R + 0.1 = (2.1, 3.1, 4.1, 6.1) rises with s, i.e. κ < 0 unconstrained;
    # the constraint gives κ = 0 and ε = mean(y) = 3.85
    fit = fit_calibration(**ARGS, cuts=[1, 2, 3, 4], rounds=[24, 16, 12, 8])
    assert fit.kappa == 0.0 and fit.eps == pytest.approx(3.85)
    assert fit.residual > 0.1


def test_runs_that_did_not_reach_the_target_are_dropped():
    fit = fit_calibration(**ARGS, cuts=[1, 2, 3, 4], rounds=[8, None, 16, 24])
    assert fit.cuts == (1, 3, 4) and fit.dropped == ((5, 2),)
    assert fit.eps == pytest.approx(8.1) and fit.kappa == pytest.approx(2.5)
    # repeated cuts (one run per seed) are points of their own
    fit = fit_calibration(**ARGS, cuts=[1, 1, 4], rounds=[8, 8, 24])
    assert fit.cuts == (1, 1, 4) and fit.kappa == pytest.approx(2.5)


# with a variance scale: ε = 8.3, κ = 2.5, λ = 3 and v(b) = 0.5 / b (β γ Σσ² (2 / b) / N²):
#   b = 5: ε − λ v − κ s = 8.0 − (2, 4, 5, 6) = (6, 4, 3, 2), R = (8, 12, 16, 24) at cuts 1..4
#   b = 1, cut 4: 8.3 − 1.5 − 6 = 0.8, R = 60
def test_fit_recovers_eps_kappa_and_lambda_exactly():
    fit = fit_calibration(**dict(ARGS, batch=[5, 5, 5, 5, 1]), cuts=[1, 2, 3, 4, 4], rounds=[8, 12, 16, 24, 60],
                          fit_variance=True)
    assert fit.eps == pytest.approx(8.3, abs=1e-9) and fit.kappa == pytest.approx(2.5, abs=1e-9)
    assert fit.lam == pytest.approx(3.0, abs=1e-9) and fit.fit_variance and fit.batches == (5, 5, 5, 5, 1)
    assert fit.rounds_fit == pytest.approx((8.0, 12.0, 16.0, 24.0, 60.0)) and fit.residual < 1e-12
    assert fit.to_dict()["lambda"] == pytest.approx(3.0)
    # without the variance scale, the same runs: λ = 1 and the fit no longer reproduces the b = 1 run
    fit1 = fit_calibration(**dict(ARGS, batch=[5, 5, 5, 5, 1]), cuts=[1, 2, 3, 4, 4], rounds=[8, 12, 16, 24, 60])
    assert fit1.lam == 1.0 and not fit1.fit_variance and fit1.residual > 1e-3
    # a run that did not reach the target is dropped with its batch size
    fit = fit_calibration(**dict(ARGS, batch=[5, 5, 5, 5, 1, 2]), cuts=[1, 2, 3, 4, 4, 4],
                          rounds=[8, 12, 16, 24, 60, None], fit_variance=True)
    assert fit.dropped == ((2, 4),) and fit.lam == pytest.approx(3.0)


def test_variance_fit_needs_two_batch_sizes_that_reached_the_target():
    with pytest.raises(ValueError, match=r"2 distinct batch sizes.*target 0\.6; of batch sizes \[1, 5\], only \[5\]"):
        fit_calibration(**dict(ARGS, batch=[5, 5, 1]), cuts=[1, 2, 4], rounds=[8, 12, None], target_acc=0.6,
                        fit_variance=True)
    with pytest.raises(ValueError, match="batch sizes"):
        fit_calibration(**ARGS, cuts=[1, 2, 4], rounds=[8, 12, 24], fit_variance=True)
    with pytest.raises(TypeError, match="fit_variance"):
        fit_calibration(**ARGS, cuts=[1, 2], rounds=[8, 12], fit_variance=1)
    with pytest.raises(ValueError, match="same length"):
        fit_calibration(**dict(ARGS, batch=[5, 5, 1]), cuts=[1, 2], rounds=[8, 12])
    # two runs for three unknowns: 2 cuts and 2 batch sizes, but the system does not determine (ε, κ, λ)
    with pytest.raises(ValueError, match="do not determine"):
        fit_calibration(**dict(ARGS, batch=[5, 1]), cuts=[1, 2], rounds=[8, 12], fit_variance=True)
    # σ² = 0: no variance term to scale
    with pytest.raises(ValueError, match="sigma2"):
        fit_calibration(**dict(ARGS, constants=HasflConstants(1.0, np.zeros(4), C.G2, 2.4), batch=[5, 5, 1]),
                        cuts=[1, 2, 4], rounds=[8, 12, 60], fit_variance=True)
    # a numpy array of batch sizes is a list of batch sizes
    fit = fit_calibration(**dict(ARGS, batch=np.array([5, 5, 5, 5, 1])), cuts=[1, 2, 3, 4, 4],
                          rounds=[8, 12, 16, 24, 60], fit_variance=True)
    assert fit.lam == pytest.approx(3.0)


def test_fewer_than_two_cuts_reached_is_refused_naming_them_and_the_target():
    with pytest.raises(ValueError, match=r"target 0\.6.*cuts \[1, 2, 3, 4\], only \[2\]"):
        fit_calibration(**ARGS, cuts=[1, 2, 3, 4], rounds=[None, 12, None, None], target_acc=0.6)
    with pytest.raises(ValueError, match=r"only \[2\]"):
        fit_calibration(**ARGS, cuts=[2, 2], rounds=[12, 13])
    with pytest.raises(ValueError, match="kappa"):          # I = 1: no split term, κ not identifiable
        fit_calibration(**dict(ARGS, interval=1), cuts=[1, 4], rounds=[8, 24])


@pytest.mark.parametrize("kw, name", [({"rounds": [8, float("nan")]}, "rounds"), ({"rounds": [8, -3]}, "rounds"),
                                      ({"rounds": [8, 0]}, "rounds"), ({"rounds": [8, float("inf")]}, "rounds"),
                                      ({"rounds": [8, "12"]}, "rounds"), ({"rounds": [8]}, "same length"),
                                      ({"cuts": [1, 5]}, "cuts"), ({"cuts": [1, 2.0]}, "cuts"),
                                      ({"batch": 0}, "batch"), ({"batch": [5, 0]}, "batch"),
                                      ({"batch": [5, 2.5]}, "batch"), ({"gamma": 2.0}, "gamma"),
                                      ({"constants": {"beta": 1}}, "constants")])
def test_bad_inputs_are_refused_naming_the_parameter(kw, name):
    args = dict(ARGS, cuts=[1, 4], rounds=[8, 24])
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=name):
        fit_calibration(**args)


def test_calibrated_constants_scale_G2_by_kappa_and_sigma2_by_lambda():
    c = calibrated_constants(C, 0.5)
    assert c.beta == C.beta and c.vartheta == C.vartheta and list(c.sigma2) == list(C.sigma2)
    assert list(c.G2) == [2.5, 2.5, 1.25, 1.25]
    assert list(calibrated_constants(C, 0).G2) == [0.0] * 4
    c = calibrated_constants(C, 1.0, 4.0)
    assert list(c.sigma2) == [10.0] * 4 and list(c.G2) == list(C.G2)
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="kappa"):
            calibrated_constants(C, bad)
        with pytest.raises(ValueError, match="lam"):
            calibrated_constants(C, 1.0, bad)


def test_constants_mode_is_validated():
    assert TrainSettings(constants="calibrated").constants == "calibrated"
    with pytest.raises(ValueError, match="constants"):
        TrainSettings(constants="calib")
    rec = {"constants": {"beta": 9.0, "sigma2": [3.0], "G2": [5.0], "vartheta": 2.0},
           "per_point": [{"beta": 4.0, "sigma2": [1.0], "G2": [0.5]}]}
    with pytest.raises(ValueError, match="plan_calibration"):
        bound_constants(rec, "calibrated")


# --- the plan: training replaced by records that reach 0.6 at a chosen round ----------------------------------

L = 16
PILOT = {"constants": {"beta": 100.0, "sigma2": [2.0] * L, "G2": [2.0] * L, "vartheta": 2.3},
         "per_point": [{"beta": 100.0, "sigma2": [2.0] * L, "G2": [1.0] * L}]}
PLAN = train_plan.TrainPlan(settings=("iid", "noniid"), num_devices=3, batch_grid=(16,), fixed_cut=8,
                            cut_grid=(2, 8), fixed_batch=16, models=("vgg16",), widths=(0.0625,),
                            device_counts=(3,), n_methods=("HASFL",), calibrate_variance=False)
S = TrainSettings(width=0.0625)


def pilot_of_seed(seed: int) -> dict:
    """The fake pilot record of ``seed``: :data:`PILOT` at seed 0; at seed k its G_j² and σ_j² x (1 + k), so that
    a decision made with another seed's pilot constants shows in its problem's constants."""
    f = 1.0 + seed
    return {"constants": {**PILOT["constants"], "sigma2": [2.0 * f] * L, "G2": [2.0 * f] * L},
            "per_point": [{"beta": 100.0, "sigma2": [2.0 * f] * L, "G2": [1.0 * f] * L}]}


def _fake(monkeypatch, reach: dict):
    """Patch pilot (:func:`pilot_of_seed`) / decide / train (the optimiser is tested elsewhere: here every decision
    is ``batch`` or 4 at ``cut`` or 1); ``reach[cut]``: the round at which an IID fixed b = 16 run at that cut reaches 60 % (None:
    never), ``reach[(b, cut)]`` the same for any fixed batch size; every other run reaches it at round 20.
    Returns the trained configs and the (method, problem) pairs the decisions were made on."""
    configs, problems = [], []

    def decide(problem, method, seed, batch=None, cut=None, draw=0):
        problems.append((method, problem))
        n = problem.num_devices
        return {"method": method, "b": [batch or 4] * n, "cuts": [cut or 1] * n, "theta": None, "note": ""}

    def train(store, config, problem, data, device="auto", extend=None):
        configs.append(config)
        fixed = config["setting"] == "iid" and len(set(config["b"])) == 1 and len(set(config["cuts"])) == 1
        b, cut = config["b"][0], config["cuts"][0]
        r = reach.get((b, cut), reach.get(cut, 20) if b == 16 else 20) if fixed else 20
        acc = [0.1 if r is None or k < r else 0.7 for k in (0, 10, 20, 30, 40)]
        return {"test_acc": acc, "round": [0, 10, 20, 30, 40], "sim_s": [0.0, 1.0, 2.0, 3.0, 4.0],
                "epoch": [0.0, 0.1, 0.2, 0.3, 0.4], "converged_time_s": None, "converged_acc": None,
                "config": config}

    monkeypatch.setattr(train_plan, "pilot", lambda store, s, seed, data=None: pilot_of_seed(seed))
    monkeypatch.setattr(train_plan, "train", train)
    monkeypatch.setattr(train_plan, "decide", decide)
    return configs, problems


def _fixed(configs):
    """The distinct configs of the fixed runs (b = 16, one cut), as sorted JSON strings."""
    return sorted({json.dumps(c, sort_keys=True) for c in configs
                   if len(set(c["b"])) == 1 and c["b"][0] == 16 and len(set(c["cuts"])) == 1 and c["cuts"][0] in (2, 8)})


DATA = SimpleNamespace(y_train=list(range(600)))


def _expected_fit():
    # y = 2ϑ/(γR) + v, v = βγ Σσ²/(b N) = 100 x 5e-4 x 32 / 48; s(c) = 4β²γ²I² x 1.0 c = 2.25 c
    v = 100 * 5e-4 * 32 / 48
    y2, y8 = 2 * 2.3 / (5e-4 * 20) + v, 2 * 2.3 / (5e-4 * 30) + v
    kappa = (y2 - y8) / (2.25 * 6)
    return y2 + kappa * 2.25 * 2, kappa


def test_plan_adds_the_other_constants_modes_and_records_kappa(monkeypatch):
    configs, problems = _fake(monkeypatch, {2: 20, 8: 30})
    rows = [e["row"] for e in run_plan(None, S, PLAN, [0], 0.6, DATA, progress=False)]
    eps, kappa = _expected_fit()
    fig5 = {(r["method"], r["setting"]): r for r in rows if "fig5" in r["figures"]}
    assert {m for m, _ in fig5} == set(train_plan.STRATEGIES) | {"HASFL-max", "HASFL-calibrated"}
    for setting in ("iid", "noniid"):                         # the IID calibration applies to both settings
        cal = fig5[("HASFL-calibrated", setting)]
        assert cal["constants"] == "calibrated" and cal["kappa"] == pytest.approx(kappa)
        assert cal["eps"] == pytest.approx(eps)
    assert fig5[("HASFL-max", "iid")]["constants"] == "max" and fig5[("HASFL", "iid")]["constants"] == "pilot"
    assert all(r["kappa"] is None for r in rows if r["constants"] != "calibrated")
    # the calibrated problem: pilot constants (per_point) with G2 x κ, C1's ε = the fitted ε; the decision is HASFL's
    cal = [p for m, p in problems if m == "HASFL" and p.eps == pytest.approx(eps)]
    assert len(cal) == 2 and cal[0].constants.beta == 100.0
    assert cal[0].constants.G2 == pytest.approx([kappa] * L) and cal[0].constants.sigma2 == pytest.approx([2.0] * L)
    fixed_pilot = _fixed(configs)

    configs.clear()
    problems.clear()
    rows = [e["row"] for e in run_plan(None, TrainSettings(width=0.0625, constants="calibrated"), PLAN,
                                                  [0], 0.6, DATA, progress=False)]
    methods = {r["method"] for r in rows if "fig5" in r["figures"]}
    assert {"HASFL-pilot", "HASFL-max"} <= methods and "HASFL-calibrated" not in methods
    hasfl = [r for r in rows if r["method"] in ("HASFL", "HABS", "HAMS", "RBS+HAMS", "HABS+RMS")]
    assert all(r["constants"] == "calibrated" and r["kappa"] == pytest.approx(kappa) for r in hasfl)
    assert all(r["eps"] == pytest.approx(eps) and r["lambda"] == 1.0 for r in hasfl)
    # Figs. 10 / 11 add HABS / HAMS under the other mode (pilot here; calibrated in the first plan above)
    parts = {r["method"]: r for r in rows if r["method"] in ("HABS-pilot", "HAMS-pilot")}
    assert set(parts) == {"HABS-pilot", "HAMS-pilot"} and {r["constants"] for r in parts.values()} == {"pilot"}
    assert parts["HABS-pilot"]["eps"] != pytest.approx(eps) and parts["HABS-pilot"]["kappa"] is None
    assert {r["constants"] for r in rows if r["method"] in ("HASFL-pilot", "HASFL-max")} == {"pilot", "max"}
    # the fixed runs do not depend on the constants mode: the same run configs (cache hits)
    assert fixed_pilot == _fixed(configs) and len(fixed_pilot) == 4     # cuts 2, 8 at b 16, IID and non-IID

    table = train_plan.calibration_table(None, S, PLAN, [0], 0.6, DATA)
    by_cut = {r["cut"]: r for r in table}
    assert {r["batch"] for r in table} == {16} and {r["lambda"] for r in table} == {1.0}
    assert by_cut[8]["measured_ratio"] == 1.0 and by_cut[2]["measured_ratio"] == pytest.approx(2 / 3)
    assert by_cut[2]["pred_ratio_calibrated"] == pytest.approx(2 / 3) and by_cut[2]["kappa"] == pytest.approx(kappa)
    assert by_cut[2]["pred_ratio_pilot"] < 1


def test_plan_out_of_sample_decides_seed_1_with_the_fit_of_seed_0(monkeypatch):
    from fedlib.lab.hasfl.runs.training import training_problem
    configs, problems = _fake(monkeypatch, {2: 20, 8: 30})
    rows = [e["row"] for e in run_plan(None, S, PLAN, [1], 0.6, DATA, progress=False, fit_seed=0,
                                                  only_figures=("fig5",))]
    eps, kappa = _expected_fit()
    assert rows and all("fig5" in r["figures"] and r["seed"] == 1 for r in rows)
    assert {r["method"] for r in rows} == set(train_plan.STRATEGIES) | {"HASFL-max", "HASFL-calibrated"}
    cal = [r for r in rows if r["method"] == "HASFL-calibrated"]
    assert len(cal) == 2 and all(r["kappa"] == pytest.approx(kappa) and r["eps"] == pytest.approx(eps) for r in cal)
    # the fit's runs are seed 0's (b = 16 at cuts 2 and 8, IID); nothing of Figs. 2a / 3a / 9-11 at seed 1
    fixed = [c for c in configs if len(set(c["b"])) == 1 and c["b"][0] == 16]
    assert {(c["seed"], c["cuts"][0], c["setting"]) for c in fixed} == {(0, 2, "iid"), (0, 8, "iid")}
    assert {c["seed"] for c in configs if c not in fixed} == {1}
    # the calibrated decision is made on seed 1's system
    p = next(p for m, p in problems if m == "HASFL" and p.eps == pytest.approx(eps))
    own = training_problem(S, p.constants, eps, PLAN.num_devices, 1)
    assert p.devices.flops.tolist() == own.devices.flops.tolist()
    assert p.devices.flops.tolist() != training_problem(S, p.constants, eps, PLAN.num_devices, 0).devices.flops.tolist()
    # ... with seed 0's calibrated bound: seed 0's fit AND seed 0's pilot constants (G_j² 1.0 x κ, σ_j² 2.0),
    # not seed 1's own pilot (G_j² 2.0, σ_j² 4.0: pilot_of_seed)
    seed0 = pilot_of_seed(0)["per_point"][-1]
    cal_problems = [p for m, p in problems if m == "HASFL" and p.eps == pytest.approx(eps)]
    assert len(cal_problems) == 2                                     # IID and non-IID
    for p in cal_problems:
        assert p.constants.G2 == pytest.approx([kappa * g for g in seed0["G2"]])
        assert p.constants.sigma2 == pytest.approx(seed0["sigma2"]) and p.constants.beta == seed0["beta"]
    # the runs that need no calibration decide with seed 1's own pilot (HASFL: its pilot point; HASFL-max: its max)
    mine = [p for m, p in problems if p.eps != pytest.approx(eps) and m != "fixed"
            and p.devices.flops.tolist() == own.devices.flops.tolist()]
    assert mine and all(p.constants.sigma2 == pytest.approx([4.0] * L) for p in mine)
    assert {round(float(p.constants.G2[0]), 9) for p in mine} == {2.0, 4.0}   # pilot point, max over points


def test_plan_without_a_calibration(monkeypatch):
    _fake(monkeypatch, {2: 20, 8: None})                      # only cut 2 reaches the target
    with pytest.warns(UserWarning, match="HASFL-calibrated skipped"):
        rows = [e["row"] for e in run_plan(None, S, PLAN, [0], 0.6, DATA, progress=False)]
    assert "HASFL-calibrated" not in {r["method"] for r in rows} and "HASFL-max" in {r["method"] for r in rows}
    with pytest.raises(ValueError, match=r"calibrated.*only \[2\]"):
        run_plan(None, TrainSettings(width=0.0625, constants="calibrated"), PLAN, [0], 0.6, DATA,
                            progress=False)
    table = train_plan.calibration_table(None, S, PLAN, [0], 0.6, DATA)
    assert table[0]["kappa"] is None and "only [2]" in table[0]["note"]


def test_plan_calibrates_the_variance_term_on_the_fixed_batch_runs(monkeypatch):
    plan = train_plan.TrainPlan(**{**PLAN.__dict__, "batch_grid": (8, 16), "calibrate_variance": True})
    configs, problems = _fake(monkeypatch, {2: 20, 8: 30, (8, 8): 40})
    rows = [e["row"] for e in run_plan(None, S, plan, [0], 0.6, DATA, progress=False)]
    # y = 2ϑ/(γR) = 9200 / R; v(b) = βγΣσ²/(bN) = 1.6 / (3b); s(c) = 2.25 c (see _expected_fit). Three runs,
    # three unknowns: (16, 2): ε − λ v(16) − 4.5 κ = 460; (16, 8): ε − λ v(16) − 18 κ = 306.67;
    # (8, 8): ε − λ v(8) − 18 κ = 230
    y = {k: 2 * 2.3 / (5e-4 * r) for k, r in (((16, 2), 20), ((16, 8), 30), ((8, 8), 40))}
    kappa = (y[(16, 2)] - y[(16, 8)]) / (2.25 * 6)
    lam = (y[(16, 8)] - y[(8, 8)]) / (1.6 / 24 - 1.6 / 48)
    eps = y[(16, 2)] + 2.25 * 2 * kappa + lam * 1.6 / 48
    assert kappa == pytest.approx(11.358, abs=1e-3) and lam == pytest.approx(2300) and eps == pytest.approx(587.78, abs=0.01)
    cal = [r for r in rows if r["method"] in ("HASFL-calibrated", "HABS-calibrated", "HAMS-calibrated")]
    assert len(cal) == 6                                     # three methods, IID and non-IID
    for r in cal:
        assert r["kappa"] == pytest.approx(kappa) and r["lambda"] == pytest.approx(lam) and r["eps"] == pytest.approx(eps)
    p = next(p for m, p in problems if p.eps == pytest.approx(eps))
    assert p.constants.sigma2 == pytest.approx([2.0 * lam] * L) and p.constants.G2 == pytest.approx([kappa] * L)
    table = train_plan.calibration_table(None, S, plan, [0], 0.6, DATA)
    assert [(r["batch"], r["cut"]) for r in table] == [(16, 2), (16, 8), (8, 8)]
    by = {(r["batch"], r["cut"]): r for r in table}
    assert by[(8, 8)]["measured_ratio"] == pytest.approx(4 / 3) and by[(8, 8)]["pred_ratio_calibrated"] == pytest.approx(4 / 3)
    assert by[(16, 8)]["rounds_fit"] == pytest.approx(30.0)
    # one batch size in batch_grid: the variance scale cannot be fitted (the calibrated variants are skipped)
    one = train_plan.TrainPlan(**{**PLAN.__dict__, "calibrate_variance": True})
    with pytest.raises(ValueError, match="2 distinct batch sizes"):
        train_plan.plan_calibration(None, S, one, 0, 0.6, DATA)
    with pytest.raises(TypeError, match="calibrate_variance"):
        train_plan.TrainPlan(**{**PLAN.__dict__, "calibrate_variance": "yes"})


def test_plan_with_max_constants_adds_pilot_and_calibrated_variants(monkeypatch):
    _fake(monkeypatch, {2: 20, 8: 30})
    rows = [e["row"] for e in run_plan(None, TrainSettings(width=0.0625, constants="max"), PLAN, [0],
                                                  0.6, DATA, progress=False)]
    modes = {r["method"]: r["constants"] for r in rows}
    assert modes["HASFL"] == modes["HABS"] == modes["HAMS"] == "max"
    assert modes["HASFL-pilot"] == modes["HABS-pilot"] == modes["HAMS-pilot"] == "pilot"
    assert modes["HASFL-calibrated"] == modes["HABS-calibrated"] == modes["HAMS-calibrated"] == "calibrated"
    assert "HASFL-max" not in modes and "HABS-max" not in modes
    eps, kappa = _expected_fit()
    assert all(r["kappa"] == pytest.approx(kappa) and r["eps"] == pytest.approx(eps)
               for r in rows if r["constants"] == "calibrated")


class Store:
    """What train_parallel asks of a training store (key / has): a set of stored keys."""

    def __init__(self):
        self.done = set()

    def key(self, config):
        return json.dumps(config, sort_keys=True)

    def has(self, config):
        return self.key(config) in self.done


def fake_calibrated_decisions(monkeypatch):
    """On top of :func:`_fake`: decisions under the calibrated constants (G_j² scaled by κ) get b = 5 on every
    device, so that they differ from the pilot ones."""
    fake_decide, kappa = train_plan.decide, _expected_fit()[1]

    def decide(problem, method, seed, batch=None, cut=None, draw=0):
        d = fake_decide(problem, method, seed, batch, cut, draw)
        return d | {"b": [5] * problem.num_devices} if problem.constants.G2[0] == pytest.approx(kappa) else d

    monkeypatch.setattr(train_plan, "decide", decide)


def test_plan_with_workers_trains_each_config_once_in_the_pool_and_gives_the_same_rows(monkeypatch):
    configs, _ = _fake(monkeypatch, {2: 20, 8: 30})
    fake_calibrated_decisions(monkeypatch)
    serial = [e["row"] for e in run_plan(None, S, PLAN, [0], 0.6, DATA, progress=False)]
    serial_configs = {json.dumps(c, sort_keys=True) for c in configs}

    store, waves = Store(), []

    def pool(fn, jobs, workers, desc, cost=None):    # in-process stand-in for fedlib.lab.map_jobs
        assert fn is train_jobs.train_job and workers == 2
        waves.append([store.key(j["config"]) for j in jobs])
        store.done.update(waves[-1])

    monkeypatch.setattr(train_jobs, "map_jobs", pool)
    monkeypatch.setattr(train_jobs, "AnyBackendRecords", lambda s: s)   # the fake holds the training records
    data = SimpleNamespace(y_train=DATA.y_train, name="fake")
    configs.clear()
    rows = [e["row"] for e in run_plan(store, S, PLAN, [0], 0.6, data, progress=False, workers=2)]
    assert rows == serial
    assert len(waves) == 2 and all(len(w) == len(set(w)) for w in waves)        # each config once per wave
    assert set(waves[0]) | set(waves[1]) == serial_configs and not set(waves[0]) & set(waves[1])
    assert waves[1] and all(json.loads(k)["b"][0] == 5 for k in waves[1])        # then the calibrated ones
    assert not any(json.loads(k)["b"][0] == 5 for k in waves[0])
    prio = {}                                         # started in TRAIN_ORDER: Figs. 5 / 6 first
    for r in train_plan.decided_runs(store, S, PLAN, [0], 0.6, data, "cpu", which="plain"):
        k = store.key(r["config"])
        prio[k] = min(prio.get(k, 9), train_plan.train_priority(r["figs"], r["scale"]))
    order = [prio[k] for k in waves[0]]
    assert order == sorted(order) and order[0] == 0 and order[-1] > 0, order
    run_plan(store, S, PLAN, [0], 0.6, data, progress=False, workers=2)
    assert len(waves) == 2                                                    # all cached: no pool


def test_a_later_model_is_calibrated_on_its_own_runs_and_sweeps_decide_on_scaled_systems(monkeypatch):
    """model_cut_grids: ResNet-18's own fixed-cut runs give its own κ and ε (not VGG-16's); sweep_factors: Figs.
    7-8's decisions are made on Table I with one range scaled; fig9_settings: Fig. 9 non-IID too."""
    configs, problems = _fake(monkeypatch, {2: 20, 8: 30})
    fake_train, pilot_r = train_plan.train, {
        "constants": {"beta": 100.0, "sigma2": [2.0] * 10, "G2": [2.0] * 10, "vartheta": 2.3},
        "per_point": [{"beta": 100.0, "sigma2": [2.0] * 10, "G2": [1.0] * 10}]}

    def train(store, config, problem, data, device="auto", extend=None):
        rec = fake_train(store, config, problem, data, device)
        if config["model"] == "resnet18" and config["b"] == [16] * 3 and config["cuts"] == [6] * 3:
            rec["test_acc"] = [0.1, 0.1, 0.1, 0.1, 0.7]                # ResNet-18 at cut 6: the target at round 40
        return rec

    monkeypatch.setattr(train_plan, "train", train)
    monkeypatch.setattr(train_plan, "pilot", lambda store, s, seed, data=None: PILOT if s.model == "vgg16" else pilot_r)
    plan = replace(PLAN, models=("vgg16", "resnet18"), widths=(0.0625, 0.125), model_cut_grids=((2, 6),),
                   sweep_factors=(4.0,), sweep_methods=("HASFL",), fig9_settings=("iid", "noniid"))
    entries = run_plan(None, S, plan, [0], 0.6, DATA, progress=False)
    rows = [e["row"] for e in entries]
    own = [r for r in rows if "calibration" in r["figures"]]
    assert {(r["model"], r["setting"], r["batch"], r["cut"]) for r in own} == {("resnet18", "iid", 16, 2),
                                                                                 ("resnet18", "iid", 16, 6)}
    # ResNet-18: y_c = 2 x 2.3 / (5e-4 R_c) + v, v = 100 x 5e-4 x 20 / 48, split term 2.25 c: R 20 at cut 2, 40 at 6
    v = 100 * 5e-4 * 20 / 48
    kappa_r = ((460 + v) - (230 + v)) / (2.25 * 4)
    eps_r = 460 + v + kappa_r * 2.25 * 2
    cal = {(r["model"], r["setting"]): r for r in rows if r["method"] == "HASFL-calibrated"}
    assert set(cal) == {(m, s) for m in ("vgg16", "resnet18") for s in ("iid", "noniid")}
    assert cal[("resnet18", "iid")]["kappa"] == pytest.approx(kappa_r)
    assert cal[("resnet18", "noniid")]["eps"] == pytest.approx(eps_r)
    assert cal[("vgg16", "iid")]["kappa"] == pytest.approx(_expected_fit()[1])
    table = train_plan.calibration_table(None, S, plan, [0], 0.6, DATA)
    assert [(r["model"], r["cut"]) for r in table] == [("vgg16", 2), ("vgg16", 8), ("resnet18", 2), ("resnet18", 6)]
    assert [r["kappa"] for r in table if r["model"] == "resnet18"] == pytest.approx([kappa_r] * 2)
    # Figs. 7-8: one HASFL run per swept range at factor 4, decided on that system (device compute x 4 exactly)
    swept = {r["scale_key"]: r for r in rows if {"fig7", "fig8"} & set(r["figures"])}
    assert set(swept) == {"device_flops", "server_flops", "rate_up", "rate_servers"}
    assert {r["scale_factor"] for r in swept.values()} == {4.0} and swept["rate_up"]["figures"] == ["fig8"]
    base = next(p for m, p in problems if m == "HASFL" and p.profile.num_layers == 16 and p.servers.flops == 20e12)
    fast = [p for m, p in problems if m == "HASFL" and np.allclose(p.devices.flops, 4 * base.devices.flops)]
    assert len(fast) == 1 and fast[0].servers.flops == 20e12
    assert {r["setting"] for r in rows if "fig9" in r["figures"]} == {"iid", "noniid"}


def test_without_its_own_grid_a_later_model_uses_the_first_models_fit(monkeypatch):
    _fake(monkeypatch, {2: 20, 8: 30})
    pilot_r = {"constants": {"beta": 100.0, "sigma2": [2.0] * 10, "G2": [2.0] * 10, "vartheta": 2.3},
               "per_point": [{"beta": 100.0, "sigma2": [2.0] * 10, "G2": [1.0] * 10}]}
    monkeypatch.setattr(train_plan, "pilot", lambda store, s, seed, data=None: PILOT if s.model == "vgg16" else pilot_r)
    plan = replace(PLAN, models=("vgg16", "resnet18"), widths=(0.0625, 0.125))
    rows = [e["row"] for e in run_plan(None, TrainSettings(width=0.0625, constants="calibrated"), plan,
                                                  [0], 0.6, DATA, progress=False)]
    resnet = [r for r in rows if r["model"] == "resnet18" and r["method"] == "HASFL"]
    eps, kappa = _expected_fit()
    assert resnet and all(r["kappa"] == pytest.approx(kappa) and r["eps"] == pytest.approx(eps) for r in resnet)
