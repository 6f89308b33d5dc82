"""The batched forward of stacked units (:mod:`.stacked`): G devices' copies of one unit in one call, without
``vmap``, in the *grouped layout*.

Grouped layout: the G devices' activations side by side along the channel axis, ``[b, G·C, H, W]`` (device g's
channels are ``g·C .. g·C + C - 1``), and ``[b, G·F]`` after a flatten. Every layer then runs once for all G:

- ``Conv2d``: one grouped convolution (weights ``[G, C_out, C_in, k, k]`` seen as ``[G·C_out, C_in, k, k]``,
  ``groups = G``);
- ``BatchNorm`` (``nn.BatchNorm2d`` or the engine's :class:`.ops.GroupBatchNorm`, which is plain batch norm for one
  device): one ``F.batch_norm`` over the G·C channels, so each device's mini-batch is normalised with its own
  statistics and its running statistics ``[G, C]`` are updated in place (as G separate layers would);
- ``Linear``: one batched matrix product ``[G, b, in] @ [G, in, out]``;
- ReLU, pooling, flatten and the residual additions of torchvision's blocks act per channel, so they run as they
  are.

A unit holding any other module with parameters or buffers runs through ``torch.func.vmap`` of
``functional_call`` instead (:class:`_Vmapped`), in the same layout. The templates are built once per unit
(:func:`grouped`) and called with ``functional_call``: the parameters are the stacked rows ``{name: [G, ...]}``.
"""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, vmap

from .ops import GroupBatchNorm

_PER_CHANNEL = (nn.ReLU, nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d, nn.Flatten, nn.Identity, nn.Sequential)


class _GConv(nn.Module):
    def __init__(self, conv: nn.Conv2d):
        super().__init__()
        self.weight = conv.weight
        self.bias = conv.bias
        self.stride, self.padding, self.dilation, self.groups = conv.stride, conv.padding, conv.dilation, conv.groups

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = self.weight.shape[0]
        return F.conv2d(x, self.weight.flatten(0, 1), None if self.bias is None else self.bias.flatten(),
                        self.stride, self.padding, self.dilation, self.groups * g)


class _GBatchNorm(nn.Module):
    def __init__(self, bn: nn.Module):
        super().__init__()
        if bn.momentum is None:
            raise ValueError("batch norm with momentum=None (cumulative average) has no grouped form")
        self.eps, self.momentum = bn.eps, bn.momentum
        self.weight, self.bias = bn.weight, bn.bias
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            self.register_buffer(name, getattr(bn, name))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.num_batches_tracked.add_(1)
        return F.batch_norm(x, self.running_mean.view(-1), self.running_var.view(-1), self.weight.flatten(),
                            self.bias.flatten(), True, self.momentum, self.eps)


class _GLinear(nn.Module):
    def __init__(self, lin: nn.Linear):
        super().__init__()
        self.weight, self.bias = lin.weight, lin.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g, out, inp = self.weight.shape
        h = x.view(x.shape[0], g, inp).transpose(0, 1)                           # [G, b, in]
        y = torch.bmm(h, self.weight.transpose(1, 2)) if self.bias is None else \
            torch.baddbmm(self.bias.unsqueeze(1), h, self.weight.transpose(1, 2))
        return y.transpose(0, 1).reshape(x.shape[0], g * out)


class _Vmapped(nn.Module):
    """Any other unit: ``vmap`` of ``functional_call`` over the devices, converting the layout around it."""

    def __init__(self, unit: nn.Module):
        super().__init__()
        self.unit = unit

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("_Vmapped runs through call(), not functional_call")


def _convert(unit: nn.Module) -> nn.Module | None:
    """``unit`` with its layers swapped for grouped ones (a copy), or None when it holds an unsupported layer."""
    unit = copy.deepcopy(unit)
    for name, child in list(unit.named_children()):
        if type(child) is nn.Conv2d:
            new = _GConv(child)
        elif isinstance(child, (nn.BatchNorm2d, GroupBatchNorm)) and child.weight is not None and \
                child.running_mean is not None:
            new = _GBatchNorm(child)
        elif type(child) is nn.Linear:
            new = _GLinear(child)
        elif isinstance(child, _PER_CHANNEL) or not any(True for _ in child.children()) and \
                not any(True for _ in child.parameters()) and not any(True for _ in child.buffers()):
            new = _convert(child) if isinstance(child, nn.Sequential) else child
        else:
            new = _convert(child)
        if new is None:
            return None
        setattr(unit, name, new)
    own = [p for p in unit.parameters(recurse=False)] + [b for b in unit.buffers(recurse=False)]
    return None if own and not isinstance(unit, (_GConv, _GBatchNorm, _GLinear)) else unit


def grouped(template: nn.Module) -> nn.Module:
    """The grouped-layout form of a unit template (module docstring): its layers swapped for grouped ones, or a
    :class:`_Vmapped` wrapper when it holds a layer without a grouped form. Parameter and buffer names are the
    template's."""
    unit = _convert(template)
    return _Vmapped(copy.deepcopy(template)) if unit is None else unit.train()


def call(unit: nn.Module, params: dict, x: torch.Tensor, g: int) -> torch.Tensor:
    """Run the grouped unit ``unit`` (from :func:`grouped`) for G = ``g`` devices: ``params`` ``{name: [G, ...]}``
    (parameters and buffers; buffers updated in place), ``x`` ``[b, G·C, ...]`` -> ``[b, G·C', ...]``."""
    if not isinstance(unit, _Vmapped):
        return functional_call(unit, params, (x,))
    b = x.shape[0]
    h = x.reshape(b, g, -1, *x.shape[2:]).transpose(0, 1)                     # [G, b, C, ...]
    out = vmap(lambda p, z: functional_call(unit.unit, p, (z,)))(params, h)
    return out.transpose(0, 1).reshape(b, -1, *out.shape[3:])


def per_device(x: torch.Tensor, g: int) -> torch.Tensor:
    """``[b, G·C, ...]`` -> ``[G, b, C, ...]`` (a view where it can be)."""
    return x.reshape(x.shape[0], g, -1, *x.shape[2:]).transpose(0, 1)


def to_grouped(h: torch.Tensor) -> torch.Tensor:
    """``[G, b, C, ...]`` -> ``[b, G·C, ...]``."""
    return h.transpose(0, 1).reshape(h.shape[1], -1, *h.shape[3:])
