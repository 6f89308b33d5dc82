"""HASFL's explorer (fedlib.lab.hasfl.explore): its callbacks as plain functions give the library's decisions; typed and
CSV devices; a model of your own; bad input shown in place; a control moved through its widget changes the
decision; the JSON export."""
import json
import math

import numpy as np
import pytest

from fedlib.lab.paths import use_profile
from fedlib.lab.hasfl import explore as hx
from fedlib.lab.hasfl.runs.training import bound_constants, decide, target_eps, training_problem


@pytest.fixture(scope="module")
def st():
    use_profile("converged")
    return hx.setup("converged")          # the committed converged store's pilot and calibration: no training


@pytest.fixture(scope="module")
def ex(st):
    return hx.explorer(st, draws=2, sweep_points=3)


def _text(devices) -> str:
    return "\n".join(f"{float(devices.flops[i] / 1e12)!r}, {float(devices.rate_up[i] / 1e6)!r}, "
                     f"{float(devices.rate_down[i] / 1e6)!r}, "
                     f"{float(devices.memory_bits[i] / 8e9)!r}" for i in range(devices.num_devices))


def test_defaults_give_the_training_plans_decision(st, ex):
    """At the defaults the explorer's problem and HASFL's decision are the plan's (training_problem + decide)."""
    s = st.settings
    consts = bound_constants(st.pilot, "pilot")
    plan = training_problem(s, consts, target_eps(st.pilot, consts, s, 20), 20, 0)
    want = decide(plan, "HASFL", 0)
    got = hx.compute(st, **ex.defaults())
    assert got["hasfl"]["b"] == want["b"] and got["hasfl"]["cuts"] == want["cuts"]
    assert math.isclose(got["hasfl"]["theta"], want["theta"], rel_tol=1e-9)
    assert got["eps"] == plan.eps
    np.testing.assert_array_equal(got["problem"].devices.flops, plan.devices.flops)
    # the run log's numbers for this decision: mean b 30.1 at cut 1 (README, converged plan, seed 0)
    assert abs(np.mean(got["hasfl"]["b"]) - 30.1) < 0.05 and set(got["hasfl"]["cuts"]) == {1}
    for m in hx.BENCHMARKS:                       # draw k from the plan's stream of draw k
        for k, d in enumerate(got["benchmarks"][m]):
            ref = decide(plan, m, 0, draw=k)
            assert (d["b"], d["cuts"]) == (ref["b"], ref["cuts"])


def test_calibrated_constants_are_the_committed_fit(st, ex):
    from fedlib.hasfl.bound.calibrate import calibrated_constants
    got = hx.compute(st, **dict(ex.defaults(), constants="calibrated"))
    assert got["eps"] == pytest.approx(st.fit["eps"], rel=1e-12)
    want = calibrated_constants(bound_constants(st.pilot, "pilot"), st.fit["kappa"], st.fit["lambda"])
    np.testing.assert_allclose(got["problem"].constants.G2, want.G2, rtol=1e-12)
    assert st.fit["kappa"] == pytest.approx(0.157871) and st.fit["eps"] == pytest.approx(133.019)


def test_a_slider_moves_the_problem_as_the_library_scales_it(st, ex):
    """Halving the uplink range and doubling ε: the problem's rates and ε follow (SI units), the decision is the
    library's on that problem."""
    v = dict(ex.defaults(), uplink_mbps=(37.5, 40.0), eps_scale=2.0)
    got = hx.compute(st, **v)
    base = hx.compute(st, **ex.defaults())
    p = got["problem"]
    assert p.eps == pytest.approx(2 * base["eps"], rel=1e-12)
    assert 37.5e6 <= p.devices.rate_up.min() and p.devices.rate_up.max() <= 40e6
    ref = decide(p, "HASFL", 0)
    assert (got["hasfl"]["b"], got["hasfl"]["cuts"]) == (ref["b"], ref["cuts"])


