"""HASFL's method styles (one colour and marker per method in every figure) and the display cells of the
notebooks' run and claim tables (a run that never converged says so). Used by :mod:`.train_plots`,
:mod:`.plots` and the HASFL notebooks' figure cells; computes no record."""
from __future__ import annotations

import math

import numpy as np

from matplotlib import colormaps
from matplotlib.colors import to_rgba

from fedlib.lab.plotting import colour


METHOD_ORDER = ("HASFL", "RBS+HAMS", "HABS+RMS", "RBS+RMS", "RBS+RHAMS", "HABS+RMS(C1)", "RBS+RMS(C1)", "HASFL-max",
                "HASFL-calibrated")
"""The methods in one order, so that a method keeps its colour and marker in every figure (:func:`method_style`)."""

MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")

COMPONENT_STYLES = {"HABS": ("tab:cyan", "D"), "HAMS": ("tab:cyan", "v"), "HABS-calibrated": ("k", "P"),
                    "HAMS-calibrated": ("k", "X")}
"""HASFL's blocks alone (Figs. 10, 11): tab10's last colour and black, apart from every method of
:data:`METHOD_ORDER` (which take tab10's first nine)."""

OWN_PREFIX = "yours: "
"""The label of a strategy of your own in a figure (``"yours: my_strategy:compute_proportional"``): the paper-figure
notebook relabels its runs so, and :func:`method_style` draws such a label in :data:`OWN_STYLES`."""

OWN_STYLES = (("k", "*"), ("darkgoldenrod", "P"), ("magenta", "X"))
"""Strategies of your own (:data:`OWN_PREFIX`): black, dark golden, magenta with filled star, plus, cross markers, apart
from every method of :data:`METHOD_ORDER` (tab10's first nine; HABS / HAMS-calibrated's black is only in Figs. 10
and 11, where no strategy of yours runs)."""


def method_style(label: str, others=()) -> dict:
    """The one style (``color`` RGBA, ``marker``, ``mfc``) of ``label`` in every HASFL figure (Figs. 2a, 3a, 5-11,
    the strategies and sensitivity figures): a method of :data:`METHOD_ORDER` tab10's colour and a filled marker at
    its position there, HASFL's blocks :data:`COMPONENT_STYLES`, a strategy of your own (a label starting with
    :data:`OWN_PREFIX`) :data:`OWN_STYLES` by its place among ``others``' own labels; anything else (a fixed b /
    cut configuration, an unlisted method) its position in ``others`` (yours left out) on viridis with a hollow
    marker, apart from the methods' styles."""
    if label in METHOD_ORDER:
        i = METHOD_ORDER.index(label)
        return {"color": to_rgba(colour(i)), "marker": MARKERS[i % len(MARKERS)], "mfc": None}
    if label in COMPONENT_STYLES:
        c, m = COMPONENT_STYLES[label]
        return {"color": to_rgba(c), "marker": m, "mfc": None}
    if label.startswith(OWN_PREFIX):                            # yours: by its place among the figure's own labels
        own = [o for o in dict.fromkeys(others) if o.startswith(OWN_PREFIX)]
        c, m = OWN_STYLES[(own.index(label) if label in own else len(own)) % len(OWN_STYLES)]
        return {"color": to_rgba(c), "marker": m, "mfc": None}
    others = [o for o in dict.fromkeys(others) if not o.startswith(OWN_PREFIX)]   # yours do not shift these
    k = others.index(label) if label in others else len(others)
    frac = min(1.0, 0.85 * k / max(1, len(others) - 1))          # viridis' yellow end is too pale on white
    return {"color": to_rgba(colormaps["viridis"](frac)), "marker": MARKERS[k % len(MARKERS)], "mfc": "white"}


def method_styles(methods) -> dict:
    """``{method: style index}``: :data:`METHOD_ORDER`'s position, then any other method in the order given."""
    methods = list(dict.fromkeys(methods))
    extra = [m for m in methods if m not in METHOD_ORDER]
    return {m: (METHOD_ORDER.index(m) if m in METHOD_ORDER else len(METHOD_ORDER) + extra.index(m)) for m in methods}


