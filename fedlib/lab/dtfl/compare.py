"""DTFL against its baselines (Sec. 4.2-4.3): one cached run per method and setting, charged by one time model
(Tables 3-4, Fig. 2).

Every method of a setting sees the same system (:func:`fedlib.lab.dtfl.experiments.system_inputs`: profiles, their
changes, the sampled clients, N_k) and the same training data, model family, client optimiser and evaluation;
DTFL runs its tier scheduler (:func:`fedlib.lab.dtfl.experiments.run_entry`), the baselines are charged by
:func:`fedlib.dtfl.baseline_time.simulate_method` (FLOPs per side and the bytes of every message, the same
speeds and time noise). Time to target, its parts and the metrics row follow :func:`fedlib.lab.dtfl.time_to_target`.
A baseline of your own (a function named by import path, trained as the built-ins are and charged by one of their
time models) runs beside them: :func:`own_baseline_key` and :func:`own_record`. The notebooks compose the runs in
their own cells (``dtfl_5_baselines``, ``dtfl_6_scaling``, ``dtfl_your_method``). The privacy runs of Table 5 are designed in
``dtfl_7_privacy`` itself (:func:`fedlib.dtfl.privacy.privacy_record` through the store).
"""
from __future__ import annotations

import functools
import inspect
import time

import numpy as np
import torch

from fedlib.core.components import is_path
from fedlib.lab.datasets import dataset_key, on_reshape
from fedlib.lab.own_components import check_own, load_own
from fedlib.lab.store import ResultStore
from fedlib.core.validate import ParameterTypeError, check_choice, check_float, check_int, check_list
from fedlib.data import TensorDataset
from fedlib.split.models import make_model
from fedlib.dtfl.baseline_time import method_costs, simulate_method
from fedlib.dtfl.baselines import BASELINE_CUTS
from fedlib.lab.dtfl.experiments import DATASET_SHAPES, Setup, case_name, plateau, system_inputs, time_to_target
from fedlib.dtfl.fedgkt import GKT_SERVER_EPOCHS, gkt_client_model, gkt_server_model
from fedlib.dtfl.training import keyed_by_backend

METHODS = ("dtfl", "fedavg", "splitfed", "fedyogi", "fedgkt")


@functools.lru_cache(maxsize=32)
def costs_of(method: str, model: str, width: float, dataset: str):
    """:func:`fedlib.dtfl.baseline_time.method_costs` of ``method`` for ``model`` at ``dataset``'s input (cached)."""
    ch, size, classes = DATASET_SHAPES[dataset]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)                                        # costs do not depend on the weights
        net = make_model(model, ch, size, classes, width)          # yours too (import path)
        extra = {}
        if method == "fedgkt":
            extra = dict(gkt_client=gkt_client_model(ch, size, classes, width),
                         gkt_server=gkt_server_model(model, classes, width))
    return method_costs(method, net, (ch, size, size), classes, splitfed_cut=BASELINE_CUTS["splitfed"],
                        server_epochs=GKT_SERVER_EPOCHS, **extra)


on_reshape(costs_of.cache_clear)                   # a dataset of your own edited to another shape


def baseline_system(s: Setup, data: TensorDataset, method: str, setting: str, seed: int, case: str = "all",
                    change_every: int = 0, change_frac: float = 0.3, fraction: float = 1.0) -> tuple[dict, object]:
    """A baseline's simulated system for one setting, without training: the setting's system
    (:func:`fedlib.lab.dtfl.experiments.system_inputs`, the same DTFL sees) charged by
    :func:`fedlib.dtfl.baseline_time.simulate_method` at ``s``'s speeds. Returns ``(sim, participants)``:
    ``sim`` with ``round_s`` ``[R]`` (s) and the other fields of ``simulate_method``; ``participants`` ``[R, K]``
    bools or None (all clients every round). Raises ValueError naming ``method`` when it is not a baseline."""
    check_choice("method", method, METHODS[1:])
    inp = system_inputs(s, data, case, setting, seed, change_every, change_frac, fraction)
    sim = simulate_method(costs_of(method, s.model, s.width, s.dataset), inp["profiles"], inp["profile_idx"],
                          inp["samples"], inp["rng"], s.noise, inp["participants"], core_flops=s.core_gflops * 1e9,
                          server_flops=s.server_gflops * 1e9)
    return sim, inp["participants"]


