"""HASFL training experiments (fedlib.lab.hasfl.runs.training / train_plan): the clock equals the latency model, decisions,
run lengths, constants and ε rules, the claim ratios and ``hasfl_5_train_figures``' bound-vs-training cell, against
hand-computed values."""
import math
from dataclasses import replace

import numpy as np
import pytest

from fedlib.data import TensorDataset
from fedlib.hasfl import HasflConstants, round_latency, total_latency
from fedlib.lab.hasfl.runs.train_plan import claim_ratios
from fedlib.lab.hasfl.runs.train_config import hasfl_clock, run_config, summary_row
from fedlib.hasfl.training import split_config
from fedlib.lab.hasfl.runs.training import TrainSettings, bound_constants, decide, target_eps, training_problem
from fedlib.hasfl import training as hasfl_training
from fedlib.split import run_split
from hasfl5_cells import run

L = 16


def _constants(g2=0.01):
    return HasflConstants(100.0, np.full(L, 2.0), np.full(L, g2), 2.3)


def _problem(n=3, eps=50.0, g2=0.01, seed=0):
    return training_problem(TrainSettings(width=0.0625), _constants(g2), eps, n, seed)


def test_clock_equals_round_latency_and_run_total_equals_eq40():
    p = _problem(n=2)
    b, cuts = np.array([2, 3]), np.array([1, 4])
    lat = round_latency(p.profile, b, cuts, p.devices, p.servers)
    clock = hasfl_clock(p)
    assert clock(1, b, cuts, False) == pytest.approx(float(lat["T_S"]))
    assert clock(2, b, cuts, True) == pytest.approx(float(lat["T_S"] + lat["T_A"]))
    # a real run on a tiny random-label dataset (tests only): simulated time = eq. 40 with R = 5, I = 2
    g = np.random.default_rng(0)
    x = g.standard_normal((40, 1, 28, 28)).astype(np.float32)
    import torch
    ds = TensorDataset("toy", torch.from_numpy(x), torch.from_numpy(g.integers(0, 10, 40)), torch.from_numpy(x[:8]),
                       torch.from_numpy(g.integers(0, 10, 8)), tuple("0123456789"), "test")
    cfg = dict(run_config(replace(TrainSettings(width=0.0625), interval=2, evals=5), "iid",
                          {"b": [2, 3], "cuts": [1, 4]}, 0, 40), rounds=5, eval_every=1)
    rec = run_split(split_config(cfg), ds, "cpu", clock=clock)
    assert rec["round"] == [0, 1, 2, 3, 4, 5]
    assert rec["sim_s"][-1] == pytest.approx(float(total_latency(5, 2, lat["T_S"], lat["T_A"])))
    assert rec["sim_s"][1] == pytest.approx(float(lat["T_S"]))
    # train() caches the run without a clock and charges it afterwards: the same floats as the clock in the run
    from fedlib.lab.hasfl.runs import experiments, train_config
    charged = train_config.train(experiments.result_store(), cfg, p, ds, "cpu")
    assert charged["sim_s"] == rec["sim_s"] and charged["test_acc"] == rec["test_acc"]


def test_run_length_is_the_same_number_of_device_samples():
    s = TrainSettings(epochs=0.01, evals=15)
    cfg = run_config(s, "noniid", {"b": [8, 8], "cuts": [3, 3]}, 1, 60000)
    assert cfg["rounds"] == 38 and cfg["eval_every"] == 2           # ceil(600 / 16), 38 // 15
    assert run_config(s, "iid", {"b": [64, 64], "cuts": [3, 3]}, 1, 60000)["rounds"] == 5   # ceil(600 / 128)
    sc = split_config(cfg)
    assert sc.partition == "shards" and sc.batch_sizes == (8, 8) and sc.cuts == (3, 3) and sc.seed == 1
    assert "pilot_steps" not in cfg and cfg["setting"] == "noniid"
    clamp = replace(s, min_rounds=10, max_rounds=20)
    assert run_config(clamp, "iid", {"b": [64, 64], "cuts": [3, 3]}, 1, 60000)["rounds"] == 10
    assert run_config(clamp, "iid", {"b": [1, 1], "cuts": [3, 3]}, 1, 60000)["rounds"] == 20     # 300 -> 20
    with pytest.raises(ValueError, match="max_rounds"):
        replace(s, min_rounds=10, max_rounds=5)


