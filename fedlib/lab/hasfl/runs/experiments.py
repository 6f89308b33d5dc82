"""HASFL system-model experiments used by the notebooks: cached pilot constants and [24]'s β on a federated pilot,
Table I problems and the strategy comparison (``hasfl_3_optimiser`` sweeps it over Table I's ranges and N: the
system-model side of HASFL Figs. 7, 8, 9)."""
from __future__ import annotations

import functools

import time

import numpy as np

from fedlib.lab.datasets import check_dataset_name, dataset_key
from fedlib.lab.own_components import load_own
from fedlib.lab.store import RECORD_CODE, ResultStore
from fedlib.core.components import is_path
from fedlib.core import numpy_rng
from fedlib.core.validate import check_float, check_int
from fedlib.data import DATASET_SHAPES, resolve_dataset as _resolve
from fedlib.split import model_profile, sample_system
from fedlib.hasfl.bound.beta24 import beta24_record
from fedlib.hasfl.bound.estimate import constants_record
from fedlib.hasfl.bound.latency import table_i
from fedlib.hasfl.bound.problem import Problem, eps_with_slack
from fedlib.hasfl.optimiser.strategies import STRATEGIES, strategy
from fedlib.hasfl.bound.theory import HasflConstants

#: the paper's dataset of each model (HASFL Sec. VII-A)
PAPER_DATASET = {"vgg16": "cifar10", "resnet18": "cifar100"}


def resolve_dataset(dataset: str, model: str) -> str:
    """``"auto"`` -> the paper's dataset for ``model`` (:data:`PAPER_DATASET`) when it is on disk, else
    ``"fashion-mnist"``; any other name of :data:`fedlib.data.DATASET_SHAPES` is returned unchanged
    (:func:`fedlib.data.resolve_dataset`); a dataset of your own by import path ``"module:function"`` is loaded,
    checked and registered now (:func:`fedlib.lab.datasets.use_dataset`). Raises ``ValueError`` for an unknown
    model or dataset, or a dataset of your own refused (naming it)."""
    if model not in PAPER_DATASET:
        raise ValueError(f"model must be one of {sorted(PAPER_DATASET)}, got {model!r}")
    if is_path(dataset):
        return check_dataset_name(dataset)
    return _resolve(dataset, PAPER_DATASET[model])


def dataset_note(dataset: str, model: str) -> str:
    """Provenance line for figures: which data the constants come from, and why when it is not the paper's."""
    paper = PAPER_DATASET.get(model)
    if dataset == paper:
        return f"constants from {dataset} (the paper's dataset)"
    return f"constants from {dataset} ({paper} is not available here)"


def constants_config(model: str, dataset: str, pilot_steps: int, lr: float, batch_size: int, num_batches: int,
                     power_iters: int, seed: int, width: float = 1.0, interval: int = 15) -> dict:
    """The result-store key of a pilot estimation of HASFL's constants (``width``: the model's channel
    multiplier; constants are estimated on the model actually trained; ``interval``: the aggregation interval I
    at which [24]'s online β is taken, :func:`fedlib.hasfl.pilot_constants`)."""
    return dict(kind="hasfl_constants", model=model, dataset=dataset, pilot_steps=pilot_steps, lr=lr,
                batch_size=batch_size, num_batches=num_batches, power_iters=power_iters, seed=seed, width=width,
                interval=interval)


STORE_CODE = ("fedlib.hasfl.bound.estimate", "fedlib.hasfl.bound.beta24", "fedlib.hasfl.bound.theory", *RECORD_CODE,
              "fedlib.core.components", "fedlib.data", "fedlib.split.blocks", "fedlib.split.config", "fedlib.split.models", "fedlib.split.ops")
"""The method modules the records of HASFL's store depend on: its pilots (:func:`fedlib.hasfl.bound.estimate.
constants_record`, :func:`fedlib.hasfl.bound.beta24.beta24_record` and what they import). Editing them invalidates
the pilots, and nothing else does. Decisions (the bound, the optimiser) are computed from the pilots each time and
never stored; training records have their own code (:data:`fedlib.lab.hasfl.runs.train_run.TRAIN_CODE`)."""


def result_store(root: str | None = None) -> ResultStore:
    """The result store of HASFL's runs: keys cover the config, the seed and the source of :data:`STORE_CODE`."""
    return ResultStore(root, code=STORE_CODE)


def estimated_constants(store: ResultStore, config: dict, data=None) -> dict:
    """Pilot-estimated constants (:func:`fedlib.hasfl_theory.pilot_constants`) for ``config``
    (:func:`constants_config`), through ``store``: a rerun is a cache hit.

    The model is built from the ``model`` seed stream and trained on the real training set of ``dataset``.

    Returns:
        The stored record: ``constants`` (a :class:`HasflConstants` dict), ``per_point``, ``elapsed_s``, config.
    """
    key = {**config, **dataset_key(config["dataset"])}        # a dataset of your own: its path and source too
    return store.get_or_run(key, functools.partial(constants_record, config, data))


