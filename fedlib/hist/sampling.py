"""HIST data and masks: client partitions (Sec. V), hidden-neuron groups and masks (eq. 3), minibatch indices."""
from __future__ import annotations

import numpy as np
import torch

from ..core.seeding import numpy_rng
from ..data import partition
from .config import HistConfig


def client_partition(cfg: HistConfig, labels: np.ndarray) -> list[np.ndarray]:
    """Per-client training indices for ``cfg.setting`` (HIST Sec. V), from the ``data`` stream.

    ``noniid``: :func:`fedlib.data.partition.shards` over all U clients; ``cell_iid``:
    :func:`fedlib.data.partition.cell_iid_client_shards`. Client u is in cell u // (U/N).
    """
    rng = numpy_rng(cfg.seed, "data")
    if cfg.setting == "noniid":
        return partition.shards(labels, cfg.num_clients, cfg.shards_per_client, rng)
    return partition.cell_iid_client_shards(labels, cfg.num_cells, cfg.clients_per_cell,
                                            cfg.shards_per_client, rng)


def draw_groups(method: str, hidden: int, num_cells: int, rng: np.random.Generator) -> np.ndarray:
    """Hidden-neuron groups of the N cells for one global round: ``[N, h]`` int64.

    HIST: a uniformly random permutation of ``range(hidden)`` cut into N equal groups (disjoint and covering:
    eq. 3); h = hidden/N. HFedAvg: every cell holds all neurons (h = hidden, no masks).

    Raises:
        ValueError: N does not divide ``hidden`` (HIST).
    """
    if method == "hfedavg":
        return np.tile(np.arange(hidden), (num_cells, 1))
    if hidden % num_cells:
        raise ValueError(f"num_cells ({num_cells}) must divide hidden ({hidden})")
    return rng.permutation(hidden).reshape(num_cells, hidden // num_cells)


def masks_from_groups(groups: np.ndarray, hidden: int) -> np.ndarray:
    """Neuron-level masks p_j: ``[N, hidden]`` bool, ``masks[j, k]`` iff cell j holds neuron k (eq. 3).

    A parameter's mask follows its neuron: row k of W1, b1[k] and column k of W2.
    """
    masks = np.zeros((groups.shape[0], hidden), dtype=bool)
    np.put_along_axis(masks, groups, True, axis=1)
    return masks


def sample_batch_indices(client_index: torch.Tensor, sizes: torch.Tensor, batch_size: int,
                         generator: torch.Generator, steps: int = 1) -> torch.Tensor:
    """Minibatches of ``steps`` consecutive client steps, drawn uniformly with replacement from local data.

    The engine and the reference loop both draw one edge interval (``steps = H``) at a time, so they consume
    the ``data`` stream identically.

    Args:
        client_index: ``[U, max_n]`` int64, row u = client u's sample indices (padded past ``sizes[u]``).
        sizes: ``[U]`` int64 local dataset sizes n_u >= 1.
        batch_size: B.
        generator: CPU torch generator (stream ``data``); the uniforms are drawn on the CPU and moved to
            ``client_index``'s device, so the indices do not depend on the device.
        steps: number of steps drawn at once.

    Returns:
        ``[steps, U, B]`` int64 indices into the training set.
    """
    u = client_index.shape[0]
    draw = torch.rand((steps, u, batch_size), generator=generator, device="cpu", dtype=torch.float64)
    local = (draw.to(client_index.device) * sizes[None, :, None]).long()
    return torch.gather(client_index.expand(steps, -1, -1), 2, local)


def pad_partition(parts: list[np.ndarray], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """``parts`` -> (``[U, max_n]`` padded index matrix, ``[U]`` sizes) on ``device``."""
    sizes = np.array([len(p) for p in parts])
    if (sizes < 1).any():
        raise ValueError("every client needs at least one training sample")
    mat = np.zeros((len(parts), sizes.max()), dtype=np.int64)
    for u, p in enumerate(parts):
        mat[u, :len(p)] = p
    return torch.from_numpy(mat).to(device), torch.from_numpy(sizes).to(device)
