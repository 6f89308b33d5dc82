"""Row-wise updates of stacked per-device state (:mod:`.stacked`): the optimizer step of the rows that trained
(``torch.optim``'s SGD / Adam arithmetic, one step count per device) and weighted averages of rows (eqs. 1 / 7,
the engine's :func:`.ops.weighted_mean` on stacked tensors).

No host sync: host values (step sizes, masks, weights, row indices) travel in one copy per call, from pinned
memory without blocking on a GPU (:func:`host_tensor`); the optimizer runs ``torch._foreach_*`` over all tensors
of a unit (one kernel per operation and chunk of tensors on CUDA, as ``torch.optim``'s ``foreach`` path)."""
from __future__ import annotations

import numpy as np
import torch

from .engine import _weights


def host_tensor(values, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Host values (a list or numpy array) as a tensor of ``dtype`` on ``device``. On CUDA the copy is made from
    pinned memory with ``non_blocking=True`` (ordered on the current stream, no host sync; the host values are
    copied before this returns, so changing them afterwards is safe)."""
    t = torch.as_tensor(np.asarray(values), dtype=dtype)
    if device.type != "cuda":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


def _bcast(v: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``v`` ``[N]`` viewed as ``[N, 1, ..., 1]`` to broadcast over ``like`` ``[N, ...]``."""
    return v.view(-1, *[1] * (like.dim() - 1))


def step_rows(opt: dict, params: dict, grads: dict, state: dict, steps: np.ndarray, on: np.ndarray) -> None:
    """One optimizer step of the rows ``on`` (host bools ``[N]``), in place; other rows stay bit-identical.
    The arithmetic of ``torch.optim``'s SGD / Adam, per row (Adam's step count per device).

    When every row trains (the usual round), the step is ``torch._foreach_*`` over all tensors (scalar bias
    corrections when all rows share one step count, else per-row ``[N, 1, ...]`` factors); otherwise each tensor
    is updated with ``torch.where`` masks.

    Args:
        opt: the engine's optimizer settings (``name``, ``lr``, ``momentum``, ``weight_decay``, ``betas``, ``eps``).
        params / grads: ``{name: [N, ...]}``. state: ``{name: {"exp_avg", "exp_avg_sq"} | {"momentum_buffer"}}``
            of ``[N, ...]`` tensors (updated in place or replaced). steps: ``[N]`` steps taken per row (host,
            incremented for the rows ``on``). SGD's momentum buffer of a row at step 0 must be zero (as every
            buffer starts, and as :func:`.stacked.set_decision_stacked` resets it): ``0 · μ + g`` is then exactly
            ``torch.optim``'s first buffer ``g``.
    """
    if not on.any():
        return
    steps += on
    if bool(on.all()):
        _step_all(opt, params, grads, state, steps)
    else:
        _step_masked(opt, params, grads, state, steps, on)


def _step_all(opt: dict, params: dict, grads: dict, state: dict, steps: np.ndarray) -> None:
    names = list(grads)
    ps, gs = [params[k] for k in names], [grads[k] for k in names]
    if opt["weight_decay"]:
        gs = torch._foreach_add(gs, ps, alpha=opt["weight_decay"])
    if opt["name"] == "sgd":
        if opt["momentum"]:
            bufs = [state[k]["momentum_buffer"] for k in names]
            torch._foreach_mul_(bufs, opt["momentum"])
            torch._foreach_add_(bufs, gs)
            gs = bufs
        torch._foreach_add_(ps, gs, alpha=-opt["lr"])
        return
    b1, b2 = opt["betas"]
    ms, vs = [state[k]["exp_avg"] for k in names], [state[k]["exp_avg_sq"] for k in names]
    torch._foreach_lerp_(ms, gs, 1 - b1)
    torch._foreach_mul_(vs, b2)
    torch._foreach_addcmul_(vs, gs, gs, value=1 - b2)
    denom = torch._foreach_sqrt(vs)
    if (steps == steps[0]).all():                   # one step count: torch.optim's scalars
        t = float(steps[0])
        torch._foreach_div_(denom, (1 - b2 ** t) ** 0.5)
        torch._foreach_add_(denom, opt["eps"])
        torch._foreach_addcdiv_(ps, ms, denom, value=-(opt["lr"] / (1 - b1 ** t)))
        return
    size, bc2 = _adam_rows(opt, steps)
    fac = host_tensor(np.stack([size, bc2]), ps[0].dtype, ps[0].device)
    torch._foreach_div_(denom, [_bcast(fac[1], p) for p in ps])
    torch._foreach_add_(denom, opt["eps"])
    upd = torch._foreach_div(ms, denom)
    torch._foreach_mul_(upd, [_bcast(fac[0], p) for p in ps])
    torch._foreach_add_(ps, upd)


def _adam_rows(opt: dict, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: Adam's signed step size ``-lr / (1 - β1^t)`` and ``sqrt(1 - β2^t)`` (host, float64)."""
    b1, b2 = opt["betas"]
    t = np.maximum(steps, 1).astype(float)
    return np.array([-opt["lr"] / (1 - b1 ** float(x)) for x in t]), np.array([(1 - b2 ** float(x)) ** 0.5 for x in t])


def _step_masked(opt, params, grads, state, steps, on) -> None:
    o = opt
    p0 = next(iter(params.values()))
    mask = host_tensor(on, torch.bool, p0.device)
    size, bc2 = _adam_rows(o, steps) if o["name"] == "adam" else (None, None)
    fac = host_tensor(np.stack([size, bc2]), p0.dtype, p0.device) if size is not None else None

    def keep(new, old):
        return torch.where(_bcast(mask, old), new, old)
    for k, g in grads.items():
        p, s = params[k], state[k]
        if o["weight_decay"]:
            g = g.add(p, alpha=o["weight_decay"])
        if o["name"] == "sgd":
            if o["momentum"]:
                buf = s["momentum_buffer"]
                s["momentum_buffer"] = keep(buf * o["momentum"] + g, buf)
                g = s["momentum_buffer"]
            p.copy_(keep(p + g * -o["lr"], p))
            continue
        b1, b2 = o["betas"]
        m = keep(s["exp_avg"].lerp(g, 1 - b1), s["exp_avg"])
        v = keep(s["exp_avg_sq"].mul(b2).addcmul(g, g, value=1 - b2), s["exp_avg_sq"])
        s["exp_avg"], s["exp_avg_sq"] = m, v
        denom = (v.sqrt() / _bcast(fac[1], v)).add_(o["eps"])
        p.copy_(keep(p + m / denom * _bcast(fac[0], p), p))


def _index(rows, n: int, device: torch.device) -> torch.Tensor | None:
    """``rows`` as a device index tensor, or None when it is every row in order."""
    rows = [int(r) for r in rows]
    return None if rows == list(range(n)) else host_tensor(rows, torch.int64, device)


def weighted_rows(stack: dict, w: np.ndarray, rows) -> dict:
    """Σ_k w_k · row_k over ``rows`` per key (floating tensors); integer buffers take the first row's value."""
    v0 = next(iter(stack.values()))
    idx = _index(rows, len(v0), v0.device)
    wt = {}
    out = {}
    for k, v in stack.items():
        sub = v if idx is None else v.index_select(0, idx)
        if v.is_floating_point():
            if v.dtype not in wt:
                wt[v.dtype] = host_tensor(w, v.dtype, v.device)
            out[k] = (sub * _bcast(wt[v.dtype], v)).sum(0)
        else:
            out[k] = sub[0].clone()
    return out


def assign_rows(stack: dict, rows, avg: dict) -> None:
    """Rows ``rows`` of every tensor of ``stack`` set to ``avg``'s value of that key, in place."""
    v0 = next(iter(stack.values()))
    idx = _index(rows, len(v0), v0.device)
    with torch.no_grad():
        for k, v in avg.items():
            t = stack[k]
            if idx is None:
                t.copy_(v.expand_as(t))
            else:
                t.index_copy_(0, idx, v.to(t.dtype).unsqueeze(0).expand(len(idx), *t.shape[1:]))


def average_server_copies(st, weights) -> None:
    """Copies mode (SplitFed-V1): the server copies of unit j (devices with cut < j) become their weighted mean."""
    w = _weights(st.num_devices, weights)
    for j in range(st.num_units):
        holders = [i for i in range(st.num_devices) if st.cuts[i] < j + 1]
        if len(holders) > 1:
            wh = w[holders] / w[holders].sum() if w[holders].sum() > 0 else np.full(len(holders), 1 / len(holders))
            assign_rows(st.per[j], holders, weighted_rows(st.per[j], wh, holders))