#: the method whose training a baseline's record holds: SplitFed-V1 trains exactly FedAvg's models round by round
#: (tests/test_dtfl_baselines.py), so one record serves both; only their time models differ
TRAINED_AS = {"splitfed": "fedavg"}


def baseline_key(store: ResultStore, cfg, method: str, rounds: int, participants=None, device: str = "cpu") -> tuple:
    """The store, key and backend of :func:`fedlib.dtfl.baselines.baseline_record` for the baseline ``method``
    (trained as :data:`TRAINED_AS` says) of ``cfg`` over ``rounds`` rounds with ``participants`` ``[R, K]`` bools
    (or None: all clients): ``(store, config, backend)``. The key is the method trained, the config, the rounds and
    the participants, and the split engine's backend where it is not the loop
    (:func:`fedlib.dtfl.training.keyed_by_backend`; FedGKT does not run on the split engine: ``"loop"``, unused).

    Raises:
        ValueError: ``method`` not a baseline of :data:`METHODS`."""
    check_choice("method", method, METHODS[1:])
    trained = TRAINED_AS.get(method, method)
    config = dict(kind="dtfl_baseline", method=trained, **cfg.to_dict(), rounds=rounds,
                  participants=None if participants is None else np.asarray(participants).astype(int).tolist(),
                  **dataset_key(cfg.dataset))
    if trained == "fedgkt":
        return store, config, "loop"
    return keyed_by_backend(store, config, device)


def baseline_row(rec: dict, sim: dict, cfg, method: str, setting: str, target_acc: float, t0: float,
                 case="all", fraction: float = 1.0) -> dict:
    """The metrics row of one baseline run from its record ``rec`` (:func:`fedlib.dtfl.baselines.baseline_record`)
    and its simulated system ``sim`` (:func:`baseline_system`): the fields of
    :func:`fedlib.lab.dtfl.experiments.run_row` with ``method`` the baseline's and ``M`` / ``tier`` /
    ``mean_tier`` None; ``t0`` the ``time.perf_counter()`` its run started at (``wall_s``)."""
    return dict(method=method, M=None, case=case_name(case), tier=None, setting=setting, seed=cfg.seed,
                model=cfg.model, num_clients=cfg.num_clients, fraction=fraction, target_acc=target_acc,
                **time_to_target(rec, sim, target_acc), final_test_acc=rec["test_acc"][-1],
                best_test_acc=max(rec["test_acc"]), rounds=rec["round"][-1], sim_total_s=float(np.sum(sim["round_s"])),
                mean_tier=None, **plateau(rec), elapsed_s=rec["elapsed_s"][-1], wall_s=time.perf_counter() - t0)


#: what a baseline of your own is called with, in this order (what the built-in baselines' records are computed
#: from, :func:`fedlib.dtfl.baselines.baseline_record`)
BASELINE_ARGS = ("cfg", "data", "rounds", "participants", "device", "backend")
#: the per-evaluation lists its record must hold, one entry per evaluation (those of the built-in baselines')
RECORD_FIELDS = ("round", "test_acc", "test_loss", "train_loss", "elapsed_s")


def check_baseline(baseline, what: str = "baseline"):
    """The function ``baseline`` names: a baseline of your own, ``fn(cfg, data, rounds, participants, device,
    backend) -> record`` (:func:`own_record`), by import path ``"package.module:function"`` into a module
    of your own; a built-in name, a path into ``fedlib`` itself or a function of other parameters is refused.

    Raises:
        ValueError / ParameterTypeError: one line naming ``what``, the path and what is expected."""
    fn = check_own(baseline, what, "my_baseline:fedavg_half_clients", METHODS[1:], "function",
                   f"the built-in {list(METHODS[1:])} are named as they are")
    module = baseline.partition(":")[0]
    if module == "fedlib" or module.startswith("fedlib."):
        raise ValueError(f"{what} = {baseline!r} names fedlib's own code; the built-in baselines are named "
                         f"{list(METHODS[1:])}, a baseline of your own lives in a module of your own")
    try:
        inspect.signature(fn).bind(*BASELINE_ARGS)
    except TypeError:
        raise ParameterTypeError(f"{what} = {baseline!r} must take ({', '.join(BASELINE_ARGS)}), its parameters "
                                 f"are {inspect.signature(fn)}") from None
    except ValueError:                                  # no signature to read (a builtin): called as it is
        pass
    return fn


def check_record(baseline: str, rec, rounds: int) -> dict:
    """``rec``, returned by the baseline of your own ``baseline`` for ``rounds`` rounds, if it is a record as the
    built-in baselines' (:data:`RECORD_FIELDS`: equal-length lists, one entry per evaluation, ``round`` rising
    integers in 0..rounds ending at ``rounds``, ``test_acc`` fractions in [0, 1], the losses numbers or None,
    ``elapsed_s`` seconds >= 0), which the rows and figures read.

    Raises:
        ParameterTypeError: not a dict. ValueError: a field missing or malformed (named, with what was expected)."""
    who = f"baseline {baseline!r}"
    if not isinstance(rec, dict):
        raise ParameterTypeError(f"{who} must return a record dict holding {list(RECORD_FIELDS)} (as "
                                 f"fedlib.dtfl.run_baseline's), got {type(rec).__name__}")
    missing = [f for f in RECORD_FIELDS if f not in rec]
    if missing:
        raise ValueError(f"{who} returned a record without {missing}: expected the lists {list(RECORD_FIELDS)}, one "
                         f"entry per evaluation (as fedlib.dtfl.run_baseline's), got {sorted(rec)}")
    n = len(rec["round"]) if isinstance(rec["round"], list) else -1
    bad = [f for f in RECORD_FIELDS if not isinstance(rec[f], list) or len(rec[f]) != n]
    if n < 2 or bad:
        raise ValueError(f"{who}: {bad or ['round']} must be lists of one entry per evaluation, as many as "
                         f"'round' (at least 2: round 0 and the last), got lengths "
                         f"{[len(rec[f]) if isinstance(rec[f], list) else type(rec[f]).__name__ for f in RECORD_FIELDS]}")
    r = rec["round"]
    if (not all(isinstance(x, int) and not isinstance(x, bool) for x in r) or r != sorted(set(r)) or r[0] < 0
            or r[-1] != rounds):
        raise ValueError(f"{who}: 'round' must be rising integers in 0..{rounds} ending at {rounds}, got {r}")
    number = lambda x: isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)
    checks = (("test_acc", lambda x: number(x) and 0 <= x <= 1, "fractions in [0, 1]"),
              ("test_loss", lambda x: x is None or number(x), "numbers or None"),
              ("train_loss", lambda x: x is None or number(x), "numbers or None"),
              ("elapsed_s", lambda x: number(x) and x >= 0, "seconds >= 0"))
    for field, ok, expected in checks:
        wrong = [x for x in rec[field] if not ok(x)]
        if wrong:
            raise ValueError(f"{who}: {field!r} must hold {expected}, got {wrong[0]!r} among {rec[field]}")
    return rec


