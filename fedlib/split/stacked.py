"""The split engine with stacked per-device state (the ``stacked`` backend of :mod:`.engine`'s round).

:mod:`.engine` keeps one dict of tensors per device and unit and runs the per-device units in a Python loop over
devices: on a GPU that is a few kernel launches per device, unit and optimiser tensor, and the loop loses to a
plain per-client ``nn.Module`` loop. Here every per-device unit (units 1..L_c; every unit in ``copies`` mode)
holds its parameters, buffers (BN running statistics per device) and optimiser state as stacked ``[N, ...]``
tensors, and one call runs a unit for all devices of one batch size at once (HASFL's devices are grouped by
b_i), in the grouped layout of :mod:`.stacked_layers` (the devices' channels side by side: one grouped
convolution, one batch norm, one batched matrix product per layer). The round is the engine's, step for step
(module docstring of :mod:`.engine`; the tests check both against the literal per-device reference in float64):

- devices without a batch (``None``, copies mode) are masked: their rows are not updated (bit-identical);
- DTFL's tiers are masks, not shapes: at unit j the devices whose cut is j take the round's local-loss step
  (:class:`.engine.LocalLossStep`, DTFL's :class:`fedlib.dtfl.local_loss.StackedLocalLoss`: their auxiliary
  heads, stacked per cut, give the local loss, and their smashed data is detached with ``torch.where``);
- SGD / Adam are ``torch.optim``'s formulas applied to the stacked rows with ``torch._foreach_*`` over a unit's
  tensors, with one step count per device (Adam's bias corrections per row, from the host's step counts);
- host values (row indices, masks, step sizes) reach the GPU from pinned memory without blocking
  (:func:`.stacked_ops.host_tensor`), so with ``sync=False, check_labels=False`` a round has no host sync;
- the shared common part (HASFL) runs once over the concatenated smashed data with per-device BN statistics.

Options (:func:`init_stacked`, :mod:`.stacked_layers`): NHWC grouped convolutions, ``torch.compile`` of the units.
The round returns the mean loss as a float by default (one host sync per round, as :func:`.engine.train_round`).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from ..core.validate import check_bool, check_instance, check_int, check_list
from . import ops
from .config import SplitConfig, validate_decision
from .engine import LocalLossStep, _check_batches, _check_round, _new_aux, _weights
from .stacked_layers import call, grouped, per_device
from .stacked_ops import assign_rows, average_server_copies, host_tensor, step_rows, weighted_rows


@dataclass
class StackedState:
    """Everything a run changes, stacked. ``per[j]``: unit j+1's tensors ``{name: [N, ...]}`` (j < per_device)
    or ``{name: [...]}`` (shared); ``opt[j]``: per-device units ``{name: {"exp_avg"|"exp_avg_sq"|"momentum_buffer":
    [N, ...]}}`` with ``steps[j]`` ``[N]`` (host) optimizer steps per device, shared units the engine's per-tensor
    dicts. ``aux[c]``: the auxiliary heads of cut c stacked ``{name: [N, ...]}`` (row i valid while device i is
    at cut c), ``aux_opt[c]`` / ``aux_steps[c]`` likewise. Other fields as :class:`.engine.SplitState`."""

    model: nn.Sequential
    templates: list
    pnames: list
    per: list
    opt: list
    steps: list
    b: np.ndarray
    cuts: np.ndarray
    mode: str
    opt_cfg: dict
    local_loss: bool = False
    aux: dict = field(default_factory=dict)
    aux_opt: dict = field(default_factory=dict)
    aux_steps: dict = field(default_factory=dict)
    aux_head: Callable | None = None
    aux_templates: dict = field(default_factory=dict)
    seed: int = 0
    smashed_shapes: list = field(default_factory=list)
    input_shape: tuple = ()
    round: int = 0
    samples: int = 0
    grouped: dict = field(default_factory=dict)
    layout: dict = field(default_factory=dict)

    @property
    def num_devices(self) -> int:
        return len(self.b)

    @property
    def num_units(self) -> int:
        return len(self.templates)

    @property
    def per_device(self) -> int:
        return int(self.cuts.max()) if self.mode == "common" else self.num_units

    def device_aux(self, i: int) -> dict | None:
        """Device i's auxiliary head (row views of its cut's stack; None at cut L or without local loss)."""
        c = int(self.cuts[i])
        return {k: v[i] for k, v in self.aux[c].items()} if self.local_loss and c < self.num_units else None

    @property
    def units(self) -> list:
        """Per-device views, the engine's layout: ``units[j][k]`` = dict of row k's tensors of unit j+1 (views
        into the stacks: read them, or write them in place)."""
        n, p = self.num_devices, self.per_device
        return [[{k: v[i] for k, v in d.items()} for i in range(n)] if j < p else [d] for j, d in enumerate(self.per)]


def _stack(d: dict, n: int) -> dict:
    return {k: v.detach().unsqueeze(0).repeat(n, *[1] * v.dim()) for k, v in d.items()}


def _zeros_opt(st: StackedState, stack: dict, names: list) -> dict:
    key = ("momentum_buffer",) if st.opt_cfg["name"] == "sgd" else ("exp_avg", "exp_avg_sq")
    return {name: {k: torch.zeros_like(stack[name]) for k in key} for name in names}


def init_stacked(cfg: SplitConfig, model: nn.Sequential, input_shape: tuple, device: torch.device | str = "cpu",
                 aux_head: Callable | None = None, channels_last: bool = False, grouped_channels_last: bool = False,
                 compile_mode: str | None = None) -> StackedState:
    """Initial state, as :func:`.engine.init_state` (every device starts from ``model``'s weights; heads of one
    cut start equal), stacked ``[N, ...]``. ``channels_last`` is accepted for the engine's signature and has no
    effect: stacked 5-D conv weights have one layout (so a run asked for channels-last is float-close, not
    bit-identical, to the engine's). The grouped layout's options (:mod:`.stacked_layers`):
    ``grouped_channels_last`` (NHWC grouped convolutions) and ``compile_mode`` (None, ``"default"`` or
    ``"reduce-overhead"``: ``torch.compile`` of each grouped unit). Raises as :func:`.engine.init_state`, and
    ValueError for an unknown ``compile_mode``."""
    from .engine import init_state
    check_bool("channels_last", channels_last)
    check_bool("grouped_channels_last", grouped_channels_last)
    if compile_mode not in (None, "default", "reduce-overhead"):
        raise ValueError(f"compile_mode must be None, 'default' or 'reduce-overhead', got {compile_mode!r}")
    ref = init_state(cfg, model, input_shape, device, aux_head)   # the engine's checks, shapes and first heads
    n, p = ref.num_devices, ref.per_device
    per = [_stack(c[0], n) if j < p else c[0] for j, c in enumerate(ref.units)]
    st = StackedState(ref.model, ref.templates, ref.pnames, per, [], [], ref.b, ref.cuts, ref.mode, ref.opt_cfg,
                      ref.local_loss, aux_head=aux_head, aux_templates=ref.aux_templates, seed=cfg.seed,
                      smashed_shapes=ref.smashed_shapes, input_shape=ref.input_shape,
                      layout={"channels_last": grouped_channels_last, "compile_mode": compile_mode})
    st.opt = [_zeros_opt(st, per[j], st.pnames[j]) if j < p else {} for j in range(st.num_units)]
    st.steps = [np.zeros(n, dtype=np.int64) if j < p else None for j in range(st.num_units)]
    for i, c in enumerate(int(c) for c in ref.cuts):
        if ref.aux[i] is not None and c not in st.aux:
            _new_cut(st, c, ref.aux[i])
    return st


def _new_cut(st: StackedState, cut: int, head: dict) -> None:
    n = st.num_devices
    st.aux[cut] = _stack(head, n)
    names = [k for k, _ in st.aux_templates[cut].named_parameters()]
    st.aux_opt[cut] = _zeros_opt(st, st.aux[cut], names)
    st.aux_steps[cut] = np.zeros(n, dtype=np.int64)


def grouped_unit(st: StackedState, key) -> nn.Module:
    """The grouped-layout template of unit ``key`` (an int j) or of the auxiliary head of cut c (``("aux", c)``)."""
    if key not in st.grouped:
        st.grouped[key] = grouped(st.templates[key] if isinstance(key, int) else st.aux_templates[key[1]],
                                  **st.layout)
    return st.grouped[key]


def gather_rows(stack: dict, idx: torch.Tensor, names: list, leaves: dict) -> dict:
    """Rows ``idx`` of a stacked unit: parameters through ``index_select`` of the leaf (differentiable), buffers
    as copies (written back by :func:`put_buffers`)."""
    return {k: (leaves[k] if k in names else v).index_select(0, idx) for k, v in stack.items()}


def put_buffers(stack: dict, rows: dict, idx: torch.Tensor, names: list) -> None:
    """Write the buffers of ``rows`` (:func:`gather_rows`' copies, e.g. BN running statistics updated by a forward
    pass) back into rows ``idx`` of the stack; parameters (``names``) are left to the optimizer step."""
    for k, v in rows.items():
        if k not in names:
            stack[k].index_copy_(0, idx, v)


class _ShapesOnly:
    """The attributes :func:`.engine._check_batches` reads, without the label range (``check_labels=False``)."""

    def __init__(self, st: StackedState):
        self.input_shape, self.smashed_shapes = st.input_shape, [()]


def train_round_stacked(st: StackedState, xs: list, ys: list, weights=None, sync_copies: bool = True,
                        local_step: LocalLossStep | None = None, sync: bool = True, check_labels: bool = True,
                        per_device_loss: bool = False) -> float | torch.Tensor:
    """:func:`.engine.train_round` on stacked state: same arguments, same round, same errors; returns the mean
    over the training devices of the main loss.

    Devices are processed in groups of equal batch size (one call per unit and group): ``local_step`` is called
    once per group and cut (:class:`.engine.LocalLossStep`), with the group's devices at that cut.

    Host syncs on a GPU: none inside the round with ``sync=False`` (the loss is returned as a 0-d tensor on the
    device; ``float()`` it when needed) and ``check_labels=False`` (the caller has checked the labels once, e.g.
    the whole training set before the run: an out-of-range label on CUDA is a device-side assert, not an
    error message). The defaults sync once per round each, as the engine does. ``per_device_loss``: return the
    training devices' main losses, ``[len(active)]`` on the device, in device order (``tests/stacked_runs.py``)."""
    check_instance("st", st, StackedState, "a StackedState (fedlib.split.stacked.init_stacked)")
    check_bool("sync", sync)
    check_bool("check_labels", check_labels)
    check_bool("per_device_loss", per_device_loss)
    n, L, p = st.num_devices, st.num_units, st.per_device
    check_list("xs", xs, min_len=0)
    check_list("ys", ys, min_len=0)
    if len(xs) != n or len(ys) != n:
        raise ValueError(f"xs and ys must hold one entry per device (N = {n}), got {len(xs)} and {len(ys)}")
    for i, (x, y) in enumerate(zip(xs, ys)):
        if (x is None) != (y is None) or x is not None and not 0 < len(x) == len(y):
            raise ValueError(f"device {i}: xs[{i}] and ys[{i}] must be equally long non-empty batches (or both "
                             f"None), got {None if x is None else len(x)} and {None if y is None else len(y)} samples")
    active = [i for i in range(n) if xs[i] is not None]
    _check_round(st.mode, n, active, weights, local_step, st.local_loss)
    _check_batches(st if check_labels else _ShapesOnly(st), xs, ys, active, st.per[0][st.pnames[0][0]])
    dev = st.per[0][st.pnames[0][0]].device
    leaves = [{k: st.per[j][k].detach().requires_grad_(True) for k in st.pnames[j]} for j in range(L)]
    cuts_used = sorted({int(st.cuts[i]) for i in active if st.local_loss and st.cuts[i] < L})
    aux_leaves = {c: {k: st.aux[c][k].detach().requires_grad_(True) for k in st.aux_opt[c]} for c in cuts_used}
    groups: dict[int, list[int]] = {}
    for i in active:
        groups.setdefault(len(ys[i]), []).append(i)
    outs, aux_terms = {}, []
    for size, members in groups.items():
        g = len(members)
        whole = members == list(range(n))          # every device, in order: the stacks themselves, no gather
        idx = None if whole else host_tensor(members, torch.int64, dev)
        x = torch.stack([xs[i] for i in members], dim=1)                           # [b, G, C, H, W]
        x = x.reshape(size, -1, *x.shape[3:])                                      # grouped layout [b, G·C, H, W]
        y = torch.stack([ys[i] for i in members])
        cuts = st.cuts[members]
        for j in range(p):
            rows = {**st.per[j], **leaves[j]} if whole else gather_rows(st.per[j], idx, st.pnames[j], leaves[j])
            x = call(grouped_unit(st, j), rows, x, g)
            if not whole:
                put_buffers(st.per[j], rows, idx, st.pnames[j])
            at = np.flatnonzero(cuts == j + 1) if st.local_loss and j + 1 < L else []
            if len(at):
                x, terms = local_step(st, j + 1, members, at, x, y, xs, ys, aux_leaves[j + 1])
                aux_terms += terms
        for i, h in zip(members, per_device(x, g).unbind(0)):
            outs[i] = h
    hs = [outs[i] for i in active]
    if p < L:
        with ops.segmented(st.templates[p:L], tuple(int(h.shape[0]) for h in hs)):
            h = torch.cat(hs)
            for j in range(p, L):
                h = functional_call(st.templates[j], {**st.per[j], **leaves[j]}, (h,))
    else:
        h = torch.cat(hs)
    y = torch.cat([ys[i] for i in active])
    ce = F.cross_entropy(h, y, reduction="none")
    sizes = [len(ys[i]) for i in active]
    losses = ce.view(len(active), -1).mean(1) if len(set(sizes)) == 1 else \
        torch.stack([c.mean() for c in ce.split(sizes)])
    total = losses.sum() + (sum(aux_terms) if aux_terms else 0.0)
    flat = [(j, k) for j in range(L) for k in st.pnames[j]] + [("aux", c, k) for c in cuts_used for k in aux_leaves[c]]
    grads = torch.autograd.grad(total, [leaves[f[0]][f[1]] if f[0] != "aux" else aux_leaves[f[1]][f[2]]
                                        for f in flat])
    grads = dict(zip(flat, grads))
    on = np.zeros(n, dtype=bool)
    on[active] = True
    with torch.no_grad():
        for j in range(L):
            if j < p:
                step_rows(st.opt_cfg, st.per[j], {k: grads[(j, k)] for k in st.pnames[j]}, st.opt[j], st.steps[j], on)
            else:                                          # eq. 4: the mean of the per-device gradients
                states = [st.opt[j].setdefault(k, {}) for k in st.pnames[j]]
                ops.optimizer_step([st.per[j][k] for k in st.pnames[j]], [grads[(j, k)] / n for k in st.pnames[j]],
                                   states, st.opt_cfg)
        for c in cuts_used:
            # rows of devices at another cut are dead (a device entering cut c gets its row and fresh optimizer
            # state from set_decision), so they step with zero gradients; only devices at c sitting out are kept
            at_c = on | (st.cuts != c)
            step_rows(st.opt_cfg, st.aux[c], {k: grads[("aux", c, k)] for k in aux_leaves[c]}, st.aux_opt[c],
                      st.aux_steps[c], at_c)
    if st.mode == "copies" and sync_copies:
        average_server_copies(st, weights)
    st.round += 1
    st.samples += sum(len(ys[i]) for i in active)
    if per_device_loss:
        return losses.detach()
    loss = losses.detach().mean()
    return float(loss) if sync else loss


def aggregate_stacked(st: StackedState, weights=None) -> None:
    """:func:`.engine.aggregate` on stacked state (eq. 7; auxiliary heads averaged within each cut)."""
    w = _weights(st.num_devices, weights)
    everyone = list(range(st.num_devices))
    for j in range(st.per_device):
        assign_rows(st.per[j], everyone, weighted_rows(st.per[j], w, everyone))
    if st.local_loss:
        for cut in set(int(c) for c in st.cuts if c < st.num_units):
            same = [i for i in everyone if st.cuts[i] == cut]
            ws = w[same] / w[same].sum() if w[same].sum() > 0 else np.full(len(same), 1 / len(same))
            assign_rows(st.aux[cut], same, weighted_rows(st.aux[cut], ws, same))


def global_units_stacked(st: StackedState, weights=None) -> list[dict]:
    """:func:`.engine.global_units` on stacked state (new tensors)."""
    w = _weights(st.num_devices, weights)
    everyone = list(range(st.num_devices))
    return [weighted_rows(d, w, everyone) if j < st.per_device else {k: v.clone() for k, v in d.items()}
            for j, d in enumerate(st.per)]


def global_model_stacked(st: StackedState, weights=None) -> nn.Sequential:
    """:func:`.engine.global_model` on stacked state."""
    model = copy.deepcopy(st.model)
    for unit, d in zip(model, global_units_stacked(st, weights)):
        unit.load_state_dict(d)
    return model.eval()


def set_decision_stacked(st: StackedState, b, cuts, weights=None, seed: int = 0) -> None:
    """:func:`.engine.set_decision` on stacked state: devices whose cut changes restart from the global model with
    fresh optimizer state (and the averaged head of the devices already at the new cut, else a new one)."""
    check_instance("st", st, StackedState, "a StackedState (fedlib.split.stacked.init_stacked)")
    b, cuts = validate_decision(b, cuts, st.num_devices, st.num_units, names=("b", "cuts"))
    check_int("seed", seed, 0)
    _weights(st.num_devices, weights)
    changed = cuts != st.cuts
    st.b = b
    if not changed.any():
        return
    n = st.num_devices
    glob, old_p, old_cuts = global_units_stacked(st, weights), st.per_device, st.cuts
    st.cuts = cuts
    new_p = st.per_device
    redo = list(np.flatnonzero(changed))
    for j in range(st.num_units):
        if j < new_p and j < old_p:
            if redo:
                assign_rows(st.per[j], redo, glob[j])
                for s in st.opt[j].values():
                    for v in s.values():
                        v[redo] = 0
                st.steps[j][redo] = 0
        elif j < new_p:                                    # shared -> per device: every row the global unit
            st.per[j] = _stack(glob[j], n)
            st.opt[j] = _zeros_opt(st, st.per[j], st.pnames[j])
            st.steps[j] = np.zeros(n, dtype=np.int64)
        elif j < old_p:                                    # per device -> shared: the global average
            st.per[j], st.opt[j], st.steps[j] = glob[j], {}, None
    if st.local_loss:
        for i in redo:
            c = int(cuts[i])
            if c == st.num_units:
                continue
            same = [k for k in range(n) if old_cuts[k] == c and not changed[k]]
            if same:
                head = weighted_rows(st.aux[c], np.full(len(same), 1 / len(same)), same)
            else:
                head = _new_aux(_HeadMaker(st), c, seed)
            if c not in st.aux:
                _new_cut(st, c, head)
            assign_rows(st.aux[c], [i], head)
            for s in st.aux_opt[c].values():
                for v in s.values():
                    v[i] = 0
            st.aux_steps[c][i] = 0


class _HeadMaker:
    """The attributes :func:`.engine._new_aux` reads, for a :class:`StackedState`."""

    def __init__(self, st: StackedState):
        self.aux_head, self.smashed_shapes, self.aux_templates = st.aux_head, st.smashed_shapes, st.aux_templates
        self.units = [[{"any": next(iter(st.per[0].values()))}]]
