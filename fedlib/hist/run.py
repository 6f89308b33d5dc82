"""HIST runs on the batched engine: data preparation (:func:`prepare`), Algorithm 1 (:func:`iterate_hist`) and
the result record (:func:`run_hist`)."""
from __future__ import annotations

import time

import torch
from tqdm import tqdm

from .. import __version__
from ..core.seeding import numpy_rng, resolve_device, torch_generator
from ..core.validate import ParameterTypeError, check_bool, check_int
from ..data import TensorDataset, load_dataset
from .config import HistConfig, comm_per_round
from .engine import (MLPState, Prepared, Workspace, client_blocks, cloud_aggregate, distribute, edge_aggregate,
                     evaluate, train_interval)
from .model import make_mlp
from .sampling import client_partition, draw_groups, pad_partition, sample_batch_indices


def prepare(cfg: HistConfig, dataset: TensorDataset | None = None, device: str = "auto") -> "Prepared":
    """Load data, partition it and initialise the model for ``cfg`` (input of :func:`iterate_hist`).

    Raises:
        ValueError: ``dataset`` is not the config's dataset; unknown device or CUDA requested but absent.
        ParameterTypeError: ``cfg`` is not a :class:`HistConfig`, ``dataset`` not a ``TensorDataset``.
        DatasetNotFoundError: the dataset is not on disk (message gives the install command).
    """
    if not isinstance(cfg, HistConfig):
        raise ParameterTypeError(f"cfg must be a HistConfig, got {type(cfg).__name__}")
    if dataset is not None and not isinstance(dataset, TensorDataset):
        raise ParameterTypeError(f"dataset must be a fedlib.data.TensorDataset or None, got {type(dataset).__name__}")
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
    check_bool("progress", progress)
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
    if not isinstance(p, Prepared):
        raise ParameterTypeError(f"p must be a Prepared run (fedlib.hist.prepare(cfg)), got {type(p).__name__}")
    check_bool("progress", progress)
    if block_bytes is not None:
        check_int("block_bytes", block_bytes, 1)
    cfg = p.cfg
    rng_system = numpy_rng(cfg.seed, "system")
    gen = torch_generator(cfg.seed, "data")
    glob = p.init.clone()
    yield 0, glob, None
    train_b2 = cfg.output_bias == "averaged"
    h = cfg.submodel_hidden
    d, c = p.x_train.shape[1], p.init.w2.shape[0]
    blocks = client_blocks(cfg.num_clients, 4 * (h * (d + 1) + c * (h + 1)), p.device, block_bytes)
    ws = Workspace.create(max(b.stop - b.start for b in blocks), cfg.batch_size, d, h, c, p.device)
    # Algorithm 1, one global round (E client iterations, t = (m-1)E .. mE-1) per pass
    for m in tqdm(range(1, cfg.global_rounds + 1), desc=f"{cfg.method} N={cfg.num_cells} {cfg.setting}",
                  disable=not progress, leave=False):
        # masks {p_j} under rule (3): N disjoint, covering neuron groups, new every global round (Alg. 1's input
        # masks for m = 1, "Generate masks" after each cloud update); HFedAvg: every cell holds every neuron
        groups = torch.from_numpy(draw_groups(cfg.method, cfg.hidden, cfg.num_cells, rng_system)).to(p.device)
        # eqs. (2)/(7): x̄_j = p_j ⊙ x̄ sent to edge server j and disseminated, x_i = x̄_j for every i in C_j
        state = distribute(glob, groups, cfg.clients_per_cell)
        loss_sum = torch.zeros((), device=p.device)
        for _ in range(cfg.E // cfg.H):   # E/H edge intervals per global round ("if H | t+1")
            # the minibatches ξ_i of the interval's H steps (drawn with replacement, Assumption 3)
            idx = sample_batch_indices(p.client_index, p.sizes, cfg.batch_size, gen, steps=cfg.H)
            # H client steps of eq. (4), every client in parallel: x_i ← x_i − γ p_j ⊙ ∇l(x_i, ξ_i)
            loss_sum += train_interval(state, p, idx, blocks, ws, train_b2)
            # eq. (5): x̄_j = (1/n_j) Σ_{i∈C_j} x_i, disseminated to the cell's clients
            edge_aggregate(state, cfg.num_cells)
        # "if E | t+1": eq. (6), x̄ = Σ_j p_j ⊙ x̄_j (HFedAvg: x̄ = (1/N) Σ_j x̄_j)
        glob = cloud_aggregate(state, groups, cfg.hidden)
        yield m, glob, float(loss_sum) / (cfg.E * cfg.num_clients)
