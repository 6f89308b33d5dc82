"""Split-federated training engine (HASFL Sec. III, Algorithm 1; hooks for DTFL): explicit state
(:class:`SplitState`) and small functions over it, FedJAX style.

A cuttable model (``nn.Sequential`` of L units) is trained by N devices; device i has cut L_i and batch size b_i,
L_c = max_i L_i. One round (:func:`train_round`) = every device draws b_i samples from its partition and runs
forward / backward once (a1-a5):

- ``mode="common"`` (HASFL): units 1..L_c are per device (device part 1..L_i, eq. 6, and non-common server part
  L_i+1..L_c, eq. 5); units L_c+1..L (common part) are shared and updated every round by the average of the
  per-device updates, every device's gradient taken at the same round-start weights (eq. 4). Implemented as one
  optimizer step with the mean gradient (1/N Σ_i g_i) and ONE optimizer state for the common part: for SGD
  (with momentum / weight decay) this equals averaging per-device updates made with per-device momentum
  buffers (linearity; the literal reference does the latter and the tests check it); for Adam it is our
  definition (Adam on the mean gradient). Eq. 4 uses the plain mean (weights apply to eqs. 7 only).
- ``mode="copies"`` (SplitFed-V1 / DTFL): every device has its own copy of every unit and its own optimizer
  state; after each round the server copies of unit j (devices with L_i < j) are averaged with the weights.

Every ``interval`` (I) rounds :func:`aggregate` averages the client-specific models (units 1..L_c; all units
in ``copies`` mode) with the weights (eq. 7); per-device optimizer state is local and kept. BN: see
:mod:`.ops`. ``local_loss=True`` (DTFL's): device i trains units 1..L_i with a loss of its own at the cut and no
gradient comes back; the server part trains on the detached smashed data. The engine holds each device's auxiliary
head (built by ``aux_head(cut, smashed_shape)``) and its optimizer state; the step at the cut, what the head
computes and what the server receives, is the caller's, passed to each round as a :class:`LocalLossStep` (DTFL's:
:mod:`fedlib.dtfl.local_loss`; the engine imports no paper). :func:`set_decision` changes batch sizes and cuts
between rounds.

Grouping (2 CPU cores): per-device units (different weights) run in a plain per-device loop (``vmap`` over stacked
weights ran at 0.8x such a loop on 2 cores: the run log).
Shared units run once over the concatenated smashed data of all devices, with per-device BN statistics
(:class:`.ops.GroupBatchNorm`; one native batch-norm call when the b_i are equal, a loop otherwise).
``channels_last=True`` stores conv weights NHWC (1.25-1.3x on CPU, measured; the benchmark uses it).
``python -m fedlib.lab.bench sfl`` (:func:`fedlib.lab.split.bench.bench_sfl`) compares the engine with the literal loop.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, Protocol, runtime_checkable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from ..core.seeding import resolve_device
from ..core.validate import ParameterTypeError, check_array, check_bool, check_callable, check_instance, check_int, check_list
from . import ops
from .config import SplitConfig, validate_decision


@runtime_checkable
class LocalLossStep(Protocol):
    """The step at the cut of a local-loss round (``SplitConfig.local_loss``), one implementation per backend
    (:mod:`fedlib.dtfl.local_loss`: ``LoopLocalLoss`` for this module's :func:`train_round`, ``StackedLocalLoss``
    for :func:`fedlib.split.stacked.train_round_stacked`).

    A round calls it where the client-side part of the devices ``members[at]`` ends at cut ``cut`` (1 <= cut < L),
    once per device in the loop backend (``members = [i]``, ``at = [0]``) and once per group of equal batch size
    in the stacked backend, with:

    - ``st``: the backend's state (:class:`SplitState` / :class:`fedlib.split.stacked.StackedState`); the
      auxiliary heads' templates are ``st.aux_templates[cut]``;
    - ``x``: the smashed data with gradient, ``[b, C, H, W]`` of device ``members[0]`` (loop) or the group's
      grouped layout ``[b, G·C, H, W]`` with G = ``len(members)`` (stacked);
    - ``y``: the labels, ``[b]`` (loop) or ``[G, b]`` (stacked); ``xs``, ``ys``: every device's batch of the round;
    - ``heads``: the auxiliary heads' parameters and buffers the loss is taken through, ``{name: tensor}``
      (loop: device i's; stacked: every row of the cut's stack, ``[N, ...]``), already marked for gradients.

    Returns ``(x, terms)``: the smashed data the server part receives (``x``'s shape; detached for the members at
    ``cut``, the other devices of a group unchanged) and the members' client losses (scalars, summed into the round's
    loss with the main loss; their gradients train units 1..cut and the heads)."""

    def __call__(self, st, cut: int, members: list, at: np.ndarray, x: torch.Tensor, y: torch.Tensor, xs: list,
                 ys: list, heads: dict) -> tuple[torch.Tensor, list]: ...


@dataclass
class SplitState:
    """Everything a run changes. ``units[j][k]``: parameters + buffers (dict) of copy k of unit j+1, where
    k = device for per-device units (j < ``per_device``) and the single shared copy k = 0 otherwise;
    ``opt[j][k]``: per-tensor optimizer state of that copy. ``aux[i]``: device i's auxiliary head (or None).
    ``b``, ``cuts``: ``[N]`` int arrays. ``smashed_shapes[j]``: per-sample output shape of unit j+1 (the last:
    ``(num_classes,)``). ``input_shape``: ``(C, H, W)`` of one sample. ``samples``: Σ over rounds of Σ_i b_i."""

    model: nn.Sequential
    templates: list
    pnames: list
    units: list
    opt: list
    b: np.ndarray
    cuts: np.ndarray
    mode: str
    opt_cfg: dict
    local_loss: bool = False
    aux: list = field(default_factory=list)
    aux_opt: list = field(default_factory=list)
    aux_head: Callable | None = None
    aux_templates: dict = field(default_factory=dict)
    smashed_shapes: list = field(default_factory=list)
    input_shape: tuple = ()
    round: int = 0
    samples: int = 0

    @property
    def num_devices(self) -> int:
        return len(self.b)

    @property
    def num_units(self) -> int:
        return len(self.templates)

    @property
    def per_device(self) -> int:
        """Units held per device: L_c (common mode) or L (copies mode)."""
        return int(self.cuts.max()) if self.mode == "common" else self.num_units


def init_state(cfg: SplitConfig, model: nn.Sequential, input_shape: tuple, device: torch.device | str = "cpu",
               aux_head: Callable | None = None, channels_last: bool = False) -> SplitState:
    """Initial state: every device starts from ``model``'s weights (the global model).

    Args:
        cfg: the run. model: the cuttable model (L = ``len(model)`` units), already initialised; it is not
            changed (the state keeps a copy on ``device``, in eval mode, as the template of :func:`global_model`).
        input_shape: ``(C, H, W)`` of one sample.
        aux_head: ``aux_head(cut, smashed_shape) -> nn.Module`` (per-sample shape ``(C, H, W)``), required with
            ``cfg.local_loss``; heads of one cut start equal (built under the ``model`` stream of ``cfg.seed``).
        channels_last: store conv weights channels-last (NHWC): 1.25-1.3x faster on CPU (measured), but other
            conv algorithms, so only float-close (~1e-4 after a few rounds at tiny BN batches) to the default.

    Raises:
        ValueError: ``local_loss`` without ``aux_head``.
    """
    check_instance("cfg", cfg, SplitConfig)
    check_instance("model", model, nn.Sequential, "an nn.Sequential of cuttable units")
    if len(check_list("input_shape", input_shape, lambda k, v: check_int(k, v, 1))) != 3:
        raise ValueError(f"input_shape must be (C, H, W) of one sample, got {input_shape!r}")
    check_callable("aux_head", aux_head)
    check_bool("channels_last", channels_last)
    if cfg.local_loss and aux_head is None:
        raise ValueError("local_loss=True needs an aux_head(cut, smashed_shape) factory")
    dev = resolve_device(device)
    model = copy.deepcopy(model).to(dev)        # the caller's model keeps its device, mode and tensors
    with torch.no_grad():
        h, shapes = torch.zeros(2, *input_shape, device=dev), []
        for unit in model.eval():
            h = unit(h)
            shapes.append(tuple(h.shape[1:]))
    opt_cfg = {"name": cfg.optimizer, "lr": cfg.lr, "momentum": cfg.momentum, "weight_decay": cfg.weight_decay,
               "betas": cfg.betas, "eps": cfg.eps}
    b, cuts = validate_decision(cfg.batch_sizes, cfg.cuts, cfg.num_devices, len(model))
    templates = [ops.engine_template(u) for u in model]
    pnames = [[k for k, _ in t.named_parameters()] for t in templates]
    st = SplitState(model, templates, pnames, [], [], b, cuts, cfg.mode, opt_cfg,
                    cfg.local_loss, aux_head=aux_head, smashed_shapes=shapes, input_shape=tuple(input_shape))
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    glob = [{k: v.contiguous(memory_format=fmt) if v.dim() == 4 else v for k, v in ops.unit_state(u, dev).items()}
            for u in model]
    p = st.per_device
    st.units = [[_clone(g) for _ in range(cfg.num_devices if j < p else 1)] for j, g in enumerate(glob)]
    st.opt = [[{} for _ in copies] for copies in st.units]
    st.aux = [_new_aux(st, int(c), cfg.seed) if cfg.local_loss and c < len(model) else None for c in cuts]
    st.aux_opt = [{} for _ in cuts]
    return st


def _clone(d: dict) -> dict:
    return {k: v.detach().clone() for k, v in d.items()}


def _new_aux(st: SplitState, cut: int, seed: int) -> dict:
    from ..core.seeding import torch_generator
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_generator(seed, "model").initial_seed() + cut)
        head = st.aux_head(cut, st.smashed_shapes[cut - 1])
    dev = next(iter(st.units[0][0].values())).device
    st.aux_templates.setdefault(cut, ops.engine_template(head).to(dev))
    return ops.unit_state(head, dev)


def train_round(st: SplitState, xs: list, ys: list, weights=None, sync_copies: bool = True,
                local_step: LocalLossStep | None = None) -> float:
    """One round (Algorithm 1, a1-a5, eqs. 4-6), in place; returns the mean over devices of the main loss.

    Args:
        xs: per device ``[b_i, C, H, W]`` inputs; ys: per device ``[b_i]`` int64 labels (device order). b_i is
            the size of the batch given (it may differ from the decision's ``st.b``, e.g. DTFL's partial last
            batch of an epoch): the per-device BN statistics of shared units, the losses and ``st.samples`` use
            it. In ``copies`` mode an entry may be ``None`` (both xs[i] and ys[i]): device i sits this step out
            (its copies and optimizer state stay untouched; DTFL's clients with fewer local batches in an epoch).
        weights: ``[N]`` aggregation weights (sum 1) for the per-round averaging of server copies
            (``copies`` mode); uniform when None. The common part always uses the plain mean (eq. 4).
        sync_copies: ``copies`` mode only: average the server copies after this step (SplitFed-V1). DTFL
            passes False (server copies stay per client for a whole local epoch; :func:`aggregate` then
            averages every unit, eq. 1).
        local_step: the step at the cut (:class:`LocalLossStep`; DTFL's is
            :class:`fedlib.dtfl.local_loss.LoopLocalLoss`, with its privacy hooks), required with ``local_loss``
            and refused without.

    Raises:
        ValueError: ``xs`` / ``ys`` not N entries each, a device whose xs[i] and ys[i] differ in size (or only one
            is ``None``) or are empty, a ``None`` entry outside ``copies`` mode, every entry ``None``, ``weights``
            (when given, in any mode) not N non-negative finite numbers summing to 1, a ``local_step`` missing with
            ``local_loss`` or given without it; an input whose per-sample shape is not the model's ``(C, H, W)`` or
            on another device than the model, labels that are not 1-D integers in 0..num_classes-1 (named with the
            device).
        ParameterTypeError: an input that is not a tensor or not of the model's dtype (e.g. float64 inputs to a
            float32 model).
    """
    check_instance("st", st, SplitState, "a SplitState (fedlib.split.init_state)")
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
    _check_batches(st, xs, ys, active, st.units[0][0][st.pnames[0][0]])
    leaves, owners = [], []   # trainable tensors and (unit, copy) / ("aux", i)
    for j in range(L):
        for k, d in enumerate(st.units[j]):
            if len(st.units[j]) > 1 and xs[k] is None:
                continue
            for name in st.pnames[j]:
                leaves.append(d[name].requires_grad_(True))
                owners.append((j, k, name))
    aux_terms, hs = [], []
    for i in active:
        h, cut = xs[i], int(st.cuts[i])
        for j in range(p):
            h = functional_call(st.templates[j], st.units[j][i], (h,))
            if st.local_loss and j + 1 == cut and cut < L:
                for name, _ in st.aux_templates[cut].named_parameters():
                    leaves.append(st.aux[i][name].requires_grad_(True))
                    owners.append(("aux", i, name))
                h, terms = local_step(st, cut, [i], np.zeros(1, dtype=np.int64), h, ys[i], xs, ys, st.aux[i])
                aux_terms += terms
        hs.append(h)
    y = torch.cat([ys[i] for i in active])
    if p < L:
        with ops.segmented(st.templates[p:L], tuple(int(h.shape[0]) for h in hs)):  # the batches given (not st.b)
            h = torch.cat(hs)
            for j in range(p, L):
                h = functional_call(st.templates[j], st.units[j][0], (h,))
    else:
        h = torch.cat(hs)
    ce = F.cross_entropy(h, y, reduction="none")
    losses = torch.stack([c.mean() for c in ce.split([len(ys[i]) for i in active])])
    total = losses.sum() + (sum(aux_terms) if aux_terms else 0.0)
    grads = torch.autograd.grad(total, leaves)
    grads = [g / n if own[0] != "aux" and own[0] >= p else g   # eq. 4: mean of the per-device gradients
             for g, own in zip(grads, owners)]
    states = [(st.aux_opt[k] if j == "aux" else st.opt[j][k]).setdefault(name, {}) for j, k, name in owners]
    for t in leaves:
        t.requires_grad_(False)
    ops.optimizer_step(leaves, grads, states, st.opt_cfg)
    if st.mode == "copies" and sync_copies:
        _average_server_copies(st, weights)
    st.round += 1
    st.samples += sum(len(ys[i]) for i in active)
    return float(losses.detach().mean())


def _check_round(mode: str, n: int, active: list, weights, local_step, local_loss: bool) -> None:
    """A round's arguments beyond the batches, checked before any tensor is touched (both backends): devices
    sitting out only in ``copies`` mode and at least one device training, aggregation weights valid whenever
    given (in every mode, though only ``copies`` mode uses them), a local-loss step with local loss only."""
    if not active:
        raise ValueError("xs: at least one device must train (every entry is None)")
    if len(active) < n and mode != "copies":
        raise ValueError("xs: every device must train in every round outside copies mode (no None entries)")
    if weights is not None:
        _weights(n, weights)
    if local_step is not None and not local_loss:
        raise ValueError("local_step needs local_loss=True (no gradient crosses the cut)")
    if local_loss and not isinstance(local_step, LocalLossStep):
        raise ValueError(f"local_loss=True needs a local_step, the step at the cut (a fedlib.split.LocalLossStep, "
                         f"e.g. fedlib.dtfl.local_loss.LoopLocalLoss()), got {local_step!r}")


def _check_batches(st: SplitState, xs: list, ys: list, active: list, like: torch.Tensor) -> None:
    """The devices' inputs are tensors of the model's dtype and device (``like``: one of its parameters) and
    per-sample shape, their labels 1-D int64 class indices of the model's output on the same device (one
    reduction over all labels: a single host sync per step on a GPU)."""
    classes = st.smashed_shapes[-1][0] if len(st.smashed_shapes[-1]) == 1 else None
    for i in active:
        x, y = xs[i], ys[i]
        if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
            raise ParameterTypeError(f"xs[{i}] and ys[{i}] must be torch tensors, got {type(x).__name__} and "
                                     f"{type(y).__name__}")
        if x.dtype != like.dtype:
            raise ParameterTypeError(f"xs[{i}] must have the model's dtype {like.dtype}, got {x.dtype} (convert the "
                                     f"inputs, or build the model in {x.dtype})")
        if x.device != like.device or y.device != like.device:
            raise ValueError(f"xs[{i}] and ys[{i}] must be on the model's device {like.device}, got {x.device} and "
                             f"{y.device}")
        if st.input_shape and tuple(x.shape[1:]) != st.input_shape:
            raise ValueError(f"xs[{i}] must be a [b, C, H, W] batch of the model's input, {st.input_shape} per "
                             f"sample, got shape {tuple(x.shape)}")
        if y.dim() != 1 or y.dtype != torch.int64:
            raise ValueError(f"ys[{i}] must be a 1-D int64 tensor of class labels, got {y.dtype} of shape "
                             f"{tuple(y.shape)}")
    if classes is not None:
        y = torch.cat([ys[i].reshape(-1) for i in active])
        if bool(((y < 0) | (y >= classes)).any()):
            bad = [i for i in active if bool(((ys[i] < 0) | (ys[i] >= classes)).any())]
            raise ValueError(f"ys: labels must be classes 0..{classes - 1} of the model's {classes} outputs; "
                             f"device {bad[0]} has {sorted(set(ys[bad[0]].tolist()) - set(range(classes)))[:5]}")


def _weights(n: int, weights) -> np.ndarray:
    w = np.full(n, 1.0 / n) if weights is None else check_array("weights", weights, low=0)
    if w.shape != (n,) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be {n} non-negative numbers summing to 1, got {weights!r}")
    return w


def _assign(copies: list, idx, avg: dict) -> None:
    with torch.no_grad():
        for i in idx:
            for k, v in avg.items():
                copies[i][k].copy_(v)


def _average_server_copies(st: SplitState, weights) -> None:
    w = _weights(st.num_devices, weights)
    for j in range(st.num_units):
        holders = [i for i in range(st.num_devices) if st.cuts[i] < j + 1]
        if len(holders) > 1:
            wh = w[holders] / w[holders].sum() if w[holders].sum() > 0 else np.full(len(holders), 1 / len(holders))
            _assign(st.units[j], holders, ops.weighted_mean([st.units[j][i] for i in holders], wh))


def aggregate(st: SplitState, weights=None) -> None:
    """Fed-server aggregation (eq. 7), in place: the client-specific models (units 1..L_c; every unit in
    ``copies`` mode), BN running statistics included, become their weighted average; auxiliary heads are
    averaged among the devices with the same cut (DTFL). Optimizer state stays per device (never sent).

    Raises:
        ValueError: weights not N non-negative numbers summing to 1.
    """
    w = _weights(st.num_devices, weights)
    everyone = range(st.num_devices)
    for j in range(st.per_device):
        _assign(st.units[j], everyone, ops.weighted_mean(st.units[j], w))
    if st.local_loss:
        for cut in set(int(c) for c in st.cuts if c < st.num_units):
            same = [i for i in everyone if st.cuts[i] == cut]
            ws = w[same] / w[same].sum() if w[same].sum() > 0 else np.full(len(same), 1 / len(same))
            _assign(st.aux, same, ops.weighted_mean([st.aux[i] for i in same], ws))


def global_units(st: SplitState, weights=None) -> list[dict]:
    """The global model as per-unit dicts: weighted average of the per-device copies of units 1..L_c
    (device parts and non-common server parts alike, as eq. 7 forms them) + the common part (copies mode:
    every unit averaged). Returns new tensors."""
    w = _weights(st.num_devices, weights)
    return [ops.weighted_mean(c, w if len(c) > 1 else [1.0]) for c in st.units]


def global_model(st: SplitState, weights=None) -> nn.Sequential:
    """:func:`global_units` loaded into a copy of the model (ordinary BN), in eval mode."""
    model = copy.deepcopy(st.model)
    for unit, d in zip(model, global_units(st, weights)):
        unit.load_state_dict(d)
    return model.eval()


def set_decision(st: SplitState, b, cuts, weights=None, seed: int = 0) -> None:
    """Reassign batch sizes and cuts between rounds (HASFL recomputes them every I rounds; DTFL's tiers), in
    place. A device whose cut changes gets its client-specific model rebuilt from the current global model
    (:func:`global_units`) and fresh optimizer state (and, with local loss, the average auxiliary head of the
    devices already at its new cut, else a new one). When L_c changes, units that become per-device are copied
    from the shared copy and units that become shared take the global average; their optimizer state restarts.

    Raises:
        ValueError: length differs from N, b_i < 1, a cut outside 1..L.
    """
    check_instance("st", st, SplitState, "a SplitState (fedlib.split.init_state)")
    b, cuts = validate_decision(b, cuts, st.num_devices, st.num_units, names=("b", "cuts"))
    check_int("seed", seed, 0)
    _weights(st.num_devices, weights)
    changed = cuts != st.cuts
    st.b = b
    if not changed.any():
        return
    glob, old_p, old_cuts = global_units(st, weights), st.per_device, st.cuts
    st.cuts = cuts
    new_p = st.per_device
    for j in range(st.num_units):
        if j < new_p:
            keep = [j < old_p and not changed[i] for i in range(st.num_devices)]
            st.units[j] = [st.units[j][i] if keep[i] else _clone(glob[j]) for i in range(st.num_devices)]
            st.opt[j] = [st.opt[j][i] if keep[i] else {} for i in range(st.num_devices)]
        elif j < old_p:
            st.units[j], st.opt[j] = [_clone(glob[j])], [{}]
    if st.local_loss:
        for i in np.flatnonzero(changed):
            c = int(cuts[i])
            same = [k for k in range(st.num_devices) if old_cuts[k] == c and not changed[k]]
            if c == st.num_units:
                st.aux[i] = None
            elif same:
                st.aux[i] = ops.weighted_mean([st.aux[m] for m in same], np.full(len(same), 1 / len(same)))
            else:
                st.aux[i] = _new_aux(st, c, seed)
            st.aux_opt[i] = {}