def test_typed_and_csv_devices_give_the_drawn_systems_decision(st, ex, tmp_path):
    base = hx.compute(st, **dict(ex.defaults(), num_devices=5))
    text = _text(base["problem"].devices)
    typed = hx.compute(st, **dict(ex.defaults(), num_devices=5, devices=text))
    assert (typed["hasfl"]["b"], typed["hasfl"]["cuts"]) == (base["hasfl"]["b"], base["hasfl"]["cuts"])
    np.testing.assert_allclose(typed["problem"].devices.memory_bits, base["problem"].devices.memory_bits, rtol=1e-12)
    csv = tmp_path / "devices.csv"
    csv.write_text("compute_tflops, uplink_mbps, downlink_mbps, memory_gb\n" + text + "\n")
    d = hx.devices_from_csv(csv)
    np.testing.assert_allclose(d.rate_down, base["problem"].devices.rate_down, rtol=1e-12)
    # the typed N wins over the slider's N
    assert hx.compute(st, **dict(ex.defaults(), num_devices=20, devices=text))["problem"].num_devices == 5
    two = hx.devices_from_text("1, 80, 370, 0.5; 2, 75, 360, 1  # two devices")
    np.testing.assert_array_equal(two.flops, [1e12, 2e12])
    np.testing.assert_array_equal(two.memory_bits, [4e9, 8e9])
    np.testing.assert_array_equal(two.rate_up_fed, two.rate_up)


@pytest.mark.parametrize("text, where", [
    ("1, 80, 370, 0.5\n2, 75, x, 1", "row 2, downlink_mbps"),
    ("1, 80, 370, 0.5\n1, 80, 370", "row 2: 3 values"),
    ("1, -80, 370, 0.5", "row 1, uplink_mbps"),
    ("nan, 80, 370, 0.5", "row 1, compute_tflops"),
    ("1, 80, inf, 0.5", "row 1, downlink_mbps"),
    ("# only a comment", "no device given"),
])
def test_bad_device_rows_are_named(text, where):
    with pytest.raises(ValueError, match=where.replace("(", r"\(")):
        hx.devices_from_text(text)


def test_bad_input_is_shown_in_place_never_raised(st, ex):
    for values, words in (({"devices": "1, 80, x, 1"}, "row 1, downlink_mbps"),
                          ({"devices": "1, 80, 370, 0.0001"}, "memory constraint C4: device 0"),
                          ({"constants": "nope"}, "constants"),
                          ({"draws": 0}, "draws"),
                          ({"device_tflops": None}, "device_tflops must be a range"),
                          ({"uplink_mbps": 5}, "uplink_mbps must be a range"),
                          ({"memory_gb": ("3", "4")}, "memory_gb (low, high)"),
                          ({"memory_gb": (2.0, 1.0)}, "low <= high"),
                          ({"memory_gb": (2000.0, 2000.0)}, "memory_gb (low, high) must be > 0 and <= 1000"),
                          ({"memory_gb": (1e30, 1e30)}, "1e+30 GB is 1e+39 B, above any real device memory"),
                          ({"devices": "1, 80, 370, 1e4"}, "devices row 1, memory_gb"),
                          ({"num_devices": 101}, "num_devices"),
                          ({"num_device": 5}, "unknown control")):
        result, views, err = ex.evaluate(**values)
        assert result is None and views == [] and err.startswith("Cannot compute this") and words in err, err


def test_calibrated_is_refused_for_a_model_of_your_own(st, ex):
    import dataclasses
    mine = dataclasses.replace(st, fit=None, fit_error="a calibration belongs to the model it was fitted on")
    _, _, err = hx.explorer(mine).evaluate(constants="calibrated")
    assert "calibration belongs to the model" in err


def test_moving_a_widget_changes_the_decision_shown(st, capsys):
    """The live path without a browser: show() builds the widgets; setting a slider's value (what a drag does)
    recomputes through the observer, and update() sets values by name."""
    e = hx.explorer(st, sweep_points=2)
    e.show()
    before = e.result["hasfl"]
    e._widgets["eps_scale"].value = 0.95           # a tighter ε: larger batches
    after = e.result["hasfl"]
    assert e.error == "" and np.mean(after["b"]) > np.mean(before["b"])
    ref = decide(hx.compute(st, **e.values())["problem"], "HASFL", 0)
    assert after["b"] == ref["b"]
    assert e.update(devices="1, 80, x, 1") is None and "row 1" in e.error
    assert e.result["hasfl"] == after                # the last good result stays
    with pytest.raises(ValueError, match="unknown control"):
        e.update(no_such=1)
    capsys.readouterr()


