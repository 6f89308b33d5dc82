"""A runner of your own in HIST's sweep (fedlib.lab.hist.experiments.run_sweep(runner=...)) is keyed by its import
path and its module's source: its records never stand in for the built-in runner's or another runner's."""
import pytest

from fedlib.hist import HistConfig
from fedlib.lab.hist.experiments import run_sweep
from fedlib.lab.store import ResultStore, component_key

CFG = HistConfig(num_cells=2, num_clients=4, hidden=8, H=2, E=2, global_rounds=1, seed=0)


def runner_a(cfg, dataset, device, progress):
    return {"config": cfg.to_dict(), "made_by": "a"}


def runner_b(cfg, dataset, device, progress):
    return {"config": cfg.to_dict(), "made_by": "b"}


def test_two_runners_of_your_own_never_share_a_record(tmp_path, fmnist):
    store = ResultStore(tmp_path)
    assert run_sweep([CFG], store, fmnist, device="cpu", progress=False, runner=runner_a)[0]["made_by"] == "a"
    assert run_sweep([CFG], store, fmnist, device="cpu", progress=False, runner=runner_b)[0]["made_by"] == "b"
    again = run_sweep([CFG], store, fmnist, device="cpu", progress=False, runner=runner_a)[0]
    assert again["made_by"] == "a"
    files = sorted(p.read_text() for p in tmp_path.glob("*.json"))
    assert len(files) == 2 and sum(f"{__name__}:runner_a" in f for f in files) == 1     # the key names the runner
    # the built-in runner's key is the config alone (the committed stores' records), so it is none of these
    assert not store.has(CFG.to_dict())


def test_the_key_names_the_path_and_the_source():
    key = component_key(runner_a, "runner")
    assert key["path"].endswith(":runner_a") and len(key["code"]) == 16
    assert component_key(runner_b, "runner")["code"] == key["code"]          # one module, one source hash
    assert component_key(runner_b, "runner")["path"] != key["path"]


@pytest.mark.parametrize("bad", [lambda cfg, ds, dev, p: {}, runner_a.__call__], ids=["lambda", "method-wrapper"])
def test_a_runner_workers_cannot_import_is_refused_before_any_work(tmp_path, fmnist, bad):
    with pytest.raises(ValueError, match="runner must be a function defined at the top level of a module"):
        run_sweep([CFG], ResultStore(tmp_path), fmnist, device="cpu", progress=False, runner=bad)
    assert not list(tmp_path.glob("*.json"))


def test_a_closure_is_refused():
    def inner(cfg, ds, dev, p):
        return {}
    with pytest.raises(ValueError, match="runner must be"):
        component_key(inner, "runner")
