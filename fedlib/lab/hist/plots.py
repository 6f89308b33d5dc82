"""HIST's figure style (setting titles, method line styles, the bound terms' labels and markers, shared by
``hist_3_bounds`` and the explorer) and the figure that several notebooks draw: Fig. 2 (``hist_2_figures``,
``hist_your_method``). The other figures are drawn in their notebooks."""
from __future__ import annotations

import numpy as np

from fedlib.lab.plotting import colour, new_figure
from fedlib.lab.hist.experiments import seed_band, seed_groups

SETTING_TITLES = {"noniid": "fully non-i.i.d.", "cell_iid": "cell i.i.d., client non-i.i.d."}
METHOD_STYLE = {"hist": dict(ls="-", label="HIST"), "hfedavg": dict(ls="--", label="HFedAvg")}


def _band(ax, group: list[dict], x: str, **style) -> None:
    """Mean over the group's seeds as a line, min-max over the seeds as a shaded band (none for one seed)."""
    xs, mean, lo, hi = seed_band(group, x)
    ax.plot(xs, 100 * mean, **style)
    if len(group) > 1:
        ax.fill_between(xs, 100 * lo, 100 * hi, color=style.get("color"), alpha=0.18, lw=0)


def fig2_accuracy_vs_comm(records: list[dict], settings: list[str], target_acc: float):
    """HIST Fig. 2: test accuracy (%) of the global model vs per-client communication load (L0), one panel
    per data setting, one colour per N, solid HIST / dashed HFedAvg; with several seeds the line is their mean
    and the band their min-max. Returns the figure."""
    fig, axes = new_figure(ncols=len(settings))
    ns = sorted({r["config"]["num_cells"] for r in records})
    for ax, setting in zip(axes[0], settings):
        for group in seed_groups(records):
            c = group[0]["config"]
            if c["setting"] != setting:
                continue
            style = METHOD_STYLE[c["method"]]
            seeds = f" ({len(group)} seeds)" if len(group) > 1 else ""
            _band(ax, group, "comm_client_L0", ls=style["ls"], color=colour(ns.index(c["num_cells"])),
                  marker="." if c["method"] == "hist" else None, ms=3,
                  label=f"{style['label']} N={c['num_cells']}{seeds}")
        ax.axhline(100 * target_acc, color="0.6", lw=0.8, ls=":")
        ax.set(title=SETTING_TITLES.get(setting, setting), xlabel="communication load per client (L0)",
               ylabel="test accuracy (%)", ylim=(40, 95))
        ax.grid(alpha=0.3)
    axes[0, -1].legend(fontsize=7, ncol=2)
    return fig


TERM_LABELS = {"init": "initial gap", "variance": "gradient variance", "client_dissimilarity": "client dissimilarity (δ2²)",
               "cell_dissimilarity": "cell dissimilarity (δ1²)", "model_norm": "model norm (submodel)"}


#: hollow markers, one per N (largest first): curves of several N that coincide stay visible as nested markers
N_MARKERS = ("o", "s", "^", "D", "v", "P")


def n_style(i: int) -> dict:
    """Colour and hollow marker of the i-th curve of a panel (the i-th N; sizes shrink with i so that equal points
    nest, none hidden)."""
    return dict(color=colour(i), marker=N_MARKERS[i % len(N_MARKERS)], ms=max(8.0 - 1.4 * i, 3.0), mfc="none",
                mew=1.1)


def same_as(curves: dict, n) -> str:
    """`` (= N=m)`` when N=n's curve equals an earlier N's (they coincide on the plot), else ``""``."""
    for m, other in curves.items():
        if m == n:
            return ""
        if np.allclose(other, curves[n], rtol=1e-9, atol=0):
            return f" (= N={m})"
    return ""
