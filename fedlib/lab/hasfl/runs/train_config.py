"""One HASFL training run (Figs. 2a, 3a, 5, 6, 9, 10, 11): its result-store key (:func:`run_config`), its
extension past the cap (:func:`extension_config`), HASFL's latency clock applied to the cached record
(:func:`hasfl_clock`, :func:`with_clock`, :func:`train`) and its metrics row (:func:`summary_row`). The choices
(run length, convergence, extension, clock) are in :mod:`fedlib.lab.hasfl.runs.training`'s docstring; the settings are its
:class:`~fedlib.lab.hasfl.runs.training.TrainSettings`.
"""
from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np

from fedlib.lab.store import ResultStore
from fedlib.data import TensorDataset
from fedlib.split import time_to_target
from fedlib.hasfl.bound.latency import round_latency
from fedlib.hasfl.bound.problem import Problem
from fedlib.lab.hasfl.runs.train_run import train_record
from fedlib.lab.hasfl.runs.training import TrainSettings


# --- the clock ---------------------------------------------------------------------------------------------------

def hasfl_clock(problem: Problem):
    """``clock(round, b, cuts, aggregated) -> s``: T_S (eq. 38) of the decision, plus T_A (eq. 39) on
    aggregation rounds, on ``problem``'s system and profile (:func:`fedlib.hasfl.round_latency`)."""

    def clock(_round, b, cuts, aggregated):
        lat = round_latency(problem.profile, b, cuts, problem.devices, problem.servers)
        return float(lat["T_S"] + (lat["T_A"] if aggregated else 0.0))
    return clock


# --- one training run --------------------------------------------------------------------------------------------

def run_config(s: TrainSettings, setting: str, decision: dict, seed: int, num_train: int) -> dict:
    """The result-store key of one training run: the settings that training uses (the pilot fields and the
    bound's ``gamma``, ``constants``, ``eps_mode``, ``eps_factor`` dropped: they shape only the decision, whose b
    and cuts are in the key, so a run never depends on the constants mode), the data setting (``iid`` /
    ``noniid``), the decision's b and cuts, the seed and the rounds."""
    n = len(decision["b"])
    rounds = max(s.min_rounds, math.ceil(s.epochs * num_train / sum(decision["b"])))
    if s.max_rounds:
        rounds = min(rounds, s.max_rounds)
    drop = ("pilot_", "num_batches", "power_iters", "min_rounds", "max_rounds", "gamma", "constants", "eps_",
            "extend_")
    keep = {k: v for k, v in asdict(s).items() if not k.startswith(drop)}
    return dict(kind="hasfl_train", **keep, setting=setting, num_devices=n, b=list(decision["b"]),
                cuts=list(decision["cuts"]), rounds=rounds, eval_every=max(1, rounds // s.evals), seed=seed)


def extension_config(s: TrainSettings, config: dict, num_train: int) -> dict | None:
    """The run config that continues ``config`` (:func:`run_config` of ``s``) past its cap (module docstring,
    "Extension"): the same run with ``epochs`` = ``s.extend_epochs`` and its rounds (clamped as
    :func:`run_config` clamps), ``eval_every`` unchanged; None when ``s.extend_epochs`` is 0 or the clamp leaves
    no more rounds."""
    if not s.extend_epochs:
        return None
    rounds = max(s.min_rounds, math.ceil(s.extend_epochs * num_train / sum(config["b"])))
    if s.max_rounds:
        rounds = min(rounds, s.max_rounds)
    return dict(config, epochs=s.extend_epochs, rounds=rounds) if rounds > config["rounds"] else None


def needs_extension(record: dict, chance: float) -> bool:
    """True when a :func:`fedlib.lab.hasfl.runs.train_run.train_record` has no converged point although one of its test
    accuracies reached twice ``chance`` (module docstring, "Extension")."""
    return record["converged_index"] is None and max(record["test_acc"]) >= 2 * chance


def with_clock(record: dict, problem: Problem) -> dict:
    """``record`` (:func:`fedlib.lab.hasfl.runs.train_run.train_record`) with ``sim_s`` (simulated s at each evaluation)
    and ``converged_time_s`` on ``problem``'s clock (:func:`hasfl_clock`), summed round by round in the engine's
    order (HASFL's b and cuts stay fixed through a run): the same floats as a clock inside the run."""
    clock, cfg = hasfl_clock(problem), record["config"]
    b, cuts, interval = list(cfg["batch_sizes"]), list(cfg["cuts"]), cfg["interval"]
    sim, sim_s, r = 0.0, [], 0
    for target in record["round"]:
        while r < target:
            r += 1
            sim += float(clock(r, b, cuts, r % interval == 0))
        sim_s.append(sim)
    k = record["converged_index"]
    return dict(record, sim_s=sim_s, converged_time_s=None if k is None else sim_s[k])


def train(store: ResultStore, config: dict, problem: Problem, data: TensorDataset, device: str = "auto",
          extend: dict | None = None) -> dict:
    """Train one :func:`run_config` (:func:`fedlib.lab.hasfl.runs.train_run.train_record`: cached beside
    ``store`` under the training code alone, a rerun is a cache hit, a record of either backend is read; on CUDA
    a missing run trains on the stacked backend) and charge it on ``problem``'s clock (:func:`with_clock`).
    With ``extend`` (:func:`extension_config` of ``config``), a run that :func:`needs_extension` is replaced by
    that longer run (trained from the start, cached likewise).

    Returns:
        :func:`fedlib.split.run_split`'s record (per evaluation: round, epoch, sim_s, test_acc, test_loss,
        train_loss, elapsed_s) plus ``converged_index`` / ``converged_time_s`` / ``converged_acc`` (None when
        the rule never fires), ``test_samples``, ``elapsed_s`` (the whole run, s) and ``extended_from_epochs``
        (``config``'s epochs when the record is the extension, else None; then ``capped_elapsed_s`` is the
        capped run's wall time, s).
    """
    record = train_record(store, config, data, device)
    if extend is not None and needs_extension(record, 1 / data.num_classes):
        record = dict(train_record(store, extend, data, device), extended_from_epochs=config["epochs"],
                      capped_elapsed_s=record["elapsed_s"])
    else:
        record = dict(record, extended_from_epochs=None)
    return with_clock(record, problem)


def summary_row(record: dict, decision: dict, target_acc: float, **labels) -> dict:
    """One metrics row: ``labels`` (method, model, setting, N, figure tags...) + the decision summary and
    ``converged_time_s``, ``converged_acc``, ``target_acc``, ``time_to_target_s`` (simulated s, None if not
    reached), ``epochs_to_target``, ``final_test_acc``, ``best_test_acc``, ``rounds``, ``sim_s`` (whole run)."""
    return dict(labels, b_mean=float(np.mean(decision["b"])), b_min=min(decision["b"]), b_max=max(decision["b"]),
                cut_min=min(decision["cuts"]), cut_max=max(decision["cuts"]), theta_pred_s=decision["theta"],
                converged_time_s=record["converged_time_s"], converged_acc=record["converged_acc"],
                target_acc=target_acc, time_to_target_s=time_to_target(record, target_acc),
                epochs_to_target=time_to_target(record, target_acc, key="epoch"),
                final_test_acc=record["test_acc"][-1], best_test_acc=max(record["test_acc"]),
                rounds=record["round"][-1], sim_s=record["sim_s"][-1], seed=record["config"]["seed"],
                extended_from_epochs=record.get("extended_from_epochs"))