def own_baseline_key(store: ResultStore, cfg, baseline: str, rounds: int, participants=None,
                     device: str = "cpu") -> tuple:
    """The store, key and backend of a baseline of your own (:func:`own_record`): ``(store, config,
    backend)``, as :func:`baseline_key` for the built-in ones. The key holds ``baseline``'s path and the hash of its
    module's source (:func:`fedlib.lab.own_components.load_own`), the config, the rounds, the participants ``[R, K]``
    bools (or None: all clients) and the split engine's backend where it is not the loop; ``config["baseline"]``
    is ``{"path", "code"}``.

    Raises:
        ValueError / ParameterTypeError: ``baseline`` refused by :func:`check_baseline` (one line naming it)."""
    check_baseline(baseline, "method")
    _, code = load_own(baseline, "method", METHODS)
    config = dict(kind="dtfl_own_baseline", baseline={"path": baseline, "code": code}, **cfg.to_dict(),
                  rounds=rounds, participants=None if participants is None else np.asarray(participants).astype(int).tolist(),
                  **dataset_key(cfg.dataset))
    return keyed_by_backend(store, config, device)


def own_record(baseline: str, cfg, data: TensorDataset, rounds: int, participants, device: str, backend: str) -> dict:
    """The record of the baseline of your own ``baseline`` = ``"package.module:function"``, checked by
    :func:`check_record`, with its ``method`` (the path) and the data's ``data_source``: what
    :func:`own_baseline_key`'s key stores. Its function ``fn(cfg, data, rounds, participants, device, backend)`` is
    called with what the built-in baselines are computed from (:func:`fedlib.dtfl.baselines.baseline_record`):
    ``cfg`` the setting's :class:`fedlib.dtfl.DtflConfig` (model, clients, batch, Adam lr, partition, seed),
    ``data`` the :class:`fedlib.data.TensorDataset` (``cfg``'s subsets not yet applied), ``rounds`` = R,
    ``participants`` ``[R, K]`` bools or None (all clients), ``device`` and the split engine's ``backend``
    (``"loop"`` / ``"stacked"``); it returns a record as :func:`fedlib.dtfl.run_baseline` does (built from the public
    ``fedlib.dtfl`` functions, e.g. ``run_baseline``, ``run_engine``). Its system is that of the same setting
    (:func:`baseline_system`), charged as a built-in baseline (the notebooks: FedAvg's; the time model never enters
    the record); the key holds its path and its module's source, so an edit re-keys its records only.

    Raises:
        ValueError / ParameterTypeError: as :func:`check_record`, after the run, before anything is stored."""
    fn, _ = load_own(baseline, "method", METHODS)
    rec = fn(cfg, data, rounds, None if participants is None else participants.copy(), device, backend)
    return dict(check_record(baseline, rec, rounds), method=baseline, data_source=data.source)


