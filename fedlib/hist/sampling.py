"""HIST data and masks: client partitions (Sec. V), hidden-neuron groups and masks (eq. 3), minibatch indices."""
from __future__ import annotations

import numpy as np
import torch

from ..core.components import call, check_output, is_path, resolve
from ..core.seeding import numpy_rng
from ..core.validate import ParameterTypeError, check_array, check_choice, check_int
from ..data import partition
from .config import HistConfig

#: the parameters a client partition of your own takes (:func:`client_partition`)
PARTITION_PARAMS = "(labels, num_clients, num_cells, rng)"


def _same_parts(a, b) -> bool:
    """Whether two outputs of a partition of your own hold the same index arrays in the same order (outputs that
    are not lists or tuples are left to the shape check that follows)."""
    if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))):
        return True
    return len(a) == len(b) and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b))


def client_partition(cfg: HistConfig, labels: np.ndarray) -> list[np.ndarray]:
    """Per-client training indices for ``cfg.setting`` (HIST Sec. V), from the ``data`` stream.

    ``noniid``: :func:`fedlib.data.partition.shards` over all U clients; ``cell_iid``:
    :func:`fedlib.data.partition.cell_iid_client_shards` (both through :func:`fedlib.data.partition.split`).
    A partition of your own, ``cfg.setting = "package.module:fn"``: ``fn(labels, num_clients, num_cells, rng)``
    returns U non-empty index arrays into ``labels`` (checked). Client u is in cell u // (U/N). It must be
    deterministic given ``rng``: it is called twice with the same seed and refused if the two differ.

    Raises (a partition of your own): ParameterTypeError (its signature cannot take the four arguments),
    :class:`fedlib.core.components.ComponentError` (it raised: named, the original as the cause), ValueError (not
    deterministic; not U non-empty index arrays into ``labels``).
    """
    if not isinstance(cfg, HistConfig):
        raise ParameterTypeError(f"cfg must be a HistConfig, got {type(cfg).__name__}")
    if is_path(cfg.setting):
        fn, who = resolve(cfg.setting, "setting"), f"partition {cfg.setting!r}"
        parts, again = (call(fn, who, PARTITION_PARAMS, labels, cfg.num_clients, cfg.num_cells,
                             numpy_rng(cfg.seed, "data")) for _ in range(2))
        if not _same_parts(parts, again):
            raise ValueError(f"{who} is not deterministic: two calls with the same seed ({cfg.seed}) gave different "
                             f"clients; draw only from the rng it receives")
        if (not isinstance(parts, (list, tuple)) or len(parts) != cfg.num_clients
                or not all(np.ndim(p) == 1 and len(p) for p in parts)):
            raise ValueError(f"{who} must return U = {cfg.num_clients} non-empty 1-D index arrays")
        return [np.sort(check_output(who, f"client {u}'s indices", p, len(p), 0, len(labels) - 1))
                for u, p in enumerate(parts)]
    scheme = "shards" if cfg.setting == "noniid" else "cell_shards"
    return partition.split(labels, cfg.num_clients, scheme, numpy_rng(cfg.seed, "data"),
                           shards_per_client=cfg.shards_per_client, num_cells=cfg.num_cells)


def draw_groups(method: str, hidden: int, num_cells: int, rng: np.random.Generator) -> np.ndarray:
    """Hidden-neuron groups of the N cells for one global round: ``[N, h]`` int64.

    HIST: a uniformly random permutation of ``range(hidden)`` cut into N equal groups (disjoint and covering:
    eq. 3); h = hidden/N. HFedAvg: every cell holds all neurons (h = hidden, no masks).

    Raises:
        ValueError: unknown method, counts < 1, N > hidden, N does not divide ``hidden`` (HIST).
        ParameterTypeError: non-integer counts, ``rng`` not a numpy Generator.
    """
    check_choice("method", method, ("hist", "hfedavg"))
    check_int("hidden", hidden, 1)
    check_int("num_cells", num_cells, 1, hidden, extra=" (at most hidden)")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if method == "hfedavg":
        return np.tile(np.arange(hidden), (num_cells, 1))
    if hidden % num_cells:
        raise ValueError(f"num_cells ({num_cells}) must divide hidden ({hidden})")
    return rng.permutation(hidden).reshape(num_cells, hidden // num_cells)


def masks_from_groups(groups: np.ndarray, hidden: int) -> np.ndarray:
    """Neuron-level masks p_j: ``[N, hidden]`` bool, ``masks[j, k]`` iff cell j holds neuron k (eq. 3).

    A parameter's mask follows its neuron: row k of W1, b1[k] and column k of W2.
    """
    check_int("hidden", hidden, 1)
    groups = check_array("groups", groups, low=0, high=hidden - 1, ndim=2, integer=True)
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
    check_int("batch_size", batch_size, 1)
    check_int("steps", steps, 1)
    if not isinstance(generator, torch.Generator):
        raise ParameterTypeError(f"generator must be a torch.Generator (CPU), got {type(generator).__name__}")
    if not isinstance(client_index, torch.Tensor) or client_index.ndim != 2:
        raise ParameterTypeError(f"client_index must be a [U, max_n] int64 tensor, got {type(client_index).__name__}")
    if not isinstance(sizes, torch.Tensor) or sizes.shape != client_index.shape[:1]:
        raise ValueError(f"sizes must be a [U] tensor with U = {client_index.shape[0]}, got "
                         f"{getattr(sizes, 'shape', type(sizes).__name__)}")
    u = client_index.shape[0]
    draw = torch.rand((steps, u, batch_size), generator=generator, device="cpu", dtype=torch.float64)
    local = (draw.to(client_index.device) * sizes[None, :, None]).long()
    return torch.gather(client_index.expand(steps, -1, -1), 2, local)


def pad_partition(parts: list[np.ndarray], device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """``parts`` -> (``[U, max_n]`` padded index matrix, ``[U]`` sizes) on ``device``."""
    if not isinstance(parts, (list, tuple)) or not parts:
        raise ValueError(f"parts must be a non-empty list of index arrays, got {parts!r}")
    sizes = np.array([len(p) for p in parts])
    if (sizes < 1).any():
        raise ValueError("every client needs at least one training sample")
    mat = np.zeros((len(parts), sizes.max()), dtype=np.int64)
    for u, p in enumerate(parts):
        mat[u, :len(p)] = p
    return torch.from_numpy(mat).to(device), torch.from_numpy(sizes).to(device)
