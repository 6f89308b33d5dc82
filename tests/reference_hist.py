"""HIST's literal reference: one ``nn.Module`` + ``torch.optim.SGD`` per client, one client after another
(Algorithm 1 as written), with its own model class, its own cross-entropy and its own evaluation; the tests
check that the batched engine gives the same global parameters and scores.

Nothing of the engine is used here (no :mod:`fedlib.hist.engine` function, no :class:`fedlib.hist.model.MLP`,
no ``torch.nn.functional`` loss): only the run's inputs are shared with it, i.e. the data, the client partition
and the initial global model of :func:`fedlib.hist.run.prepare`, and the seed streams read through the same
samplers (:func:`fedlib.hist.sampling.draw_groups` for the masks, :func:`fedlib.hist.sampling.sample_batch_indices`
for the minibatches), so that both consume the ``system`` and ``data`` streams identically. The reference runs in
the dtype of the prepared data (float32 as prepared; a test may convert the prepared tensors to float64).
"""
from __future__ import annotations

import time

import torch
from torch import nn

from fedlib.core.seeding import numpy_rng, torch_generator
from fedlib.data import TensorDataset
from fedlib.hist.config import HistConfig, comm_per_round
from fedlib.hist.engine import MLPState
from fedlib.hist.run import Prepared, _new_result, prepare
from fedlib.hist.sampling import draw_groups, masks_from_groups, sample_batch_indices

PARAMS = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")


