"""HASFL's training figures (Figs. 2a, 3a, 5, 6, 9, 10, 11) from :func:`fedlib.hasfl.runs.train_plan.run_plan`
entries. Curves of several seeds are drawn as their mean with a min-max band (interpolated on a common x grid)."""
from __future__ import annotations

import math
import textwrap

import numpy as np

from matplotlib import colormaps
from matplotlib.colors import to_rgba
from matplotlib.patches import Patch
from matplotlib.transforms import ScaledTranslation

from ...plotting import colour, label_log_axis, log_floor, new_figure


METHOD_ORDER = ("HASFL", "RBS+HAMS", "HABS+RMS", "RBS+RMS", "RBS+RHAMS", "HABS+RMS(C1)", "RBS+RMS(C1)", "HASFL-max",
                "HASFL-calibrated")
"""The methods in one order, so that a method keeps its colour and marker in every figure (:func:`method_style`)."""

MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")

COMPONENT_STYLES = {"HABS": ("tab:cyan", "D"), "HAMS": ("tab:cyan", "v"), "HABS-calibrated": ("k", "P"),
                    "HAMS-calibrated": ("k", "X")}
"""HASFL's blocks alone (Figs. 10, 11): tab10's last colour and black, apart from every method of
:data:`METHOD_ORDER` (which take tab10's first nine)."""


def method_style(label: str, others=()) -> dict:
    """The one style (``color`` RGBA, ``marker``, ``mfc``) of ``label`` in every HASFL figure (Figs. 2a, 3a, 5-11,
    the strategies and sensitivity figures): a method of :data:`METHOD_ORDER` tab10's colour and a filled marker at
    its position there, HASFL's blocks :data:`COMPONENT_STYLES`; anything else (a fixed b / cut configuration, an
    unlisted method) its position in ``others`` on viridis with a hollow marker, apart from the methods' styles."""
    if label in METHOD_ORDER:
        i = METHOD_ORDER.index(label)
        return {"color": to_rgba(colour(i)), "marker": MARKERS[i % len(MARKERS)], "mfc": None}
    if label in COMPONENT_STYLES:
        c, m = COMPONENT_STYLES[label]
        return {"color": to_rgba(c), "marker": m, "mfc": None}
    others = list(dict.fromkeys(others))
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
    """The runs of one side of a :func:`fedlib.hasfl.runs.train_plan.claim_ratios` row: a method's runs on the
    claim's model and setting in its figure, or the fixed runs of ``"batch = 32"`` / ``"cut = 8"``."""
    fig = claim["claim"]
    sel = [r for r in rows if fig in r["figures"] and r["setting"] == claim["setting"] and r["model"] == claim["model"]]
    key, eq, value = name.partition(" = ")
    if eq and key in ("batch", "cut"):
        return [r for r in sel if r["method"] == "fixed" and str(r[key]) == value]
    return [r for r in sel if r["method"] == name]


