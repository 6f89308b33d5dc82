"""DTFL's explorer (fedlib.lab.dtfl.explore) as plain functions: its numbers are the library's (called here directly),
typed and CSV clients equal the same arrays, bad input is refused by row and field, and the widgets drive it."""
import json
import inspect
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from fedlib.lab.params import declared_parameters
from fedlib.core.seeding import numpy_rng
from fedlib.dtfl import CASES, ResourceProfile, TimeModel, profile_schedule, simulate, tier_costs
from fedlib.lab.dtfl import experiments as dx
from fedlib.lab.dtfl import checks as dtfl_checks, explore as de
from fedlib.dtfl.baseline_time import method_costs, method_times
from fedlib.lab.dtfl.compare import costs_of
from fedlib.lab.dtfl.timeline import method_timeline, scheduled_tiers, tier_timeline

BASE = dict(model="resnet20", width=0.25, dataset="fashion-mnist", num_tiers=6, samples_per_client=40,
            core_gflops=3.0, server_gflops=5.0)
TEXT = "cpus, mbps, samples\n2, 30, 40\n0.2, 30, 40\n1 10 40\n4; 100; 40\n0.1, 10, 40  # the slowest\n"
ARRAYS = ([2.0, 0.2, 1.0, 4.0, 0.1], [30.0, 30.0, 10.0, 100.0, 10.0], [40] * 5)


def _library(cpus, mbps, samples, m=6, **kw):
    """What dtfl_2_table1 computes for these clients, straight from the library."""
    s = dict(BASE, num_tiers=m, **kw)
    tm = dx.time_model(s["model"], s["width"], s["dataset"], m, s["core_gflops"], s["server_gflops"])
    fed = costs_of("fedavg", s["model"], s["width"], s["dataset"])
    tiers = scheduled_tiers(tm, cpus, mbps, samples)
    return tm, fed, tiers


def _same(a, b):
    assert np.allclose(a, b, rtol=1e-12, atol=0), (a, b)


def test_compute_is_the_library():
    r = de.compute(**BASE, num_clients=6, clients_from="ranges", cpus_range=(0.1, 4.0), mbps_range=(10.0, 100.0),
                   seed=3)
    cpus, mbps, n = r["cpus"], r["mbps"], r["samples"]
    assert n == [40] * 6 and all(0.099 <= c <= 4.01 for c in cpus) and all(9.9 <= b <= 100.5 for b in mbps)
    tm, fed, tiers = _library(cpus, mbps, n)
    assert r["tiers"] == tiers.tolist()
    assert r["client_modules"] == tm.costs.cuts[tiers - 1].tolist()
    t = tm.times(tiers, cpus, mbps, n)
    for key in ("T_c", "T_s", "T_com", "T"):
        _same(r[key], t[key])
    _same(r["fedavg_T"], method_times(fed, cpus, mbps, n, tm.core_flops, tm.server_flops)["T"])
    assert r["dtfl_round_s"] == pytest.approx(tier_timeline(tm, tiers, cpus, mbps, n).model_latency, rel=1e-12)
    assert r["fedavg_round_s"] == pytest.approx(
        method_timeline(fed, cpus, mbps, n, tm.core_flops, tm.server_flops).model_latency, rel=1e-12)
    assert r["ratio"] == pytest.approx(r["dtfl_round_s"] / r["fedavg_round_s"], rel=1e-12)
    # Table 1's single-tier rounds against the library's own round simulation
    profiles, idx = tuple(ResourceProfile(c, b) for c, b in zip(cpus, mbps)), [list(range(6))]
    for m, round_s in enumerate(r["round_s_by_tier"], start=1):
        sim = simulate(tm, profiles, idx, n, np.random.default_rng(0), fixed_tier=m, noise=0.0)
        assert round_s == pytest.approx(sim["round_s"][0], rel=1e-12)
    assert r["best_tier"] == 1 + int(np.argmin(r["round_s_by_tier"]))
    # the scheduler's second round without noise is the tiers shown (scheduled_tiers' docstring)
    sim = simulate(tm, profiles, [list(range(6))] * 2, n, np.random.default_rng(0), noise=0.0)
    assert sim["tiers"][1] == r["tiers"]
    assert r["dtfl_timeline"].latency == pytest.approx(r["dtfl_round_s"], rel=1e-12)


