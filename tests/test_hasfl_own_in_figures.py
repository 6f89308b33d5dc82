"""A strategy of your own in HASFL's paper-figure notebook (issue 71 item 7): ``hasfl_5_train_figures``' parameter
``own_methods`` (import paths, :attr:`fedlib.lab.hasfl.runs.train_plan.TrainPlan.own_methods`) trains it beside the
paper's methods in Figs. 5, 6 and 9, decided by its own function on the same problems, drawn in a style of its own
and labelled ``yours: <path>``; its rows are kept apart from the rows the claims read; a bad path is refused in one
line naming it, before any work. The default (no strategy of yours) leaves the plan as it was."""
from dataclasses import replace
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from fedlib.core import numpy_rng  # noqa: E402
from fedlib.hasfl.optimiser.strategies import STRATEGIES  # noqa: E402
from fedlib.lab.hasfl.checks import check_hasfl_5_train_figures  # noqa: E402
from fedlib.lab.hasfl.figures.styles import OWN_PREFIX, method_style  # noqa: E402
from fedlib.lab.hasfl.runs import train_plan  # noqa: E402
from fedlib.lab.hasfl.runs.training import TrainSettings  # noqa: E402
from hasfl5_cells import draw  # noqa: E402

PATH = "own_components:random_b_cut_two"          # tests/own_components.py: b uniform in 1..64, every cut 2
S = TrainSettings(width=0.0625)
L = 16
PILOT = {"constants": {"beta": 100.0, "sigma2": [2.0] * L, "G2": [2.0] * L, "vartheta": 2.3},
         "per_point": [{"beta": 100.0, "sigma2": [2.0] * L, "G2": [1.0] * L}]}


def _plan(own=()):
    return train_plan.TrainPlan(settings=("iid", "noniid"), num_devices=4, models=("vgg16", "resnet18"),
                                widths=(0.0625, 0.0625), device_counts=(3, 5), n_methods=("HASFL", "RBS+RMS"),
                                fig9_settings=("iid",), calibrate_variance=False, own_methods=own)


def test_your_strategy_is_planned_after_the_papers_in_fig5_6_and_fig9_only():
    base, mine = train_plan._jobs(_plan(), S), train_plan._jobs(_plan((PATH,)), S)
    assert [j for j in mine if j.method != PATH] == base            # the paper's jobs unchanged, in order
    got = [(j.figures, j.settings.model, j.setting, j.num_devices) for j in mine if j.method == PATH]
    assert got == [(("fig5", "fig6"), m, st, 4) for m in ("vgg16", "resnet18") for st in ("iid", "noniid")] + \
        [(("fig9",), "vgg16", "iid", n) for n in (3, 5)]
    for k, j in enumerate(mine):                                     # each right after its figure's paper methods
        if j.method == PATH and "fig5" in j.figures:
            assert mine[k - 1].method in STRATEGIES + ("HASFL-max", "HASFL-calibrated") and mine[k - 1].figures == j.figures


def test_your_runs_are_decided_by_your_function_on_the_papers_problem(monkeypatch):
    monkeypatch.setattr(train_plan, "pilot", lambda store, s, seed, data=None: PILOT)
    runs = list(train_plan.decided_runs(None, S, _plan((PATH,)), [3], 0.6, SimpleNamespace(y_train=list(range(600))),
                                        "cpu", only_figures=("fig9",)))
    mine = {r["n"]: r for r in runs if r["method"] == PATH}
    assert sorted(mine) == [3, 5]
    for n, r in mine.items():
        b = numpy_rng(3, f"system/{PATH}").integers(1, 65, n)        # by hand: the stream its path names
        assert r["decision"]["b"] == b.tolist() and r["decision"]["cuts"] == [2] * n
        hasfl = next(q for q in runs if q["method"] == "HASFL" and q["n"] == n)
        assert r["problem"] is hasfl["problem"]                      # the same problem (41) as the paper's methods
        assert (r["config"]["b"], r["config"]["cuts"]) == (b.tolist(), [2] * n)   # its record keyed by its b and cuts


@pytest.mark.parametrize("paths, words", [
    (["no_such_module:fn"], "own_methods[0] = 'no_such_module:fn': cannot import module 'no_such_module'"),
    (["own_components:no_such_fn"], "own_methods[0] = 'own_components:no_such_fn': module 'own_components' has no"),
    (["HASFL"], "own_methods[0] must be an import path 'module:function' of your own"),
    ([PATH, PATH], "own_methods must not repeat an item"),
])
def test_a_bad_path_is_refused_in_one_line_naming_it(paths, words):
    with pytest.raises(ValueError) as err:
        train_plan.TrainPlan(own_methods=paths)                      # where own_methods enters: checked once
    assert str(err.value).startswith(words) and "\n" not in str(err.value)
    check_hasfl_5_train_figures(dict(_defaults(), own_methods=paths))   # the notebook's checker leaves it to the plan


