"""HASFL's training figures (Figs. 2a, 3a, 5, 6, 9, 10, 11) from :func:`fedlib.lab.hasfl.runs.train_plan.run_plan`
entries. Curves of several seeds are drawn as their mean with a min-max band (interpolated on a common x grid)."""
from __future__ import annotations

import numpy as np

from matplotlib.colors import to_rgba
from matplotlib.patches import Patch

from fedlib.lab.plotting import label_log_axis, log_floor, new_figure

from fedlib.lab.hasfl.figures.styles import (COMPONENT_STYLES, MARKERS, METHOD_ORDER, _mean,  # noqa: F401  (re-exported)
                                             claim_cells, convergence_cells, method_style,  # noqa: F401  (re-exported)
                                             method_styles, never_converged)  # noqa: F401  (re-exported)


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


def _legend_below(ax, ncol: int) -> int:
    """The panel's legend below its x-axis label (a fixed offset in points, whatever the panel's height: the curves
    fill the panel), in ``ncol`` columns, or 2 where a label has a second line ("never converged (30 rounds)"), so
    that the legend is no wider than its panel. Returns the legend's height in text lines."""
    labels = ax.get_legend_handles_labels()[1]
    two_line = any("\n" in lab for lab in labels)
    ncol = 2 if two_line else ncol
    ax.legend(fontsize=6, ncol=ncol, loc="upper center", bbox_to_anchor=(0.5, 0.0), borderaxespad=6.5)
    return -(-len(labels) // ncol) * (1 + two_line)


def _fit_height(fig, rows: int, lines: int):
    """``fig`` as tall as ``rows`` panel rows with legends of ``lines`` text lines below each need, laid out."""
    fig.set_size_inches(fig.get_size_inches()[0], rows * (2.9 + 0.12 * lines))
    fig.tight_layout()
    return fig


def fig_accuracy(entries: list[dict], figure: str, xkey: str, settings: tuple, title: str, **match):
    """Test accuracy vs ``xkey`` (``"epoch"`` or ``"sim_s"``) of one figure's runs, one panel per setting."""
    fig, axes = new_figure(len(settings))
    others, lines = _others(entries), 0
    for ax, setting in zip(axes[0], settings):
        _draw_groups(ax, _groups(entries, figure, setting=setting, **match), xkey, others)
        ax.set_xlabel("epochs (device samples / |D|)" if xkey == "epoch" else "simulated time (s)")
        if xkey == "sim_s":
            ax.set_xscale("symlog", linthresh=1.0)
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(f"{title}, {setting}", fontsize=9)
        ax.grid(alpha=0.3)
        lines = max(lines, _legend_below(ax, 3))
    return _fit_height(fig, 1, lines)


def fig5_accuracy_vs_time(entries: list[dict], models: tuple, settings: tuple, target_acc: float | None = None):
    """Fig. 5: accuracy vs simulated time for HASFL and the benchmarks, one panel per model and setting; a method
    has the same colour and marker in every panel (a panel may lack a variant, e.g. HASFL-max for a model) and in
    every other HASFL figure (:func:`method_style`); a run that never converged says so in the legend.
    ``target_acc`` (a fraction): a dotted line at that accuracy, where the time to target is read."""
    fig, axes = new_figure(len(settings), len(models))
    others, lines = _others(entries), 0               # lines: of the tallest legend
    for row_axes, model in zip(axes, models):
        for ax, setting in zip(row_axes, settings):
            if target_acc is not None:
                ax.axhline(100 * target_acc, color="0.4", ls=":", lw=1)
                ax.text(0.02, 100 * target_acc, f"target {100 * target_acc:.0f} %", color="0.3", fontsize=7,
                        va="bottom", transform=ax.get_yaxis_transform())
            _draw_groups(ax, _groups(entries, "fig5", model=model, setting=setting), "sim_s", others)
            ax.set_xscale("symlog", linthresh=1.0)
            ax.set_xlabel("simulated time (s)")
            ax.set_ylabel("test accuracy (%)")
            ax.set_title(f"{model}, {setting}", fontsize=9)
            ax.grid(alpha=0.3)
            lines = max(lines, _legend_below(ax, 4))
    return _fit_height(fig, len(models), lines)


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
    (:func:`fedlib.lab.plotting.log_floor`); a run with no time has no bar but, in its slot, a × at the axis' foot and
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


# the figures split into their own modules, re-exported here (the notebooks call train_plots.<name>)
from fedlib.lab.hasfl.figures.fig9_plots import FIG9_DODGE, fig9_points, fig9_vs_devices  # noqa: E402,F401
from fedlib.lab.hasfl.figures.sweep_plots import SCALE_LABELS, fig78_trained, fig_calibration  # noqa: E402,F401
