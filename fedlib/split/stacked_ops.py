"""Row-wise updates of stacked per-device state (:mod:`.stacked`): the optimizer step of the rows that trained
(``torch.optim``'s single-tensor SGD / Adam arithmetic, one step count per device) and weighted averages of rows
(eqs. 1 / 7, the engine's :func:`.ops.weighted_mean` on stacked tensors)."""
from __future__ import annotations

import numpy as np
import torch

from .engine import _weights


def rows_view(v: torch.Tensor, rows: np.ndarray) -> torch.Tensor:
    """Host values ``rows`` ``[N]`` as a ``[N, 1, ..., 1]`` tensor that broadcasts over ``v`` ``[N, ...]``."""
    return torch.as_tensor(rows, dtype=v.dtype, device=v.device).view(-1, *[1] * (v.dim() - 1))


def step_rows(opt: dict, params: dict, grads: dict, state: dict, steps: np.ndarray, on: np.ndarray) -> None:
    """One optimizer step of the rows ``on`` (host bools ``[N]``), in place; other rows stay bit-identical.
    The arithmetic of ``torch.optim``'s single-tensor SGD / Adam, per row (Adam's step count per device).

    Args:
        opt: the engine's optimizer settings (``name``, ``lr``, ``momentum``, ``weight_decay``, ``betas``, ``eps``).
        params / grads: ``{name: [N, ...]}``. state: ``{name: {"exp_avg", "exp_avg_sq"} | {"momentum_buffer"}}``
            of ``[N, ...]`` tensors (replaced by the updated ones). steps: ``[N]`` steps taken per row (host,
            incremented for the rows ``on``); a row at 0 starts SGD's momentum buffer from its gradient.
    """
    if not on.any():
        return
    o = opt
    every = bool(on.all())
    first = steps == 0
    steps += on
    mask = None if every else torch.as_tensor(on, device=next(iter(params.values())).device)
    for k, g in grads.items():
        p, s = params[k], state[k]
        keep = (lambda new, old: new) if every else \
            (lambda new, old: torch.where(mask.view(-1, *[1] * (old.dim() - 1)), new, old))
        if o["weight_decay"]:
            g = g.add(p, alpha=o["weight_decay"])
        if o["name"] == "sgd":
            if o["momentum"]:
                buf = s["momentum_buffer"]
                new = buf * o["momentum"] + g
                if first.any():
                    new = torch.where(rows_view(new, first).bool(), g, new)
                s["momentum_buffer"] = keep(new, buf)
                g = s["momentum_buffer"]
            p.copy_(keep(p + g * -o["lr"], p))
            continue
        b1, b2 = o["betas"]
        m = keep(s["exp_avg"].lerp(g, 1 - b1), s["exp_avg"])
        v = keep(s["exp_avg_sq"].mul(b2).addcmul(g, g, value=1 - b2), s["exp_avg_sq"])
        s["exp_avg"], s["exp_avg_sq"] = m, v
        t = np.maximum(steps, 1).astype(float)
        step_size = np.array([o["lr"] / (1 - b1 ** float(x)) for x in t])
        bc2_sqrt = np.array([(1 - b2 ** float(x)) ** 0.5 for x in t])
        denom = (v.sqrt() / rows_view(v, bc2_sqrt)).add_(o["eps"])
        p.copy_(keep(p + rows_view(p, -step_size) * m / denom, p))


def weighted_rows(stack: dict, w: np.ndarray, rows) -> dict:
    """Σ_k w_k · row_k over ``rows`` per key (floating tensors); integer buffers take the first row's value."""
    out = {}
    for k, v in stack.items():
        sub = v[rows]
        if v.is_floating_point():
            out[k] = (sub * torch.as_tensor(w, dtype=v.dtype, device=v.device).view(-1, *[1] * (v.dim() - 1))).sum(0)
        else:
            out[k] = sub[0].clone()
    return out


def assign_rows(stack: dict, rows, avg: dict) -> None:
    """Rows ``rows`` of every tensor of ``stack`` set to ``avg``'s value of that key, in place."""
    with torch.no_grad():
        for k, v in avg.items():
            stack[k][rows] = v


def average_server_copies(st, weights) -> None:
    """Copies mode (SplitFed-V1): the server copies of unit j (devices with cut < j) become their weighted mean."""
    w = _weights(st.num_devices, weights)
    for j in range(st.num_units):
        holders = [i for i in range(st.num_devices) if st.cuts[i] < j + 1]
        if len(holders) > 1:
            wh = w[holders] / w[holders].sum() if w[holders].sum() > 0 else np.full(len(holders), 1 / len(holders))
            assign_rows(st.per[j], holders, weighted_rows(st.per[j], wh, holders))
