"""Estimators of smoothness and gradient-noise constants shared by the papers' bounds.

- :func:`hessian_top_eigenvalue`: largest |eigenvalue| of a loss Hessian by power iteration on Hessian-vector
  products (double backward), as PyHessian (Yao et al., 2020) does: a local estimate of the smoothness
  constant (HIST's L, HASFL's β).
"""
from __future__ import annotations

from typing import Callable, Sequence

import torch

from .validate import ParameterTypeError, check_int


def hessian_top_eigenvalue(loss_fn: Callable[[], torch.Tensor], params: Sequence[torch.Tensor], iters: int,
                           generator: torch.Generator) -> float:
    """Largest |eigenvalue| of ∇²loss w.r.t. ``params`` by ``iters`` power-iteration steps.

    Args:
        loss_fn: computes the scalar loss from ``params`` (which require grad).
        params: tensors the Hessian is taken over.
        iters: power-iteration steps (>= 1).
        generator: CPU torch generator for the random unit start vector (drawn on the CPU, then moved to the
            parameters' device, so the start does not depend on the device).

    Returns:
        The final Rayleigh quotient's absolute value (0.0 for a zero Hessian).

    Raises:
        ParameterTypeError: ``iters`` not an integer, ``loss_fn`` not callable, ``params`` not tensors,
            ``generator`` not a ``torch.Generator``.
        ValueError: ``iters`` < 1, ``params`` empty.
    """
    check_int("iters", iters, 1)
    if not callable(loss_fn):
        raise ParameterTypeError(f"loss_fn must be a callable returning the scalar loss, got {loss_fn!r}")
    params = list(params)
    if not params:
        raise ValueError("params must hold at least one tensor, got none")
    if not all(isinstance(p, torch.Tensor) for p in params):
        raise ParameterTypeError(f"params must be tensors, got {sorted({type(p).__name__ for p in params})}")
    if not isinstance(generator, torch.Generator):
        raise ParameterTypeError(f"generator must be a torch.Generator (CPU), got {generator!r}")
    grads = torch.autograd.grad(loss_fn(), params, create_graph=True)
    v = [torch.randn(p.shape, generator=generator, device="cpu", dtype=p.dtype).to(p.device) for p in params]
    norm = torch.sqrt(sum((t ** 2).sum() for t in v))
    v = [t / norm for t in v]
    eig = 0.0
    for _ in range(iters):
        hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True, allow_unused=True)
        hv = [torch.zeros_like(p) if h is None else h for h, p in zip(hv, params)]
        eig = float(sum((a * b).sum() for a, b in zip(hv, v)))
        norm = torch.sqrt(sum((t ** 2).sum() for t in hv))
        if float(norm) == 0.0:
            return 0.0
        v = [t / norm for t in hv]
    return abs(eig)