def beta24_config(model: str, dataset: str, setting: str, num_devices: int, shards_per_client: int, interval: int,
                  rounds: int, lr: float, batch_size: int, holding: float, seed: int, width: float) -> dict:
    """The result-store key of [24]'s β on a federated pilot (:func:`fedlib.hasfl.bound.beta24.beta24_pilot`):
    ``model`` at ``width`` on ``dataset``, ``num_devices`` nodes holding the training runs' partition of
    ``setting`` (``iid`` / ``noniid``: ``shards_per_client`` label shards each) of ``seed``, ``rounds`` rounds of
    ``interval`` local SGD steps (``lr``, ``batch_size``), moving average with holding parameter ``holding``. The
    values are a :class:`~fedlib.lab.hasfl.runs.training.TrainSettings`' and a plan's, checked there.
    """
    return dict(kind="hasfl_beta24", model=model, dataset=dataset, setting=setting, num_devices=num_devices,
                shards_per_client=shards_per_client, interval=interval, rounds=rounds, lr=lr, batch_size=batch_size,
                holding=holding, seed=seed, width=width)


def estimated_beta24(store: ResultStore, config: dict, data=None) -> dict:
    """[24]'s β (:func:`fedlib.hasfl.bound.beta24.beta24_pilot`) for ``config`` (:func:`beta24_config`), through
    ``store``: a rerun is a cache hit.

    The model is built from the ``model`` seed stream (the initial weights of :func:`estimated_constants`' pilot
    and of the training runs); the nodes' data is the training runs' device partition of the ``setting``
    (:func:`fedlib.data.partition.split` on the ``data`` stream of the seed, as :func:`fedlib.split.records.client_partition`).

    Returns:
        The stored record: :func:`fedlib.hasfl.bound.beta24.beta24_pilot`'s dict (``beta`` decides), ``config``,
        ``fedlib_version``, ``data_source``.
    """
    key = {**config, **dataset_key(config["dataset"])}        # a dataset of your own: its path and source too
    return store.get_or_run(key, functools.partial(beta24_record, config, data))


def make_problem(model: str, dataset: str, constants: HasflConstants, num_devices: int, seed: int, gamma: float,
                 interval: int, eps_slack: float, scale: dict | None = None) -> Problem:
    """Problem (41) for ``model`` at ``dataset``'s input shape on a system drawn from Table I (``system`` stream).

    Args:
        scale: optional multipliers of Table I's ranges, keys ``device_flops``, ``server_flops``, ``rate_up``,
            ``rate_servers`` (Figs. 7-8's x-axes).
        eps_slack: ε = (1 + slack)·floor (:func:`fedlib.hasfl_opt.eps_with_slack`).
    """
    ch, size, classes = DATASET_SHAPES[dataset]
    devices, servers = sample_system(table_i(num_devices, scale), numpy_rng(seed, "system"))
    profile = model_profile(model, ch, size, classes)
    return Problem(profile, devices, servers, constants, gamma, eps_with_slack(constants, gamma, interval,
                                                                               num_devices, eps_slack), interval)


def compare_strategies(problem: Problem, num_draws: int, seed: int, strategies=STRATEGIES) -> list[dict]:
    """Θ of every strategy on ``problem``; random strategies are drawn ``num_draws`` times (seeded).

    ``strategies``: names of :data:`STRATEGIES` or a strategy of your own by import path ``"package.module:fn"``
    (:func:`fedlib.hasfl.optimiser.strategies.own_strategy`, drawn ``num_draws`` times too, since it may be random;
    its module imported again when edited since its last load, :func:`fedlib.lab.own_components.load_own`, so that a
    live kernel compares the source on disk, as every other route of a component of your own does);
    draw k of each comes from the ``system/<name>`` stream of ``seed``, so the first draw is the decision
    :func:`fedlib.lab.hasfl.runs.training.decide` trains.

    Returns:
        One row per strategy: ``method``, ``theta`` (mean over feasible draws, s), ``theta_std``, ``infeasible``
        (draws with Θ = inf), ``solve_s``, ``N``, and for HASFL its decision (``b``, ``cuts``).
    """
    rows = []
    for name in strategies:
        if is_path(name):          # imported again if edited since its last load: Θ of the source on disk now
            load_own(name, "strategy", STRATEGIES)
        t0 = time.perf_counter()
        draws = 1 if name == "HASFL" else num_draws
        rng = numpy_rng(seed, f"system/{name}")
        decisions = [strategy(problem, name, rng) for _ in range(draws)]
        vals = np.array([d.theta for d in decisions])
        ok = vals[np.isfinite(vals)]
        row = {"method": name, "N": problem.num_devices, "theta": float(ok.mean()) if len(ok) else None,
               "theta_std": float(ok.std()) if len(ok) else None, "infeasible": int((~np.isfinite(vals)).sum()),
               "solve_s": (time.perf_counter() - t0) / draws}
        if name == "HASFL":
            row.update(b=decisions[0].b.tolist(), cuts=decisions[0].cuts.tolist(), bcd_iters=decisions[0].info["bcd_iters"])
        rows.append(row)
    return rows


def check_sensitivity(factors, device_counts) -> tuple[list, list]:
    """The sweep's lists, before any work: ``factors`` distinct finite numbers > 0 (multipliers of Table I's
    ranges), ``device_counts`` distinct ints >= 1. Returns both lists.

    Raises:
        ValueError / ParameterTypeError: naming ``factors[i]`` / ``device_counts[i]``.
    """
    from fedlib.core.validate import check_list
    return (check_list("factors", factors, lambda k, v: check_float(k, v, 0, low_open=True), distinct=True),
            check_list("device_counts", device_counts, lambda k, v: check_int(k, v, 1), distinct=True))
