"""Estimators of HASFL's constants β, σ_j², G_j², ϑ (Theorem 1) from a short pilot training on real data.

Source: HASFL Sec. IV and V-B (spec ``shared/spec/hasfl.md``). Notation: N devices, batch sizes b_i, cut layers
L_i, L_c = max_i L_i, aggregation interval I, step size γ, per-layer constants over the model's L units.

Estimation method (the paper only says the constants are "estimated from training"; our choice, also in the
README's deviations list):

- σ_j² (per-sample gradient variance of unit j): from M minibatch gradients of size b0 at a point w,
  σ_j² = b0 · (1/(M−1)) Σ_m ‖g_{m,j} − ḡ_j‖² (minibatch variance is σ_j²/b0, Assumption of Theorem 1).
- G_j²: Assumption 2 bounds the second moment of the *mini-batch* stochastic gradient, E‖∇_j F_i(w; ξ_i)‖²; we
  evaluate it at the pilot's batch size b0: G_j² = ‖ḡ_j‖² + σ_j²/b0 (E‖g‖² = ‖E g‖² + Var g). The paper treats
  it as independent of b; a smaller b0 gives a larger G_j² (b0 = 1: the per-sample moment).
- β: largest |Hessian eigenvalue| (power iteration, :func:`fedlib.core.estimators.hessian_top_eigenvalue`) of the
  loss on b0·M distinct random training samples, the samples ϑ is taken on. Assumption 1 bounds the smoothness of
  the local loss f_i, so the Hessian is taken on as many samples as the pilot evaluates; until 2026-11-24 it was
  one minibatch of b0 samples, whose top eigenvalue varied 5x between minibatches at the same weights (VGG-16 at
  width 1/4 after the quick pilot: 172-829 on 16 samples, 50-55 on 256) and made the bound's floor (∝ β² for the
  split term) move 30 % between CPUs.
- ϑ = f(w⁰) − f*: f(w⁰) on b0·M random training samples with f* replaced by 0 (cross-entropy >= 0), an upper
  bound.
- Each is maximised over the pilot's points (w⁰ and the model after the pilot steps).
- The pilot runs on one torch thread (:func:`pilot_constants` sets it and restores the caller's count): its 200
  SGD steps amplify the floating-point order of the reductions, which depends on the thread count, so β came out
  237 with 2 torch threads and 316 with 1 on one machine. Pinned, the caller's thread count no longer moves it.
  Another instruction set still does (ATen scalar + oneDNN SSE4.1 against AVX2 moved β by 7 % and Σ G_j² by 2 %
  at quick with the Hessian on b0·M samples; the initial weights already differ in the last bit, torch's
  ``normal_`` being vectorised per instruction set). float64 would not help there and made the full-width
  VGG-16 pilot over 10x slower (no oneDNN kernels in float64).
"""
from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...core.estimators import hessian_top_eigenvalue
from ...core.seeding import numpy_rng
from ...core.validate import ParameterTypeError, check_float, check_int
from .theory import HasflConstants


def _check_model_data(model, x, y) -> None:
    if not isinstance(model, nn.Sequential) or len(model) == 0:
        raise ParameterTypeError(f"model must be a cuttable nn.Sequential of units, got {type(model).__name__}")
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        raise ParameterTypeError(f"x and y must be tensors, got {type(x).__name__} and {type(y).__name__}")
    if len(x) != len(y) or len(x) == 0:
        raise ValueError(f"x and y must hold the same non-zero number of samples, got {len(x)} and {len(y)}")


