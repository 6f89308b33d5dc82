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

import torchvision
from torch import nn

#: optimizer state per parameter, in parameters: SGD none, momentum one buffer, Adam two moments.
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
