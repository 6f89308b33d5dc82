"""HIST's explorer (:mod:`fedlib.lab.hist.explore`) as plain functions: ``compute`` gives exactly the library's values,
bad input is one error line from ``Explorer.evaluate`` (never an exception), a missing pilot is a message naming
the command (never a training outside smoke), and the export is the state shown."""
from __future__ import annotations

import json
import math

import pytest

from fedlib.lab.explore import Explorer
from fedlib.lab.store import ResultStore
from fedlib.hist import METHODS, HistConfig, comm_per_round, rounds_for_budget
from fedlib.lab.hist import explore as hx
from fedlib.hist.estimate import bound_sweeps
from fedlib.lab.hist.experiments import STORE_CODE
from fedlib.hist.theory import step_size_ok, step_size_terms

#: planted pilot constants (the shape of hist_3's record: δ² keyed by N as strings, as the store holds them)
CONSTANTS = {"L": 12.5, "sigma2": 3.0, "sigma2_mean": 1.0, "f_gap": 2.3, "mean_sq_norm": 90.0,
             "delta1_sq": {"2": 0.5, "3": 0.7, "4": 0.9, "5": 1.1}, "delta2_sq": {"2": 40.0, "3": 45.0, "4": 50.0, "5": 55.0}}
DEFAULTS = dict(N=3, H=40, E=200, num_clients=60, hidden=300, comm_budget_L0=30.0, gamma=0.01, setting="noniid",
                sweep="N")
CASES = [DEFAULTS,
         dict(DEFAULTS, N=5, H=20, E=100, num_clients=50, hidden=500, comm_budget_L0=7.5, gamma=1e-6, sweep="H"),
         dict(DEFAULTS, N=4, H=10, E=30, num_clients=40, hidden=200, comm_budget_L0=1000.0, setting="cell_iid"),
         dict(DEFAULTS, N=6, num_clients=42, hidden=120, comm_budget_L0=5.0)]     # N=6: no pilot δ²; U=42: only N=2, 3; one round


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory):
    """A HIST store with no record (tests must never read or write the project's stores)."""
    return ResultStore(tmp_path_factory.mktemp("store"), code=STORE_CODE)


@pytest.fixture(scope="module")
def params(empty_store):
    return hx.setup("quick", store=empty_store).pilot_params


def planted(params, empty_store) -> hx.HistSetup:
    return hx.HistSetup("quick", params, empty_store, "telescoped",
                        records={"noniid": CONSTANTS, "cell_iid": CONSTANTS})


