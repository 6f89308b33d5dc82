"""HIST's figure style (setting titles, method line styles), the figure that several notebooks draw: Fig. 2
(``hist_2_figures``, ``hist_your_method``), and the bounds' figure. Figs. 3-4 are drawn in ``hist_2_figures``."""
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


def _n_style(i: int) -> dict:
    """Colour and hollow marker of the i-th curve of a panel (the i-th N; sizes shrink with i so that equal points
    nest, none hidden)."""
    return dict(color=colour(i), marker=N_MARKERS[i % len(N_MARKERS)], ms=max(8.0 - 1.4 * i, 3.0), mfc="none",
                mew=1.1)


def _same_as(curves: dict, n) -> str:
    """`` (= N=m)`` when N=n's curve equals an earlier N's (they coincide on the plot), else ``""``."""
    for m, other in curves.items():
        if m == n:
            return ""
        if np.allclose(other, curves[n], rtol=1e-9, atol=0):
            return f" (= N={m})"
    return ""


def fig_bounds(sweeps: dict, setting: str):
    """HIST Theorem 1 with estimated constants: (a) terms vs N; (b) bound vs T with Corollary 1's γ;
    (c) γ_max of (12) over (H, E/H) with the used γ's contour; (d) maximum orders of H and E vs T. Two panels to a
    row (9.4 in wide: shown inline at its size, its 8 pt legends stay legible).

    Each panel's legend sits in a row of its own below it (covering no axis label); every curve of a panel has its
    own hollow marker (nested sizes), so curves that coincide (in (d) E's order does not depend on N) stay visible;
    (d)'s coinciding E curves interleave their dashes, and the legends of (b) and (d) name the N whose curve
    another N's repeats."""
    import matplotlib.colors as mcolors

    fig, panels = new_figure(ncols=2, nrows=4, width=4.7, height=3.0, height_ratios=[1, 0.36, 1, 0.36])
    axes = [panels[0, 0], panels[0, 1], panels[2, 0], panels[2, 1]]      # (a) (b) / (c) (d)
    legends = [panels[1, 0], panels[1, 1], panels[3, 0], panels[3, 1]]
    ax = axes[0]
    ns = sorted(sweeps["vs_N"])
    for i, term in enumerate(TERM_LABELS):
        ax.plot(ns, [sweeps["vs_N"][n][term] for n in ns], **_n_style(i), label=TERM_LABELS[term])
    ax.plot(ns, [sweeps["vs_N"][n]["total"] for n in ns], color="k", ls="--", lw=1, label="total")
    ax.set(yscale="log", xlabel="number of cells N", ylabel="bound term",
           title=f"(a) eq. 13 terms, γ={sweeps['gamma']:g}, T={sweeps['T']}")
    ax.set_xticks(ns)
    ax = axes[1]
    vanishing = {n: [b["init"] + b["variance"] + b["client_dissimilarity"] for b in sweeps["vs_T"][n]] for n in ns}
    floor = {n: [b["cell_dissimilarity"] + b["model_norm"] for b in sweeps["vs_T"][n]] for n in ns}
    for i, n in enumerate(ns):
        ax.plot(sweeps["T_grid"], vanishing[n], **_n_style(i), label=f"N={n}: diminishing{_same_as(vanishing, n)}")
        ax.plot(sweeps["T_grid"], floor[n], ls=":", **_n_style(i), label=f"N={n}: floor{_same_as(floor, n)}")
    ax.set(xscale="log", yscale="log", xlabel="iterations T", ylabel="bound part",
           title="(b) Corollary 1, γ=(TÑ)^-1/2\ndiminishing (solid), floor (dotted)")
    ax = axes[2]
    grid = np.asarray(sweeps["gamma_max_grid"])
    im = ax.pcolormesh(sweeps["E_over_H_grid"], sweeps["H_grid"], grid, norm=mcolors.LogNorm(), shading="nearest")
    fig.colorbar(im, ax=ax, label="γ_max of (12)")
    ok = grid >= sweeps["gamma"]
    ax.set(xlabel="E/H", ylabel="H", title=f"(c) step-size condition, N={sweeps['grid_N']}\n"
           f"γ={sweeps['gamma']:g} satisfies it in {int(ok.sum())}/{ok.size} cells")
    ax = axes[3]
    orders = {k: {n: sweeps["orders"][n][k] for n in ns} for k in ("H", "E")}
    for i, n in enumerate(ns):
        ax.plot(sweeps["T_grid"], orders["H"][n], **_n_style(i), label=f"H, N={n}{_same_as(orders['H'], n)}")
        ax.plot([], [], ls="--", **_n_style(i), label=f"E, N={n}{_same_as(orders['E'], n)}")   # its legend entry
        # E's dashes interleave (N=2's dash, then N=3's, ...), so coinciding E curves show every colour
        ax.plot(sweeps["T_grid"], orders["E"][n], ls=(5 * i, (3, 5 * len(ns) - 3)), **_n_style(i))
    ax.set(xscale="log", yscale="log", xlabel="iterations T", ylabel="maximum order",
           title="(d) max orders of H (solid), E (dashed)")
    for ax, below in zip(axes, legends):
        handles, labels = ax.get_legend_handles_labels()
        below.axis("off")
        if handles:
            below.legend(handles, labels, fontsize=8, loc="upper center", ncol=2, frameon=False)
    fig.suptitle(f"HIST Theorem 1 with constants estimated on {SETTING_TITLES.get(setting, setting)} data")
    fig.tight_layout()
    return fig
