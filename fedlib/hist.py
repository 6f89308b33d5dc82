"""HIST and HFedAvg: hierarchical (independent submodel) federated learning.

Source: Fang, Han, Wang, Brinton, Hosseinalipour, Nedić, "Hierarchical Independent Submodel Training"
(HIST), Algorithm 1 and eqs. (2)-(7); the baseline HFedAvg is hierarchical FedAvg (Wang et al., AAAI'22).
Restated in ``shared/spec/hist.md``.

System: one cloud server, N cells (edge servers), ``n = U/N`` clients per cell; client ``u`` belongs to
cell ``u // n`` (authors' code). ``t`` counts client SGD iterations; edge aggregation interval ``H``, cloud
aggregation interval ``E`` (a multiple of ``H``). Model: :class:`fedlib.models.MLP` 784-300-10.

HIST's masks partition the 300 hidden neurons uniformly at random into N equal groups at the start of
every global round (eq. 3, constant within the round): submodel j = rows of W1 and entries of b1 for its
neurons + the matching columns of W2. A client of cell j holds and trains *only* that submodel, so a HIST
client step costs about 1/N of an HFedAvg step (the paper's computation saving, realised here).

Engine. All U clients train together with batched tensor operations (``torch.baddbmm`` over a leading
client dimension, gradients written out by hand; no Python loop over clients and no input gradient of the
first layer). :func:`run_reference` is the literal per-client ``nn.Module`` + ``torch.optim.SGD`` version of
eqs. (2)-(7) with full-size masked models; the tests check that both give the same numbers.

Choices where the paper is silent (also in the README's deviations list):

- Output bias b2 (10 values) is not covered by the neuron masks. Default ``output_bias="averaged"``: every
  cell trains b2 and the cloud averages it over cells; ``"frozen"`` keeps it at its initial value (the
  authors' code leaves biases untrained). Eqs. (2)-(7) hold exactly for every partitioned parameter
  (W1, b1, W2).
- Minibatches: each client draws ``batch_size`` samples uniformly *with replacement* from its local data at
  every step (unbiased stochastic gradients, as Assumption 3 states); the paper does not say how batches are
  drawn.
- Initialisation: PyTorch's default ``nn.Linear`` initialisation from the ``model`` seed stream.
- Test accuracy is that of the global model x̄ at every global round (t = mE, m = 0..R).
- Communication is counted with the paper's formulas (Sec. III-B) in units of L0 = one full model: per edge
  aggregation a HIST client uploads L0/N (the shared b2, 10 of 238,510 parameters, is not counted).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from . import __version__, partition
from .data import TensorDataset, load_dataset
from .models import make_mlp
from .seeding import numpy_rng, resolve_device, torch_generator

METHODS = ("hist", "hfedavg")
SETTINGS = ("noniid", "cell_iid")
OUTPUT_BIAS = ("averaged", "frozen")


@dataclass(frozen=True)
class HistConfig:
    """One HIST / HFedAvg run. Defaults are the paper's Fig. 2 setting with N = 3.

    Attributes:
        method: ``"hist"`` (submodels) or ``"hfedavg"`` (full model, hierarchical FedAvg).
        setting: ``"noniid"`` (fully non-i.i.d.: label shards over all clients) or ``"cell_iid"`` (cells
            i.i.d., clients non-i.i.d. inside a cell).
        num_cells: N, number of cells / edge servers (>= 1; must divide ``hidden`` and ``num_clients``).
        num_clients: U, total clients (60 in the paper); ``U/N`` per cell.
        hidden: hidden neurons of the MLP (300).
        H: edge aggregation interval, in client iterations (40).
        E: cloud aggregation interval, in client iterations (200); a multiple of ``H``.
        global_rounds: R, number of cloud aggregations; T = R·E client iterations.
        lr: SGD step size γ (0.01, authors' code; no momentum).
        batch_size: minibatch size per client step (32).
        shards_per_client: label shards per client (2 -> 1,000 samples per client).
        output_bias: ``"averaged"`` or ``"frozen"`` (see module docstring).
        dataset: dataset name for :func:`fedlib.data.load_dataset`.
        seed: the one seed of the run (streams ``data``, ``model``, ``system``).
    """

    method: str = "hist"
    setting: str = "noniid"
    num_cells: int = 3
    num_clients: int = 60
    hidden: int = 300
    H: int = 40
    E: int = 200
    global_rounds: int = 10
    lr: float = 0.01
    batch_size: int = 32
    shards_per_client: int = 2
    output_bias: str = "averaged"
    dataset: str = "fashion-mnist"
    seed: int = 0

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` naming the parameter and its allowed range when the config is impossible."""
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.setting not in SETTINGS:
            raise ValueError(f"setting must be one of {SETTINGS}, got {self.setting!r}")
        if self.output_bias not in OUTPUT_BIAS:
            raise ValueError(f"output_bias must be one of {OUTPUT_BIAS}, got {self.output_bias!r}")
        for name in ("num_cells", "num_clients", "hidden", "H", "E", "global_rounds", "batch_size",
                     "shards_per_client"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.num_cells > self.hidden:
            raise ValueError(f"num_cells (N={self.num_cells}) must be <= hidden ({self.hidden}): every cell "
                             f"needs at least one hidden neuron")
        if self.method == "hist" and self.hidden % self.num_cells:
            raise ValueError(f"num_cells (N={self.num_cells}) must divide hidden ({self.hidden}) so that the "
                             f"masks have equal sizes (HIST eq. 3); allowed N: divisors of {self.hidden}")
        if self.num_clients % self.num_cells:
            raise ValueError(f"num_cells (N={self.num_cells}) must divide num_clients ({self.num_clients}): "
                             f"the paper puts U/N clients in each cell")
        if self.E % self.H:
            raise ValueError(f"E (cloud aggregation interval, {self.E}) must be a multiple of H (edge "
                             f"aggregation interval, {self.H})")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")

    @property
    def clients_per_cell(self) -> int:
        """n_j = U / N."""
        return self.num_clients // self.num_cells

    @property
    def total_steps(self) -> int:
        """T = R·E client iterations."""
        return self.global_rounds * self.E

    @property
    def submodel_hidden(self) -> int:
        """Hidden neurons a client holds: hidden/N for HIST, hidden for HFedAvg."""
        return self.hidden // self.num_cells if self.method == "hist" else self.hidden

    def to_dict(self) -> dict:
        return asdict(self)


def rounds_for_budget(method: str, num_cells: int, H: int, E: int, comm_budget_L0: float) -> int:
    """Global rounds R after which each client has sent at least ``comm_budget_L0`` (units of L0).

    Per global round a client sends (E/H)/N·L0 (HIST) or (E/H)·L0 (HFedAvg) (HIST Sec. III-B), so at equal
    budget HIST runs N times more rounds, each step costing 1/N: the same compute.

    Raises:
        ValueError: non-positive budget.
    """
    if not comm_budget_L0 > 0:
        raise ValueError(f"comm_budget_L0 must be > 0, got {comm_budget_L0!r}")
    per_round = comm_per_round(method, num_cells, num_clients=num_cells, H=H, E=E)["client"]
    return max(1, int(np.ceil(comm_budget_L0 / per_round - 1e-9)))


def comm_per_round(method: str, num_cells: int, num_clients: int, H: int, E: int) -> dict[str, float]:
    """Communication per global round (E iterations), in units of L0 (HIST Sec. III-B; spec "accounting").

    Returns ``{"client": ..., "edge_server": ..., "cloud": ...}``:

    - client: (E/H)·L0/N for HIST, (E/H)·L0 for HFedAvg (uploads to its edge server);
    - edge_server: what the n_j = U/N clients of one cell send it, n_j·(E/H)·L0/N (HIST) or n_j·(E/H)·L0;
    - cloud: what the cloud receives, L0 (HIST: the N submodels make one model) or N·L0 (HFedAvg).

    Raises:
        ValueError: unknown method, E not a multiple of H.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if H < 1 or E % H:
        raise ValueError(f"E ({E}) must be a positive multiple of H ({H})")
    share = 1.0 / num_cells if method == "hist" else 1.0
    edge_aggs = E // H
    n_j = num_clients / num_cells
    return {"client": edge_aggs * share,
            "edge_server": n_j * edge_aggs * share,
            "cloud": 1.0 if method == "hist" else float(num_cells)}


# ---------------------------------------------------------------------------------------------------------
# data and masks


def client_partition(cfg: HistConfig, labels: np.ndarray) -> list[np.ndarray]:
    """Per-client training indices for ``cfg.setting`` (HIST Sec. V), from the ``data`` stream.

    ``noniid``: :func:`fedlib.partition.shards` over all U clients; ``cell_iid``:
    :func:`fedlib.partition.cell_iid_client_shards`. Client u is in cell u // (U/N).
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
        generator: torch generator on the same device (stream ``data``).
        steps: number of steps drawn at once.

    Returns:
        ``[steps, U, B]`` int64 indices into the training set.
    """
    u = client_index.shape[0]
    draw = torch.rand((steps, u, batch_size), generator=generator, device=client_index.device,
                      dtype=torch.float64)
    local = (draw * sizes[None, :, None]).long()
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


# ---------------------------------------------------------------------------------------------------------
# batched engine: explicit state, small functions


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


def train_interval(state: MLPState, p: "Prepared", idx: torch.Tensor, blocks: list[slice], ws: Workspace,
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
    for blk in blocks:
        sub = MLPState(state.w1[blk], state.b1[blk], state.w2[blk], state.b2[blk])
        for s in range(idx.shape[0]):
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
    """
    return 4 * batch_size * in_features * hidden + 6 * batch_size * hidden * num_classes


# ---------------------------------------------------------------------------------------------------------
# runs


@dataclass
class Prepared:
    """A run's data on its device (training inputs ``[n, d]``, labels ``[n]``, test set), the padded client
    partition (``client_index [U, max_n]``, ``sizes [U]``), the initial global model and the data provenance."""

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


def prepare(cfg: HistConfig, dataset: TensorDataset | None = None, device: str = "auto") -> "Prepared":
    """Load data, partition it and initialise the model for ``cfg`` (input of :func:`iterate_hist`).

    Raises:
        ValueError: ``dataset`` is not the config's dataset; CUDA requested but absent.
        DatasetNotFoundError: the dataset is not on disk (message gives the install command).
    """
    dev = resolve_device(device)
    ds = dataset if dataset is not None else load_dataset(cfg.dataset)
    if ds.name != cfg.dataset:
        raise ValueError(f"dataset {ds.name!r} given for a config with dataset={cfg.dataset!r}")
    parts = client_partition(cfg, ds.y_train.numpy())
    client_index, sizes = pad_partition(parts, dev)
    x_train = ds.x_train.flatten(1).to(dev)
    model = make_mlp(x_train.shape[1], cfg.hidden, ds.num_classes, torch_generator(cfg.seed, "model"))
    init = MLPState(*(p.detach().to(dev).clone() for p in
                      (model.fc1.weight, model.fc1.bias, model.fc2.weight, model.fc2.bias)))
    return Prepared(cfg, dev, x_train, ds.y_train.to(dev), ds.x_test.flatten(1).to(dev), ds.y_test.to(dev),
                     client_index, sizes, init, ds.source)


def _new_result(p: Prepared) -> dict:
    return {"config": p.cfg.to_dict(), "seed": p.cfg.seed, "fedlib_version": __version__,
            "torch_version": torch.__version__, "device": str(p.device), "data_source": p.source,
            "round": [], "step": [], "test_acc": [], "test_loss": [], "train_loss": [],
            "comm_client_L0": [], "comm_edge_server_L0": [], "comm_cloud_L0": [], "global_sq_norm": []}


def _record(res: dict, p: Prepared, m: int, glob: MLPState, train_loss: float | None) -> None:
    cfg = p.cfg
    acc, loss = evaluate(glob, p.x_test, p.y_test)
    comm = comm_per_round(cfg.method, cfg.num_cells, cfg.num_clients, cfg.H, cfg.E)
    res["round"].append(m)
    res["step"].append(m * cfg.E)
    res["test_acc"].append(acc)
    res["test_loss"].append(loss)
    res["train_loss"].append(train_loss)
    res["comm_client_L0"].append(m * comm["client"])
    res["comm_edge_server_L0"].append(m * comm["edge_server"])
    res["comm_cloud_L0"].append(m * comm["cloud"])
    res["global_sq_norm"].append(glob.sq_norm())


def run_hist(cfg: HistConfig, dataset: TensorDataset | None = None, device: str = "auto",
             progress: bool = True) -> dict:
    """Run HIST or HFedAvg (Algorithm 1) with the batched engine and return the result record.

    Args:
        cfg: the run's configuration.
        dataset: preloaded dataset (else loaded by name; raises ``DatasetNotFoundError`` if missing).
        device: ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``...
        progress: show a tqdm bar over global rounds.

    Returns:
        A JSON-serialisable dict: ``config``, ``seed``, versions, ``device``, ``elapsed_s``, and per global
        round m = 0..R the lists ``round``, ``step`` (= mE), ``test_acc`` (global model, 10k test set),
        ``test_loss``, ``train_loss`` (mean client minibatch loss over the round; ``None`` at m = 0),
        ``comm_client_L0`` / ``comm_edge_server_L0`` / ``comm_cloud_L0`` (cumulative, units of L0) and
        ``global_sq_norm`` (‖x̄^{mE}‖², eq. 13's last term).
    """
    t0 = time.perf_counter()
    p = prepare(cfg, dataset, device)
    res = _new_result(p)
    for m, glob, train_loss in iterate_hist(p, progress):
        _record(res, p, m, glob, train_loss)
    res["elapsed_s"] = time.perf_counter() - t0
    return res


def iterate_hist(p: "Prepared", progress: bool = False, block_bytes: int | None = 8 * 2 ** 20):
    """Algorithm 1 as a generator: yields ``(m, x̄^{mE}, train_loss)`` for m = 0..R.

    Clients are trained in cache blocks of about ``block_bytes`` of client models (:func:`client_blocks`;
    ``None``: all clients at once); the result does not depend on the blocking.

    ``x̄^{mE}`` is the global model (an :class:`MLPState`, not to be modified) after global round m;
    ``train_loss`` is the mean client minibatch loss over round m (``None`` for m = 0).
    """
    cfg = p.cfg
    rng_system = numpy_rng(cfg.seed, "system")
    gen = torch_generator(cfg.seed, "data", p.device)
    glob = p.init.clone()
    yield 0, glob, None
    train_b2 = cfg.output_bias == "averaged"
    h = cfg.submodel_hidden
    d, c = p.x_train.shape[1], p.init.w2.shape[0]
    blocks = client_blocks(cfg.num_clients, 4 * (h * (d + 1) + c * (h + 1)), p.device, block_bytes)
    ws = Workspace.create(max(b.stop - b.start for b in blocks), cfg.batch_size, d, h, c, p.device)
    for m in tqdm(range(1, cfg.global_rounds + 1), desc=f"{cfg.method} N={cfg.num_cells} {cfg.setting}",
                  disable=not progress, leave=False):
        groups = torch.from_numpy(draw_groups(cfg.method, cfg.hidden, cfg.num_cells, rng_system)).to(p.device)
        state = distribute(glob, groups, cfg.clients_per_cell)
        loss_sum = torch.zeros((), device=p.device)
        for _ in range(cfg.E // cfg.H):
            idx = sample_batch_indices(p.client_index, p.sizes, cfg.batch_size, gen, steps=cfg.H)
            loss_sum += train_interval(state, p, idx, blocks, ws, train_b2)
            edge_aggregate(state, cfg.num_cells)
        glob = cloud_aggregate(state, groups, cfg.hidden)
        yield m, glob, float(loss_sum) / (cfg.E * cfg.num_clients)


def run_reference(cfg: HistConfig, dataset: TensorDataset | None = None, device: str = "cpu") -> dict:
    """Literal per-client implementation of Algorithm 1 (for tests and the benchmark's baseline).

    Same record as :func:`run_hist`; see :func:`iterate_reference`. Both must agree to float tolerance.
    """
    t0 = time.perf_counter()
    p = prepare(cfg, dataset, device)
    res = _new_result(p)
    for m, glob, train_loss in iterate_reference(p):
        _record(res, p, m, glob, train_loss)
    res["elapsed_s"] = time.perf_counter() - t0
    return res


def iterate_reference(p: "Prepared"):
    """Algorithm 1 written literally, one client at a time; yields like :func:`iterate_hist`.

    Each client is a full-size :class:`fedlib.models.MLP` with its own ``torch.optim.SGD``; eq. (2)/(7) sets
    it to p_j ⊙ x̄, eq. (4) multiplies the autograd gradient by the mask before ``SGD.step()`` (HIST only;
    HFedAvg has no masks), eq. (5) averages state dicts in a Python loop, eq. (6) sums p_j ⊙ x̄_j (HIST) or
    averages (HFedAvg). Uses the same seed streams and batch sampler as :func:`iterate_hist`.
    """
    from .models import MLP

    cfg = p.cfg
    rng_system = numpy_rng(cfg.seed, "system")
    gen = torch_generator(cfg.seed, "data", p.device)
    d, c = p.x_train.shape[1], p.init.w2.shape[0]
    glob = {"fc1.weight": p.init.w1.clone(), "fc1.bias": p.init.b1.clone(),
            "fc2.weight": p.init.w2.clone(), "fc2.bias": p.init.b2.clone()}

    def as_state(sd):
        return MLPState(sd["fc1.weight"], sd["fc1.bias"], sd["fc2.weight"], sd["fc2.bias"])

    yield 0, as_state(glob), None
    clients = [MLP(d, cfg.hidden, c).to(p.device) for _ in range(cfg.num_clients)]
    opts = [torch.optim.SGD(m.parameters(), lr=cfg.lr) for m in clients]
    masked = cfg.method == "hist"
    for m in range(1, cfg.global_rounds + 1):
        masks_np = masks_from_groups(draw_groups(cfg.method, cfg.hidden, cfg.num_cells, rng_system), cfg.hidden)
        masks = torch.from_numpy(masks_np).to(p.device, torch.float32)
        pmask = [{"fc1.weight": mk[:, None].expand(cfg.hidden, d), "fc1.bias": mk,
                  "fc2.weight": mk[None, :].expand(c, cfg.hidden), "fc2.bias": torch.ones(c, device=p.device)}
                 for mk in masks]
        for u, model in enumerate(clients):
            mk = pmask[u // cfg.clients_per_cell]
            model.load_state_dict({k: v * mk[k] for k, v in glob.items()})
        loss_sum = 0.0
        for e in range(1, cfg.E + 1):
            if (e - 1) % cfg.H == 0:
                interval = sample_batch_indices(p.client_index, p.sizes, cfg.batch_size, gen, steps=cfg.H)
            idx = interval[(e - 1) % cfg.H]
            for u, (model, opt) in enumerate(zip(clients, opts)):
                opt.zero_grad()
                loss = F.cross_entropy(model(p.x_train[idx[u]]), p.y_train[idx[u]])
                loss.backward()
                loss_sum += float(loss.detach())
                if masked:
                    mk = pmask[u // cfg.clients_per_cell]
                    for name, prm in model.named_parameters():
                        prm.grad.mul_(mk[name])
                if cfg.output_bias == "frozen":
                    model.fc2.bias.grad.zero_()
                opt.step()
            if e % cfg.H == 0:
                for j in range(cfg.num_cells):
                    cell = clients[j * cfg.clients_per_cell:(j + 1) * cfg.clients_per_cell]
                    avg = {k: torch.stack([mm.state_dict()[k] for mm in cell]).mean(0) for k in glob}
                    for mm in cell:
                        mm.load_state_dict(avg)
        edge = [clients[j * cfg.clients_per_cell].state_dict() for j in range(cfg.num_cells)]
        if masked:
            glob = {k: sum(pmask[j][k] * edge[j][k] for j in range(cfg.num_cells)) for k in glob}
            glob["fc2.bias"] = torch.stack([sd["fc2.bias"] for sd in edge]).mean(0)
        else:
            glob = {k: torch.stack([sd[k] for sd in edge]).mean(0) for k in glob}
        glob = {k: v.clone() for k, v in glob.items()}
        yield m, as_state(glob), loss_sum / (cfg.E * cfg.num_clients)


def run_sweep(configs: list[HistConfig], store, dataset: TensorDataset | None = None, device: str = "auto",
              force: bool = False, progress: bool = True,
              runner: Callable[..., dict] = run_hist) -> list[dict]:
    """Run every config through ``store`` (a :class:`fedlib.store.ResultStore`); finished runs are cache hits.

    An interrupted sweep resumes where it stopped: each finished run was written atomically. The dataset is
    loaded once, on first need.

    Returns:
        The result records, in ``configs`` order.
    """
    cache: dict[str, TensorDataset] = {} if dataset is None else {dataset.name: dataset}

    def get_ds(name: str) -> TensorDataset:
        if name not in cache:
            cache[name] = load_dataset(name)
        return cache[name]

    out = []
    bar = tqdm(configs, desc="runs", disable=not progress)
    for cfg in bar:
        out.append(store.get_or_run(cfg.to_dict(), lambda c=cfg: runner(c, get_ds(c.dataset), device, progress),
                                    force=force))
    return out


# ---------------------------------------------------------------------------------------------------------
# the paper's experiments (Figs. 2-4)


def figure_configs(settings: list[str], num_cells: list[int], H: int, E: int, comm_budget_L0: float,
                   fig4_num_cells: int, fig4_E_over_H: list[int], fig4_H: list[int], fig4_global_rounds: int,
                   **common) -> dict[str, list[HistConfig]]:
    """The runs behind HIST Figs. 2-4 (spec "Experiments to reproduce").

    Args:
        settings: data settings (``"noniid"``, ``"cell_iid"``).
        num_cells: the N of Figs. 2-3 ({2, 3, 4, 5} in the paper).
        H, E: Figs. 2-3 intervals (40, 200).
        comm_budget_L0: per-client communication budget of Figs. 2-3 (x-axis range), units of L0; each run
            gets the global rounds :func:`rounds_for_budget` gives (equal compute for HIST and HFedAvg).
        fig4_num_cells: N of Fig. 4 (3).
        fig4_E_over_H: Fig. 4's E/H sweep ({5, 10, 15}) at H = ``H``.
        fig4_H: Fig. 4's H sweep ({20, 40, 60}) at E/H = ``E // H``.
        fig4_global_rounds: global synchronisations of each Fig. 4 run (its x-axis range).
        **common: other :class:`HistConfig` fields (lr, batch_size, seed, num_clients, ...).

    Returns:
        ``{"fig2": [...], "fig4_E_over_H": [...], "fig4_H": [...]}`` (Fig. 3 reuses ``fig2``'s runs).
    """
    fig2 = [HistConfig(method=m, setting=s, num_cells=n, H=H, E=E,
                       global_rounds=rounds_for_budget(m, n, H, E, comm_budget_L0), **common)
            for s in settings for n in num_cells for m in METHODS]
    eh = [HistConfig(method="hist", setting=s, num_cells=fig4_num_cells, H=H, E=k * H,
                     global_rounds=fig4_global_rounds, **common) for s in settings for k in fig4_E_over_H]
    hs = [HistConfig(method="hist", setting=s, num_cells=fig4_num_cells, H=h, E=(E // H) * h,
                     global_rounds=fig4_global_rounds, **common) for s in settings for h in fig4_H]
    return {"fig2": fig2, "fig4_E_over_H": eh, "fig4_H": hs}


def comm_to_target(record: dict, target_acc: float) -> float | None:
    """Per-client communication (L0) at the first global round whose test accuracy is >= ``target_acc``;
    ``None`` if the run never reaches it (HIST Fig. 3's y-axis)."""
    for acc, comm in zip(record["test_acc"], record["comm_client_L0"]):
        if acc >= target_acc:
            return comm
    return None


def summarize(records: list[dict], target_acc: float) -> list[dict]:
    """One metrics row per record: method, setting, N, H, E, final_test_acc, target_acc, comm_to_target,
    best_test_acc, comm_total_L0, global_rounds, elapsed_s."""
    rows = []
    for r in records:
        c = r["config"]
        rows.append({"method": c["method"], "setting": c["setting"], "N": c["num_cells"], "H": c["H"],
                     "E": c["E"], "global_rounds": c["global_rounds"], "final_test_acc": r["test_acc"][-1],
                     "best_test_acc": max(r["test_acc"]), "target_acc": target_acc,
                     "comm_to_target": comm_to_target(r, target_acc), "comm_total_L0": r["comm_client_L0"][-1],
                     "elapsed_s": r["elapsed_s"]})
    return rows
