"""Configuration of a split-training run (:class:`SplitConfig`), decision validation and model construction for
the engine (:mod:`.engine`)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from . import ops
from .models import MODELS

NUM_UNITS = {"vgg16": 16, "resnet18": 10}
NUM_UNITS.update(resnet20=8, resnet38=8, resnet56=8, resnet110=8)   # DTFL: modules md1..md8 (resnet_cifar.py)
MODES = ("common", "copies")


@dataclass(frozen=True)
class SplitConfig:
    """One split-training run. Sizes: N = ``num_devices``; ``batch_sizes`` / ``cuts`` have length N.

    Attributes:
        model: ``"vgg16"`` or ``"resnet18"`` (:mod:`.models`); width: channel multiplier (> 0).
        batch_sizes: b_i >= 1. cuts: L_i in 1..L. interval: I >= 1 (rounds between eq. 7 aggregations).
        lr: γ (finite, > 0). optimizer: ``"sgd"`` (momentum, weight_decay) or ``"adam"`` (betas, eps).
        mode: ``"common"`` (HASFL) or ``"copies"`` (per-device server copies averaged every round).
        local_loss: train device parts with auxiliary-head losses (needs ``aux_head``).
        rounds: R; eval_every: rounds between evaluations. partition: ``"iid"``, ``"shards"`` (sort by label,
        ``shards_per_client`` each) or ``"dirichlet"`` (``alpha``). seed: seed of the streams.

    Raises:
        ValueError: naming the parameter and its allowed range.
    """

    model: str = "vgg16"
    width: float = 1.0
    num_devices: int = 20
    batch_sizes: tuple = (16,) * 20
    cuts: tuple = (8,) * 20
    interval: int = 15
    lr: float = 5e-4
    optimizer: str = "sgd"
    momentum: float = 0.0
    weight_decay: float = 0.0
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    mode: str = "common"
    local_loss: bool = False
    rounds: int = 100
    eval_every: int = 10
    partition: str = "iid"
    shards_per_client: int = 2
    alpha: float = 0.5
    dataset: str = "fashion-mnist"
    seed: int = 0

    def __post_init__(self):
        if self.model not in NUM_UNITS:
            raise ValueError(f"model must be one of {sorted(NUM_UNITS)}, got {self.model!r}")
        if not isinstance(self.width, (int, float)) or not math.isfinite(self.width) or self.width <= 0:
            raise ValueError(f"width must be a finite number > 0, got {self.width!r}")
        for name in ("num_devices", "interval", "rounds", "eval_every"):
            if not isinstance(getattr(self, name), (int, np.integer)) or getattr(self, name) < (name != "rounds"):
                raise ValueError(f"{name} must be an integer >= {int(name != 'rounds')}, got {getattr(self, name)!r}")
        object.__setattr__(self, "batch_sizes", tuple(int(v) for v in self.batch_sizes))
        object.__setattr__(self, "cuts", tuple(int(v) for v in self.cuts))
        validate_decision(self.batch_sizes, self.cuts, self.num_devices, NUM_UNITS[self.model])
        ops.check_lr(self.lr)
        for name, allowed in (("optimizer", ("sgd", "adam")), ("mode", MODES),
                              ("partition", ("iid", "shards", "dirichlet"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")

    def to_dict(self) -> dict:
        return asdict(self)


def validate_decision(b, cuts, n: int, num_units: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate a decision (length-N batch sizes b_i >= 1 and integer cuts L_i in 1..L); returns int arrays.

    Raises:
        ValueError: wrong length, b_i < 1 or a cut outside 1..L (naming ``batch_sizes`` / ``cuts``).
    """
    b, cuts = np.asarray(b), np.asarray(cuts)
    for name, v in (("batch_sizes", b), ("cuts", cuts)):
        if v.shape != (n,):
            raise ValueError(f"{name} must have length N = {n} (one per device), got shape {v.shape}")
        if not np.issubdtype(v.dtype, np.integer) and not np.all(np.mod(v, 1) == 0):
            raise ValueError(f"{name} must be integers, got {v.tolist()}")
    if np.any(b < 1):
        raise ValueError(f"batch_sizes must be >= 1, got {b.tolist()}")
    if np.any(cuts < 1) or np.any(cuts > num_units):
        raise ValueError(f"cuts must be in 1..L = 1..{num_units}, got {cuts.tolist()}")
    return b.astype(np.int64), cuts.astype(np.int64)


def build_model(cfg: SplitConfig, in_channels: int, image_size: int, num_classes: int) -> nn.Sequential:
    """``cfg.model`` at ``cfg.width``, initialised under the ``model`` stream of ``cfg.seed``."""
    from ..core.seeding import torch_generator
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_generator(cfg.seed, "model").initial_seed())
        return MODELS[cfg.model](in_channels, image_size, num_classes, width=cfg.width)