def test_decisions_fixed_habs_hams():
    p = _problem(n=3, eps=50.0)
    d = decide(p, "fixed", 0, batch=16, cut=5)
    assert d["b"] == [16] * 3 and d["cuts"] == [5] * 3
    d = decide(p, "HAMS", 0, batch=16)
    assert d["b"] == [16] * 3 and all(1 <= c <= L for c in d["cuts"])
    d = decide(p, "HABS", 0, cut=8)
    assert d["cuts"] == [8] * 3 and all(b >= 1 for b in d["b"]) and d["note"] == ""
    # ε below cut 8's floor: HABS solves P1 at 1.1 x that floor and says so; Θ on the original problem is inf
    tight = _problem(n=3, eps=2.0, g2=1.0)
    d = decide(tight, "HABS", 0, cut=8)
    assert "eps raised" in d["note"] and d["cuts"] == [8] * 3 and d["theta"] is None
    # ε below the floor at b = 16 even at cut 1: HAMS solves P2 at 1.1 x that floor. By hand (β = 100, γ = 5e-4,
    # I = 15, N = 3, Σσ² = 32, G_1² = 1): variance βγΣσ²/(bN) = 1/30, split 4β²γ²I²G_1² = 2.25, floor 2.2833;
    # 1.1 x = 2.5117 admits only cut 1 (cut 2's split term is 4.5)
    d = decide(tight, "HAMS", 0, batch=16)
    assert d["note"] == "eps raised to 1.1 x the floor at b = 16, cut 1: 2.512"
    assert d["b"] == [16] * 3 and d["cuts"] == [1] * 3 and d["theta"] is None
    with pytest.raises(ValueError, match="method"):
        decide(p, "HASFL2", 0)


def test_random_benchmarks_draw_from_their_own_stream():
    p = _problem(n=4)
    a, b = decide(p, "RBS+RMS", 3), decide(p, "RBS+RMS", 3)
    assert a["b"] == b["b"] and a["cuts"] == b["cuts"]
    assert decide(p, "RBS+RMS", 4)["b"] != a["b"]


def test_constants_and_eps_rules():
    rec = {"constants": {"beta": 9.0, "sigma2": [3.0, 3.0], "G2": [5.0, 7.0], "vartheta": 2.0},
           "per_point": [{"beta": 9.0, "sigma2": [3.0, 1.0], "G2": [5.0, 7.0]},
                         {"beta": 4.0, "sigma2": [1.0, 3.0], "G2": [0.5, 1.5]}]}
    c = bound_constants(rec, "pilot")
    assert c.beta == 4.0 and list(c.G2) == [0.5, 1.5] and c.vartheta == 2.0
    assert bound_constants(rec, "max").beta == 9.0
    s = TrainSettings(eps_mode="grad_norm", eps_factor=3.0)
    assert target_eps(rec, c, s, 20) == pytest.approx(6.0)          # 3 x (0.5 + 1.5)
    with pytest.raises(ValueError, match="constants"):
        bound_constants(rec, "min")


@pytest.mark.parametrize("kw, name", [({"width": 0.0}, "width"), ({"evals": 3}, "evals"),
                                      ({"constants": "w0"}, "constants"), ({"lr": float("nan")}, "lr"),
                                      ({"eps_mode": "tight"}, "eps_mode"), ({"model": "vgg19"}, "model"),
                                      ({"momentum": 1.0}, "momentum"), ({"interval": 2.5}, "interval")])
def test_settings_reject_bad_values(kw, name):
    with pytest.raises((ValueError, TypeError), match=name):
        TrainSettings(**kw)


