"""Literal DTFL (Algorithm 1), the check of :func:`fedlib.dtfl.run_dtfl`: per client one ``nn.Module`` for the
client-side model, one for the auxiliary head and one for its server-side copy, each pair with its own
``torch.optim.Adam``, clients run one after another, batch after batch. Same data order, same choices (module
docstring of :mod:`fedlib.dtfl.training`); the tests check that both give the same numbers. Also the literal
end-to-end baselines (FedAvg / SplitFed / FedYogi, :func:`run_literal_baseline`) and FedGKT (:func:`gkt_round`,
:func:`run_literal_gkt`, the check of :func:`fedlib.dtfl.run_fedgkt`). Every loop has its own modules,
``torch.optim`` objects and evaluation (:func:`accuracy`): no engine function on these paths.
"""
from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from fedlib.core.seeding import resolve_device, torch_generator
from fedlib.data import TensorDataset
from fedlib.split import build_model
from fedlib.split.config import SplitConfig
from tests.reference_split import average_state_dicts
from fedlib.dtfl.fedgkt import gkt_models
from fedlib.dtfl.tiers import aux_head_factory
from fedlib.dtfl.training import DtflConfig, check_cuts, check_participants, client_data, subset


@torch.no_grad()
def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """Test accuracy (fraction) and mean cross-entropy of ``model`` in eval mode on ``x [n, C, H, W]``, ``y [n]``,
    one forward over all of ``x``."""
    out = model.eval()(x)
    return int((out.argmax(1) == y).sum()) / len(y), float(F.cross_entropy(out, y, reduction="sum")) / len(y)


class _Client:
    """Client k in one tier: client-side modules + auxiliary head (one Adam) and its server copy (one Adam)."""

    def __init__(self, units: list[nn.Module], cut: int, head: nn.Module, lr: float, eps: float):
        self.cut = cut
        self.client = nn.Sequential(*copy.deepcopy(units[:cut])).train()
        self.server = nn.Sequential(*copy.deepcopy(units[cut:])).train()
        self.head = copy.deepcopy(head).train()
        self.opt_c = torch.optim.Adam(list(self.client.parameters()) + list(self.head.parameters()), lr=lr, eps=eps)
        self.opt_s = torch.optim.Adam(self.server.parameters(), lr=lr, eps=eps)

    def step(self, x: torch.Tensor, y: torch.Tensor) -> None:
        z = self.client(x)                                          # ClientUpdate: forward, send (z, y)
        self.opt_c.zero_grad()
        F.cross_entropy(self.head(z), y).backward()                 # local loss, no gradient comes back
        self.opt_c.step()
        self.opt_s.zero_grad()
        F.cross_entropy(self.server(z.detach()), y).backward()      # server copy trained on (z, y)
        self.opt_s.step()

    def units(self) -> list[nn.Module]:
        return list(self.client) + list(self.server)


