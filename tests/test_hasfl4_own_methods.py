"""A strategy of your own in HASFL's training notebook (issue 71 item 7): ``hasfl_4_train_experiments``' parameter
``own_methods`` (import paths, :attr:`fedlib.lab.hasfl.runs.train_plan.TrainPlan.own_methods`, as in
``hasfl_5_train_figures``: tests/test_hasfl_own_in_figures.py) trains it beside the paper's methods in the runs of
Figs. 5, 6 and 9, decided by its own function on the same problems; its rows are labelled ``yours: <path>``, listed
last in the table of runs, written as ``runs_own`` and never reach ``runs``, the rows the claims of Fig. 9 read; a
bad path is refused in one line naming it, before any work. The default (no strategy of yours) leaves the notebook's
runs and metrics as they were.

The notebook's cells are executed here as the notebook runs them (the parameters cell, the setup cell's imports,
then the cell under test), with the work they would start (loading the data, the pilot) replaced.
"""
import ast
import copy
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from fedlib.core import numpy_rng
from fedlib.lab.hasfl import claims as hasfl_claims
from fedlib.lab.hasfl.figures.styles import OWN_PREFIX
from fedlib.lab.hasfl.runs import train_plan
from fedlib.lab.store import config_key
from fedlib.lab.verdict_rules import MissingMetrics
from fedlib.lab.verdicts import judge_all

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "hasfl" / "hasfl_4_train_experiments.ipynb"
NAME = "hasfl_4_train_experiments"
PATH = "own_components:random_b_cut_two"          # tests/own_components.py: b uniform in 1..64, every cut 2
L = 16
PILOT = {"constants": {"beta": 100.0, "sigma2": [2.0] * L, "G2": [2.0] * L, "vartheta": 2.3},
         "per_point": [{"beta": 100.0, "sigma2": [2.0] * L, "G2": [1.0] * L}]}
#: a small plan for the design cell: one model, IID, Fig. 9 at N = 3 and 5 with HASFL and one benchmark
SMALL = dict(models=["vgg16"], widths=[0.0625], num_devices=4, settings=["iid"], device_counts=[3, 5],
             n_methods=["HASFL", "RBS+RMS"], fig9_settings=["iid"], fig9_draws=1, sweep=False,
             calibrate_later_models=False, model_cut_grids=[], calibrate_variance=False)


class WorkStarted(Exception):
    """The design cell started work (loading the data) before refusing a value."""


def _cells() -> list[str]:
    return ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]


def _cell(marker: str) -> str:
    found = [c for c in _cells() if marker in c]
    assert len(found) == 1, f"{len(found)} code cells of {NOTEBOOK.name} hold {marker!r}"
    return found[0]


