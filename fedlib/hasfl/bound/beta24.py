"""[24]'s estimator of the smoothness β, as [24] describes and implements it, on a federated pilot.

Source: S. Wang et al., "Adaptive Federated Learning in Resource Constrained Edge Computing Systems", IEEE JSAC
37(6), 2019 (HASFL's reference [24]: HASFL Sec. VI says β, G_j² and σ_j² "are estimated following the approach in
[24]"), its control algorithm (Algorithms 2 and 3: the edge nodes estimate β_i, the aggregator averages them) and
its public code (github.com/IBM/adaptive-federated-learning): ``control_algorithm/adaptive_tau.py``
(``ControlAlgAdaptiveTauClient.update_after_all_local``: β_i, the 1e-10 and 1e-5 guards; ``compute_new_tau``: the
D_i-weighted average and the moving average), ``client.py`` (which minibatch each gradient uses), ``server.py``
(the D_i-weighted aggregation) and ``util/utils.py`` (``moving_average``), ``config.py``
(``moving_average_holding_param = 0.0``).

What [24] computes. Edge node i trains τ local SGD steps per round from the global model; the aggregator averages
the local models weighted by the local data sizes D_i. At the start of round t, node i has the global model w^t
and kept from round t−1 its last local model w_i^{t−1} (after its τ-th local step, the model it sent) and the
gradient there. It computes

    β_i^t = ‖∇F_i(w_i^{t−1}; ξ) − ∇F_i(w^t; ξ)‖ / ‖w_i^{t−1} − w^t‖

with both gradients on the same minibatch ξ: the minibatch of round t−1's last local step (with minibatch SGD
[24] reuses that minibatch for round t's first local step, so ∇F_i(w^t; ξ) is that step's gradient and β costs
one extra gradient per node and round, at w_i^{t−1}). β_i = 0 when ‖w_i^{t−1} − w^t‖ <= 1e-10, then β_i is
floored at 1e-5 (and a NaN β_i set to 1e-5). The aggregator takes β^t = Σ_i D_i β_i^t / D (D = Σ_i D_i) and
smooths over rounds, β̄^t = p β̄^{t−1} + (1 − p) β^t, with β̄ = β^t at the first estimate (or while β̄ is NaN) and a
NaN β^t skipped; p = ``moving_average_holding_param``, 0.0 in [24]'s ``config.py`` (no smoothing). The first
estimate exists at round 2.

How it maps to HASFL (split FL). [24] sees whole models. In HASFL each device's client-side sub-model and its
server-side sub-model are trained as one model on the device's minibatches; that whole model, one per device, is
what [24]'s node i holds here, trained by plain FedAvg: every device runs I local SGD steps (HASFL's aggregation
interval, [24]'s τ) on the whole model, then the D_i-weighted average. Choice (ours): HASFL's server-side sub-models
are averaged every round and only the client-side ones every I rounds; the pilot averages the whole model every I
steps, as [24] does, so that β is [24]'s quantity on HASFL's model, data partition and I.

Our choices where this is not [24]'s code (also in ``notebooks/hasfl``'s Deviations):

- A fixed pilot of ``rounds`` rounds at a fixed I (τ is not adapted: HASFL decides once, before training, from
  the pilot's estimate) and ``rounds`` estimates: rounds 2..R and one more at the start of round R + 1 (the
  pilot's final global model), where [24] would compute it when round R + 1 begins.
- The value that decides is the moving average at the pilot's end, β̄^{R+1}: what [24]'s controller holds
  when it next decides. The holding parameter p is a setting (:func:`fedlib.lab.hasfl.runs.experiments.beta24_config`);
  the notebooks use [24]'s default 0.0, so the last round's node average decides.
- Minibatches: each node's data is cut into consecutive minibatches of a fresh permutation per pass (numpy
  Generator of stream ``data/beta24/<i>`` per node), as [24]'s ``util/sampling.py`` does with its own seeds
  (it reshuffles when ``start + b >= len``, one batch early; we when fewer than b samples are left). With I = 1
  [24] keeps a minibatch for 3 rounds; here a round-1 step draws a fresh minibatch and β still uses the previous
  round's last minibatch (one more gradient).
- A pilot whose global model is not finite raises (``ValueError``: nothing is cached) where [24] keeps the
  previous global model; a NaN β_i is floored to 1e-5 as in [24].
- Gradients of the mean cross-entropy over the minibatch, in train mode (BatchNorm on batch statistics; running
  statistics are neither used nor averaged: w is the parameter vector, as [24]'s w); norms in float64.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ...core.seeding import numpy_rng
from ...core.validate import ParameterTypeError, check_callable, check_float, check_int, check_list
from ... import __version__
from ...core.seeding import seed_sequence
from fedlib.data import DATASET_SHAPES, load_dataset
from fedlib.data import partition
from ...split.models import make_model
from .estimate import _check_model_data, one_torch_thread

#: [24]'s floor on a node's β_i (``adaptive_tau.py``: ``if beta_adapt < 1e-5 or isnan: beta_adapt = 1e-5``)
BETA_FLOOR = 1e-5
#: [24]'s smallest ‖w_i − w‖ with a direction (``tmp_norm > 1e-10``, else β_i = 0, then floored)
MIN_STEP = 1e-10


def node_beta(w_local: torch.Tensor, g_local: torch.Tensor, w_global: torch.Tensor, g_global: torch.Tensor) -> float:
    """β_i of one node ([24], ``adaptive_tau.py``): ‖g_local − g_global‖ / ‖w_local − w_global‖, 0 when the
    weights are within :data:`MIN_STEP`, then floored at :data:`BETA_FLOOR` (a NaN too).

    Args:
        w_local, g_local: the node's last local model of the previous round ``[P]`` and the gradient there.
        w_global, g_global: the new global model ``[P]`` and the node's gradient there, on the same minibatch.

    Returns:
        β_i (1 / step-size units of the loss, as β), >= :data:`BETA_FLOOR`.

    Raises:
        ParameterTypeError: not tensors. ValueError: vectors of different sizes.
    """
    vecs = (w_local, g_local, w_global, g_global)
    if not all(isinstance(v, torch.Tensor) for v in vecs):
        raise ParameterTypeError(f"node_beta takes four tensors, got {[type(v).__name__ for v in vecs]}")
    if len({int(v.numel()) for v in vecs}) != 1:
        raise ValueError(f"node_beta needs vectors of one size, got {[int(v.numel()) for v in vecs]}")
    dw = float(torch.linalg.vector_norm(w_local.double() - w_global.double()))
    beta = float(torch.linalg.vector_norm(g_local.double() - g_global.double())) / dw if dw > MIN_STEP else 0.0
    return BETA_FLOOR if math.isnan(beta) or beta < BETA_FLOOR else beta


def weighted_beta(node_betas, sizes) -> float:
    """The aggregator's β = Σ_i D_i β_i / Σ_i D_i ([24], ``adaptive_tau.py`` ``compute_new_tau``).

    Raises:
        ValueError / ParameterTypeError: naming ``node_betas`` / ``sizes``: empty, of different lengths, a β_i not a
            number >= 0, a D_i not an int >= 1.
    """
    node_betas = check_list("node_betas", list(node_betas), lambda k, v: check_float(k, v, 0))
    sizes = check_list("sizes", list(sizes), lambda k, v: check_int(k, v, 1))
    if len(node_betas) != len(sizes):
        raise ValueError(f"sizes must hold one D_i per node: {len(node_betas)} betas, got {len(sizes)} sizes")
    return float(sum(d * b for d, b in zip(sizes, node_betas)) / sum(sizes))


def moving_average(previous: float | None, new: float, holding: float) -> float:
    """[24]'s ``util/utils.py`` ``moving_average``: ``new`` when ``previous`` is None or NaN; ``previous`` when
    ``new`` is NaN; else ``holding · previous + (1 − holding) · new``.

    Raises:
        ValueError: ``holding`` outside [0, 1).
    """
    holding = check_float("holding", holding, 0, 1, high_open=True)
    if previous is None or math.isnan(previous):
        return float(new)
    if math.isnan(new):
        return float(previous)
    return holding * previous + (1 - holding) * float(new)


class _Batches:
    """A node's minibatches: consecutive slices of a fresh permutation of ``range(size)`` per pass."""

    def __init__(self, size: int, batch_size: int, rng: np.random.Generator):
        self.size, self.b, self.rng = size, batch_size, rng
        self.perm, self.start = rng.permutation(size), 0

    def next(self) -> np.ndarray:
        if self.start + self.b > self.size:
            self.perm, self.start = self.rng.permutation(self.size), 0
        out = self.perm[self.start:self.start + self.b]
        self.start += self.b
        return out


