"""DTFL's training run on the shared split engine (Sec. 3.2, App. A.7): its config (:class:`DtflConfig`), the
clients' data (:func:`client_data`, :func:`subset`), the checks of a schedule (:func:`check_cuts`,
:func:`check_participants`), the evaluation of several heads on one trunk (:func:`evaluate_heads`) and the keying
of a record by backend (:func:`keyed_by_backend`). Algorithm 1 itself, the round loop over these, is
:mod:`fedlib.dtfl.run`.

Choices (also in ``notebooks/dtfl/README.md``): Adam (lr 1e-3, betas 0.9/0.999, no weight decay, no amsgrad; the
authors' code adds amsgrad and weight decay 5e-4) with per-client state kept across rounds; no lr decay on
plateau; no augmentation (Fashion-MNIST); each round every client reshuffles its data (``data`` stream) and runs
ceil(N_k / B) batches, the last one partial; the global model (not one client's) is evaluated.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from ..core.seeding import numpy_rng, resolve_device
from ..core.validate import check_bool, check_choice, check_float, check_instance, check_int
from fedlib.data import TensorDataset
from fedlib.data import partition
from ..data.datasets import DATASETS
from ..split.backends import STACKED_CODE, resolve_backend
from ..split.models import check_model

MODELS = ("resnet20", "resnet38", "resnet56", "resnet110")


@dataclass(frozen=True)
class DtflConfig:
    """One DTFL training run (the tiers come separately, as each round's cuts).

    Attributes:
        model: ``resnet20`` / ``resnet38`` / ``resnet56`` / ``resnet110``, or a model of your own by import path
        ``"package.module:function"`` (:func:`fedlib.split.models.make_model`; DTFL's 8 units md1..md8, each of md1..md7
        giving ``[B, C, H, W]`` smashed data for the tiers' auxiliary heads: :func:`fedlib.dtfl.run.dtfl_model`);
        width: channel multiplier (> 0). dataset: name for
        :func:`fedlib.data.load_dataset`. num_clients: K >= 1. batch_size: B >= 1 (App. A.3: 100). lr: Adam's
        (> 0; App. A.3: 1e-3). eps: Adam's ε (> 0; torch's default 1e-8). partition: ``iid`` or ``dirichlet`` (``alpha`` > 0; App. A.3: 0.5).
        train_subset / test_subset: use the first n training / test samples (0 = all). eval_every: rounds between
        evaluations (>= 1). channels_last: NHWC conv weights (1.25-1.3x faster on CPU, float-close to the
        default layout; :func:`fedlib.split.init_state`). seed: the run's seed (streams ``data``, ``model``).

    Raises:
        ValueError / ParameterTypeError: a value outside its range, naming it.
    """

    model: str = "resnet20"
    width: float = 1.0
    dataset: str = "fashion-mnist"
    num_clients: int = 10
    batch_size: int = 100
    lr: float = 1e-3
    eps: float = 1e-8
    partition: str = "iid"
    alpha: float = 0.5
    train_subset: int = 0
    test_subset: int = 0
    eval_every: int = 1
    channels_last: bool = True
    seed: int = 0

    def __post_init__(self):
        check_model(self.model, MODELS)
        check_choice("partition", self.partition, ("iid", "dirichlet"))
        check_choice("dataset", self.dataset, tuple(DATASETS))
        check_bool("channels_last", self.channels_last)
        for name in ("width", "lr", "eps", "alpha"):
            check_float(name, getattr(self, name), 0, low_open=True)
        for name, low in (("num_clients", 1), ("batch_size", 1), ("train_subset", 0), ("test_subset", 0),
                          ("eval_every", 1), ("seed", 0)):
            check_int(name, getattr(self, name), low)

    def to_dict(self) -> dict:
        return asdict(self)


def subset(data: TensorDataset, train: int, test: int) -> TensorDataset:
    """``data`` restricted to its first ``train`` training and ``test`` test samples (0 = all of them).

    Raises:
        ValueError: ``train`` or ``test`` above the samples the data holds (naming train_subset / test_subset and
            the data's size: a request that cannot be met is refused, not cut to what there is).
    """
    from dataclasses import replace
    check_int("train_subset", train, 0, len(data.y_train), extra=f" (0: all; {data.name} has {len(data.y_train)} "
                                                                  "training samples)")
    check_int("test_subset", test, 0, len(data.y_test), extra=f" (0: all; {data.name} has {len(data.y_test)} "
                                                               "test samples)")
    tr = train or len(data.y_train)
    te = test or len(data.y_test)
    return replace(data, x_train=data.x_train[:tr], y_train=data.y_train[:tr], x_test=data.x_test[:te],
                   y_test=data.y_test[:te])


def client_data(cfg: DtflConfig, labels) -> list[np.ndarray]:
    """Per-client training indices (``data`` stream of ``cfg.seed``): IID or Dirichlet(``alpha``) over labels."""
    check_instance("cfg", cfg, DtflConfig)
    return partition.split(np.asarray(labels), cfg.num_clients, cfg.partition, numpy_rng(cfg.seed, "data"),
                           alpha=cfg.alpha)


def check_cuts(cuts, num_clients: int, high: int = 7) -> np.ndarray:
    """Each round's modules on each client, ``[R, K]`` ints in 1..``high`` (7 for DTFL: md8 stays on the
    server; 8 for FedAvg). Raises ``ValueError`` naming ``cuts``."""
    try:
        arr = np.asarray(cuts)
    except ValueError:                                  # ragged rounds: numpy cannot make one array of them
        raise ValueError(f"cuts must be [rounds, K = {num_clients}] (modules on each client per round), got rounds "
                         f"of different lengths") from None
    if arr.ndim != 2 or arr.shape[1] != num_clients or arr.shape[0] < 1:
        raise ValueError(f"cuts must be [rounds, K = {num_clients}] (modules on each client per round), got shape "
                         f"{arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer) or arr.min() < 1 or arr.max() > high:
        raise ValueError(f"cuts must be integers in 1..{high} (modules on the client), got {arr.tolist()}")
    return arr.astype(np.int64)


def check_participants(participants, rounds: int, num_clients: int) -> np.ndarray:
    """Which clients train in each round, ``[R, K]`` bools with at least one True per round (None = all).

    Raises:
        ValueError: another shape or dtype, or a round without participants (naming ``participants``)."""
    if participants is None:
        return np.ones((rounds, num_clients), dtype=bool)
    arr = np.asarray(participants)
    if arr.shape != (rounds, num_clients) or arr.dtype != bool:
        raise ValueError(f"participants must be a [rounds = {rounds}, K = {num_clients}] bool array, got shape "
                         f"{arr.shape} of {arr.dtype}")
    if not arr.any(axis=1).all():
        raise ValueError(f"participants: every round needs at least one client, rounds "
                         f"{(np.flatnonzero(~arr.any(axis=1)) + 1).tolist()} have none")
    return arr


def keyed_by_backend(store, config: dict, device: str, backend: str = "auto") -> tuple:
    """``(store, config, backend)`` for a record trained on ``device`` with ``backend`` (resolved,
    :func:`fedlib.split.backends.resolve_backend`): a record of the loop backend keeps ``store`` and ``config``
    as they are (every record computed before the stacked backend existed); one of the stacked backend adds
    ``"backend": "stacked"`` to its config and the stacked modules' source to the store's code.

    Raises:
        ValueError: an unknown backend or device.
    """
    used = resolve_backend(backend, resolve_device(device))
    if used == "loop":
        return store, config, used
    return store.with_code(tuple(store.code) + STACKED_CODE), {**config, "backend": used}, used


#: the top tier's cut (md1..md7 on the client): its averaged auxiliary head stands in for md8 in the diagnostic
TOP_CUT = 7


def evaluate_heads(trunk: torch.nn.Module, heads: list, x: torch.Tensor, y: torch.Tensor,
                   batch: int = 1000) -> list[tuple[float, float]]:
    """Accuracy (fraction) and mean cross-entropy of ``head(trunk(x))`` for each of ``heads`` on ``x [n, C, H, W]``,
    ``y [n]``, running the trunk once per batch (eval mode, no gradients). ``heads[i](trunk(x))`` computes what
    ``nn.Sequential(trunk, heads[i])`` computes, batch by batch as :func:`fedlib.split.evaluate`, so the first head's
    numbers equal ``evaluate(nn.Sequential(*trunk, *heads[0]))``.

    Raises:
        ValueError: empty ``heads``, ``x`` / ``y`` of different lengths or empty, ``batch`` < 1.
    """
    check_int("batch", batch, 1)
    if not heads:
        raise ValueError("heads must name at least one head")
    if len(x) != len(y) or len(y) == 0:
        raise ValueError(f"x and y must hold the same number (>= 1) of samples, got {len(x)} and {len(y)}")
    for m in (trunk, *heads):
        m.eval()
    correct, losses = [0] * len(heads), [0.0] * len(heads)
    with torch.no_grad():
        for s in range(0, len(y), batch):
            h, t = trunk(x[s:s + batch]), y[s:s + batch]
            for i, head in enumerate(heads):
                out = head(h)
                losses[i] += float(torch.nn.functional.cross_entropy(out, t, reduction="sum"))
                correct[i] += int((out.argmax(1) == t).sum())
    return [(c / len(y), l / len(y)) for c, l in zip(correct, losses)]


class Functional(torch.nn.Module):
    """``template`` run with the tensors of ``state`` (an engine auxiliary head: template module + its state)."""

    def __init__(self, template: torch.nn.Module, state: dict):
        super().__init__()
        self.template, self.state = template, state

    def forward(self, h):
        return torch.func.functional_call(self.template, self.state, (h,))


class AtCut(torch.nn.Module):
    def __init__(self, transform):
        super().__init__()
        self.transform = transform

    def forward(self, z):
        return self.transform(z)