def _row(method, t, acc, figures=("fig6",), setting="iid", batch=None, cut=None, floor=1.0, rounds=None):
    return {"figures": list(figures), "method": method, "model": "vgg16", "setting": setting, "time_to_target_s": t,
            "final_test_acc": acc, "batch": batch, "cut": cut, "floor": floor, "rounds_to_target": rounds,
            "b_mean": batch or 1, "cut_max": cut or 1}


def test_claim_ratios_by_hand():
    rows = [_row("HASFL", 10.0, 0.8), _row("RBS+RMS", 40.0, 0.75), _row("RBS+HAMS", None, 0.5),
            _row("fixed", 30.0, 0.7, ("fig10",), batch=8), _row("fixed", 20.0, 0.72, ("fig10",), batch=16),
            _row("HABS", 10.0, 0.74, ("fig10",))]
    got = {(c["claim"], c["versus"]): c for c in claim_ratios(rows)}
    assert got[("fig6", "RBS+RMS")]["ratio"] == pytest.approx(4.0)
    assert got[("fig6", "RBS+RMS")]["acc_gain"] == pytest.approx(0.05)
    assert got[("fig6", "RBS+HAMS")]["ratio"] is None and "RBS+HAMS" in got[("fig6", "RBS+HAMS")]["note"]
    assert got[("fig10", "batch = 16")]["ratio"] == pytest.approx(2.0)   # best fixed b = 16: 20 s vs HABS 10 s
    assert got[("fig6", "RBS+RMS")]["method"] == "HASFL" and got[("fig10", "batch = 16")]["method"] == "HABS"
    # one row per HABS variant, each against the same best fixed batch size; a variant that never reached it
    rows += [_row("HABS-calibrated", 5.0, 0.76, ("fig10",)), _row("HABS-pilot", None, 0.1, ("fig10",))]
    got = {(c["claim"], c["method"]): c for c in claim_ratios(rows) if c["claim"] == "fig10"}
    assert set(got) == {("fig10", "HABS"), ("fig10", "HABS-calibrated"), ("fig10", "HABS-pilot")}
    assert got[("fig10", "HABS-calibrated")]["ratio"] == pytest.approx(4.0)
    assert got[("fig10", "HABS-calibrated")]["acc_gain"] == pytest.approx(0.04)
    assert got[("fig10", "HABS-pilot")]["ratio"] is None and "HABS-pilot" in got[("fig10", "HABS-pilot")]["note"]


def test_claim_ratios_at_convergence_by_hand():
    rows = [dict(_row("HASFL", 10.0, 0.8), converged_time_s=50.0, converged_acc=0.88),
            dict(_row("RBS+RMS", 40.0, 0.75), converged_time_s=300.0, converged_acc=0.86),
            dict(_row("RBS+HAMS", 20.0, 0.75), converged_time_s=None, converged_acc=None),
            dict(_row("fixed", 30.0, 0.7, ("fig10",), batch=8), converged_time_s=90.0, converged_acc=0.85),
            dict(_row("fixed", 20.0, 0.72, ("fig10",), batch=16), converged_time_s=60.0, converged_acc=0.87),
            dict(_row("HABS", 10.0, 0.74, ("fig10",)), converged_time_s=40.0, converged_acc=0.875)]
    got = {(c["claim"], c["versus"]): c for c in claim_ratios(rows)}
    assert got[("fig6", "RBS+RMS")]["conv_ratio"] == pytest.approx(6.0)            # 300 s / 50 s
    assert got[("fig6", "RBS+RMS")]["conv_acc_gain"] == pytest.approx(0.02)
    assert got[("fig6", "RBS+HAMS")]["conv_ratio"] is None and got[("fig6", "RBS+HAMS")]["conv_acc_gain"] is None
    # HABS against the fixed b that reached the target fastest (16): its converged time 60 s / HABS's 40 s
    assert got[("fig10", "batch = 16")]["conv_ratio"] == pytest.approx(1.5)
    assert got[("fig10", "batch = 16")]["conv_acc_gain"] == pytest.approx(0.005)


