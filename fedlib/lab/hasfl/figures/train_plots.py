"""What HASFL's training figures share (``hasfl_5_train_figures`` draws Figs. 2a, 3a, 6, 9-11 with these;
``hasfl_your_method`` draws Fig. 5 too): the accuracy curves of one figure's runs (entries ``{"row", "curve"}`` of a
plan's runs, :func:`fedlib.lab.hasfl.runs.train_plan.decision_row`), each method in its style, with the legend below
the panel; Fig. 5. Curves of several seeds are drawn as their
mean with a min-max band (interpolated on a common x grid)."""
from __future__ import annotations

import numpy as np


from fedlib.lab.plotting import new_figure

from fedlib.lab.hasfl.figures.styles import (COMPONENT_STYLES, MARKERS, METHOD_ORDER,  # noqa: F401  (re-exported)
                                             claim_cells, convergence_cells, method_style,  # noqa: F401  (re-exported)
                                             method_styles, never_converged)  # noqa: F401  (re-exported)


def _label(row: dict) -> str:
    if row["method"] == "fixed":
        return f"b = {row['batch']}, cut {row['cut']}"
    return row["method"]


def figure_groups(entries: list[dict], figure: str, **match) -> dict:
    out: dict = {}
    for e in entries:
        r = e["row"]
        if figure in r["figures"] and all(r[k] == v for k, v in match.items()):
            out.setdefault(_label(r), []).append(e)
    return out


def fixed_labels(entries: list[dict]) -> list[str]:
    """The labels of ``entries`` outside :data:`METHOD_ORDER` and :data:`COMPONENT_STYLES` (the fixed b / cut
    configurations, by b then cut), the order :func:`method_style` numbers them in: the same run keeps its style in
    Figs. 2a, 3a, 10 and 11."""
    rows = [e["row"] for e in entries]
    fixed = sorted({(r["batch"], r["cut"]) for r in rows if r["method"] == "fixed"})
    rest = [_label(r) for r in rows if r["method"] != "fixed" and r["method"] not in METHOD_ORDER
            and r["method"] not in COMPONENT_STYLES]
    return [f"b = {b}, cut {c}" for b, c in fixed] + list(dict.fromkeys(rest))


def _band(ax, entries: list[dict], xkey: str, style: dict, label: str, scale: float = 1.0, ls: str = "-",
          faint: bool = False) -> None:
    """Mean curve of the seeds in ``entries`` with a min-max band (when more than one seed) in ``style``
    (:func:`method_style`); ``faint``: a thin, half-transparent line without markers, under the others (a method
    shown for reference beside the ones a figure is about)."""
    curves = [(np.asarray(e["curve"][xkey], float) * scale, np.asarray(e["curve"]["test_acc"]) * 100)
              for e in entries]
    kw = dict(color=style["color"], lw=1.3, ls=ls, marker=style["marker"], mfc=style["mfc"], ms=3.5, markevery=0.1)
    if faint:
        kw.update(lw=0.9, alpha=0.55, marker=None, zorder=1.5)
    if len(curves) == 1:
        ax.plot(*curves[0], label=label, **kw)
        return
    grid = np.linspace(0, min(c[0][-1] for c in curves), 60)
    ys = np.array([np.interp(grid, x, y) for x, y in curves])
    ax.plot(grid, ys.mean(0), label=f"{label} (mean of {len(curves)})", **kw)
    ax.fill_between(grid, ys.min(0), ys.max(0), color=style["color"], alpha=0.2, lw=0)


def _signature(entries: list[dict], xkey: str) -> tuple:
    return tuple((tuple(np.round(e["curve"][xkey], 9)), tuple(np.round(e["curve"]["test_acc"], 9))) for e in entries)


