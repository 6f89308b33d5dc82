"""A baseline of your own in DTFL's comparison (compare_job(method="package.module:fn") of tests/dtfl_jobs.py, the runs the notebooks build in their cells):
each worker imports it by its path, its records are keyed by its path and its module's source (never returned for
another function, re-keyed by an edit of its module only), the figures draw it by its name, and a bad one is
refused in one line naming it, before anything is stored."""
import json
import sys

import matplotlib
import pytest

from fedlib.lab.dtfl import experiments as dx
from fedlib.lab.dtfl.compare import baseline_system, check_baseline
from fedlib.lab.parallel import map_jobs

from dtfl_jobs import compare_job

import own_baselines

matplotlib.use("Agg")
pytestmark = pytest.mark.usefixtures("one_thread")

TINY = dict(model="resnet20", width=0.125, num_clients=3, batch_size=16, train_subset=96, test_subset=50, rounds=2)
HALF, DOUBLE = "own_baselines:fedavg_half_clients", "own_baselines:fedavg_double_lr"


def _jobs(store, methods, seeds=(0,), **kw):
    s = dx.Setup(**TINY)
    return [dict(store=store, s=s, method=m, case="all", setting="iid", seed=seed, target_acc=0.5, **kw)
            for m in methods for seed in seeds]


def _strip(record):
    return {k: v for k, v in record.items() if k not in ("elapsed_s", "store_key", "wall_s")}


def _files(folder):
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def test_your_baseline_gives_the_same_result_in_one_process_and_in_two_workers(tmp_path):
    one = map_jobs(compare_job, _jobs(dx.result_store(tmp_path / "one"), [HALF], (0, 1)), workers=1)
    pool = map_jobs(compare_job, _jobs(dx.result_store(tmp_path / "pool"), [HALF], (0, 1)), workers=2)
    for a, b in zip(one, pool):
        assert _strip(a["record"]) == _strip(b["record"])                  # the workers ran yours
        assert a["row"]["method"] == b["row"]["method"] == a["record"]["method"] == HALF
        assert a["row"]["baseline_code"] == b["row"]["baseline_code"]
    fedavg = map_jobs(compare_job, _jobs(dx.result_store(tmp_path / "one"), ["fedavg"]), workers=1)[0]
    assert one[0]["record"]["test_loss"] != fedavg["record"]["test_loss"]  # half the clients: another model
    assert one[0]["record"]["samples_per_client"] == fedavg["record"]["samples_per_client"]
    assert one[0]["sim"]["round_s"] == fedavg["sim"]["round_s"]            # charged as FedAvg (the default)
    assert one[0]["row"]["sim_total_s"] == fedavg["row"]["sim_total_s"] and one[0]["row"]["charged_as"] == "fedavg"
    for f in _files(tmp_path / "pool"):
        assert f["config"]["kind"] == "dtfl_own_baseline" and f["config"]["baseline"]["path"] == HALF
        assert f["config"]["baseline"]["code"] == one[0]["row"]["baseline_code"]


def test_your_baseline_is_charged_as_the_baseline_you_name(tmp_path, fmnist):
    store = dx.result_store(tmp_path)
    as_fedavg = map_jobs(compare_job, _jobs(store, [HALF]))[0]
    as_splitfed = map_jobs(compare_job, _jobs(store, [HALF], charged_as="splitfed"))[0]
    assert len(list(tmp_path.glob("*.json"))) == 1                          # the time model is not in the record
    assert as_splitfed["record"] == as_fedavg["record"] and as_splitfed["row"]["charged_as"] == "splitfed"
    split, _ = baseline_system(dx.Setup(**TINY), fmnist, "splitfed", "iid", 0)
    assert as_splitfed["sim"]["round_s"] == split["round_s"] != as_fedavg["sim"]["round_s"]
    with pytest.raises(ValueError, match="charged_as must be one of"):
        map_jobs(compare_job, _jobs(store, [HALF], charged_as="dtfl"))


def test_two_baselines_with_equal_configs_never_share_a_record(tmp_path):
    store = dx.result_store(tmp_path)
    a = map_jobs(compare_job, _jobs(store, [HALF]))[0]
    b = map_jobs(compare_job, _jobs(store, [own_baselines.fedavg_double_lr]))[0]      # the function itself
    files = _files(tmp_path)
    assert len(files) == 2 and sorted(f["config"]["baseline"]["path"] for f in files) == [DOUBLE, HALF]
    assert b["row"]["method"] == DOUBLE
    assert _strip(a["record"]) != _strip(b["record"])
    assert map_jobs(compare_job, _jobs(store, [HALF]))[0]["record"] == a["record"]    # a cache hit, its own


BASELINE = '''
from own_baselines import fedavg_half_clients


def mine(cfg, data, rounds, participants, device, backend):
    rec = fedavg_half_clients(cfg, data, rounds, participants, device, backend)
    return dict(rec, version={version})
'''


