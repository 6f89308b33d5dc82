"""Cuttable models for split learning and their measured layer profiles.

A cuttable model is an ``nn.Sequential`` of L units; cut layer j (1..L) puts units 1..j on the edge device
(client-side part) and j+1..L on the server. Built from torchvision's building blocks:

- :func:`vgg16`: VGG-16 with batch norm (torchvision ``vgg.make_layers(cfgs["D"], batch_norm=True)``): 13 conv
  units (conv-BN-ReLU, with the following max-pool folded into units 2, 4, 7, 10, 13) + 3 fully connected
  units (HASFL Sec. VII: "13 convolution layers and 3 fully connected layers"). CIFAR adaptation (choice):
  the classifier is 512·s² → 512 → 512 → classes (s = spatial size after the 5 pools, 1 for 32×32) instead of
  ImageNet's 4096-wide head; pools use ``ceil_mode=True`` so 28×28 inputs work (28→14→7→4→2→1).
- :func:`resnet18`: torchvision ResNet-18 with the usual CIFAR stem (3×3 stride-1 conv, no max-pool): units are
  the stem, the 8 basic blocks and the head (average pool + FC): L = 10.

:func:`profile_model` measures, per cut j, the per-sample quantities of HASFL Sec. V-A (spec "Latency model")
with ``torch.utils.flop_counter.FlopCounterMode`` on the real modules.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch
import torchvision
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

#: optimizer state per parameter, in parameters: SGD none, momentum one buffer, Adam two moments.
OPTIMIZER_STATE = {"sgd": 0, "momentum": 1, "adam": 2}


def _check_shape(in_channels: int, image_size: int, num_classes: int) -> None:
    for name, value, low in (("in_channels", in_channels, 1), ("image_size", image_size, 8),
                             ("num_classes", num_classes, 2)):
        if not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def vgg16(in_channels: int = 3, image_size: int = 32, num_classes: int = 10, fc_width: int = 512) -> nn.Sequential:
    """VGG-16 (BN) as 16 cuttable units; see the module docstring for the CIFAR adaptation.

    Raises:
        ValueError: image smaller than 8 pixels, fewer than 2 classes, non-positive channels.
    """
    _check_shape(in_channels, image_size, num_classes)
    feats = torchvision.models.vgg.make_layers(torchvision.models.vgg.cfgs["D"], batch_norm=True)
    units, current = [], []
    first = True
    for m in feats:
        if isinstance(m, nn.Conv2d) and current:
            units.append(nn.Sequential(*current))
            current = []
        if isinstance(m, nn.Conv2d) and first:  # adapt the input channels
            m = nn.Conv2d(in_channels, m.out_channels, kernel_size=3, padding=1)
            first = False
        if isinstance(m, nn.MaxPool2d):
            m = nn.MaxPool2d(kernel_size=2, stride=2, ceil_mode=True)
        current.append(m)
    units.append(nn.Sequential(*current))
    side = image_size
    for _ in range(5):
        side = -(-side // 2)
    flat = 512 * side * side
    units += [nn.Sequential(nn.Flatten(), nn.Linear(flat, fc_width), nn.ReLU(inplace=True)),
              nn.Sequential(nn.Linear(fc_width, fc_width), nn.ReLU(inplace=True)),
              nn.Sequential(nn.Linear(fc_width, num_classes))]
    return nn.Sequential(*units)


def resnet18(in_channels: int = 3, image_size: int = 32, num_classes: int = 100) -> nn.Sequential:
    """CIFAR ResNet-18 as 10 cuttable units: stem, 8 basic blocks, head (avg-pool + FC).

    torchvision's ``resnet18`` with ``conv1`` replaced by a 3×3 stride-1 convolution and no max-pool (the usual
    CIFAR adaptation; 11,220,132 parameters for 100 classes).
    """
    _check_shape(in_channels, image_size, num_classes)
    net = torchvision.models.resnet18(num_classes=num_classes)
    net.conv1 = nn.Conv2d(in_channels, 64, kernel_size=3, stride=1, padding=1, bias=False)
    units = [nn.Sequential(net.conv1, net.bn1, net.relu)]
    for stage in (net.layer1, net.layer2, net.layer3, net.layer4):
        units += list(stage)
    units.append(nn.Sequential(net.avgpool, nn.Flatten(), net.fc))
    return nn.Sequential(*units)


MODELS = {"vgg16": vgg16, "resnet18": resnet18}


@dataclass(frozen=True)
class LayerProfile:
    """Per-sample profile of a cuttable model; every array has length L, index j-1 describes cut j.

    Units: FLOPs (multiply-add = 2), bits (fp32 = 32 bits per value).

    Attributes:
        name: model name. input_shape: ``(C, H, W)``. optimizer: state counted in ``opt_state_bits``.
        fwd_flops: ρ_j, forward FLOPs of units 1..j (cumulative).
        bwd_flops: ϖ_j, backward FLOPs of units 1..j (cumulative; unit 1 computes no input gradient).
        act_bits: ψ_j, activations at the output of unit j.
        grad_bits: χ_j, activation gradients at the output of unit j (= ψ_j).
        param_bits: δ_j, parameters of units 1..j (client-side part).
        opt_state_bits: ϑ̃_j, optimizer state of units 1..j.
        act_bits_cum: ψ̃_j = Σ_{k<=j} ψ_k. grad_bits_cum: χ̃_j = Σ_{k<=j} χ_k.
        params_per_unit: parameters of each unit (count).
    """

    name: str
    input_shape: tuple
    optimizer: str
    fwd_flops: np.ndarray
    bwd_flops: np.ndarray
    act_bits: np.ndarray
    grad_bits: np.ndarray
    param_bits: np.ndarray
    opt_state_bits: np.ndarray
    act_bits_cum: np.ndarray
    grad_bits_cum: np.ndarray
    params_per_unit: np.ndarray

    @property
    def num_layers(self) -> int:
        return len(self.fwd_flops)


def profile_model(model: nn.Sequential, input_shape: tuple[int, int, int], optimizer: str = "sgd",
                  name: str = "", batch: int = 2) -> LayerProfile:
    """Measure the per-sample profile of a cuttable model (HASFL Sec. V-A quantities ρ, ϖ, ψ, χ, δ, ϑ̃, ψ̃, χ̃).

    FLOPs are counted by ``torch.utils.flop_counter.FlopCounterMode`` on a forward and a backward pass of each
    unit separately (a batch of ``batch`` samples, divided by ``batch``; BN needs >= 2 in training mode); only
    operations the counter knows (convolutions, matmuls) are counted, element-wise work is not.

    Args:
        model: ``nn.Sequential`` of units. input_shape: ``(C, H, W)`` of one sample.
        optimizer: ``"sgd"``, ``"momentum"`` or ``"adam"`` (state bits per parameter: 0, 32, 64).

    Raises:
        ValueError: unknown optimizer.
    """
    if optimizer not in OPTIMIZER_STATE:
        raise ValueError(f"optimizer must be one of {sorted(OPTIMIZER_STATE)}, got {optimizer!r}")
    model = model.train()
    x = torch.randn(batch, *input_shape)
    fwd, bwd, act, params = [], [], [], []
    for j, unit in enumerate(model):
        inp = x.detach().requires_grad_(j > 0)
        with FlopCounterMode(display=False) as fc:
            out = unit(inp)
        fwd.append(fc.get_total_flops() / batch)
        with FlopCounterMode(display=False) as fc:
            out.backward(torch.ones_like(out))
        bwd.append(fc.get_total_flops() / batch)
        act.append(32 * out[0].numel())
        params.append(sum(p.numel() for p in unit.parameters()))
        x = out.detach()
    fwd, bwd, act, params = (np.asarray(v, dtype=float) for v in (fwd, bwd, act, params))
    state = OPTIMIZER_STATE[optimizer]
    return LayerProfile(name, tuple(input_shape), optimizer, np.cumsum(fwd), np.cumsum(bwd), act, act.copy(),
                        32 * np.cumsum(params), 32 * state * np.cumsum(params), np.cumsum(act), np.cumsum(act),
                        params.astype(np.int64))


@functools.lru_cache(maxsize=32)
def model_profile(name: str, in_channels: int = 3, image_size: int = 32, num_classes: int = 10,
                  optimizer: str = "sgd") -> LayerProfile:
    """Build model ``name`` (``"vgg16"`` or ``"resnet18"``) and return its :func:`profile_model`.

    Cached per arguments (a profile is measured once per process); treat the returned arrays as read-only.

    Raises:
        ValueError: unknown model name or bad shape.
    """
    if name not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}, got {name!r}")
    torch.manual_seed(0)  # profiles do not depend on the weights; fixed for reproducible BN statistics
    return profile_model(MODELS[name](in_channels, image_size, num_classes), (in_channels, image_size, image_size),
                         optimizer, name)
