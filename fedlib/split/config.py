"""Configuration of a split-training run (:class:`SplitConfig`), decision validation and model construction for
the engine (:mod:`.engine`)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from ..core.validate import (ParameterTypeError, check_bool, check_choice, check_float, check_instance, check_int,
                             check_list)
from ..data.datasets import DATASETS
from . import ops
from .models import check_model, make_model

NUM_UNITS = {"vgg16": 16, "resnet18": 10}
NUM_UNITS.update(resnet20=8, resnet38=8, resnet56=8, resnet110=8)   # DTFL: modules md1..md8 (resnet_cifar.py)
MODES = ("common", "copies")


@dataclass(frozen=True)
class SplitConfig:
    """One split-training run. Sizes: N = ``num_devices``; ``batch_sizes`` / ``cuts`` have length N.

    Attributes:
        model: ``"vgg16"`` or ``"resnet18"`` (:mod:`.models`; DTFL's ``resnet20``..``resnet110``), or a model of
        your own by import path ``"package.module:function"`` (:func:`.models.make_model`: its L units known when
        it is built, so ``cuts`` are checked against L in :func:`build_model`); width: channel multiplier (> 0).
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
        check_model(self.model, tuple(NUM_UNITS))
        check_float("width", self.width, 0, low_open=True)
        for name, low in (("num_devices", 1), ("interval", 1), ("rounds", 0), ("eval_every", 1),
                          ("shards_per_client", 1), ("seed", 0)):
            check_int(name, getattr(self, name), low)
        n, units = self.num_devices, NUM_UNITS.get(self.model)      # None: yours, L known once built
        for name, high in (("batch_sizes", None), ("cuts", units)):
            extra = " (one per device)" if name == "batch_sizes" else (
                " (1..L, L the units of the model)" if high is None else f" (1..L = 1..{high})")
            items = check_list(name, getattr(self, name),
                               lambda k, v, high=high, extra=extra: check_int(k, v, 1, high, extra=extra))
            object.__setattr__(self, name, tuple(items))
        validate_decision(self.batch_sizes, self.cuts, n, units)
        ops.check_lr(self.lr)
        for name, allowed in (("optimizer", ("sgd", "adam")), ("mode", MODES),
                              ("partition", ("iid", "shards", "dirichlet")), ("dataset", tuple(DATASETS))):
            check_choice(name, getattr(self, name), allowed)
        check_float("momentum", self.momentum, 0, 1, high_open=True)
        check_float("weight_decay", self.weight_decay, 0)
        betas = check_list("betas", self.betas, lambda k, v: check_float(k, v, 0, 1, high_open=True))
        if len(betas) != 2:
            raise ValueError(f"betas must be 2 numbers (beta1, beta2) in [0, 1), got {self.betas!r}")
        object.__setattr__(self, "betas", tuple(betas))
        check_float("eps", self.eps, 0, low_open=True)
        check_float("alpha", self.alpha, 0, low_open=True)
        check_bool("local_loss", self.local_loss)

    def to_dict(self) -> dict:
        return asdict(self)


def validate_decision(b, cuts, n: int, num_units: int | None,
                      names: tuple[str, str] = ("batch_sizes", "cuts")) -> tuple[np.ndarray, np.ndarray]:
    """Validate a decision (length-N batch sizes b_i >= 1 and integer cuts L_i in 1..L); returns int arrays.
    ``names``: the caller's names of the two arguments, used in the messages. ``num_units`` None: L not known yet
    (a model of your own before it is built), cuts checked >= 1 only.

    Raises:
        ValueError: wrong length, b_i < 1, NaN, or a cut outside 1..L (naming ``batch_sizes`` / ``cuts``).
        ParameterTypeError: strings, bools or non-integral numbers.
    """
    out = []
    for name, v in zip(names, (b, cuts)):
        if isinstance(v, str):
            raise ParameterTypeError(f"{name} must be N = {n} integers (one per device), got the string {v!r}")
        try:
            arr = np.asarray(v)
        except ValueError:                              # ragged: numpy cannot make one array of it
            raise ValueError(f"{name} must have length N = {n} (one integer per device), got {v!r}") from None
        if arr.shape != (n,):
            raise ValueError(f"{name} must have length N = {n} (one per device), got shape {arr.shape}")
        if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
            raise ParameterTypeError(f"{name} must be N = {n} integers (one per device), got {arr.tolist()}")
        if not np.issubdtype(arr.dtype, np.integer) and not np.all(np.mod(arr, 1) == 0):
            raise ValueError(f"{name} must be integers (no NaN, inf or fractions), got {arr.tolist()}")
        out.append(arr)
    b, cuts = out
    if np.any(b < 1):
        raise ValueError(f"{names[0]} must be >= 1, got {b.tolist()}")
    if num_units is None and np.any(cuts < 1):
        raise ValueError(f"{names[1]} must be >= 1, got {cuts.tolist()}")
    if num_units is not None and (np.any(cuts < 1) or np.any(cuts > num_units)):
        raise ValueError(f"{names[1]} must be in 1..L = 1..{num_units}, got {cuts.tolist()}")
    return b.astype(np.int64), cuts.astype(np.int64)


def build_model(cfg: SplitConfig, in_channels: int, image_size: int, num_classes: int) -> nn.Sequential:
    """``cfg.model`` at ``cfg.width`` (:func:`.models.make_model`), initialised under the ``model`` stream of
    ``cfg.seed``.

    Raises:
        ValueError / ParameterTypeError / ComponentError: as :func:`.models.make_model`; a model of your own with
            fewer units than ``cfg.cuts`` asks for (naming its path and its L)."""
    from ..core.seeding import torch_generator
    check_instance("cfg", cfg, SplitConfig)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(torch_generator(cfg.seed, "model").initial_seed())
        net = make_model(cfg.model, in_channels, image_size, num_classes, cfg.width)
    if max(cfg.cuts) > len(net):
        raise ValueError(f"cuts must be in 1..L = 1..{len(net)} (model {cfg.model!r} has {len(net)} units), got "
                         f"{list(cfg.cuts)}")
    return net
