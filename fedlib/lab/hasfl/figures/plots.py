"""Figures of HASFL's system model kept in the lab: the strategy comparison (drawn by ``hasfl_3_optimiser`` and
``hasfl_your_method``) and the ε sweep (``hasfl_5_train_figures``). The figures of one notebook are drawn in it: Figs.
3b and 2b in ``notebooks/hasfl/hasfl_1_latency.ipynb``, Theorem 1's terms in ``hasfl_2_bound.ipynb``, the decisions
and the sensitivity sweep in ``hasfl_3_optimiser.ipynb``."""
from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from fedlib.core.validate import check_list
from fedlib.lab.plotting import colour, log_floor, new_figure
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


def fig_eps_sweep(sweeps: dict[str, list[dict]]):
    """HASFL's decision against C1's ε (:func:`fedlib.lab.hasfl.runs.plan_analysis.eps_sweep`): mean batch size b̄
    (range shaded), the deepest cut L_c and the predicted Θ (s), each against ε / the bound's floor at cut 1
    (b = 64); one row per model (``sweeps``: model label -> rows), the project's ε rule (1.1 x that floor)
    marked. An ε that no decision reaches leaves a gap.

    Raises:
        ValueError: ``sweeps`` empty, or a model without rows."""
    check_list("sweeps", list(sweeps))
    fig, axes = new_figure(ncols=3, nrows=len(sweeps), width=3.6, height=2.9)
    for row, (name, rows) in enumerate(sweeps.items()):
        check_list(f"sweeps[{name!r}]", rows)
        ok = [r for r in rows if r["b_mean"] is not None]
        x = np.array([r["eps_over_floor1"] for r in ok])
        rule = [r["eps_over_floor1"] for r in rows if r["rule"]]
        panels = [("mean batch size b̄ (range shaded)", [r["b_mean"] for r in ok], "log"),
                  ("deepest cut layer L_c", [r["L_c"] for r in ok], "linear"),
                  ("predicted Θ (s)", [r["theta"] for r in ok], "log")]
        for k, (label, y, scale) in enumerate(panels):
            ax = axes[row, k]
            if k == 1:                                   # a cut layer holds between the sweep's points
                ax.step(x, y, "o-", where="post", ms=3, color=colour(k))
                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            else:
                ax.plot(x, y, "o-", ms=3, color=colour(k))
            if k == 0:
                ax.fill_between(x, [r["b_min"] for r in ok], [r["b_max"] for r in ok], color=colour(0), alpha=0.2)
                ax.set_ylim(0.8, max([r["b_max"] for r in ok], default=1) * 1.5)
            for r in rule:
                ax.axvline(r, ls="--", color="0.4", lw=1, label="our ε rule (1.1 x floor at cut 1)")
            ax.set(xscale="log", yscale=scale, xlabel="ε / floor at cut 1 (b = 64)", ylabel=label,
                   title=name if k == 0 else None)
            ax.grid(alpha=0.3)
        axes[row, 0].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig
