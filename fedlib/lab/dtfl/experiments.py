"""DTFL experiments for the notebooks: a setup shared by a notebook's runs (:class:`Setup`), the simulated system
of one run (profiles, tiers, times; :func:`system_run`), the store key of its training (:func:`train_key`), and
one metrics row (:func:`run_row`): time to the target accuracy and its computation / communication parts.

Time to target (Table 1, Fig. 3): Σ over rounds 1..r of the round time (the straggler's T_k, eq. 5), r = the
first evaluated round whose global test accuracy is >= ``target_acc``; its parts are the straggler's
max(T_c, T_s) (computation) and T_com (communication) summed over the same rounds. ``None`` when not reached.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

from fedlib.lab.code_hash import source_hash
from fedlib.lab.store import RECORD_CODE, ResultStore
from fedlib.lab import datasets as own_data
from fedlib.lab.own_components import load_own
from fedlib.core import numpy_rng
from fedlib.core.components import is_path, resolve
from fedlib.core.validate import check_choice, check_float, check_instance, check_int, check_list
from fedlib.data import DATASET_SHAPES, TensorDataset, resolve_dataset as _resolve
from fedlib.split.models import check_model, make_model
from fedlib.dtfl.scheduler import EMA_ALPHA, SCHEDULERS, profile_schedule, sample_participants, simulate
from fedlib.dtfl.tiers import check_num_tiers
from fedlib.dtfl.timing import CASES, ResourceProfile, TimeModel, case_profiles, tier_costs
from fedlib.dtfl.training import MODELS as DTFL_MODELS, DtflConfig, client_data, keyed_by_backend, subset
from fedlib.dtfl.run import train_record

STORE_CODE = ("fedlib.dtfl.tiers", "fedlib.dtfl.training", "fedlib.dtfl.run", "fedlib.dtfl.local_loss",
              "fedlib.dtfl.baselines", "fedlib.dtfl.fedgkt", "fedlib.dtfl.privacy", *(f"fedlib.split.{m}" for m in (
                  "backends", "blocks", "config", "engine", "latency", "models", "ops", "profile", "records",
                  "resnet_cifar", "system")), *RECORD_CODE, "fedlib.core.components", "fedlib.data")
"""The method modules a DTFL record depends on (the record functions :func:`fedlib.dtfl.run.train_record`,
:func:`fedlib.dtfl.baselines.baseline_record`, :func:`fedlib.dtfl.privacy.privacy_record` and what they import):
editing them invalidates DTFL's cached runs, and nothing else does. The simulated system (the time model, the tier
scheduler, the baselines' time model) enters a record only through its config (each round's cuts and
participants), so an edit there re-keys exactly the runs whose tiers it changes. Of ``fedlib.split``, the modules
the runs use (the engine's ``loop`` backend), not the ``stacked`` backend (:mod:`fedlib.split.stacked`), whose
source enters only the keys of the records it computed (:func:`fedlib.dtfl.training.keyed_by_backend`: runs on
CUDA)."""

#: the paper's Table 2 (ResNet-56, tiers 1..6, relative to tier 1)
PAPER_TABLE2 = {"client": [1.00, 1.63, 2.16, 2.68, 3.30, 3.81], "server": [1.00, 0.82, 0.65, 0.51, 0.33, 0.20]}
#: the paper's Table 1 (ResNet-110, CIFAR-10 IID, M = 6, time to 80 %, seconds): tiers 1..6
PAPER_TABLE1 = {"case1": {"comp": [4622, 8106, 9982, 10681, 11722, 12250], "comm": [5911, 5995, 2187, 2189, 1018, 908],
                          "total": [10533, 14101, 12170, 12871, 12741, 13158]},
                "case2": {"comp": [8384, 14634, 17993, 19027, 21428, 22344], "comm": [17754, 18090, 6720, 6762, 2941, 2653],
                          "total": [26138, 32724, 24713, 25989, 24369, 24997]}}


def resolve_dataset(dataset: str) -> str:
    """``"auto"`` -> ``cifar10`` (the paper's) when on disk, else ``fashion-mnist``; other names of
    :data:`fedlib.data.DATASET_SHAPES` are checked and returned (:func:`fedlib.data.resolve_dataset`); a dataset of
    your own by import path ``"module:function"`` is loaded, checked and registered now
    (:func:`fedlib.lab.datasets.use_dataset`). Raises ``ValueError`` for an unknown name or a dataset of your own
    refused (naming it)."""
    if is_path(dataset):
        return own_data.check_dataset_name(dataset)
    return _resolve(dataset, "cifar10")


def result_store(root: str | None = None) -> ResultStore:
    """The result store of DTFL's runs: keys cover the config, the seed and the source of :data:`STORE_CODE`."""
    return ResultStore(root, code=STORE_CODE)


@dataclass(frozen=True)
class Setup:
    """Settings shared by a notebook's runs.

    Attributes:
        model, width, dataset, num_clients, batch_size, lr, train_subset, test_subset, eval_every: the training
        (:class:`fedlib.dtfl.DtflConfig`). rounds: R >= 1. core_gflops: FLOP/s of one client CPU, in GFLOP/s;
        server_gflops: the server's per client copy (:class:`fedlib.dtfl.TimeModel`). noise: σ of the observed
        client times. alpha: the scheduler's EMA weight.

    Raises:
        ValueError / ParameterTypeError: a value outside its range (naming it).
    """

    model: str = "resnet20"
    width: float = 1.0
    dataset: str = "fashion-mnist"
    num_clients: int = 10
    batch_size: int = 100
    lr: float = 1e-3
    train_subset: int = 0
    test_subset: int = 0
    eval_every: int = 1
    rounds: int = 10
    core_gflops: float = 30.0
    server_gflops: float = 50.0
    noise: float = 0.05
    alpha: float = EMA_ALPHA

    def __post_init__(self):
        if is_path(self.dataset):              # yours: loaded, checked and fitted to the model before any run
            data = own_data.use_dataset(self.dataset)
            check_model(self.model, DTFL_MODELS)
            own_data.check_fits(self.dataset, data, self.model,
                                lambda ch, size, classes: make_model(self.model, ch, size, classes, self.width),
                                self.width)
        check_choice("dataset", self.dataset, tuple(DATASET_SHAPES))
        check_float("width", self.width, 0, 1, low_open=True)
        check_int("rounds", self.rounds, 1)
        for name in ("core_gflops", "server_gflops"):
            check_float(name, getattr(self, name), 0, low_open=True)
        check_float("noise", self.noise, 0)
        check_float("alpha", self.alpha, 0, 1, low_open=True)
        self.config("iid", 0)   # validates the training fields

    def config(self, setting: str, seed: int) -> DtflConfig:
        """The training config of ``setting`` (``iid`` / ``noniid`` = Dirichlet α = 0.5) and ``seed``."""
        check_choice("setting", setting, ("iid", "noniid"))
        return DtflConfig(model=self.model, width=self.width, dataset=self.dataset, num_clients=self.num_clients,
                          batch_size=self.batch_size, lr=self.lr, partition="iid" if setting == "iid" else "dirichlet",
                          alpha=0.5, train_subset=self.train_subset, test_subset=self.test_subset,
                          eval_every=self.eval_every, seed=seed)


def check_lists(cases=None, tiers_list=None, settings=None) -> None:
    """The notebooks' list parameters, before any run: ``cases`` distinct names of :data:`fedlib.dtfl.timing.CASES`,
    ``tiers_list`` distinct M in 1..7 (each named ``tiers_list[i]``), ``settings`` distinct of ``iid`` / ``noniid``.
    None: not checked.

    Raises:
        ValueError / ParameterTypeError: naming the list entry and the allowed values.
    """
    if cases is not None:
        check_list("cases", cases, lambda k, v: check_choice(k, v, tuple(CASES)), distinct=True)
    if tiers_list is not None:
        check_list("tiers_list", tiers_list, lambda k, v: check_num_tiers(v, k), distinct=True)
    if settings is not None:
        check_list("settings", settings, lambda k, v: check_choice(k, v, ("iid", "noniid")), distinct=True)


def time_model(model: str, width: float, dataset: str, num_tiers: int, core_gflops: float,
               server_gflops: float) -> TimeModel:
    """:class:`fedlib.dtfl.TimeModel` of ``model`` at ``dataset``'s input shape for M = ``num_tiers`` (cached per
    model source: a model of your own, by import path, is imported again when its module was edited since its last
    load, :func:`fedlib.lab.own_components.load_own`, and profiled anew, so that a live kernel times the model on
    disk, which is the one its records are keyed by and trained with)."""
    code = load_own(model, "model", DTFL_MODELS)[1] if is_path(model) else None
    return _time_model(model, code, width, dataset, num_tiers, core_gflops, server_gflops)


@functools.lru_cache(maxsize=16)
def _time_model(model: str, code: str | None, width: float, dataset: str, num_tiers: int, core_gflops: float,
                server_gflops: float) -> TimeModel:
    """:func:`time_model`'s cache: ``code`` (the hash of a model of your own's source, None for ours) is a key only."""
    import torch
    ch, size, classes = DATASET_SHAPES[dataset]
    torch.manual_seed(0)      # costs do not depend on the weights
    net = make_model(model, ch, size, classes, width)      # yours too (import path)
    return TimeModel(tier_costs(net, (ch, size, size), check_num_tiers(num_tiers), classes),
                     core_gflops * 1e9, server_gflops * 1e9)


own_data.on_reshape(_time_model.cache_clear)        # a dataset of your own edited to another shape


def setup_time_model(s: Setup, num_tiers: int) -> TimeModel:
    """The time model of ``s``'s trained model for M = ``num_tiers``."""
    return time_model(s.model, s.width, s.dataset, num_tiers, s.core_gflops, s.server_gflops)


def system_inputs(s: Setup, data: TensorDataset, case: str, setting: str, seed: int, change_every: int = 0,
                  change_frac: float = 0.3, fraction: float = 1.0) -> dict:
    """What every method of one setting sees (so that methods differ only in their algorithm and costs): the
    profiles of ``case``, each client's profile over the rounds (:func:`fedlib.dtfl.profile_schedule`, ``system``
    stream), the sampled clients (:func:`fedlib.dtfl.sample_participants` from ``system/participants``; None when
    ``fraction`` = 1, all clients every round), N_k, and the ``system`` generator positioned after the profile
    draws (for the time noise).

    ``case``: a name of :data:`fedlib.dtfl.timing.CASES`, or the clients typed: one
    :class:`fedlib.dtfl.ResourceProfile` (CPUs, Mbit/s) per client, K of them, each client keeping its own
    through the run (``change_every`` must be 0).

    Raises:
        ValueError / ParameterTypeError: an unknown case; typed clients not K ResourceProfiles, or with
        ``change_every`` > 0 (naming them)."""
    rng = numpy_rng(seed, "system")
    if isinstance(case, str):
        profiles = case_profiles(case)
        idx = profile_schedule(s.num_clients, s.rounds, len(profiles), change_every, change_frac, rng)
    else:                                                  # client k keeps its typed profile k
        profiles = typed_clients(case, s.num_clients, change_every)
        idx = np.tile(np.arange(s.num_clients), (s.rounds, 1))
    part = (None if fraction == 1 else
            sample_participants(s.num_clients, s.rounds, fraction, numpy_rng(seed, "system/participants")))
    ds = subset(data, s.train_subset, s.test_subset)
    samples = np.array([len(p) for p in client_data(s.config(setting, seed), ds.y_train.numpy())])
    return {"profiles": profiles, "profile_idx": idx, "participants": part, "samples": samples, "rng": rng}


def typed_clients(case, num_clients: int, change_every: int = 0) -> tuple:
    """``case`` as K typed client profiles (a list or tuple of :class:`fedlib.dtfl.ResourceProfile`). Raises ValueError naming ``case`` when the list does not hold K = ``num_clients`` profiles, and
    when ``change_every`` > 0 (typed clients keep their profile), and for a CPU count or link speed outside the
    plausible range of its unit (:mod:`fedlib.lab.units`)."""
    items = check_list("case", case, lambda k, v: check_instance(k, v, ResourceProfile,
                                                                 "a fedlib.dtfl.ResourceProfile(cpus, mbps)"))
    if len(items) != num_clients:
        raise ValueError(f"case must type one ResourceProfile per client: K = {num_clients}, got {len(items)}")
    from fedlib.lab.units import check_plausible
    for i, p in enumerate(items):          # a unit slip (a link in bit/s where mbps is in Mbit/s) refused by name
        check_plausible(f"case[{i}].cpus", p.cpus, "cpus", "CPUs")
        check_plausible(f"case[{i}].mbps", p.mbps, "rate", "Mbit/s")
    if change_every:
        raise ValueError(f"typed clients keep their profile: change_every must be 0, got {change_every}")
    return tuple(items)


def case_name(case) -> str:
    """A row's ``case``: the case's name, or ``"typed"`` for typed clients."""
    return case if isinstance(case, str) else "typed"


def system_run(s: Setup, data: TensorDataset, num_tiers: int, case: str, setting: str, seed: int,
               fixed_tier: int | None = None, change_every: int = 0, change_frac: float = 0.3,
               fraction: float = 1.0, scheduler: str = "ours") -> dict:
    """The simulated DTFL system of one run (:func:`system_inputs`), then :func:`fedlib.dtfl.simulate` with the
    clients' real sample counts N_k. Adds ``profile_idx`` ``[R, K]``, ``profiles`` (names), ``samples`` and
    ``participants`` (``[R, K]`` bools or None).

    ``scheduler``: ``"ours"`` (every tier, clients start at tier M), ``"authors"`` (as the authors' code: never
    the md1-only tier 1, every client starts at tier 2 = md1..md2; needs M = 7), or a scheduler of your own by
    import path ``"package.module:Class"`` (a :class:`fedlib.dtfl.TierScheduler` subclass, built with ours'
    options; :func:`fedlib.dtfl.simulate`): each worker imports it by that path. Raises ``ValueError`` for another
    name, an unimportable path (naming it), or ``"authors"`` with M != 7."""
    own = is_path(scheduler)
    if own:                                                # imported again after an edit: what runs is its source
        load_own(scheduler, "scheduler", tuple(SCHEDULERS))
    elif not isinstance(scheduler, str) or scheduler not in SCHEDULERS:
        resolve(scheduler, "scheduler", tuple(SCHEDULERS))  # refused here, before any work, naming it
    opts = SCHEDULERS["ours" if own else scheduler]
    if scheduler == "authors" and num_tiers != 7:
        raise ValueError(f"scheduler='authors' reproduces the authors' code at M = 7, got num_tiers = {num_tiers}")
    inp = system_inputs(s, data, case, setting, seed, change_every, change_frac, fraction)
    profiles, idx, part, samples = inp["profiles"], inp["profile_idx"], inp["participants"], inp["samples"]
    tm = time_model(s.model, s.width, s.dataset, num_tiers, s.core_gflops, s.server_gflops)
    sim = simulate(tm, profiles, idx, samples, inp["rng"], fixed_tier, s.noise, s.alpha, participants=part, **opts,
                   scheduler=scheduler if own else None)
    return dict(sim, profile_idx=idx.tolist(), profiles=[p.name for p in profiles], samples=samples.tolist(),
                participants=None if part is None else part.tolist())


def train_key(store: ResultStore, cfg: DtflConfig, cuts, participants=None, device: str = "cpu") -> tuple:
    """The store, key and backend of :func:`fedlib.dtfl.run.train_record` for ``cfg`` with ``cuts`` ``[R, K]`` (and
    ``participants`` ``[R, K]`` or None): ``(store, config, backend)``. The key is the training config, the cuts and
    the participants (runs with the same tiers share a record: Table 1's top tier = Fig. 3's M = 1), and the split
    engine's backend where it is not the loop (:func:`fedlib.dtfl.training.keyed_by_backend`: on CUDA the stacked
    backend trains, into a store whose code hash covers it).

    The cuts and participants are those of a schedule (:func:`system_run`); :func:`fedlib.dtfl.run.train_record`
    checks them where it uses them."""
    config = dict(kind="dtfl_train", **cfg.to_dict(), cuts=[list(map(int, c)) for c in cuts],
                  **own_data.dataset_key(cfg.dataset))
    if participants is not None:
        config["participants"] = np.asarray(participants).astype(int).tolist()
    return keyed_by_backend(store, config, device)


def time_to_target(record: dict, sim: dict, target: float) -> dict:
    """Rounds, simulated time and its computation / communication parts to the first evaluation with test
    accuracy >= ``target`` (module docstring); values ``None`` when never reached. ``record`` a training record
    (``round``, ``test_acc``), ``sim`` its :func:`system_run`."""
    for r, acc in zip(record["round"], record["test_acc"]):
        if acc >= target:
            return {"rounds_to_target": r, "time_to_target_s": float(np.sum(sim["round_s"][:r])),
                    "comp_time_s": float(np.sum(sim["comp_s"][:r])), "comm_time_s": float(np.sum(sim["comm_s"][:r]))}
    return {"rounds_to_target": None, "time_to_target_s": None, "comp_time_s": None, "comm_time_s": None}


def run_entry(store: ResultStore, s: Setup, data: TensorDataset | None = None, *, num_tiers: int, case: str,
              setting: str, seed: int, target_acc: float, fixed_tier: int | None = None, change_every: int = 0,
              change_frac: float = 0.3, device: str = "cpu", fraction: float = 1.0, scheduler: str = "ours") -> dict:
    """System + training of one run (``data``: the loaded dataset; None loads ``s.dataset`` once per process,
    :func:`dataset_by_name`, so that the call is a job for :func:`fedlib.lab.map_jobs`; ``case``: a case name or
    K typed client profiles, :func:`system_inputs`); returns ``{"row", "record", "sim"}`` where ``row`` is the metrics row:
    ``method`` (``dtfl``, ``dtfl_authors`` with ``scheduler="authors"``, or a scheduler of your own's import path:
    :func:`system_run`), ``M``, ``case``,
    ``tier`` (the fixed tier, or None for the scheduler), ``setting``, ``seed``, ``target_acc``,
    ``time_to_target_s``, ``comp_time_s``, ``comm_time_s``, ``rounds_to_target``, ``final_test_acc``,
    ``best_test_acc``, ``rounds``, ``sim_total_s``, ``mean_tier``, the plateau of :func:`plateau`, ``elapsed_s``
    (the training record's own time, s: a redraw from the store keeps it) and ``wall_s`` (this call's wall time, s:
    a cache lookup takes well under a second)."""
    t0 = time.perf_counter()
    data = dataset_by_name(s.dataset) if data is None else data
    sim = system_run(s, data, num_tiers, case, setting, seed, fixed_tier, change_every, change_frac, fraction,
                     scheduler)
    cfg = s.config(setting, seed)
    store, config, backend = train_key(store, cfg, sim["cuts"], sim["participants"], device)
    rec = store.get_or_run(config, functools.partial(train_record, cfg, data, sim["cuts"], device,
                                                     sim["participants"], backend))
    row = run_row(rec, sim, cfg, setting, num_tiers, target_acc, t0, case, fixed_tier, fraction,
                  scheduler)
    return {"row": row, "record": rec, "sim": sim}


def run_row(rec: dict, sim: dict, cfg: DtflConfig, setting: str, num_tiers: int, target_acc: float, t0: float,
            case="all", fixed_tier: int | None = None, fraction: float = 1.0, scheduler: str = "ours") -> dict:
    """The metrics row of one DTFL run (:func:`run_entry`'s ``row``) from its training record ``rec``
    (:func:`fedlib.dtfl.run.train_record`) and its simulated system ``sim`` (:func:`system_run`); ``cfg`` its
    training config (``seed``, ``model``, ``num_clients``), ``setting`` ``iid`` / ``noniid``, ``t0`` the
    ``time.perf_counter()`` its run started at (``wall_s``), the other arguments as :func:`run_entry`'s."""
    method = {"ours": "dtfl", "authors": "dtfl_authors"}.get(scheduler, scheduler)     # yours: its import path
    return dict(method=method, M=num_tiers, case=case_name(case), tier=fixed_tier,
                setting=setting, seed=cfg.seed,
                model=cfg.model, num_clients=cfg.num_clients, fraction=fraction,
                target_acc=target_acc, **time_to_target(rec, sim, target_acc), final_test_acc=rec["test_acc"][-1],
                best_test_acc=max(rec["test_acc"]), rounds=rec["round"][-1], sim_total_s=float(np.sum(sim["round_s"])),
                mean_tier=float(np.mean(np.asarray(sim["tiers"])[_sampled(sim)])), **plateau(rec),
                elapsed_s=rec["elapsed_s"][-1], wall_s=time.perf_counter() - t0,
                **({"scheduler_code": source_hash([scheduler.partition(":")[0]])} if is_path(scheduler) else {}))


def plateau(record: dict) -> dict:
    """Has the run converged? Over the evaluations in the last fifth of its rounds (round > 0.8·R, at least the
    last two evaluations): ``plateau_acc`` (their mean test accuracy), ``plateau_spread`` (max − min, fraction)
    and ``plateau_rise`` (the least-squares line's rise over those rounds, slope × (last − first round); the
    ``converged`` profile asks FedAvg for |rise| <= 0.01: its level moves by at most a point over the last fifth,
    whatever the evaluation-to-evaluation jitter). ``record``: a training record (round 0 and the last evaluated at
    least)."""
    rounds, acc = np.asarray(record["round"]), np.asarray(record["test_acc"], dtype=float)
    sel = rounds > 0.8 * rounds[-1]
    if sel.sum() < 2:
        sel = np.arange(len(rounds)) >= len(rounds) - 2
    r, last = rounds[sel].astype(float), acc[sel]
    slope = float(np.polyfit(r, last, 1)[0])
    return {"plateau_acc": float(last.mean()), "plateau_spread": float(last.max() - last.min()),
            "plateau_rise": slope * float(r[-1] - r[0])}


def _sampled(sim: dict) -> np.ndarray:
    """``[R, K]`` bools: the clients that trained in each round (all when ``participants`` is None)."""
    tiers = np.asarray(sim["tiers"])
    return np.ones(tiers.shape, bool) if sim.get("participants") is None else np.asarray(sim["participants"], bool)


def dataset_by_name(name: str) -> TensorDataset:
    """The dataset ``name``, loaded once per process (pool workers load their own copy from disk); a dataset of
    your own by import path ``"package.module:function"`` through :func:`fedlib.lab.datasets.use_dataset` (each
    worker imports, loads and checks it itself; loaded again after an edit of its module)."""
    return own_data.dataset_by_name(name, _builtin_dataset)


@functools.lru_cache(maxsize=4)
def _builtin_dataset(name: str) -> TensorDataset:
    from fedlib.data import load_dataset
    return load_dataset(name)


def setup_note(s: Setup, paper: str) -> str:
    """Provenance line for a figure: what differs from the paper's run ``paper``."""
    subset_text = f"first {s.train_subset} training" if s.train_subset else "all training"
    return (f"{s.dataset} instead of {paper}; {s.model} (width {s.width:g}); {s.num_clients} clients, batch "
            f"{s.batch_size}, {s.rounds} rounds, {subset_text} / {s.test_subset or 'all'} test samples; client CPU "
            f"{s.core_gflops:g} GFLOP/s per core, server {s.server_gflops:g} GFLOP/s per client copy")
