"""Runs of the split engine and their records: data partition and per-round batches (seed stream ``data``),
global-model evaluation, the simulated clock hook, and the paper's convergence criterion.

Record (:func:`run_split`), one entry per evaluation (round 0, every ``eval_every`` rounds and the last):
``round``; ``epoch`` = samples processed so far (Σ over rounds of Σ_i b_i) / |D_train|, i.e. one epoch = as many
device samples as the training set holds; ``sim_s`` = Σ of ``clock(round, b, cuts, aggregated)`` over the rounds
so far (simulated seconds; 0 without a clock); ``test_acc`` / ``test_loss`` of the global model
(:func:`fedlib.split.global_model`) on the full test set; ``elapsed_s`` real seconds since the start;
``train_loss`` mean main loss of the last round (None at round 0).
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..core.seeding import numpy_rng, resolve_device, torch_generator
from ..core.validate import check_array, check_callable, check_float, check_instance, check_int, check_list
from fedlib.data import TensorDataset, load_dataset
from fedlib.data import partition
from .config import SplitConfig, build_model
from .backends import resolve_backend, split_backend
from .engine import LocalLossStep


def client_partition(cfg: SplitConfig, labels) -> list[np.ndarray]:
    """Per-device training indices (``data`` stream): ``iid``, ``shards`` (sort by label, ``shards_per_client``
    shards each; HASFL's non-IID) or ``dirichlet`` (``alpha``)."""
    check_instance("cfg", cfg, SplitConfig)
    return partition.split(np.asarray(labels), cfg.num_devices, cfg.partition, numpy_rng(cfg.seed, "data"),
                           shards_per_client=cfg.shards_per_client, alpha=cfg.alpha)


def draw_batches(parts: list[torch.Tensor], b, generator: torch.Generator) -> list[torch.Tensor]:
    """One round's mini-batch indices: device i draws b_i indices uniformly with replacement from ``parts[i]``.

    Uniforms come from the CPU ``generator`` (float64, Σ_i b_i per round, device order) and are moved to the
    partition's device, so a CUDA run follows the CPU run's sample path. Returns ``[b_i]`` int64 per device.
    """
    check_list("parts", parts)
    b = check_list("b", list(b) if isinstance(b, np.ndarray) else b, lambda k, v: check_int(k, v, 1))
    if len(b) != len(parts):
        raise ValueError(f"b must hold one batch size per device: {len(parts)} parts, got {len(b)} batch sizes")
    check_instance("generator", generator, torch.Generator, "a CPU torch.Generator")
    u = torch.rand(int(np.sum(b)), generator=generator, dtype=torch.float64, device="cpu")
    out = []
    for p, chunk in zip(parts, u.split([int(v) for v in b])):
        out.append(p[(chunk.to(p.device) * len(p)).long()])
    return out


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 1000) -> tuple[float, float]:
    """Accuracy (fraction) and mean cross-entropy of ``model`` (eval mode) on ``x [n, C, H, W]``, ``y [n]``."""
    check_int("batch", batch, 1)
    model.eval()
    correct, loss = 0, 0.0
    for s in range(0, len(y), batch):
        out = model(x[s:s + batch])
        loss += float(F.cross_entropy(out, y[s:s + batch], reduction="sum"))
        correct += int((out.argmax(1) == y[s:s + batch]).sum())
    return correct / len(y), loss / len(y)


