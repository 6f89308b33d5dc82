"""Building blocks of the split-training engine (:mod:`.engine`): per-device batch norm over a concatenated
batch (:class:`GroupBatchNorm`), stateless unit templates, weighted averaging of parameter dicts and functional
optimizer steps with explicit state.

Batch norm (HASFL runs VGG-16 with BN; the papers say nothing about BN in split training; our choice):
every device's mini-batch is normalised with its own batch statistics, in every unit, also in the shared common
part the edge server runs (as a real deployment would: the server processes device i's smashed data on its own).
Running statistics are parameters like any other for aggregation: a shared unit's running mean / variance become
the average of the per-device EMA updates from the same round-start value, (1-m)·r + m·mean_i(μ_i) (eq. 4
applied to the statistics); per-device units keep their own, averaged by the fed server with the weights (eq. 7).
``num_batches_tracked`` counts rounds (+1 per round in shared units; averaged copies carry the same count).
"""
from __future__ import annotations

import copy
from contextlib import contextmanager

import torch
from torch.optim.adam import adam as _adam
from torch.optim.sgd import sgd as _sgd
import torch.nn.functional as F
from torch import nn

class GroupBatchNorm(nn.Module):
    """Drop-in for ``nn.BatchNorm1d/2d`` (same parameter and buffer names) that, in training mode, normalises
    each device's segment of a concatenated batch with that segment's own statistics.

    Segments are the module's ``segments`` (tuple of per-device sample counts, in batch order), set by
    :func:`segmented` around a forward of the units that hold it; with
    none or one segment it is exactly ``nn.BatchNorm``. Equal segments use one native ``F.batch_norm`` over a
    ``[b, G·C, ...]`` view (per (device, channel) statistics); unequal ones loop over the segments. Running
    statistics become the mean of the per-segment EMA updates (module docstring). Input ``[n, C, *]``.
    """

    def __init__(self, bn: nn.modules.batchnorm._BatchNorm):
        super().__init__()
        self.num_features, self.eps, self.momentum = bn.num_features, bn.eps, bn.momentum
        self.weight, self.bias = copy.deepcopy(bn.weight), copy.deepcopy(bn.bias)
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            self.register_buffer(name, copy.deepcopy(getattr(bn, name)))
        self.segments: tuple[int, ...] | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, self.eps)
        self.num_batches_tracked.add_(1)
        m = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
        seg = self.segments
        rm, rv = self.running_mean, self.running_var
        if seg is None or len(seg) == 1:
            return F.batch_norm(x, rm, rv, self.weight, self.bias, True, m, self.eps)
        g, c = len(seg), self.num_features
        if len(set(seg)) == 1:
            b = seg[0]
            xt = x.reshape(g, b, c, -1).transpose(0, 1).reshape(b, g * c, -1)
            rm_g, rv_g = rm.repeat(g), rv.repeat(g)
            out = F.batch_norm(xt, rm_g, rv_g, self.weight.repeat(g), self.bias.repeat(g), True, m, self.eps)
            rm.copy_(rm_g.view(g, c).mean(0))
            rv.copy_(rv_g.view(g, c).mean(0))
            return out.reshape(b, g, c, -1).transpose(0, 1).reshape(x.shape)
        outs, rms, rvs, start = [], [], [], 0
        for n in seg:
            rm_i, rv_i = rm.clone(), rv.clone()
            outs.append(F.batch_norm(x[start:start + n], rm_i, rv_i, self.weight, self.bias, True, m, self.eps))
            rms.append(rm_i)
            rvs.append(rv_i)
            start += n
        rm.copy_(torch.stack(rms).mean(0))
        rv.copy_(torch.stack(rvs).mean(0))
        return torch.cat(outs)


