"""Fig. 9's draws of the paper's random benchmarks (issue: "Fig. 9 rests on one random draw per N"): draw k of a
random decision comes from its own seed stream (fedlib.lab.hasfl.runs.training.decision_stream), draw 0 is the decision
of the code before draws existed (pinned below: its output, computed with that code), the plan holds
``fig9_draws`` draws per N of HABS+RMS / RBS+RMS only, a draw changes nothing but the decision (data partition,
initial model, system), and Fig. 9's claims read the mean over the draws (hand-computed); the figure draws the
mean with a min-max bar and marks a mean over a draw that never converged."""
from dataclasses import replace
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

from fedlib.lab.verdicts import Censored  # noqa: E402
from fedlib.hasfl import HasflConstants
from fedlib.lab.hasfl import claims  # noqa: E402
from test_hasfl_figures import fig9_vs_devices  # noqa: E402  (hasfl_5_train_figures draws Fig. 9)
from fedlib.hasfl.optimiser.strategies import STRATEGIES  # noqa: E402
from fedlib.lab.hasfl.runs import train_plan  # noqa: E402
from fedlib.lab.hasfl.runs.training import TrainSettings, decide, decision_stream, split_config, training_problem  # noqa: E402
from fedlib.split.config import build_model  # noqa: E402
from fedlib.split.records import client_partition  # noqa: E402

L = 16
RANDOM = tuple(m for m in STRATEGIES if m != "HASFL")
S = TrainSettings(width=0.0625)


def _problem(n=6, seed=0):
    return training_problem(S, HasflConstants(100.0, np.full(L, 2.0), np.full(L, 0.01), 2.3), 50.0, n, seed)


# decide(_problem(6, seed), method, seed) with the code of commit 8b265e4 (before draws): (b, cuts)
TODAY = {
    (0, "RBS+HAMS"): ([37, 44, 46, 29, 5, 48], [16, 16, 16, 16, 15, 16]),
    (0, "HABS+RMS"): ([1, 2, 22, 21, 3, 10], [3, 8, 14, 13, 9, 11]),
    (0, "RBS+RMS"): ([33, 45, 57, 57, 7, 31], [10, 11, 12, 8, 12, 1]),
    (0, "RBS+RHAMS"): ([53, 58, 59, 56, 43, 9], [16, 16, 16, 16, 16, 14]),
    (0, "HABS+RMS(C1)"): ([1, 2, 22, 21, 3, 10], [3, 8, 14, 13, 9, 11]),
    (0, "RBS+RMS(C1)"): ([33, 45, 57, 57, 7, 31], [10, 11, 12, 8, 12, 1]),
    (3, "RBS+HAMS"): ([13, 14, 4, 16, 51, 63], [13, 13, 13, 16, 16, 16]),
    (3, "HABS+RMS"): ([24, 9, 1, 1, 2, 24], [13, 12, 3, 6, 9, 14]),
    (3, "RBS+RMS"): ([1, 58, 57, 36, 33, 58], [10, 12, 9, 15, 4, 4]),
    (3, "RBS+RHAMS"): ([6, 62, 12, 18, 30, 35], [14, 16, 15, 16, 16, 16]),
    (3, "HABS+RMS(C1)"): ([24, 9, 1, 1, 2, 24], [13, 12, 3, 6, 9, 14]),
    (3, "RBS+RMS(C1)"): ([1, 58, 57, 36, 33, 58], [10, 12, 9, 15, 4, 4]),
}

