"""Figures of the DTFL notebooks: accuracy vs simulated time, and the tier assignment round by round. Rows are the
metrics rows of :func:`fedlib.lab.dtfl.experiments.run_entry`."""
from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib import patheffects

from fedlib.lab.plotting import colour, new_figure


def accuracy_vs_time(entries: list[dict], label_keys=("setting",)):
    """Global test accuracy vs simulated time (s) of DTFL runs (entries of :func:`run_entry`), one colour per
    label, one line per seed (with several seeds, solid / dashed / dotted / dash-dot by seed, legend lower right)."""
    fig, axes = new_figure(width=5.0)
    ax = axes[0, 0]
    labels = sorted({"/".join(str(e["row"][k]) for k in label_keys) for e in entries})
    seeds = sorted({e["row"]["seed"] for e in entries})
    for e in entries:
        lab = "/".join(str(e["row"][k]) for k in label_keys)
        t = np.concatenate([[0.0], np.cumsum(e["sim"]["round_s"])])
        ls = ("-", "--", ":", "-.")[seeds.index(e["row"]["seed"]) % 4]
        ax.plot(t[e["record"]["round"]], e["record"]["test_acc"], "o", ls=ls, ms=3, color=colour(labels.index(lab)),
                label=f"{lab} (seed {e['row']['seed']})")
        ax.axhline(e["row"]["target_acc"], color="0.6", lw=0.7, ls=":")
    ax.set(xlabel="simulated training time (s)", ylabel="test accuracy (global model)", title="DTFL: accuracy vs time")
    ax.legend(fontsize=7, loc="lower right" if len(seeds) > 1 else "best")
    return fig


def tier_assignment(entry: dict):
    """Tier of every client in every round (colour), with each client's resource profile written in the cell
    when it changes; below, the round time and the straggler's computation / communication split."""
    sim = entry["sim"]
    tiers, prof = np.asarray(sim["tiers"]), np.asarray(sim["profile_idx"])
    rounds, k = tiers.shape
    fig, axes = new_figure(nrows=2, width=max(5.0, 0.35 * rounds + 2), height=2.8)
    ax = axes[0, 0]
    im = ax.imshow(tiers.T, aspect="auto", cmap="viridis", vmin=1, vmax=entry["row"]["M"], origin="lower",
                   extent=(0.5, rounds + 0.5, -0.5, k - 0.5))
    halo = [patheffects.withStroke(linewidth=1.6, foreground="w")]   # black on a white halo: legible on any tier
    for c in range(k):
        for r in range(rounds):
            if r == 0 or prof[r, c] != prof[r - 1, c]:
                ax.text(r + 1, c, sim["profiles"][prof[r, c]].replace(" CPU / ", "/").replace(" Mbps", ""),
                        fontsize=7, ha="left", va="center", color="k", path_effects=halo)
    fig.colorbar(im, ax=ax, label="tier", ticks=range(1, entry["row"]["M"] + 1))
    ax.set_yticks(range(k))
    ax.set(xlabel="round", ylabel="client", title=f"tier per client and round (M = {entry['row']['M']}, "
           f"{entry['row']['case']}, {entry['row']['setting']}); labels: CPUs/Mbps at each change")
    ax = axes[1, 0]
    r = np.arange(1, rounds + 1)
    ax.bar(r, sim["comp_s"], color=colour(0), label="straggler computation")
    ax.bar(r, sim["comm_s"], bottom=sim["comp_s"], color=colour(1), label="straggler communication")
    ax.set(xlabel="round", ylabel="round time (s)", xlim=(0.5, rounds + 0.5))
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig



def diagnostics(entry: dict) -> dict:
    """Beyond the paper, for one DTFL run (an entry of :func:`fedlib.lab.dtfl.experiments.run_entry`): per evaluation
    the global model's test accuracy with md8 (``test_acc``) and with the top tier's averaged auxiliary head in its
    place (``test_acc_aux``, None before a client trained in the top tier; the md8 lag is their difference), and
    the tier histogram ``tier_counts`` ``[R][M]`` (participants per tier and round). Plain lists (JSON)."""
    rec, sim, row = entry["record"], entry["sim"], entry["row"]
    tiers = np.asarray(sim["tiers"])
    part = (np.ones(tiers.shape, bool) if sim.get("participants") is None else np.asarray(sim["participants"], bool))
    counts = [[int(((tiers[r] == m) & part[r]).sum()) for m in range(1, row["M"] + 1)] for r in range(len(tiers))]
    return {"setting": row["setting"], "model": row["model"], "seed": row["seed"], "M": row["M"],
            "round": list(rec["round"]), "test_acc": list(rec["test_acc"]),
            "test_acc_aux": list(rec.get("test_acc_aux", [None] * len(rec["round"]))), "tier_counts": counts}


def diagnostics_figure(entries: list[dict]):
    """One column per run: top, test accuracy per round of the global model with md8 and with the top tier's
    averaged auxiliary head in md8's place (the md8 lag, :func:`diagnostics`); bottom, the tier histogram over
    rounds (clients per tier, stacked)."""
    diags = [diagnostics(e) for e in entries]
    fig, axes = new_figure(nrows=2, ncols=len(diags), width=4.2, height=2.8)
    for j, d in enumerate(diags):
        ax = axes[0, j]
        ax.plot(d["round"], d["test_acc"], "o-", ms=3, color=colour(0), label="global model (md1..md8)")
        aux = [(r, a) for r, a in zip(d["round"], d["test_acc_aux"]) if a is not None]
        if aux:
            ax.plot(*zip(*aux), "s--", ms=3, color=colour(1), label="md1..md7 + top tier's aux head")
        else:
            ax.text(0.5, 0.5, "no client trained in the top tier:\nno aux-head score", ha="center", va="center",
                    transform=ax.transAxes, fontsize=7)
        ax.set(xlabel="round", ylabel="test accuracy",
               title=f"{d['model']}, {d['setting']}, seed {d['seed']}: md8 vs aux head")
        ax.legend(fontsize=6, loc="lower right")
        ax = axes[1, j]
        counts = np.asarray(d["tier_counts"], float)
        r = np.arange(1, len(counts) + 1)
        bottom = np.zeros(len(counts))
        cmap = matplotlib.colormaps["viridis"]
        for m in range(counts.shape[1]):
            ax.bar(r, counts[:, m], bottom=bottom, color=cmap(m / max(1, counts.shape[1] - 1)),
                   edgecolor="0.3", lw=0.3, label=f"tier {m + 1}")
            bottom += counts[:, m]
        ax.set(xlabel="round", ylabel="clients", title="tier histogram over rounds", xlim=(0.5, len(counts) + 0.5))
        ax.legend(fontsize=5.5, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.28))
    fig.tight_layout()
    return fig