def _namespace(**values) -> dict:
    """The parameters cell's defaults, ``values`` over them (as papermill injects them), and the setup cell's
    imports (not its ``setup_notebook`` call: no profile, no threads set)."""
    ns: dict = {}
    exec(_cells()[0], ns)
    ns.update(values)
    setup = _cell("setup_notebook(")
    imports = [n for n in ast.parse(setup).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    exec(compile(ast.Module(body=imports, type_ignores=[]), "setup-imports", "exec"), ns)
    return ns


def _design(**values) -> dict:
    """The namespace after the design cell (``plan``, ``settings_``) with ``values`` over the defaults; loading the
    data is the first work, replaced by :class:`WorkStarted` raised after the plan and settings are built."""
    ns = _namespace(**values)

    def no_data(name):
        ns["loaded"] = name
        return SimpleNamespace(y_train=list(range(600)), num_classes=10, source="none")

    ns["load_dataset"] = no_data
    exec(_cell("plan = TrainPlan("), ns)
    return ns


def test_the_notebooks_default_has_no_strategy_of_yours():
    ns: dict = {}
    exec(_cells()[0], ns)
    assert ns["own_methods"] == []
    line = next(ln for ln in _cells()[0].splitlines() if ln.startswith("own_methods"))
    assert line.startswith("own_methods: list = []  # ") and "never judged" in line   # typed and commented


def test_your_strategy_reaches_the_plan_after_the_papers_methods():
    ns = _design(own_methods=[PATH], **SMALL)
    assert ns["plan"].own_methods == (PATH,)
    jobs = train_plan._jobs(ns["plan"], ns["settings_"])
    mine = [(j.figures, j.settings.model, j.setting, j.num_devices) for j in jobs if j.method == PATH]
    assert mine == [(("fig5", "fig6"), "vgg16", "iid", 4),
                    (("fig9",), "vgg16", "iid", 3), (("fig9",), "vgg16", "iid", 5)]
    base = train_plan._jobs(_design(**SMALL)["plan"], ns["settings_"])
    assert [j for j in jobs if j.method != PATH] == base           # the paper's runs unchanged, in order


def test_the_notebook_builds_its_plan_before_any_work():
    cells = _cells()
    design = _cell("plan = TrainPlan(")
    call = next(n for n in ast.walk(ast.parse(design))
                if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "TrainPlan")
    given = {k.arg: ast.unparse(k.value) for k in call.keywords}
    assert given["own_methods"] == "tuple(own_methods)"             # the plan checks the parameter
    assert design.index("TrainPlan(") < design.index("load_dataset(")
    assert not any(w in c for c in cells[:cells.index(design)] for w in ("load_dataset(", "pilot(", "get_or_run("))


@pytest.mark.parametrize("paths, words", [
    (["no_such_module:fn"], "own_methods[0] = 'no_such_module:fn': cannot import module 'no_such_module'"),
    (["own_components:no_such_fn"], "own_methods[0] = 'own_components:no_such_fn': module 'own_components' has no"),
    (["RBS+RMS"], "own_methods[0] must be an import path 'module:function' of your own"),
    ([PATH, PATH], "own_methods must not repeat an item"),
])
def test_a_bad_path_is_refused_in_one_line_before_any_work(paths, words):
    ns = _namespace(own_methods=paths)
    ns["hasfl_checks"].check_hasfl_4_train_experiments(ns)          # the notebook's checker leaves it to the plan

    def work(name):
        raise WorkStarted(f"loading {name} before own_methods was refused")

    ns["load_dataset"] = work
    with pytest.raises(ValueError) as err:
        exec(_cell("plan = TrainPlan("), ns)
    assert str(err.value).startswith(words) and "\n" not in str(err.value)


def _decided(ns: dict) -> list[dict]:
    return list(train_plan.decided_runs(None, ns["settings_"], ns["plan"], [3], 0.6, ns["data"], "cpu",
                                        only_figures=("fig9",)))


def test_your_runs_are_decided_by_your_function_and_keyed_by_its_decision(monkeypatch):
    """By its path: the decision draws from the stream the path names (``system/<path>``, by hand below); by its
    source: the record's key holds the b and cuts it decides (not its name or its code, as for the paper's runs), so
    an edit of the function that changes its decision re-keys its runs and no run of the paper's."""
    monkeypatch.setattr(train_plan, "pilot", lambda store, s, seed, data=None: PILOT)
    ns = _design(own_methods=[PATH], **SMALL)
    runs = _decided(ns)
    mine = {r["n"]: r for r in runs if r["method"] == PATH}
    assert sorted(mine) == [3, 5]
    for n, r in mine.items():
        b = numpy_rng(3, f"system/{PATH}").integers(1, 65, n)        # by hand: the stream its path names
        assert r["decision"]["b"] == b.tolist() and r["decision"]["cuts"] == [2] * n
        assert r["problem"] is next(q for q in runs if q["method"] == "HASFL" and q["n"] == n)["problem"]
        assert (r["config"]["b"], r["config"]["cuts"]) == (b.tolist(), [2] * n)
    # the source edited: every device at cut 3; patched on the module load_own now holds (its first load may have
    # imported it anew, whatever this test imported before)
    monkeypatch.setattr(sys.modules["own_components"], "random_b_cut_two",
                        lambda problem, rng: (rng.integers(1, 65, problem.num_devices), [3] * problem.num_devices))
    edited = _decided(ns)
    keys = [(r["method"], r["n"], config_key(r["config"])) for r in runs]
    keys_edited = [(r["method"], r["n"], config_key(r["config"])) for r in edited]
    assert [k for k in keys if k[0] != PATH] == [k for k in keys_edited if k[0] != PATH]   # the paper's: same keys
    assert all(a != b for a, b in zip([k for k in keys if k[0] == PATH], [k for k in keys_edited if k[0] == PATH]))
    assert [r["config"]["cuts"] for r in edited if r["method"] == PATH] == [[3] * 3, [3] * 5]


def _committed() -> dict:
    return json.loads((ROOT / "figures" / "converged" / "metrics" / f"{NAME}.json").read_text())


def _fake_own_rows(runs: list[dict]) -> list[dict]:
    """A far better strategy of yours, as the runs cell's loop appends it (its method the bare path): HASFL's Fig. 9
    rows with a hundredth of its times, and one more at an N the paper's runs lack (the readers take Fig. 9's N from
    the rows they are given: leaked into ``runs``, this row alone would change both claims)."""
    hasfl = [r for r in runs if r["method"] == "HASFL" and "fig9" in r["figures"]]
    out = []
    for r in hasfl + [dict(hasfl[-1], N=40)]:
        out.append(dict(r, method=PATH, converged_time_s=r["converged_time_s"] / 100,
                        time_to_target_s=(r["time_to_target_s"] or r["sim_s"]) / 100, sim_s=r["sim_s"] / 100,
                        converged_acc=0.99, final_test_acc=0.99))
    return out


def _runs_cell_tail(rows: list[dict], own_methods: list[str]) -> dict:
    """The runs cell from its labelling line on, on ``rows`` (the loop's rows)."""
    runs = _cell("decided_runs(store, settings_, plan, seeds")
    tail = runs[runs.index("rows = [dict(row_, method=OWN_PREFIX"):]
    ns = {"OWN_PREFIX": OWN_PREFIX, "own_methods": own_methods, "rows": rows}
    exec(tail, ns)
    return ns


def _metrics_cell(ns: dict) -> dict:
    written: dict = {}
    cell = _cell("write_metrics(")
    env = dict(ns, profile="converged", dataset="fashion-mnist", data=SimpleNamespace(source="none"), t0=0.0,
               seeds=[0], target_acc=0.86, target_acc_noniid=0.67, calibration=[],
               time=SimpleNamespace(perf_counter=lambda: 1.0), write_metrics=lambda name, m, **k: written.update(m))
    exec(cell, env)
    return written


def _claim_cells(metrics: dict) -> list[dict] | str:
    """Every claim cell the notebook decides, judged on ``metrics`` (the notebook's Verdict cell), or the sentence of
    a run that gives no verdict."""
    try:
        return judge_all(hasfl_claims.CLAIMS, {NAME: metrics}, notebook=NAME)
    except MissingMetrics as err:
        return f"no verdict: {err}"


def test_your_rows_never_reach_the_claims():
    """A far better fake row of yours leaves every claim cell of the notebook unchanged: the runs cell keeps it in
    ``rows_own`` (labelled), the metrics write it as ``runs_own``; ``runs`` is the paper's rows, as committed."""
    committed = _committed()
    fake = _fake_own_rows(committed["runs"])
    ns = _runs_cell_tail(copy.deepcopy(committed["runs"]) + copy.deepcopy(fake), [PATH])
    metrics = _metrics_cell(ns)
    assert metrics["runs"] == committed["runs"]
    assert [r["method"] for r in metrics["runs_own"]] == [OWN_PREFIX + PATH] * len(fake)
    before = _claim_cells(committed)
    assert _claim_cells(metrics) == before
    leaked = dict(committed, runs=committed["runs"] + metrics["runs_own"])   # the test can fail: leaked, they move
    assert _claim_cells(leaked) != before


def test_without_yours_the_rows_and_metrics_are_as_before():
    committed = _committed()
    ns = _runs_cell_tail(copy.deepcopy(committed["runs"]), [])
    assert ns["rows"] == committed["runs"] and ns["rows_own"] == []
    assert "runs_own" not in _metrics_cell(ns)


def test_the_table_lists_yours_last_labelled_as_yours():
    rows = [{"method": "HASFL", "setting": "iid"}, {"method": PATH, "setting": "iid"},
            {"method": "RBS+RMS", "setting": "noniid"}]
    ns = _runs_cell_tail(rows, [PATH])
    shown: list = []
    env = dict(ns, story=SimpleNamespace(table=lambda r, *a, **k: shown.extend(r)),
               train_plots=SimpleNamespace(convergence_cells=lambda r: r))
    exec(_cell("story.table(train_plots.convergence_cells("), env)
    assert [r["method"] for r in shown] == ["HASFL", "RBS+RMS", OWN_PREFIX + PATH]