def test_the_notebook_builds_its_plan_before_any_work():
    cells = draw.__globals__["_code_cells"]()
    design = next(c for c in cells if "TrainPlan(" in c)
    assert "own_methods=tuple(own_methods)" in design               # the plan checks the parameter
    assert design.index("TrainPlan(") < design.index("load_dataset(")   # before the data are loaded
    first = cells.index(design)
    assert not any(w in c for c in cells[:first] for w in ("load_dataset(", "pilot(", "get_or_run("))


def _defaults() -> dict:
    ns: dict = {}
    exec(draw.__globals__["_code_cells"]()[0], ns)                   # the notebook's parameters cell
    return {k: v for k, v in ns.items() if not k.startswith("__")}


def test_the_notebooks_default_has_no_strategy_of_yours():
    assert _defaults()["own_methods"] == []


def test_yours_has_a_style_of_its_own_apart_from_every_method():
    others = ["b = 8, cut 8", OWN_PREFIX + PATH, OWN_PREFIX + "b:c"]
    first, second = method_style(OWN_PREFIX + PATH, others), method_style(OWN_PREFIX + "b:c", others)
    assert first == {"color": to_rgba("k"), "marker": "*", "mfc": None}
    assert second == {"color": to_rgba("darkgoldenrod"), "marker": "P", "mfc": None}
    taken = {(method_style(m)["color"], method_style(m)["marker"]) for m in train_plan.STRATEGIES + ("HASFL-max",
                                                                                                     "HASFL-calibrated")}
    assert (first["color"], first["marker"]) not in taken and (second["color"], second["marker"]) not in taken
    # a fixed configuration keeps the style it has without yours
    assert method_style("b = 8, cut 8", others) == method_style("b = 8, cut 8", ["b = 8, cut 8"])


def _entry(method, acc, fig="fig5", N=4):
    curve = {"sim_s": [0.0, 1.0, 2.0], "test_acc": [0.1, 0.5, acc], "epoch": [0, 1, 2], "round": [0, 5, 10]}
    row = {"method": method, "figures": [fig, "fig6"] if fig == "fig5" else [fig], "model": "vgg16", "setting": "iid",
           "N": N, "time_to_target_s": 1.5, "converged_time_s": 2.0, "converged_acc": acc, "final_test_acc": acc,
           "sim_s": 2.0, "target_acc": 0.4, "seed": 0, "draw": 0}
    return {"row": row, "curve": curve}


def test_fig5_and_fig9_draw_yours_beside_the_papers_methods_in_its_style():
    yours = OWN_PREFIX + PATH
    entries = [_entry("HASFL", 0.7), _entry("RBS+RMS", 0.6), _entry(yours, 0.65)]
    fig5 = draw("hasfl_fig5_accuracy_vs_time", entries=entries, models=["vgg16"], settings=["iid"])
    lines = {ln.get_label(): ln for ln in next(iter(fig5.values())).axes[0].lines}
    assert set(lines) == {"HASFL", "RBS+RMS", yours}
    assert (lines[yours].get_color(), lines[yours].get_marker()) == (to_rgba("k"), "*")
    rows = [e["row"] for e in entries[:2]]
    rows_own = [e["row"] for e in entries[2:]]
    fig9 = draw("hasfl_fig9_vs_devices", rows=[dict(r, figures=["fig9"]) for r in rows],
                rows_own=[dict(r, figures=["fig9"]) for r in rows_own], n_methods=["HASFL", "RBS+RMS"])
    labels = [ln.get_label() for ln in next(iter(fig9.values())).axes[0].lines]
    assert yours in labels and "HASFL" in labels
    plt.close("all")


def test_the_claims_read_the_papers_rows_only():
    """The runs cell keeps your rows apart (``rows_own``); the claims (``claim_ratios``) are computed from ``rows``:
    adding yours changes no claim."""
    src = draw.__globals__["_code_cells"]()
    runs = next(c for c in src if "decided_runs(store, settings_, plan, seeds" in c and "entries" in c)
    assert 'rows = [e["row"] for e in entries if not e["row"]["method"].startswith(OWN_PREFIX)]' in runs
    assert any("claims = train_plan.claim_ratios(rows)" in c for c in src)
    ns = {"OWN_PREFIX": OWN_PREFIX, "own_methods": [PATH]}
    tail = runs[runs.index("entries = [dict(e, row="):]
    exec(tail, dict(ns, entries=[_entry("HASFL", 0.7), _entry(PATH, 0.65)]), ns)
    assert [r["method"] for r in ns["rows"]] == ["HASFL"]
    assert [r["method"] for r in ns["rows_own"]] == [OWN_PREFIX + PATH]
    assert replace(_plan((PATH,)), own_methods=()).own_methods == ()
