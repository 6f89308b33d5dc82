"""DTFL's Algorithm 1 ("DTFL's training process") top-down: :func:`algorithm1` is the paper's round loop, each
step naming its lines; :func:`run_dtfl` runs it for a schedule of tiers, :func:`dtfl` with the tier scheduler
deciding each round; :class:`EngineRun` holds the steps on the shared split engine (:mod:`fedlib.split.engine`,
``mode="copies"``), which the engine baselines (:mod:`fedlib.dtfl.baselines`) run through the same loop.

**The loop every stored run goes through** (:func:`train_record` -> :func:`run_dtfl` -> :func:`run_engine` ->
:func:`algorithm1`), round r = 1..R:

1. the tier scheduler's decision for round r (line 2): the round's cuts ``[K]`` and participants ``[K]``,
   replayed from the recorded schedule (:class:`Schedule`; see "The stored runs replay a recorded schedule" below)
   and sent to the clients with their tiers' auxiliary networks (:meth:`EngineRun.download`);
2. the local-loss round (lines 3-11, 15-20; :meth:`EngineRun.local_epoch`): one local epoch of every participant
   on the split engine, each client's part md1..md_{m_k} trained by DTFL's local-loss step
   (:mod:`fedlib.dtfl.local_loss`, passed to the engine as a :class:`fedlib.split.LocalLossStep`: the auxiliary
   network's cross-entropy at the cut, no gradient back from the server) and the server part on the detached
   smashed data;
3. aggregation (lines 12-13; :meth:`EngineRun.aggregate`): eq. 1, the N_k-weighted average of the participants'
   full models, and each tier's auxiliary network averaged among its clients;

then every ``eval_every`` rounds the global model is evaluated into the record (:meth:`EngineRun.evaluate`).

Engine mapping: the engine's cut of client k is its tier's module count (:func:`fedlib.dtfl.client_modules`);
one engine step = every client with a batch left in its epoch trains one batch (clients with fewer batches sit
the remaining steps out); server copies are not averaged between steps (``sync_copies=False``); after the epoch
:func:`fedlib.split.aggregate` with weights N_k/N (renormalised over the round's participants when clients are
sampled) averages every module over them -- the server copies of a module and the client copies of it alike,
which is eq. 1 (the average of the full models) -- and the auxiliary networks among the clients of a tier; every
client then holds the global model, so the tier models are re-derived from it (line 13). Tier changes go
through :func:`fedlib.split.set_decision` (a client changing tier restarts its Adam state; **choice**, the paper
does not say) and the client takes its new tier's averaged auxiliary network (kept per tier across rounds, also
while the tier is empty; a tier never used before gets a fresh head from the ``model`` stream).

Line 12 writes the average as (1/K) Σ_k w_k; eq. 1 weights client k by N_k/N (**choice**: eq. 1; the two agree
for equal N_k). The choices of the training itself (Adam, no lr decay, no augmentation, one local epoch) are in
:mod:`fedlib.dtfl.training`.

**The stored runs replay a recorded schedule.** Every record in the result stores (:func:`train_record`) was
computed in two passes: first the tier scheduler runs alone over the time model (:func:`fedlib.dtfl.simulate`: the
clients' profiles, eq. 5's times with their noise, the EMA of observed times and each round's tier assignment,
lines 2 and 21-35), with no model trained; then the training runs :func:`algorithm1` over that recorded schedule
(:class:`Schedule`), each round's cuts and participants taken from it. This is the same run as the one loop with
the scheduler deciding each round (:func:`dtfl` over a :class:`fedlib.dtfl.scheduler.SystemRun`), because the
simulated times depend only on the profiles, the FLOPs and bytes of each tier and the noise draws, never on the
model's weights; ``tests/test_dtfl_training.py`` checks that the two give the same record bit for bit. The
stored runs take the two-pass way because a record is then keyed by what its training saw, the config, the cuts
and the participants (:func:`fedlib.dtfl.training.keyed_by_backend`): runs whose tiers coincide share one record
(Table 1's top tier is Fig. 3's M = 1), an edit of the scheduler or the time model re-keys only the runs whose tiers
it changes, and every method of a setting is charged on one simulated system (notebooks/dtfl/RUN_LOG.md,
2026-12-02). :func:`algorithm1` is the paper's loop itself, lines named: both passes meet in it (the schedule
replayed, or the scheduler deciding each round in :func:`dtfl`), and it is what a reader compares with the paper.
"""
from __future__ import annotations