def eval_interval(rounds: int, evals: int) -> int:
    """Rounds between evaluations so that a run of ``rounds`` rounds is evaluated about ``evals`` times:
    max(1, rounds // evals) (Table 4: every K gets as many evaluations as Tables 1-3's 12-round runs).

    Raises:
        ValueError / ParameterTypeError: ``rounds`` or ``evals`` not an integer >= 1.
    """
    return max(1, check_int("rounds", rounds, 1) // check_int("evals", evals, 1))


def reductions(rows: list[dict]) -> list[dict]:
    """DTFL's time saving against each baseline per (setting, model, num_clients, fraction, case, seed): rows with
    ``baseline``, ``ratio`` (baseline's time to target / DTFL's) and ``reduction`` (1 − DTFL's / baseline's, the
    paper's "reduces the training time by 80 %"); None where either did not reach the target (or reached it at
    round 0, before any training)."""
    out = []
    names = ("setting", "model", "num_clients", "fraction", "case", "seed")
    keys = {tuple(r.get(n) for n in names) for r in rows}
    for key in sorted(keys, key=str):
        group = [r for r in rows if tuple(r.get(n) for n in names) == key]
        sel = {r["method"]: r for r in group}
        if len(sel) < len(group):
            raise ValueError(f"rows hold several runs of one method for {dict(zip(names, key))}")
        d = sel.get("dtfl", {}).get("time_to_target_s")
        for m, r in sel.items():
            if m == "dtfl":
                continue
            b = r["time_to_target_s"]
            ok = d is not None and b is not None and d > 0 and b > 0      # 0: the target held before training
            out.append(dict(zip(names, key), baseline=m,
                            dtfl_s=d, baseline_s=b, ratio=b / d if ok else None, reduction=1 - d / b if ok else None))
    return out


def parse_runs(runs: list) -> list[tuple[str, str]]:
    """``["resnet20/iid", "resnet56/noniid", ...]`` -> ``[(model, setting), ...]``.

    Raises:
        ValueError: an entry not ``<model>/<setting>`` with a DTFL model and ``iid`` / ``noniid``."""
    runs = check_list("runs", runs, distinct=True)
    out = []
    for r in runs:
        parts = r.split("/") if isinstance(r, str) else []
        if len(parts) != 2:
            raise ValueError(f"runs entries must be '<model>/<setting>' (e.g. 'resnet20/iid'), got {r!r}")
        out.append((check_choice("runs model", parts[0], ("resnet20", "resnet38", "resnet56", "resnet110")),
                    check_choice("runs setting", parts[1], ("iid", "noniid"))))
    return out


def rounds_for(client_rounds: int, num_clients: int, fraction: float) -> int:
    """Rounds that give ``client_rounds`` client epochs when max(1, round(fraction·K)) clients train per round
    (Table 4: the same training work for every K). Raises ``ValueError`` naming a bad value."""
    check_int("client_rounds", client_rounds, 1)
    check_int("num_clients", num_clients, 1)
    check_float("fraction", fraction, 0, 1, low_open=True)
    per = max(1, int(round(fraction * num_clients)))
    return max(1, -(-client_rounds // per))


def scaling_rounds(clients_list: list, rounds: int, client_rounds: int, fraction: float, samples_per_client: int,
                   train_size: int) -> tuple[dict, str]:
    """Table 4's parameters taken as a whole: the rounds of each K, ``{K: R}``, and a line saying which rule gave
    them (``rounds`` when it is not 0, so ``client_rounds`` is then unused; else :func:`rounds_for`).

    Args:
        clients_list: the K values (distinct ints >= 1). rounds: R for every K, or 0. client_rounds: client
            epochs per run when ``rounds`` is 0. fraction: clients sampled per round, (0, 1].
        samples_per_client: training samples per client; the run of K uses the first samples_per_client·K.
        train_size: training samples the data holds.

    Raises:
        ValueError / ParameterTypeError: a value outside its range, or samples_per_client·max(K) above
            ``train_size`` (naming both parameters).
    """
    ks = check_list("clients_list", clients_list, lambda k, v: check_int(k, v, 1), distinct=True)
    check_int("rounds", rounds, 0)
    check_int("client_rounds", client_rounds, 1)
    check_float("fraction", fraction, 0, 1, low_open=True)
    check_int("samples_per_client", samples_per_client, 1)
    if samples_per_client * max(ks) > train_size:
        raise ValueError(f"samples_per_client x K = {samples_per_client} x {max(ks)} = {samples_per_client * max(ks)} "
                         f"training samples for K = {max(ks)} of clients_list, but the data holds {train_size}: lower "
                         "samples_per_client or the largest K")
    if rounds:
        return {k: rounds for k in ks}, (f"rounds = {rounds} for every K (client_rounds = {client_rounds} is not "
                                         "used while rounds is not 0)")
    return ({k: rounds_for(client_rounds, k, fraction) for k in ks},
            f"rounds from client_rounds = {client_rounds} client epochs at fraction {fraction:g} (rounds = 0)")


def check_methods(methods: list, allowed: tuple = METHODS, own: bool = False) -> list:
    """``methods`` of a comparison: a non-empty list of distinct names of ``allowed`` (default :data:`METHODS`),
    and with ``own`` also baselines of your own by import path ``"package.module:function"`` (each checked by
    :func:`check_baseline` as ``methods[i]``: it imports now and takes the baselines' arguments).

    Raises:
        ValueError / ParameterTypeError: one line naming ``methods[i]`` and the allowed names, or the path."""
    def one(key, value):
        if own and is_path(value):
            check_baseline(value, key)
            return value
        return check_choice(key, value, allowed)
    return check_list("methods", methods, one, distinct=True)