def test_sweep_marks_where_the_decision_changes(st, ex):
    rows = hx.sweep(st, ex.defaults(), "epsilon", 4)
    assert [r["value"] for r in rows] == pytest.approx(list(np.geomspace(0.25, 4.0, 4)))
    for prev, r in zip(rows, rows[1:]):
        assert r["changed"] == ((r["b"], r["cuts"]) != (prev["b"], prev["cuts"]))
    assert rows[0]["b"] is None and "floor" in rows[0]["note"]      # 0.25 x the plan's ε: below the floor
    p = hx._problem(st, dict(ex.defaults(), eps_scale=rows[2]["value"]))
    assert decide(p, "HASFL", 0)["b"] == rows[2]["b"]
    ints = hx.sweep(st, dict(ex.defaults(), num_devices=4), "devices N", 5)
    assert [r["value"] for r in ints] == [1, 2, 4, 8, 16]
    with pytest.raises(ValueError, match="sweep_over"):
        hx.sweep(st, ex.defaults(), "bandwidth", 4)


def test_export_writes_the_decision_and_creates_no_folder(st, ex, tmp_path):
    result = ex.result = hx.compute(st, **ex.defaults())
    out = tmp_path / "d.json"
    ex.export(str(out))
    data = json.loads(out.read_text())
    assert data["HASFL"]["b"] == result["hasfl"]["b"] and len(data["devices"]) == 20
    assert data["devices"][3]["rate_up_bps"] == float(result["problem"].devices.rate_up[3])
    with pytest.raises(ValueError, match="does not exist"):
        ex.export(str(tmp_path / "missing" / "d.json"))
    assert not (tmp_path / "missing").exists()
    assert "empty" in ex.export("").text


def test_sliders_cannot_reach_an_impossible_value(st):
    for c in hx.controls(st, 20, "pilot", 1, "RBS+RMS"):
        if c.kind in ("float", "int", "range"):
            assert c.low > 0 or c.name == "system_seed", c.name
            lo = c.default if c.kind != "range" else c.default[0]
            hi = c.default if c.kind != "range" else c.default[1]
            assert c.low <= lo <= hi <= c.high, c.name


def test_a_model_of_your_own_is_profiled_and_gets_its_own_pilot():
    """A two-unit CNN on Fashion-MNIST (1 x 28 x 28): profiled by the library, constants from the library's pilot at
    the smoke plan's settings, and a decision with cuts in 1..2."""
    import torch
    from torch import nn

    from fedlib.data import load_dataset
    use_profile("smoke")
    try:
        ds = load_dataset("fashion-mnist")
        base = hx.setup("smoke", store=_tmp_store())
        torch.manual_seed(0)
        model = nn.Sequential(nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)),
                              nn.Sequential(nn.Flatten(), nn.Linear(4 * 14 * 14, 10)))
        mine = hx.own_model_setup(base, model, "tiny", data=ds)
        assert mine.profile.num_layers == 2 and mine.fit is None
        assert mine.profile.fwd_flops[0] == pytest.approx(2 * 4 * 9 * 28 * 28, rel=0.01)   # the conv's MACs x 2
        result = hx.explorer(mine, num_devices=4).evaluate()
        assert result[2] == "" and set(result[0]["hasfl"]["cuts"]) <= {1, 2}
    finally:
        use_profile("converged")


def _tmp_store():
    import tempfile

    from fedlib.lab.hasfl.runs import experiments
    return experiments.result_store(tempfile.mkdtemp(prefix="hx_store_"))


def test_memory_that_would_flood_the_batch_search_is_refused_by_device(st, ex):
    """500 GB on device 1 lets it hold millions of samples at cut 1; the exact batch search would enumerate them
    (memory without bound): refused, naming the device, before the optimiser runs."""
    text = "1, 80, 370, 0.5; 1, 80, 370, 500"
    _, _, err = ex.evaluate(devices=text)
    assert "memory: device 1 fits" in err and "above the 1,000,000" in err


def test_sweeps_that_typed_devices_would_flatten_are_refused(st, ex):
    values = dict(ex.defaults(), devices="1, 80, 370, 0.5; 2, 75, 360, 1")
    for over in hx.TYPED_OVERRIDES:
        with pytest.raises(ValueError, match="typed devices replace"):
            hx.sweep(st, values, over, 3)
    assert len(hx.sweep(st, values, "aggregation interval", 2)) == 2


