"""Reading HIST's metrics for its claims (:mod:`fedlib.lab.hist.claims`): the run pairs of Figs. 2-3, the sweeps of
Fig. 4, and the per-setting, per-seed values (a seed without a value is :class:`Unjudged`, named with its reason)."""
from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

from fedlib.lab.verdicts import Censored, Unjudged

SETTINGS = {"noniid": "fully non-iid", "cell_iid": "cell-iid"}
"""Metrics' setting name -> the variant (column) it is judged in."""

FIG4_N = 3
"""The paper's Fig. 4 uses N = 3 cells."""


# --- reading the metrics --------------------------------------------------------------------------------------

def _runs(metrics: Mapping[str, Any]) -> list[dict]:
    runs = metrics["runs"]
    if not isinstance(runs, list) or not runs:
        raise KeyError("runs (no run rows)")
    return runs


def _seeds(runs: list[dict]) -> list:
    return sorted({r["seed"] for r in runs})


def fig2_pairs(metrics: Mapping[str, Any]) -> dict[str, dict[Any, dict[int, tuple[dict, dict]]]]:
    """``{setting: {seed: {N: (hist_row, hfedavg_row)}}}`` of the Figs. 2-3 runs (module docstring).

    Raises:
        KeyError: no HFedAvg row, or an HFedAvg row without its HIST counterpart."""
    runs = _runs(metrics)
    base = [r for r in runs if r["method"] == "hfedavg"]
    if not base:
        raise KeyError("runs: no HFedAvg row (Figs. 2-3)")
    out: dict = {}
    for b in base:
        twins = [r for r in runs if r["method"] == "hist" and all(r[k] == b[k] for k in ("setting", "N", "H", "E",
                                                                                          "seed"))]
        if not twins:
            raise KeyError(f"runs: no HIST row for setting {b['setting']}, N {b['N']}, seed {b['seed']}")
        h = min(twins, key=lambda r: abs(r["comm_total_L0"] - b["comm_total_L0"]))
        out.setdefault(b["setting"], {}).setdefault(b["seed"], {})[b["N"]] = (h, b)
    return out


def fig4_sweeps(metrics: Mapping[str, Any]) -> dict[str, dict[Any, dict[str, dict[int, float]]]]:
    """``{setting: {seed: {"E_over_H": {E/H: acc %}, "H": {H: acc %}}}}``: final test accuracy (percent) after the
    Fig. 4 synchronisations (module docstring).

    Raises:
        KeyError: no HFedAvg row (it fixes the Figs. 2-3 H and E) or no HIST row at N = 3."""
    runs = _runs(metrics)
    base = [r for r in runs if r["method"] == "hfedavg"]
    if not base:
        raise KeyError("runs: no HFedAvg row (it fixes the H and E around which Fig. 4 sweeps)")
    h0, e0 = base[0]["H"], base[0]["E"]
    cand = [r for r in runs if r["method"] == "hist" and r["N"] == FIG4_N]
    if not cand:
        raise KeyError(f"runs: no HIST row at N = {FIG4_N} (Fig. 4)")
    rounds = Counter(r["global_rounds"] for r in cand).most_common(1)[0][0]
    out: dict = {}
    for r in cand:
        if r["global_rounds"] != rounds:
            continue
        cell = out.setdefault(r["setting"], {}).setdefault(r["seed"], {"E_over_H": {}, "H": {}})
        if r["H"] == h0:
            cell["E_over_H"][r["E"] // r["H"]] = _acc(r)
        if r["E"] // r["H"] == e0 // h0:
            cell["H"][r["H"]] = _acc(r)
    return out


def _per_setting(by_setting: Mapping[str, Mapping[Any, Any]], value, only: tuple[str, ...] = ()) -> dict:
    """``{variant: [value(cell) per seed]}`` over the settings present (``only``: those settings alone)."""
    out = {}
    for setting, seeds in by_setting.items():
        if setting not in SETTINGS or (only and setting not in only):
            continue
        out[SETTINGS[setting]] = [_or_unjudged(value, seeds[s]) for s in sorted(seeds)]
    return out


def _or_unjudged(value, cell):
    """``value(cell)``, or :class:`Unjudged` with the reason when the seed's runs lack what it needs (that seed is
    named in the table, the other settings and seeds are still judged)."""
    try:
        return value(cell)
    except KeyError as e:
        return Unjudged(str(e.args[0]) if e.args else "a value is missing")


def _min_bounded(values: list) -> float | Censored:
    """The minimum of numbers, :class:`Censored` bounds and ``None`` (unknown either way): exact when every
    bound admits only larger values, else a bound (upper when some value may be below every known one)."""
    exact = [v for v in values if isinstance(v, (int, float))]
    lower = [v.value for v in values if isinstance(v, Censored) and v.side == "lower"]
    upper = [v.value for v in values if isinstance(v, Censored) and v.side == "upper"]
    unknown = any(v is None for v in values)
    if upper or unknown:
        ceiling = exact + upper
        if not ceiling:
            raise KeyError("comm_to_target: no run reached the target")
        return Censored(min(ceiling), "upper")
    if exact and (not lower or min(exact) <= min(lower)):
        return min(exact)
    return Censored(min(exact + lower), "lower")


def _comm_saving(hist_row: dict, base_row: dict) -> float | Censored | None:
    """HFedAvg's minus HIST's communication to the target (L0); a bound where one never reached it (it would
    need more than it spent), ``None`` where neither did."""
    h, b = hist_row["comm_to_target"], base_row["comm_to_target"]
    if h is not None and b is not None:
        return round(float(b - h), 6)
    if h is not None:
        return Censored(float(base_row["comm_total_L0"] - h), "lower")
    if b is not None:
        return Censored(float(b - hist_row["comm_total_L0"]), "upper")
    return None


def _acc(row: dict) -> float:
    return round(100 * row["final_test_acc"], 6)


def _diff(a: float, b: float) -> float:
    """``a - b`` rounded to 1e-6: a difference of one test image is exactly the margin, not a float beside it."""
    return round(a - b, 6)


def _need(cell: Mapping, keys: tuple, what: str) -> list:
    missing = [k for k in keys if k not in cell]
    if missing:
        raise KeyError(f"{what}: no run at {', '.join(map(str, missing))}")
    return [cell[k] for k in keys]
