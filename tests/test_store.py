"""Result store: keys, cache hits, force, atomic writes, resume of an interrupted sweep."""
import json

import pytest

from fedlib.hist import experiments, run
from fedlib.hist import HistConfig
from fedlib.core import ResultStore, config_key


def test_key_depends_on_config_seed_and_version_not_order():
    a = {"x": 1, "seed": 0}
    assert config_key(a) == config_key({"seed": 0, "x": 1})
    assert config_key(a) != config_key({"x": 1, "seed": 1})
    assert config_key(a, "0.1.0") != config_key(a, "0.2.0")


def test_hit_force_and_record(tmp_path):
    store = ResultStore(tmp_path)
    calls = []
    run = lambda: calls.append(1) or {"value": len(calls)}  # noqa: E731
    assert store.get_or_run({"a": 1}, run)["value"] == 1
    assert store.get_or_run({"a": 1}, run)["value"] == 1 and len(calls) == 1      # cache hit
    assert store.get_or_run({"a": 1}, run, force=True)["value"] == 2              # recomputed
    assert store.load({"a": 1})["store_key"] == config_key({"a": 1})
    with pytest.raises(KeyError, match="run the experiments notebook"):
        store.load({"a": 2})


def test_killed_run_leaves_nothing(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)

    def dump_then_die(obj, fh):
        fh.write('{"half": ')
        raise KeyboardInterrupt

    monkeypatch.setattr(json, "dump", dump_then_die)
    with pytest.raises(KeyboardInterrupt):
        store.save({"a": 1}, {"v": 1})
    assert list(tmp_path.iterdir()) == []


def test_interrupted_sweep_resumes(tmp_path, fmnist):
    store = ResultStore(tmp_path)
    cfgs = [HistConfig(num_cells=n, num_clients=6, hidden=30, H=5, E=10, global_rounds=1) for n in (1, 2, 3)]
    ran = []

    def runner(cfg, ds, device, progress):
        if len(ran) == 2:
            raise KeyboardInterrupt  # killed during the third run
        ran.append(cfg.num_cells)
        return run.run_hist(cfg, ds, "cpu", progress=False)

    with pytest.raises(KeyboardInterrupt):
        experiments.run_sweep(cfgs, store, fmnist, progress=False, runner=runner)
    assert ran == [1, 2] and len(list(tmp_path.glob("*.json"))) == 2
    ran.clear()
    out = experiments.run_sweep(cfgs, store, fmnist, progress=False,
                         runner=lambda c, d, dev, p: ran.append(c.num_cells) or run.run_hist(c, d, "cpu", False))
    assert ran == [3] and [r["config"]["num_cells"] for r in out] == [1, 2, 3]
    rec = out[0]
    assert rec["seed"] == 0 and rec["fedlib_version"] and rec["elapsed_s"] > 0 and rec["config"]["H"] == 5