def test_csv_with_a_bom_and_export_to_a_folder(st, ex, tmp_path):
    csv = tmp_path / "excel.csv"
    csv.write_bytes("\ufeffcompute_tflops,uplink_mbps,downlink_mbps,memory_gb\r\n1,80,370,0.5\r\n".encode("utf-8"))
    assert hx.devices_from_csv(csv).num_devices == 1
    csv.write_bytes("1,80,370,0.5\n\xe9".encode("latin-1"))
    with pytest.raises(ValueError, match="devices_csv excel.csv: not UTF-8"):
        hx.devices_from_csv(csv)
    ex.result = hx.compute(st, **ex.defaults())
    with pytest.raises(ValueError, match="is a folder"):
        ex.export(str(tmp_path))


def test_a_model_that_does_not_take_the_data_is_refused_before_its_pilot():
    from torch import nn
    use_profile("smoke")
    try:
        base = hx.setup("smoke", store=_tmp_store())
        rgb = nn.Sequential(nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU()), nn.Sequential(nn.Flatten(), nn.LazyLinear(10)))
        with pytest.raises(ValueError, match="does not take the dataset's input"):
            hx.own_model_setup(base, rgb, "rgb", data=object())           # no data is touched before the refusal
        three = nn.Sequential(nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU()), nn.Sequential(nn.Flatten(),
                                                                                       nn.Linear(4 * 26 * 26, 3)))
        with pytest.raises(ValueError, match=r"outputs \(3,\) per sample; fashion-mnist has 10 classes, so it must "
                                             r"output \(10,\)"):
            hx.own_model_setup(base, three, "three", data=object())      # before its pilot: no IndexError
        for spec, words in ((":", "import path 'package.module:name'"), ("fedlib.split.models:nope", "has no 'nope'"),
                            ("fedlib.split.models:resnet_init", "raised")):
            with pytest.raises(ValueError, match=words):
                hx.own_model(spec, 1, 28, 10)
    finally:
        use_profile("converged")


def test_a_sweep_whose_decision_never_changes_marks_no_change(st, ex, monkeypatch):
    """With the decision held fixed (a new but equal dict at every point), no point is marked as a change; with
    one change of one device's batch size, exactly that point is."""
    from fedlib.lab.hasfl.runs import training
    calls = []

    def same(problem, method, seed, draw=0):
        calls.append(problem.eps)
        return {"b": [30] * problem.num_devices, "cuts": [1] * problem.num_devices, "theta": 1000.0}
    monkeypatch.setattr(training, "decide", same)
    rows = hx.sweep(st, ex.defaults(), "epsilon", 5)
    assert len(calls) == 5 and [r["changed"] for r in rows] == [False] * 5

    def one_change(problem, method, seed, draw=0):
        d = same(problem, method, seed)
        if len(calls) >= 9:                         # points 3 and 4 of this sweep (calls 9, 10)
            d["b"][2] = 31
        return d
    monkeypatch.setattr(training, "decide", one_change)
    rows = hx.sweep(st, ex.defaults(), "epsilon", 5)
    assert [r["changed"] for r in rows] == [False, False, False, True, False]


def test_the_system_seed_control_draws_another_system(st, ex):
    """system_seed is the seed of the drawn system (sample_system on its ``system`` stream): two seeds draw two
    systems, each the training plan's draw of that seed (Table I at the defaults); typed devices do not depend
    on it."""
    d = ex.defaults()
    p0, p7 = (hx._problem(st, dict(d, system_seed=s)) for s in (0, 7))
    assert not np.array_equal(p0.devices.flops, p7.devices.flops)
    assert not np.array_equal(p0.devices.rate_up, p7.devices.rate_up)
    plan = training_problem(st.settings, bound_constants(st.pilot, "pilot"), 1.0, 20, 7)
    np.testing.assert_array_equal(p7.devices.flops, plan.devices.flops)
    assert p7.servers.rate_to_fed == plan.servers.rate_to_fed
    typed = dict(d, devices="1, 80, 370, 0.5; 2, 75, 360, 1")
    a, b = (hx._problem(st, dict(typed, system_seed=s)) for s in (0, 7))
    np.testing.assert_array_equal(a.devices.flops, b.devices.flops)
