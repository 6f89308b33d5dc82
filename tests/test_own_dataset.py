"""A dataset of your own (DTFL's Setup(dataset="package.module:function")): each worker process imports and loads
it by its path, its records are keyed by its path and source (never returned for another dataset, re-keyed by an
edit of its module only), and a dataset that is malformed or does not fit the model is refused by name before any
training."""
import json
from pathlib import Path

import pytest

from fedlib.data import DATASET_SHAPES, load_dataset
from fedlib.lab import datasets as own
from fedlib.lab.dtfl import experiments as dx
from fedlib.lab.parallel import map_jobs

from dtfl_jobs import compare_job

pytestmark = pytest.mark.usefixtures("one_thread")

TINY = dict(model="resnet20", width=0.125, num_clients=3, batch_size=16, train_subset=96, test_subset=50, rounds=2)


def _jobs(store, dataset, methods=("dtfl", "fedavg")):
    s = dx.Setup(dataset=dataset, **TINY)
    return [dict(store=store, s=s, method=m, case="all", setting="iid", seed=0, target_acc=0.5) for m in methods]


def _strip(record):
    return {k: v for k, v in record.items() if k not in ("elapsed_s", "store_key", "wall_s")}


def test_your_dataset_is_checked_and_registered_under_its_path():
    data = own.use_dataset("own_datasets:flipped")
    assert (len(data.y_train), len(data.y_test)) == (300, 100)
    assert DATASET_SHAPES["own_datasets:flipped"] == (1, 28, 10)
    assert load_dataset("own_datasets:flipped") is data                    # the methods' own loader finds it
    assert own.dataset_key("fashion-mnist") == {}                          # the built-ins' keys are unchanged
    assert own.dataset_key("own_datasets:flipped")["own_dataset"]["path"] == "own_datasets:flipped"


def test_your_dataset_gives_the_same_result_in_one_process_and_in_two_workers(tmp_path):
    path = "own_datasets:flipped"
    one = map_jobs(compare_job, _jobs(dx.result_store(tmp_path / "one"), path), workers=1)
    pool = map_jobs(compare_job, _jobs(dx.result_store(tmp_path / "pool"), path), workers=2)   # each imports it
    for a, b in zip(one, pool):
        assert _strip(a["record"]) == _strip(b["record"])
        assert a["row"]["final_test_acc"] == b["row"]["final_test_acc"]
    for f in (tmp_path / "pool").glob("*.json"):
        assert json.loads(f.read_text())["config"]["own_dataset"]["path"] == path


def test_two_datasets_with_equal_configs_never_share_a_record(tmp_path):
    store = dx.result_store(tmp_path)
    a = map_jobs(compare_job, _jobs(store, "own_datasets:first_300", ("dtfl",)))[0]
    b = map_jobs(compare_job, _jobs(store, "own_datasets:flipped", ("dtfl",)))[0]
    files = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert len(files) == 2
    assert sorted(f["config"]["own_dataset"]["path"] for f in files) == ["own_datasets:first_300",
                                                                          "own_datasets:flipped"]
    assert _strip(a["record"]) != _strip(b["record"])                    # trained on other images


DATASET = '''
from own_datasets import _subset


def load():
    return _subset("scaled", lambda x: x * {scale})
'''


def test_editing_your_dataset_recomputes_its_records_only(tmp_path, monkeypatch):
    mod = tmp_path / "mod"
    mod.mkdir()
    monkeypatch.syspath_prepend(str(mod))
    (mod / "my_data.py").write_text(DATASET.format(scale="1.0"))
    store = dx.result_store(tmp_path / "store")
    jobs = lambda: [*_jobs(store, "my_data:load", ("dtfl",)), *_jobs(store, "own_datasets:flipped", ("dtfl",))]
    first = map_jobs(compare_job, jobs())
    before = {p.name for p in (tmp_path / "store").glob("*.json")}
    (mod / "my_data.py").write_text(DATASET.format(scale="0.5"))            # an edit of your module (same size)
    again = map_jobs(compare_job, jobs())
    after = {p.name for p in (tmp_path / "store").glob("*.json")}
    assert len(before) == 2 and len(after) == 3 and before < after          # yours retrained, the other a hit
    new = json.loads((tmp_path / "store" / (after - before).pop()).read_text())
    assert new["config"]["own_dataset"]["path"] == "my_data:load"
    assert _strip(again[0]["record"]) != _strip(first[0]["record"])        # trained on the edited images
    assert _strip(again[1]["record"]) == _strip(first[1]["record"])


