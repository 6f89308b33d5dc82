"""FedGKT (fedlib.dtfl.fedgkt: models, KD loss by hand, training runs) and the baselines in DTFL's time model
(fedlib.dtfl.baseline_time: costs of the real models and tensors, times by hand, the system simulation)."""
import math

import numpy as np
import pytest
import torch
from torch import nn

from fedlib.data import TensorDataset
from fedlib.dtfl import PROFILES, DtflConfig, ResourceProfile, profile_schedule
from fedlib.dtfl.baseline_time import METHODS, MethodCosts, method_costs, method_times, simulate_method
from fedlib.dtfl.fedgkt import gkt_client_model, gkt_models, gkt_server_model, kd_loss, run_fedgkt
from fedlib.split import profile_model, resnet20

SHAPE = (1, 28, 28)
W = 0.25          # planes 16·w = 4, features 64·w = 16 channels


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def tiny(fmnist):
    return TensorDataset("fashion-mnist", fmnist.x_train[:60], fmnist.y_train[:60], fmnist.x_test[:40],
                         fmnist.y_test[:40], fmnist.classes, fmnist.source)


CFG = DtflConfig(model="resnet20", width=W, num_clients=3, batch_size=10, train_subset=60, test_subset=40)


@pytest.fixture(scope="module")
def two_rounds(tiny):
    """Module-scoped, so built before the function-scoped one_thread fixture: set one thread here too (CPU
    convolutions sum in another order with another thread count)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return run_fedgkt(CFG, tiny, 2)
    finally:
        torch.set_num_threads(n)


# ---- FedGKT ------------------------------------------------------------------------------------------------------

def test_kd_loss_by_hand():
    s = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
    t = torch.tensor([[3.0, 2.0, 1.0], [1.0, 0.0, 0.0]])
    e = math.e
    # row 1: teacher/3 = [1, 2/3, 1/3], student/3 its mirror -> KL = (p1 - p3)(log p1 - log p3) = (p1 - p3)·2/3
    kl1 = 2 / 3 * (e - e ** (1 / 3)) / (e + e ** (2 / 3) + e ** (1 / 3))
    # row 2: teacher/3 = [1/3, 0, 0], student/3 = [0, 0, 1/3] -> KL = p1·(1/3) + p3·(-1/3)
    kl2 = (e ** (1 / 3) - 1) / (3 * (e ** (1 / 3) + 2))
    expect = 9 * (kl1 + kl2) / 2
    assert expect == pytest.approx(0.8293713576593985, rel=1e-12)
    assert float(kd_loss(s, t, 3.0)) == pytest.approx(expect, rel=1e-6)
    # numpy with the textbook formula, another temperature: T² · mean_b Σ_c p_t (log p_t − log p_s)
    sm = lambda v: np.exp(v) / np.exp(v).sum(1, keepdims=True)
    pt, ps = sm(t.numpy() / 2), sm(s.numpy() / 2)
    assert float(kd_loss(s, t, 2.0)) == pytest.approx(4 * (pt * np.log(pt / ps)).sum(1).mean(), rel=1e-6)
    assert float(kd_loss(s, s)) == pytest.approx(0.0, abs=1e-7)
    student = s.clone().requires_grad_(True)
    teacher = t.clone().requires_grad_(True)
    kd_loss(student, teacher).backward()
    assert teacher.grad is None and student.grad is not None       # no gradient into the teacher


def test_kd_loss_rejects_bad_input():
    s = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="temperature"):
        kd_loss(s, s, 0.0)
    with pytest.raises(ValueError, match="temperature"):
        kd_loss(s, s, float("nan"))
    with pytest.raises(ValueError, match="one shape"):
        kd_loss(s, torch.zeros(2, 4))
    with pytest.raises(ValueError, match="student_logits"):
        kd_loss(torch.zeros(3), torch.zeros(3))


def _params(*modules):
    return sum(p.numel() for m in modules for p in m.parameters())


def test_gkt_model_shapes_and_sizes():
    client = gkt_client_model(1, 28, 10, W)
    server = gkt_server_model("resnet20", 10, W)
    assert len(client) == 3 and len(server) == 7
    x = torch.randn(3, *SHAPE)
    feats = client[:2](x)
    assert feats.shape == (3, 16, 28, 28)
    assert client(x).shape == (3, 10) and server(feats).shape == (3, 10)
    # server = global model minus md1; md2's first block loses its downsample and its 1x1 conv takes 4p = 16
    # channels instead of p = 4: + (16 - 4)·4 weights
    g = resnet20(1, 28, 10, W)
    block = g[1][0]
    assert _params(server) == _params(g) - _params(g[0]) - _params(block.downsample) - 4 * 4 + 16 * 4
    assert server[0][0].downsample is None and server[0][0].conv1.in_channels == 16
    # client = md1 + the two blocks of stage 1 at full (n = 2: md2 + md3 of ResNet-20) + Linear(16, 10)
    assert _params(client) == _params(g[0], g[1], g[2]) + 16 * 10 + 10
    with pytest.raises(ValueError, match="model"):
        gkt_server_model("resnet18", 10)
    with pytest.raises(ValueError, match="width"):
        gkt_client_model(1, 28, 10, 0.0)
    with pytest.raises(ValueError, match="num_classes"):
        gkt_client_model(1, 28, 1)


def test_run_fedgkt_record_and_determinism(tiny, two_rounds):
    rec = two_rounds
    assert set(rec) == {"config", "method", "device", "samples_per_client", "gkt", "round", "test_acc",
                        "test_loss", "train_loss", "elapsed_s"}
    assert rec["method"] == "fedgkt" and rec["round"] == [0, 1, 2] and rec["samples_per_client"] == [20, 20, 20]
    assert rec["train_loss"][0] is None and all(v > 0 for v in rec["train_loss"][1:])
    assert rec["config"] == CFG.to_dict()
    again = run_fedgkt(CFG, tiny, 2)
    for key in ("test_acc", "test_loss", "train_loss"):
        assert again[key] == rec[key]
    assert rec["test_loss"][2] != rec["test_loss"][1]


def CFG_TEST(ds):
    n = CFG.test_subset or len(ds.y_test)
    return ds.x_test[:n], ds.y_test[:n]


def test_non_participant_keeps_its_model_and_evaluation_is_client_mean(tiny):
    rec = run_fedgkt(CFG, tiny, 1, participants=np.array([[False, True, True]]), keep_models=True)
    init_client, init_server = gkt_models(CFG, 1, 28, 10)
    init = init_client.state_dict()
    clients = rec["client_models"]
    assert all(torch.equal(init[k], v) for k, v in clients[0].state_dict().items())
    assert not all(torch.equal(init[k], v) for k, v in clients[1].state_dict().items())
    assert not all(torch.equal(init_server.state_dict()[k], v) for k, v in rec["server_model"].state_dict().items())
    # evaluation: the round's participants (clients 1, 2), test sample j scored by participant j mod 2
    x, y = CFG_TEST(tiny)
    correct = loss = 0.0
    for j in range(len(y)):
        model = nn.Sequential(*clients[1 + j % 2][:2], *rec["server_model"]).eval()
        with torch.no_grad():
            out = model(x[j:j + 1])
        correct += float(out.argmax(1).item() == y[j].item())
        loss += float(nn.functional.cross_entropy(out, y[j:j + 1]))
    assert rec["test_acc"][-1] == pytest.approx(correct / len(y), abs=1e-12)
    assert rec["test_loss"][-1] == pytest.approx(loss / len(y), rel=1e-4)


def test_first_round_clients_train_on_cross_entropy_only(tiny):
    """Before a client has server logits its loss is CE alone: kd_alpha changes only the server in round 1."""
    a = run_fedgkt(CFG, tiny, 1, kd_alpha=0.0, keep_models=True)
    b = run_fedgkt(CFG, tiny, 1, kd_alpha=1.0, keep_models=True)
    for ca, cb in zip(a["client_models"], b["client_models"]):
        assert all(torch.equal(v, cb.state_dict()[k]) for k, v in ca.state_dict().items())
    sa, sb = a["server_model"].state_dict(), b["server_model"].state_dict()
    assert not all(torch.equal(v, sb[k]) for k, v in sa.items())


def test_run_fedgkt_rejects_bad_input(tiny):
    with pytest.raises(ValueError, match="participants"):
        run_fedgkt(CFG, tiny, 1, participants=np.array([[False, False, False]]))
    with pytest.raises(ValueError, match="participants"):
        run_fedgkt(CFG, tiny, 2, participants=np.ones((1, 3), dtype=bool))
    with pytest.raises(ValueError, match="participants"):
        run_fedgkt(CFG, tiny, 1, participants=np.ones((1, 3), dtype=int))
    with pytest.raises(ValueError, match="temperature"):
        run_fedgkt(CFG, tiny, 1, temperature=0.0)
    with pytest.raises(ValueError, match="temperature"):
        run_fedgkt(CFG, tiny, 1, temperature=float("inf"))
    with pytest.raises(ValueError, match="kd_alpha"):
        run_fedgkt(CFG, tiny, 1, kd_alpha=-1.0)
    with pytest.raises(ValueError, match="rounds"):
        run_fedgkt(CFG, tiny, 0)
    with pytest.raises(ValueError, match="server_epochs"):
        run_fedgkt(CFG, tiny, 1, server_epochs=0)
    with pytest.raises(TypeError, match="cfg"):
        run_fedgkt(CFG.to_dict(), tiny, 1)


# ---- baselines in the time model -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def costs():
    torch.manual_seed(0)
    g = resnet20(1, 28, 10, W)
    c, s = gkt_client_model(1, 28, 10, W), gkt_server_model("resnet20", 10, W)
    return {m: method_costs(m, g, SHAPE, 10, gkt_client=c, gkt_server=s) for m in METHODS}, g, c, s


def _state_bytes(*modules):
    return sum(t.numel() * t.element_size() for m in modules for t in m.state_dict().values())


def test_method_costs(costs):
    mc, g, c, s = costs
    prof = profile_model(g, SHAPE, "adam")
    fb = prof.fwd_flops + prof.bwd_flops
    z = 16 * 28 * 28 * 4                                   # md2's output, float32, per sample
    fedavg = mc["fedavg"]
    assert fedavg.client_flops == fb[-1] and fedavg.server_flops == 0
    assert fedavg.model_bytes == _state_bytes(g) and fedavg.up_bytes == fedavg.down_bytes == 0
    assert not fedavg.serial and mc["fedyogi"].client_flops == fedavg.client_flops
    sf = mc["splitfed"]
    assert sf.client_flops == fb[1] and sf.server_flops == fb[-1] - fb[1]
    assert sf.up_bytes == z + 8 and sf.down_bytes == z and sf.serial
    assert sf.model_bytes == _state_bytes(g[0], g[1])
    gkt = mc["fedgkt"]
    pc, ps = profile_model(c, SHAPE, "adam"), profile_model(s, (16, 28, 28), "adam")
    assert gkt.client_flops == 2 * pc.fwd_flops[-1] + pc.bwd_flops[-1]      # epoch + feature extraction
    assert gkt.server_flops == 2 * ps.fwd_flops[-1] + ps.bwd_flops[-1]      # one epoch + the returned logits
    assert gkt.up_bytes == z + 10 * 4 + 8 and gkt.down_bytes == 10 * 4 and gkt.model_bytes == 0 and gkt.serial
    two = method_costs("fedgkt", g, SHAPE, 10, gkt_client=c, gkt_server=s, server_epochs=2)
    assert two.server_flops == 3 * ps.fwd_flops[-1] + 2 * ps.bwd_flops[-1]
    cut3 = method_costs("splitfed", g, SHAPE, 10, splitfed_cut=3)
    assert cut3.client_flops == fb[2] and cut3.model_bytes == _state_bytes(g[0], g[1], g[2])


def test_method_costs_rejects_bad_input(costs):
    _, g, c, _ = costs
    with pytest.raises(ValueError, match="method"):
        method_costs("dtfl", g, SHAPE, 10)
    with pytest.raises(ValueError, match="gkt_client"):
        method_costs("fedgkt", g, SHAPE, 10)
    with pytest.raises(ValueError, match="gkt_server"):
        method_costs("fedgkt", g, SHAPE, 10, gkt_client=c, gkt_server=gkt_server_model("resnet20", 7, W))
    with pytest.raises(ValueError, match="splitfed_cut"):
        method_costs("splitfed", g, SHAPE, 10, splitfed_cut=8)
    with pytest.raises(ValueError, match="model"):
        method_costs("fedavg", g[:7], SHAPE, 10)
    with pytest.raises(ValueError, match="input_shape"):
        method_costs("fedavg", g, (28, 28), 10)


def test_method_times_by_hand():
    c = MethodCosts("splitfed", client_flops=3e6, server_flops=6e6, up_bytes=1000.0, down_bytes=992.0,
                    model_bytes=5000.0, serial=True)
    t = method_times(c, 2, 30, 100, core_flops=1e9, server_flops=4e9)
    # T_c = 100·3e6 / (2·1e9) = 0.15; T_s = 100·6e6 / 4e9 = 0.15; T_com = 8·(2·5000 + 100·1992) / 30e6 = 0.05579
    assert float(t["T_c"]) == pytest.approx(0.15) and float(t["T_s"]) == pytest.approx(0.15)
    assert float(t["T_com"]) == pytest.approx(8 * (10000 + 199200) / 30e6)
    assert float(t["T"]) == pytest.approx(0.3 + 8 * 209200 / 30e6)
    parallel = MethodCosts("fedgkt", 3e6, 6e6, 1000.0, 992.0, 5000.0, serial=False)    # T_s off the critical path
    t = method_times(parallel, 2, 30, 100, core_flops=1e9, server_flops=4e9)
    assert float(t["T_s"]) == pytest.approx(0.15) and float(t["T"]) == pytest.approx(0.15 + 8 * 209200 / 30e6)
    avg = MethodCosts("fedavg", 3e6, 0.0, 0.0, 0.0, 5000.0, False)
    t = method_times(avg, [2, 0.5], [30, 10], [100, 50], core_flops=1e9)
    np.testing.assert_allclose(t["T_c"], [0.15, 0.3])
    np.testing.assert_allclose(t["T_com"], [8e4 / 30e6, 8e4 / 10e6])
    np.testing.assert_allclose(t["T"], t["T_c"] + t["T_com"])
    np.testing.assert_allclose(t["T_s"], [0, 0])
    with pytest.raises(ValueError, match="cpus"):
        method_times(avg, 0, 30, 100)
    with pytest.raises(ValueError, match="mbps"):
        method_times(avg, 1, float("nan"), 100)
    with pytest.raises(ValueError, match="samples"):
        method_times(avg, 1, 30, 0)
    with pytest.raises(ValueError, match="core_flops"):
        method_times(avg, 1, 30, 10, core_flops=-1.0)
    with pytest.raises(TypeError, match="costs"):
        method_times({}, 1, 30, 10)


def test_method_times_of_measured_costs(costs):
    mc = costs[0]
    for m, c in mc.items():       # cpus 2, 30 Mbps, N_k = 100, the default speeds 30 / 50 GFLOP/s
        t = method_times(c, 2, 30, 100)
        t_c, t_s = 100 * c.client_flops / 60e9, 100 * c.server_flops / 50e9
        t_com = 8 * (2 * c.model_bytes + 100 * (c.up_bytes + c.down_bytes)) / 30e6
        assert float(t["T"]) == pytest.approx(t_c + t_com + (t_s if m in ("splitfed", "fedgkt") else 0), rel=1e-12)
    # FedAvg sends the whole model twice: 2·63,592 bytes at width 0.25
    assert float(method_times(mc["fedavg"], 2, 30, 100)["T_com"]) == pytest.approx(8 * 2 * 63592 / 30e6)


def test_simulate_method(costs):
    c = costs[0]["splitfed"]
    rng = np.random.default_rng(3)
    idx = profile_schedule(4, 3, len(PROFILES), 2, 0.5, rng)
    n = np.array([100, 50, 80, 120])
    part = np.array([[True, True, True, True], [False, True, False, True], [True, False, False, False]])
    out = simulate_method(c, PROFILES, idx, n, np.random.default_rng(5), noise=0.0, participants=part)
    cpus = np.array([p.cpus for p in PROFILES])[idx]
    mbps = np.array([p.mbps for p in PROFILES])[idx]
    t = method_times(c, cpus, mbps, np.broadcast_to(n, (3, 4)))
    np.testing.assert_allclose(out["T"], t["T"], rtol=1e-12)
    np.testing.assert_allclose(out["T_c"], t["T_c"], rtol=1e-12)
    T = np.array(out["T"])
    for r in range(3):
        assert out["round_s"][r] == pytest.approx(T[r][part[r]].max())
        assert part[r, out["straggler"][r]]
        assert out["comp_s"][r] + out["comm_s"][r] == pytest.approx(out["round_s"][r])
    # noise: T_c · exp(σ·ε), ε ~ N(0, 1), K draws per round from the given rng (as fedlib.dtfl.simulate)
    noisy = simulate_method(c, PROFILES, idx, n, np.random.default_rng(5), noise=0.2, participants=part)
    eps = np.random.default_rng(5).standard_normal((3, 4))
    np.testing.assert_allclose(noisy["T_c"], t["T_c"] * np.exp(0.2 * eps), rtol=1e-12)
    np.testing.assert_allclose(noisy["T_com"], t["T_com"], rtol=1e-12)
    np.testing.assert_allclose(noisy["T"], np.array(noisy["T_c"]) + t["T_com"] + t["T_s"], rtol=1e-12)
    with pytest.raises(ValueError, match="participants"):
        simulate_method(c, PROFILES, idx, n, rng, participants=np.zeros((3, 4), dtype=bool))
    with pytest.raises(ValueError, match="samples"):
        simulate_method(c, PROFILES, idx, n[:3], rng)
    with pytest.raises(ValueError, match="noise"):
        simulate_method(c, PROFILES, idx, n, rng, noise=-0.1)
    with pytest.raises(ValueError, match="profile_idx"):
        simulate_method(c, (ResourceProfile(1, 10),), idx, n, rng)