def federated_beta24(w0: torch.Tensor, grad: Callable, sizes, rounds: int, interval: int, lr: float,
                     batch_size: int, holding: float, rngs) -> dict:
    """[24]'s β on a FedAvg pilot over flat weight vectors (module docstring).

    Args:
        w0: the initial global model ``[P]`` (its dtype is the training's).
        grad: ``grad(i, w, batch) -> [P]``, node i's minibatch gradient at ``w`` on ``batch`` (int indices into
            node i's local data, ``0..sizes[i] − 1``).
        sizes: D_i, local data size of each of the N nodes (the aggregation weights).
        rounds: R >= 1 rounds of ``interval`` local steps each; R estimates (rounds 2..R + 1).
        interval: I >= 1 local SGD steps per round ([24]'s τ). lr: SGD step size (> 0).
        batch_size: minibatch size (1..min D_i). holding: p of the moving average, in [0, 1).
        rngs: one numpy Generator per node (its minibatches).

    Returns:
        ``beta``: the deciding value, the moving average after the last estimate; ``beta_rounds``: β^t per
        estimate (R floats, the D_i-weighted node average); ``beta_smoothed``: the moving average after each;
        ``beta_nodes``: β_i^t (R lists of N); ``floored``: nodes at :data:`BETA_FLOOR` per estimate; ``weights``:
        D_i / D; ``rounds``, ``interval``, ``holding``.

    Raises:
        ValueError / ParameterTypeError: a bad argument, naming it; ``batch_size`` above a node's D_i; a global
            model that is not finite (a diverged pilot).
    """
    if not isinstance(w0, torch.Tensor) or w0.ndim != 1 or w0.numel() == 0:
        raise ParameterTypeError(f"w0 must be a non-empty 1-D tensor, got {type(w0).__name__}")
    check_callable("grad", grad, allow_none=False)
    sizes = check_list("sizes", list(sizes), lambda k, v: check_int(k, v, 1))
    check_int("rounds", rounds, 1)
    check_int("interval", interval, 1)
    check_float("lr", lr, 0, low_open=True)
    check_int("batch_size", batch_size, 1, min(sizes), extra=f" (the smallest node holds {min(sizes)} samples)")
    check_float("holding", holding, 0, 1, high_open=True)
    rngs = check_list("rngs", list(rngs))
    if len(rngs) != len(sizes) or not all(isinstance(r, np.random.Generator) for r in rngs):
        raise ParameterTypeError(f"rngs must hold one numpy Generator per node ({len(sizes)}), got "
                                 f"{[type(r).__name__ for r in rngs]}")
    n = len(sizes)
    batches = [_Batches(d, batch_size, r) for d, r in zip(sizes, rngs)]
    w_global = w0.detach().clone()
    last: list = [None] * n        # per node: (w_i^{t-1} after its last step, gradient there, that step's minibatch)
    per_round, smoothed, per_node, floored, avg = [], [], [], [], None
    for t in range(1, rounds + 2):
        betas, new_locals = [], []
        for i in range(n):
            g_first = None
            if last[i] is not None:     # β_i^t: the last local model of round t-1 against w^t, on its last minibatch
                w_prev, g_prev, xi = last[i]
                g_first = grad(i, w_global, xi)
                betas.append(node_beta(w_prev, g_prev, w_global, g_first))
            if t == rounds + 1:
                continue
            w = w_global.clone()
            for k in range(interval):
                if k == 0 and g_first is not None and interval > 1:   # [24] reuses the last minibatch (client.py)
                    g = g_first
                else:
                    xi = batches[i].next()
                    g = grad(i, w, xi)
                w = w - lr * g
            new_locals.append(w)
            last[i] = (w, grad(i, w, xi), xi)     # the gradient at the final local model, its last minibatch
        if betas:
            beta = weighted_beta(betas, sizes)
            avg = moving_average(avg, beta, holding)
            per_round.append(beta)
            smoothed.append(avg)
            per_node.append(betas)
            floored.append(sum(b == BETA_FLOOR for b in betas))
        if new_locals:
            w_global = sum(d * w for d, w in zip(sizes, new_locals)) / sum(sizes)
            if not bool(torch.isfinite(w_global).all()):
                raise ValueError(f"the federated pilot diverged at round {t} (non-finite global model): lower lr "
                                 f"(got {lr})")
    return {"beta": avg, "beta_rounds": per_round, "beta_smoothed": smoothed, "beta_nodes": per_node,
            "floored": floored, "weights": [d / sum(sizes) for d in sizes], "rounds": rounds, "interval": interval,
            "holding": holding}


