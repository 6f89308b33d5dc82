"""A tier scheduler of your own against DTFL's and FedAvg (``dtfl_your_method``): the scheduler checked by its
import path, one comparison row per method and the sentences of the notebook's "What it shows", computed from the
rows (the three methods' simulated systems and the rounds' figure are the notebook's own cells).

A scheduler of your own is a :class:`fedlib.dtfl.TierScheduler` subclass in a module of your own, named
``"package.module:Class"``; DTFL runs with it exactly as with its own (the same clients, profiles, profile changes,
time noise and training), so the runs differ only in the tiers it assigns. FedAvg is the paper's baseline on the
same system (:func:`fedlib.lab.dtfl.compare.baseline_system`). Trained runs are those of
:func:`fedlib.lab.dtfl.compare.compare_job`: DTFL's and FedAvg's are ``dtfl_5_baselines``' records at the same
settings (cache hits where it ran), a run of yours is keyed by its tiers and its row by the scheduler's path and
source. Nothing here is a claim of the paper: :func:`what_it_shows` states numbers, no verdict.
"""
from __future__ import annotations

import numpy as np

from fedlib.dtfl import TierScheduler
from fedlib.dtfl.scheduler import SCHEDULERS
from fedlib.lab.dtfl.compare_plots import method_label
from fedlib.lab.own_components import check_own
from fedlib.lab.story import markdown

__all__ = ["check_scheduler", "compare", "what_it_shows"]


def check_scheduler(scheduler) -> str:
    """``scheduler`` if it is an import path ``"package.module:Class"`` that imports now and names a
    :class:`fedlib.dtfl.TierScheduler` subclass (overriding ``assign``); a built-in name is refused (DTFL's own
    scheduler runs anyway): :func:`fedlib.lab.own_components.check_own`.

    Raises:
        ValueError / ParameterTypeError: naming ``scheduler``, what it allows and why it failed."""
    check_own(scheduler, "scheduler", "my_scheduler:StaticTiers", tuple(SCHEDULERS), TierScheduler,
              f"DTFL's own {list(SCHEDULERS)} runs anyway")
    return scheduler


def compare(rows: list[dict], sims: dict[str, dict]) -> list[dict]:
    """One row per method (means over the seeds of the trained ``rows``, :func:`fedlib.lab.dtfl.compare.compare_job`'s
    rows): ``method``, ``mean_round_s`` (the untrained system's mean round time, s, from ``sims``), the trained
    runs' ``time_to_target_s`` (None where a seed misses the target), ``final_test_acc``, ``sim_total_s`` and
    ``time_ratio`` = time to target / DTFL's (> 1: slower than DTFL; None where either misses)."""
    out = []
    for m in dict.fromkeys(r["method"] for r in rows):
        g = [r for r in rows if r["method"] == m]
        ttt = None if any(r["time_to_target_s"] is None for r in g) else float(np.mean([r["time_to_target_s"]
                                                                                       for r in g]))
        out.append({"method": m, "mean_round_s": float(np.mean(sims[m]["round_s"])) if m in sims else None,
                    "time_to_target_s": ttt, "final_test_acc": float(np.mean([r["final_test_acc"] for r in g])),
                    "sim_total_s": float(np.mean([r["sim_total_s"] for r in g]))})
    ref = next((r["time_to_target_s"] for r in out if r["method"] == "dtfl"), None)
    for r in out:
        r["time_ratio"] = None if not ref or r["time_to_target_s"] is None else r["time_to_target_s"] / ref
    return out


def what_it_shows(comparison: list[dict], scheduler: str, target_acc: float):
    """The notebook's "What it shows": the time model's and the trained runs' numbers of ``scheduler`` against
    DTFL's own scheduler and FedAvg, as sentences computed from :func:`compare`'s rows (no verdict)."""
    by = {r["method"]: r for r in comparison}
    if not {"dtfl", scheduler} <= set(by):
        return markdown(f"No comparison: the runs hold no row of DTFL and of `{scheduler}`.")
    d, y = by["dtfl"], by[scheduler]
    lines = [f"- **Time model** (no training): a round takes {y['mean_round_s']:.3g} s on average with `{scheduler}` "
             f"against {d['mean_round_s']:.3g} s with DTFL's scheduler ({y['mean_round_s'] / d['mean_round_s']:.2f}×)"
             + (f" and {by['fedavg']['mean_round_s']:.3g} s for FedAvg." if "fedavg" in by else ".")]
    if y["time_to_target_s"] is None or d["time_to_target_s"] is None:
        missed = [f"`{m}`" if m == scheduler else method_label(m) for m in (scheduler, "dtfl")
                  if by[m]["time_to_target_s"] is None]
        lines.append(f"- **Trained**: {' and '.join(missed)} did not reach {target_acc:.0%} within the run, so the "
                     f"times to target are not compared.")
    else:
        lines.append(f"- **Trained**: `{scheduler}` reaches {target_acc:.0%} in {y['time_to_target_s']:.3g} s of "
                     f"simulated time against DTFL's {d['time_to_target_s']:.3g} s ({y['time_ratio']:.2f}× DTFL's)"
                     + (f"; FedAvg in {by['fedavg']['time_to_target_s']:.3g} s." if "fedavg" in by
                        and by["fedavg"]["time_to_target_s"] is not None else "."))
    lines.append(f"- Final accuracy: {y['final_test_acc']:.1%} with `{scheduler}`, {d['final_test_acc']:.1%} with "
                 f"DTFL's scheduler (the tiers change the client / server split of the model, so the runs' "
                 f"accuracies differ too).")
    return markdown("\n".join(lines))
