"""Figures of the DTFL notebooks: Table 1 (time to target per single tier, two cases), Table 2 (normalised
per-tier client / server time, ours vs the paper's), Fig. 3 (time to target vs the number of tiers); and the
diagnostics of a DTFL run that ``dtfl_4_training`` draws and records (:func:`diagnostics`). Rows are the metrics rows of
:func:`fedlib.lab.dtfl.experiments.run_entry`; several seeds give the mean and a min-max band (error bars)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from fedlib.lab.plotting import colour, new_figure
from fedlib.lab.dtfl.experiments import PAPER_TABLE1, PAPER_TABLE2


def _stats(values):
    v = [x for x in values if x is not None]
    if not v:
        return None, None, None
    return float(np.mean(v)), float(np.min(v)), float(np.max(v))


def table1_figure(rows: list[dict], cases: list[str]):
    """Table 1: per tier (all clients in it) the computation and communication time to the target (stacked
    bars, mean over seeds; error bar = min-max of the total), one panel per case, with the paper's totals
    normalised to our tier-1 total as a grey line (shape comparison only: the paper's are CIFAR-10 seconds)."""
    fig, axes = new_figure(ncols=len(cases) + 0, width=4.6)
    for ax, case in zip(axes[0], cases):
        sel = [r for r in rows if r["case"] == case and r["tier"] is not None]
        tiers = sorted({r["tier"] for r in sel})
        comp = [_stats(r["comp_time_s"] for r in sel if r["tier"] == t) for t in tiers]
        comm = [_stats(r["comm_time_s"] for r in sel if r["tier"] == t) for t in tiers]
        tot = [_stats(r["time_to_target_s"] for r in sel if r["tier"] == t) for t in tiers]
        x = np.arange(len(tiers))
        c0 = np.array([c[0] if c[0] is not None else np.nan for c in comp])
        c1 = np.array([c[0] if c[0] is not None else np.nan for c in comm])
        ax.bar(x, c0, 0.6, color=colour(0), label="computation")
        ax.bar(x, c1, 0.6, bottom=c0, color=colour(1), label="communication")
        lo = [t[0] - t[1] if t[0] is not None else 0 for t in tot]
        hi = [t[2] - t[0] if t[0] is not None else 0 for t in tot]
        ax.errorbar(x, c0 + c1, yerr=[lo, hi], fmt="none", ecolor="k", capsize=3, lw=0.8)
        for i, t in enumerate(tot):
            if t[0] is None:
                ax.text(x[i], 0, "not\nreached", ha="center", va="bottom", fontsize=6)
        if case in PAPER_TABLE1 and len(tiers) == 6 and np.isfinite(c0[0] + c1[0]):
            paper = np.asarray(PAPER_TABLE1[case]["total"], float)
            ax.plot(x, paper / paper[0] * (c0[0] + c1[0]), "o--", color="0.5", ms=3,
                    label="paper total (scaled to our tier 1)")
        ax.set(xticks=x, xticklabels=[str(t) for t in tiers], xlabel="tier (all clients in it)",
               ylabel="simulated time to target (s)", title=f"{case}: time to target per tier")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def table2_figure(ours: dict[str, dict], paper: dict = PAPER_TABLE2):
    """Table 2: client- and server-side training time per tier relative to tier 1, ours (one line per entry of
    ``ours``: name -> ``{"client": [M], "server": [M]}``) beside the paper's (black)."""
    fig, axes = new_figure(ncols=2)
    for ax, side in zip(axes[0], ("client", "server")):
        ax.plot(np.arange(1, len(paper[side]) + 1), paper[side], "ko-", label="paper (ResNet-56, measured)")
        for i, (name, r) in enumerate(ours.items()):
            ax.plot(np.arange(1, len(r[side]) + 1), r[side], "s--", color=colour(i), ms=4, label=name)
        ax.set(xlabel="tier", ylabel=f"{side}-side time / tier 1", title=f"{side}-side training time (normalised)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def fig3_figure(rows: list[dict], cases: list[str]):
    """Fig. 3: total simulated time to the target vs the number of tiers M, one line per case (mean over seeds,
    band = min-max); rounds to target beside it; M values whose runs coincide (same time and final accuracy) are named
    on the figure."""
    fig, axes = new_figure(ncols=2)
    for i, case in enumerate(cases):
        by_m = defaultdict(list)
        for r in rows:
            if r["case"] == case and r["tier"] is None:
                by_m[r["M"]].append(r)
        ms = sorted(by_m)
        for ax, key in zip(axes[0], ("time_to_target_s", "rounds_to_target")):
            st = [_stats(r[key] for r in by_m[m]) for m in ms]
            ok = [j for j, s in enumerate(st) if s[0] is not None]
            xs = [ms[j] for j in ok]
            ax.plot(xs, [st[j][0] for j in ok], "o-", color=colour(i), label=case)
            ax.fill_between(xs, [st[j][1] for j in ok], [st[j][2] for j in ok], color=colour(i), alpha=0.2)
            for j, s in enumerate(st):                               # not reached: × at the top of the panel
                if s[0] is None:
                    ax.plot(ms[j], 0.97 - 0.05 * i, "x", color=colour(i), ms=7, mew=1.5,
                            transform=ax.get_xaxis_transform(), label=f"{case}: not reached")
        # runs whose clients trained the same modules coincide (e.g. every client in the top tiers): say so
        groups = defaultdict(list)
        for m in ms:
            groups[tuple((r["time_to_target_s"], r["final_test_acc"]) for r in by_m[m])].append(m)
        for sig, same in groups.items():
            if len(same) > 1 and sig[0][0] is not None:
                axes[0, 0].annotate(f"{case}: M = {', '.join(map(str, same))} identical runs", (same[0], sig[0][0]),
                                    textcoords="offset points", xytext=(0, -14 if i % 2 else 8), fontsize=7,
                                    color=colour(i))
    axes[0, 0].set(xlabel="number of tiers M", ylabel="simulated time to target (s)",
                   title="total training time vs M (× = not reached)")
    axes[0, 1].set(xlabel="number of tiers M", ylabel="rounds to target", title="rounds to target vs M")
    for ax in axes[0]:
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def module_profile_figure(costs_by_model: dict):
    """Per-module profile of each model (``name -> TierCosts`` with M = 7): forward + backward GFLOPs per sample
    of each module md1..md8, smashed data per sample after each module (kB) and parameters per module."""
    fig, axes = new_figure(ncols=3, width=3.8)
    for i, (name, c) in enumerate(costs_by_model.items()):
        p = c.profile
        x = np.arange(1, 9)
        per = np.diff(np.concatenate([[0.0], p.fwd_flops + p.bwd_flops]))
        # models of one input share their smashed-data sizes: markers, line styles and sizes keep them apart
        style = dict(color=colour(i), label=name, marker="osD^v"[i % 5], ls=("-", "--", ":", "-.")[i % 4],
                     ms=7 - 1.5 * (i % 3), mfc="none" if i % 2 else colour(i))
        axes[0, 0].plot(x, per / 1e9, **style)
        axes[0, 1].plot(x, p.act_bits / 8e3, **style)
        axes[0, 2].plot(x, p.params_per_unit, **style)
    axes[0, 0].set(xlabel="module", ylabel="GFLOPs per sample (fwd + bwd)", title="computation per module", yscale="log")
    axes[0, 1].set(xlabel="module", ylabel="kB per sample", title="output (smashed data) per module", yscale="log")
    axes[0, 2].set(xlabel="module", ylabel="parameters", title="parameters per module", yscale="log")
    # say so where curves lie on each other (the smashed data depends on the input and width, not the depth)
    bits = {n: tuple(np.round(c.profile.act_bits, 6)) for n, c in costs_by_model.items()}
    shared = [n for n in bits if sum(b == bits[n] for b in bits.values()) > 1]
    for ax in axes[0]:
        ax.legend(fontsize=7, loc="lower center" if ax is axes[0, 1] else "best",
                  title=("coincide: " + ", ".join(n.split(" ")[0] for n in shared)) if ax is axes[0, 1] and shared
                  else None, title_fontsize=7)
    fig.tight_layout()
    return fig


def diagnostics(rec: dict, sim: dict, row: dict) -> dict:
    """Beyond the paper, for one DTFL run (its training record, simulated system and metrics row:
    :func:`fedlib.lab.dtfl.experiments.run_entry`'s ``record``, ``sim`` and ``row``): per evaluation the global
    model's test accuracy with md8 (``test_acc``) and with the top tier's averaged auxiliary head in its place
    (``test_acc_aux``, None before a client trained in the top tier; the md8 lag is their difference), and the tier
    histogram ``tier_counts`` ``[R][M]`` (participants per tier and round). Plain lists (JSON)."""
    tiers = np.asarray(sim["tiers"])
    part = (np.ones(tiers.shape, bool) if sim.get("participants") is None else np.asarray(sim["participants"], bool))
    counts = [[int(((tiers[r] == m) & part[r]).sum()) for m in range(1, row["M"] + 1)] for r in range(len(tiers))]
    return {"setting": row["setting"], "model": row["model"], "seed": row["seed"], "M": row["M"],
            "round": list(rec["round"]), "test_acc": list(rec["test_acc"]),
            "test_acc_aux": list(rec.get("test_acc_aux", [None] * len(rec["round"]))), "tier_counts": counts}