# Fig. 9's decided runs of _small_plan() (fake pilot PILOT, seeds 0 and 2, both settings alike) with the code of
# commit 8b265e4: (method, N, seed) -> (b, cuts), i.e. the training-record keys of today's single draw
TODAY_PLAN = {
    ("RBS+HAMS", 3, 0): ([37, 44, 46], [1, 1, 1]), ("HABS+RMS", 3, 0): ([1, 3, 23], [3, 8, 14]),
    ("RBS+RMS", 3, 0): ([33, 45, 57], [15, 2, 8]), ("RBS+RHAMS", 3, 0): ([53, 58, 59], [16, 16, 16]),
    ("HABS+RMS(C1)", 3, 0): ([4, 4, 4], [1, 1, 1]), ("RBS+RMS(C1)", 3, 0): ([33, 45, 57], [1, 1, 1]),
    ("RBS+HAMS", 5, 0): ([37, 44, 46, 29, 5], [1, 1, 1, 1, 1]),
    ("HABS+RMS", 5, 0): ([1, 3, 22, 21, 2], [3, 8, 14, 13, 9]),
    ("RBS+RMS", 5, 0): ([33, 45, 57, 57, 7], [8, 10, 11, 12, 8]),
    ("RBS+RHAMS", 5, 0): ([53, 58, 59, 56, 43], [16, 16, 16, 16, 16]),
    ("HABS+RMS(C1)", 5, 0): ([2, 2, 2, 2, 2], [1, 1, 1, 1, 1]),
    ("RBS+RMS(C1)", 5, 0): ([33, 45, 57, 57, 7], [1, 1, 1, 1, 1]),
    ("RBS+HAMS", 3, 2): ([37, 30, 56], [1, 1, 1]), ("HABS+RMS", 3, 2): ([1, 1, 4], [9, 4, 11]),
    ("RBS+RMS", 3, 2): ([49, 40, 21], [10, 10, 3]), ("RBS+RHAMS", 3, 2): ([13, 25, 4], [16, 16, 14]),
    ("HABS+RMS(C1)", 3, 2): ([4, 4, 4], [1, 1, 1]), ("RBS+RMS(C1)", 3, 2): ([49, 40, 21], [1, 1, 1]),
    ("RBS+HAMS", 5, 2): ([37, 30, 56, 23, 53], [1, 1, 1, 1, 1]),
    ("HABS+RMS", 5, 2): ([1, 2, 5, 1, 5], [9, 4, 11, 5, 10]),
    ("RBS+RMS", 5, 2): ([49, 40, 21, 39, 37], [3, 16, 9, 1, 10]),
    ("RBS+RHAMS", 5, 2): ([13, 25, 4, 25, 43], [15, 16, 15, 16, 16]),
    ("HABS+RMS(C1)", 5, 2): ([2, 2, 2, 2, 2], [1, 1, 1, 1, 1]),
    ("RBS+RMS(C1)", 5, 2): ([49, 40, 21, 39, 37], [1, 1, 1, 1, 1]),
}
PILOT = {"constants": {"beta": 100.0, "sigma2": [2.0] * L, "G2": [2.0] * L, "vartheta": 2.3},
         "per_point": [{"beta": 100.0, "sigma2": [2.0] * L, "G2": [1.0] * L}]}
DATA = SimpleNamespace(y_train=list(range(600)))


def _small_plan(draws=1):
    return train_plan.TrainPlan(settings=("iid", "noniid"), num_devices=4, models=("vgg16",), widths=(0.0625,),
                                device_counts=(3, 5), n_methods=RANDOM, fig9_settings=("iid", "noniid"),
                                calibrate_variance=False, fig9_draws=draws)


def _fig9_runs(monkeypatch, draws):
    """Fig. 9's runs of :func:`_small_plan` decided by the real optimiser on a fake pilot (nothing trained)."""
    monkeypatch.setattr(train_plan, "pilot", lambda store, s, seed, data=None: PILOT)
    return list(train_plan.decided_runs(None, S, _small_plan(draws), [0, 2], 0.6, DATA, "cpu",
                                         only_figures=("fig9",)))


# --- decisions ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 3])
def test_draw_0_is_todays_decision_for_every_random_benchmark(seed):
    p = _problem(seed=seed)
    for m in RANDOM:
        assert decision_stream(m) == decision_stream(m, 0) == f"system/{m.removesuffix('(C1)')}"
        for d in (decide(p, m, seed), decide(p, m, seed, draw=0)):
            assert (d["b"], d["cuts"]) == TODAY[(seed, m)], m


def test_further_draws_differ_from_draw_0_and_from_each_other():
    p = _problem()
    for m in RANDOM:
        got = [decide(p, m, 0, draw=k) for k in range(4)]
        pairs = {(tuple(d["b"]), tuple(d["cuts"])) for d in got}
        assert len(pairs) == 4, (m, pairs)
        assert decision_stream(m, 2) == f"system/{m.removesuffix('(C1)')}/draw2"
        # a (C1) variant shares its paper strategy's stream at every draw: the same random batch sizes
        if m == "RBS+RMS(C1)":
            assert [d["b"] for d in got] == [decide(p, "RBS+RMS", 0, draw=k)["b"] for k in range(4)]


def test_other_methods_do_not_depend_on_the_draw():
    p = _problem(n=2)
    # the decisions of commit 8b265e4 on this problem (HASFL: one BCD solve, ~8 s)
    assert decide(p, "HASFL", 0, draw=2)["b"] == [1, 1] and decide(p, "HASFL", 0, draw=2)["cuts"] == [4, 4]
    for method, kw, today in (("HABS", dict(cut=8), ([1, 1], [8, 8])), ("HAMS", dict(batch=16), ([16, 16], [10, 10])),
                              ("fixed", dict(batch=16, cut=8), ([16, 16], [8, 8]))):
        for k in (0, 1, 5):
            d = decide(p, method, 0, draw=k, **kw)
            assert (d["b"], d["cuts"]) == today, (method, k)


