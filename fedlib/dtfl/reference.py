"""Literal DTFL (Algorithm 1), the check of :func:`fedlib.dtfl.run_dtfl`: per client one ``nn.Module`` for the
client-side model, one for the auxiliary head and one for its server-side copy, each pair with its own
``torch.optim.Adam``, clients run one after another, batch after batch. Same data order, same choices (module
docstring of :mod:`fedlib.dtfl.training`); the tests check that both give the same numbers.
"""
from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..core.seeding import torch_generator
from ..data import TensorDataset
from ..split import build_model, evaluate
from ..split.config import SplitConfig
from .tiers import aux_head_factory
from .training import DtflConfig, check_cuts, check_participants, client_data, subset


def _avg(sds: list[dict], w) -> dict:
    return {k: sum(wi * sd[k] for wi, sd in zip(w, sds)) if v.is_floating_point() else v.clone()
            for k, v in sds[0].items()}


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


def run_literal(cfg: DtflConfig, data: TensorDataset, cuts) -> dict:
    """Literal DTFL for ``cuts`` (``[R, K]``); returns ``{"test_acc": [R + 1], "model": global nn.Sequential}``.

    Requires that every tier a client moves to was held by some client in the round before (a never-used tier
    would need the engine's fresh-head seeding, which this reference does not repeat).
    """
    cuts = check_cuts(cuts, cfg.num_clients)
    ds = subset(data, cfg.train_subset, cfg.test_subset)
    parts = client_data(cfg, ds.y_train.numpy())
    sizes = np.array([len(p) for p in parts], dtype=float)
    w = sizes / sizes.sum()
    parts = [torch.from_numpy(np.asarray(p, dtype=np.int64)) for p in parts]
    shape, k, b = tuple(ds.x_train.shape[1:]), cfg.num_clients, cfg.batch_size
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
    clients = [_Client(glob, int(c), bank[int(c)], cfg.lr, cfg.eps) for c in cuts[0]]
    gen = torch_generator(cfg.seed, "data")
    model = nn.Sequential(*copy.deepcopy(glob))
    accs = [evaluate(model, ds.x_test, ds.y_test)[0]]
    for r, round_cuts in enumerate(cuts):
        for i, c in enumerate(int(v) for v in round_cuts):
            if r and c != clients[i].cut:                            # tier change: global model, tier's head
                clients[i] = _Client(list(model), c, bank[c], cfg.lr, cfg.eps)
        order = [p[torch.randperm(len(p), generator=gen)] for p in parts]
        for cl, o in zip(clients, order):                            # clients one after another
            for s in range(0, len(o), b):
                cl.step(ds.x_train[o[s:s + b]], ds.y_train[o[s:s + b]])
        for j in range(len(glob)):                                   # eq. 1: w = Σ_k N_k/N · w_k
            avg = _avg([cl.units()[j].state_dict() for cl in clients], w)
            for cl in clients:
                cl.units()[j].load_state_dict(avg)
            model[j].load_state_dict(avg)
        for c in set(cl.cut for cl in clients):                      # auxiliary heads within a tier
            same = [i for i, cl in enumerate(clients) if cl.cut == c]
            avg = _avg([clients[i].head.state_dict() for i in same], w[same] / w[same].sum())
            for i in same:
                clients[i].head.load_state_dict(avg)
            bank[c] = copy.deepcopy(clients[same[0]].head)
        accs.append(evaluate(model, ds.x_test, ds.y_test)[0])
    return {"test_acc": accs, "model": model.eval()}


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
                         yogi=None) -> dict:
    """Literal FedAvg (``cut`` 8), SplitFed-V1 (``cut`` 2) or, with ``yogi`` (a :class:`fedlib.dtfl.YogiConfig`),
    FedYogi: per client ``nn.Module`` s and ``torch.optim.Adam`` s, clients one after another, then the weighted
    average over the round's participants (and Yogi's step written out per parameter). The check of
    :func:`fedlib.dtfl.run_baseline`. Returns ``{"test_acc": [R + 1], "model"}``."""
    ds = subset(data, cfg.train_subset, cfg.test_subset)
    parts = client_data(cfg, ds.y_train.numpy())
    sizes = np.array([len(p) for p in parts], dtype=float)
    parts = [torch.from_numpy(np.asarray(p, dtype=np.int64)) for p in parts]
    shape, k, b = tuple(ds.x_train.shape[1:]), cfg.num_clients, cfg.batch_size
    part = check_participants(participants, rounds, k)
    scfg = SplitConfig(model=cfg.model, width=cfg.width, num_devices=k, batch_sizes=(b,) * k, cuts=(cut,) * k,
                       interval=1, lr=cfg.lr, optimizer="adam", seed=cfg.seed)
    model = build_model(scfg, shape[0], shape[1], ds.num_classes)
    clients = [_E2E(list(model), cut, cfg.lr, cfg.eps) for _ in range(k)]
    gen = torch_generator(cfg.seed, "data")
    moments = {}
    accs = [evaluate(model, ds.x_test, ds.y_test)[0]]
    for here in part:
        order = [p[torch.randperm(len(p), generator=gen)] for p in parts]
        for i in np.flatnonzero(here):
            for s in range(0, len(order[i]), b):
                clients[i].step(ds.x_train[order[i][s:s + b]], ds.y_train[order[i][s:s + b]])
        w = np.where(here, sizes, 0.0) / sizes[here].sum()
        for j in range(len(model)):
            avg = _avg([cl.units()[j].state_dict() for cl in clients], w)
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
        accs.append(evaluate(model, ds.x_test, ds.y_test)[0])
    return {"test_acc": accs, "model": model.eval()}