def _flat_params(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def beta24_pilot(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor, parts, rounds: int, interval: int,
                 lr: float, batch_size: int, holding: float, seed: int) -> dict:
    """[24]'s β (module docstring) of ``model`` on a FedAvg pilot over the nodes' data ``parts``, on one torch
    thread (as :func:`fedlib.hasfl.bound.estimate.pilot_constants`).

    Args:
        model: the whole model (client and server sub-models as one), its initial weights the pilot's w⁰; it is
            left at the pilot's final global model.
        x, y: the training set ``[n, C, H, W]`` and labels ``[n]``.
        parts: N index arrays into (x, y), node i's local data (the training runs' device partition).
        rounds, interval, lr, batch_size, holding: as :func:`federated_beta24`. seed: the minibatch streams
            (``data/beta24/<i>`` of ``seed``).

    Returns:
        :func:`federated_beta24`'s dict plus ``num_nodes``, ``sizes`` (D_i) and ``elapsed_s``.

    Raises:
        ValueError / ParameterTypeError: a bad argument, naming it (``parts``: empty, a part empty or outside
            ``range(len(x))``), or a diverged pilot.
    """
    _check_model_data(model, x, y)
    check_int("seed", seed, 0)
    parts = check_list("parts", [np.asarray(p) for p in parts] if isinstance(parts, (list, tuple)) else parts)
    for i, p in enumerate(parts):
        if p.ndim != 1 or len(p) == 0 or not np.issubdtype(p.dtype, np.integer) or p.min() < 0 or p.max() >= len(x):
            raise ValueError(f"parts[{i}] must be a non-empty 1-D array of indices into the {len(x)} samples")
    t0 = time.perf_counter()
    params = list(model.parameters())
    idx = [torch.from_numpy(p.astype(np.int64)) for p in parts]
    model.train()

    def grad(i: int, w: torch.Tensor, batch: np.ndarray) -> torch.Tensor:
        torch.nn.utils.vector_to_parameters(w, params)
        model.zero_grad(set_to_none=True)
        rows = idx[i][torch.from_numpy(np.asarray(batch, dtype=np.int64))]
        F.cross_entropy(model(x[rows]), y[rows]).backward()
        return torch.cat([p.grad.reshape(-1) for p in params]).detach().clone()

    with one_torch_thread(), torch.no_grad():
        w0 = _flat_params(model).clone()
    with one_torch_thread():
        rec = federated_beta24(w0, grad, [len(p) for p in parts], rounds, interval, lr, batch_size, holding,
                               [numpy_rng(seed, f"data/beta24/{i}") for i in range(len(parts))])
    model.zero_grad(set_to_none=True)
    return dict(rec, num_nodes=len(parts), sizes=[len(p) for p in parts], elapsed_s=time.perf_counter() - t0)


def beta24_record(config: dict, data=None) -> dict:
    """The record a ``hasfl_beta24`` key stores (``config`` as :func:`fedlib.lab.hasfl.runs.experiments.beta24_config`
    builds it): :func:`beta24_pilot` of ``config["model"]`` (the ``model`` seed stream's initial weights, those of
    the constants' pilot and of the training runs) on the training runs' device partition of ``config["setting"]``
    (:func:`fedlib.data.partition.split` on the seed's ``data`` stream, as :func:`fedlib.split.records.client_partition`).

    Returns:
        ``beta24_pilot``'s dict (``beta`` decides) with ``config``, ``fedlib_version`` and ``data_source``.
    """
    ds = data if data is not None else load_dataset(config["dataset"])
    ch, size, classes = DATASET_SHAPES[config["dataset"]]
    torch.manual_seed(int(seed_sequence(config["seed"], "model").generate_state(1)[0]))  # torchvision init
    model = make_model(config["model"], ch, size, classes, config["width"])   # yours too: import path
    scheme = "iid" if config["setting"] == "iid" else "shards"
    parts = partition.split(np.asarray(ds.y_train), config["num_devices"], scheme, numpy_rng(config["seed"], "data"),
                            shards_per_client=config["shards_per_client"])
    rec = beta24_pilot(model, ds.x_train, ds.y_train, parts, config["rounds"], config["interval"], config["lr"],
                       config["batch_size"], config["holding"], config["seed"])
    return dict(rec, config=config, fedlib_version=__version__, data_source=ds.source)
