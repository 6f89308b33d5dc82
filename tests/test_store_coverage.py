"""Every store's key covers the code its computation executes.

Each test computes one tiny record of one kind of store (HIST's runs and pilot constants; DTFL's training runs on
both backends, a baseline and a privacy run; HASFL's pilot constants and training runs on both backends) with a
profiler on: every function of ``fedlib`` that runs while the record is computed names its module. Each such
module must be covered by the record's store code (``ResultStore.code``: a module or a package above it) or sit on
:data:`ALLOWED`, which gives the reason a record's value does not depend on it. A module that computes a record
and is missing from its key would let an edit there serve stale records (as ``fedlib.split.stacked_layers`` did
for the stacked backend's records before it joined :data:`fedlib.split.backends.STACKED_CODE`).

The profiler sees function calls, not module constants read at import: the static import checks of
``tests/test_cache_keys.py`` cover those.
"""
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import fedlib
from fedlib.lab import store as store_mod
from fedlib.data import TensorDataset
from fedlib.dtfl.privacy import privacy_record

FEDLIB = Path(fedlib.__file__).resolve().parent

#: modules that run while a record is computed and that no record's value depends on: module -> why
ALLOWED = {
    "fedlib": "the package's __init__: the version string and re-exports",
    "fedlib.lab.store": "stores, loads and keys records (the envelope has its own SCHEMA)",
    "fedlib.lab.paths": "where files go",
    "fedlib.lab.runlock": "who computes a record, not what it holds",
    "fedlib.lab.parallel": "fans jobs out and sets thread counts; records do not depend on the number of workers "
                            "(tests/test_sweeps.py)",
    "fedlib.lab.params": "notebook parameters",
}

pytestmark = pytest.mark.usefixtures("one_thread")


