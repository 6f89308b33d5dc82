"""DTFL's engine baselines (fedlib.dtfl.run_baseline: FedAvg, FedYogi, SplitFed) against literal per-client loops
(fedlib.dtfl.run_literal_baseline), Yogi's step by hand, client sampling, and clear errors."""
import numpy as np
import pytest
import torch

from fedlib.data import TensorDataset
from fedlib.split.backends import BACKENDS
from fedlib.dtfl import DtflConfig, YogiConfig, run_baseline, run_dtfl, yogi_update
from tests.reference_dtfl import run_literal, run_literal_baseline


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def tiny(fmnist):
    return TensorDataset("fashion-mnist", fmnist.x_train[:90], fmnist.y_train[:90], fmnist.x_test[:40],
                         fmnist.y_test[:40], fmnist.classes, fmnist.source)




def double(ds):
    return TensorDataset(ds.name, ds.x_train.double(), ds.y_train, ds.x_test.double(), ds.y_test, ds.classes,
                         ds.source)


PART = np.array([[True, True, True], [True, False, True], [False, True, False]])


@pytest.mark.parametrize("method, cut", [("fedavg", 8), ("splitfed", 2), ("fedyogi", 8)])
@pytest.mark.parametrize("participants", [None, PART])
@pytest.mark.parametrize("backend", BACKENDS)
def test_engine_baselines_equal_literal_loops(tiny, float64, method, cut, participants, backend):
    cfg = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=12, partition="dirichlet", alpha=1.0,
                     channels_last=False, seed=1)
    tiny = double(tiny)
    yogi = YogiConfig(eta=3e-3) if method == "fedyogi" else None
    eng = run_baseline(cfg, tiny, method, 3, participants, yogi=yogi, keep_model=True, backend=backend)
    assert eng["method"] == method and eng["round"] == [0, 1, 2, 3]
    lit = run_literal_baseline(cfg, tiny, cut, 3, participants, yogi=yogi)
    np.testing.assert_allclose(eng["test_acc"], lit["test_acc"], atol=1e-12)
    a, b = eng["model"].state_dict(), lit["model"].state_dict()
    for key in a:
        torch.testing.assert_close(a[key], b[key], atol=1e-10, rtol=0, msg=key)


def test_splitfed_v1_learns_exactly_as_fedavg(tiny):
    """Per-client server copies averaged once a round + the returned gradient = FedAvg's computation split in two:
    SplitFed-V1 differs from FedAvg only in its time and traffic (Thapa et al. 2022)."""
    cfg = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=15, channels_last=False)
    assert run_baseline(cfg, tiny, "splitfed", 2)["test_acc"] == run_baseline(cfg, tiny, "fedavg", 2)["test_acc"]


def test_yogi_update_by_hand():
    theta = {"w": torch.tensor([1.0, -2.0])}
    delta = {"w": torch.tensor([0.1, -0.3])}
    m, v = {}, {}
    cfg = YogiConfig(eta=0.5, beta1=0.9, beta2=0.99, tau=0.01)
    new = yogi_update(theta, delta, m, v, cfg)
    # m = 0.1 * d = [0.01, -0.03]; v0 = 1e-4, d^2 = [0.01, 0.09] > v0 -> v = 1e-4 + 0.01 * d^2 = [2e-4, 1e-3]
    torch.testing.assert_close(m["w"], torch.tensor([0.01, -0.03]))
    torch.testing.assert_close(v["w"], torch.tensor([2e-4, 1e-3]))
    expect = torch.tensor([1 + 0.5 * 0.01 / (2e-4 ** 0.5 + 0.01), -2 - 0.5 * 0.03 / (1e-3 ** 0.5 + 0.01)])
    torch.testing.assert_close(new["w"], expect)
    # second step with delta 0: m = 0.9 m; v: d^2 = 0 < v -> v unchanged
    new2 = yogi_update(new, {"w": torch.zeros(2)}, m, v, cfg)
    torch.testing.assert_close(v["w"], torch.tensor([2e-4, 1e-3]))
    torch.testing.assert_close(new2["w"], new["w"] + 0.5 * torch.tensor([0.009, -0.027]) / (v["w"].sqrt() + 0.01))
    with pytest.raises(ValueError, match="names and shapes"):
        yogi_update(theta, {"w": torch.zeros(3)}, {}, {}, cfg)
    with pytest.raises(ValueError, match="non-finite"):
        yogi_update(theta, {"w": torch.tensor([float("nan"), 0.0])}, {}, {}, cfg)


# round 2: client 1 sits out while changing tier (md1..md3 -> md1, fresh Adam) and tier 1 has no participant (its
# head stays); round 3: client 1 trains alone, at the same tier (its Adam state and head from round 2), clients 0
# and 2 sit out while changing tier
SAMPLED_CUTS = [[1, 3, 7], [3, 1, 7], [7, 1, 3]]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("partition", ["iid", "dirichlet"])
def test_sampled_dtfl_equals_literal_over_participants(tiny, float64, partition, backend):
    """Engine (run_dtfl, participants=) == literal loop over the same participants: non-participants sit the round
    out, the global model is the N_k-weighted average over the round's participants (renormalised), loaded into
    every client; heads averaged within a tier over its participants. Parameters, accuracies and losses."""
    tiny = double(tiny)
    cfg = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=12, partition=partition, alpha=1.0,
                     channels_last=False, seed=2)
    eng = run_dtfl(cfg, tiny, SAMPLED_CUTS, participants=PART, keep_model=True, backend=backend)
    lit = run_literal(cfg, tiny, SAMPLED_CUTS, participants=PART)
    np.testing.assert_allclose(eng["test_acc"], lit["test_acc"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(eng["test_loss"], lit["test_loss"], rtol=0, atol=1e-10)
    a, b = eng["model"].state_dict(), lit["model"].state_dict()
    assert a.keys() == b.keys()
    for key in a:       # BN's num_batches_tracked (unused at momentum 0.1): the engine keeps client 0's count even
        if a[key].is_floating_point():      # when client 0 sat out, the literal loop the first participant's
            torch.testing.assert_close(a[key], b[key], atol=1e-10, rtol=0, msg=key)
    full = run_literal(cfg, tiny, SAMPLED_CUTS)                     # the sample matters from round 2 on
    assert full["test_loss"][:2] == lit["test_loss"][:2] and full["test_loss"][2] != lit["test_loss"][2]


@pytest.mark.parametrize("kwargs, word", [
    (dict(method="fedprox", rounds=2), "method"), (dict(method="fedavg", rounds=0), "rounds"),
    (dict(method="fedavg", rounds=2, yogi=YogiConfig()), "yogi"),
    (dict(method="fedavg", rounds=2, participants=np.zeros((2, 3), bool)), "participants"),
    (dict(method="fedavg", rounds=2, participants=np.ones((3, 3), bool)), "participants"),
    (dict(method="fedavg", rounds=2, participants=np.ones((2, 3))), "participants")])
def test_bad_inputs(tiny, kwargs, word):
    cfg = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=30)
    with pytest.raises(ValueError, match=word):
        run_baseline(cfg, tiny, **kwargs)


@pytest.mark.parametrize("kwargs, word", [(dict(eta=0), "eta"), (dict(tau=float("nan")), "tau"),
                                          (dict(beta1=1.0), "beta1"), (dict(beta2=-0.1), "beta2")])
def test_yogi_config_errors(kwargs, word):
    with pytest.raises(ValueError, match=word):
        YogiConfig(**kwargs)
