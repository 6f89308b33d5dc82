"""Figures of HASFL's system model kept in the lab: the strategy comparison (drawn by ``hasfl_3_optimiser`` and
``hasfl_your_method``). The figures of one notebook are drawn in it: Figs. 3b and 2b in
``notebooks/hasfl/hasfl_1_latency.ipynb``, Theorem 1's terms in ``hasfl_2_bound.ipynb``, the decisions and the
sensitivity sweep in ``hasfl_3_optimiser.ipynb``, the ε sweep in ``hasfl_5_train_figures.ipynb``."""
from __future__ import annotations

import numpy as np

from fedlib.lab.plotting import log_floor, new_figure
from fedlib.lab.hasfl.figures.train_plots import METHOD_ORDER, method_style


def fig_strategies(rows: list[dict], title: str = "HASFL vs benchmarks"):
    """Predicted total latency Θ (eq. 42) of HASFL and the four benchmarks (mean ± std over the feasible random
    draws; log scale from a third of the smallest bar), each bar in its method's colour (:func:`method_style`; a
    strategy of your own, by its import path, a colour apart). A method with no feasible draw has no bar and says so
    at the axis' foot; the count of infeasible draws is written on each bar that has some."""
    fig, axes = new_figure()
    ax = axes[0, 0]
    names = [r["method"] for r in rows]
    vals = [r["theta"] if r["theta"] is not None else np.nan for r in rows]
    std = np.array([r["theta_std"] or 0 for r in rows], float)
    floor = log_floor(r["theta"] for r in rows)
    # on the log axis a whisker stops at the axis' foot (mean - std may be <= 0) and the axis reaches the top one
    errs = [np.minimum(std, np.nan_to_num(np.array(vals, float) - floor, nan=0.0)), std]
    others = [n for n in names if n not in METHOD_ORDER]   # a strategy of your own: as in the training figures
    ax.bar(range(len(rows)), vals, yerr=errs, color=[method_style(n, others)["color"] for n in names],
           error_kw=dict(elinewidth=0.8))
    for i, r in enumerate(rows):
        if r["theta"] is None:
            ax.text(i, 0.02, f"no feasible draw ({r['infeasible']} infeasible)", rotation=90,
                    fontsize=6, va="bottom", ha="center", transform=ax.get_xaxis_transform())
        elif r["infeasible"]:                     # left of the bar's whisker, inside the bar
            ax.text(i - 0.22, 0.02, f"{r['infeasible']} infeasible", rotation=90, fontsize=6, va="bottom",
                    ha="center", transform=ax.get_xaxis_transform())
    ax.set(yscale="log", ylabel="predicted total latency Θ (s)", title=title)
    tops = [v + e for v, e in zip(vals, std) if np.isfinite(v)]
    ax.set_ylim(bottom=floor, top=max(tops) * 1.6 if tops else None)
    ax.set_xticks(range(len(rows)), names, rotation=30, fontsize=7, ha="right")
    ax.set_xlim(-0.6, len(rows) - 0.4)     # a last method without a bar keeps its slot (autoscale drops NaN bars)
    fig.tight_layout()
    return fig