def test_the_paper_cases_are_the_notebooks_round_one():
    r = de.compute(**BASE, num_clients=10, clients_from="case1", seed=0)
    idx = profile_schedule(10, 12, 3, 0, 0.3, numpy_rng(0, "system"))[0]   # dx.system_inputs' draw, round 1
    assert r["cpus"] == [CASES["case1"][i].cpus for i in idx]
    assert r["mbps"] == [CASES["case1"][i].mbps for i in idx]
    assert r["tiers"] == _library(r["cpus"], r["mbps"], r["samples"])[2].tolist()


def test_draws_depend_on_the_seed_only_and_keep_a_clients_pair_at_any_k():
    a = de.draw_clients("ranges", 3, (0.1, 4.0), (10.0, 100.0), 0)
    b = de.draw_clients("ranges", 8, (0.1, 4.0), (10.0, 100.0), 0)
    assert a == de.draw_clients("ranges", 3, (0.1, 4.0), (10.0, 100.0), 0)
    assert a[0] == b[0][:3] and a[1] == b[1][:3]
    assert a != de.draw_clients("ranges", 3, (0.1, 4.0), (10.0, 100.0), 1)
    assert de.draw_clients("ranges", 4, (2.0, 2.0), (7.0, 7.0), 5) == ([2.0] * 4, [7.0] * 4)


def test_typed_and_csv_clients_are_the_same_arrays(tmp_path):
    assert de.clients_from_text(TEXT) == ARRAYS
    assert de.clients_from_text("2, 30\n0.2, 30") == ([2.0, 0.2], [30.0, 30.0], None)
    assert de.clients_from_text("mbps,cpus\n30,2\n10,0.5") == ([2.0, 0.5], [30.0, 10.0], None)   # header order
    path = tmp_path / "clients.csv"
    path.write_text(TEXT.replace(";", ","), encoding="utf-8-sig")
    assert dtfl_checks.clients_from_csv(path) == ARRAYS
    typed = de.compute(**BASE, clients=TEXT)
    tm, fed, tiers = _library(*ARRAYS)
    assert typed["tiers"] == tiers.tolist() and typed["samples"] == ARRAYS[2]
    _same(typed["T"], tm.times(tiers, *ARRAYS)["T"])
    from_file = de.explorer(**BASE, clients_csv=str(path)).evaluate()[0]
    for key in ("cpus", "mbps", "samples", "tiers", "T", "fedavg_T", "dtfl_round_s", "fedavg_round_s"):
        assert from_file[key] == typed[key], key
    # rows without samples take samples_per_client
    plain = de.compute(**dict(BASE, samples_per_client=40), clients="2, 30\n0.2, 30\n1, 10\n4, 100\n0.1, 10")
    assert plain["tiers"] == typed["tiers"] and plain["T"] == typed["T"]


@pytest.mark.parametrize("text, match", [
    ("1, 30\n2, -1", r"row 2, mbps: must be > 0"),
    ("1, nan", r"row 1, mbps:"),
    ("1, inf", r"row 1, mbps:"),
    ("0, 30", r"row 1, cpus: must be > 0"),
    ("cpus, mbps\n1, 30\nabc, 3", r"row 3, cpus: not a number: 'abc'"),
    ("1,,30", r"row 1, mbps: not a number"),
    ("1, 30, 2.5", r"row 1, samples:"),
    ("1, 30, 0", r"row 1, samples:"),
    ("1, 30, 10\n\n2, 30", r"row 3, samples: give samples in every row or in none"),
    ("1", r"row 1: expected cpus, mbps\[, samples\], got 1 values"),
    ("1, 2, 3, 4", r"row 1: expected"),
    # decimal commas (issue 70): mixed separators refused; a wrong count of comma-separated values hints at them
    ("1,5; 30", r"row 1: mixes ',' and ';' \('1,5; 30'\): separate the values with one kind; a decimal is written "
                r"with a point \(1.5, not 1,5\)"),
    ("2, 30\n0,5, 30, 1,2", r"row 2: expected cpus, mbps\[, samples\], got 5 values: '0,5, 30, 1,2'; a decimal is"),
    ("cpus, speed\n1, 30", r"row 1: the header must name the columns"),
    ("", r"no client rows"),
    ("# a comment only\n  \n", r"no client rows"),
])
def test_bad_rows_are_refused_by_row_and_field(text, match):
    with pytest.raises(ValueError, match=match):
        de.clients_from_text(text)