@pytest.mark.parametrize("v", CASES, ids=lambda v: f"N{v['N']}-H{v['H']}-E{v['E']}-U{v['num_clients']}")
def test_compute_is_the_library(v, params, empty_store):
    r = hx.compute(planted(params, empty_store), **v)
    N, H, E, U, B, g = v["N"], v["H"], v["E"], v["num_clients"], v["comm_budget_L0"], v["gamma"]
    for m in METHODS:
        assert r["per_round"][m] == comm_per_round(m, N, U, H, E)
        R = rounds_for_budget(m, N, H, E, B)
        assert r["configs"][m] == HistConfig(method=m, setting=v["setting"], num_cells=N, num_clients=U,
                                             hidden=v["hidden"], H=H, E=E, global_rounds=R)
        assert r["to_budget"][m] == {k: R * x for k, x in comm_per_round(m, N, U, H, E).items()}
    cpc = [U // N] * N
    assert r["step_size"] == dict(step_size_terms(CONSTANTS["L"], cpc, H, E),
                                  gamma_ok=step_size_ok(g, CONSTANTS["L"], cpc, H, E))
    ns = [n for n in params["num_cells"] if U % n == 0]
    T = rounds_for_budget("hist", N, H, E, B) * E
    assert r["bound"] == bound_sweeps(CONSTANTS, ns, U, H, E, T, g, CONSTANTS["mean_sq_norm"], params["H_grid"],
                                      params["E_over_H_grid"], params["T_grid"], "telescoped")
    assert (N in r["bound"]["vs_N"]) == (N in ns)
    # the sweep: every value the library accepts, each point the library's
    sw, key = r["sweep"], "num_cells" if v["sweep"] == "N" else "H"
    lo, hi = hx.RANGES[v["sweep"]]
    want = []
    for x in range(lo, hi + 1):
        try:
            HistConfig(**{**dict(num_cells=N, num_clients=U, hidden=v["hidden"], H=H, E=E), key: x})
            want.append(x)
        except ValueError:
            pass
    assert sw["x"] == want and v[v["sweep"]] in want
    at = [(x, H) if v["sweep"] == "N" else (N, x) for x in want]
    for m in METHODS:
        assert sw["client"][m] == [comm_per_round(m, n, U, h, E)["client"] for n, h in at]
        assert sw["rounds"][m] == [rounds_for_budget(m, n, h, E, B) for n, h in at]
    assert sw["gamma_max"] == [step_size_terms(CONSTANTS["L"], [U // n] * n, h, E)["gamma_max"] for n, h in at]


def test_the_views_draw_and_the_table_holds_the_ratio(params, empty_store):
    result = hx.compute(planted(params, empty_store), **dict(DEFAULTS, hidden=600))
    table, notes, fig = hx.table_view(result), hx.notes_view(result), hx.figure_view(result)
    assert fig.axes
    assert "| HIST / HFedAvg | 0.333 | 0.333 | 0.333 | 3 |" in table.data
    assert "width 300" in notes.data and "hidden = 600 (pilot 300)" in notes.data and "not rescaled" in notes.data


def bad_inputs():
    """(values, the library's own error for them)."""
    def err(f):
        try:
            f()
        except ValueError as exc:
            return str(exc)
        raise AssertionError("the library accepted it")
    nan = float("nan")
    return [({"comm_budget_L0": nan}, err(lambda: rounds_for_budget("hist", 3, 40, 200, nan))),
            ({"comm_budget_L0": -1.0}, err(lambda: rounds_for_budget("hist", 3, 40, 200, -1.0))),
            ({"H": -40}, err(lambda: HistConfig(H=-40))),
            ({"N": 7}, err(lambda: HistConfig(num_cells=7))),                          # divides neither 300 nor 60
            ({"N": 8, "hidden": 400}, err(lambda: HistConfig(num_cells=8, hidden=400))),   # 60 clients
            ({"E": 50}, err(lambda: HistConfig(E=50))),                                 # not a multiple of H = 40
            ({"hidden": 301}, err(lambda: HistConfig(hidden=301))),
            ({"N": 2.5}, err(lambda: HistConfig(num_cells=2.5))),
            ({"gamma": nan}, err(lambda: step_size_ok(nan, 1.0, [20] * 3, 40, 200))),
            ({"setting": "iid"}, err(lambda: HistConfig(setting="iid")))]


@pytest.mark.parametrize("values, message", bad_inputs(), ids=lambda x: str(x)[:40] if isinstance(x, dict) else "")
def test_bad_input_is_the_librarys_error_line(values, message, empty_store):
    ex = hx.explorer("quick", store=empty_store)
    result, views, error = ex.evaluate(**values)
    assert result is None and views == []
    assert error == f"Cannot compute this: {message}"
    assert ex.evaluate()[2] == ""                             # the defaults still compute


def test_missing_pilot_is_a_message_naming_the_command_not_a_training(empty_store, monkeypatch):
    import fedlib.hist.estimate as est
    monkeypatch.setattr(est, "pilot_constants", lambda *a, **k: pytest.fail("trained a pilot"))
    ex = hx.explorer("quick", store=empty_store)
    result, (table, notes, fig), error = ex.evaluate()
    assert error == "" and result["bound"] is None and result["per_round"]["hist"]["client"] > 0
    assert "`./run_all.sh --profile quick --only hist_3` computes them" in notes.data and "width 300" in notes.data
    with pytest.raises(ValueError, match="only hist_3"):
        hx.pilot(hx.setup("quick", store=empty_store), "cell_iid")
    monkeypatch.setenv("FEDLIB_CACHE_ONLY", "1")              # smoke computes its pilot, but never cache-only
    with pytest.raises(ValueError, match="--profile smoke --only hist_3"):
        hx.pilot(hx.setup("smoke", store=empty_store), "noniid")


def test_the_pilot_is_hist_3s_record(params, tmp_path):
    """The key is hist_3's: a record saved under hist_3's config is the one read (and its width is stated)."""
    store = ResultStore(tmp_path, code=STORE_CODE)
    cfg = dict(kind="hist_constants", setting="noniid", num_cells=params["num_cells"], H=params["H"], E=params["E"],
               pilot_rounds=params["pilot_rounds"], num_clients=params["num_clients"], lr=params["lr"],
               batch_size=params["batch_size"], seed=params["seed"], sigma_draws=params["sigma_draws"],
               smoothness_clients=params["smoothness_clients"], power_iters=params["power_iters"],
               dataset=params["dataset"])
    store.save(cfg, CONSTANTS)
    r = hx.compute(hx.setup("quick", store=store), **DEFAULTS)
    assert {k: r["pilot"][k] for k in CONSTANTS} == CONSTANTS and r["width"] == HistConfig().hidden == 300
    assert r["bound"]["vs_N"][3]["total"] > 0


@pytest.mark.parametrize("values, named", [
    ({"N": -5}, "N"), ({"H": 0}, "H"), ({"E": 5000}, "E"), ({"num_clients": 1}, "num_clients"),
    ({"hidden": 5000}, "hidden"), ({"comm_budget_L0": -1.0}, "comm_budget_L0"), ({"gamma": 2.0}, "gamma"),
    ({"settings": ["nope"]}, "settings"), ({"sweep": "T"}, "sweep"), ({"bound_form": "nope"}, "bound_form"),
    ({"export_path": "nope"}, "export_path"), ({"export_path": "/no/such/folder/x.json"}, "export_path"),
    ({"N": 7}, "N"), ({"E": 50}, "E")])
def test_check_parameters_names_the_parameter(values, named):
    p = {**DEFAULTS, "settings": ["noniid"], "bound_form": "telescoped", "export_path": "", **values}
    with pytest.raises(ValueError, match=rf"(?<![\w.]){named}(?!\w)"):
        hx.check_parameters(p)


def test_controls_are_bounded_and_start_at_the_values_given(empty_store):
    ex = hx.explorer("quick", settings=["cell_iid"], N=5, hidden=500, store=empty_store)
    c = {k.name: k for k in ex.controls}
    assert {n: (c[n].low, c[n].high) for n in hx.RANGES} == hx.RANGES
    assert ex.defaults() == dict(DEFAULTS, N=5, hidden=500, setting="cell_iid")
    assert c["setting"].options == ("cell_iid",) and c["sweep"].options == hx.SWEEPS


def test_export_is_the_state_shown(params, empty_store, tmp_path):
    r = hx.compute(planted(params, empty_store), **DEFAULTS)
    out = json.loads(hx.export_json(r))
    assert out["inputs"] == DEFAULTS and out["L0_floats"] == 238510
    assert out["methods"]["hist"]["per_round_L0"] == comm_per_round("hist", 3, 60, 40, 200)
    assert out["theorem1"] == r["bound"]["vs_N"][3] and out["pilot"]["width"] == 300
    ex = Explorer([], dict, [], to_json=hx.export_json, result=r)          # the state shown: r
    assert "No export" in ex.export("").text and not list(tmp_path.iterdir())
    assert "written" in ex.export(str(tmp_path / "state.json")).text
    assert json.loads((tmp_path / "state.json").read_text()) == out
    with pytest.raises(ValueError, match="export_path"):
        ex.export(str(tmp_path / "missing" / "state.json"))
    assert not (tmp_path / "missing").exists()
    assert math.isclose(out["methods"]["hist"]["to_budget_L0"]["client"], 30.0)


def test_a_budget_below_one_round_is_refused_not_rounded_up():
    """rounds_for_budget's floor of one round is never shown as the budget's rounds: below one HFedAvg round's
    upload per client (E/H = 5 L0 here) the explorer refuses, as hist_2 does."""
    with pytest.raises(ValueError, match="comm_budget_L0 = 4.9 L0 is below one HFedAvg round's upload per client"):
        hx.compute(None, **dict(DEFAULTS, comm_budget_L0=4.9))      # refused before the setup is read
