"""Literal reference of split-federated training (HASFL Algorithm 1, and the DTFL hooks of :mod:`fedlib.split.engine`):
per device one ``nn.Module`` + ``torch.optim`` for the device part and one for its server part, autograd across
the cut through ``.detach().requires_grad_()`` and the returned activation gradient, devices one after another.
The tests check that :func:`fedlib.split.train_round` / :func:`fedlib.split.aggregate` /
:func:`fedlib.split.set_decision` give the same numbers (``tests/test_split_engine.py``,
``tests/test_split_hooks_reference.py``).

Common part (``mode="common"``, eq. 4): the edge server loads the round-start common weights into device i's
copy before serving it. SGD: each copy is stepped by device i's own server optimizer (own momentum buffer) and
the common part becomes the average of the copies (the average of the per-device updates, literally). Adam:
the copies' gradients are averaged and one Adam on the common part steps (the engine's definition). BN running
statistics of the copies are averaged too.

DTFL hooks (Sec. 4.4, with ``local_loss``): ``client_loss(out, y, x, z)`` replaces the auxiliary head's
cross-entropy of device i (``out`` ``[b_i, K]`` head logits, ``x`` ``[b_i, C, H, W]`` its input, ``z`` its smashed
data with gradient); ``smashed_transform(z)`` maps the detached smashed data before the server part sees it,
called device after device (so a transform with its own generator draws in the engine's order). Weights ``[N]``
(sum 1) enter eq. 7, the per-round averaging of server copies, the auxiliary heads of one cut and the global
model. :meth:`Reference.set_decision` rebuilds the modules of devices whose cut changes from the global model.
"""
from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from fedlib.core.seeding import torch_generator
from fedlib.split.config import SplitConfig


def _opt(cfg: SplitConfig, params: list, old=None):
    """A ``torch.optim`` over ``params``; with ``old`` (an optimizer) the state of the parameters it holds is
    carried over (the same ``Parameter`` objects), every other parameter starts fresh."""
    if not params:
        return None
    if cfg.optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    else:
        opt = torch.optim.Adam(params, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, weight_decay=cfg.weight_decay)
    if old is not None:
        for p in params:
            if p in old.state:
                opt.state[p] = old.state[p]
    return opt


def average_state_dicts(sds: list[dict], w) -> dict:
    """The literal weighted average of state dicts: sum_i w_i sd_i for floating-point entries, the first dict's
    integer buffers (``num_batches_tracked``) as they are. ``w``: one weight per dict (the caller normalises).
    Shared by the literal references (HASFL eq. 7, DTFL eq. 1); the engine has its own (:mod:`fedlib.split.ops`)."""
    out = {}
    for k, v in sds[0].items():
        out[k] = sum(wi * sd[k] for wi, sd in zip(w, sds)) if v.is_floating_point() else v.clone()
    return out


def _params(*modules) -> list:
    return [p for m in modules if m is not None for p in m.parameters()]


