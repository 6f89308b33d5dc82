"""FedGKT (fedlib.dtfl.run_fedgkt) against its literal loop (tests/reference_dtfl.py: run_literal_gkt / gkt_round:
own modules, torch.optim.Adam objects, KD written out, own composite evaluation), float64: the same client and
server parameters (BN statistics included), evaluations and server losses to ~1e-10."""
import numpy as np
import pytest
import torch

from fedlib.data import TensorDataset
from fedlib.dtfl import DtflConfig, client_data, run_fedgkt
from tests.reference_dtfl import gkt_round, run_literal_gkt

pytestmark = pytest.mark.usefixtures("one_thread", "float64")

CFG = DtflConfig(model="resnet20", width=0.25, num_clients=3, batch_size=8, channels_last=False, seed=4)


@pytest.fixture(scope="module")
def tiny(fmnist):
    return TensorDataset("fashion-mnist", fmnist.x_train[:60].double(), fmnist.y_train[:60],
                         fmnist.x_test[:40].double(), fmnist.y_test[:40], fmnist.classes, fmnist.source)


def assert_same(eng, lit):
    np.testing.assert_allclose(eng["test_acc"], lit["test_acc"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(eng["test_loss"], lit["test_loss"], rtol=0, atol=1e-10)
    assert eng["train_loss"][0] is None and lit["train_loss"][0] is None
    np.testing.assert_allclose(eng["train_loss"][1:], lit["train_loss"][1:], rtol=0, atol=1e-10)
    pairs = list(zip(eng["client_models"], lit["client_models"])) + [(eng["server_model"], lit["server_model"])]
    for m, (a, b) in enumerate(pairs):
        a, b = a.state_dict(), b.state_dict()
        assert a.keys() == b.keys()
        for key in a:
            assert a[key].dtype == b[key].dtype
            torch.testing.assert_close(a[key], b[key], atol=1e-10, rtol=0, msg=f"model {m} {key}")


def test_one_round_equals_literal(tiny):
    """Round 1: clients on CE (no server logits yet), then the server on CE + KD(client logits)."""
    eng = run_fedgkt(CFG, tiny, 1, keep_models=True)
    lit = run_literal_gkt(CFG, tiny, 1)
    assert eng["round"] == [0, 1]
    assert_same(eng, lit)


@pytest.mark.parametrize("partition", ["iid", "dirichlet"])
def test_two_rounds_with_sampling_and_client_kd_equal_literal(tiny, partition):
    """Round 2: client 0 trains on CE + α·KD(server logits of round 1), client 1 (absent in round 1) on CE alone,
    client 2 sits out; T = 2, α = 0.7, two server epochs (each draws its own orders)."""
    cfg = DtflConfig(**(CFG.to_dict() | dict(partition=partition, alpha=1.0)))
    if partition == "dirichlet":
        assert len(set(len(p) for p in client_data(cfg, tiny.y_train.numpy()))) > 1
    part = np.array([[True, False, True], [True, True, False]])
    kw = dict(temperature=2.0, kd_alpha=0.7, server_epochs=2)
    eng = run_fedgkt(cfg, tiny, 2, participants=part, keep_models=True, **kw)
    lit = run_literal_gkt(cfg, tiny, 2, participants=part, **kw)
    assert_same(eng, lit)


def test_literal_round_uses_the_teacher(tiny):
    """The literal round itself: with server logits as teachers the clients' update changes, and α = 0 ignores
    them (guards the reference against a KD term that does nothing)."""
    from fedlib.dtfl.fedgkt import gkt_models
    xs, ys = [tiny.x_train[:16], tiny.x_train[16:32]], [tiny.y_train[:16], tiny.y_train[16:32]]

    def one(alpha, teacher):
        client, server = gkt_models(CFG, 1, 28, 10)
        clients = [client, gkt_models(CFG, 1, 28, 10)[0]]
        opts = [torch.optim.Adam(c.parameters(), lr=1e-3) for c in clients]
        gkt_round(clients, opts, server, torch.optim.Adam(server.parameters(), lr=1e-3), list(teacher), xs, ys,
                  [True, True], torch.Generator().manual_seed(0), 8, 3.0, alpha, 1)
        return torch.cat([p.detach().flatten() for p in clients[0].parameters()])

    fake = [torch.randn(16, 10, generator=torch.Generator().manual_seed(1), dtype=torch.float64), None]
    assert not torch.equal(one(1.0, fake), one(1.0, [None, None]))
    torch.testing.assert_close(one(0.0, fake), one(1.0, [None, None]), atol=0, rtol=0)
