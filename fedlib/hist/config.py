"""HIST run configuration (:class:`HistConfig`) and the paper's communication accounting (Sec. III-B)."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..core.components import is_path, resolve
from ..core.validate import check_choice, check_float, check_int
from ..data.datasets import DATASETS

METHODS = ("hist", "hfedavg")
SETTINGS = ("noniid", "cell_iid")
OUTPUT_BIAS = ("averaged", "frozen")


@dataclass(frozen=True)
class HistConfig:
    """One HIST / HFedAvg run. Defaults are the paper's Fig. 2 setting with N = 3.

    Attributes:
        method: ``"hist"`` (submodels) or ``"hfedavg"`` (full model, hierarchical FedAvg).
        setting: ``"noniid"`` (fully non-i.i.d.: label shards over all clients) or ``"cell_iid"`` (cells
            i.i.d., clients non-i.i.d. inside a cell), or a client partition of your own by import path
            (:func:`fedlib.hist.sampling.client_partition`).
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
        """Raise ``ValueError`` (``ParameterTypeError``, a ``TypeError``, for a wrong type: ``num_cells=True``,
        ``H=2.5``, ``lr="0.1"``) naming the parameter and its allowed range when the config is impossible."""
        check_choice("method", self.method, METHODS)
        resolve(self.setting, "setting") if is_path(self.setting) else check_choice("setting", self.setting, SETTINGS)
        check_choice("output_bias", self.output_bias, OUTPUT_BIAS)
        check_choice("dataset", self.dataset, tuple(DATASETS))
        check_int("num_cells", self.num_cells, 1,
                  extra=f" that divides hidden ({self.hidden}) and num_clients ({self.num_clients})")
        for name in ("num_clients", "hidden", "H", "E", "global_rounds", "batch_size", "shards_per_client"):
            check_int(name, getattr(self, name), 1)
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
        check_float("lr", self.lr, 0, low_open=True)
        check_int("seed", self.seed, 0)

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
        ValueError: non-positive or non-finite budget, see :func:`comm_per_round`. ParameterTypeError: types.
    """
    check_float("comm_budget_L0", comm_budget_L0, 0, low_open=True)
    per_round = comm_per_round(method, num_cells, num_clients=num_cells, H=H, E=E)["client"]
    return max(1, int(np.ceil(comm_budget_L0 / per_round - 1e-9)))


def comm_per_round(method: str, num_cells: int, num_clients: int, H: int, E: int) -> dict[str, float]:
    """Communication per global round (E iterations), in units of L0 (HIST Sec. III-B; spec "accounting").

    Returns ``{"client": ..., "edge_server": ..., "cloud": ...}``:

    - client: (E/H)·L0/N for HIST, (E/H)·L0 for HFedAvg (uploads to its edge server);
    - edge_server: what the n_j = U/N clients of one cell send it, n_j·(E/H)·L0/N (HIST) or n_j·(E/H)·L0;
    - cloud: what the cloud receives, L0 (HIST: the N submodels make one model) or N·L0 (HFedAvg).

    Raises:
        ValueError: unknown method, counts < 1, E not a multiple of H. ParameterTypeError: non-integer counts.
    """
    check_choice("method", method, METHODS)
    for name, value in (("num_cells", num_cells), ("num_clients", num_clients), ("H", H), ("E", E)):
        check_int(name, value, 1)
    if E % H:
        raise ValueError(f"E ({E}) must be a positive multiple of H ({H})")
    share = 1.0 / num_cells if method == "hist" else 1.0
    edge_aggs = E // H
    n_j = num_clients / num_cells
    return {"client": edge_aggs * share,
            "edge_server": n_j * edge_aggs * share,
            "cloud": 1.0 if method == "hist" else float(num_cells)}