def _module_of(filename: str) -> str | None:
    try:
        rel = Path(filename).resolve().relative_to(FEDLIB)
    except ValueError:
        return None
    parts = ("fedlib", *rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _covered(module: str, code) -> bool:
    return any(module == c or module.startswith(c + ".") for c in code)


class _Tracer:
    """Wraps ``ResultStore.get_or_run``: while a record's ``run`` computes, every fedlib module whose function is
    called is added to that record's set (and to the sets of the records that enclose it)."""

    def __init__(self):
        self.records = []        # (kind, code, executed modules)
        self._active = []

    def _profile(self, frame, event, arg):
        if event == "call":
            module = _module_of(frame.f_code.co_filename)
            if module:
                for executed in self._active:
                    executed.add(module)

    def install(self, monkeypatch):
        original = store_mod.ResultStore.get_or_run
        tracer = self

        def get_or_run(self, config, run, *args, **kwargs):
            executed: set = set()

            def traced():
                tracer._active.append(executed)
                old = sys.getprofile()
                sys.setprofile(tracer._profile)
                try:
                    return run()
                finally:
                    sys.setprofile(old)
                    tracer._active.pop()
                    if tracer._active:              # an enclosing record keeps profiling
                        sys.setprofile(tracer._profile)
            out = original(self, config, traced, *args, **kwargs)
            tracer.records.append((config.get("kind", "hist_run"), tuple(self.code), executed))
            return out
        monkeypatch.setattr(store_mod.ResultStore, "get_or_run", get_or_run)
        return self

    def uncovered(self) -> dict:
        """``{kind: modules executed but neither in the key nor allowed}``; fails when nothing was traced."""
        assert self.records and all(executed for _, _, executed in self.records), "no record was computed"
        return {kind: sorted(m for m in executed if not _covered(m, code) and m not in ALLOWED)
                for kind, code, executed in self.records}


@pytest.fixture
def tracer(monkeypatch, tmp_path):
    return _Tracer().install(monkeypatch)


@pytest.fixture(scope="module")
def tiny(fmnist):
    return TensorDataset("fashion-mnist", fmnist.x_train[:120], fmnist.y_train[:120], fmnist.x_test[:40],
                         fmnist.y_test[:40], fmnist.classes, fmnist.source)


def _assert_covered(tracer, kinds):
    uncovered = tracer.uncovered()
    assert {k for k, _, _ in tracer.records} >= set(kinds), [k for k, _, _ in tracer.records]
    assert not any(uncovered.values()), f"modules that computed a record but are not in its key: {uncovered}"


def test_hist_run_and_pilot_keys_cover_their_code(tracer, tmp_path, fmnist):
    from fedlib import hist
    from fedlib.lab import hist as hist_lab
    from fedlib.hist import estimate
    store = hist_lab.result_store(str(tmp_path))
    cfg = hist.HistConfig(num_cells=2, num_clients=4, hidden=8, H=2, E=4, global_rounds=1, batch_size=8,
                          shards_per_client=2, seed=0)
    hist_lab.run_sweep([cfg], store, fmnist, device="cpu", progress=False)
    pilot = dict(kind="hist_constants", setting="noniid", num_cells=[3], H=2, E=4, pilot_rounds=1, num_clients=6,
                 lr=0.01, batch_size=8, seed=0, sigma_draws=2, smoothness_clients=2, power_iters=2)
    store.get_or_run(pilot, lambda: estimate.pilot_constants(**{k: v for k, v in pilot.items() if k != "kind"},
                                                               dataset=fmnist, device="cpu"))
    _assert_covered(tracer, ["hist_run", "hist_constants"])


DTFL_SETUP = dict(model="resnet20", width=0.125, num_clients=3, batch_size=20, train_subset=90, test_subset=40,
                  rounds=2, eval_every=1)


def _train_dtfl(store, data) -> None:
    """A DTFL training run as the notebooks hand it to the store: its key (train_key), train_record computing it."""
    from fedlib.dtfl.run import train_record
    from fedlib.lab.dtfl import experiments
    cfg, cuts = experiments.Setup(**DTFL_SETUP).config("iid", 0), [[3, 2, 1]] * 2
    run_store, key, backend = experiments.train_key(store, cfg, cuts)
    run_store.get_or_run(key, partial(train_record, cfg, data, cuts, "cpu", None, backend))


@pytest.mark.parametrize("backend", ["loop", "stacked"])
def test_dtfl_training_keys_cover_their_code(tracer, tmp_path, tiny, backend, monkeypatch):
    from fedlib.lab.dtfl import experiments
    from fedlib.dtfl import training
    if backend == "stacked":                      # the CPU resolves "auto" to the loop: force the stacked backend
        monkeypatch.setattr(training, "resolve_backend", lambda b, d: "stacked")
    store = experiments.result_store(str(tmp_path))
    _train_dtfl(store, tiny)
    assert (tracer.records[-1][1] != experiments.STORE_CODE) == (backend == "stacked")
    _assert_covered(tracer, ["dtfl_train"])


def test_dtfl_baseline_and_privacy_keys_cover_their_code(tracer, tmp_path, tiny):
    from dtfl_jobs import baseline_entry
    from fedlib.lab.dtfl import experiments
    store = experiments.result_store(str(tmp_path))
    s = experiments.Setup(**DTFL_SETUP)
    baseline_entry(store, s, tiny, "fedavg", "iid", 0, 0.5)
    cfg, cuts = s.config("iid", 0), np.full((s.rounds, s.num_clients), 2)   # dtfl_7_privacy's run: every client at cut 2
    store.get_or_run(dict(kind="dtfl_privacy", **cfg.to_dict(), dcor_alpha=0.25),
                     partial(privacy_record, cfg, tiny, cuts, 2, 0.25, 1, 0, s.train_subset, 16, 8, 1))
    _assert_covered(tracer, ["dtfl_baseline", "dtfl_privacy"])


def test_hasfl_pilot_and_training_keys_cover_their_code(tracer, tmp_path, tiny):
    """HASFL's pilot and a training run (HASFL trains on the split engine's loop backend only)."""
    from fedlib.lab.hasfl.runs import experiments, train_config, train_run
    from fedlib.lab.hasfl.runs.training import TrainSettings
    store = experiments.result_store(str(tmp_path))
    cfg = experiments.constants_config("vgg16", "fashion-mnist", 2, 0.01, 8, 2, 2, 0, width=0.125, interval=2)
    experiments.estimated_constants(store, cfg, tiny)
    s = TrainSettings(width=0.125, interval=2, epochs=0.2, evals=5, test_subset=40)
    config = train_config.run_config(s, "iid", {"b": [8, 8], "cuts": [1, 3]}, 0, len(tiny.y_train))
    train_run.train_record(store, config, tiny, "cpu")
    _assert_covered(tracer, ["hasfl_constants", "hasfl_train"])


def test_the_tracer_sees_a_module_missing_from_a_key(tracer, tmp_path, tiny, monkeypatch):
    """The check itself: the same DTFL run with one module the run executes dropped from its key is refused."""
    from fedlib.lab.dtfl import experiments
    code = tuple(c for c in experiments.STORE_CODE if c != "fedlib.split.engine")
    store = store_mod.ResultStore(str(tmp_path), code=code)
    _train_dtfl(store, tiny)
    assert tracer.uncovered()["dtfl_train"] == ["fedlib.split.engine"]
