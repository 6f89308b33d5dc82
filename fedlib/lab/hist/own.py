"""A client partition of your own against the paper's setting (``hist_your_method``): the runs, one comparison row
per setting and N, and the sentences of the notebook's "What it shows", computed from the rows.

The runs are those of Fig. 2 (``hist_1_experiments``' ``fig2_configs``) for each setting: HIST and
HFedAvg at every N, each given the global rounds that spend the same per-client budget, so a built-in setting's
runs are the committed records of ``hist_1_experiments`` (cache hits) and only the partition's runs train.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from fedlib.core.validate import check_float, check_int, check_list
from fedlib.hist.config import METHODS, HistConfig, comm_per_round, rounds_for_budget
from fedlib.lab.hist.claims import ACC_RESOLUTION
from fedlib.lab.story import markdown

__all__ = ["partition_configs", "compare", "what_it_shows"]


def partition_configs(settings: Sequence[str], num_cells: Sequence[int], H: int, E: int, comm_budget_L0: float,
                      seeds: Sequence[int] = (0,), **common) -> list[HistConfig]:
    """HIST and HFedAvg at every setting (a built-in name or a partition's import path ``"module:fn"``), N and
    seed, each with the global rounds that spend ``comm_budget_L0`` per client (as Fig. 2's runs).

    Raises:
        ValueError: empty or repeated ``settings``, ``num_cells`` or ``seeds``; ``comm_budget_L0`` below one global
            round of HFedAvg; a config :class:`HistConfig` refuses (naming its field).
    """
    settings = check_list("settings", settings, lambda k, v: v, distinct=True)
    num_cells = check_list("num_cells", num_cells, lambda k, v: check_int(k, v, 1), distinct=True)
    seeds = check_list("seeds", seeds, lambda k, v: check_int(k, v, 0), distinct=True)
    check_int("H", H, 1)
    check_int("E", E, 1)
    check_float("comm_budget_L0", comm_budget_L0, 0, low_open=True)
    one_round = max(comm_per_round(m, n, num_clients=n, H=H, E=E)["client"] for m in METHODS for n in num_cells)
    if comm_budget_L0 < one_round:
        raise ValueError(f"comm_budget_L0 = {comm_budget_L0:g} is below one global round of HFedAvg ({one_round:g} L0 "
                         f"per client at E/H = {E}/{H}): give at least {one_round:g}")
    return [HistConfig(method=m, setting=s, num_cells=n, H=H, E=E, seed=sd,
                       global_rounds=rounds_for_budget(m, n, H, E, comm_budget_L0), **common)
            for s in settings for n in num_cells for m in METHODS for sd in seeds]


def compare(rows: list[dict]) -> list[dict]:
    """One row per setting and N from :func:`fedlib.lab.hist.summarize`'s rows (means over the seeds): HIST's and
    HFedAvg's final test accuracy, HIST's lead in points, each one's communication to the target (None where a
    seed misses it) and their ratio HFedAvg / HIST."""
    out = []
    for setting in dict.fromkeys(r["setting"] for r in rows):
        for n in sorted({r["N"] for r in rows if r["setting"] == setting}):
            by = {m: [r for r in rows if r["setting"] == setting and r["N"] == n and r["method"] == m]
                  for m in METHODS}
            if not all(by.values()):
                continue
            acc = {m: float(np.mean([r["final_test_acc"] for r in g])) for m, g in by.items()}
            comm = {m: (None if any(r["comm_to_target"] is None for r in g)
                        else float(np.mean([r["comm_to_target"] for r in g]))) for m, g in by.items()}
            out.append({"setting": setting, "N": n, "seeds": len(by["hist"]), "hist_acc": acc["hist"],
                        "hfedavg_acc": acc["hfedavg"], "lead_points": 100 * (acc["hist"] - acc["hfedavg"]),
                        "hist_comm": comm["hist"], "hfedavg_comm": comm["hfedavg"],
                        "comm_ratio": (comm["hfedavg"] / comm["hist"]
                                       if None not in comm.values() else None)})
    return out


def _range(values: list[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return format(lo, fmt) if f"{lo:{fmt}}" == f"{hi:{fmt}}" else f"{lo:{fmt}} to {hi:{fmt}}"


def what_it_shows(comparison: list[dict], names: dict[str, str], target_acc: float, budget_L0: float):
    """The notebook's findings, one bullet per setting and one comparing them, every number from ``comparison``
    (:func:`compare`); ``names`` maps a setting to the words the text uses for it. Returns Markdown."""
    check_float("target_acc", target_acc, 0, 1, low_open=True)
    lines, leads = [], {}
    for setting in dict.fromkeys(c["setting"] for c in comparison):
        sel = [c for c in comparison if c["setting"] == setting]
        lead = [c["lead_points"] for c in sel]
        leads[setting] = float(np.mean(lead))
        ns = ", ".join(str(c["N"]) for c in sel)
        above = sum(c["lead_points"] > 0 for c in sel)
        text = (f"- **{names.get(setting, setting)}** (N = {ns}): HIST ends at "
                f"{_range([100 * c['hist_acc'] for c in sel], '.1f')} %, HFedAvg at "
                f"{_range([100 * c['hfedavg_acc'] for c in sel], '.1f')} % after {budget_L0:g} L0 per client; HIST "
                f"is ahead at {above} of {len(sel)} N by {_range(lead, '+.2f')} points.")
        ratios = [c["comm_ratio"] for c in sel if c["comm_ratio"] is not None]
        if ratios:
            text += (f" To reach {100 * target_acc:g} % HFedAvg needs {_range(ratios, '.1f')} times HIST's "
                     f"communication (at the N where both reach it).")
        for m, k in (("HIST", "hist_comm"), ("HFedAvg", "hfedavg_comm")):
            missed = [str(c["N"]) for c in sel if c[k] is None]
            if missed:
                text += (f" {m} does not reach {100 * target_acc:g} % within the budget at N = "
                         f"{', '.join(missed)}.")
        lines.append(text)
    if len(leads) == 2:
        (a, la), (b, lb) = leads.items()
        lines.append(f"- HIST's mean lead over the N is {la:+.2f} points under {names.get(a, a)} and {lb:+.2f} points "
                     f"under {names.get(b, b)}: a change of {lb - la:+.2f} points (an accuracy on the 10,000 test "
                     f"images is resolved to about {ACC_RESOLUTION} points near 75 %).")
    return markdown("\n".join(lines))