def test_any_store_config_naming_your_dataset_is_keyed_by_its_source(tmp_path, monkeypatch):
    """A config built outside the lab's run entries (as ``hist_3_bounds`` builds its pilot's) that names a dataset of
    your own is keyed by the module's source too: an edit of the module computes that record again."""
    from fedlib.lab.store import ResultStore
    mod = tmp_path / "mod"
    mod.mkdir()
    monkeypatch.syspath_prepend(str(mod))
    (mod / "pilot_data.py").write_text(DATASET.format(scale="1.0"))
    store, runs = ResultStore(tmp_path / "store", code=("fedlib.data",)), []
    config = {"kind": "a_pilot", "dataset": "pilot_data:load", "rounds": 2}
    first = store.get_or_run(config, lambda: runs.append(1) or {"value": 1.0})
    assert store.get_or_run(config, lambda: runs.append(2) or {"value": 2.0}) == first and runs == [1]
    (mod / "pilot_data.py").write_text(DATASET.format(scale="0.5"))        # an edit of your module
    again = store.get_or_run(config, lambda: runs.append(3) or {"value": 3.0})
    assert runs == [1, 3] and again["value"] == 3.0 and len(list((tmp_path / "store").glob("*.json"))) == 2
    built_in = {"kind": "a_pilot", "dataset": "fashion-mnist", "rounds": 2}
    assert store.key(built_in) == store.key(dict(built_in))                  # a built-in dataset's key: unchanged
    assert "own_dataset" not in json.dumps(store.get_or_run(built_in, lambda: {"value": 0.0}))


@pytest.mark.parametrize("dataset, error, words", [
    ("nowhere_module:load", ValueError, "^dataset = 'nowhere_module:load': cannot import module"),
    ("own_datasets:missing", ValueError, "^dataset = 'own_datasets:missing': module 'own_datasets' has no"),
    ("own_datasets:NOT_CALLABLE", TypeError, "^dataset = 'own_datasets:NOT_CALLABLE' must name a function"),
    ("own_datasets:not_a_dataset", TypeError, "must return a fedlib.data.TensorDataset, got dict"),
    ("own_datasets:not_square", ValueError, r"x_train must be \[n, C, S, S\] .*got shape \[300, 1, 28, 20\]"),
    ("own_datasets:float64_images", ValueError, "x_train must be float32, got torch.float64"),
    ("own_datasets:labels_out_of_range", ValueError, "loading it raised ValueError: y_train must hold class labels 0..9"),
    ("own_datasets:tiny_images", ValueError, r"\[C, S, S\] = \[1, 4, 4\] do not fit model resnet20 \(image_size must"),
    ("own_datasets:noisy", ValueError, "^dataset = 'own_datasets:noisy' is not deterministic: two loads gave different "
                                       "x_train, x_test"),
], ids=["unimportable", "missing", "not-callable", "not-a-dataset", "not-square", "float64", "labels", "too-small",
        "not-deterministic"])
def test_a_bad_dataset_is_refused_by_name_before_any_run(dataset, error, words, tmp_path):
    with pytest.raises(error, match=words) as err:
        map_jobs(compare_job, _jobs(dx.result_store(tmp_path), dataset))
    assert "\n" not in str(err.value) and dataset in str(err.value)      # one line, naming it
    assert not list(tmp_path.glob("*.json"))


def test_hist_runs_your_dataset_in_this_process_and_in_two_workers(tmp_path):
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing
    from fedlib.hist import HistConfig
    from fedlib.lab.hist.checks import check_dataset_name
    from fedlib.lab.hist.experiments import result_store, run_sweep
    path = "own_datasets:flipped"
    with pytest.raises(ValueError, match="dataset must be one of"):
        HistConfig(dataset=path)                                   # the method knows its own datasets only...
    check_dataset_name(path)                                       # ...until the lab registers yours
    small = dict(num_cells=2, num_clients=6, hidden=8, H=2, E=4, global_rounds=1, seed=0)
    own.use_dataset("own_datasets:first_300")
    cfgs = [HistConfig(dataset=path, **small), HistConfig(dataset="own_datasets:first_300", **small)]
    here = run_sweep(cfgs, result_store(tmp_path / "one"), device="cpu", progress=False)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as ex:
        pool = run_sweep(cfgs, result_store(tmp_path / "pool"), device="cpu", progress=False, executor=ex)
    assert [_strip(r) for r in here] == [_strip(r) for r in pool]
    assert here[0]["test_acc"] != here[1]["test_acc"]                 # two datasets, two records
    paths = sorted(json.loads(f.read_text())["config"]["own_dataset"]["path"] for f in (tmp_path / "pool").glob("*.json"))
    assert paths == ["own_datasets:first_300", path]