import copy
import dataclasses
import time

import numpy as np
import torch

from ..core.seeding import resolve_device, torch_generator
from ..core.validate import check_bool, check_callable, check_choice, check_instance
from ..data import TensorDataset
from ..split import SplitConfig, build_model, evaluate
from ..split.backends import ALL_BACKENDS, device_aux, resolve_backend, set_device_aux, split_backend
from ..core.components import is_path
from ..split.ops import weighted_mean
from .local_loss import local_loss_step
from .tiers import aux_head_factory
from .training import (TOP_CUT, AtCut, DtflConfig, Functional, check_cuts, check_participants, client_data,
                       evaluate_heads, subset)


def dtfl_model(scfg: SplitConfig, shape: tuple, num_classes: int) -> torch.nn.Sequential:
    """The global model md1..md8 of a run (:func:`fedlib.split.build_model`); a model of your own (import path) is
    checked to be DTFL's: 8 units, and each of md1..md7 giving ``[B, C, H, W]`` smashed data (a tier's auxiliary
    head pools it, :func:`fedlib.dtfl.tiers.aux_head_factory`), found by a forward pass of 2 zero samples.

    Args:
        scfg: the engine's config. shape: ``(C, H, W)`` of one sample. num_classes: the data's classes.

    Raises:
        ValueError: a model of your own of another number of units or smashed data of another rank (one line
            naming its path); as :func:`fedlib.split.build_model`."""
    if not is_path(scfg.model):
        return build_model(scfg, shape[0], shape[1], num_classes)
    # the units counted before the cuts are (the weights do not depend on them): DTFL's message comes first
    net = build_model(dataclasses.replace(scfg, cuts=(1,) * scfg.num_devices), shape[0], shape[1], num_classes)
    if len(net) != 8:
        raise ValueError(f"model {scfg.model!r} must give DTFL's 8 units md1..md8 (tiers keep md1..md_c, c <= 7, on "
                         f"the client, md8 on the server), got {len(net)} units")
    with torch.no_grad():
        h = torch.zeros(2, *shape)
        for j, unit in enumerate(copy.deepcopy(net).eval()[:TOP_CUT], start=1):
            h = unit(h)
            if h.dim() != 4:
                raise ValueError(f"model {scfg.model!r} must give [B, C, H, W] smashed data after md1..md7 (a tier's "
                                 f"auxiliary head pools it), got shape {list(h.shape)} after md{j}")
    return net


def algorithm1(run: "EngineRun", schedule) -> dict:
    """Algorithm 1's round loop: ``schedule.tiers(r)`` gives round r's ``(cuts [K], participants [K])`` and
    ``schedule.observe(r)`` takes its measured times (:class:`Schedule`: tiers decided ahead;
    :class:`fedlib.dtfl.scheduler.SystemRun`: the tier scheduler each round). Returns ``run``'s record."""
    run.evaluate(0)
    for r in range(1, schedule.rounds + 1):                 # line 1: for each round
        cuts, here = schedule.tiers(r)                       # line 2: m^(r) <- TierScheduler (lines 21-35)
        run.download(cuts)                                   # line 2: client k gets md1..md_{m_k} + its tier's aux
        run.local_epoch(here)                                # lines 3-11, 15-20: ClientUpdate (.local_loss) | server
        run.aggregate(here)                                  # lines 12-13: eq. 1; tier models from w^(r+1)
        schedule.observe(r)                                  # lines 5, 22-23: the measured client time into the EMA
        if r % run.cfg.eval_every == 0 or r == schedule.rounds:
            run.evaluate(r)
    return run.finish()


