"""FedGKT rounds worked by hand: fedlib.dtfl.run_fedgkt against a numpy loop written here from He et al.'s
equations, on tiny linear models (2 clients, a handful of samples, float64, no BatchNorm), so that every number
of the round can be followed by hand.

The tiny models replace ``fedlib.dtfl.fedgkt.gkt_models`` (the only factory run_fedgkt builds its models with):
client f_k = [stem: x -> W1·x + b1, blocks: tanh, head: h -> W2·h + b2], server f_s: h -> W3·h + b3. So
H_k = tanh(W1·x + b1) are the features a client sends, z_c = W2·H + b2 its logits, z_s = W3·H + b3 the server's.

The loop below uses no fedlib code for the algorithm (fedlib only partitions the data and seeds the shuffles):
- client step (He et al.'s client loss): mean CE(z_c, y) + α·KD(z_c ← z_s), KD(s ← t) = T²·mean_b Σ_c p_t
  (log p_t − log p_s), p = softmax(logits / T); CE alone until the client has received server logits;
- server step (the server loss): mean CE(z_s, y) + α·KD(z_s ← z_c) over the features of the participants, client
  after client, ``server_epochs`` epochs;
- returned teacher: z_s = f_s(H_k) after the server's epochs, per sample (aligned with the client's samples);
- evaluation: the mean over the round's participants of the composite server(stem_k, blocks_k) accuracy, test
  sample j scored by participant j mod n (our documented estimate of the clients' mean composite accuracy);
- Adam written out (torch's update: θ -= lr·m̂ / (√v̂ + ε)), gradients derived by hand:
  ∂[CE]/∂z = (softmax(z) − onehot(y)) / B, ∂[T²·KD(z ← t)]/∂z = T·(softmax(z / T) − softmax(t / T)) / B.

The strict-xfail tests at the end state where our FedGKT differs from the authors' code (FedML, fedml_api/
distributed/fedgkt and fedml_api/model/cv/resnet56_gkt, commit c4297819e): each passes once that behaviour is
adopted (a change of behaviour: after a store-key change, so that only FedGKT's runs retrain).
"""
import numpy as np
import pytest
import torch
from torch import nn

from fedlib.core.seeding import torch_generator
from fedlib.data import TensorDataset
from fedlib.dtfl import DtflConfig, client_data, run_fedgkt
from fedlib.dtfl import fedgkt as gkt

pytestmark = pytest.mark.usefixtures("one_thread", "float64")

C = 3                                           # classes
# initial weights (every client starts from one client model), chosen by hand
W1 = [[0.5, -0.4], [0.3, 0.8]]
B1 = [0.1, -0.2]
W2 = [[0.7, -0.5], [-0.3, 0.6], [0.2, 0.1]]
B2 = [0.05, -0.1, 0.0]
W3 = [[-0.6, 0.4], [0.5, 0.3], [0.1, -0.7]]
B3 = [0.0, 0.1, -0.05]
# 10 training samples (x in R², labels 0..2), 5 test samples
X_TRAIN = [[0.9, -1.2], [-0.3, 0.4], [1.5, 0.2], [-1.1, -0.7], [0.2, 1.3],
           [-0.8, 0.9], [0.6, -0.1], [-1.4, 0.3], [1.0, 1.1], [0.1, -0.9]]
Y_TRAIN = [0, 1, 2, 0, 1, 2, 0, 1, 2, 1]
X_TEST = [[0.4, -0.6], [-0.9, 0.5], [1.2, 0.8], [-0.2, -1.0], [0.7, 0.3]]
Y_TEST = [0, 1, 2, 0, 2]


def _linear(w, b):
    lin = nn.Linear(len(w[0]), len(w))
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(w))
        lin.bias.copy_(torch.tensor(b))
    return lin


def tiny_models(cfg, in_channels, image_size, num_classes):
    """Stands in for fedlib.dtfl.fedgkt.gkt_models: (client [stem, blocks, head], server)."""
    client = nn.Sequential(nn.Sequential(nn.Flatten(), _linear(W1, B1)), nn.Tanh(), _linear(W2, B2))
    return client, nn.Sequential(_linear(W3, B3))


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setattr(gkt, "gkt_models", tiny_models)
    x = torch.tensor(X_TRAIN).reshape(-1, 1, 1, 2)
    xt = torch.tensor(X_TEST).reshape(-1, 1, 1, 2)
    return TensorDataset("fashion-mnist", x, torch.tensor(Y_TRAIN), xt, torch.tensor(Y_TEST), ("a", "b", "c"),
                         "hand-made")