def never_converged(rows) -> str | None:
    """How a table or a figure says that ``rows`` (one method's runs, e.g. its seeds) never met the paper's rule:
    ``"never converged (504 rounds)"`` when none of them has a ``converged_time_s`` (rounds of each seed, ``/``
    between distinct ones), ``"1 of 2 seeds never converged (504 rounds)"`` when some have one, ``None`` when every
    run converged or the rows hold no converged time at all."""
    rows = [r for r in rows if "converged_time_s" in r]
    never = [r for r in rows if r["converged_time_s"] is None]
    if not never:
        return None
    rounds = list(dict.fromkeys(r["rounds"] for r in never if r.get("rounds") is not None))
    within = f" ({' / '.join(str(n) for n in rounds)} rounds)" if rounds else ""
    who = "" if len(never) == len(rows) else f"{len(never)} of {len(rows)} seeds "
    return f"{who}never converged{within}"


def convergence_cells(rows) -> list[dict]:
    """Copies of run rows for a notebook table: a missing ``converged_time_s`` reads ``never converged (504
    rounds)`` and a missing ``converged_acc`` ``never converged``, not a bare "–" (the rows themselves, and so the
    metrics, keep None)."""
    out = []
    for r in rows:
        r = dict(r)
        if "converged_time_s" in r and r["converged_time_s"] is None:
            r["converged_time_s"] = never_converged([r])
            if r.get("converged_acc") is None:
                r["converged_acc"] = "never converged"
        out.append(r)
    return out


def _side(rows, claim: dict, name: str) -> list:
    """The runs of one side of a :func:`fedlib.lab.hasfl.runs.train_plan.claim_ratios` row: a method's runs on the
    claim's model and setting in its figure (and its seed, for a claim of one seed), or the fixed runs of
    ``"batch = 32"`` / ``"cut = 8"``."""
    fig = claim["claim"]
    sel = [r for r in rows if fig in r["figures"] and r["setting"] == claim["setting"] and r["model"] == claim["model"]
           and ("seed" not in claim or r["seed"] == claim["seed"])]        # a claim of one seed: that seed's runs
    key, eq, value = name.partition(" = ")
    if eq and key in ("batch", "cut"):
        return [r for r in sel if r["method"] == "fixed" and str(r[key]) == value]
    return [r for r in sel if r["method"] == name]


def claim_cells(claims, rows) -> list[dict]:
    """Copies of :func:`fedlib.lab.hasfl.runs.train_plan.claim_ratios` rows for a notebook table: where a side never
    converged, ``conv_ratio`` reads the bound its whole simulated time gives and who never converged (``"≥ 5.72:
    RBS+RMS never converged (504 rounds)"``; a ratio versus / method, so ≥ when ``versus`` never converged, ≤ when the
    method did not) and ``conv_acc_gain`` ``"n/a: never converged"``, not a bare "–". ``rows`` are the runs the
    claims were read from (the claims themselves, and so the metrics, keep None)."""
    def mean(vals):
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None

    out = []
    for c in claims:
        c = dict(c)
        if c.get("conv_ratio") is None:
            mine, other = _side(rows, c, c["method"]), _side(rows, c, c["versus"])
            says = [f"{name} {text}" for name, rs in ((c["method"], mine), (c["versus"], other))
                    if (text := never_converged(rs))]
            if says:
                t_m, t_o = mean(r["converged_time_s"] for r in mine), mean(r["converged_time_s"] for r in other)
                bound = ""                                 # cut towards the side it bounds: never overstated
                if t_m and t_o is None and mean(r["sim_s"] for r in other):
                    bound = f"≥ {math.floor(100 * mean(r['sim_s'] for r in other) / t_m) / 100:.2f}: "
                elif t_o and t_m is None and mean(r["sim_s"] for r in mine):
                    bound = f"≤ {math.ceil(100 * t_o / mean(r['sim_s'] for r in mine)) / 100:.2f}: "
                c["conv_ratio"] = bound + "; ".join(says)
                if c.get("conv_acc_gain") is None:
                    c["conv_acc_gain"] = "n/a: never converged"
        out.append(c)
    return out


def mean_known(vals):
    """The mean of the values that are not None (None when there are none)."""
    vals = [v for v in vals if v is not None]
    return float(np.mean(vals)) if vals else None