def dtfl(cfg: DtflConfig, data: TensorDataset, system, device: str = "cpu", backend: str = "auto") -> dict:
    """DTFL with its tier scheduler deciding each round: :func:`algorithm1` over ``system``, a
    :class:`fedlib.dtfl.scheduler.SystemRun` (the clients' resources, the time model of eq. 5 and the
    scheduler). The same record as :func:`run_dtfl` with ``fedlib.dtfl.simulate``'s cuts and participants (the
    simulated times do not depend on the weights, so the schedule can also be decided ahead: the stored runs).

    Raises:
        ValueError / ParameterTypeError: as :func:`run_dtfl`; ``system`` not a ``SystemRun`` of K clients."""
    from .scheduler import SystemRun
    check_instance("system", system, SystemRun, "a fedlib.dtfl.scheduler.SystemRun")
    check_instance("cfg", cfg, DtflConfig)
    if system.k != cfg.num_clients:
        raise ValueError(f"system has K = {system.k} clients, the config num_clients = {cfg.num_clients}")
    run = EngineRun(cfg, data, system.first_cuts(), "dtfl", device, backend=backend)
    return algorithm1(run, system)


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
            client_loss, smashed_transform: the privacy hooks of DTFL's local-loss step (Sec. 4.4,
                :mod:`fedlib.dtfl.local_loss`);
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

    A replay of a recorded schedule (module docstring): ``cuts`` and ``participants`` come from the tier scheduler
    run first over the time model (:func:`fedlib.dtfl.simulate`), and :func:`algorithm1` then trains round by round
    with them: the scheduler's recorded decision -> the local-loss round (:mod:`fedlib.dtfl.local_loss`) ->
    aggregation (eq. 1). Since the simulated times never depend on the weights this equals :func:`dtfl` with the
    scheduler deciding each round, and the record is keyed by the tiers its training saw.

    Raises:
        what :func:`run_dtfl` raises."""
    rec = run_dtfl(cfg, data, cuts, device, participants=None if participants is None else
                   np.asarray(participants, dtype=bool), backend=backend)
    return dict(rec, data_source=data.source)


def run_engine(cfg: DtflConfig, data: TensorDataset, cuts, method: str = "dtfl", device: str = "cpu",
               progress=None, keep_model: bool = False, participants=None, client_loss=None,
               smashed_transform=None, server_update=None, eval_transform=None, backend: str = "auto") -> dict:
    """:func:`algorithm1` for DTFL and the engine baselines (:mod:`fedlib.dtfl.baselines`) over the schedule
    ``cuts`` ``[R, K]`` (and ``participants``): every round the participating clients run one local epoch on
    the engine, then :func:`fedlib.split.aggregate` forms the N_k-weighted average over the participants (eq. 1 /
    FedAvg) and, when given, ``server_update(st, before, weights)`` replaces it (FedYogi; ``before`` = the global
    units at the round's start). ``method`` ``"dtfl"`` trains with the auxiliary heads' local loss; any other
    name trains the whole model end to end through the cut (the activation gradient returns: FedAvg with cut 8,
    SplitFed with cut 2). Arguments and record as :func:`run_dtfl`; the record also holds ``method`` (and
    ``"backend": "stacked"`` when that backend trained it: :func:`fedlib.dtfl.training.keyed_by_backend` keys
    such records apart). The stacked backend's rounds run without a host sync: the loss is read at each
    evaluation, and the labels need no check per round (:class:`fedlib.data.TensorDataset` refuses labels
    outside its classes when it is built).
    """
    check_instance("cfg", cfg, DtflConfig)
    cuts = check_cuts(cuts, cfg.num_clients, high=7 if method == "dtfl" else 8)
    part = check_participants(participants, len(cuts), cfg.num_clients)
    if smashed_transform is not None and not (cuts == cuts[0, 0]).all():
        raise ValueError("smashed_transform needs every client at one cut for the whole run (a fixed tier)")
    run = EngineRun(cfg, data, cuts[0], method, device, progress, keep_model, client_loss, smashed_transform,
                    server_update, eval_transform, backend)
    return algorithm1(run, Schedule(cuts, part))


class Schedule:
    """Tiers decided ahead: round r's ``(cuts[r - 1], participants[r - 1])`` (``[R, K]`` each, checked by the
    caller); ``observe`` has nothing to do."""

    def __init__(self, cuts: np.ndarray, participants: np.ndarray):
        self.cuts, self.participants, self.rounds = cuts, participants, len(cuts)

    def tiers(self, r: int) -> tuple:
        return self.cuts[r - 1], self.participants[r - 1]

    def observe(self, r: int) -> None:
        pass


class EngineRun:
    """One run's state on the split engine and Algorithm 1's steps on it: :meth:`download` (the round's cuts and
    the tiers' auxiliary networks), :meth:`local_epoch`, :meth:`aggregate`, :meth:`evaluate` (into the record)
    and :meth:`finish` (the record). Arguments as :func:`run_engine`, with ``first_cuts`` ``[K]`` the cuts the
    state is built at (round 1's).

    Raises:
        ValueError / ParameterTypeError: an unknown method or backend, data of another dataset, hooks that are not
            callables, ``keep_model`` not a bool (naming them)."""

    def __init__(self, cfg: DtflConfig, data: TensorDataset, first_cuts, method: str = "dtfl", device: str = "cpu",
                 progress=None, keep_model: bool = False, client_loss=None, smashed_transform=None,
                 server_update=None, eval_transform=None, backend: str = "auto"):
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
        if (client_loss is not None or smashed_transform is not None) and method != "dtfl":
            raise ValueError("client_loss / smashed_transform need local_loss=True (no gradient crosses the cut): "
                             f"method {method!r} trains end to end")
        self.cfg, self.local, self.progress, self.keep_model = cfg, method == "dtfl", progress, keep_model
        self.smashed_transform, self.server_update = smashed_transform, server_update
        self.eval_transform = smashed_transform if eval_transform is None else eval_transform
        self.fixed_cut = int(first_cuts[0])
        self.t0 = time.perf_counter()
        dev = self.dev = resolve_device(device)
        used = resolve_backend(backend, dev)
        f = self.f = split_backend(used)
        # DTFL's local-loss step at each client's cut (fedlib.dtfl.local_loss), plugged into the engine's round
        self.step = local_loss_step(used, client_loss, smashed_transform) if self.local else None
        ds = subset(data, cfg.train_subset, cfg.test_subset)
        parts = client_data(cfg, ds.y_train.numpy())
        sizes = np.array([len(p) for p in parts], dtype=float)
        self.weights = sizes / sizes.sum()                                              # eq. 1: N_k / N
        self.parts = [torch.from_numpy(np.asarray(p, dtype=np.int64)) for p in parts]
        self.x_train, self.y_train, self.x_test, self.y_test = (
            t.to(dev) for t in (ds.x_train, ds.y_train, ds.x_test, ds.y_test))
        shape = tuple(ds.x_train.shape[1:])
        k, b = self.k, self.b = cfg.num_clients, cfg.batch_size
        scfg = SplitConfig(model=cfg.model, width=cfg.width, num_devices=k, batch_sizes=(b,) * k,
                           cuts=tuple(int(c) for c in first_cuts), interval=1, lr=cfg.lr, eps=cfg.eps,
                           optimizer="adam", mode="copies", local_loss=self.local, rounds=1, seed=cfg.seed)
        self.st = f.init_state(scfg, dtfl_model(scfg, shape, ds.num_classes), shape, dev,
                                  aux_head_factory(ds.num_classes) if self.local else None,
                                  channels_last=cfg.channels_last)
        self.bank = {}                                                                  # tier head per cut
        self.gen = torch_generator(cfg.seed, "data")
        self.rec = {"config": cfg.to_dict(), "method": method, "device": str(dev),
                    "samples_per_client": sizes.astype(int).tolist(), "round": [], "test_acc": [], "test_loss": [],
                    "train_loss": [], "elapsed_s": []}
        if used != "loop":
            self.rec["backend"] = used
        if self.local:
            self.rec.update(test_acc_aux=[], test_loss_aux=[])
        self.loss = self.before = None

    def download(self, cuts) -> None:
        """Round's cuts ``[K]``: clients changing tier get their new tier's averaged auxiliary network."""
        st = self.st
        changed = np.flatnonzero(cuts != st.cuts)
        self.f.set_decision(st, (self.b,) * self.k, cuts, weights=self.weights, seed=self.cfg.seed)
        for i in changed:
            if self.local and int(cuts[i]) in self.bank:
                set_device_aux(st, i, self.bank[int(cuts[i])])

    def local_epoch(self, here) -> None:
        """One local epoch of the participants ``here`` ``[K]`` (each reshuffles its data, ``data`` stream)."""
        b, dev = self.b, self.dev
        order = [p[torch.randperm(len(p), generator=self.gen)].to(dev) for p in self.parts]  # aligned streams
        order = [o if here[i] else o[:0] for i, o in enumerate(order)]
        steps = max(-(-len(p) // b) for p in order)
        self.before = self.f.global_units(self.st, self.weights) if self.server_update is not None else None
        for s in range(steps):
            idx = [o[s * b:(s + 1) * b] if s * b < len(o) else None for o in order]
            xs = [None if i is None else self.x_train[i] for i in idx]
            ys = [None if i is None else self.y_train[i] for i in idx]
            self.loss = self.f.train_round_nosync(self.st, xs, ys, self.weights, sync_copies=False,
                                                  local_step=self.step)

    def aggregate(self, here) -> None:
        """Eq. 1 over the participants ``here`` (weights N_k/N renormalised), then ``server_update``; each tier's
        auxiliary network averaged among its participants and kept for the tier."""
        st, w_round = self.st, np.where(here, self.weights, 0.0)
        w_round = w_round / w_round.sum()
        self.f.aggregate(st, w_round)                          # eq. 1 + aux heads within each tier
        if self.server_update is not None:
            self.server_update(st, self.before, w_round)
        if self.local:
            for c in set(int(v) for v in st.cuts):
                same = [i for i in range(self.k) if st.cuts[i] == c and here[i]]
                if same:
                    self.bank[c] = weighted_mean([device_aux(st, same[0])], [1.0])

    def evaluate(self, r: int) -> None:
        """Round r's test accuracy and loss of the global model (and of the top tier's head: the md8 lag)."""
        rec, local = self.rec, self.local
        model = self.f.global_model(self.st, self.weights)
        top = self.bank.get(TOP_CUT) if local and self.smashed_transform is None else None
        if self.smashed_transform is not None:
            c = self.fixed_cut
            model = torch.nn.Sequential(*model[:c], AtCut(self.eval_transform), *model[c:]).eval()
        if top is None:
            (acc, tl), aux = evaluate(model, self.x_test, self.y_test), (None, None)
        else:                     # md1..md7 once, then md8 and the top tier's averaged head (the md8 lag)
            head = Functional(self.st.aux_templates[TOP_CUT], top)
            (acc, tl), aux = evaluate_heads(model[:TOP_CUT], [model[TOP_CUT:], head], self.x_test, self.y_test)
        for key, v in (("round", r), ("test_acc", acc), ("test_loss", tl),
                       ("train_loss", None if self.loss is None else float(self.loss)),
                       ("elapsed_s", time.perf_counter() - self.t0)):
            rec[key].append(v)
        if local:
            rec["test_acc_aux"].append(aux[0])
            rec["test_loss_aux"].append(aux[1])
        if self.progress is not None:
            self.progress(r, rec)

    def finish(self) -> dict:
        if self.keep_model:
            self.rec["model"] = self.f.global_model(self.st, self.weights)
        return self.rec