def cfg_of(batch_size, seed=3, **kw):
    return DtflConfig(model="resnet20", width=0.25, num_clients=2, batch_size=batch_size, lr=0.05, eps=0.05,
                      channels_last=False, seed=seed, **kw)


# ---- the literal loop ---------------------------------------------------------------------------------------------

def softmax(z):
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def onehot(y):
    return np.eye(C)[y]


def ce(z, y):
    return -np.log(softmax(z)[np.arange(len(y)), y])


def kd(z, t, temp):
    """T²·KL(softmax(t / T) ‖ softmax(z / T)), mean over the batch."""
    pt = softmax(t / temp)
    return temp * temp * np.mean(np.sum(pt * (np.log(pt) - np.log(softmax(z / temp))), 1))


def dz(z, y, teacher, temp, alpha):
    """∂/∂z of mean CE(z, y) + α·T²·KL(softmax(teacher / T) ‖ softmax(z / T)) (teacher None: CE alone)."""
    g = softmax(z) - onehot(y)
    if teacher is not None:
        g = g + alpha * temp * (softmax(z / temp) - softmax(teacher / temp))
    return g / len(y)


class Adam:
    """torch.optim.Adam's update written out (β = (0.9, 0.999), no weight decay)."""

    def __init__(self, params, lr, eps):
        self.p, self.lr, self.eps, self.t = params, lr, eps, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, grads):
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            m_hat, v_hat = self.m[k] / (1 - 0.9 ** self.t), self.v[k] / (1 - 0.999 ** self.t)
            self.p[k] = self.p[k] - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def feats(c, x):
    return np.tanh(x @ c["W1"].T + c["b1"])


def literal(cfg, rounds, participants=None, temp=3.0, alpha=1.0, server_epochs=1, orders="drawn"):
    """``rounds`` FedGKT rounds on the tiny models; ``orders``: "drawn" replays run_fedgkt's shuffles (the data
    stream of cfg.seed: every client, every client pass and every server epoch), "identity" keeps partition
    order (the same sums when a client's data fit in one batch)."""
    part = np.ones((rounds, 2), bool) if participants is None else np.asarray(participants)
    x, y = np.array(X_TRAIN), np.array(Y_TRAIN)
    xt, yt = np.array(X_TEST), np.array(Y_TEST)
    idx = client_data(cfg, y)
    xs, ys = [x[i] for i in idx], [y[i] for i in idx]
    sizes, b = [len(v) for v in ys], cfg.batch_size
    init = {"W1": np.array(W1), "b1": np.array(B1), "W2": np.array(W2), "b2": np.array(B2)}
    clients = [{k: v.copy() for k, v in init.items()} for _ in range(2)]
    server = {"W3": np.array(W3), "b3": np.array(B3)}
    opts = [Adam(c, cfg.lr, cfg.eps) for c in clients]
    opt_s = Adam(server, cfg.lr, cfg.eps)
    teacher = [None, None]
    gen = torch_generator(cfg.seed, "data")

    def draw():
        perms = [torch.randperm(n, generator=gen).numpy() for n in sizes]
        return perms if orders == "drawn" else [np.arange(n) for n in sizes]

    def evaluate(evaluated):
        correct = loss = 0.0
        for j in range(len(yt)):
            c = clients[evaluated[j % len(evaluated)]]
            z = feats(c, xt[j:j + 1]) @ server["W3"].T + server["b3"]
            correct += float(z.argmax() == yt[j])
            loss += float(ce(z, yt[j:j + 1])[0])
        return correct / len(yt), loss / len(yt)

    acc, tl = evaluate([0, 1])
    out = {"test_acc": [acc], "test_loss": [tl], "train_loss": [None]}
    for here in part:
        active = [k for k in range(2) if here[k] and sizes[k]]
        perm = draw()
        h, zc = {}, {}
        for k in active:                                        # client: one local epoch
            c = clients[k]
            for s in range(0, sizes[k], b):
                i = perm[k][s:s + b]
                hb = feats(c, xs[k][i])
                z = hb @ c["W2"].T + c["b2"]
                g = dz(z, ys[k][i], None if teacher[k] is None else teacher[k][i], temp, alpha)
                ga = (g @ c["W2"]) * (1 - hb * hb)
                opts[k].step({"W2": g.T @ hb, "b2": g.sum(0), "W1": ga.T @ xs[k][i], "b1": ga.sum(0)})
            h[k] = feats(c, xs[k])                              # H_k and z_c of all its samples
            zc[k] = h[k] @ c["W2"].T + c["b2"]
        total = count = 0.0
        for _ in range(server_epochs):                          # server: participant after participant
            perm = draw()
            for k in active:
                for s in range(0, sizes[k], b):
                    i = perm[k][s:s + b]
                    z = h[k][i] @ server["W3"].T + server["b3"]
                    g = dz(z, ys[k][i], zc[k][i], temp, alpha)
                    opt_s.step({"W3": g.T @ h[k][i], "b3": g.sum(0)})
                    total, count = total + ce(z, ys[k][i]).sum(), count + len(i)
        for k in active:                                        # z_s back to the clients
            teacher[k] = h[k] @ server["W3"].T + server["b3"]
        acc, tl = evaluate([k for k in range(2) if here[k]])
        out["test_acc"].append(acc)
        out["test_loss"].append(tl)
        out["train_loss"].append(total / count if count else None)
    out["clients"], out["server"], out["sizes"] = clients, server, sizes
    return out