def draw_groups(ax, groups: dict, xkey: str, others=(), faint=()) -> None:
    """One curve per method in its :func:`method_style` (``others``: the figure's labels outside the registry, in
    the order they are numbered); a method whose curves equal an earlier method's (same decisions, so the same run)
    is drawn dashed over it, and the panel names the pairs ("X = Y: identical runs"), so that no curve hides. A
    method whose runs never met the paper's convergence rule says so in its legend label, on a second line so that
    the legend keeps its width (``"RBS+RMS\nnever converged (504 rounds)"``, :func:`never_converged`). The labels
    in ``faint`` are drawn thin and pale, without markers (:func:`_band`), and listed after the others in the
    legend."""
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
        _band(ax, es, xkey, method_style(label, others), label + (f"\n{never}" if never else ""), ls=ls,
              faint=label in faint)
    if same:
        ax.text(0.98, 0.02, "identical runs (dashed over):\n" + "\n".join(same), transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7, bbox=dict(fc="w", ec="0.7", alpha=0.9))


def legend_below(ax, ncol: int, fontsize: float = 6, title: str | None = None, last=()) -> int:
    """The panel's legend below its x-axis label (a fixed offset in points, whatever the panel's height: the curves
    fill the panel), in ``ncol`` columns, or 2 where a label has a second line ("never converged (30 rounds)"), so
    that the legend is no wider than its panel; ``fontsize`` in points, ``title`` above the entries, the labels
    starting with one of ``last`` after the others. Returns the legend's height in text lines."""
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i].startswith(tuple(last)))
    two_line = any("\n" in lab for lab in labels)
    ncol = 2 if two_line else ncol
    ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize=fontsize, ncol=ncol,
              loc="upper center", bbox_to_anchor=(0.5, 0.0), borderaxespad=6.5 * 6 / fontsize, title=title,
              title_fontsize=fontsize)
    return -(-len(labels) // ncol) * (1 + two_line) + (title is not None)


def _fit_height(fig, rows: int, lines: int):
    """``fig`` as tall as ``rows`` panel rows with legends of ``lines`` text lines below each need, laid out."""
    fig.set_size_inches(fig.get_size_inches()[0], rows * (2.9 + 0.12 * lines))
    fig.tight_layout()
    return fig


VARIANTS = METHOD_ORDER[5:]
"""This collection's variants of Fig. 5's methods: the C1 benchmarks, HASFL-max, HASFL-calibrated."""

FIG5_TIME_LABEL = "simulated time (s; symlog axis: linear to 1 s, log above)"


def fig5_accuracy_vs_time(entries: list[dict], models: tuple, settings: tuple, target_acc: float | None = None):
    """Fig. 5: accuracy vs simulated time for HASFL and the benchmarks, one panel per model and setting; the paper's
    five methods (HASFL and its four benchmarks, Sec. VII) and any method of your own bold with markers, this collection's variants
    (:data:`VARIANTS`) thin and pale without markers, listed last in the legend (8 pt, so that it reads at the size JupyterLab shows the figure); a method has the same colour
    in every panel (a panel may lack a variant, e.g. HASFL-max for a model) and in every other HASFL figure
    (:func:`method_style`); a run that never converged says so in the legend. The time axis is symlog (linear below
    1 s, where the runs start at 0, log above), as its label says. ``target_acc`` (a fraction): a dotted line at
    that accuracy, where the time to target is read."""
    fig, axes = new_figure(len(settings), len(models))
    others, lines = fixed_labels(entries), 0               # lines: of the tallest legend
    for row_axes, model in zip(axes, models):
        for ax, setting in zip(row_axes, settings):
            if target_acc is not None:
                ax.axhline(100 * target_acc, color="0.4", ls=":", lw=1)
                ax.text(0.02, 100 * target_acc, f"target {100 * target_acc:.0f} %", color="0.3", fontsize=8,
                        va="bottom", transform=ax.get_yaxis_transform())
            groups = figure_groups(entries, "fig5", model=model, setting=setting)
            faint = [label for label in groups if label in VARIANTS]
            draw_groups(ax, groups, "sim_s", others, faint)
            ax.set_xscale("symlog", linthresh=1.0)
            ax.set_xlabel(FIG5_TIME_LABEL, fontsize=9)
            ax.set_ylabel("test accuracy (%)")
            ax.set_title(f"{model}, {setting}", fontsize=10)
            ax.grid(alpha=0.3)
            title = "bold: the paper's methods · thin: our variants" if faint else None
            lines = max(lines, legend_below(ax, 3, fontsize=8, title=title, last=faint))
    return _fit_height(fig, len(models), lines * 8 / 6)
