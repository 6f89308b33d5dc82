"""The machine's large-matmul throughput: the roofline of ``python -m fedlib.lab.bench hist``, whose steps are matmuls.
(``bench sfl`` reports none: for convolutions this is no ceiling, :mod:`fedlib.lab.split.bench` says why.)"""
from __future__ import annotations

import time

import torch


def matmul_gflops(n: int = 2048, reps: int = 10, device: torch.device | str = "cpu") -> float:
    """Best-of-3 GFLOP/s of an ``n x n`` float32 matmul (2n³ FLOPs each, ``reps`` per timing) on ``device``.

    Raises:
        ValueError: ``n`` or ``reps`` < 1.
    """
    if n < 1 or reps < 1:
        raise ValueError(f"n and reps must be >= 1, got n={n}, reps={reps}")
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    a @ b
    best = 0.0
    for _ in range(3):
        if a.is_cuda:
            torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            a @ b
        if a.is_cuda:
            torch.cuda.synchronize()
        best = max(best, 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9)
    return best