@pytest.mark.parametrize("values, match", [
    (dict(cpus_range=(math.nan, 1.0)), r"cpus_range\[0\]"),
    (dict(cpus_range=(-1.0, 2.0)), r"cpus_range\[0\]"),
    (dict(mbps_range=(20.0, 10.0)), r"mbps_range must have low <= high"),
    (dict(num_clients=0), r"num_clients"),
    (dict(samples_per_client=0), r"samples_per_client"),
    (dict(num_tiers=8), r"num_tiers"),
    (dict(core_gflops=0.0), r"core_gflops"),
    (dict(server_gflops=math.inf), r"server_gflops"),
    (dict(model="resnet99"), r"model"),
    (dict(clients_from="case9"), r"clients_from"),
    (dict(width=-0.5), r"width"),
])
def test_compute_refuses_bad_input(values, match):
    with pytest.raises(ValueError, match=match):
        de.compute(**{**BASE, "num_clients": 3, **values})


def test_explorer_evaluate_shows_an_error_line_not_an_exception():
    ex = de.explorer(**BASE, num_clients=3)
    result, views, err = ex.evaluate(clients="1, 30\n2, -1")
    assert result is None and views == [] and err.startswith("Cannot compute this: row 2, mbps:")
    result, views, err = ex.evaluate()
    assert err == "" and len(views) == 2 and result["tiers"] == de.compute(**BASE, num_clients=3)["tiers"]
    assert "DTFL round" in views[0].data and "| client |" in views[0].data


def test_explorer_refuses_bad_defaults(tmp_path):
    with pytest.raises(ValueError, match="row 1, cpus"):
        de.explorer(**BASE, clients_text="-1, 30")
    for kind in (FileNotFoundError, ValueError):
        with pytest.raises(kind, match="clients_csv: no file"):
            de.explorer(**BASE, clients_csv=str(tmp_path / "none.csv"))
    bad = tmp_path / "bad.csv"
    bad.write_text("cpus,mbps\n1,30\n1,0\n")
    with pytest.raises(ValueError, match="clients_csv: row 3, mbps"):
        de.explorer(**BASE, clients_csv=str(bad))
    with pytest.raises(ValueError, match="export_path: the folder"):
        de.check_dtfl_explore(dict(_defaults(), export_path=str(tmp_path / "no" / "d.json")))
    with pytest.raises(ValueError, match="clients_text and clients_csv: give one of them"):
        de.explorer(**BASE, clients_text="1, 30", clients_csv="x.csv")
    with pytest.raises(ValueError, match="num_tiers"):
        de.explorer(**dict(BASE, num_tiers=0))


def test_widgets_drive_the_update():
    pytest.importorskip("ipywidgets")
    ex = de.explorer(**BASE, num_clients=3)
    ex.show()                                            # outside a kernel: displays fall back to text
    assert ex.result is not None and ex.error == ""
    assert ex.update(num_tiers=3)["settings"]["num_tiers"] == 3 and ex._widgets["num_tiers"].value == 3
    ex._widgets["clients"].value = "1, 30\n0.2, 10"      # what typing in the text box does
    assert ex.result["cpus"] == [1.0, 0.2] and ex.error == ""
    ex._widgets["clients"].value = "1, 30\n0.2, -10"
    assert ex.result["cpus"] == [1.0, 0.2] and ex.error.startswith("Cannot compute this: row 2, mbps")


def _net(flat_at: int | None = None):
    """8 units on (1, 8, 8) inputs, 5 classes; ``flat_at``: that unit flattens its output (DTFL cannot cut there)."""
    units = [nn.Sequential(nn.Conv2d(1 if i == 0 else 4, 4, 3, padding=1), nn.ReLU()) for i in range(7)]
    if flat_at is not None:
        units[flat_at - 1].append(nn.Flatten())
    return nn.Sequential(*units, nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5)))


def test_your_own_model_is_profiled_by_the_library():
    torch.manual_seed(0)
    net, shape = _net(), (1, 8, 8)
    r = de.compute(**dict(BASE, model=de.OWN), num_clients=4, net=net, input_shape=shape, num_classes=5)
    tm = TimeModel(tier_costs(net, shape, 6, 5), 3e9, 5e9)
    tiers = scheduled_tiers(tm, r["cpus"], r["mbps"], r["samples"])
    assert r["tiers"] == tiers.tolist()
    _same(r["T"], tm.times(tiers, r["cpus"], r["mbps"], r["samples"])["T"])
    fed = method_costs("fedavg", net, shape, 5)
    _same(r["fedavg_T"], method_times(fed, r["cpus"], r["mbps"], r["samples"], 3e9, 5e9)["T"])
    ex = de.explorer(**dict(BASE, model=net), input_shape=shape, num_classes=5, num_clients=4)
    assert ex.evaluate()[0]["tiers"] == r["tiers"] and ex.evaluate(model="resnet20")[2] == ""
    with pytest.raises(ValueError, match=r"md3 outputs \(256,\) per sample"):
        de.explorer(**dict(BASE, model=_net(flat_at=3)), input_shape=shape, num_classes=5)
    with pytest.raises(ValueError, match="8 units"):
        de.check_model(nn.Sequential(*list(net)[:7]), shape, 5)
    with pytest.raises(ValueError, match=r"md8 outputs \(5,\) per sample, expected \(3,\)"):
        de.check_model(net, shape, 3)
    with pytest.raises(ValueError, match="md1 does not take input_shape"):
        de.check_model(net, (3, 8, 8), 5)
    with pytest.raises(ValueError, match="needs net"):
        de.compute(**dict(BASE, model=de.OWN), num_clients=2)


