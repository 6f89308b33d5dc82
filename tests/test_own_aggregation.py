"""An aggregation rule of your own for DTFL's baselines (issue 71, item 7): the ``server_update(st, before,
weights)`` hook of :func:`fedlib.dtfl.run_engine`, worked as FedAvgM (server momentum) in
``notebooks/dtfl/my_baseline.py`` and run beside FedAvg in ``dtfl_your_method``: its update checked against
hand-computed values, its run the same in this process and in workers, keyed by its path and source.

Planted once each and seen red: the velocity not carried across rounds; the step's sign flipped; the batch-norm
buffers averaged into the momentum too."""
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks" / "dtfl"

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def my_baseline(monkeypatch):
    monkeypatch.syspath_prepend(str(NOTEBOOKS))
    import my_baseline
    yield my_baseline
    sys.modules.pop("my_baseline", None)


def _state(avg):
    """One unit held by two copies (both at the round's average ``avg``), a parameter ``w`` and a buffer ``rm``."""
    copies = [{"w": torch.tensor(avg), "rm": torch.tensor([5.0])} for _ in range(2)]
    return SimpleNamespace(units=[copies], pnames=[["w"]])


def test_server_momentum_by_hand_over_two_rounds(my_baseline):
    hook = my_baseline.ServerMomentum(beta=0.5, lr=1.0)
    st = _state([1.0, 2.0])
    hook(st, [{"w": torch.tensor([2.0, 2.0]), "rm": torch.tensor([0.0])}], None)
    # round 1: step = before - average = [1, 0]; v = [1, 0]; w = before - v = [1, 2]
    for copy in st.units[0]:
        assert copy["w"].tolist() == [1.0, 2.0] and copy["rm"].tolist() == [5.0]
    st = _state([0.0, 2.0])
    hook(st, [{"w": torch.tensor([1.0, 2.0]), "rm": torch.tensor([5.0])}], None)
    # round 2: step = [1, 0]; v = 0.5 [1, 0] + [1, 0] = [1.5, 0]; w = [1, 2] - [1.5, 0] = [-0.5, 2]
    for copy in st.units[0]:
        assert copy["w"].tolist() == [-0.5, 2.0] and copy["rm"].tolist() == [5.0]


def test_fedavgm_runs_beside_fedavg_keyed_by_its_source_the_same_in_this_process_and_in_workers(
        my_baseline, tmp_path):
    from dtfl_jobs import compare_job
    from fedlib.lab.dtfl.experiments import Setup
    from fedlib.lab.parallel import map_jobs
    from fedlib.lab.store import ResultStore

    s = Setup(model="resnet20", width=0.25, num_clients=2, batch_size=50, train_subset=200, test_subset=100,
              rounds=2)
    job = dict(s=s, method="my_baseline:fedavgm", setting="iid", seed=1, target_acc=0.2)
    here = map_jobs(compare_job, [dict(job, store=ResultStore(tmp_path / "here"))], workers=1)[0]
    there = map_jobs(compare_job, [dict(job, store=ResultStore(tmp_path / "there")),
                                   dict(job, method="fedavg", store=ResultStore(tmp_path / "there"))], workers=2)
    for key in ("test_acc", "test_loss", "train_loss"):
        assert here["record"][key] == there[0]["record"][key], key
    assert here["record"]["test_acc"] != there[1]["record"]["test_acc"]          # not FedAvg's run
    assert here["row"]["method"] == "my_baseline:fedavgm" and here["row"]["charged_as"] == "fedavg"
    from fedlib.lab.code_hash import source_hash
    assert here["row"]["baseline_code"] == source_hash(["my_baseline"])
