"""A split model of your own for ``dtfl_your_method``: a small CNN of 8 cuttable units, named by its import path
``"my_model:small_cnn"`` (this folder is on the notebook's path).

The contract (:func:`fedlib.split.models.make_model`, :class:`fedlib.dtfl.DtflConfig`):

- a function ``factory(in_channels, image_size, num_classes, width)`` returning an ``nn.Sequential`` whose
  items are the cuttable units: cut j puts units 1..j on the client and the rest on the server;
- for DTFL exactly 8 units, its modules md1..md8 (tier m keeps the first modules on the client), and units 1..7
  must give image-shaped smashed data ``[B, C, H, W]``: the auxiliary head of each tier pools it
  (:func:`fedlib.dtfl.run.dtfl_model` refuses anything else, naming the path);
- weights from torch's default generator: the library seeds it from the run's seed before calling the factory.

The library profiles it like its own models (:func:`fedlib.split.model_profile`: FLOPs, parameters and smashed-data
sizes per unit, for the time model) and keys every record trained on it by the path and this module's source, so an
edit here retrains only the runs on this model.

Shapes on Fashion-MNIST (``small_cnn(1, 28, 10, width)``, B samples; c = round(16 * width) channels: ResNet-20's
stage widths 16, 32, 64 at width 1):

| unit | layers | smashed data out |
|---|---|---|
| md1 | conv 3x3 1 -> c, BN, ReLU | [B, c, 28, 28] |
| md2 | conv 3x3 c -> c, BN, ReLU | [B, c, 28, 28] |
| md3 | conv 3x3 stride 2 c -> 2c, BN, ReLU | [B, 2c, 14, 14] |
| md4 | conv 3x3 2c -> 2c, BN, ReLU | [B, 2c, 14, 14] |
| md5 | conv 3x3 stride 2 2c -> 4c, BN, ReLU | [B, 4c, 7, 7] |
| md6 | conv 3x3 4c -> 4c, BN, ReLU | [B, 4c, 7, 7] |
| md7 | conv 3x3 4c -> 4c, BN, ReLU | [B, 4c, 7, 7] |
| md8 | global average pool, linear 4c -> classes | [B, classes] (logits) |
"""
from torch import nn


def conv_unit(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    """One cuttable unit: 3x3 convolution (padding 1, ``stride``), batch norm, ReLU; ``[B, cin, H, W]`` ->
    ``[B, cout, H / stride, W / stride]`` (rounded up)."""
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


def small_cnn(in_channels: int, image_size: int, num_classes: int, width: float) -> nn.Sequential:
    """8 units md1..md8 (module docstring's table): seven conv units in three stages of c, 2c and 4c channels
    (c = round(16 * ``width``), at least 1: ResNet-20's 16, 32, 64 at width 1), the image halved twice, then the
    head. Any ``image_size`` works (the head pools whatever size is left)."""
    c = max(1, round(16 * width))
    return nn.Sequential(
        conv_unit(in_channels, c), conv_unit(c, c),                    # md1, md2: full resolution
        conv_unit(c, 2 * c, stride=2), conv_unit(2 * c, 2 * c),        # md3, md4: half
        conv_unit(2 * c, 4 * c, stride=2), conv_unit(4 * c, 4 * c),    # md5, md6: a quarter
        conv_unit(4 * c, 4 * c),                                       # md7
        nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * c, num_classes)))   # md8: the head
