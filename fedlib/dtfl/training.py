"""DTFL training on the shared split engine (Sec. 3.2, Algorithm 1, App. A.7): every round each client trains
its tier's client-side modules + auxiliary head with its local loss over one local epoch, the server trains a
per-client copy of the server-side modules on the smashed data (z, y), and the global model becomes the
N_k/N-weighted average of the clients' full models (eq. 1).

Engine mapping (:mod:`fedlib.split.engine`, ``mode="copies"``, ``local_loss=True``): the engine's cut of client
k is its tier's module count (:func:`fedlib.dtfl.client_modules`); one engine step = every client with a batch
left in its epoch trains one batch (clients with fewer batches sit the remaining steps out); server copies are
not averaged between steps (``sync_copies=False``); after the epoch :func:`fedlib.split.aggregate` with weights
N_k/N (renormalised over the round's participants when clients are sampled) averages every module over them -- the server copies of a module and the client copies of it
alike, which is eq. 1 (the average of the full models) -- and the auxiliary heads among the clients of a tier;
every client then holds the global model, so the tier models are re-derived from it. Tier changes go through
:func:`fedlib.split.set_decision` (a client changing tier restarts its Adam state; **choice**, the paper does not
say) and the client takes its new tier's averaged auxiliary head (kept per tier across rounds, also while the
tier is empty; a tier never used before gets a fresh head from the ``model`` stream).

Choices (also in ``notebooks/dtfl/README.md``): Adam (lr 1e-3, betas 0.9/0.999, no weight decay, no amsgrad; the
authors' code adds amsgrad and weight decay 5e-4) with per-client state kept across rounds; no lr decay on
plateau; no augmentation (Fashion-MNIST); each round every client reshuffles its data (``data`` stream) and runs
ceil(N_k / B) batches, the last one partial; the global model (not one client's) is evaluated.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import torch

from ..core.seeding import numpy_rng, resolve_device, torch_generator
from ..core.validate import check_bool, check_callable, check_choice, check_float, check_instance, check_int
from fedlib.data import TensorDataset
from fedlib.data import partition
from ..data.datasets import DATASETS
from ..split import SplitConfig, build_model, evaluate
from ..split.backends import ALL_BACKENDS, STACKED_CODE, backend_functions, device_aux, resolve_backend, set_device_aux
from ..split.config import NUM_UNITS
from ..split.ops import weighted_mean
from .tiers import aux_head_factory

MODELS = ("resnet20", "resnet38", "resnet56", "resnet110")


@dataclass(frozen=True)
class DtflConfig:
    """One DTFL training run (the tiers come separately, as each round's cuts).

    Attributes:
        model: ``resnet20`` / ``resnet38`` / ``resnet56`` / ``resnet110``; width: channel multiplier (> 0). dataset: name for
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
        check_choice("model", self.model, MODELS)
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


def run_dtfl(cfg: DtflConfig, data: TensorDataset, cuts, device: str = "cpu", progress=None,
             keep_model: bool = False, participants=None, client_loss=None, smashed_transform=None,
             eval_transform=None, backend: str = "auto") -> dict:
    """Train ``R = len(cuts)`` DTFL rounds (module docstring) and evaluate the global model.

    Args:
        cfg: the run. data: the dataset (``cfg.train_subset`` / ``test_subset`` applied here). cuts: ``[R, K]``
            modules on each client per round (a schedule from :func:`fedlib.dtfl.simulate`). device: torch
            device (``auto``: CUDA when present). progress: optional ``progress(round, record)`` callback.
            keep_model: also return the final global model under ``"model"`` (an ``nn.Module``: not JSON).
            participants: ``[R, K]`` bools, the clients sampled in each round (Table 4; None = all): the others
                sit the round out and the global model is the N_k-weighted average over the round's participants.
            client_loss, smashed_transform: the privacy hooks of :func:`fedlib.split.train_round` (Sec. 4.4);
                with ``smashed_transform`` every client must keep one cut for the whole run, and the evaluated
                global model applies ``eval_transform`` (default: ``smashed_transform`` itself; give a copy with
                its own generator so that evaluations do not shift the training draws) at that cut, since the
                server part was trained on transformed data. ``keep_model`` returns the model without it.
            backend: the split engine's (:mod:`fedlib.split.backends`): ``"auto"`` (default: ``"stacked"`` on
                CUDA, ``"loop"`` elsewhere, the faster one on each), ``"loop"`` or ``"stacked"``; float-close,
                not bit-identical, to each other (a record of ``stacked`` holds ``"backend": "stacked"``).

    Returns:
        ``{"config", "device", "samples_per_client" [K], "round", "test_acc", "test_loss", "train_loss",
        "elapsed_s"}`` -- one entry per evaluation (round 0, every ``eval_every`` rounds and the last);
        ``train_loss`` is the last step's mean main (server-side) loss. Beyond the paper (the md8 lag):
        ``test_acc_aux`` / ``test_loss_aux``, the same global model scored with the top tier's (md1..md7)
        averaged auxiliary head in place of md8 (None before any client has trained in the top tier, and with
        ``smashed_transform``).
    """
    return run_engine(cfg, data, cuts, "dtfl", device, progress, keep_model, participants, client_loss,
                      smashed_transform, eval_transform=eval_transform, backend=backend)


def train_record(cfg: DtflConfig, data: TensorDataset, cuts, device: str = "cpu", participants=None,
                 backend: str = "auto") -> dict:
    """The record a ``dtfl_train`` key stores: :func:`run_dtfl` of ``cfg`` on ``data`` with each round's tiers as
    cut layers ``cuts`` ``[R, K]`` and ``participants`` (``[R, K]``, truthy = sampled; ``None``: all), plus
    ``data_source`` (where the data came from).

    Raises:
        what :func:`run_dtfl` raises."""
    rec = run_dtfl(cfg, data, cuts, device, participants=None if participants is None else
                   np.asarray(participants, dtype=bool), backend=backend)
    return dict(rec, data_source=data.source)


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


class _Functional(torch.nn.Module):
    """``template`` run with the tensors of ``state`` (an engine auxiliary head: template module + its state)."""

    def __init__(self, template: torch.nn.Module, state: dict):
        super().__init__()
        self.template, self.state = template, state

    def forward(self, h):
        return torch.func.functional_call(self.template, self.state, (h,))


class _AtCut(torch.nn.Module):
    def __init__(self, transform):
        super().__init__()
        self.transform = transform

    def forward(self, z):
        return self.transform(z)


def run_engine(cfg: DtflConfig, data: TensorDataset, cuts, method: str = "dtfl", device: str = "cpu",
               progress=None, keep_model: bool = False, participants=None, client_loss=None,
               smashed_transform=None, server_update=None, eval_transform=None, backend: str = "auto") -> dict:
    """The round loop shared by DTFL and the engine baselines (:mod:`fedlib.dtfl.baselines`): every round the
    participating clients run one local epoch on the engine (``mode="copies"``), then :func:`fedlib.split.aggregate`
    forms the N_k-weighted average over the participants (eq. 1 / FedAvg) and, when given,
    ``server_update(st, before, weights)`` replaces it (FedYogi; ``before`` = the global units at the round's
    start). ``method`` ``"dtfl"`` trains with the auxiliary heads' local loss; any other name trains the whole
    model end to end through the cut (the activation gradient returns: FedAvg with cut 8, SplitFed with cut 2).
    Arguments and record as :func:`run_dtfl`; the record also holds ``method`` (and ``"backend": "stacked"``
    when that backend trained it: :func:`keyed_by_backend` keys such records apart). The stacked backend's rounds
    run without a host sync: the loss is read at each evaluation, and the labels need no check per round
    (:class:`fedlib.data.TensorDataset` refuses labels outside its classes when it is built).
    """
    check_instance("cfg", cfg, DtflConfig)
    check_choice("method", method, ("dtfl", "fedavg", "fedyogi", "splitfed"))
    check_instance("data", data, TensorDataset, "a fedlib.data.TensorDataset")
    if data.name != cfg.dataset:    # the record's config names the data it was trained on
        raise ValueError(f"data is {data.name!r}, but the config says dataset={cfg.dataset!r}")
    for name, fn in (("progress", progress), ("client_loss", client_loss), ("smashed_transform", smashed_transform),
                     ("server_update", server_update), ("eval_transform", eval_transform)):
        check_callable(name, fn)
    check_bool("keep_model", keep_model)
    check_choice("backend", backend, ALL_BACKENDS + ("auto",))
    local = method == "dtfl"
    eval_transform = smashed_transform if eval_transform is None else eval_transform
    cuts = check_cuts(cuts, cfg.num_clients, high=7 if local else 8)
    part = check_participants(participants, len(cuts), cfg.num_clients)
    if smashed_transform is not None and not (cuts == cuts[0, 0]).all():
        raise ValueError("smashed_transform needs every client at one cut for the whole run (a fixed tier)")
    t0 = time.perf_counter()
    dev = resolve_device(device)
    used = resolve_backend(backend, dev)
    f = backend_functions(used)
    ds = subset(data, cfg.train_subset, cfg.test_subset)
    parts = client_data(cfg, ds.y_train.numpy())
    sizes = np.array([len(p) for p in parts], dtype=float)
    weights = sizes / sizes.sum()                                                       # eq. 1: N_k / N
    parts = [torch.from_numpy(np.asarray(p, dtype=np.int64)) for p in parts]
    x_train, y_train, x_test, y_test = (t.to(dev) for t in (ds.x_train, ds.y_train, ds.x_test, ds.y_test))
    shape = tuple(ds.x_train.shape[1:])
    k, b = cfg.num_clients, cfg.batch_size
    scfg = SplitConfig(model=cfg.model, width=cfg.width, num_devices=k, batch_sizes=(b,) * k,
                       cuts=tuple(int(c) for c in cuts[0]), interval=1, lr=cfg.lr, eps=cfg.eps, optimizer="adam",
                       mode="copies", local_loss=local, rounds=len(cuts), seed=cfg.seed)
    assert NUM_UNITS[cfg.model] == 8
    st = f["init_state"](scfg, build_model(scfg, shape[0], shape[1], ds.num_classes), shape, dev,
                         aux_head_factory(ds.num_classes) if local else None, channels_last=cfg.channels_last)
    bank = {}                                                                           # tier head per cut
    gen = torch_generator(cfg.seed, "data")
    rec = {"config": cfg.to_dict(), "method": method, "device": str(dev),
           "samples_per_client": sizes.astype(int).tolist(), "round": [], "test_acc": [], "test_loss": [],
           "train_loss": [], "elapsed_s": []}
    if used != "loop":
        rec["backend"] = used
    loss = None

    if local:
        rec.update(test_acc_aux=[], test_loss_aux=[])

    def record(r):
        model = f["global_model"](st, weights)
        top = bank.get(TOP_CUT) if local and smashed_transform is None else None
        if smashed_transform is not None:
            c = int(cuts[0, 0])
            model = torch.nn.Sequential(*model[:c], _AtCut(eval_transform), *model[c:]).eval()
        if top is None:
            (acc, tl), aux = evaluate(model, x_test, y_test), (None, None)
        else:                     # md1..md7 once, then md8 and the top tier's averaged head (the md8 lag)
            head = _Functional(st.aux_templates[TOP_CUT], top)
            (acc, tl), aux = evaluate_heads(model[:TOP_CUT], [model[TOP_CUT:], head], x_test, y_test)
        for key, v in (("round", r), ("test_acc", acc), ("test_loss", tl),
                       ("train_loss", None if loss is None else float(loss)),
                       ("elapsed_s", time.perf_counter() - t0)):
            rec[key].append(v)
        if local:
            rec["test_acc_aux"].append(aux[0])
            rec["test_loss_aux"].append(aux[1])
        if progress is not None:
            progress(r, rec)

    record(0)
    for r, (round_cuts, here) in enumerate(zip(cuts, part), start=1):
        changed = np.flatnonzero(round_cuts != st.cuts)
        f["set_decision"](st, (b,) * k, round_cuts, weights=weights, seed=cfg.seed)
        for i in changed:
            if local and int(round_cuts[i]) in bank:
                set_device_aux(st, i, bank[int(round_cuts[i])])
        order = [p[torch.randperm(len(p), generator=gen)].to(dev) for p in parts]    # every client: aligned streams
        order = [o if here[i] else o[:0] for i, o in enumerate(order)]
        steps = max(-(-len(p) // b) for p in order)
        before = f["global_units"](st, weights) if server_update is not None else None
        for s in range(steps):
            idx = [o[s * b:(s + 1) * b] if s * b < len(o) else None for o in order]
            xs = [None if i is None else x_train[i] for i in idx]
            ys = [None if i is None else y_train[i] for i in idx]
            loss = f["train_round_nosync"](st, xs, ys, weights, sync_copies=False, client_loss=client_loss,
                                           smashed_transform=smashed_transform)
        w_round = np.where(here, weights, 0.0)
        w_round = w_round / w_round.sum()
        f["aggregate"](st, w_round)                               # eq. 1 + aux heads within each tier
        if server_update is not None:
            server_update(st, before, w_round)
        if local:
            for c in set(int(v) for v in st.cuts):
                same = [i for i in range(k) if st.cuts[i] == c and here[i]]
                if same:
                    bank[c] = weighted_mean([device_aux(st, same[0])], [1.0])
        if r % cfg.eval_every == 0 or r == len(cuts):
            record(r)
    if keep_model:
        rec["model"] = f["global_model"](st, weights)
    return rec
