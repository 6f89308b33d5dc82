"""The pieces every cuttable model shares (:mod:`.models`' VGG-16 and ResNet-18, :mod:`.resnet_cifar`'s DTFL
ResNets, :mod:`fedlib.dtfl.fedgkt`'s models): the shape check of a model's input and classes, the width multiplier
of its channel counts and torchvision's ResNet initialisation. A module of its own so that the model modules import
it and never each other."""
from __future__ import annotations

from torch import nn

from ..core.validate import check_float, check_int


def _check_shape(in_channels: int, image_size: int, num_classes: int) -> None:
    """Raises ``ParameterTypeError`` (bool, float, ...) or ``ValueError`` (too small), naming the argument."""
    for name, value, low in (("in_channels", in_channels, 1), ("image_size", image_size, 8),
                             ("num_classes", num_classes, 2)):
        check_int(name, value, low)


def _scale(channels: int, width: float) -> int:
    """``max(1, round(channels · width))``. Raises ``ValueError`` unless ``width`` is finite and > 0."""
    width = check_float("width", width, 0, low_open=True)
    return max(1, int(round(channels * width)))


def resnet_init(net: nn.Sequential) -> nn.Sequential:
    """torchvision's ResNet initialisation, in place: Kaiming-normal conv weights (fan-out, ReLU), BatchNorm
    weight 1 and bias 0. Returns ``net``."""
    for m in net.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
    return net