def assert_matches(rec, lit):
    np.testing.assert_allclose(rec["test_acc"], lit["test_acc"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(rec["test_loss"], lit["test_loss"], rtol=0, atol=1e-10)
    assert rec["train_loss"][0] is None
    np.testing.assert_allclose(rec["train_loss"][1:], lit["train_loss"][1:], rtol=0, atol=1e-10)
    for k, (mine, theirs) in enumerate(zip(rec["client_models"], lit["clients"])):
        for name, p in (("W1", mine[0][1].weight), ("b1", mine[0][1].bias), ("W2", mine[2].weight),
                        ("b2", mine[2].bias)):
            np.testing.assert_allclose(p.detach().numpy(), theirs[name], rtol=0, atol=1e-10,
                                       err_msg=f"client {k} {name}")
    s = rec["server_model"][0]
    np.testing.assert_allclose(s.weight.detach().numpy(), lit["server"]["W3"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(s.bias.detach().numpy(), lit["server"]["b3"], rtol=0, atol=1e-10)


# ---- the rounds -----------------------------------------------------------------------------------------------------

def test_hand_values_of_the_literal_loop():
    """The loop's pieces against numbers worked on paper (so the loop is not checked only against itself)."""
    # round 0: one composite server(tanh(W1·x + b1)) for every client; test sample 0, x = (0.4, -0.6), y = 0:
    # a = W1·x + b1 = (0.2 + 0.24 + 0.1, 0.12 - 0.48 - 0.2) = (0.54, -0.56)
    h = np.tanh([0.54, -0.56])
    z = np.array([-0.6 * h[0] + 0.4 * h[1], 0.5 * h[0] + 0.3 * h[1] + 0.1, 0.1 * h[0] - 0.7 * h[1] - 0.05])
    c0 = {"W1": np.array(W1), "b1": np.array(B1)}
    np.testing.assert_allclose(feats(c0, np.array([[0.4, -0.6]]))[0], h, rtol=1e-15)
    assert float(ce(z[None], np.array([0]))[0]) == pytest.approx(np.log(np.exp(z).sum()) - z[0], rel=1e-14)
    # KD at T = 2 of two 3-class logit rows, and its gradient against central differences
    s, t = np.array([[1.0, 0.0, -1.0]]), np.array([[0.0, 2.0, 0.0]])
    pt, ps = np.exp(t / 2) / np.exp(t / 2).sum(), np.exp(s / 2) / np.exp(s / 2).sum()
    assert kd(s, t, 2.0) == pytest.approx(4 * float((pt * np.log(pt / ps)).sum()), rel=1e-13)
    g = dz(s, np.array([2]), t, 2.0, 0.7)
    for j in range(C):
        e = np.eye(C)[j][None] * 1e-6
        num = (ce(s + e, np.array([2]))[0] + 0.7 * kd(s + e, t, 2.0)
               - ce(s - e, np.array([2]))[0] - 0.7 * kd(s - e, t, 2.0)) / 2e-6
        assert g[0, j] == pytest.approx(num, rel=1e-7)
    # Adam's first step is lr·g / (|g| + ε) (m̂ = g, v̂ = g²)
    p = {"w": np.array([1.0, -2.0])}
    Adam(p, 0.05, 0.05).step({"w": np.array([0.2, -0.01])})
    np.testing.assert_allclose(p["w"], [1.0 - 0.05 * 0.2 / 0.25, -2.0 + 0.05 * 0.01 / 0.06], rtol=1e-14)


def test_one_round_one_batch_per_client(tiny):
    """Round 1 with each client's data in one batch (the shuffle cannot matter): clients on CE alone (no server
    logits yet), the server on CE + KD(client logits) at T = 3, α = 1; evaluation of both composites."""
    cfg = cfg_of(batch_size=8)
    rec = run_fedgkt(cfg, tiny, 1, keep_models=True)
    lit = literal(cfg, 1, orders="identity")
    assert max(lit["sizes"]) <= 8 and min(lit["sizes"]) >= 2
    assert rec["round"] == [0, 1]
    assert_matches(rec, lit)
    assert lit["test_loss"][1] != pytest.approx(lit["test_loss"][0], abs=1e-3)       # the round did something


def test_three_rounds_client_kd_sampling_and_server_epochs(tiny):
    """Batches of 2 (several steps, drawn orders), T = 2, α = 0.7, two server epochs; client 1 sits out round 2
    (its teacher from round 1 is kept, its model is not trained), round 3 both train with the server's logits.
    Evaluations: both composites at rounds 1 and 3, client 0's alone at round 2."""
    cfg = cfg_of(batch_size=2)
    part = np.array([[True, True], [True, False], [True, True]])
    kw = dict(temperature=2.0, kd_alpha=0.7, server_epochs=2)
    rec = run_fedgkt(cfg, tiny, 3, participants=part, keep_models=True, **kw)
    lit = literal(cfg, 3, part, temp=2.0, alpha=0.7, server_epochs=2)
    assert_matches(rec, lit)


@pytest.mark.parametrize("change", [dict(alpha=0.0), dict(temp=1.0), dict(alpha=1.4), dict(server_epochs=1)])
def test_the_hand_worked_rounds_can_tell(change):
    """Guards the test's power: the KD weight, the temperature and the server epochs each move the numbers of the
    three-round case far beyond its tolerance (so a KD term dropped, or T or α ignored, cannot pass)."""
    cfg = cfg_of(batch_size=2)
    part = np.array([[True, True], [True, False], [True, True]])
    base = dict(temp=2.0, alpha=0.7, server_epochs=2)
    a, b = literal(cfg, 3, part, **base), literal(cfg, 3, part, **(base | change))
    assert abs(a["test_loss"][-1] - b["test_loss"][-1]) > 1e-4
    assert np.abs(a["clients"][0]["W1"] - b["clients"][0]["W1"]).max() > 1e-4


# ---- where our FedGKT differs from the authors' code (strict xfail: each passes once adopted) -------------------------

@pytest.mark.xfail(strict=True, reason="features: FedML's client (resnet_client.py ResNet.forward) sends the stem's "
                   "output (conv1-bn1-relu, 16 channels) and its two bottleneck blocks feed only the client's own "
                   "classifier; ours sends the output of the stem and both blocks (64·w channels)")
def test_client_sends_its_stem_output_as_in_fedml():
    client, server = gkt.gkt_models(DtflConfig(width=0.25), 1, 28, 10)
    x = torch.randn(2, 1, 28, 28)
    assert server[0][0].conv1.in_channels == client[0][0].out_channels
    assert server(client[0](x)).shape == (2, 10)


@pytest.mark.xfail(strict=True, reason="server epochs: the authors' FedGKT runs train the server model 20 epochs "
                   "per round over the received features (FedML README: run_FedGKT.sh ... 200 1 20 Adam 0.001; "
                   "epochs_server default 3); ours 1 (fedlib.lab.dtfl.compare.GKT_SERVER_EPOCHS, a stated choice)")
def test_server_epochs_per_round_as_in_fedml():
    from fedlib.lab.dtfl.compare import GKT_SERVER_EPOCHS
    assert GKT_SERVER_EPOCHS == 20


@pytest.mark.xfail(strict=True, reason="evaluation data: FedML (GKTServerTrainer.eval_large_model_on_the_server) "
                   "scores every client's composite on the whole test set and averages; ours scores composite k on "
                   "its 1/n round-robin share (same quantity in expectation, another estimate)")
def test_each_composite_scored_on_the_whole_test_set(tiny):
    cfg = cfg_of(batch_size=2)
    rec = run_fedgkt(cfg, tiny, 1, keep_models=True)
    xt, yt = torch.tensor(X_TEST).reshape(-1, 1, 1, 2), torch.tensor(Y_TEST)
    losses = []
    with torch.no_grad():
        for c in rec["client_models"]:
            out = rec["server_model"](c[:2](xt))
            losses.append(float(nn.functional.cross_entropy(out, yt)))
    assert rec["test_loss"][-1] == pytest.approx(np.mean(losses), abs=1e-10)
