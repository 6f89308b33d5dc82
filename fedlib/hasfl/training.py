"""One HASFL training run: a decision's batch sizes and cut layers trained by split learning on the shared engine
(:func:`fedlib.split.run_split`), and the paper's convergence rule on its test accuracies.

A run is fixed by its config (``fedlib.lab.hasfl.runs.training.run_config`` builds it): the model, data, optimiser,
every device's batch size ``b`` and cut layer, the aggregation interval, the rounds and the seed. How the decision
was reached (the bound, its constants, the optimiser) and the latency model that charges the run (applied to the
record afterwards) are not part of it.
"""
from __future__ import annotations

import time
from dataclasses import replace

from ..data import TensorDataset
from ..split import SplitConfig, converged_at, run_split


def split_config(config: dict) -> SplitConfig:
    """The engine's :class:`fedlib.split.SplitConfig` of a run config (``setting`` ``iid`` or label ``shards``)."""
    part = "iid" if config["setting"] == "iid" else "shards"
    return SplitConfig(model=config["model"], width=config["width"], num_devices=config["num_devices"],
                       batch_sizes=tuple(config["b"]), cuts=tuple(config["cuts"]), interval=config["interval"],
                       lr=config["lr"], optimizer=config["optimizer"], momentum=config["momentum"],
                       rounds=config["rounds"], eval_every=config["eval_every"], partition=part,
                       shards_per_client=config["shards_per_client"], dataset=config["dataset"], seed=config["seed"])


def converged_index(accs: list[float], chance: float) -> int | None:
    """The paper's convergence rule (:func:`fedlib.split.converged_at`) on a run's test accuracies (fractions),
    looked at from the first evaluation at or above twice ``chance`` (the choice is written in
    ``fedlib.lab.hasfl.runs.training``, "Convergence"); None if it never fires."""
    start = next((i for i, a in enumerate(accs) if a >= 2 * chance), len(accs))
    return converged_at(accs, start=start)


def train_run(config: dict, data: TensorDataset, device: str = "auto", backend: str = "loop") -> dict:
    """Train one run config on ``data`` (its test set cut to ``config["test_subset"]`` images when non-zero; with
    ``config["stop_at_convergence"]`` the run stops at the first evaluation where :func:`converged_index` fires), on
    the engine's ``backend`` (``"loop"``: :func:`fedlib.split.run_split`; a stacked variant:
    :func:`fedlib.split.run_split` with ``backend``).

    Returns:
        the engine's record without ``sim_s`` (per evaluation: round, epoch, test_acc, test_loss, train_loss,
        elapsed_s) plus ``converged_index`` and ``converged_acc`` (None when the rule never fires),
        ``test_samples``, ``data_source`` and ``elapsed_s`` (the whole run, s).
    """
    t0 = time.perf_counter()
    ds = data
    if config["test_subset"]:
        ds = replace(data, x_test=data.x_test[:config["test_subset"]], y_test=data.y_test[:config["test_subset"]])
    chance = 1 / data.num_classes
    stop = ((lambda r: converged_index(r["test_acc"], chance) is not None)
            if config.get("stop_at_convergence") else None)
    rec = run_split(split_config(config), ds, device, stop=stop, backend=backend)
    rec.pop("sim_s")
    k = converged_index(rec["test_acc"], chance)
    rec.update(converged_index=k, converged_acc=None if k is None else max(rec["test_acc"][:k + 1]),
               test_samples=len(ds.y_test), data_source=data.source, elapsed_s=time.perf_counter() - t0)
    return rec
