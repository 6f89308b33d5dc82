"""A component of your own edited in a live kernel runs its new source under its new key (issue 70, item 1).

Each test imports a module of its own, uses it, edits the file on disk, and uses it again in the same process, as a
notebook reader who edits ``my_partition.py`` and reruns a cell does; nothing here pops ``sys.modules``. Before the
fix the key followed the file on disk while the code that ran was the module Python already held: a HIST partition,
a DTFL scheduler and a HASFL strategy each ran stale under the new key. Planted: :func:`fedlib.lab.own_components.
load_own` never importing again -> every test red."""
import importlib
import json
import sys
import textwrap

import numpy as np
import pytest

from fedlib.lab import own_components

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def module_dir(tmp_path, monkeypatch):
    folder = tmp_path / "mods"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    for name in [n for n in sys.modules if n.startswith("reload_")]:
        sys.modules.pop(name)
    own_components._LOADED.clear()


def _write(folder, name: str, source: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    importlib.invalidate_caches()


def test_load_own_reloads_a_module_imported_before_it_and_after_each_edit(module_dir):
    _write(module_dir, "reload_value", "VALUE = 1\ndef get():\n    return VALUE\n")
    import reload_value                                              # imported by something else first
    assert reload_value.get() == 1
    _write(module_dir, "reload_value", "VALUE = 2\ndef get():\n    return VALUE\n")
    fn, code = own_components.load_own("reload_value:get", "thing")
    assert fn() == 2 and sys.modules["reload_value"].get() == 2    # the method layer resolves the same module
    _write(module_dir, "reload_value", "VALUE = 3\ndef get():\n    return VALUE\n")
    fn, code3 = own_components.load_own("reload_value:get", "thing")
    assert fn() == 3 and code3 != code


HIST_PARTITION = """
    import numpy as np

    def blocks(labels, num_clients, num_cells, rng):
        return [np.arange({size} * u, {size} * u + {size}) for u in range(num_clients)]
"""


def test_an_edited_hist_partition_runs_its_new_source_under_its_new_key(module_dir, tmp_path):
    from fedlib.data import load_dataset
    from fedlib.hist import HistConfig
    from fedlib.lab.hist.experiments import run_sweep
    from fedlib.lab.store import ResultStore

    data = load_dataset("fashion-mnist")
    store = ResultStore(tmp_path / "store")
    _write(module_dir, "reload_blocks", HIST_PARTITION.format(size=50))
    cfg = HistConfig(setting="reload_blocks:blocks", num_cells=2, num_clients=4, hidden=8, H=2, E=4,
                     global_rounds=1, seed=3)
    first = run_sweep([cfg], store, data, device="cpu", progress=False)[0]
    _write(module_dir, "reload_blocks", HIST_PARTITION.format(size=7))          # an edit of your module
    second = run_sweep([cfg], store, data, device="cpu", progress=False)[0]
    fresh = ResultStore(tmp_path / "fresh")                                     # the new source, in a clean store
    own_components._LOADED.clear()
    sys.modules.pop("reload_blocks")
    third = run_sweep([cfg], fresh, data, device="cpu", progress=False)[0]
    assert first["store_key"] != second["store_key"] == third["store_key"]
    keep = ("test_acc", "train_loss")
    assert {k: second[k] for k in keep} == {k: third[k] for k in keep} != {k: first[k] for k in keep}


DTFL_SCHEDULER = """
    import numpy as np
    from fedlib.dtfl import TierScheduler

    class Fixed(TierScheduler):
        def assign(self, mbps, samples, mask=None):
            return np.full(self.k, {tier}, dtype=np.int64)
"""


def test_an_edited_dtfl_scheduler_decides_by_its_new_source(module_dir):
    from fedlib.data import load_dataset
    from fedlib.lab.dtfl import experiments as dx

    data = load_dataset("fashion-mnist")
    s = dx.Setup(model="resnet20", width=0.125, num_clients=4, batch_size=8, train_subset=64, test_subset=50,
                 rounds=2)
    _write(module_dir, "reload_sched", DTFL_SCHEDULER.format(tier=4))
    before = dx.system_run(s, data, 7, "case1", "iid", 1, scheduler="reload_sched:Fixed")
    _write(module_dir, "reload_sched", DTFL_SCHEDULER.format(tier=2))
    after = dx.system_run(s, data, 7, "case1", "iid", 1, scheduler="reload_sched:Fixed")
    assert np.unique(before["tiers"]).tolist() == [4] and np.unique(after["tiers"]).tolist() == [2]


HASFL_STRATEGY = """
    import numpy as np

    def capped(problem, rng):
        return np.full(problem.num_devices, {cap}), np.full(problem.num_devices, 2)
"""


def test_an_edited_hasfl_strategy_decides_by_its_new_source(module_dir):
    from fedlib.hasfl import HasflConstants
    from fedlib.lab.hasfl.runs.training import TrainSettings, decide, training_problem

    problem = training_problem(TrainSettings(width=0.0625), HasflConstants(10.0, np.full(16, 0.01), np.ones(16), 2.3),
                               50.0, 3, 0)
    _write(module_dir, "reload_strategy", HASFL_STRATEGY.format(cap=64))
    assert decide(problem, "reload_strategy:capped", 4)["b"] == [64, 64, 64]
    _write(module_dir, "reload_strategy", HASFL_STRATEGY.format(cap=16))
    assert decide(problem, "reload_strategy:capped", 4)["b"] == [16, 16, 16]
    json.dumps(decide(problem, "reload_strategy:capped", 5))                   # a decision, as the notebooks keep


def test_an_edited_hasfl_strategy_is_compared_by_its_new_source(module_dir):
    """hasfl_your_method's predicted comparison (``compare_strategies``) after an edit of the strategy in a live
    kernel: Θ of the new source (before, the module Python already held ran: b stayed 64). Planted: the reload in
    ``compare_strategies`` dropped -> red."""
    from fedlib.hasfl import HasflConstants
    from fedlib.lab.hasfl.runs.experiments import compare_strategies
    from fedlib.lab.hasfl.runs.training import TrainSettings, decide, training_problem

    problem = training_problem(TrainSettings(width=0.0625), HasflConstants(10.0, np.full(16, 0.01), np.ones(16), 2.3),
                               50.0, 3, 0)
    _write(module_dir, "reload_strategy", HASFL_STRATEGY.format(cap=64))
    import reload_strategy                                    # held by this process, as after a first run  # noqa: F401
    theta64 = compare_strategies(problem, 1, 0, ("reload_strategy:capped",))[0]["theta"]
    _write(module_dir, "reload_strategy", HASFL_STRATEGY.format(cap=16))
    theta16 = compare_strategies(problem, 1, 0, ("reload_strategy:capped",))[0]["theta"]
    assert theta16 != theta64
    assert theta16 == decide(problem, "reload_strategy:capped", 0)["theta"]    # the decision of the new source


DTFL_MODEL = """
    from torch import nn

    def cnn(in_channels, image_size, num_classes, width):
        c = {c}
        units = [nn.Sequential(nn.Conv2d(in_channels, c, 3, 1, 1), nn.ReLU())]
        units += [nn.Sequential(nn.Conv2d(c, c, 3, 1, 1), nn.ReLU()) for _ in range(6)]
        return nn.Sequential(*units, nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, num_classes)))
"""


def test_an_edited_dtfl_model_is_timed_by_its_new_source(module_dir):
    """The DTFL time model of a split model of your own (cached per model) after an edit of its module in a live
    kernel: the new source's costs (before, the cache was keyed by the path alone: the old costs stayed until the
    kernel restarted). Hand-computed: md1 is a 3x3 conv 1 -> c on 28x28 (bias on), 2 * 9 * c * 784 forward FLOPs,
    and tier 1's smashed data is c channels of 28 x 28. Planted: the source left out of the cache key -> red."""
    from fedlib.lab.dtfl import experiments as dx

    _write(module_dir, "reload_model", DTFL_MODEL.format(c=2))
    before = dx.time_model("reload_model:cnn", 1.0, "fashion-mnist", 7, 1.0, 1.0)
    _write(module_dir, "reload_model", DTFL_MODEL.format(c=4))
    after = dx.time_model("reload_model:cnn", 1.0, "fashion-mnist", 7, 1.0, 1.0)
    # tier 1 sends md1's output, c channels of 28 x 28 float32 per sample: 4 * c * 784 bytes
    assert before.costs.smashed_bytes[0] == 4 * 2 * 784 and after.costs.smashed_bytes[0] == 4 * 4 * 784
    assert after.costs.profile.fwd_flops[0] == 2 * 9 * 4 * 784