@contextmanager
def segmented(units, segments: tuple[int, ...]):
    """Inside the block, every :class:`GroupBatchNorm` in ``units`` (modules) normalises each device's segment of
    the batch with its own statistics: ``segments`` are the per-device sample counts, in batch order."""
    norms = [m for u in units for m in u.modules() if isinstance(m, GroupBatchNorm)]
    for m in norms:
        m.segments = segments
    try:
        yield
    finally:
        for m in norms:
            m.segments = None


def engine_template(unit: nn.Module) -> nn.Module:
    """A deep copy of ``unit`` in training mode with every ``BatchNorm1d/2d`` replaced by :class:`GroupBatchNorm`
    (parameter/buffer names unchanged), used stateless through ``torch.func.functional_call``."""
    unit = copy.deepcopy(unit)
    for name, child in list(unit.named_children()):
        if isinstance(child, (nn.BatchNorm1d, nn.BatchNorm2d)):
            setattr(unit, name, GroupBatchNorm(child))
        else:
            setattr(unit, name, engine_template(child))
    return unit.train()


def unit_state(unit: nn.Module, device: torch.device) -> dict[str, torch.Tensor]:
    """Parameters and buffers of ``unit`` as a flat dict of detached tensors on ``device`` (copies)."""
    out = {k: v.detach().to(device).clone() for k, v in unit.named_parameters()}
    out.update({k: v.detach().to(device).clone() for k, v in unit.named_buffers()})
    return out


def weighted_mean(dicts: list[dict[str, torch.Tensor]], weights) -> dict[str, torch.Tensor]:
    """Σ_k w_k · d_k per key (floating tensors; weights sum to 1); integer buffers (``num_batches_tracked``)
    take the first dict's value. Returns new tensors."""
    if len(dicts) == 1:
        return {k: v.clone() for k, v in dicts[0].items()}
    out = {}
    for k, v in dicts[0].items():
        if v.is_floating_point():
            w = torch.as_tensor(weights, dtype=v.dtype, device=v.device).view(-1, *[1] * v.dim())
            out[k] = (torch.stack([d[k] for d in dicts]) * w).sum(0)
        else:
            out[k] = v.clone()
    return out


def check_lr(lr) -> None:
    """Raises ``ValueError`` unless the learning rate is a finite number > 0 (``ParameterTypeError``, also a
    ``ValueError``, for a bool or a string)."""
    from ..core.validate import check_float
    check_float("lr", lr, 0, low_open=True)


def optimizer_step(params: list[torch.Tensor], grads: list[torch.Tensor], states: list[dict], opt: dict) -> None:
    """One in-place step of ``torch.optim``'s functional SGD / Adam (the same code ``torch.optim.SGD`` /
    ``Adam`` run, so a per-device ``torch.optim`` object gives the same numbers).

    Args:
        params: tensors to update (no grad). grads: their gradients. states: one dict per tensor, filled on the
            first call (SGD: ``momentum_buffer``; Adam: ``exp_avg``, ``exp_avg_sq``, ``step``).
        opt: ``{"name": "sgd"|"adam", "lr", "momentum", "weight_decay", "betas", "eps"}``.
    """
    if not params:
        return
    with torch.no_grad():
        if opt["name"] == "sgd":
            bufs = [s.get("momentum_buffer") for s in states]
            _sgd(params, grads, bufs, weight_decay=opt["weight_decay"], momentum=opt["momentum"],
                                lr=opt["lr"], dampening=0.0, nesterov=False, maximize=False, foreach=False)
            if opt["momentum"]:
                for s, b in zip(states, bufs):
                    s["momentum_buffer"] = b
            return
        for s, p in zip(states, params):
            if not s:
                s.update(exp_avg=torch.zeros_like(p), exp_avg_sq=torch.zeros_like(p), step=torch.tensor(0.0))
        _adam(params, grads, [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states], [],
                              [s["step"] for s in states], foreach=False, amsgrad=False, beta1=opt["betas"][0],
                              beta2=opt["betas"][1], lr=opt["lr"], weight_decay=opt["weight_decay"], eps=opt["eps"],
                              maximize=False)