def run_literal(cfg: DtflConfig, data: TensorDataset, cuts, participants=None, device: str = "cpu") -> dict:
    """Literal DTFL (Algorithm 1, eq. 1) for ``cuts`` (``[R, K]`` modules on each client per round).

    Per round: every client draws its epoch order (``data`` stream, participants or not); clients whose tier
    changed restart from the global model with a new Adam and their tier's head; the round's participants
    (``participants[r]``, ``[R, K]`` bools, None = all; Table 4) train one local epoch each, client after client;
    then w = Σ_{k in S_r} N_k / Σ_{k in S_r} N_k · w_k over the participants S_r, loaded into every client; the
    heads of a tier become the same weighted average over its participants (unchanged when none took part).

    Returns:
        ``{"test_acc": [R + 1], "test_loss": [R + 1], "test_acc_aux": [R + 1], "model": global nn.Sequential}``
        (own :func:`accuracy`; ``test_acc_aux``: the global md1..md7 with the top tier's head, None while no
        client has held cut 7).

    Requires that every tier a client moves to was held by some client in the round before (a never-used tier
    would need the engine's fresh-head seeding, which this reference does not repeat).

    ``device``: where the modules and data live (``"cpu"``, ``"cuda"``, ``"auto"``; the benchmark
    ``python -m fedlib.lab.bench dtfl`` times it on a GPU); models are built and heads seeded on the CPU first, so the
    initial weights do not depend on the device.
    """
    from fedlib.core.validate import check_instance
    check_instance("cfg", cfg, DtflConfig)
    check_instance("data", data, TensorDataset, "a fedlib.data.TensorDataset")
    cuts = check_cuts(cuts, cfg.num_clients)
    part = check_participants(participants, len(cuts), cfg.num_clients)
    dev = resolve_device(device)
    ds = subset(data, cfg.train_subset, cfg.test_subset)
    parts = client_data(cfg, ds.y_train.numpy())
    sizes = np.array([len(p) for p in parts], dtype=float)
    parts = [torch.from_numpy(np.asarray(p, dtype=np.int64)) for p in parts]
    shape, k, b = tuple(ds.x_train.shape[1:]), cfg.num_clients, cfg.batch_size
    x_train, y_train, x_test, y_test = (t.to(dev) for t in (ds.x_train, ds.y_train, ds.x_test, ds.y_test))
    scfg = SplitConfig(model=cfg.model, width=cfg.width, num_devices=k, batch_sizes=(b,) * k,
                       cuts=tuple(int(c) for c in cuts[0]), interval=1, lr=cfg.lr, optimizer="adam", seed=cfg.seed)
    glob = list(build_model(scfg, shape[0], shape[1], ds.num_classes))
    make_head = aux_head_factory(ds.num_classes)
    bank = {}
    with torch.no_grad():                                            # the engine's initial heads (model stream)
        h = torch.zeros(2, *shape)
        for c, unit in enumerate(glob, start=1):
            h = unit.eval()(h)
            if c in set(int(v) for v in cuts[0]):
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(torch_generator(cfg.seed, "model").initial_seed() + c)
                    bank[c] = make_head(c, tuple(h.shape[1:]))
    glob = [unit.to(dev) for unit in glob]
    bank = {c: head.to(dev) for c, head in bank.items()}
    clients = [_Client(glob, int(c), bank[int(c)], cfg.lr, cfg.eps) for c in cuts[0]]
    gen = torch_generator(cfg.seed, "data")
    model = nn.Sequential(*copy.deepcopy(glob))
    evals = [accuracy(model, x_test, y_test)]
    aux = [None]                    # md1..md7 + the top tier's head (cut 7) in place of md8, after each round
    for r, (round_cuts, here) in enumerate(zip(cuts, part)):
        for i, c in enumerate(int(v) for v in round_cuts):
            if r and c != clients[i].cut:                            # tier change: global model, tier's head
                clients[i] = _Client(list(model), c, bank[c], cfg.lr, cfg.eps)
        order = [p[torch.randperm(len(p), generator=gen)] for p in parts]
        took = [i for i in range(k) if here[i]]                      # S_r
        for i in took:                                               # participants one after another
            for s in range(0, len(order[i]), b):
                idx = order[i][s:s + b].to(dev)
                clients[i].step(x_train[idx], y_train[idx])
        w = sizes[took] / sizes[took].sum()
        for j in range(len(glob)):                                   # eq. 1 over S_r: w = Σ_k N_k/N_S · w_k
            avg = average_state_dicts([clients[i].units()[j].state_dict() for i in took], w)
            for cl in clients:
                cl.units()[j].load_state_dict(avg)
            model[j].load_state_dict(avg)
        for c in set(cl.cut for cl in clients):                      # auxiliary heads within a tier
            same = [i for i, cl in enumerate(clients) if cl.cut == c]
            trained = [i for i in same if here[i]]
            if trained:
                avg = average_state_dicts([clients[i].head.state_dict() for i in trained], sizes[trained] / sizes[trained].sum())
                for i in same:
                    clients[i].head.load_state_dict(avg)
            bank[c] = copy.deepcopy(clients[same[0]].head)
        evals.append(accuracy(model, x_test, y_test))
        aux.append(accuracy(nn.Sequential(*model[:7], bank[7]), x_test, y_test)[0] if 7 in bank else None)
    return {"test_acc": [a for a, _ in evals], "test_loss": [t for _, t in evals], "test_acc_aux": aux,
            "model": model.eval()}