def test_editing_your_baseline_recomputes_its_records_only(tmp_path, monkeypatch):
    mod = tmp_path / "mod"
    mod.mkdir()
    monkeypatch.syspath_prepend(str(mod))
    # a name of its own: notebooks/dtfl/my_baseline.py (the worked FedAvgM) may already be imported as my_baseline
    (mod / "edited_baseline.py").write_text(BASELINE.format(version=1))
    store = dx.result_store(tmp_path / "store")
    jobs = lambda: _jobs(store, ["edited_baseline:mine", HALF])
    first = map_jobs(compare_job, jobs())
    before = {p.name for p in (tmp_path / "store").glob("*.json")}
    (mod / "edited_baseline.py").write_text(BASELINE.format(version=2))         # an edit of your module (same size)
    again = map_jobs(compare_job, jobs())
    after = {p.name for p in (tmp_path / "store").glob("*.json")}
    assert len(before) == 2 and len(after) == 3 and before < after          # yours recomputed, the other a hit
    new = json.loads((tmp_path / "store" / (after - before).pop()).read_text())
    assert new["config"]["baseline"]["path"] == "edited_baseline:mine"
    assert (first[0]["record"]["version"], again[0]["record"]["version"]) == (1, 2)   # the edited source ran
    assert again[0]["row"]["baseline_code"] != first[0]["row"]["baseline_code"]
    assert again[1]["record"] == first[1]["record"]


@pytest.mark.parametrize("method, error, words", [
    ("nowhere_module:fn", ValueError, "^method = 'nowhere_module:fn': cannot import module"),
    ("own_baselines:missing", ValueError, "^method = 'own_baselines:missing': module 'own_baselines' has no"),
    ("own_baselines:NOT_CALLABLE", TypeError, "^method = 'own_baselines:NOT_CALLABLE' must name a function"),
    ("own_baselines:NotABaseline", TypeError, "must name a fedlib.dtfl.TierScheduler subclass .* or a function"),
    ("own_baselines:too_few_arguments", TypeError, r"must take \(cfg, data, rounds, participants, device, backend"),
    ("fedlib.dtfl:run_baseline", ValueError, "names fedlib's own code; the built-in baselines are named"),
    ("own_baselines:returns_a_list", TypeError, "must return a record dict holding \\['round', 'test_acc'"),
    ("own_baselines:no_test_loss", ValueError, r"returned a record without \['test_loss'\]: expected the lists"),
    ("own_baselines:accuracy_in_percent", ValueError, r"'test_acc' must hold fractions in \[0, 1\], got 10.0"),
], ids=["unimportable", "missing", "not-callable", "a-class", "arguments", "fedlib-path", "not-a-dict",
        "no-field", "percent"])
def test_a_bad_baseline_is_refused_by_name_before_anything_is_stored(method, error, words, tmp_path):
    with pytest.raises(error, match=words) as err:
        map_jobs(compare_job, _jobs(dx.result_store(tmp_path), [method]))
    assert "\n" not in str(err.value) and method in str(err.value)          # one line, naming it
    assert not list(tmp_path.glob("*.json"))


def test_a_built_in_name_or_a_lambda_is_refused(tmp_path):
    with pytest.raises(ValueError, match="^baseline must be an import path 'module:function' of your own .*'fedavg'"):
        check_baseline("fedavg")
    assert check_baseline(HALF) is sys.modules["own_baselines"].fedavg_half_clients   # the module as held now
    with pytest.raises(ValueError, match="^method must be a function defined at the top level of a module of your"):
        compare_job(dx.result_store(tmp_path), dx.Setup(**TINY), lambda *a: {}, case="all", setting="iid", seed=0,
                    target_acc=0.5)
    assert not list(tmp_path.glob("*.json"))


@pytest.mark.filterwarnings("ignore:Data has no positive values")       # no run reaches the target in 2 rounds
def test_the_figures_draw_your_baseline_by_its_name(tmp_path):
    from fedlib.lab.dtfl.compare_plots import fig2_accuracy_vs_time, line_style, method_colour, method_label, methods_of
    entries = map_jobs(compare_job, _jobs(dx.result_store(tmp_path), ["dtfl", "fedavg", HALF]))
    fig = fig2_accuracy_vs_time(entries, "iid", "resnet20")
    labels = [line.get_label() for line in fig.axes[1].get_lines() if not line.get_label().startswith("_")]
    assert labels == ["DTFL", "FedAvg", HALF]                                # drawn, by its name
    assert method_label(HALF) == HALF and line_style(HALF) == "-."
    assert method_colour(HALF) not in (method_colour("dtfl"), method_colour("fedavg"))
    assert methods_of([e["row"] for e in entries]) == ["dtfl", "fedavg", HALF]     # Table 3: a bar of its own