class ClientMLP(nn.Module):
    """The reference's own two-layer perceptron ``d -> hidden -> C`` with ReLU, written out with explicit
    parameters (``fc1.weight [hidden, d]``, ``fc1.bias [hidden]``, ``fc2.weight [C, hidden]``, ``fc2.bias [C]``;
    the names of :class:`fedlib.hist.model.MLP`'s state dict). Every client holds a full-size one (the masked
    entries of a HIST client are zeros that stay zero: eq. 4 masks their gradients)."""

    def __init__(self, in_features: int, hidden: int, num_classes: int, dtype: torch.dtype, device: torch.device):
        super().__init__()
        self.fc1 = nn.Module()
        self.fc2 = nn.Module()
        for layer, (rows, cols) in ((self.fc1, (hidden, in_features)), (self.fc2, (num_classes, hidden))):
            layer.weight = nn.Parameter(torch.zeros(rows, cols, dtype=dtype, device=device))
            layer.bias = nn.Parameter(torch.zeros(rows, dtype=dtype, device=device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(x @ self.fc1.weight.T + self.fc1.bias)
        return hidden @ self.fc2.weight.T + self.fc2.bias


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy −(1/B) Σ_b log softmax(logits_b)[y_b], written out (log-sum-exp with the row maximum
    subtracted for stability; the maximum is a constant of the gradient)."""
    shift = logits - logits.max(dim=1, keepdim=True).values.detach()
    log_z = torch.log(torch.exp(shift).sum(dim=1))
    picked = shift[torch.arange(len(labels), device=labels.device), labels]
    return (log_z - picked).mean()


@torch.no_grad()
def evaluate(glob: dict, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """Accuracy (fraction of the samples whose largest logit is the label) and mean cross-entropy of the global
    model ``glob`` (a state dict with the keys of :data:`PARAMS`) on ``x [n, d]``, ``y [n]``."""
    model = ClientMLP(x.shape[1], glob["fc1.weight"].shape[0], glob["fc2.weight"].shape[0],
                      glob["fc1.weight"].dtype, x.device)
    model.load_state_dict(glob)
    logits = model(x)
    correct = int((logits.argmax(dim=1) == y).sum())
    return correct / len(y), float(cross_entropy(logits, y))


def sq_norm(glob: dict) -> float:
    """‖x̄‖² over every parameter (HIST eq. 13's last term), summed in float64."""
    return float(sum((v.double() ** 2).sum() for v in glob.values()))


def run_reference(cfg: HistConfig, dataset: TensorDataset | None = None, device: str = "cpu") -> dict:
    """Literal per-client implementation of Algorithm 1 (for tests and the benchmark's baseline).

    Same record as :func:`fedlib.hist.run_hist` (the scores from this module's :func:`evaluate`); see
    :func:`iterate_reference`. Both must agree to float tolerance.
    """
    t0 = time.perf_counter()
    p = prepare(cfg, dataset, device)
    res = _new_result(p)
    comm = comm_per_round(cfg.method, cfg.num_cells, cfg.num_clients, cfg.H, cfg.E)
    for m, glob, train_loss in iterate_reference(p, as_dict=True):
        acc, loss = evaluate(glob, p.x_test, p.y_test)
        res["round"].append(m)
        res["step"].append(m * cfg.E)
        res["test_acc"].append(acc)
        res["test_loss"].append(loss)
        res["train_loss"].append(train_loss)
        res["comm_client_L0"].append(m * comm["client"])
        res["comm_edge_server_L0"].append(m * comm["edge_server"])
        res["comm_cloud_L0"].append(m * comm["cloud"])
        res["global_sq_norm"].append(sq_norm(glob))
    res["elapsed_s"] = time.perf_counter() - t0
    return res


def iterate_reference(p: "Prepared", as_dict: bool = False):
    """Algorithm 1 written literally, one client at a time; yields like :func:`fedlib.hist.iterate_hist`:
    ``(m, x̄^{mE}, train_loss)`` for m = 0..R (x̄ an :class:`MLPState`, or the state dict with ``as_dict``).

    Each client is a full-size :class:`ClientMLP` with its own ``torch.optim.SGD``; eq. (2)/(7) sets it to
    p_j ⊙ x̄, eq. (4) multiplies the autograd gradient of :func:`cross_entropy` by the mask before
    ``SGD.step()`` (HIST only; HFedAvg has no masks), eq. (5) averages state dicts in a Python loop, eq. (6)
    sums p_j ⊙ x̄_j (HIST) or averages (HFedAvg); b2 (no mask) is averaged over the cells, or frozen.
    """
    from fedlib.core.validate import check_bool, check_instance
    check_instance("p", p, Prepared, "a Prepared run (fedlib.hist.prepare(cfg))")
    check_bool("as_dict", as_dict)
    cfg = p.cfg
    rng_system = numpy_rng(cfg.seed, "system")
    gen = torch_generator(cfg.seed, "data")
    dtype, dev = p.init.w1.dtype, p.device
    d, c = p.x_train.shape[1], p.init.w2.shape[0]
    glob = dict(zip(PARAMS, (t.clone() for t in (p.init.w1, p.init.b1, p.init.w2, p.init.b2))))

    def out(sd):
        return sd if as_dict else MLPState(*(sd[k] for k in PARAMS))

    yield 0, out(glob), None
    clients = [ClientMLP(d, cfg.hidden, c, dtype, dev) for _ in range(cfg.num_clients)]
    opts = [torch.optim.SGD(model.parameters(), lr=cfg.lr) for model in clients]
    masked = cfg.method == "hist"
    n = cfg.clients_per_cell
    for m in range(1, cfg.global_rounds + 1):
        masks = torch.from_numpy(masks_from_groups(draw_groups(cfg.method, cfg.hidden, cfg.num_cells, rng_system),
                                                   cfg.hidden)).to(dev, dtype)
        # p_j per parameter: a neuron's mask covers its row of W1, its entry of b1 and its column of W2
        pmask = [{"fc1.weight": mk[:, None].expand(cfg.hidden, d), "fc1.bias": mk,
                  "fc2.weight": mk[None, :].expand(c, cfg.hidden), "fc2.bias": torch.ones(c, dtype=dtype, device=dev)}
                 for mk in masks]
        for u, model in enumerate(clients):                                        # eqs. (2) / (7)
            model.load_state_dict({k: v * pmask[u // n][k] for k, v in glob.items()})
        loss_sum = 0.0
        for e in range(1, cfg.E + 1):
            if (e - 1) % cfg.H == 0:
                interval = sample_batch_indices(p.client_index, p.sizes, cfg.batch_size, gen, steps=cfg.H)
            idx = interval[(e - 1) % cfg.H]
            for u, (model, opt) in enumerate(zip(clients, opts)):                   # eq. (4)
                opt.zero_grad()
                loss = cross_entropy(model(p.x_train[idx[u]]), p.y_train[idx[u]])
                loss.backward()
                loss_sum += float(loss.detach())
                if masked:
                    for name, prm in model.named_parameters():
                        prm.grad.mul_(pmask[u // n][name])
                if cfg.output_bias == "frozen":
                    model.fc2.bias.grad.zero_()
                opt.step()
            if e % cfg.H == 0:                                                      # eq. (5)
                for j in range(cfg.num_cells):
                    cell = clients[j * n:(j + 1) * n]
                    avg = {k: sum(mm.state_dict()[k] for mm in cell) / n for k in PARAMS}
                    for mm in cell:
                        mm.load_state_dict(avg)
        edge = [clients[j * n].state_dict() for j in range(cfg.num_cells)]
        if masked:                                                                  # eq. (6)
            glob = {k: sum(pmask[j][k] * edge[j][k] for j in range(cfg.num_cells)) for k in PARAMS}
            glob["fc2.bias"] = sum(sd["fc2.bias"] for sd in edge) / cfg.num_cells
        else:
            glob = {k: sum(sd[k] for sd in edge) / cfg.num_cells for k in PARAMS}
        glob = {k: v.detach().clone() for k, v in glob.items()}
        yield m, out(glob), loss_sum / (cfg.E * cfg.num_clients)
