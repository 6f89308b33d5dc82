"""HASFL's training records on either split-engine backend (fedlib.split.run_split's backend,
fedlib.lab.hasfl.runs.train_run): the loop backend's record and key are run_split's as before; a stacked run is
the same run in float64; one store serves both, a record of either backend is read and never retrained."""
from dataclasses import replace

import pytest
import torch

from fedlib.lab.store import ResultStore
from fedlib.hasfl import training as hasfl_training
from fedlib.lab.hasfl.runs import experiments, train_run
from fedlib.lab.hasfl.runs.train_config import run_config
from fedlib.lab.hasfl.runs.training import TrainSettings
from fedlib.split import SplitConfig
from fedlib.split.records import run_split

pytestmark = pytest.mark.usefixtures("one_thread")

TIMING = ("elapsed_s", "store_key", "data_source")


@pytest.fixture(scope="module")
def small(fmnist):
    """240 training and 200 test images of real Fashion-MNIST, in float64."""
    return replace(fmnist, x_train=fmnist.x_train[:240].double(), y_train=fmnist.y_train[:240],
                   x_test=fmnist.x_test[:200].double(), y_test=fmnist.y_test[:200])


def _cfg(**kw):
    base = dict(model="vgg16", width=0.0625, num_devices=4, batch_sizes=(4, 6, 4, 8), cuts=(2, 5, 5, 9),
                interval=2, lr=0.05, rounds=6, eval_every=2, seed=1)
    return SplitConfig(**{**base, **kw})


def _strip(rec):
    return {k: v for k, v in rec.items() if k not in TIMING}


def test_auto_backend_on_the_cpu_is_the_loop(small, float64):
    a, b = run_split(_cfg(), small, "cpu"), run_split(_cfg(), small, "cpu", backend="auto")
    assert _strip(a) == _strip(b) and "backend" not in b


@pytest.mark.parametrize("backend", ["stacked", "stacked_cl"])
@pytest.mark.parametrize("kw", [dict(), dict(optimizer="adam", lr=1e-3, eps=1e-4, batch_sizes=(5, 5, 5, 5))],
                         ids=["sgd-mixed-b", "adam-equal-b"])
def test_stacked_run_equals_loop_run_in_float64(small, float64, backend, kw):
    calls = []

    def stop(rec):
        calls.append(len(rec["round"]))
        return len(rec["round"]) == 3                                      # the stop rule ends both at round 4

    loop = run_split(_cfg(**kw), small, "cpu", stop=stop, backend="loop")
    st = run_split(_cfg(**kw), small, "cpu", stop=stop, backend=backend)
    assert st["backend"] == backend and st["round"] == loop["round"] == [0, 2, 4]
    assert st["epoch"] == loop["epoch"] and st["train_loss"][0] is None
    for k in ("test_acc", "test_loss", "train_loss"):
        assert st[k][1:] == pytest.approx(loop[k][1:], abs=1e-9), k
    assert calls == [2, 3, 2, 3]


def _settings():
    return TrainSettings(width=0.0625, interval=2, epochs=0.1, min_rounds=2, max_rounds=5, evals=5, test_subset=100)


def test_one_store_for_both_backends(small, tmp_path, monkeypatch):
    small = replace(small, x_train=small.x_train.float(), x_test=small.x_test.float())
    store = ResultStore(tmp_path, code=experiments.STORE_CODE)
    cfg_a = run_config(_settings(), "iid", {"b": [4] * 4, "cuts": [2] * 4}, 0, 240)
    cfg_b = run_config(_settings(), "iid", {"b": [4] * 4, "cuts": [3] * 4}, 0, 240)
    # a stacked record: keyed apart (config + backend, stacked code), says its backend
    rec = train_run.train_record(store, cfg_a, small, "cpu", "stacked")
    assert rec["backend"] == "stacked" and rec["round"][-1] == cfg_a["rounds"]
    s, c = train_run.keyed(store, cfg_a, "stacked")
    assert c == {**cfg_a, "backend": "stacked"} and s.has(c) and not train_run.train_store(store).has(cfg_a)
    assert s.code_hash != train_run.train_store(store).code_hash
    # a loop record is keyed exactly as train_record keys it
    loop = train_run.train_record(store, cfg_b, small, "cpu", "loop")
    assert train_run.train_store(store).has(cfg_b) and "backend" not in loop
    s_loop, c_loop = train_run.keyed(store, cfg_b, "loop")
    assert c_loop == cfg_b and s_loop.code_hash == train_run.train_store(store).code_hash

    def no_training(*args, **kwargs):
        raise AssertionError("a stored run was trained again")
    monkeypatch.setattr(hasfl_training, "run_split", no_training)
    # either backend reads the other's record
    assert _strip(train_run.train_record(store, cfg_a, small, "cpu", "loop")) == _strip(rec)
    assert _strip(train_run.train_record(store, cfg_b, small, "cpu", "stacked_cl")) == _strip(loop)
    view = train_run.AnyBackendRecords(store)
    assert view.has(cfg_a) and view.has(cfg_b) and view.load(cfg_a)["backend"] == "stacked"
    assert view.key(cfg_a) == train_run.train_store(store).key(cfg_a)
    cfg_c = run_config(_settings(), "iid", {"b": [4] * 4, "cuts": [4] * 4}, 0, 240)
    assert not view.has(cfg_c)
    with pytest.raises(KeyError, match="any backend"):
        view.load(cfg_c)
    with pytest.raises(ValueError, match="backend"):
        train_run.train_record(store, cfg_c, small, "cpu", "stacked_gpu")
    assert torch.get_default_dtype() == torch.float32


def test_a_corrupt_record_is_reported_and_recomputed(small, tmp_path):
    small = replace(small, x_train=small.x_train.float(), x_test=small.x_test.float())
    store = ResultStore(tmp_path, code=experiments.STORE_CODE)
    cfg = run_config(_settings(), "iid", {"b": [4] * 4, "cuts": [2] * 4}, 0, 240)
    first = train_run.train_record(store, cfg, small, "cpu", "loop")
    train_run.train_store(store).path(cfg).write_text("{not json")
    with pytest.warns(UserWarning, match="not valid JSON"):
        again = train_run.train_record(store, cfg, small, "cpu", "loop")
    assert _strip(again) == _strip(first)