def _hasfl_jobs(store, dataset):
    import numpy as np
    from fedlib.hasfl import HasflConstants
    from fedlib.lab.hasfl.runs.train_config import run_config
    from fedlib.lab.hasfl.runs.training import TrainSettings, decide, training_problem
    s = TrainSettings(model="resnet18", width=0.0625, dataset=dataset, epochs=0.01, min_rounds=3, max_rounds=3,
                      evals=5, test_subset=50, interval=2)
    problem = training_problem(s, HasflConstants(10.0, np.ones(10), np.ones(10), 2.3), 1e3, 3, 0)
    return [dict(store=store, config=run_config(s, "iid", decide(problem, "fixed", 0, b, cut), 0, 300),
                 problem=problem, dataset=dataset, device="cpu") for b, cut in ((4, 2), (6, 4))]


def test_hasfl_trains_your_dataset_alike_in_this_process_and_in_two_workers(tmp_path):
    from fedlib.lab.hasfl.runs.experiments import result_store
    from fedlib.lab.hasfl.runs.train_jobs import train_job
    from fedlib.lab.hasfl.runs.train_run import AnyBackendRecords
    path = "own_datasets:flipped"
    records = {}
    for name, workers in (("one", 1), ("pool", 2)):
        store = result_store(tmp_path / name)
        jobs = _hasfl_jobs(store, path)
        map_jobs(train_job, jobs, workers=workers)                  # each worker imports and loads it by its path
        records[name] = [_strip(AnyBackendRecords(store).load(j["config"])) for j in jobs]
        files = list((tmp_path / name).glob("*.json"))
        assert len(files) == 2
        assert all(json.loads(f.read_text())["config"]["own_dataset"]["path"] == path for f in files)
    assert records["one"] == records["pool"]
    with pytest.raises(ValueError, match=r"^dataset = 'own_datasets:tiny_images': .* do not fit model resnet18"):
        _hasfl_jobs(result_store(tmp_path / "bad"), "own_datasets:tiny_images")


def test_the_notebooks_dataset_parameter_takes_an_import_path():
    from fedlib.lab.hasfl.runs.experiments import resolve_dataset as hasfl_resolve
    assert dx.resolve_dataset("own_datasets:first_300") == "own_datasets:first_300"
    assert hasfl_resolve("own_datasets:flipped", "resnet18") == "own_datasets:flipped"
    assert DATASET_SHAPES["own_datasets:flipped"] == (1, 28, 10)
    for resolve in (dx.resolve_dataset, lambda d: hasfl_resolve(d, "vgg16")):
        with pytest.raises(ValueError, match="^dataset = 'nowhere_module:load': cannot import"):
            resolve("nowhere_module:load")


MY_DATA = '''
"""A dataset of my own: Fashion-MNIST's first 6,000 / 1,000 images, mirrored left to right."""
import torch
from fedlib.data import TensorDataset, load_fashion_mnist


def mirrored():
    ds = load_fashion_mnist()
    flip = lambda x: torch.flip(x, dims=[3])  # noqa: E731
    return TensorDataset("fmnist-mirrored", flip(ds.x_train[:6000]), ds.y_train[:6000], flip(ds.x_test[:1000]),
                         ds.y_test[:1000], ds.classes, "Fashion-MNIST, mirrored")
'''


def test_a_notebook_runs_a_dataset_of_your_own_beside_it(tmp_path, monkeypatch):
    # as a researcher does it: the worked notebook copied into a folder of their own with a module beside it,
    # run at smoke with dataset = "my_data:mirrored"; the kernel imports the module from the notebook's folder
    import shutil

    import papermill as pm

    from fedlib.lab.notebooks import kernel_name
    root = Path(__file__).resolve().parents[1] / "notebooks" / "hist"
    for name in ("hist_your_method.ipynb", "my_partition.py"):
        shutil.copy(root / name, tmp_path / name)
    (tmp_path / "my_data.py").write_text(MY_DATA)
    monkeypatch.setenv("FEDLIB_CACHE_DIR", str(tmp_path / "cache"))     # kept out of the repository's .cache
    monkeypatch.setenv("FEDLIB_FIGURES_DIR", str(tmp_path / "figures"))
    pm.execute_notebook(str(tmp_path / "hist_your_method.ipynb"), str(tmp_path / "out.ipynb"), kernel_name=kernel_name(),
                        parameters={"profile": "smoke", "dataset": "my_data:mirrored"}, cwd=str(tmp_path),
                        progress_bar=False, log_output=False)
    text = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/markdown", ""))
                     for c in json.loads((tmp_path / "out.ipynb").read_text())["cells"] for o in c.get("outputs", []))
    assert "| data | my_data:mirrored" in text                                     # the Setup row names it
    assert "| my_partition:dirichlet | 2 |" in text                               # and the comparison ran on it
    records = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("*.json")]
    keys = [r["config"].get("own_dataset") for r in records]
    assert len(records) == 8 and all(k and k["path"] == "my_data:mirrored" for k in keys)
