"""DTFL's local-loss step (Sec. 4.1, Algorithm 1 lines 6-9 and 15-18): where client k's part md1..md_{m_k} ends,
its auxiliary network (:func:`fedlib.dtfl.aux_head_factory`: average pool + one fully connected layer) scores the
smashed data z_k with the cross-entropy of the client's labels, that loss alone trains the client-side part and
the auxiliary network, and the server part receives z_k detached: no gradient returns to the client (the server
trains md_{m_k+1}..md8 on z_k with its own loss, in the engine's round).

The step plugs into the shared split engine as a :class:`fedlib.split.LocalLossStep` (the engine imports no
paper: DTFL passes the step to each round, :meth:`fedlib.dtfl.run.EngineRun.local_epoch`); one implementation per
backend of the engine, the same arithmetic on each:

- :class:`LoopLocalLoss` for the loop backend (:func:`fedlib.split.train_round`): one client at a time,
  z_k ``[b, C, H, W]``, the head's logits ``[b, classes]``;
- :class:`StackedLocalLoss` for the stacked backends (:func:`fedlib.split.stacked.train_round_stacked`): the
  clients of a group at one tier at once, in the grouped layout ``[b, G·C, H, W]`` with the tier's heads stacked
  ``[N, ...]`` (one grouped call), the group's other clients passed through unchanged.

Both take the privacy hooks of Sec. 4.4 (:mod:`fedlib.dtfl.privacy`): ``client_loss(out, y, x, z) -> scalar``
replaces the head's cross-entropy (``out`` ``[b, classes]`` the head's logits, ``y`` ``[b]`` labels, ``x`` the
client's input, ``z`` its smashed data with gradient: the distance-correlation regulariser), and
``smashed_transform(z) -> z'`` is applied to the detached smashed data before the server sees it (patch
shuffling). The stacked step calls ``smashed_transform`` for the clients at one tier in client order, tier after
tier within a group of equal batch size (the loop: client after client); the two orders agree when every client
keeps one tier (DTFL's privacy runs: a fixed tier).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call

from ..core.validate import check_callable, check_choice
from ..split.backends import ALL_BACKENDS
from ..split.engine import LocalLossStep
from ..split.stacked import gather_rows, grouped_unit, put_buffers
from ..split.stacked_layers import call, per_device, to_grouped
from ..split.stacked_ops import host_tensor


class LoopLocalLoss:
    """DTFL's local-loss step on the loop backend, one client ``i = members[0]`` at a time (module docstring;
    the arguments of :class:`fedlib.split.LocalLossStep`): ``heads`` is client i's auxiliary network, ``x`` its
    smashed data ``[b, C, H, W]``, ``y`` its labels ``[b]``. Returns ``(z, [loss])``: z detached (and
    transformed) for the server, the client's local loss (Algorithm 1 line 8; Sec. 4.4 with ``client_loss``)."""

    def __init__(self, client_loss: Callable | None = None, smashed_transform: Callable | None = None):
        check_callable("client_loss", client_loss)
        check_callable("smashed_transform", smashed_transform)
        self.client_loss, self.smashed_transform = client_loss, smashed_transform

    def __call__(self, st, cut: int, members: list, at: np.ndarray, x: torch.Tensor, y: torch.Tensor, xs: list,
                 ys: list, heads: dict) -> tuple[torch.Tensor, list]:
        out = functional_call(st.aux_templates[cut], heads, (x,))                   # [b, classes]
        loss = F.cross_entropy(out, y) if self.client_loss is None else self.client_loss(out, y, xs[members[0]], x)
        z = x.detach()                                                              # no gradient to the client
        if self.smashed_transform is not None:
            z = self.smashed_transform(z)
        return z, [loss]


class StackedLocalLoss(LoopLocalLoss):
    """DTFL's local-loss step on a stacked backend: the clients ``members[at]`` of a group (G = ``len(members)``
    clients of one batch size b) are at tier cut ``cut``; ``x`` is the group's smashed data in the grouped layout
    ``[b, G·C, H, W]``, ``y`` its labels ``[G, b]``, ``heads`` the tier's heads stacked ``[N, ...]``. Their heads
    run in one grouped call (logits ``[k, b, classes]``, k = ``len(at)``); returns ``(x', terms)``: x with those
    clients' smashed data detached (and transformed) and the rest of the group unchanged, and the losses (one
    term, the sum of the k clients' mean cross-entropies; with ``client_loss`` one term per client)."""

    def __call__(self, st, cut: int, members: list, at: np.ndarray, x: torch.Tensor, y: torch.Tensor, xs: list,
                 ys: list, heads: dict) -> tuple[torch.Tensor, list]:
        dev, g, k = x.device, len(members), len(at)
        full = k == g
        pos = None if full else host_tensor(at, torch.int64, dev)
        rows_at = host_tensor(np.asarray(members)[at], torch.int64, dev)
        names = list(heads)
        rows = gather_rows(st.aux[cut], rows_at, names, heads)
        xv = x.reshape(x.shape[0], g, -1, *x.shape[2:])                              # [b, G, C, H, W]
        z = x if full else xv.index_select(1, pos).reshape(x.shape[0], -1, *x.shape[2:])
        out = per_device(call(grouped_unit(st, ("aux", cut)), rows, z, k), k)          # [k, b, classes]
        put_buffers(st.aux[cut], rows, rows_at, names)
        if self.client_loss is None:
            yz = y if full else y.index_select(0, pos)
            terms = [F.cross_entropy(out.flatten(0, 1), yz.flatten(), reduction="none").view(k, -1).mean(1).sum()]
        else:
            zd = per_device(z, k)
            terms = [self.client_loss(out[r], ys[members[p]], xs[members[p]], zd[r]) for r, p in enumerate(at)]
        cut_x = x.detach()
        if self.smashed_transform is not None:
            marked, cv = set(int(r) for r in at), per_device(cut_x, g)
            cut_x = to_grouped(torch.stack([self.smashed_transform(cv[r]) if r in marked else cv[r]
                                            for r in range(g)]))
        if full:
            return cut_x, terms
        mask = np.zeros(g, dtype=bool)
        mask[at] = True
        keep = host_tensor(mask, torch.bool, dev).view(1, g, *[1] * (xv.dim() - 2))
        return torch.where(keep, cut_x.reshape(xv.shape), xv).reshape(x.shape), terms


def local_loss_step(backend: str, client_loss: Callable | None = None,
                    smashed_transform: Callable | None = None) -> LocalLossStep:
    """DTFL's local-loss step for the engine's ``backend`` (resolved: ``"loop"`` or a stacked variant), with the
    privacy hooks of Sec. 4.4 (module docstring).

    Raises:
        ValueError: an unknown backend. ParameterTypeError: a hook that is not callable."""
    check_choice("backend", backend, ALL_BACKENDS)
    step = LoopLocalLoss if backend == "loop" else StackedLocalLoss
    return step(client_loss, smashed_transform)