def test_export_json_and_write(tmp_path):
    r = de.compute(**BASE, clients=TEXT)
    doc = json.loads(de.export_json(r))
    assert [c["tier"] for c in doc["clients"]] == r["tiers"] and doc["dtfl_round_s"] == r["dtfl_round_s"]
    assert [c["cpus"] for c in doc["clients"]] == ARRAYS[0] and doc["settings"]["num_tiers"] == 6
    assert "arxiv.org/abs/2312.05642" in doc["source"]
    ex = de.explorer()
    ex.result = r                                         # the state shown
    assert "written" in ex.export(str(tmp_path / "d.json")).text
    assert json.loads((tmp_path / "d.json").read_text()) == doc
    with pytest.raises(ValueError, match="does not exist"):
        ex.export(str(tmp_path / "missing" / "d.json"))
    assert not (tmp_path / "missing").exists()
    for bad in (str(tmp_path), None):                     # a folder; no path (never a file named "None")
        with pytest.raises(ValueError):
            ex.export(bad)
    assert not Path("None").exists()


def test_sweep_is_the_scheduler_at_each_speed():
    values = dict(BASE, clients=TEXT, num_clients=5, clients_from="ranges", cpus_range=(0.1, 4.0),
                  mbps_range=(10.0, 100.0), seed=0)
    seen = []
    sw = de.sweep_client(values, points=3, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (6, 6) and len(seen) == 6
    tm, fed, _ = _library(*ARRAYS)
    for row in sw["cpus"]:
        assert row["tier"] == scheduled_tiers(tm, [row["value"]] + ARRAYS[0][1:], ARRAYS[1], ARRAYS[2])[0]
    for row in sw["mbps"]:
        tiers = scheduled_tiers(tm, ARRAYS[0], [row["value"]] + ARRAYS[1][1:], ARRAYS[2])
        assert row["tier"] == tiers[0]
        assert row["dtfl_round_s"] == tier_timeline(tm, tiers, ARRAYS[0], [row["value"]] + ARRAYS[1][1:],
                                                    ARRAYS[2]).model_latency
    import matplotlib.pyplot as plt
    plt.close(de.sweep_figure(sw))


def _defaults():
    return declared_parameters(Path(__file__).resolve().parents[1] / "notebooks" / "dtfl" / "dtfl_explore.ipynb")


@pytest.mark.parametrize("name, bad", [
    ("dataset", "nope"), ("model", "nope"), ("width", -1.0), ("width", 1.5), ("num_clients", -5), ("num_clients", 101),
    ("num_tiers", -5), ("samples_per_client", -5), ("clients_from", "nope"), ("cpus_range", [-1.0]),
    ("cpus_range", [-1.0, 2.0]), ("mbps_range", [0.0, 2.0]), ("seed", -5), ("core_gflops", -1.0),
    ("server_gflops", -1.0), ("clients_text", "nope"), ("clients_text", "1, 30\n1, -2"), ("clients_csv", "nope"),
])
def test_the_checker_names_each_bad_parameter(name, bad):
    with pytest.raises(ValueError, match=rf"(?<![\w.]){name}(?!\w)"):
        de.check_dtfl_explore(dict(_defaults(), **{name: bad}))


def test_the_notebook_passes_every_parameter_it_declares():
    nb = Path(__file__).resolve().parents[1] / "notebooks" / "dtfl" / "dtfl_explore.ipynb"
    declared = set(declared_parameters(nb))
    assert declared - {"profile", "export_path"} == set(inspect.signature(de.explorer).parameters) - {
        "input_shape", "num_classes"}
    cells = json.loads(nb.read_text())["cells"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in cells if c["cell_type"] == "code")
