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

Both builders take a width multiplier ``width`` (> 0; default 1.0 = the paper models) that scales every channel
count (and VGG's classifier width) to ``max(1, round(c · width))``, so that cheap profiles and training runs fit
a 2-core machine; the latency model must then use the profile of the same width
(:func:`fedlib.split.model_profile` takes ``width`` too).

A model of your own is named by import path ``"package.module:function"`` wherever a model name is taken
(:func:`make_model`, :class:`fedlib.split.SplitConfig`, :class:`fedlib.dtfl.DtflConfig`,
:func:`fedlib.split.model_profile`): ``function(in_channels, image_size, num_classes, width)`` returns an
``nn.Sequential`` of L >= 2 cuttable units, built under the run's ``model`` seed stream (so it must draw its
weights from torch's default generator only); every worker imports it by that path.
"""
from __future__ import annotations

import torchvision
from torch import nn
from torchvision.models.resnet import BasicBlock, conv1x1

from .blocks import _check_shape, _scale, resnet_init
from .resnet_cifar import resnet20, resnet38, resnet56, resnet110
from ..core.components import call, is_path, resolve
from ..core.validate import ParameterTypeError, check_choice, check_int

#: the arguments a model factory of your own is called with
FACTORY_PARAMS = "(in_channels, image_size, num_classes, width)"


def vgg16(in_channels: int = 3, image_size: int = 32, num_classes: int = 10, fc_width: int = 512,
          width: float = 1.0) -> nn.Sequential:
    """VGG-16 (BN) as 16 cuttable units; see the module docstring for the CIFAR adaptation.

    ``width`` scales the conv channels (64..512 → round(64·width)..) and ``fc_width``.

    Raises:
        ValueError: image smaller than 8 pixels, fewer than 2 classes, non-positive channels, width <= 0.
    """
    _check_shape(in_channels, image_size, num_classes)
    check_int("fc_width", fc_width, 1)
    cfg = [v if v == "M" else _scale(v, width) for v in torchvision.models.vgg.cfgs["D"]]
    fc_width = _scale(fc_width, width)
    feats = torchvision.models.vgg.make_layers(cfg, batch_norm=True)
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
    flat = cfg[-2] * side * side
    units += [nn.Sequential(nn.Flatten(), nn.Linear(flat, fc_width), nn.ReLU(inplace=True)),
              nn.Sequential(nn.Linear(fc_width, fc_width), nn.ReLU(inplace=True)),
              nn.Sequential(nn.Linear(fc_width, num_classes))]
    return nn.Sequential(*units)


def resnet18(in_channels: int = 3, image_size: int = 32, num_classes: int = 100, width: float = 1.0) -> nn.Sequential:
    """CIFAR ResNet-18 as 10 cuttable units: stem, 8 basic blocks, head (avg-pool + FC).

    torchvision's ResNet-18 (its ``BasicBlock``, ``conv1x1`` downsampling and weight initialisation) with a
    3×3 stride-1 stem and no max-pool (the usual CIFAR adaptation; 11,220,132 parameters for 100 classes at
    ``width`` 1); ``width`` scales the stage widths 64/128/256/512.

    Raises:
        ValueError: image smaller than 8 pixels, fewer than 2 classes, non-positive channels, width <= 0.
    """
    _check_shape(in_channels, image_size, num_classes)
    planes = [_scale(c, width) for c in (64, 128, 256, 512)]
    stem = nn.Conv2d(in_channels, planes[0], kernel_size=3, stride=1, padding=1, bias=False)
    units = [nn.Sequential(stem, nn.BatchNorm2d(planes[0]), nn.ReLU(inplace=True))]
    inplanes = planes[0]
    for k, p in enumerate(planes):
        stride = 1 if k == 0 else 2
        down = None
        if stride != 1 or inplanes != p:
            down = nn.Sequential(conv1x1(inplanes, p, stride), nn.BatchNorm2d(p))
        units += [BasicBlock(inplanes, p, stride, down), BasicBlock(p, p)]
        inplanes = p
    units.append(nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(inplanes, num_classes)))
    return resnet_init(nn.Sequential(*units))


#: every cuttable model by name: HASFL's VGG-16 and ResNet-18, and DTFL's CIFAR ResNet-(9n+2) with bottleneck
#: blocks as 8 modules md1..md8 (:mod:`.resnet_cifar`)
MODELS = {"vgg16": vgg16, "resnet18": resnet18, "resnet20": resnet20, "resnet38": resnet38, "resnet56": resnet56,
          "resnet110": resnet110}


def check_model(model, builtins: tuple = tuple(MODELS), what: str = "model") -> str:
    """``model`` if it is one of ``builtins`` or an import path ``"package.module:function"`` that imports now
    (:func:`fedlib.core.components.resolve`: the module imported, the name found, nothing built).

    Raises:
        ValueError: another name ("must be one of [...] or an import path ..."), a path that cannot be imported
            or names nothing (naming the path). ParameterTypeError: not a string; a path naming no function."""
    if is_path(model):
        resolve(model, what, tuple(builtins))
        return model
    if isinstance(model, str) and model not in builtins:
        raise ValueError(f"{what} must be one of {tuple(builtins)} or an import path 'package.module:function' of "
                         f"a cuttable model of your own, got {model!r}")
    return check_choice(what, model, tuple(builtins))


def make_model(model: str, in_channels: int, image_size: int, num_classes: int, width: float = 1.0) -> nn.Sequential:
    """The cuttable model ``model`` names: a built-in (:data:`MODELS`) or a factory of your own by import path
    ``"package.module:function"``, called as ``function(in_channels, image_size, num_classes, width)``
    (:func:`fedlib.core.components.call`: its signature bound before it runs, its errors named). Weights come from
    torch's default generator: seed it first (:func:`fedlib.split.build_model` does, from the run's seed).

    Returns:
        ``nn.Sequential`` of L units (L >= 2 for a model of your own: cut j puts units 1..j on the device).

    Raises:
        ValueError / ParameterTypeError: as :func:`check_model`; a factory that cannot take the four arguments,
            or returns anything but an ``nn.Sequential`` of at least 2 units (one line naming the path).
        ComponentError: the factory raised (naming the path, the original error as the cause).
    """
    if not is_path(model):
        check_model(model)
        return MODELS[model](in_channels, image_size, num_classes, width=width)
    fn = resolve(model, "model", tuple(MODELS))
    net = call(fn, f"model {model!r}", FACTORY_PARAMS, in_channels, image_size, num_classes, width)
    if not isinstance(net, nn.Sequential) or len(net) < 2:
        got = f"an nn.Sequential of {len(net)} units" if isinstance(net, nn.Sequential) else type(net).__name__
        raise ParameterTypeError(f"model {model!r} must return an nn.Sequential of at least 2 cuttable units (cut j "
                                 f"puts units 1..j on the device), got {got}")
    return net
