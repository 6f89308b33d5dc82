"""A baseline of your own in DTFL's paper-figure notebook ``dtfl_5_baselines`` (issue 71, item 7): named by import
path in ``methods`` beside the paper's names, run through the store keyed by its path and source (the same record
``dtfl_your_method`` stores), drawn in Fig. 2 and in both panels of Table 3's figure with a style of its own per
path and labelled "(yours)", never counted by the paper's claims; a bad path is refused in one line naming it,
before any work.

Planted once each and seen red: every path given the same colour (the figures' colour from the name alone); the
checker refusing every import path (``own`` dropped); claims reading every method but DTFL as a baseline."""
import copy
import json
import sys
from functools import partial
from pathlib import Path

import matplotlib
import pytest

from fedlib.lab import notebooks
from fedlib.lab.dtfl import claims
from fedlib.lab.dtfl import experiments as dx
from fedlib.lab.dtfl.checks import check_dtfl_5_baselines
from fedlib.lab.dtfl.compare import baseline_system, own_baseline_key, own_record
from fedlib.lab.dtfl.compare_plots import fig2_accuracy_vs_time, line_style, method_colour, method_label
from fedlib.lab.params import parameter_values
from fedlib.lab.tables import metrics_dir
from fedlib.lab.verdicts import judge

from dtfl_jobs import compare_job

matplotlib.use("Agg")
pytestmark = pytest.mark.usefixtures("one_thread")

NB = notebooks.NOTEBOOK_DIR / "dtfl" / "dtfl_5_baselines.ipynb"
TINY = dict(model="resnet20", width=0.125, num_clients=3, batch_size=16, train_subset=96, test_subset=50, rounds=2)
HALF = "own_baselines:fedavg_half_clients"
# two paths whose names hash to the same free colour (crc32 % 4 == 2 for both)
A, B = "my_scheduler:StaticTiers", "my_baseline:fedavgm"


def _params(**kw):
    import nbformat
    return dict(parameter_values(nbformat.read(NB, as_version=4)), **kw)


def test_the_notebooks_store_path_stores_the_record_compare_job_stores(tmp_path):
    s = dx.Setup(**TINY)
    data = dx.dataset_by_name(s.dataset)
    store = dx.result_store(tmp_path)
    cfg = s.config("iid", 0)
    sim, part = baseline_system(s, data, "fedavg", "iid", 0)          # yours: charged as FedAvg
    run_store, key, backend = own_baseline_key(store, cfg, HALF, s.rounds, part)
    assert key["kind"] == "dtfl_own_baseline" and key["baseline"]["path"] == HALF and key["rounds"] == 2
    rec = run_store.get_or_run(key, partial(own_record, HALF, cfg, data, s.rounds, part, "cpu", backend))
    assert rec["method"] == HALF and rec["round"][-1] == 2
    # compare_job (the Python API, README's "Your own method") finds the very record: one key for both routes
    entry = compare_job(store=store, s=s, method=HALF, setting="iid", seed=0, target_acc=0.5, case="all")
    assert entry["record"]["test_acc"] == rec["test_acc"] and len(list(tmp_path.rglob("*.json"))) == 1
    assert entry["row"]["method"] == HALF and entry["row"]["baseline_code"] == key["baseline"]["code"]


@pytest.fixture
def beside_the_notebook(monkeypatch):
    """The notebook's folder on the path, as where it runs; its ``my_baseline`` module forgotten afterwards."""
    monkeypatch.syspath_prepend(str(NB.parent))
    yield
    sys.modules.pop("my_baseline", None)


def test_smoke_runs_a_baseline_of_your_own_beside_the_paper_s_methods(beside_the_notebook):
    smoke = notebooks._read_yaml(notebooks.PROFILE_DIR / "smoke" / "dtfl_5_baselines.yaml")
    assert smoke["methods"] == ["dtfl", "fedavg", "splitfed", "fedyogi", "fedgkt", "my_baseline:fedavgm"]
    expected = json.loads((Path(__file__).parent / "expected_smoke_metrics_dtfl.json").read_text())
    assert "resnet20/my_baseline:fedavgm/iid/K3/s0" in expected["dtfl_5_baselines"]["final_test_acc"]
    check_dtfl_5_baselines(_params(methods=smoke["methods"]))        # accepted where the notebook runs
    # the committed profile's default names the paper's methods only: its outputs do not move
    assert _params()["methods"] == ["dtfl", "fedavg", "splitfed", "fedyogi", "fedgkt"]


@pytest.mark.parametrize("bad, words", [
    ("no_such_module_xyz:fn", "methods[2] .*'no_such_module_xyz:fn'"),
    ("own_baselines:too_few_arguments", "methods[2] = 'own_baselines:too_few_arguments' must take"),
    ("fedlib.dtfl.baselines:baseline_record", "methods[2] = 'fedlib.dtfl.baselines:baseline_record' names fedlib's"),
    ("fedsgd", "methods[2] must be one of"),
])
def test_a_bad_method_is_refused_in_one_line_naming_it(bad, words):
    with pytest.raises((ValueError, TypeError), match=words.replace("[", r"\[").replace("]", r"\]")) as err:
        check_dtfl_5_baselines(_params(methods=["dtfl", "fedavg", bad]))
    assert "\n" not in str(err.value)


def _entry(method, shift):
    row = dict(method=method, setting="iid", model="resnet20", num_clients=3, seed=0, target_acc=0.5)
    return {"row": row, "record": {"round": [0, 1, 2], "test_acc": [0.1, 0.3 + shift, 0.5 + shift]},
            "sim": {"round_s": [1.0, 1.0]}}


def test_two_import_paths_get_styles_of_their_own():
    assert method_colour(A) == method_colour(B)                          # alone, each its name's colour: the same
    drawn = ["dtfl", "fedavg", A, B]
    assert method_colour(A, drawn) == method_colour(A)                    # the first keeps it, the second moves
    assert method_colour(B, drawn) != method_colour(A, drawn)
    assert method_colour(B, drawn) not in [method_colour(m) for m in ("dtfl", "fedavg", "splitfed", "fedyogi",
                                                                        "fedgkt", "dtfl_authors")]
    fig = fig2_accuracy_vs_time([_entry("dtfl", 0), _entry(A, 0.1), _entry(B, 0.2)], "iid", "resnet20", yours=True)
    styles = {line.get_label(): (line.get_color(), line.get_linestyle()) for line in fig.axes[1].get_lines()
              if not line.get_label().startswith("_")}
    assert list(styles) == ["DTFL", f"{A} (yours)", f"{B} (yours)"]
    assert len(set(styles.values())) == 3
    # past the palette's four free colours the line changes: six paths, six styles
    many = [f"own{i}:fn" for i in range(6)]
    assert len({(str(method_colour(m, many)), str(line_style(m, many))) for m in many}) == 6
    assert method_label(A) == A and method_label(A, yours=True) == f"{A} (yours)" and method_label("dtfl", True) == "DTFL"


def test_the_paper_s_claims_never_read_your_baseline():
    metrics = json.loads((metrics_dir(claims.PROFILE) / "dtfl_5_baselines.json").read_text())
    mine = copy.deepcopy(metrics)
    for r in metrics["runs"]:
        if r["method"] == "fedavg":                # yours: far faster than DTFL, far more accurate
            mine["runs"].append(dict(r, method=B, time_to_target_s=0.001, final_test_acc=0.99))
    for c in [c for c in claims.CLAIMS if c.notebook == "dtfl_5_baselines"]:
        assert judge(c, mine)["cells"] == judge(c, metrics)["cells"], c.id