def claim_cells(claims, rows) -> list[dict]:
    """Copies of :func:`fedlib.hasfl.runs.train_plan.claim_ratios` rows for a notebook table: where a side never
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


def _label(row: dict) -> str:
    if row["method"] == "fixed":
        return f"b = {row['batch']}, cut {row['cut']}"
    return row["method"]


def _groups(entries: list[dict], figure: str, **match) -> dict:
    out: dict = {}
    for e in entries:
        r = e["row"]
        if figure in r["figures"] and all(r[k] == v for k, v in match.items()):
            out.setdefault(_label(r), []).append(e)
    return out


def _others(entries: list[dict]) -> list[str]:
    """The labels of ``entries`` outside :data:`METHOD_ORDER` and :data:`COMPONENT_STYLES` (the fixed b / cut
    configurations, by b then cut), the order :func:`method_style` numbers them in: the same run keeps its style in
    Figs. 2a, 3a, 10 and 11."""
    rows = [e["row"] for e in entries]
    fixed = sorted({(r["batch"], r["cut"]) for r in rows if r["method"] == "fixed"})
    rest = [_label(r) for r in rows if r["method"] != "fixed" and r["method"] not in METHOD_ORDER
            and r["method"] not in COMPONENT_STYLES]
    return [f"b = {b}, cut {c}" for b, c in fixed] + list(dict.fromkeys(rest))


def _band(ax, entries: list[dict], xkey: str, style: dict, label: str, scale: float = 1.0, ls: str = "-") -> None:
    """Mean curve of the seeds in ``entries`` with a min-max band (when more than one seed) in ``style``
    (:func:`method_style`)."""
    curves = [(np.asarray(e["curve"][xkey], float) * scale, np.asarray(e["curve"]["test_acc"]) * 100)
              for e in entries]
    kw = dict(color=style["color"], lw=1.3, ls=ls, marker=style["marker"], mfc=style["mfc"], ms=3.5, markevery=0.1)
    if len(curves) == 1:
        ax.plot(*curves[0], label=label, **kw)
        return
    grid = np.linspace(0, min(c[0][-1] for c in curves), 60)
    ys = np.array([np.interp(grid, x, y) for x, y in curves])
    ax.plot(grid, ys.mean(0), label=f"{label} (mean of {len(curves)})", **kw)
    ax.fill_between(grid, ys.min(0), ys.max(0), color=style["color"], alpha=0.2, lw=0)


def _signature(entries: list[dict], xkey: str) -> tuple:
    return tuple((tuple(np.round(e["curve"][xkey], 9)), tuple(np.round(e["curve"]["test_acc"], 9))) for e in entries)


def _draw_groups(ax, groups: dict, xkey: str, others=()) -> None:
    """One curve per method in its :func:`method_style` (``others``: the figure's labels outside the registry, in
    the order they are numbered); a method whose curves equal an earlier method's (same decisions, so the same run)
    is drawn dashed over it, and the panel names the pairs ("X = Y: identical runs"), so that no curve hides. A
    method whose runs never met the paper's convergence rule says so in its legend label, on a second line so that
    the legend keeps its width (``"RBS+RMS\nnever converged (504 rounds)"``, :func:`never_converged`)."""
    seen, same = {}, []
    for label, es in groups.items():
        sig = _signature(es, xkey)
        ls = "-"
        if sig in seen:
            same.append(f"{label} = {seen[sig]}")
            ls = (0, (4, 3))
        else:
            seen[sig] = label
        never = never_converged([e["row"] for e in es])
        _band(ax, es, xkey, method_style(label, others), label + (f"\n{never}" if never else ""), ls=ls)
    if same:
        ax.text(0.98, 0.02, "identical runs (dashed over):\n" + "\n".join(same), transform=ax.transAxes,
                ha="right", va="bottom", fontsize=6, bbox=dict(fc="w", ec="0.7", alpha=0.9))


def fig_accuracy(entries: list[dict], figure: str, xkey: str, settings: tuple, title: str, **match):
    """Test accuracy vs ``xkey`` (``"epoch"`` or ``"sim_s"``) of one figure's runs, one panel per setting."""
    fig, axes = new_figure(len(settings))
    others = _others(entries)
    for ax, setting in zip(axes[0], settings):
        _draw_groups(ax, _groups(entries, figure, setting=setting, **match), xkey, others)
        ax.set_xlabel("epochs (device samples / |D|)" if xkey == "epoch" else "simulated time (s)")
        if xkey == "sim_s":
            ax.set_xscale("symlog", linthresh=1.0)
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(f"{title}, {setting}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.3))   # below: curves fill
    fig.tight_layout()
    return fig


def fig5_accuracy_vs_time(entries: list[dict], models: tuple, settings: tuple):
    """Fig. 5: accuracy vs simulated time for HASFL and the benchmarks, one panel per model and setting; a method
    has the same colour and marker in every panel (a panel may lack a variant, e.g. HASFL-max for a model) and in
    every other HASFL figure (:func:`method_style`); a run that never converged says so in the legend."""
    fig, axes = new_figure(len(settings), len(models))
    others = _others(entries)
    for row_axes, model in zip(axes, models):
        for ax, setting in zip(row_axes, settings):
            _draw_groups(ax, _groups(entries, "fig5", model=model, setting=setting), "sim_s", others)
            ax.set_xscale("symlog", linthresh=1.0)
            ax.set_xlabel("simulated time (s)")
            ax.set_ylabel("test accuracy (%)")
            ax.set_title(f"{model}, {setting}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.2))   # below: curves fill
    fig.tight_layout()
    return fig


def _mean(vals):
    vals = [v for v in vals if v is not None]
    return float(np.mean(vals)) if vals else None


FIG6_QUANTITIES = {
    # quantity: (time key, accuracy key, time label, accuracy label, what a missing time means)
    "target": ("time_to_target_s", "final_test_acc", "time to target", "final accuracy", "not reached"),
    "converged": ("converged_time_s", "converged_acc", "converged time", "converged accuracy", "never converged"),
}

SETTING_SHADES = (1.0, 0.45, 0.25)
"""How much of a method's colour a bar of the first, second and further data settings keeps (the rest white), so
that Fig. 6's bars keep each method's colour (:func:`method_style`) and tell the settings apart by shade."""


def _tint(color, k: int) -> tuple:
    """``color`` at the shade of setting ``k`` (:data:`SETTING_SHADES`)."""
    f = SETTING_SHADES[min(k, len(SETTING_SHADES) - 1)]
    r, g, b, _ = to_rgba(color)
    return (1 - f * (1 - r), 1 - f * (1 - g), 1 - f * (1 - b), 1.0)


def fig6_bars(rows: list[dict], models: tuple, settings: tuple, quantity: str = "target"):
    """Fig. 6: a time and an accuracy per method (any method names, e.g. the HASFL variants) and data setting, one
    panel pair per model, legends below the panels. A bar has its method's colour (:func:`method_style`), full for
    the first setting and lighter for the next (:data:`SETTING_SHADES`; the legend names the shades).

    ``quantity="converged"`` is the paper's Fig. 6: converged time (simulated s, when the paper's rule fires:
    < 0.02 % gain over 5 evaluations) and the accuracy at that point; ``"target"`` (the default, for profiles whose
    runs stop before convergence) is the time to each setting's target accuracy (``target_acc``, named in the
    legend) and the run's final accuracy. Times are on a log scale from a third of the smallest bar
    (:func:`fedlib.plotting.log_floor`); a run with no time has no bar but, in its slot, a × at the axis' foot and
    what happened, upright (``"× never converged (504 rounds)"``, ``"× not reached"``); in the converged view its
    accuracy bar is the run's final accuracy, hatched.

    Raises:
        ValueError: ``quantity`` not one of ``FIG6_QUANTITIES``.
    """
    if quantity not in FIG6_QUANTITIES:
        raise ValueError(f"quantity must be one of {sorted(FIG6_QUANTITIES)}, got {quantity!r}")
    tkey, akey, tname, aname, missing = FIG6_QUANTITIES[quantity]
    fig, axes = new_figure(2, len(models), width=5.0, height=3.6)
    for row_axes, model in zip(axes, models):
        methods = list(dict.fromkeys(r["method"] for r in rows if "fig6" in r["figures"] and r["model"] == model))
        base = [method_style(m, methods)["color"] for m in methods]
        x = np.arange(len(methods))
        times, hatched, shades = [], False, []
        for k, setting in enumerate(settings):
            sel = [[r for r in rows if "fig6" in r["figures"] and r["model"] == model and r["setting"] == setting
                    and r["method"] == m] for m in methods]
            t = [_mean([r.get(tkey) for r in rs]) for rs in sel]
            times += t
            acc = [_mean([r.get(akey) for r in rs]) for rs in sel]
            final = [_mean([r["final_test_acc"] for r in rs]) for rs in sel]
            label = setting
            if quantity == "target":
                targets = sorted({r["target_acc"] for rs in sel for r in rs})
                label += " (to " + (" / ".join(f"{100 * v:.0f} %" for v in targets) or "-") + ")"
            shades.append(Patch(facecolor=_tint("0.3", k), edgecolor="0.3", lw=0.8, label=label))
            xs = x + 0.4 * k - 0.2
            fill = [_tint(c, k) for c in base]
            row_axes[0].bar(xs, [v or 0 for v in t], 0.4, color=fill, edgecolor=base, lw=0.8)
            for xi, v, rs, c in zip(xs, t, sel, base):
                if rs and v is None:                       # no time: said in its slot, no whole-run bar
                    what = (never_converged(rs) if quantity == "converged" else None) or missing
                    row_axes[0].text(xi, 0.01, f"× {what}", ha="center", va="bottom", rotation=90, fontsize=6.5,
                                     color=c, transform=row_axes[0].get_xaxis_transform())
            shown = [a if a is not None else f for a, f in zip(acc, final)]
            no_time = [bool(rs) and v is None for v, rs in zip(t, sel)]
            hatched |= quantity == "converged" and any(no_time)
            bars = row_axes[1].bar(xs, [100 * (a or 0) for a in shown], 0.4, color=fill, edgecolor=base, lw=0.8)
            for bar, miss in zip(bars, no_time):
                if miss and quantity == "converged":       # never converged: its final accuracy, hatched
                    bar.set_hatch("///")
                    bar.set_edgecolor("0.15")
        row_axes[0].set_yscale("log")
        row_axes[0].set_ylim(bottom=log_floor(times))
        label_log_axis(row_axes[0])
        row_axes[0].set_ylabel(f"simulated {tname} (s)")
        row_axes[0].set_title(f"{model}: {tname} (× = {missing})", fontsize=9)
        row_axes[1].set_ylabel(f"{aname} (%)")
        row_axes[1].set_title(f"{model}: {aname}" + (" (hatched: never converged, final)" if hatched else ""),
                              fontsize=9)
        for ax in row_axes:
            ax.set_xticks(x, methods, rotation=30, fontsize=7, ha="right")
            ax.legend(handles=shades, fontsize=7, ncol=len(settings), loc="upper center", bbox_to_anchor=(0.5, -0.3),
                      title="bars: the method's colour, setting by shade", title_fontsize=6.5)
            ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def fig9_points(runs: list[dict], key: str) -> dict | None:
    """One Fig. 9 point from the runs of a method at one N and setting (a random benchmark's draws, or seeds):
    ``mean`` of ``key`` over them, a run without ``key`` (it never reached the target / never converged) counted
    at its whole simulated time ``sim_s``, so that the mean is then a lower bound (``censored`` = how many such
    runs); ``low`` / ``high`` the smallest and largest of those values; ``n`` the runs, ``draws`` and ``seeds``
    how many distinct ones they hold (a row without ``draw`` is draw 0). None when ``runs`` is empty."""
    if not runs:
        return None
    vals = [r[key] if r[key] is not None else r["sim_s"] for r in runs]
    return {"mean": float(np.mean(vals)), "low": float(min(vals)), "high": float(max(vals)), "n": len(vals),
            "censored": sum(r[key] is None for r in runs), "draws": len({r.get("draw", 0) for r in runs}),
            "seeds": len({r.get("seed") for r in runs})}


def _counted(point: dict) -> str:
    """``"3 draws"``, ``"2 seeds"`` or ``"3 draws x 2 seeds"``: what a :func:`fig9_points` mean is over."""
    parts = [f"{point[k]} {k}" for k in ("draws", "seeds") if point[k] > 1]
    return " x ".join(parts) or f"{point['n']} runs"


FIG9_DODGE = 0.3
"""Horizontal offset (in devices) between the methods that have several runs at an N in Fig. 9, so that their
min-max bars do not hide one another; a method with one run per N stays at N."""


def fig9_vs_devices(rows: list[dict]):
    """Fig. 9: simulated time to the target accuracy and converged time (the paper's rule) vs the number of devices
    N, one line per method, one row of panels per data setting of the Fig. 9 rows (IID first). A method with
    several runs at an N (a random benchmark's draws, ``TrainPlan.fig9_draws``, or several seeds) is their mean
    with a min-max bar, set a little apart in x (:data:`FIG9_DODGE`), and its legend says how many. A run that does
    not reach the target (left) or does not converge by the paper's rule (right) within its rounds counts at its
    whole simulated time, and a mean over such a run is a × where the method's line breaks: a lower bound, not a
    measurement (:func:`fig9_points`)."""
    sel_all = [r for r in rows if "fig9" in r["figures"]]
    settings = sorted({r["setting"] for r in sel_all}, key=lambda x: x != "iid") or ["iid"]
    methods = list(dict.fromkeys(r["method"] for r in sel_all))
    methods = sorted(methods, key=lambda m: method_styles(methods)[m])
    several = [m for m in methods
               if any(sum(r["method"] == m and r["N"] == n and r["setting"] == st for r in sel_all) > 1
                      for n in {r["N"] for r in sel_all} for st in settings)]
    shift = {m: FIG9_DODGE * (i - (len(several) - 1) / 2) for i, m in enumerate(several)}
    fig, axes = new_figure(2, len(settings), height=4.2)                 # room for the legends below each panel
    for row_axes, setting in zip(axes, settings):
        sel = [r for r in sel_all if r["setting"] == setting]
        missing, ranged = [False, False], False
        for method in methods:
            st = method_style(method, methods)
            ns = sorted({r["N"] for r in sel if r["method"] == method})
            for j, (ax, key) in enumerate(zip(row_axes, ("time_to_target_s", "converged_time_s"))):
                pts = [(n + shift.get(method, 0.0), fig9_points([r for r in sel if r["method"] == method
                                                                 and r["N"] == n], key)) for n in ns]
                most = max(pts, key=lambda xp: xp[1]["n"])[1] if pts else {"n": 1}
                label = method + (f" (mean of {_counted(most)})" if most["n"] > 1 else "")
                if any(not p["censored"] for _, p in pts):        # the line breaks at a lower bound (NaN)
                    ax.plot([x for x, _ in pts], [np.nan if p["censored"] else p["mean"] for _, p in pts], "-",
                            marker=st["marker"], mfc=st["mfc"], color=st["color"], label=label)
                lower = [(x, p) for x, p in pts if p["censored"]]
                if lower:
                    missing[j] = True
                    word = "reached" if j == 0 else "converged"
                    some = any(p["censored"] < p["n"] or p["n"] > 1 for _, p in lower)
                    ax.plot([x for x, _ in lower], [p["mean"] for _, p in lower], "x", ms=8, mew=1.5,
                            color=st["color"],
                            label=f"{method} (not {word}" + (" in a draw: mean ≥" if some else "") + ")")
                bars = [(x, p) for x, p in pts if p["n"] > 1]
                if bars:
                    ranged = True
                    ys = np.array([p["mean"] for _, p in bars])
                    err = [ys - [p["low"] for _, p in bars], [p["high"] for _, p in bars] - ys]
                    ax.errorbar([x for x, _ in bars], ys, yerr=err, fmt="none", ecolor=st["color"], elinewidth=1.2,
                                capsize=3, alpha=0.8)
        target = sel[0]["target_acc"] if sel else 0
        name = "IID" if setting == "iid" else "non-IID"
        titles = (f"{name}: time to {100 * target:.0f} % accuracy",
                  f"{name}: converged time\n(paper's rule: < 0.02 % gain over 5 evals)")
        for ax, title, miss in zip(row_axes, titles, missing):
            ax.set_xlabel("number of devices N")
            ax.set_ylabel("simulated time (s)")
            ax.set_yscale("log")
            ax.set_xticks(sorted({r["N"] for r in sel_all}))
            label_log_axis(ax)
            ax.set_title(title, fontsize=9)
            ax.grid(alpha=0.3)
            notes = (["bars: min-max over the draws"] if ranged else []) + (
                ["×: lower bound (a run counted at its whole time)"] if miss else [])
            below = ax.transAxes + ScaledTranslation(0, -34 / 72, fig.dpi_scale_trans)   # under the x label
            ax.legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=below,
                      title="; ".join(notes) or None, title_fontsize=6)           # below the panel: points fill it
    fig.tight_layout()
    return fig


def fig_calibration(rows: list[dict]):
    """The calibrated bound per model (ours, :func:`fedlib.hasfl.runs.train_plan.calibration_table` rows): rounds to the
    IID target measured on each calibration run (x) against Corollary 1 under the fitted (ε, κ, λ) (y), one panel
    per model, each run labelled ``b/cut``; the diagonal is a perfect fit. Runs that never reach the target sit at
    the axis' foot as hollow × (no measured value), and a model whose fit failed says why on its panel."""
    models = list(dict.fromkeys(r["model"] for r in rows)) or ["(none)"]
    fig, axes = new_figure(len(models))
    for ax, model in zip(axes[0], models):
        mine = [r for r in rows if r["model"] == model]
        ok = [r for r in mine if r.get("rounds_measured") is not None and r.get("rounds_fit") is not None]
        if not ok:
            note = next((r.get("note") for r in mine if r.get("note")), "no calibration run reached the target")
            ax.text(0.5, 0.5, "no fit:\n" + textwrap.fill(note, 48), ha="center", va="center", fontsize=7,
                    transform=ax.transAxes)
            ax.set_title(model, fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        x = np.array([r["rounds_measured"] for r in ok], float)
        y = np.array([r["rounds_fit"] for r in ok], float)
        lo, hi = min(x.min(), y.min()) / 1.3, max(x.max(), y.max()) * 1.3
        ax.plot([lo, hi], [lo, hi], color="0.6", lw=1, label="fit = measured")
        cuts = [r for r in ok if r["batch"] == ok[0]["batch"]]
        for i, r in enumerate(ok):
            fixed_cut_run = r in cuts and len(cuts) > 1
            ax.plot(r["rounds_measured"], r["rounds_fit"], "o" if fixed_cut_run else "s", color=colour(0 if fixed_cut_run else 1),
                    ms=6)
            ax.annotate(f"{r['batch']}/{r['cut']}", (r["rounds_measured"], r["rounds_fit"]), fontsize=6,
                        xytext=(4, 3 if i % 2 else -8), textcoords="offset points")
        missed = [r for r in mine if r.get("rounds_measured") is None and r.get("batch") is not None]
        if missed:
            ax.text(0.02, 0.02, "not reached: " + ", ".join(f"{r['batch']}/{r['cut']}" for r in missed),
                    fontsize=6, transform=ax.transAxes)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        label_log_axis(ax, "x")              # a panel under a decade wide got 2, 3, 4, 6 x 10^2 labels, colliding
        label_log_axis(ax, "y")
        ax.set_xlabel("rounds to the target, measured")
        ax.set_ylabel("rounds, Corollary 1 under the fit")
        r0 = ok[0]
        ax.set_title(f"{model}: κ = {r0['kappa']:.3g}, λ = {r0['lambda']:.3g}, ε = {r0['eps']:.3g}\n"
                     f"relative residual {r0['residual']:.2g} (labels: b/cut)", fontsize=8)
        ax.plot([], [], "o", color=colour(0), label=f"fixed b = {cuts[0]['batch']}, cuts vary")
        ax.plot([], [], "s", color=colour(1), label="fixed cut, b varies")
        ax.legend(fontsize=6, loc="lower right")              # the worst misfits sit high, above the diagonal
        ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


SCALE_LABELS = {"device_flops": "Fig. 7: device compute f_i", "server_flops": "Fig. 7: server compute f_s",
                "rate_up": "Fig. 8: device uplink rate", "rate_servers": "Fig. 8: inter-server rate"}


def fig78_trained(rows: list[dict], model: str, setting: str = "iid", key: str = "converged_time_s"):
    """Figs. 7-8 trained (ours; the paper's are predictions): per swept Table I quantity (one panel each), the
    measured ``key`` (solid; converged time by the paper's rule by default) and the system model's predicted Θ
    (dashed) of each method against the quantity's factor, seeds averaged, both relative to the reference method's
    at Table I (HASFL when swept, else the first method; factor 1 is Fig. 5's run of ``model``, ``setting``), so
    that the trends and the methods' ratios read on one log axis. A point whose runs have no ``key`` (not
    converged / not reached) is a hollow × at the runs' whole time: a lower bound. When the reference itself has
    no ``key``, its whole time is the divisor and the axis label says that every value is then an upper bound.
    Each method has its :func:`method_style`; one opaque legend for every panel sits below them, outside the axes
    (inside, it hid the lines of 3 of the 4 converged panels)."""
    swept = [r for r in rows if {"fig7", "fig8"} & set(r["figures"]) and r["model"] == model
             and r["setting"] == setting]
    methods = list(dict.fromkeys(r["method"] for r in swept))
    base = [r for r in rows if "fig5" in r["figures"] and r["model"] == model and r["setting"] == setting
            and r["method"] in methods]
    keys = [k for k in SCALE_LABELS if any(r["scale_key"] == k for r in swept)]
    fig, axes = new_figure(max(1, len(keys)), width=3.4)
    ref_method = "HASFL" if "HASFL" in methods else (methods[0] if methods else None)
    ref_rows = [r for r in base if r["method"] == ref_method]
    ref_meas = _mean([r[key] for r in ref_rows])
    ref_div = ref_meas if ref_meas is not None else _mean([r["sim_s"] for r in ref_rows])
    ref_pred = _mean([r["theta_pred_s"] for r in ref_rows])

    def point(rs):
        meas = _mean([r[key] for r in rs])
        return (meas, _mean([r["sim_s"] for r in rs]), _mean([r["theta_pred_s"] for r in rs]))

    for ax, k in zip(axes[0], keys):
        for m in methods:
            st = method_style(m, methods)
            by_f = {1.0: [r for r in base if r["method"] == m]}
            for r in swept:
                if r["scale_key"] == k and r["method"] == m:
                    by_f.setdefault(r["scale_factor"], []).append(r)
            pts = sorted((f, point(rs)) for f, rs in by_f.items() if rs)
            if not ref_div or not pts:
                continue
            meas = [(f, p[0] / ref_div) for f, p in pts if p[0] is not None]
            low = [(f, p[1] / ref_div) for f, p in pts if p[0] is None]
            pred = [(f, p[2] / ref_pred) for f, p in pts if p[2] is not None and ref_pred]
            if meas:
                ax.plot(*zip(*meas), "-", marker=st["marker"], mfc=st["mfc"], color=st["color"], label=f"{m}: trained")
            if low:
                ax.plot(*zip(*low), "x", ms=8, mew=1.5, color=st["color"], label=f"{m}: not converged (× at run's end)")
            if pred:
                ax.plot(*zip(*pred), "--", marker=st["marker"], mfc="none", color=st["color"], alpha=0.8,
                        label=f"{m}: predicted Θ")
        ax.set_xscale("log")
        ax.set_yscale("log")
        factors = sorted({1.0} | {r["scale_factor"] for r in swept if r["scale_key"] == k})
        ax.set_xticks(factors, [f"{f:g}" for f in factors])
        ax.minorticks_off()
        label_log_axis(ax)                                 # a flat panel spans less than a decade
        ax.set_xlabel("factor on Table I's range")
        ax.set_title(SCALE_LABELS[k], fontsize=9)
        ax.grid(alpha=0.3, which="both")
    bound = "" if ref_meas is not None else f"\n({ref_method} did not converge at Table I: ÷ its whole time, upper bounds)"
    axes[0][0].set_ylabel(f"time relative to {ref_method} at Table I\n(solid: trained, dashed: predicted){bound}")
    _legend_below(fig, [ax for ax in axes[0]])
    return fig


def _legend_below(fig, axes, fontsize: float = 7) -> None:
    """One opaque legend of every labelled line of ``axes`` (each label once), centred below the panels, outside
    every axes: the panels are laid out (``tight_layout``) above the legend's height."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if not handles:
        fig.tight_layout()
        return
    leg = fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(labels), 4),
                     fontsize=fontsize,
                     framealpha=1.0, frameon=True)
    fig.canvas.draw()                                      # the legend's size, in pixels
    height = leg.get_window_extent().height / fig.bbox.height
    fig.tight_layout(rect=(0, height + 0.02, 1, 1))