# --- the plan ----------------------------------------------------------------------------------------------------

def test_the_plan_holds_k_draws_per_n_of_the_paper_random_benchmarks_only():
    one, three = train_plan._jobs(_small_plan(1), S), train_plan._jobs(_small_plan(3), S)
    assert all(j.draw == 0 for j in one)
    assert [j for j in three if j.draw == 0] == one                    # draw 0: every job of one draw, in order
    extra = [j for j in three if j.draw > 0]
    assert all(j.figures == ("fig9",) for j in extra)
    got = sorted((j.setting, j.num_devices, j.method, j.draw) for j in extra)
    assert got == sorted((st, n, m, k) for st in ("iid", "noniid") for n in (3, 5)
                         for m in train_plan.DRAWN_METHODS for k in (1, 2))
    assert set(train_plan.DRAWN_METHODS) == {"HABS+RMS", "RBS+RMS"}
    # a method of DRAWN_METHODS outside n_methods gets no draw
    assert not [j for j in train_plan._jobs(replace(_small_plan(3), n_methods=("RBS+HAMS",)), S) if j.draw]
    with pytest.raises(ValueError, match="fig9_draws"):
        _small_plan(0)


def test_draw_0_keeps_todays_runs_and_further_draws_change_only_the_decision(monkeypatch):
    runs = _fig9_runs(monkeypatch, 3)
    first = [r for r in runs if r["draw"] == 0]
    assert len(first) == len(TODAY_PLAN) * 2                         # both settings
    for r in first:                                                  # the same b and cuts: the same record keys
        assert (r["config"]["b"], r["config"]["cuts"]) == TODAY_PLAN[(r["method"], r["n"], r["seed"])], r["method"]
    assert [r["config"] for r in _fig9_runs(monkeypatch, 1)] == [r["config"] for r in first]
    groups = {}
    for r in runs:
        groups.setdefault((r["method"], r["setting"], r["n"], r["seed"]), []).append(r)
    drawn = {k: v for k, v in groups.items() if len(v) > 1}
    assert {k[0] for k in drawn} == {"HABS+RMS", "RBS+RMS"} and all(len(v) == 3 for v in drawn.values())
    labels = np.arange(600) % 10
    for (method, setting, n, seed), rs in drawn.items():
        decisions = {(tuple(r["config"]["b"]), tuple(r["config"]["cuts"])) for r in rs}
        assert len(decisions) == 3, (method, n, seed)                 # three different decisions
        base = rs[0]
        for r in rs[1:]:
            # the system is the seed's (the same problem), the run config differs only in the decision (and the
            # rounds it implies): the same seed, hence the same data partition and initial model
            assert r["problem"] is base["problem"]
            strip = ("b", "cuts", "rounds", "eval_every")
            assert {k: v for k, v in r["config"].items() if k not in strip} == \
                   {k: v for k, v in base["config"].items() if k not in strip}
            parts = client_partition(split_config(r["config"]), labels)
            assert all(np.array_equal(a, b) for a, b in zip(parts, client_partition(split_config(base["config"]),
                                                                                   labels)))
    # the initial model of one drawn group: the same weights at every draw
    rs = drawn[("RBS+RMS", "noniid", 5, 2)]
    states = [build_model(split_config(r["config"]), 1, 28, 10).state_dict() for r in rs]
    assert all(torch.equal(states[0][k], st[k]) for st in states[1:] for k in states[0])


# --- the claims and the figure ------------------------------------------------------------------------------------

def _row(method, setting, n, conv, draw=0, sim=None, t=None):
    return {"method": method, "model": "vgg16", "setting": setting, "N": n, "figures": ["fig9"], "draw": draw,
            "converged_time_s": conv, "sim_s": sim if sim is not None else (conv or 100.0),
            "time_to_target_s": t if t is not None else conv, "target_acc": 0.6, "seed": 0}


def _metrics(habs_draws_at_10=(10.0, 30.0, 50.0)):
    """IID only. HASFL 10 s at N = 5 and 10; RBS+HAMS 50 s, RBS+RHAMS 100 s; RBS+RMS's draws 20 / 40 / 60 s (mean
    40); HABS+RMS's draws 40 / 40 / 40 s at N = 5 and ``habs_draws_at_10`` at N = 10 (None: never converged within
    its whole run of 90 s)."""
    rows = []
    for n in (5, 10):
        rows += [_row("HASFL", "iid", n, 10.0), _row("RBS+HAMS", "iid", n, 50.0), _row("RBS+RHAMS", "iid", n, 100.0)]
        rows += [_row("RBS+RMS", "iid", n, t, k) for k, t in enumerate((20.0, 40.0, 60.0))]
        habs = habs_draws_at_10 if n == 10 else (40.0, 40.0, 40.0)
        rows += [_row("HABS+RMS", "iid", n, t, k, sim=90.0) for k, t in enumerate(habs)]
    return {"runs": rows}


