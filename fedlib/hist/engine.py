"""HIST batched engine: explicit state (:class:`MLPState`) and small functions over a leading client dimension
(eqs. 2-7 with hand-written gradients; see the package docstring)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .config import HistConfig


@dataclass
class MLPState:
    """Parameters of one or many MLPs; leading dims are batch dims (``[U]`` for clients, none for global).

    Shapes (single model): ``w1 [h, d]``, ``b1 [h]``, ``w2 [C, h]``, ``b2 [C]``.
    """

    w1: torch.Tensor
    b1: torch.Tensor
    w2: torch.Tensor
    b2: torch.Tensor

    def clone(self) -> "MLPState":
        return MLPState(self.w1.clone(), self.b1.clone(), self.w2.clone(), self.b2.clone())

    def sq_norm(self) -> float:
        """‖x‖² over all parameters (the quantity in the last term of HIST eq. 13)."""
        return float(sum((t.double() ** 2).sum() for t in (self.w1, self.b1, self.w2, self.b2)))


@dataclass
class Prepared:
    """What the engine trains on (built by :func:`fedlib.hist.prepare`): a run's data on its device (training
    inputs ``[n, d]``, labels ``[n]``, test set), the padded client partition (``client_index [U, max_n]``,
    ``sizes [U]``), the initial global model and the data provenance."""

    cfg: HistConfig
    device: torch.device
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    client_index: torch.Tensor
    sizes: torch.Tensor
    init: MLPState
    source: str = ""


def distribute(glob: MLPState, groups: torch.Tensor, clients_per_cell: int) -> MLPState:
    """Eqs. (2)/(7) + dissemination: every client of cell j starts from submodel p_j ⊙ x̄.

    Args:
        glob: global model (``w1 [hidden, d]`` ...).
        groups: ``[N, h]`` neuron indices per cell.
        clients_per_cell: n.

    Returns:
        Client models ``w1 [U, h, d]``, ``b1 [U, h]``, ``w2 [U, C, h]``, ``b2 [U, C]`` with U = N·n; only
        the h neurons of the cell are stored (the masked-out entries are implicit zeros).
    """
    n_cells, h = groups.shape
    u = n_cells * clients_per_cell

    def rep(t: torch.Tensor) -> torch.Tensor:  # [N, ...] -> [U, ...], cell-major
        return t.unsqueeze(1).expand(n_cells, clients_per_cell, *t.shape[1:]).reshape(u, *t.shape[1:]).contiguous()

    return MLPState(rep(glob.w1[groups]), rep(glob.b1[groups]),
                    rep(glob.w2[:, groups].permute(1, 0, 2)), rep(glob.b2.expand(n_cells, -1)))


@dataclass
class Workspace:
    """Preallocated buffers of :func:`client_step` for up to ``clients`` clients (no per-step allocation of
    the multi-MB activations: ``x [U·B, d]``, ``z``/``a``/``da [U, B, h]``, ``logits [U, B, C]``)."""

    x: torch.Tensor
    z: torch.Tensor
    a: torch.Tensor
    logits: torch.Tensor
    da: torch.Tensor

    @classmethod
    def create(cls, clients: int, batch_size: int, in_features: int, hidden: int, num_classes: int,
               device: torch.device, dtype: torch.dtype = torch.float32) -> "Workspace":
        """Uninitialised buffers for ``clients`` clients of batch B, d inputs, h hidden neurons, C classes."""
        def e(*shape):
            return torch.empty(shape, device=device, dtype=dtype)
        return cls(e(clients * batch_size, in_features), e(clients, batch_size, hidden),
                   e(clients, batch_size, hidden), e(clients, batch_size, num_classes), e(clients, batch_size, hidden))


def client_step(state: MLPState, x_all: torch.Tensor, y_all: torch.Tensor, idx: torch.Tensor, lr: float,
                train_output_bias: bool = True, ws: Workspace | None = None) -> torch.Tensor:
    """One SGD step of every client on its own minibatch, in place (eq. 4): x_i ← x_i − γ p_j ⊙ ∇l(x_i, ξ_i).

    The loss of client u is the mean cross-entropy over its B samples; gradients are written out by hand
    (the input gradient of the first layer is never formed).

    Args:
        state: client models, ``w1 [U, h, d]``, ``b1 [U, h]``, ``w2 [U, C, h]``, ``b2 [U, C]``.
        x_all: ``[n, d]`` training inputs. y_all: ``[n]`` int64 labels.
        idx: ``[U, B]`` int64 minibatch indices into ``x_all``.
        lr: γ.
        train_output_bias: update b2 (``output_bias="averaged"``) or not (``"frozen"``).
        ws: buffers for at least U clients (allocated on the fly when ``None``).

    Returns:
        0-dim tensor: the sum over clients of the minibatch mean losses (before the step).
    """
    u, bsz = idx.shape
    if ws is None:
        ws = Workspace.create(u, bsz, x_all.shape[1], state.w1.shape[1], state.w2.shape[1], x_all.device,
                              x_all.dtype)
    x = torch.index_select(x_all, 0, idx.reshape(-1), out=ws.x[:u * bsz]).view(u, bsz, -1)      # [U, B, d]
    y = y_all[idx].unsqueeze(-1)                                                                   # [U, B, 1]
    z = torch.baddbmm(state.b1.unsqueeze(1), x, state.w1.transpose(1, 2), out=ws.z[:u])           # [U, B, h]
    a = torch.clamp_min(z, 0, out=ws.a[:u])
    logits = torch.baddbmm(state.b2.unsqueeze(1), a, state.w2.transpose(1, 2), out=ws.logits[:u])  # [U, B, C]
    logp = torch.log_softmax(logits, dim=-1)
    loss = -logp.gather(-1, y).sum() / bsz
    g = logp.exp_()                                                                  # dℓ/dlogits · B
    g.scatter_add_(-1, y, torch.full_like(g[..., :1], -1.0))
    g.div_(bsz)
    da = torch.bmm(g, state.w2, out=ws.da[:u]).mul_(z > 0)                           # [U, B, h]
    # eq. (4) on the cell's submodel (p_j ⊙: only its h neurons are stored, so the masked gradient is the gradient)
    state.w2.baddbmm_(g.transpose(1, 2), a, alpha=-lr)
    if train_output_bias:
        state.b2.sub_(g.sum(1), alpha=lr)
    state.w1.baddbmm_(da.transpose(1, 2), x, alpha=-lr)
    state.b1.sub_(da.sum(1), alpha=lr)
    return loss


def client_blocks(num_clients: int, bytes_per_client: int, device: torch.device,
                  block_bytes: int | None = 8 * 2 ** 20) -> list[slice]:
    """Cache blocking of the clients: contiguous slices whose client models take about ``block_bytes``.

    On the CPU each block runs all H steps of an edge interval while its models stay in cache (the 60 client
    models of the paper workload, 56 MB, do not fit a CPU's L3; a block of 8 does); every block is still
    trained with batched operations. On CUDA (or ``block_bytes=None``) one block holds all clients.
    Blocks are balanced (sizes differ by at most one).
    """
    if device.type != "cpu" or block_bytes is None:
        return [slice(0, num_clients)]
    per_block = max(1, block_bytes // max(1, bytes_per_client))
    n_blocks = -(-num_clients // per_block)
    bounds = np.linspace(0, num_clients, n_blocks + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def train_interval(state: MLPState, p: Prepared, idx: torch.Tensor, blocks: list[slice], ws: Workspace,
                   train_output_bias: bool) -> torch.Tensor:
    """H client steps (eq. 4) of every client between two edge aggregations, block by block.

    Args:
        state: client models ``[U, ...]``; updated in place.
        idx: ``[H, U, B]`` minibatch indices (:func:`sample_batch_indices` with ``steps=H``).
        blocks: client slices (:func:`client_blocks`). ws: workspace for the largest block.

    Returns:
        0-dim tensor: sum over steps and clients of the minibatch mean losses.
    """
    loss = torch.zeros((), device=idx.device)
    for blk in blocks:                  # cache blocks of clients (the clients are independent within the interval)
        sub = MLPState(state.w1[blk], state.b1[blk], state.w2[blk], state.b2[blk])
        for s in range(idx.shape[0]):   # Algorithm 1's t loop inside one edge interval: "Update x_i^{t+1} by (4)"
            loss += client_step(sub, p.x_train, p.y_train, idx[s, blk], p.cfg.lr, train_output_bias, ws)
    return loss


def edge_aggregate(state: MLPState, num_cells: int) -> None:
    """Eq. (5), in place: every client of cell j gets x̄_j = (1/n_j) Σ_{i∈C_j} x_i (clients are cell-major)."""
    for t in (state.w1, state.b1, state.w2, state.b2):
        cells = t.view(num_cells, -1, *t.shape[1:])
        cells.copy_(cells.mean(1, keepdim=True).expand_as(cells))


def cloud_aggregate(state: MLPState, groups: torch.Tensor, hidden: int) -> MLPState:
    """Eq. (6) for HIST, x̄ = Σ_j p_j ⊙ x̄_j; HFedAvg: x̄ = (1/N) Σ_j x̄_j. b2: mean over cells.

    Each global parameter is the mean of the cells that hold it: exactly one cell for HIST (so eq. 6 holds
    bit for bit), all N for HFedAvg. Call right after :func:`edge_aggregate` (clients of a cell are equal).

    Args:
        state: client models ``[U, ...]`` (cell-major). groups: ``[N, h]``. hidden: neurons of the full model.

    Returns:
        The global model (``w1 [hidden, d]``, ...).
    """
    n_cells, h = groups.shape
    edge = MLPState(*(t.view(n_cells, -1, *t.shape[1:])[:, 0] for t in (state.w1, state.b1, state.w2, state.b2)))
    flat = groups.reshape(-1)
    count = torch.zeros(hidden, dtype=edge.w1.dtype, device=flat.device).index_add_(
        0, flat, torch.ones_like(flat, dtype=edge.w1.dtype))
    if bool((count == 0).any()):
        raise ValueError("the cells' neuron groups do not cover every hidden neuron (HIST eq. 3)")
    d = edge.w1.shape[-1]
    w1 = torch.zeros(hidden, d, dtype=edge.w1.dtype, device=flat.device).index_add_(
        0, flat, edge.w1.reshape(-1, d)) / count[:, None]
    b1 = torch.zeros(hidden, dtype=edge.b1.dtype, device=flat.device).index_add_(0, flat, edge.b1.reshape(-1)) / count
    c = edge.w2.shape[1]
    w2 = torch.zeros(hidden, c, dtype=edge.w2.dtype, device=flat.device).index_add_(
        0, flat, edge.w2.permute(0, 2, 1).reshape(-1, c)).T / count[None, :]
    return MLPState(w1, b1, w2.contiguous(), edge.b2.mean(0))


@torch.no_grad()
def evaluate(glob: MLPState, x: torch.Tensor, y: torch.Tensor, chunk: int = 10000) -> tuple[float, float]:
    """Accuracy (fraction in [0, 1]) and mean cross-entropy of a global model on ``x [n, d]``, ``y [n]``."""
    correct, loss = 0, 0.0
    for s in range(0, x.shape[0], chunk):
        xs, ys = x[s:s + chunk], y[s:s + chunk]
        logits = torch.addmm(glob.b2, torch.relu(torch.addmm(glob.b1, xs, glob.w1.T)), glob.w2.T)
        correct += int((logits.argmax(1) == ys).sum())
        loss += float(F.cross_entropy(logits, ys, reduction="sum"))
    return correct / x.shape[0], loss / x.shape[0]


def step_flops(batch_size: int, in_features: int, hidden: int, num_classes: int) -> int:
    """FLOPs of one client SGD step of the MLP with ``hidden`` neurons (multiply-add = 2 FLOPs).

    Forward 2B(dh + hC); backward 2BCh (∇W2) + 2BCh (∇a) + 2Bdh (∇W1); no input gradient:
    4Bdh + 6BhC. Element-wise work (ReLU, softmax, bias) is not counted.

    Raises:
        ValueError / ParameterTypeError: a count that is not an integer >= 1 (naming it).
    """
    from ..core.validate import check_int
    for name, value in (("batch_size", batch_size), ("in_features", in_features), ("hidden", hidden),
                        ("num_classes", num_classes)):
        check_int(name, value, 1)
    return 4 * batch_size * in_features * hidden + 6 * batch_size * hidden * num_classes