class _E2E:
    """Client k of an end-to-end baseline: client part md1..md_cut and its server copy (cut 8: no server part),
    one ``torch.optim.Adam`` each; the server returns the gradient of the smashed data every batch."""

    def __init__(self, units: list[nn.Module], cut: int, lr: float, eps: float):
        self.client = nn.Sequential(*copy.deepcopy(units[:cut])).train()
        self.server = nn.Sequential(*copy.deepcopy(units[cut:])).train()
        self.opt_c = torch.optim.Adam(self.client.parameters(), lr=lr, eps=eps)
        self.opt_s = torch.optim.Adam(self.server.parameters(), lr=lr, eps=eps) if len(self.server) else None

    def step(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.opt_c.zero_grad()
        z = self.client(x)
        if self.opt_s is None:                                      # FedAvg / FedYogi: whole model on the client
            F.cross_entropy(z, y).backward()
        else:                                                       # SplitFed: send z, get dL/dz back
            z_srv = z.detach().requires_grad_(True)
            self.opt_s.zero_grad()
            F.cross_entropy(self.server(z_srv), y).backward()
            self.opt_s.step()
            z.backward(z_srv.grad)
        self.opt_c.step()

    def units(self) -> list[nn.Module]:
        return list(self.client) + list(self.server)


def run_literal_baseline(cfg: DtflConfig, data: TensorDataset, cut: int, rounds: int, participants=None,
                         yogi=None, device: str = "cpu") -> dict:
    """Literal FedAvg (``cut`` 8), SplitFed-V1 (``cut`` 2) or, with ``yogi`` (a :class:`fedlib.dtfl.YogiConfig`),
    FedYogi: per client ``nn.Module`` s and ``torch.optim.Adam`` s, clients one after another, then the weighted
    average over the round's participants (and Yogi's step written out per parameter). The check of
    :func:`fedlib.dtfl.run_baseline`. Returns ``{"test_acc": [R + 1], "model"}``. ``device`` as in
    :func:`run_literal`."""
    from fedlib.core.validate import check_instance, check_int
    check_instance("cfg", cfg, DtflConfig)
    check_instance("data", data, TensorDataset, "a fedlib.data.TensorDataset")
    check_int("cut", cut, 1, 8, extra=" (modules on the client: 8 FedAvg, 2 SplitFed)")
    check_int("rounds", rounds, 1)
    dev = resolve_device(device)
    ds = subset(data, cfg.train_subset, cfg.test_subset)
    parts = client_data(cfg, ds.y_train.numpy())
    sizes = np.array([len(p) for p in parts], dtype=float)
    parts = [torch.from_numpy(np.asarray(p, dtype=np.int64)) for p in parts]
    shape, k, b = tuple(ds.x_train.shape[1:]), cfg.num_clients, cfg.batch_size
    x_train, y_train, x_test, y_test = (t.to(dev) for t in (ds.x_train, ds.y_train, ds.x_test, ds.y_test))
    part = check_participants(participants, rounds, k)
    scfg = SplitConfig(model=cfg.model, width=cfg.width, num_devices=k, batch_sizes=(b,) * k, cuts=(cut,) * k,
                       interval=1, lr=cfg.lr, optimizer="adam", seed=cfg.seed)
    model = build_model(scfg, shape[0], shape[1], ds.num_classes).to(dev)
    clients = [_E2E(list(model), cut, cfg.lr, cfg.eps) for _ in range(k)]
    gen = torch_generator(cfg.seed, "data")
    moments = {}
    accs = [accuracy(model, x_test, y_test)[0]]
    for here in part:
        order = [p[torch.randperm(len(p), generator=gen)] for p in parts]
        for i in np.flatnonzero(here):
            for s in range(0, len(order[i]), b):
                idx = order[i][s:s + b].to(dev)
                clients[i].step(x_train[idx], y_train[idx])
        w = np.where(here, sizes, 0.0) / sizes[here].sum()
        for j in range(len(model)):
            avg = average_state_dicts([cl.units()[j].state_dict() for cl in clients], w)
            if yogi is not None:
                for name, _ in model[j].named_parameters():
                    x, d = model[j].state_dict()[name], avg[name] - model[j].state_dict()[name]
                    m, v = moments.get((j, name), (torch.zeros_like(x), torch.full_like(x, yogi.tau ** 2)))
                    m = yogi.beta1 * m + (1 - yogi.beta1) * d
                    v = v - (1 - yogi.beta2) * d ** 2 * torch.sign(v - d ** 2)
                    moments[(j, name)] = (m, v)
                    avg[name] = x + yogi.eta * m / (torch.sqrt(v) + yogi.tau)
            model[j].load_state_dict(avg)
            for cl in clients:
                cl.units()[j].load_state_dict(avg)
        accs.append(accuracy(model, x_test, y_test)[0])
    return {"test_acc": accs, "model": model.eval()}


# ---- FedGKT (He et al. 2020), the check of fedlib.dtfl.run_fedgkt ------------------------------------------------

def _kd(student: torch.Tensor, teacher: torch.Tensor, t: float) -> torch.Tensor:
    """He et al.'s KL_Loss written out: T² · mean_b Σ_c p_t (log p_t − log p_s), p = softmax(logits / T);
    student / teacher ``[B, classes]``; no gradient into the teacher."""
    log_t = (teacher.detach() / t).log_softmax(1)
    return t * t * (log_t.exp() * (log_t - (student / t).log_softmax(1))).sum(1).mean()


def gkt_round(clients: list, opts: list, server: nn.Module, opt_s, teacher: list, xs: list, ys: list, here,
              gen: torch.Generator, b: int, temperature: float, alpha: float, server_epochs: int) -> float:
    """One literal FedGKT round (He et al. 2020, Algorithm 1; DTFL Sec. 4.1's baseline), in place.

    Clients (``clients[k]``: ``nn.Sequential`` [stem, blocks, classifier], ``opts[k]`` its ``torch.optim.Adam``):
    every client draws an order of its ``N_k`` samples (``gen``, participants or not); each participant with
    data trains one epoch of ``B = b`` batches on CE(f_k(x), y) + α·KD(f_k(x), z_s) (z_s = ``teacher[k]`` rows
    of the batch, the server's logits of the round before; CE alone while ``teacher[k]`` is None, eq. 6 of He
    et al.), then sends H_k = f_k[:2](x_k) ``[N_k, 64w, H, W]`` and z_k = f_k[2:](H_k) ``[N_k, classes]`` (eval
    mode, all its samples in partition order). Server (``server``, ``opt_s``): per epoch every client draws an
    order again; participant after participant, batch after batch, CE(f_s(H), y) + α·KD(f_s(H), z_k) (eq. 7).
    Finally ``teacher[k]`` = f_s(H_k) (eval mode) for the participants. Returns the server's mean CE over the
    round's samples (None without any).
    """
    sizes = [len(y) for y in ys]
    active = [k for k in range(len(clients)) if here[k] and sizes[k]]
    orders = [torch.randperm(n, generator=gen) for n in sizes]
    feats, logits = {}, {}
    for k in active:
        clients[k].train()
        for s in range(0, sizes[k], b):
            idx = orders[k][s:s + b]
            out = clients[k](xs[k][idx])
            loss = F.cross_entropy(out, ys[k][idx])
            if teacher[k] is not None:
                loss = loss + alpha * _kd(out, teacher[k][idx], temperature)
            opts[k].zero_grad()
            loss.backward()
            opts[k].step()
        clients[k].eval()
        with torch.no_grad():
            feats[k] = clients[k][:2](xs[k])
            logits[k] = clients[k][2:](feats[k])
    ce_sum, count = 0.0, 0
    for _ in range(server_epochs):
        orders = [torch.randperm(n, generator=gen) for n in sizes]
        server.train()
        for k in active:
            for s in range(0, sizes[k], b):
                idx = orders[k][s:s + b]
                out = server(feats[k][idx])
                ce = F.cross_entropy(out, ys[k][idx])
                opt_s.zero_grad()
                (ce + alpha * _kd(out, logits[k][idx], temperature)).backward()
                opt_s.step()
                ce_sum, count = ce_sum + float(ce.detach()) * len(idx), count + len(idx)
    server.eval()
    with torch.no_grad():
        for k in active:
            teacher[k] = server(feats[k])
    return ce_sum / count if count else None


def _composites(clients: list, server: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """Mean accuracy / CE of server(client_k[:2](x)) with test sample j scored by ``clients[j mod n]``."""
    correct = loss = 0.0
    with torch.no_grad():
        for j, c in enumerate(clients):
            out = server.eval()(c.eval()[:2](x[j::len(clients)]))
            correct += int((out.argmax(1) == y[j::len(clients)]).sum())
            loss += float(F.cross_entropy(out, y[j::len(clients)], reduction="sum"))
    return correct / len(y), loss / len(y)


def run_literal_gkt(cfg: DtflConfig, data: TensorDataset, rounds: int, participants=None, temperature: float = 3.0,
                    kd_alpha: float = 1.0, server_epochs: int = 1) -> dict:
    """Literal FedGKT: ``rounds`` × :func:`gkt_round` from :func:`fedlib.dtfl.fedgkt.gkt_models`' initial models
    (K copies of the client model, contiguous layout), the ``data`` stream of ``cfg.seed``; after round 0 and
    every round the mean composite accuracy of that round's participants (all clients at round 0). The check of
    :func:`fedlib.dtfl.run_fedgkt` (which it must equal with ``cfg.channels_last=False``, ``eval_every=1``).

    Returns:
        ``{"test_acc", "test_loss", "train_loss": [R + 1] (None first), "client_models": [K], "server_model"}``.
    """
    ds = subset(data, cfg.train_subset, cfg.test_subset)
    part = check_participants(participants, rounds, cfg.num_clients)
    idx = [torch.from_numpy(np.asarray(p, dtype=np.int64)) for p in client_data(cfg, ds.y_train.numpy())]
    xs, ys = [ds.x_train[i] for i in idx], [ds.y_train[i] for i in idx]
    client0, server = gkt_models(cfg, ds.x_train.shape[1], ds.x_train.shape[2], ds.num_classes)
    clients = [copy.deepcopy(client0) for _ in range(cfg.num_clients)]
    opts = [torch.optim.Adam(c.parameters(), lr=cfg.lr, eps=cfg.eps) for c in clients]
    opt_s = torch.optim.Adam(server.parameters(), lr=cfg.lr, eps=cfg.eps)
    teacher, gen = [None] * cfg.num_clients, torch_generator(cfg.seed, "data")
    evals, losses = [_composites(clients, server, ds.x_test, ds.y_test)], [None]
    for here in part:
        losses.append(gkt_round(clients, opts, server, opt_s, teacher, xs, ys, here, gen, cfg.batch_size,
                                temperature, kd_alpha, server_epochs))
        evals.append(_composites([c for c, h in zip(clients, here) if h], server, ds.x_test, ds.y_test))
    return {"test_acc": [a for a, _ in evals], "test_loss": [t for _, t in evals], "train_loss": losses,
            "client_models": clients, "server_model": server}
