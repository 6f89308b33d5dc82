"""Split models of a user's own, as a researcher would write them in a module of their own (imported by path in
the tests: ``"own_models:small_cnn"``); not a test module. A factory takes ``(in_channels, image_size,
num_classes, width)`` and returns an ``nn.Sequential`` of cuttable units."""
from torch import nn


def _conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


def small_cnn(in_channels, image_size, num_classes, width):
    """A CNN of 8 units (DTFL's md1..md8 count; HASFL takes any L): 7 conv units, then pool + linear."""
    c = max(1, round(8 * width))
    return nn.Sequential(_conv(in_channels, c), _conv(c, c), _conv(c, 2 * c, 2), _conv(2 * c, 2 * c),
                         _conv(2 * c, 4 * c, 2), _conv(4 * c, 4 * c), _conv(4 * c, 4 * c),
                         nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * c, num_classes)))


def four_units(in_channels, image_size, num_classes, width):
    """4 units: a split model for HASFL, not DTFL's 8."""
    c = max(1, round(8 * width))
    return nn.Sequential(_conv(in_channels, c), _conv(c, 2 * c, 2), _conv(2 * c, 2 * c, 2),
                         nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * c, num_classes)))


def flat_mlp(in_channels, image_size, num_classes, width):
    """8 units whose smashed data are [B, F] after md1: not DTFL's (its auxiliary heads pool [B, C, H, W])."""
    f = max(1, round(32 * width))
    units = [nn.Sequential(nn.Flatten(), nn.Linear(in_channels * image_size * image_size, f), nn.ReLU())]
    units += [nn.Sequential(nn.Linear(f, f), nn.ReLU()) for _ in range(6)]
    return nn.Sequential(*units, nn.Linear(f, num_classes))


def one_unit(in_channels, image_size, num_classes, width):
    return nn.Sequential(nn.Sequential(nn.Flatten(), nn.Linear(in_channels * image_size * image_size, num_classes)))


def not_sequential(in_channels, image_size, num_classes, width):
    return nn.Linear(in_channels * image_size * image_size, num_classes)


def no_width(in_channels, image_size, num_classes):
    return small_cnn(in_channels, image_size, num_classes, 1.0)


def raises(in_channels, image_size, num_classes, width):
    return [1, 2][5]


NOT_CALLABLE = 3