def test_fig9_claims_read_the_mean_over_the_draws():
    m = _metrics()
    # ratios to HASFL's 10 s: N = 5: RBS+HAMS 5, RBS+RHAMS 10, RBS+RMS 40 / 10 = 4, HABS+RMS 4; N = 10: 5, 10, 4 and
    # HABS+RMS (10 + 30 + 50) / 3 / 10 = 3, the smallest (its draw 0 alone would give 1)
    assert claims.slowest_gap_over_devices(m)["pilot"] == [pytest.approx(3.0)]
    assert claims.gap_vs_devices(m)["pilot"] == [[pytest.approx((5 * 10 * 4 * 4) ** 0.25),
                                                  pytest.approx((5 * 10 * 4 * 3) ** 0.25)]]
    assert claims.fig9_mean(m["runs"], "RBS+RMS", "iid", 5) == {
        "method": "RBS+RMS", "N": 5, "setting": "iid", "draws": 3, "converged_time_s": 40.0, "sim_s": 40.0}
    # a draw that never converged (its whole run 90 s stands in): the mean is at least (5 + 90 + 10) / 3 = 35 s, a
    # lower bound, and so is the smallest ratio, >= 3.5
    censored = _metrics((5.0, None, 10.0))
    mean = claims.fig9_mean(censored["runs"], "HABS+RMS", "iid", 10)
    assert mean["converged_time_s"] is None and mean["sim_s"] == pytest.approx(35.0)
    (low,) = claims.slowest_gap_over_devices(censored)["pilot"]
    assert isinstance(low, Censored) and low.side == "lower" and low.value == pytest.approx(3.5)
    with pytest.raises(TypeError, match="never converged"):
        claims.gap_vs_devices(censored)
    # committed metrics (one draw, no "draw" field) read as before: the mean over one run is the run
    one = {"runs": [{k: v for k, v in r.items() if k != "draw"} for r in m["runs"] if r["draw"] == 0]}
    assert claims.slowest_gap_over_devices(one)["pilot"] == [pytest.approx(1.0)]


def test_fig9_draws_the_mean_with_a_min_max_bar_and_marks_a_censored_mean():
    m = _metrics((10.0, None, 50.0))
    fig = fig9_vs_devices(m["runs"])   # as hasfl_5_train_figures draws it
    right = fig.axes[1]                                               # converged time
    texts = [t.get_text() for t in right.get_legend().get_texts()]
    assert "HABS+RMS (mean of 3 draws)" in texts and "RBS+RMS (mean of 3 draws)" in texts
    assert "HASFL" in texts and "HABS+RMS (not converged in a draw: mean ≥)" in texts
    lines = {ln.get_label(): ln for ln in right.lines}
    rbs = lines["RBS+RMS (mean of 3 draws)"]
    assert list(rbs.get_ydata()) == [40.0, 40.0]                      # the means, not draw 0's 20 s
    habs = lines["HABS+RMS (mean of 3 draws)"]                       # N = 10's mean is a bound: the line breaks
    assert habs.get_ydata()[0] == 40.0 and np.isnan(habs.get_ydata()[1])
    cross = lines["HABS+RMS (not converged in a draw: mean ≥)"]
    assert cross.get_marker() == "x" and list(cross.get_ydata()) == [pytest.approx(50.0)]
    # min-max bars: RBS+RMS 20..60 at both N, HABS+RMS 40..40 and 10..90 (the censored draw at its 90 s); HASFL
    # (one run) has none
    spans = sorted(sorted((round(float(seg[0][1]), 6), round(float(seg[1][1]), 6)) for seg in c.get_segments())
                   for c in right.collections if len(c.get_segments()) == 2)
    assert spans == [[(10.0, 90.0), (40.0, 40.0)], [(20.0, 60.0), (20.0, 60.0)]]
    assert "min-max over the draws" in right.get_legend().get_title().get_text()
    # the drawn methods sit apart in x, HASFL at N
    assert list(lines["HASFL"].get_xdata()) == [5, 10]
    assert sorted([rbs.get_xdata()[0], habs.get_xdata()[0]]) == [pytest.approx(5 - 0.15), pytest.approx(5 + 0.15)]
    plt.close(fig)
