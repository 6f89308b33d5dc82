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
- ReLU, pooling, ``Flatten(1)`` and the residual additions of torchvision's blocks act per channel, so they run as
  they are.

A unit holding any other layer (with parameters or without: a softmax over channels would mix the devices), or a
container other than ``nn.Sequential`` and torchvision's ``BasicBlock`` / ``Bottleneck``, runs through
``torch.func.vmap`` of ``functional_call`` instead (:class:`_Vmapped`), in the same layout. The templates are built once per unit
(:func:`grouped`) and called with ``functional_call``: the parameters are the stacked rows ``{name: [G, ...]}``.
"""
from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, vmap

from torchvision.models.resnet import BasicBlock, Bottleneck

from .ops import GroupBatchNorm

#: layers without parameters that act on each channel alone (so on each device alone in the grouped layout)
_PER_CHANNEL = (nn.ReLU, nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d, nn.Identity)
#: containers whose own forward only chains its children, adds residuals and applies per-channel ReLUs (exact
#: types: a subclass may override forward)
_BLOCKS = (nn.Sequential, Bottleneck, BasicBlock)


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


def _swap(unit: nn.Module) -> bool:
    """Swap ``unit``'s layers for grouped ones, in place; False when it holds a layer without a grouped form (any
    other layer, a flatten that is not ``Flatten(1, -1)``, a batch norm without affine parameters, running
    statistics or a momentum, or a container whose forward we cannot vouch for)."""
    if type(unit) not in _BLOCKS or any(True for _ in unit.parameters(recurse=False)) or \
            any(True for _ in unit.buffers(recurse=False)):
        return False
    for name, child in list(unit.named_children()):
        if type(child) is nn.Conv2d and child.padding_mode == "zeros":
            setattr(unit, name, _GConv(child))
        elif isinstance(child, (nn.BatchNorm2d, GroupBatchNorm)) and child.weight is not None and \
                child.running_mean is not None and child.momentum is not None:
            setattr(unit, name, _GBatchNorm(child))
        elif type(child) is nn.Linear:
            setattr(unit, name, _GLinear(child))
        elif type(child) is nn.Flatten:
            if (child.start_dim, child.end_dim) != (1, -1):
                return False
        elif type(child) not in _PER_CHANNEL and not _swap(child):
            return False
    return True


def grouped(template: nn.Module) -> nn.Module:
    """The grouped-layout form of a unit template (module docstring): its layers swapped for grouped ones, or a
    :class:`_Vmapped` wrapper when it holds a layer without a grouped form. Parameter and buffer names are the
    template's."""
    unit = copy.deepcopy(template)
    return unit.train() if _swap(unit) else _Vmapped(copy.deepcopy(template))


def call(unit: nn.Module, params: dict, x: torch.Tensor, g: int) -> torch.Tensor:
    """Run the grouped unit ``unit`` (from :func:`grouped`) for G = ``g`` devices: ``params`` ``{name: [G, ...]}``
    (parameters and buffers; buffers updated in place), ``x`` ``[b, G·C, ...]`` -> ``[b, G·C', ...]``."""
    if not isinstance(unit, _Vmapped):
        return functional_call(unit, params, (x,))
    out = vmap(lambda p, z: functional_call(unit.unit, p, (z,)))(params, per_device(x, g))
    return to_grouped(out)


def per_device(x: torch.Tensor, g: int) -> torch.Tensor:
    """``[b, G·C, ...]`` -> ``[G, b, C, ...]`` (a view where it can be)."""
    return x.reshape(x.shape[0], g, -1, *x.shape[2:]).transpose(0, 1)


def to_grouped(h: torch.Tensor) -> torch.Tensor:
    """``[G, b, C, ...]`` -> ``[b, G·C, ...]``."""
    return h.transpose(0, 1).reshape(h.shape[1], -1, *h.shape[3:])