def run_split(cfg: SplitConfig, dataset: TensorDataset | None = None, device: str = "auto",
              clock: Callable | None = None, aux_head: Callable | None = None, weights=None,
              schedule: Callable | None = None, stop: Callable | None = None, backend: str = "loop",
              local_step: LocalLossStep | None = None) -> dict:
    """Train ``cfg.rounds`` rounds of split-federated learning and record the evaluations (module docstring).

    Args:
        cfg: the run. dataset: loaded data (default ``load_dataset(cfg.dataset)``). device: ``"auto"`` = CUDA
            when present.
        clock: ``clock(round, b, cuts, aggregated) -> seconds`` of one round (a paper's latency model, e.g.
            HASFL eqs. 38-40: T_S, plus T_A on aggregation rounds); the engine knows no formula.
        aux_head: ``aux_head(cut, smashed_shape) -> nn.Module`` for ``local_loss``. weights: ``[N]`` aggregation
            weights (eq. 7, server copies), uniform when None.
        schedule: ``schedule(round, state) -> (b, cuts) | None`` called before every round (reassignments).
        stop: ``stop(record) -> bool`` called after every evaluation with the record so far; True ends the run
            at that evaluation (e.g. a paper's convergence rule: no rounds trained past the point it fires).
        backend: ``"loop"`` (:mod:`.engine`), a stacked variant (:mod:`.stacked`: no host syncs in a round, the
            labels checked once before the first) or ``"auto"`` (:mod:`fedlib.split.backends`). The same run step
            for step on each, float-close, not bit-identical: a stacked record also holds ``"backend"``.
        local_step: the step at the cut of every round with ``local_loss`` (:class:`.engine.LocalLossStep`, for
            the backend used; DTFL's: :func:`fedlib.dtfl.local_loss.local_loss_step`).

    Returns:
        dict with ``config``, ``device`` and the per-evaluation lists ``round``, ``epoch``, ``sim_s``,
        ``test_acc``, ``test_loss``, ``train_loss``, ``elapsed_s``.

    Raises:
        ValueError: an unknown backend or device; a label outside the dataset's classes (before the first round).
    """
    check_instance("cfg", cfg, SplitConfig)
    check_instance("dataset", dataset, TensorDataset, "a fedlib.data.TensorDataset", allow_none=True)
    for name, fn in (("clock", clock), ("aux_head", aux_head), ("schedule", schedule), ("stop", stop)):
        check_callable(name, fn)
    t0 = time.perf_counter()
    dev = resolve_device(device)
    used = resolve_backend(backend, dev)
    f = split_backend(used)
    ds = dataset if dataset is not None else load_dataset(cfg.dataset)
    if used != "loop" and (int(ds.y_train.min()) < 0 or int(ds.y_train.max()) >= ds.num_classes):
        raise ValueError(f"dataset labels must lie in 0..{ds.num_classes - 1}, got {int(ds.y_train.min())}.."
                         f"{int(ds.y_train.max())}")
    parts = [torch.from_numpy(np.asarray(p, dtype=np.int64)).to(dev) for p in client_partition(cfg, ds.y_train)]
    x_train, y_train = ds.x_train.to(dev), ds.y_train.to(dev)
    x_test, y_test = ds.x_test.to(dev), ds.y_test.to(dev)
    shape = tuple(ds.x_train.shape[1:])
    model = build_model(cfg, shape[0], shape[1], ds.num_classes)
    st = f.init_state(cfg, model, shape, dev, aux_head)
    gen = torch_generator(cfg.seed, "data")
    rec = {"config": cfg.to_dict(), "device": str(dev), **({} if used == "loop" else {"backend": used}),
           "round": [], "epoch": [], "sim_s": [], "test_acc": [], "test_loss": [], "train_loss": [], "elapsed_s": []}
    sim, loss = 0.0, None

    def record(r):
        acc, tl = evaluate(f.global_model(st, weights), x_test, y_test)
        for k, v in (("round", r), ("epoch", st.samples / len(y_train)), ("sim_s", sim), ("test_acc", acc),
                     ("test_loss", tl), ("train_loss", None if loss is None else float(loss)),
                     ("elapsed_s", time.perf_counter() - t0)):
            rec[k].append(v)

    record(0)
    for r in range(1, cfg.rounds + 1):
        if schedule is not None:
            new = schedule(r, st)
            if new is not None:
                f.set_decision(st, *new, weights=weights, seed=cfg.seed)
        idx = draw_batches(parts, st.b, gen)
        loss = f.train_round_nosync(st, [x_train[i] for i in idx], [y_train[i] for i in idx], weights,
                                    local_step=local_step)
        aggregated = r % cfg.interval == 0
        if aggregated:
            f.aggregate(st, weights)
        if clock is not None:
            sim += float(clock(r, st.b.copy(), st.cuts.copy(), aggregated))
        if r % cfg.eval_every == 0 or r == cfg.rounds:
            record(r)
            if stop is not None and stop(rec):
                break
    return rec


def converged_at(accs, window: int = 5, min_gain: float = 0.0002, start: int = 0) -> int | None:
    """HASFL's convergence point: the first evaluation index k (>= ``start + window``) such that the best test
    accuracy of the last ``window`` evaluations (k-window+1..k) beats the best before them by less than
    ``min_gain`` (0.0002 = 0.02 % accuracy, fractions in [0, 1]); ``None`` if never.

    ``start`` (choice, not in the paper): the first evaluation the rule may look back to; a caller passes the
    first evaluation at which training has left its initial plateau (e.g. accuracy above twice chance), so that
    the flat accuracy of the first rounds is not taken for convergence.

    Raises:
        ValueError: window < 1, start < 0, min_gain NaN or < 0, accs empty or not accuracies in [0, 1].
    """
    check_int("window", window, 1)
    check_int("start", start, 0)
    check_float("min_gain", min_gain, 0)
    a = check_array("accs", accs, low=0, high=1)
    for k in range(max(window, start + window), len(a)):
        if a[k - window + 1:k + 1].max() - a[:k - window + 1].max() < min_gain:
            return k
    return None


def time_to_target(record: dict, target: float, key: str = "sim_s") -> float | None:
    """``record[key]`` (default simulated seconds) at the first evaluation whose test accuracy is >= ``target``
    (a fraction); ``None`` if never reached.

    Raises:
        ValueError: ``target`` NaN or outside (0, 1]; ``record`` lacks ``test_acc`` or ``key``."""
    check_float("target", target, 0, 1, low_open=True)
    check_instance("record", record, dict, "a run record (dict)")
    for k in ("test_acc", key):
        if k not in record:
            raise ValueError(f"record has no {k!r} list (key must be one of its lists: "
                             f"{sorted(k for k, v in record.items() if isinstance(v, list))})")
    for acc, t in zip(record["test_acc"], record[key]):
        if acc >= target:
            return t
    return None
