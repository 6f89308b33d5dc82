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

Options of :func:`grouped` (the stacked backend's variants, :data:`fedlib.split.backends.STACKED_VARIANTS`):

- ``channels_last``: every grouped convolution takes its input and its ``[G·C_out, C_in, k, k]`` weight in
  channels-last (NHWC) storage; batch norm, ReLU, pooling and the residual additions keep that storage, so a unit's
  activations stay NHWC between convolutions. The arithmetic is the same, its summation order the kernel's
  (float-close to the default, not bit-identical).
- ``compile_mode``: the unit's call runs through ``torch.compile`` (``"default"``, or ``"reduce-overhead"``,
  which adds CUDA graphs where the compiled graph allows them).

Prior art: running many models of one shape as one wider model is HFTA's horizontal fusion (Wang et al., "Horizontally
Fused Training Array", MLSys 2021: grouped convolutions and batch norm for models trained at once); torch.func's model
ensembling (``stack_module_state`` + ``vmap`` of ``functional_call``) is the general form, used here as the fallback
(:class:`_Vmapped`). Neither is federated: here the G models are G devices' copies of one unit, averaged by the
round's aggregation.
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
    """G devices' copies of one ``nn.Conv2d`` (C_in -> C_out channels, ``groups`` of its own) as one convolution
    with ``groups · G`` groups. Parameters (set by ``functional_call``): ``weight`` ``[G, C_out, C_in / groups, k,
    k]``, ``bias`` ``[G, C_out]`` or None. ``forward``: ``x`` ``[b, G·C_in, H, W]`` -> ``[b, G·C_out, H', W']``
    (device g's output channels ``g·C_out .. g·C_out + C_out - 1``). With ``channels_last``, input and weight in
    NHWC storage (module docstring)."""

    def __init__(self, conv: nn.Conv2d, channels_last: bool = False):
        super().__init__()
        self.weight = conv.weight
        self.bias = conv.bias
        self.stride, self.padding, self.dilation, self.groups = conv.stride, conv.padding, conv.dilation, conv.groups
        self.channels_last = channels_last

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = self.weight.shape[0]
        w = self.weight.flatten(0, 1)
        if self.channels_last:
            x, w = x.contiguous(memory_format=torch.channels_last), w.contiguous(memory_format=torch.channels_last)
        return F.conv2d(x, w, None if self.bias is None else self.bias.flatten(),
                        self.stride, self.padding, self.dilation, self.groups * g)


class _GBatchNorm(nn.Module):
    """G devices' copies of one batch norm over C channels as one ``F.batch_norm`` over G·C channels (training
    mode: each device's batch normalised with its own statistics). Parameters and buffers: ``weight``, ``bias``,
    ``running_mean``, ``running_var`` ``[G, C]`` (the running statistics updated in place, as G layers would),
    ``num_batches_tracked`` ``[G]``. ``forward``: ``x`` ``[b, G·C, ...]`` -> the same shape."""

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
    """G devices' copies of one ``nn.Linear`` (in -> out features) as one batched matrix product. Parameters:
    ``weight`` ``[G, out, in]``, ``bias`` ``[G, out]`` or None. ``forward``: ``x`` ``[b, G·in]`` (device g's
    features ``g·in .. g·in + in - 1``) -> ``[b, G·out]``."""

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


def _swap(unit: nn.Module, channels_last: bool = False) -> bool:
    """Swap ``unit``'s layers for grouped ones, in place; False when it holds a layer without a grouped form (any
    other layer, a flatten that is not ``Flatten(1, -1)``, a batch norm without affine parameters, running
    statistics or a momentum, or a container whose forward we cannot vouch for)."""
    if type(unit) not in _BLOCKS or any(True for _ in unit.parameters(recurse=False)) or \
            any(True for _ in unit.buffers(recurse=False)):
        return False
    for name, child in list(unit.named_children()):
        if type(child) is nn.Conv2d and child.padding_mode == "zeros":
            setattr(unit, name, _GConv(child, channels_last))
        elif isinstance(child, (nn.BatchNorm2d, GroupBatchNorm)) and child.weight is not None and \
                child.running_mean is not None and child.momentum is not None:
            setattr(unit, name, _GBatchNorm(child))
        elif type(child) is nn.Linear:
            setattr(unit, name, _GLinear(child))
        elif type(child) is nn.Flatten:
            if (child.start_dim, child.end_dim) != (1, -1):
                return False
        elif type(child) not in _PER_CHANNEL and not _swap(child, channels_last):
            return False
    return True


def grouped(template: nn.Module, channels_last: bool = False, compile_mode: str | None = None) -> nn.Module:
    """The grouped-layout form of a unit template (module docstring): its layers swapped for grouped ones, or a
    :class:`_Vmapped` wrapper when it holds a layer without a grouped form. Parameter and buffer names are the
    template's. ``channels_last``: NHWC convolutions; ``compile_mode``: None, or a ``torch.compile`` mode for the
    grouped unit's call (module docstring; the vmap fallback is never compiled).

    Raises:
        ValueError: ``compile_mode`` not None, ``"default"`` or ``"reduce-overhead"``.
    """
    if compile_mode not in (None, "default", "reduce-overhead"):
        raise ValueError(f"compile_mode must be None, 'default' or 'reduce-overhead', got {compile_mode!r}")
    key = (compile_mode, bool(channels_last), repr(template))
    if compile_mode is not None and key in _COMPILED:
        return _COMPILED[key]
    unit = copy.deepcopy(template)
    if not _swap(unit, bool(channels_last)):
        return _Vmapped(copy.deepcopy(template))
    unit.train()
    if compile_mode is not None:
        # one compiled unit per structure and process: a unit's own tensors are never read (functional_call passes
        # every parameter and buffer), so runs share it and compile once; dynamo keeps one cache entry per unit
        # structure and input shape under the one code object below, hence the raised limit
        import torch._dynamo
        torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 256)
        unit._compiled = torch.compile(lambda params, x: functional_call(unit, params, (x,)), mode=compile_mode,
                                       dynamic=False)
        _COMPILED[key] = unit
    return unit


#: compiled grouped units by (mode, channels_last, the template's repr): :func:`grouped`
_COMPILED: dict = {}


def call(unit: nn.Module, params: dict, x: torch.Tensor, g: int) -> torch.Tensor:
    """Run the grouped unit ``unit`` (from :func:`grouped`) for G = ``g`` devices: ``params`` ``{name: [G, ...]}``
    (parameters and buffers; buffers updated in place), ``x`` ``[b, G·C, ...]`` -> ``[b, G·C', ...]``."""
    compiled = unit.__dict__.get("_compiled")
    if compiled is not None:
        return compiled(params, x)
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