def _bound(rows):
    """``hasfl_5_train_figures``' cell of the bound against training, for Fig. 11 in the IID setting."""
    return [r for r in run("bound", rows=rows, st=("iid",), fixed_batch=16, fixed_cut=8)["bound"] if r["figure"] == "fig11"]


def test_bound_vs_training_by_hand():
    rows = [_row("fixed", 1.0, 0.7, ("fig11",), batch=16, cut=8, floor=1.0, rounds=30),
            _row("fixed", 1.0, 0.7, ("fig11",), batch=16, cut=13, floor=2.0, rounds=45)]
    out = {r["cut"]: r for r in _bound(rows)}
    # shared eps = 2.2: R ∝ 1/(eps - floor) -> (1/0.2) / (1/1.2) = 6
    assert out[13]["pred_ratio"] == pytest.approx(6.0) and out[13]["measured_ratio"] == pytest.approx(1.5)
    assert out[8]["pred_ratio"] == pytest.approx(1.0)
    # a run decided under other constants (a calibrated variant, floor on another scale) is left out
    rows = [dict(r, constants="pilot") for r in rows] + [
        dict(_row("HAMS-calibrated", 1.0, 0.7, ("fig11",), batch=16, floor=0.1, rounds=20), constants="calibrated")]
    out = _bound(rows)
    assert {r["method"] for r in out} == {"fixed"} and len(out) == 2
    assert {r["cut"]: r for r in out}[13]["pred_ratio"] == pytest.approx(6.0)
    # no reference run (b = 16 at cut 8) in a setting: no row for it
    assert _bound([rows[1]]) == []


def test_summary_row_reads_the_record():
    rec = {"test_acc": [0.1, 0.5, 0.7, 0.69], "sim_s": [0.0, 2.0, 4.0, 6.0], "epoch": [0, .1, .2, .3],
           "round": [0, 10, 20, 30], "converged_time_s": None, "converged_acc": None, "config": {"seed": 2}}
    row = summary_row(rec, {"b": [4, 8], "cuts": [1, 3], "theta": 5.0}, 0.6, method="HASFL")
    assert row["time_to_target_s"] == 4.0 and row["epochs_to_target"] == 0.2 and row["rounds"] == 30
    assert row["final_test_acc"] == 0.69 and row["best_test_acc"] == 0.7 and row["b_mean"] == 6.0
    assert row["cut_max"] == 3 and row["seed"] == 2
    assert math.isclose(row["theta_pred_s"], 5.0)


ACCS = [0.1, 0.15, 0.3, 0.5, 0.6, 0.62, 0.61, 0.62, 0.6, 0.615, 0.62, 0.7]
# the rule looks from index 2 (first >= 2 x chance = 0.2); at k = 10 the best of indices 6..10 (0.62) does not beat
# the best of 0..5 (0.62): converged at index 10 (k = 7, 8, 9 gain 0.32, 0.12, 0.02)


@pytest.mark.parametrize("stop_at_convergence, evals", [(True, 11), (False, 12)])
def test_stop_at_convergence_ends_the_run_where_the_rule_fires(monkeypatch, fmnist, stop_at_convergence, evals):
    from fedlib.lab.hasfl.runs import experiments, train_config
    def fake_run_split(cfg, ds, device, clock=None, stop=None, backend="loop"):
        assert (stop is not None) == stop_at_convergence and clock is None          # charged after the run
        rec = {"config": cfg.to_dict(), "round": [], "test_acc": [], "sim_s": []}
        for k, a in enumerate(ACCS):
            rec["round"].append(10 * k)
            rec["test_acc"].append(a)
            rec["sim_s"].append(0.0)
            if k and stop is not None and stop(rec):
                break
        return rec

    monkeypatch.setattr(hasfl_training, "run_split", fake_run_split)
    s = TrainSettings(width=0.0625, stop_at_convergence=stop_at_convergence)
    problem = _problem()
    decision = decide(problem, "fixed", 0, 4, 3)
    config = run_config(s, "iid", decision, 0, 600)
    assert config["stop_at_convergence"] is stop_at_convergence             # part of the run's cache key
    rec = train_config.train(experiments.result_store(), config, problem, fmnist)
    assert len(rec["test_acc"]) == evals
    clock = hasfl_clock(problem)                                          # round 100, I = 15: T_S x 100 + T_A x 6
    assert rec["converged_time_s"] == pytest.approx(sum(clock(r, [4] * 3, [3] * 3, r % 15 == 0) for r in range(1, 101)))
    assert rec["converged_index"] == 10 and rec["converged_acc"] == 0.62 and rec["sim_s"][10] == rec["converged_time_s"]


