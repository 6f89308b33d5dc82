"""Measured layer profiles of cuttable models (:class:`LayerProfile`): per cut j, the per-sample FLOPs, smashed
data and gradient bits, parameter and optimiser-state bits of HASFL Sec. V-A (spec "Latency model"), counted with
``torch.utils.flop_counter.FlopCounterMode`` on the real modules."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from ..core.components import is_path
from .models import MODELS, check_model, make_model

OPTIMIZER_STATE = {"sgd": 0, "momentum": 1, "adam": 2}


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
    from ..core.validate import check_choice, check_instance, check_int, check_list, check_str
    check_instance("model", model, nn.Sequential, "an nn.Sequential of cuttable units")
    if len(model) == 0:
        raise ValueError("model must hold at least one unit, got an empty nn.Sequential")
    shape = check_list("input_shape", input_shape, lambda k, v: check_int(k, v, 1))
    if len(shape) != 3:
        raise ValueError(f"input_shape must be (C, H, W) of one sample, got {input_shape!r}")
    check_choice("optimizer", optimizer, tuple(sorted(OPTIMIZER_STATE)))
    check_str("name", name, nonempty=False)
    check_int("batch", batch, 1)
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


def model_profile(name: str, in_channels: int = 3, image_size: int = 32, num_classes: int = 10,
                  optimizer: str = "sgd", width: float = 1.0) -> LayerProfile:
    """Build model ``name`` (``"vgg16"``, ``"resnet18"``, ... of :data:`MODELS`, or a model of your own by import
    path ``"package.module:function"``, :func:`fedlib.split.models.make_model`) at width multiplier ``width`` and
    return its :func:`profile_model` (the latency model must use the profile of the model actually trained).

    A built-in's profile is cached per arguments (measured once per process); a model of your own is measured on
    every call (an edit of its module is seen). Treat the returned arrays as read-only.

    Raises:
        ValueError: unknown model name, bad shape or width <= 0; as :func:`fedlib.split.models.make_model` for a
            model of your own (naming its path).
    """
    if is_path(name):
        return _measured(name, in_channels, image_size, num_classes, optimizer, width)
    return _builtin_profile(name, in_channels, image_size, num_classes, optimizer, width)


@functools.lru_cache(maxsize=32)
def _builtin_profile(name: str, in_channels: int, image_size: int, num_classes: int, optimizer: str,
                     width: float) -> LayerProfile:
    if name not in MODELS:
        raise ValueError(f"name (the model) must be one of {sorted(MODELS)}, got {name!r} (a model of your own: "
                         f"an import path 'package.module:function')")
    return _measured(name, in_channels, image_size, num_classes, optimizer, width)


def _measured(name: str, in_channels: int, image_size: int, num_classes: int, optimizer: str,
              width: float) -> LayerProfile:
    torch.manual_seed(0)  # profiles do not depend on the weights; fixed for reproducible BN statistics
    model = make_model(name, in_channels, image_size, num_classes, width)
    return profile_model(model, (in_channels, image_size, image_size), optimizer,
                         name if width == 1.0 else f"{name}@w{width:g}")


def model_profiles(models, classes, in_channels: int = 3, image_size: int = 32, optimizer: str = "sgd",
                   widths=None) -> dict:
    """:func:`model_profile` of each model, ``{name: LayerProfile}``, with the lists taken as a whole: ``models``
    and ``classes`` (and ``widths`` when given) hold one entry per model, and no model appears twice.

    Args:
        models: model names (:data:`MODELS`, or import paths of your own). classes: each model's number of
            classes (ints >= 2).
        widths: each model's channel multiplier (> 0), or None for 1.0.

    Raises:
        ValueError / ParameterTypeError: an empty list, lists of different lengths (naming both and their
            lengths: nothing is dropped), a model named twice, an unknown model, classes < 2.
    """
    from ..core.validate import check_choice, check_float, check_int, check_list  # noqa: F401  (check_choice unused since 6899bda; dropping it changes the store key: at the next checked re-key)

    names = check_list("models", models, lambda k, v: check_model(v, tuple(sorted(MODELS)), k))
    ks = check_list("classes", classes, lambda k, v: check_int(k, v, 2))
    ws = [1.0] * len(names) if widths is None else check_list(
        "widths", widths, lambda k, v: check_float(k, v, 0, low_open=True))
    if len(ks) != len(names) or len(ws) != len(names):
        extra = "" if widths is None else f" and widths {len(ws)}"
        raise ValueError(f"models and classes{'' if widths is None else ' and widths'} must have one entry per "
                         f"model, got models {len(names)} ({names}), classes {len(ks)}{extra}")
    if len(set(names)) != len(names):
        raise ValueError(f"models must name each model once, got {names}")
    return {m: model_profile(m, in_channels, image_size, k, optimizer, w) for m, k, w in zip(names, ks, ws)}
