"""Literal reference of split-federated training (HASFL Algorithm 1, and the DTFL hooks of :mod:`.engine`):
per device one ``nn.Module`` + ``torch.optim`` for the device part and one for its server part, autograd across
the cut through ``.detach().requires_grad_()`` and the returned activation gradient, devices one after another.
The tests check that :func:`fedlib.split.train_round` / :func:`fedlib.split.aggregate` give the same numbers.

Common part (``mode="common"``, eq. 4): the edge server loads the round-start common weights into device i's
copy before serving it. SGD: each copy is stepped by device i's own server optimizer (own momentum buffer) and
the common part becomes the average of the copies (the average of the per-device updates, literally). Adam:
the copies' gradients are averaged and one Adam on the common part steps (the engine's definition). BN running
statistics of the copies are averaged too.
"""
from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .config import SplitConfig


def _opt(cfg: SplitConfig, params: list):
    if not params:
        return None
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    return torch.optim.Adam(params, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, weight_decay=cfg.weight_decay)


def _avg_sd(sds: list[dict], w) -> dict:
    out = {}
    for k, v in sds[0].items():
        out[k] = sum(wi * sd[k] for wi, sd in zip(w, sds)) if v.is_floating_point() else v.clone()
    return out


class Reference:
    """Per-device modules and optimizers of Algorithm 1 (see the module docstring).

    Attributes: ``dev[i]`` device part (units 1..L_i), ``srv[i]`` server part (units L_i+1..L_c in common
    mode, L_i+1..L in copies mode), ``com[i]`` device i's copy of the common part, ``common`` the edge server's
    common part, ``aux[i]`` auxiliary heads (local loss) and their optimizers.
    """

    def __init__(self, cfg: SplitConfig, model: nn.Sequential, aux_heads: list | None = None):
        self.cfg, L = cfg, len(model)
        self.cuts = list(cfg.cuts)
        lc = max(self.cuts) if cfg.mode == "common" else L
        self.lc = lc
        units = [copy.deepcopy(u).train() for u in model]
        self.dev = [nn.Sequential(*copy.deepcopy(units[:c])) for c in self.cuts]
        self.srv = [nn.Sequential(*copy.deepcopy(units[c:lc])) for c in self.cuts]
        self.common = nn.Sequential(*copy.deepcopy(units[lc:]))
        self.com = [copy.deepcopy(self.common) for _ in self.cuts]
        self.aux = [copy.deepcopy(h) if h is not None else None for h in (aux_heads or [None] * len(self.cuts))]
        adam = cfg.optimizer == "adam"
        self.opt_dev = [_opt(cfg, list(d.parameters()) + (list(a.parameters()) if a is not None else []))
                        for d, a in zip(self.dev, self.aux)]
        self.opt_srv = [_opt(cfg, list(s.parameters()) + ([] if adam else list(c.parameters())))
                        for s, c in zip(self.srv, self.com)]
        self.opt_common = _opt(cfg, list(self.common.parameters())) if adam else None

    def round(self, xs: list[torch.Tensor], ys: list[torch.Tensor], weights=None) -> float:
        """One round, Algorithm 1 a1-a5 device after device; returns the mean main loss."""
        cfg, n, losses = self.cfg, len(self.cuts), []
        start = copy.deepcopy(self.common.state_dict())
        com_grads = []
        for i in range(n):
            self.com[i].load_state_dict(start)                          # same round-start weights (eq. 4)
            for o in (self.opt_dev[i], self.opt_srv[i]):
                if o is not None:
                    o.zero_grad()
            self.com[i].zero_grad()
            a = self.dev[i](xs[i])                                      # a1: device forward
            local = cfg.local_loss and self.aux[i] is not None
            a_up = a.detach().requires_grad_(not local)                 # a2: upload smashed data (+ labels)
            loss = F.cross_entropy(self.com[i](self.srv[i](a_up)), ys[i])   # a3: server forward / backward
            loss.backward()
            losses.append(float(loss.detach()))
            if self.opt_srv[i] is not None:
                self.opt_srv[i].step()                                  # eq. 5 (and eq. 4's per-device update)
            com_grads.append([p.grad.clone() for p in self.com[i].parameters()])
            if local:
                F.cross_entropy(self.aux[i](a), ys[i]).backward()       # local loss, no gradient comes back
            else:
                a.backward(a_up.grad)                                   # a4 download gradient, a5 device backward
            if self.opt_dev[i] is not None:
                self.opt_dev[i].step()                                  # eq. 6
        if cfg.mode == "common" and len(self.common):
            sds = [c.state_dict() for c in self.com]
            avg = _avg_sd(sds, [1.0 / n] * n)
            if self.opt_common is None:                                 # SGD: average of the per-device updates
                self.common.load_state_dict(avg)
            else:                                                       # Adam: one step on the mean gradient
                buffers = {k for k, _ in self.common.named_buffers()}
                self.common.load_state_dict({k: v for k, v in avg.items() if k in buffers}, strict=False)
                for p, *gs in zip(self.common.parameters(), *com_grads):
                    p.grad = sum(gs) / n
                self.opt_common.step()
        if cfg.mode == "copies":
            self._average_server_copies(weights)
        return float(np.mean(losses))

    def _unit_sd(self, i: int, j: int) -> dict:
        c = self.cuts[i]
        return (self.dev[i][j] if j < c else self.srv[i][j - c]).state_dict()

    def _load_unit(self, i: int, j: int, sd: dict) -> None:
        c = self.cuts[i]
        (self.dev[i][j] if j < c else self.srv[i][j - c]).load_state_dict(sd)

    def _average_server_copies(self, weights) -> None:
        n = len(self.cuts)
        w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, float)
        for j in range(self.lc):
            holders = [i for i in range(n) if self.cuts[i] < j + 1]
            if len(holders) > 1:
                avg = _avg_sd([self._unit_sd(i, j) for i in holders], w[holders] / w[holders].sum())
                for i in holders:
                    self._load_unit(i, j, avg)

    def aggregate(self, weights=None) -> None:
        """Eq. 7: average every device's client-specific model (units 1..L_c) and load it everywhere; auxiliary
        heads averaged among devices of the same cut."""
        n = len(self.cuts)
        w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, float)
        for j in range(self.lc):
            avg = _avg_sd([self._unit_sd(i, j) for i in range(n)], w)
            for i in range(n):
                self._load_unit(i, j, avg)
        for c in set(self.cuts):
            same = [i for i in range(n) if self.cuts[i] == c and self.aux[i] is not None]
            if same:
                avg = _avg_sd([self.aux[i].state_dict() for i in same], w[same] / w[same].sum())
                for i in same:
                    self.aux[i].load_state_dict(avg)

    def global_model(self, weights=None) -> nn.Sequential:
        """Average of the client-specific models + the common part, as one ``nn.Sequential`` in eval mode."""
        n = len(self.cuts)
        w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, float)
        units = [copy.deepcopy(self.dev[0][j] if j < self.cuts[0] else self.srv[0][j - self.cuts[0]])
                 for j in range(self.lc)] + [copy.deepcopy(u) for u in self.common]
        for j in range(self.lc):
            units[j].load_state_dict(_avg_sd([self._unit_sd(i, j) for i in range(n)], w))
        return nn.Sequential(*units).eval()