def test_a_training_record_survives_an_edit_of_the_decision_code(monkeypatch, fmnist, tmp_path):
    """The run is cached under the training code alone (fedlib.lab.hasfl.runs.train_run.TRAIN_CODE): a store hashing other
    code (as after an edit of the optimiser) finds it; a store of other training code does not."""
    from fedlib.lab.store import ResultStore
    from fedlib.lab.hasfl.runs import train_config, train_run
    calls = []

    def fake_run_split(cfg, ds, device, clock=None, stop=None, backend="loop"):
        calls.append(cfg.seed)
        return {"config": cfg.to_dict(), "round": [0, 5], "test_acc": [0.1, 0.5], "sim_s": [0.0, 0.0]}

    monkeypatch.setattr(hasfl_training, "run_split", fake_run_split)
    problem = _problem()
    config = run_config(TrainSettings(width=0.0625), "iid", decide(problem, "fixed", 0, 4, 3), 0, 600)
    a = train_config.train(ResultStore(tmp_path, code=("fedlib.hasfl.optimiser.bcd",)), config, problem, fmnist)
    b = train_config.train(ResultStore(tmp_path, code=("fedlib.hasfl.optimiser.p1",)), config, problem, fmnist)
    assert calls == [0] and a["test_acc"] == b["test_acc"] == [0.1, 0.5] and b["sim_s"][1] > 0
    monkeypatch.setattr(train_run, "TRAIN_CODE", train_run.TRAIN_CODE[1:])  # as if the training code had changed
    train_config.train(ResultStore(tmp_path, code=("fedlib.hasfl.optimiser.bcd",)), config, problem, fmnist)
    assert calls == [0, 0]


def test_table_i_scales_one_range_and_training_problem_draws_the_same_system():
    from fedlib.hasfl.bound.latency import table_i
    spec = table_i(5, {"server_flops": 4.0, "rate_up": 0.25})
    assert spec.num_devices == 5 and spec.server_flops == 80e12 and spec.rate_up == (18.75e6, 20e6)
    assert spec.device_flops == (1e12, 2e12) and spec.rate_servers == (360e6, 380e6)
    p1 = training_problem(TrainSettings(width=0.0625), _constants(), 50.0, 4, 3)
    p4 = training_problem(TrainSettings(width=0.0625), _constants(), 50.0, 4, 3, {"device_flops": 4.0})
    np.testing.assert_allclose(p4.devices.flops, 4 * p1.devices.flops, rtol=1e-12)
    np.testing.assert_array_equal(p4.devices.rate_up, p1.devices.rate_up)
    for bad, err in (({"gpu": 2.0}, "scale key"), ({"rate_up": 0.0}, "rate_up"), ({"rate_up": float("nan")}, "rate_up"),
                     ([("rate_up", 2.0)], "scale")):
        with pytest.raises((ValueError, TypeError), match=err):
            table_i(5, bad)


def _fake_split(calls, acc_at):
    """A run_split stand-in: evaluations at round 0, every eval_every and the last round, test accuracy acc_at(r);
    the stop hook as the engine calls it."""
    def fake_run_split(cfg, ds, device, clock=None, stop=None, backend="loop"):
        calls.append((cfg.rounds, cfg.eval_every))
        rec = {"config": cfg.to_dict(), "round": [], "epoch": [], "test_acc": [], "sim_s": [], "elapsed_s": []}
        for r in range(cfg.rounds + 1):
            if r % cfg.eval_every == 0 or r == cfg.rounds:
                for k, v in (("round", r), ("epoch", r / 50), ("test_acc", acc_at(r)), ("sim_s", 0.0),
                             ("elapsed_s", r / 10)):
                    rec[k].append(v)
                if r and stop is not None and stop(rec):
                    break
        return rec
    return fake_run_split


