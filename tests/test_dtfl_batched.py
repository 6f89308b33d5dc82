"""Runs of a sweep batched as rows of one stacked call (tests/dtfl_batched.py, tests/stacked_runs.py): in float64
each run's record equals the same run trained alone on the stacked backend (and so the literal loop, which the
stacked backend equals: tests/test_dtfl_training.py)."""
import numpy as np
import pytest
import torch

from fedlib.data import TensorDataset
from fedlib.dtfl import DtflConfig, client_data
from tests.dtfl_batched import run_batched
from fedlib.dtfl.run import run_engine

pytestmark = pytest.mark.usefixtures("one_thread")

KEYS = ("round", "test_acc", "test_loss", "train_loss", "test_acc_aux", "test_loss_aux", "samples_per_client")


@pytest.fixture(scope="module")
def tiny64(fmnist):
    return TensorDataset("fashion-mnist", fmnist.x_train[:90].double(), fmnist.y_train[:90],
                         fmnist.x_test[:40].double(), fmnist.y_test[:40], fmnist.classes, fmnist.source)


def _same(batched, alone):
    for key in KEYS:
        if key not in alone:
            continue
        a, b = batched[key], alone[key]
        assert len(a) == len(b), key
        for x, y in zip(a, b):
            if isinstance(y, (list, int)) or y is None:
                assert x == y, key
            else:
                assert x == pytest.approx(y, abs=1e-10, rel=0), key


@pytest.mark.parametrize("backend", ["stacked", "stacked_cl"])
def test_dtfl_runs_batched_equal_each_run_alone(tiny64, float64, backend):
    """Three seeds (different partitions: dirichlet, so clients sit out the last steps of a round at different
    steps per run), each with its own tiers per round (new tiers entering, a tier held by one run only) and
    participants (a client absent for a round in one run)."""
    cfgs = [DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=8, partition="dirichlet",
                       channels_last=False, seed=s) for s in (3, 4, 5)]
    cuts = [[[1, 3, 7], [3, 1, 7], [7, 3, 1]], [[2, 2, 2], [2, 5, 2], [6, 5, 2]], [[1, 3, 7], [1, 3, 7], [1, 3, 7]]]
    part = [None, None, [[True, True, True], [True, False, True], [True, True, True]]]
    sizes = [sorted(len(p) for p in client_data(c, tiny64.y_train.numpy())) for c in cfgs]
    assert len({tuple(s) for s in sizes}) == 3                    # three partitions, unequal clients
    batched = run_batched(cfgs, tiny64, cuts, "dtfl", participants=part, backend=backend)
    assert [r["batched"] for r in batched] == [3] * 3 and [r["config"]["seed"] for r in batched] == [3, 4, 5]
    for cfg, c, p, rec in zip(cfgs, cuts, part, batched):
        alone = run_engine(cfg, tiny64, c, "dtfl", participants=p, backend=backend)
        _same(rec, alone)
        assert None not in rec["train_loss"][1:]
        assert (None in rec["test_acc_aux"][1:]) == (7 not in np.asarray(c))      # the top tier's head, where held


def test_fedavg_runs_batched_equal_each_run_alone(tiny64, float64):
    cfgs = [DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=8, channels_last=False, seed=s)
            for s in (0, 1)]
    cuts = [np.full((2, 3), 8), np.full((2, 3), 8)]
    batched = run_batched(cfgs, tiny64, cuts, "fedavg")
    for cfg, c, rec in zip(cfgs, cuts, batched):
        _same(rec, run_engine(cfg, tiny64, c, "fedavg", backend="stacked"))
    assert batched[0]["test_acc"] != batched[1]["test_acc"] or batched[0]["test_loss"] != batched[1]["test_loss"]


def test_batched_runs_refuse_what_they_cannot_share(tiny64):
    a = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=8, seed=0)
    b = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=4, seed=1)
    cuts = [np.full((2, 3), 2)] * 2
    with pytest.raises(ValueError, match=r"differs from cfgs\[0\] in \['batch_size'\]"):
        run_batched([a, b], tiny64, cuts)
    a1 = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=8, seed=1)
    with pytest.raises(ValueError, match="one \\[rounds, K\\] array per run"):
        run_batched([a, a1], tiny64, cuts[:1] + [cuts[0], cuts[0]])
    with pytest.raises(ValueError, match="same number of rounds"):
        run_batched([a, a1], tiny64, [np.full((2, 3), 2), np.full((3, 3), 2)])
    # the same seed twice would train one run twice and report it as two seeds: refused before any work
    with pytest.raises(ValueError, match=r"cfgs: seed\(s\) \[0\] given more than once \(\[0, 1, 0\]\)"):
        run_batched([a, a1, a], tiny64, cuts + cuts[:1])
    with pytest.raises(ValueError, match="cfgs must be a list of at least 1"):
        run_batched([], tiny64, [])
    with pytest.raises(ValueError, match="method"):
        run_batched([a, a], tiny64, cuts, "fedyogi")
    with pytest.raises(ValueError, match="backend"):
        run_batched([a, a], tiny64, cuts, backend="loop")
    assert torch.get_default_dtype() == torch.float32