@contextmanager
def one_torch_thread():
    """Run the block on one torch (intra-op) thread, then restore the caller's count."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _unit_grads(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad(set_to_none=True)
    F.cross_entropy(model(x), y).backward()
    return [torch.cat([p.grad.reshape(-1) for p in unit.parameters()]) if any(True for _ in unit.parameters())
            else torch.zeros(1) for unit in model]


def estimate_at(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor, batch_size: int, num_batches: int,
                power_iters: int, rng: np.random.Generator) -> dict:
    """σ_j², G_j², β and the loss at the model's current weights from ``num_batches`` minibatches of
    ``batch_size`` samples of (x, y) (see the module docstring). Returns plain lists/floats.

    Raises:
        ValueError: ``num_batches`` < 2, ``batch_size`` < 1, ``power_iters`` < 1, or ``batch_size * num_batches``
            more than the samples (the loss is taken on that many distinct samples).
        ParameterTypeError: non-integer counts, ``rng`` not a numpy Generator, model / data of the wrong type.
    """
    _check_model_data(model, x, y)
    check_int("num_batches", num_batches, 2)
    check_int("batch_size", batch_size, 1)
    check_int("power_iters", power_iters, 1)
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if batch_size * num_batches > len(x):
        raise ValueError(f"batch_size * num_batches = {batch_size * num_batches} must be <= the {len(x)} samples")
    grads = []
    for _ in range(num_batches):
        idx = torch.from_numpy(rng.integers(0, len(x), batch_size))
        grads.append(_unit_grads(model, x[idx], y[idx]))
    per_unit = [torch.stack([g[j] for g in grads]).double() for j in range(len(model))]
    mean = [g.mean(0) for g in per_unit]
    sigma2 = np.array([batch_size * float(((g - m) ** 2).sum(1).sum() / (num_batches - 1))
                       for g, m in zip(per_unit, mean)])
    g2 = np.array([float((m ** 2).sum()) for m in mean]) + sigma2 / batch_size
    # β and f(w) on the same batch_size·num_batches distinct samples (the VGG passes are the costly part)
    idx = torch.from_numpy(rng.choice(len(x), batch_size * num_batches, replace=False))
    xb, yb = x[idx], y[idx]
    gen = torch.Generator().manual_seed(int(rng.integers(2 ** 62)))
    beta = hessian_top_eigenvalue(lambda: F.cross_entropy(model(xb), yb), list(model.parameters()), power_iters,
                                  gen)
    with torch.no_grad():
        loss = float(F.cross_entropy(model(xb), yb))
    return {"sigma2": sigma2.tolist(), "G2": g2.tolist(), "beta": beta, "loss": loss}


def pilot_constants(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor, pilot_steps: int, lr: float,
                    batch_size: int, num_batches: int, power_iters: int, seed: int) -> dict:
    """Estimate HASFL's constants at w⁰ and after ``pilot_steps`` SGD steps (lr, batch) on (x, y), on one torch
    thread (see the module docstring).

    Returns:
        ``{"constants": HasflConstants.to_dict(), "per_point": [...], "elapsed_s"}``; the constants are the
        maxima over the points, ϑ the loss at w⁰.

    Raises:
        ValueError: bad counts / lr (see :func:`estimate_at`), or a diverged pilot (NaN / inf constants are
            refused by :class:`HasflConstants`, so they are never cached).
    """
    _check_model_data(model, x, y)
    check_int("pilot_steps", pilot_steps, 0)
    check_float("lr", lr, 0, low_open=True)
    t0 = time.perf_counter()
    rng = numpy_rng(seed, "data")
    model.train()
    with one_torch_thread():
        points = [estimate_at(model, x, y, batch_size, num_batches, power_iters, rng)]
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        for _ in range(pilot_steps):
            idx = torch.from_numpy(rng.integers(0, len(x), batch_size))
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()
        if pilot_steps > 0:
            points.append(estimate_at(model, x, y, batch_size, num_batches, power_iters, rng))
    consts = HasflConstants(max(p["beta"] for p in points), np.max([p["sigma2"] for p in points], axis=0),
                            np.max([p["G2"] for p in points], axis=0), points[0]["loss"])
    return {"constants": consts.to_dict(), "per_point": points, "elapsed_s": time.perf_counter() - t0}