@pytest.mark.parametrize("curve, extended", [("rising", True), ("chance", False), ("early", False)])
def test_a_capped_rising_run_is_extended_with_the_same_evaluations(monkeypatch, fmnist, curve, extended):
    """Extension (fedlib.lab.hasfl.runs.train_config, "Extension"): 3 devices x b = 4 on 600 samples, 1 epoch = 50 rounds,
    evals 10 -> an evaluation every 5 rounds. Rising (0.1 + 0.01 r up to 0.5 at r = 40): the rule looks from index 2
    (r = 10, >= 0.2) and fires where the last 5 evaluations (r = 45..65) do not beat the best before (0.5 at r = 40):
    index 13, r = 65 > the 1-epoch cap, so the run is trained again with 2 epochs (100 rounds, every 5) and stops
    there. At chance (0.1 throughout) it is not extended; a run converged at r = 35 (0.3 from r = 10) neither."""
    from fedlib.lab.hasfl.runs import experiments, train_config, train_run
    from fedlib.lab.hasfl.runs.train_plan import stored_run
    acc_at = {"rising": lambda r: min(0.5, 0.1 + 0.01 * r), "chance": lambda r: 0.1,
              "early": lambda r: min(0.3, 0.1 + 0.02 * r)}[curve]
    calls = []
    monkeypatch.setattr(hasfl_training, "run_split", _fake_split(calls, acc_at))
    s = TrainSettings(width=0.0625, epochs=1.0, evals=10, stop_at_convergence=True, extend_epochs=2.0)
    problem = _problem()
    config = run_config(s, "iid", decide(problem, "fixed", 0, 4, 3), 0, 600)
    assert config == run_config(replace(s, extend_epochs=0.0), "iid", decide(problem, "fixed", 0, 4, 3), 0, 600)
    extend = train_config.extension_config(s, config, 600)
    assert (config["rounds"], config["eval_every"], extend["rounds"], extend["eval_every"]) == (50, 5, 100, 5)
    assert extend["epochs"] == 2.0 and train_config.extension_config(replace(s, extend_epochs=0.0), config, 600) is None
    store = experiments.result_store()
    rs = train_run.train_store(store)
    assert not stored_run(rs, config, extend, fmnist)
    rec = train_config.train(store, config, problem, fmnist, extend=extend)
    assert stored_run(rs, config, extend, fmnist)
    if extended:
        assert calls == [(50, 5), (100, 5)]
        assert rec["round"] == list(range(0, 70, 5)) and rec["converged_index"] == 13 and rec["converged_acc"] == 0.5
        capped = rs.load(config)                                           # the capped record stays in the store
        assert capped["round"][-1] == 50 and capped["converged_index"] is None
        assert rec["extended_from_epochs"] == 1.0 and rec["capped_elapsed_s"] == capped["elapsed_s"]
    else:
        assert calls == [(50, 5)] and rec["extended_from_epochs"] is None
        assert rec["converged_index"] == (None if curve == "chance" else 7)            # r = 35
    calls.clear()
    assert train_config.train(store, config, problem, fmnist, extend=extend)["round"] == rec["round"] and calls == []


@pytest.mark.parametrize("kw, match", [(dict(extend_epochs=3.0), "extend_epochs must be 0 .off. or > epochs = 3.0"),
                                       (dict(extend_epochs=-1.0), "extend_epochs"),
                                       (dict(extend_epochs=float("nan")), "extend_epochs"),
                                       (dict(extend_epochs=6.0, stop_at_convergence=False), "needs stop_at_conv")])
def test_extend_epochs_is_checked(kw, match):
    with pytest.raises(ValueError, match=match):
        TrainSettings(**dict(dict(epochs=3.0, stop_at_convergence=True), **kw))