class Reference:
    """Per-device modules and optimizers of Algorithm 1 (see the module docstring).

    Attributes: ``dev[i]`` device part (units 1..L_i), ``srv[i]`` server part (units L_i+1..L_c in common
    mode, L_i+1..L in copies mode), ``com[i]`` device i's copy of the common part, ``common`` the edge server's
    common part, ``aux[i]`` auxiliary heads (local loss) and their optimizers.

    Args:
        cfg: the run; model: the initial model (``nn.Sequential`` of L units). aux_heads: device i's initial
            auxiliary head (None at cut L); when not given and ``aux_head`` is, built as the engine builds them.
        aux_head: ``aux_head(cut, smashed_shape) -> nn.Module``, needed for a head of a cut nobody held before
            (:meth:`set_decision`); seeded ``torch_generator(seed, "model").initial_seed() + cut``.
        input_shape: ``(C, H, W)`` of one sample (smashed shapes for ``aux_head``).
    """

    def __init__(self, cfg: SplitConfig, model: nn.Sequential, aux_heads: list | None = None,
                 aux_head=None, input_shape: tuple | None = None):
        from fedlib.core.validate import check_instance
        check_instance("cfg", cfg, SplitConfig)
        check_instance("model", model, nn.Sequential, "an nn.Sequential of cuttable units")
        self.cfg, self.L = cfg, len(model)
        self.cuts = [int(c) for c in cfg.cuts]
        self.lc = max(self.cuts) if cfg.mode == "common" else self.L
        self.aux_head, self.shapes = aux_head, None
        if input_shape is not None:
            with torch.no_grad():
                h, self.shapes = torch.zeros(2, *input_shape), []
                for unit in copy.deepcopy(model).eval():
                    h = unit(h)
                    self.shapes.append(tuple(h.shape[1:]))
        units = [copy.deepcopy(u).train() for u in model]
        self.dev = [nn.Sequential(*copy.deepcopy(units[:c])) for c in self.cuts]
        self.srv = [nn.Sequential(*copy.deepcopy(units[c:self.lc])) for c in self.cuts]
        self.common = nn.Sequential(*copy.deepcopy(units[self.lc:]))
        self.com = [copy.deepcopy(self.common) for _ in self.cuts]
        if aux_heads is None and cfg.local_loss and aux_head is not None:
            aux_heads = [self._new_head(c, cfg.seed) if c < self.L else None for c in self.cuts]
        self.aux = [copy.deepcopy(h) if h is not None else None for h in (aux_heads or [None] * len(self.cuts))]
        self._build_optimizers()

    def _build_optimizers(self, old: dict | None = None) -> None:
        """torch.optim per device part + head and per server part (+ common copy for SGD), one for the common
        part (Adam); ``old`` (previous optimizers) carries the state of parameters that survive."""
        old, n = old or {}, len(self.cuts)
        adam = self.cfg.optimizer == "adam"
        dev, srv = old.get("dev", [None] * n), old.get("srv", [None] * n)
        self.opt_dev = [_opt(self.cfg, _params(self.dev[i], self.aux[i]), dev[i]) for i in range(n)]
        self.opt_srv = [_opt(self.cfg, _params(self.srv[i], None if adam else self.com[i]), srv[i]) for i in range(n)]
        self.opt_common = _opt(self.cfg, _params(self.common), old.get("common")) if adam else None

    def _new_head(self, cut: int, seed: int) -> nn.Module:
        if self.aux_head is None or self.shapes is None:
            raise ValueError(f"a new auxiliary head at cut {cut} needs aux_head and input_shape")
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(torch_generator(seed, "model").initial_seed() + cut)
            return self.aux_head(cut, self.shapes[cut - 1]).train()

    def round(self, xs: list, ys: list, weights=None, client_loss=None, smashed_transform=None) -> float:
        """One round, Algorithm 1 a1-a5 device after device; returns the mean main loss.

        xs / ys: per device ``[b_i, C, H, W]`` / ``[b_i]``; ``None`` (copies mode): the device sits out.
        weights, client_loss, smashed_transform: module docstring (hooks need ``local_loss``)."""
        cfg, n, losses = self.cfg, len(self.cuts), []
        if (client_loss is not None or smashed_transform is not None) and not cfg.local_loss:
            raise ValueError("client_loss / smashed_transform need local_loss=True")
        if cfg.mode != "copies" and any(x is None for x in xs):
            raise ValueError("xs: None entries (devices sitting out) only in copies mode")
        start = copy.deepcopy(self.common.state_dict())
        com_grads = []
        for i in range(n):
            self.com[i].load_state_dict(start)                          # same round-start weights (eq. 4)
            if xs[i] is None:
                continue
            for o in (self.opt_dev[i], self.opt_srv[i]):
                if o is not None:
                    o.zero_grad()
            self.com[i].zero_grad()
            a = self.dev[i](xs[i])                                      # a1: device forward
            local = cfg.local_loss and self.aux[i] is not None
            a_up = a.detach().requires_grad_(not local)                 # a2: upload smashed data (+ labels)
            if local and smashed_transform is not None:
                a_up = smashed_transform(a_up)                          # DTFL: shuffled / noised before upload
            loss = F.cross_entropy(self.com[i](self.srv[i](a_up)), ys[i])   # a3: server forward / backward
            loss.backward()
            losses.append(float(loss.detach()))
            if self.opt_srv[i] is not None:
                self.opt_srv[i].step()                                  # eq. 5 (and eq. 4's per-device update)
            com_grads.append([p.grad.clone() for p in self.com[i].parameters()])
            if local:                                                   # local loss, no gradient comes back
                out = self.aux[i](a)
                (F.cross_entropy(out, ys[i]) if client_loss is None else client_loss(out, ys[i], xs[i], a)).backward()
            else:
                a.backward(a_up.grad)                                   # a4 download gradient, a5 device backward
            if self.opt_dev[i] is not None:
                self.opt_dev[i].step()                                  # eq. 6
        if cfg.mode == "common" and len(self.common):
            sds = [c.state_dict() for c in self.com]
            avg = average_state_dicts(sds, [1.0 / n] * n)
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

    def _unit(self, i: int, j: int) -> nn.Module:
        c = self.cuts[i]
        return self.dev[i][j] if j < c else self.srv[i][j - c]

    def _unit_sd(self, i: int, j: int) -> dict:
        return self._unit(i, j).state_dict()

    def _load_unit(self, i: int, j: int, sd: dict) -> None:
        self._unit(i, j).load_state_dict(sd)

    def _w(self, weights) -> np.ndarray:
        n = len(self.cuts)
        return np.full(n, 1.0 / n) if weights is None else np.asarray(weights, float)

    def _average_server_copies(self, weights) -> None:
        n, w = len(self.cuts), self._w(weights)
        for j in range(self.lc):
            holders = [i for i in range(n) if self.cuts[i] < j + 1]
            if len(holders) > 1:
                avg = average_state_dicts([self._unit_sd(i, j) for i in holders], w[holders] / w[holders].sum())
                for i in holders:
                    self._load_unit(i, j, avg)

    def aggregate(self, weights=None) -> None:
        """Eq. 7: average every device's client-specific model (units 1..L_c) and load it everywhere; auxiliary
        heads averaged among devices of the same cut."""
        n, w = len(self.cuts), self._w(weights)
        for j in range(self.lc):
            avg = average_state_dicts([self._unit_sd(i, j) for i in range(n)], w)
            for i in range(n):
                self._load_unit(i, j, avg)
        for c in set(self.cuts):
            same = [i for i in range(n) if self.cuts[i] == c and self.aux[i] is not None]
            if same:
                avg = average_state_dicts([self.aux[i].state_dict() for i in same], w[same] / w[same].sum())
                for i in same:
                    self.aux[i].load_state_dict(avg)

    def global_model(self, weights=None) -> nn.Sequential:
        """Average of the client-specific models + the common part, as one ``nn.Sequential`` in eval mode."""
        n, w = len(self.cuts), self._w(weights)
        units = [copy.deepcopy(self._unit(0, j)) for j in range(self.lc)] + [copy.deepcopy(u) for u in self.common]
        for j in range(self.lc):
            units[j].load_state_dict(average_state_dicts([self._unit_sd(i, j) for i in range(n)], w))
        return nn.Sequential(*units).eval()

    def set_decision(self, b, cuts, weights=None, seed: int = 0) -> None:
        """New batch sizes ``b`` [N] (they only size the next rounds' ``xs``) and cuts ``cuts`` [N] between rounds.

        A device whose cut changes: every unit 1..L_c' a new copy of the global model (:meth:`global_model` with
        ``weights``), new optimizers; with local loss the uniform average of the heads of the devices that stay
        at its new cut, else a new head (:meth:`_new_head` with ``seed``; none at cut L). A device that keeps
        its cut keeps its units and their optimizer state; units that become per device (L_c grows) are copies
        of the common part and units that become common (L_c shrinks) the global average, both with fresh state.
        """
        n = len(self.cuts)
        if len(b) != n or len(cuts) != n:
            raise ValueError(f"b and cuts must have length N = {n}")
        cuts = [int(c) for c in cuts]
        changed = [c != o for c, o in zip(cuts, self.cuts)]
        if not any(changed):
            return
        glob = [u.train() for u in self.global_model(weights)]
        old_cuts, old_lc = self.cuts, self.lc
        old = {"dev": self.opt_dev, "srv": self.opt_srv, "common": self.opt_common}
        own = [[self._unit(i, j) for j in range(old_lc)] for i in range(n)]
        old_common, old_com = list(self.common), [list(c) for c in self.com]
        new_lc = max(cuts) if self.cfg.mode == "common" else self.L
        self.cuts, self.lc = cuts, new_lc
        for i in range(n):
            units = [own[i][j] if not changed[i] and j < old_lc else copy.deepcopy(glob[j]) for j in range(new_lc)]
            self.dev[i], self.srv[i] = nn.Sequential(*units[:cuts[i]]), nn.Sequential(*units[cuts[i]:])
            self.com[i] = nn.Sequential(*[old_com[i][j - old_lc] if j >= old_lc else copy.deepcopy(glob[j])
                                          for j in range(new_lc, self.L)])
        self.common = nn.Sequential(*[old_common[j - old_lc] if j >= old_lc else copy.deepcopy(glob[j])
                                      for j in range(new_lc, self.L)])
        if self.cfg.local_loss:
            for i in (i for i in range(n) if changed[i]):
                same = [k for k in range(n) if old_cuts[k] == cuts[i] and not changed[k]]
                if cuts[i] == self.L:
                    self.aux[i] = None
                elif same:
                    self.aux[i] = copy.deepcopy(self.aux[same[0]])
                    self.aux[i].load_state_dict(average_state_dicts([self.aux[k].state_dict() for k in same],
                                                        [1.0 / len(same)] * len(same)))
                else:
                    self.aux[i] = self._new_head(cuts[i], seed)
        old["dev"] = [None if changed[i] else o for i, o in enumerate(old["dev"])]   # changed: fresh state
        self._build_optimizers(old)
