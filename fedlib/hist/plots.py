"""Figures of the HIST paper (Figs. 2-4) drawn from stored result records (see :mod:`fedlib.hist`)."""
from __future__ import annotations

import numpy as np

from ..plotting import colour, new_figure
from .experiments import seed_band, seed_groups, summarize_seeds

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
        ax.set(title=SETTING_TITLES[setting], xlabel="communication load per client (L0)",
               ylabel="test accuracy (%)", ylim=(40, 95))
        ax.grid(alpha=0.3)
    axes[0, -1].legend(fontsize=7, ncol=2)
    return fig


def fig3_comm_to_target(rows: list[dict], settings: list[str], target_acc: float, budget_L0: float):
    """HIST Fig. 3: communication per client (L0) needed to reach ``target_acc`` vs N, HIST vs HFedAvg.

    ``rows`` come from :func:`fedlib.hist.summarize` (one per seed); the marker is the mean over the seeds and
    the error bar their min-max. A config that some seed does not bring to the target within the budget is drawn
    as a hollow triangle at the budget (its true cost is above the budget).
    """
    fig, axes = new_figure(ncols=len(settings))
    stats = summarize_seeds(rows)
    for ax, setting in zip(axes[0], settings):
        for k, method in enumerate(("hist", "hfedavg")):
            sel = sorted((r for r in stats if r["setting"] == setting and r["method"] == method),
                         key=lambda r: r["N"])
            reached = [r for r in sel if r["comm_to_target"] is not None]
            missed = [r["N"] for r in sel if r["comm_to_target"] is None]
            c_k = colour(k)
            if reached:
                mean = np.array([r["comm_to_target"] for r in reached])
                err = np.array([[m - r["comm_to_target_min"], r["comm_to_target_max"] - m]
                                for m, r in zip(mean, reached)]).T
                ax.errorbar([r["N"] for r in reached], mean, yerr=err, marker="o", color=c_k, capsize=3,
                            ls=METHOD_STYLE[method]["ls"], label=METHOD_STYLE[method]["label"])
            if missed:
                ax.scatter(missed, [budget_L0] * len(missed), marker="^", facecolors="none", edgecolors=c_k,
                           label=f"{METHOD_STYLE[method]['label']}: not reached by every seed (> {budget_L0:g} L0)")
        ax.set(title=SETTING_TITLES[setting], xlabel="number of cells N",
               ylabel=f"communication to {100 * target_acc:g}% (L0 per client)")
        ax.set_xticks(sorted({r["N"] for r in rows}))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return fig


def fig4_accuracy_vs_syncs(eh_records: list[dict], h_records: list[dict], settings: list[str]):
    """HIST Fig. 4: test accuracy vs number of global synchronisations (N = 3); top row E/H sweep at fixed H,
    bottom row H sweep at fixed E/H; one column per data setting; mean over seeds with a min-max band."""
    fig, axes = new_figure(ncols=len(settings), nrows=2)
    for col, setting in enumerate(settings):
        for row, (records, key) in enumerate(((eh_records, "E/H"), (h_records, "H"))):
            ax = axes[row, col]
            sel = [g for g in seed_groups(records) if g[0]["config"]["setting"] == setting]
            for i, group in enumerate(sel):
                c = group[0]["config"]
                value = c["E"] // c["H"] if key == "E/H" else c["H"]
                fixed = f"H={c['H']}" if key == "E/H" else f"E/H={c['E'] // c['H']}"
                _band(ax, group, "round", marker=".", ms=3, color=colour(i), label=f"{key}={value} ({fixed})")
            ax.set(title=f"{SETTING_TITLES[setting]}: {key} sweep", xlabel="global synchronisations",
                   ylabel="test accuracy (%)", ylim=(40, 95))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


TERM_LABELS = {"init": "initial gap", "variance": "gradient variance", "client_dissimilarity": "client dissimilarity (δ2²)",
               "cell_dissimilarity": "cell dissimilarity (δ1²)", "model_norm": "model norm (submodel)"}


def fig_bounds(sweeps: dict, setting: str):
    """HIST Theorem 1 with estimated constants: (a) terms vs N; (b) bound vs T with Corollary 1's γ;
    (c) γ_max of (12) over (H, E/H) with the used γ's contour; (d) maximum orders of H and E vs T."""
    import matplotlib.colors as mcolors

    fig, axes = new_figure(ncols=4, width=3.9)
    ax = axes[0, 0]
    ns = sorted(sweeps["vs_N"])
    for i, term in enumerate(TERM_LABELS):
        ax.plot(ns, [sweeps["vs_N"][n][term] for n in ns], marker="o", ms=4, color=colour(i), label=TERM_LABELS[term])
    ax.plot(ns, [sweeps["vs_N"][n]["total"] for n in ns], color="k", ls="--", lw=1, label="total")
    ax.set(yscale="log", xlabel="number of cells N", ylabel="bound term",
           title=f"(a) eq. 13 terms, γ={sweeps['gamma']:g}, T={sweeps['T']}")
    ax.set_xticks(ns)
    ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)
    ax = axes[0, 1]
    for i, n in enumerate(ns):
        vanishing = [b["init"] + b["variance"] + b["client_dissimilarity"] for b in sweeps["vs_T"][n]]
        floor = [b["cell_dissimilarity"] + b["model_norm"] for b in sweeps["vs_T"][n]]
        ax.plot(sweeps["T_grid"], vanishing, color=colour(i), marker=".", label=f"N={n}: diminishing terms")
        ax.plot(sweeps["T_grid"], floor, color=colour(i), ls=":", label=f"N={n}: non-diminishing floor")
    ax.set(xscale="log", yscale="log", xlabel="iterations T", ylabel="bound part",
           title="(b) Corollary 1, γ=(TÑ)^-1/2")
    ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)
    ax = axes[0, 2]
    grid = np.asarray(sweeps["gamma_max_grid"])
    im = ax.pcolormesh(sweeps["E_over_H_grid"], sweeps["H_grid"], grid, norm=mcolors.LogNorm(), shading="nearest")
    fig.colorbar(im, ax=ax, label="γ_max of (12)")
    ok = grid >= sweeps["gamma"]
    ax.set(xlabel="E/H", ylabel="H", title=f"(c) step-size condition, N={sweeps['grid_N']}\n"
           f"γ={sweeps['gamma']:g} satisfies it in {int(ok.sum())}/{ok.size} cells")
    ax = axes[0, 3]
    for i, n in enumerate(ns):
        ax.plot(sweeps["T_grid"], sweeps["orders"][n]["H"], color=colour(i), label=f"H, N={n}")
        ax.plot(sweeps["T_grid"], sweeps["orders"][n]["E"], color=colour(i), ls="--", label=f"E, N={n}")
    ax.set(xscale="log", yscale="log", xlabel="iterations T", ylabel="maximum order",
           title="(d) max orders of H (solid), E (dashed)")
    ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)
    fig.suptitle(f"HIST Theorem 1 with constants estimated on {SETTING_TITLES[setting]} data", y=1.02)
    fig.tight_layout()
    return fig
