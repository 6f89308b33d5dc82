"""CIFAR ResNet-(9n+2) with bottleneck blocks as 8 cuttable modules md1..md8 (DTFL App. A.5, Tables 8/9).

Three stages of n bottleneck blocks (torchvision's ``Bottleneck``, expansion 4, stride on the 3×3 conv), planes
16/32/64 (outputs 64/128/256 channels), strides 1/2/2:

- md1 = stem: 3×3 conv (``in_channels`` → 16, stride 1, no bias), BN, ReLU. Tables 8/9 also list a "maxpool 3×1";
  **choice**: no max-pool (the usual CIFAR ResNet; the spec's reference counts, 87.21 M MACs for ResNet-56 at
  32×32, are those of the model without it, and a stride-1 3×1 pool would be a no-op on the shapes anyway);
- md2 / md3 = first / second half of stage 1 (n/2 blocks each), md4 / md5 = halves of stage 2, md6 / md7 =
  halves of stage 3; md8 = global average pool + fully connected layer (256 → classes).

n = 2: ResNet-20 (8 modules, a third of ResNet-56's cost), n = 4: ResNet-38 (ours, the quick profile's deeper
model), n = 6: ResNet-56 (591,322 parameters, 87.21 M
forward MACs per 32×32×3 sample with 10 classes), n = 12: ResNet-110 (1,147,738 / 167.43 M). Smashed data per
sample (32×32 input): 16×32×32 after md1, 64×32×32 after md2/md3, 128×16×16 after md4/md5, 256×8×8 after md6/md7;
28×28×1 Fashion-MNIST gives 28 / 14 / 7 pixels. ``width`` scales the planes 16/32/64 (and the stem) like the other
models' width multiplier. Initialisation: torchvision's ResNet (Kaiming normal fan-out convs, BN weight 1, bias 0).
"""
from __future__ import annotations

from torch import nn
from torchvision.models.resnet import Bottleneck, conv1x1

from .blocks import _check_shape, _scale, resnet_init

#: modules of the DTFL split (md1..md8)
NUM_MODULES = 8


def resnet_cifar(n: int, in_channels: int = 3, image_size: int = 32, num_classes: int = 10,
                 width: float = 1.0) -> nn.Sequential:
    """CIFAR ResNet-(9n+2) with bottleneck blocks as ``nn.Sequential`` of the 8 modules md1..md8 (module docstring).

    Args:
        n: blocks per stage, an even integer >= 2 (2: ResNet-20, 6: ResNet-56, 12: ResNet-110).
        in_channels: image channels (3 for CIFAR, 1 for Fashion-MNIST). image_size: H = W in pixels (>= 8).
        num_classes: >= 2. width: multiplier (> 0) of the planes 16/32/64.

    Returns:
        ``nn.Sequential`` of 8 units; input ``[B, in_channels, image_size, image_size]``, output ``[B, classes]``.

    Raises:
        ValueError: ``n`` odd or < 2, a shape below its minimum, width <= 0.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 2 or n % 2:
        raise ValueError(f"n must be an even integer >= 2 (blocks per stage: 2 ResNet-20, 6 ResNet-56, "
                         f"12 ResNet-110), got {n!r}")
    _check_shape(in_channels, image_size, num_classes)
    planes = [_scale(c, width) for c in (16, 32, 64)]
    units = [nn.Sequential(nn.Conv2d(in_channels, planes[0], 3, 1, 1, bias=False), nn.BatchNorm2d(planes[0]),
                           nn.ReLU(inplace=True))]
    inplanes = planes[0]
    for k, p in enumerate(planes):
        blocks = []
        for b in range(n):
            stride = 2 if k > 0 and b == 0 else 1
            down = None
            if stride != 1 or inplanes != p * Bottleneck.expansion:
                down = nn.Sequential(conv1x1(inplanes, p * Bottleneck.expansion, stride),
                                     nn.BatchNorm2d(p * Bottleneck.expansion))
            blocks.append(Bottleneck(inplanes, p, stride, down))
            inplanes = p * Bottleneck.expansion
        units += [nn.Sequential(*blocks[:n // 2]), nn.Sequential(*blocks[n // 2:])]
    units.append(nn.Sequential(nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(inplanes, num_classes)))
    return resnet_init(nn.Sequential(*units))


def resnet20(in_channels: int = 3, image_size: int = 32, num_classes: int = 10, width: float = 1.0) -> nn.Sequential:
    """CIFAR ResNet-20 (bottleneck, n = 2) as md1..md8: :func:`resnet_cifar` with n = 2."""
    return resnet_cifar(2, in_channels, image_size, num_classes, width)


def resnet38(in_channels: int = 3, image_size: int = 32, num_classes: int = 10, width: float = 1.0) -> nn.Sequential:
    """CIFAR ResNet-38 (bottleneck, n = 4) as md1..md8: :func:`resnet_cifar` with n = 4. Not one of DTFL's models:
    our deeper model for the quick profile (twice ResNet-20's depth at about 60 % of ResNet-56's cost)."""
    return resnet_cifar(4, in_channels, image_size, num_classes, width)


def resnet56(in_channels: int = 3, image_size: int = 32, num_classes: int = 10, width: float = 1.0) -> nn.Sequential:
    """CIFAR ResNet-56 (bottleneck, n = 6) as md1..md8 (DTFL Table 8): :func:`resnet_cifar` with n = 6."""
    return resnet_cifar(6, in_channels, image_size, num_classes, width)


def resnet110(in_channels: int = 3, image_size: int = 32, num_classes: int = 10, width: float = 1.0) -> nn.Sequential:
    """CIFAR ResNet-110 (bottleneck, n = 12) as md1..md8 (DTFL Table 9): :func:`resnet_cifar` with n = 12."""
    return resnet_cifar(12, in_channels, image_size, num_classes, width)
