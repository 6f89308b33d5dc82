"""Figures of DTFL against its baselines: Fig. 2 (accuracy vs simulated time, every method) and Table 3 (time to
target per method, model and setting; DTFL's saving against each baseline beside the paper's); the methods' labels,
colours and line styles, and the label of a missed accuracy, which ``dtfl_6_scaling``'s Table 4 shares. Rows / entries are
those of :mod:`fedlib.lab.dtfl.compare`; several seeds give mean and min-max."""
from __future__ import annotations

import zlib
from decimal import ROUND_FLOOR, Decimal

import numpy as np

from fedlib.lab.plotting import colour, log_floor, new_figure
from fedlib.lab.dtfl.compare import METHODS, PAPER_TABLE3, paper_reductions, reductions

LABELS = {"dtfl": "DTFL", "fedavg": "FedAvg", "splitfed": "SplitFed", "fedyogi": "FedYogi", "fedgkt": "FedGKT",
          "dtfl_authors": "DTFL (authors' scheduler)"}
#: bar order of Table 3: the paper's methods, then DTFL as the authors' code schedules it (when run)
BAR_METHODS = METHODS + ("dtfl_authors",)
#: line styles of the curves: SplitFed-V1 equals FedAvg round by round (dashed over it), the authors' scheduler dotted
LINE_STYLES = {"splitfed": "--", "dtfl_authors": ":"}


def method_label(method: str) -> str:
    """A method's name in the figures: the paper's spelling for its methods, a method of your own its name."""
    return LABELS.get(method, method)


def method_colour(method: str):
    """One colour per method in every figure (the authors'-scheduler DTFL its own, apart from DTFL's); a method of
    your own one of the palette's free colours, the same in every figure (from its name)."""
    if method in BAR_METHODS:
        return colour(BAR_METHODS.index(method))
    return colour(len(BAR_METHODS) + zlib.crc32(str(method).encode()) % (10 - len(BAR_METHODS)))


def line_style(method: str) -> str:
    """SplitFed dashed over FedAvg, the authors' scheduler dotted, a method of your own dash-dotted."""
    return LINE_STYLES.get(method, "-" if method in BAR_METHODS else "-.")


def methods_of(rows: list[dict]) -> list[str]:
    """The methods of ``rows`` in the figures' order: the paper's (:data:`BAR_METHODS`), then any other name in the
    order it first appears (a method of your own is drawn, never dropped)."""
    names = list(dict.fromkeys(r["method"] for r in rows))
    return [m for m in BAR_METHODS if m in names] + [m for m in names if m not in BAR_METHODS]


def _mean(values):
    v = [x for x in values if x is not None]
    return (float(np.mean(v)), float(np.min(v)), float(np.max(v))) if v else (None, None, None)


def _whiskers(ax, x, stats) -> None:
    """Min–max whiskers at bar positions ``x`` from ``(mean, min, max)`` triples (None: nothing drawn)."""
    for xi, (mean, lo, hi) in zip(x, stats):
        if mean is not None:
            ax.errorbar(xi, mean, yerr=[[mean - lo], [hi - mean]], fmt="none", ecolor="k", elinewidth=0.8,
                        capsize=1.5)


def fig2_accuracy_vs_time(entries: list[dict], setting: str, model: str, num_clients: int | None = None):
    """Fig. 2: global test accuracy vs simulated time (s) of every method in one (setting, model), one line per
    method and seed (FedGKT: the mean of the participants' composite models; DTFL with the authors' scheduler
    dotted in DTFL's colour); the target as a grey dotted line; right panel: accuracy vs round. With several seeds
    the legend names each method once ("seeds 0, 1, 2"; a method's seeds share its colour) in the lower right,
    where the curves have risen above it."""
    fig, axes = new_figure(ncols=2, width=4.6)
    sel = [e for e in entries if e["row"]["setting"] == setting and e["row"]["model"] == model
           and (num_clients is None or e["row"]["num_clients"] == num_clients)]
    seeds = sorted({e["row"]["seed"] for e in sel})
    named = set()
    for e in sel:
        m = e["row"]["method"]
        if len(seeds) == 1:
            label = f"{method_label(m)} (seed {e['row']['seed']})"
        else:
            label = None if m in named else f"{method_label(m)} (seeds {', '.join(str(s) for s in seeds)})"
            named.add(m)
        t = np.concatenate([[0.0], np.cumsum(e["sim"]["round_s"])])
        c = method_colour(m)
        rounds = e["record"]["round"]
        # SplitFed-V1 = FedAvg round by round (dashed over it); DTFL with the authors' scheduler dotted
        ls = line_style(m)
        axes[0, 0].plot(t[rounds], e["record"]["test_acc"], "o", ls=ls, ms=2.5, color=c,
                        label=label)
        axes[0, 1].plot(rounds, e["record"]["test_acc"], "o", ls=ls, ms=2.5, color=c, label=method_label(m))
    for ax in axes[0]:
        if sel:
            ax.axhline(sel[0]["row"]["target_acc"], color="0.6", lw=0.7, ls=":")
        ax.set(ylabel="test accuracy (global model)")
    axes[0, 0].set(xlabel="simulated training time (s)", title=f"{model}, {setting}: accuracy vs time")
    drawn = {e["row"]["method"] for e in sel}
    axes[0, 1].set(xlabel="round", title="accuracy vs round" + (" (SplitFed dashed: it equals FedAvg)"
                                                                if {"splitfed", "fedavg"} <= drawn else ""))
    axes[0, 0].legend(fontsize=6, loc="lower right" if len(seeds) > 1 else "best")
    fig.tight_layout()
    return fig


def table3_figure(rows: list[dict], paper_model: str = "resnet110"):
    """Table 3: time to target per method for each (model, setting) (bars, log scale from a third of the smallest
    time, mean over seeds; "not reached" marked ×; DTFL with the authors' scheduler hatched when run), and DTFL's
    saving against each baseline (1 − DTFL / baseline) beside the paper's for CIFAR-10 with the same model where
    the paper has it (ResNet-56, ResNet-110), else ``paper_model`` ("n/r": DTFL or the baseline did not reach the
    target). With several seeds both panels show the mean over the seeds that reached the target with min–max
    whiskers, and the axis labels say so."""
    groups = sorted({(r["model"], r["setting"]) for r in rows})
    methods = methods_of(rows)
    seeds = sorted({r["seed"] for r in rows})
    multi = len(seeds) > 1
    over = f"\nmean of seeds {', '.join(str(s) for s in seeds)}, whiskers min–max" if multi else ""
    fig, axes = new_figure(ncols=2, width=5.2)
    ax = axes[0, 0]
    w = 0.8 / len(methods)
    for j, m in enumerate(methods):
        vals = [_mean(r["time_to_target_s"] for r in rows if (r["model"], r["setting"]) == g and r["method"] == m)
                for g in groups]
        x = np.arange(len(groups)) + (j - len(methods) / 2 + 0.5) * w
        col = method_colour(m)
        ax.bar(x, [v[0] or 0 for v in vals], w, color=col, label=method_label(m),
               hatch="///" if m == "dtfl_authors" else None, edgecolor="w" if m == "dtfl_authors" else None)
        if multi:
            _whiskers(ax, x, vals)
        ran = [any((r["model"], r["setting"]) == g and r["method"] == m for r in rows) for g in groups]
        for xi, v, did in zip(x, vals, ran):
            if did and (v[0] is None or v[0] == 0):                   # at the axis' foot (axes coordinates)
                ax.text(xi, 0.01, "×" if v[0] is None else "0", ha="center", va="bottom", fontsize=8, color=col,
                        transform=ax.get_xaxis_transform())
    ax.set(xticks=np.arange(len(groups)), xticklabels=[f"{m}\n{s}" for m, s in groups], yscale="log",
           ylabel="simulated time to target (s)", title="time to target (× = not reached, 0 = before training)" + over)
    ax.set_ylim(bottom=log_floor(r["time_to_target_s"] for r in rows))
    ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.27 if multi else -0.2))  # below ticks
    ax = axes[0, 1]
    red = reductions(rows)
    paper = {g: paper_reductions(g[0] if g[0] in PAPER_TABLE3 else paper_model) for g in groups}
    for j, m in enumerate(METHODS[1:], start=1):
        stats = [_mean(r["reduction"] for r in red if r["baseline"] == m and (r["model"], r["setting"]) == g)
                 for g in groups]
        ours = [v[0] for v in stats]
        x = np.arange(len(groups)) + (j - 2.5) * 0.2
        ax.bar(x, [100 * v if v is not None else 0 for v in ours], 0.2, color=method_colour(m), label=f"vs {method_label(m)}")
        if multi:
            _whiskers(ax, x, [tuple(None if u is None else 100 * u for u in v) for v in stats])
        for xi, g, v in zip(x, groups, ours):
            p = paper[g][m][0 if g[1] == "iid" else 1]
            ax.plot([xi - 0.1, xi + 0.1], [100 * p] * 2, "k-", lw=1.2)
            if v is None:
                ax.text(xi, 0, "n/r", ha="center", va="bottom", fontsize=5.5, rotation=90, color=method_colour(m))
    ax.axhline(0, color="0.3", lw=0.6)
    ax.set(xticks=np.arange(len(groups)), xticklabels=[f"{m}\n{s}" for m, s in groups],
           ylabel="DTFL's time saving (%)",
           title=f"saving vs each baseline (n/r: not reached)\nblack: paper, CIFAR-10, same model, else {paper_model}"
           + over)
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def missed_label(best: float, target: float) -> str:
    """A best accuracy that missed ``target``, in percent with as many decimals as it takes (two at least, cut,
    never rounded up) to read below the target: 0.7075 against 0.71 is ``"70.75 %"`` (rounded it read "0.71", the
    target). A value at or above the target (not a miss) gets two decimals."""
    for d in range(2, 8):
        q = Decimal(1).scaleb(-d)
        text = f"{(Decimal(repr(float(best))) * 100).quantize(q, rounding=ROUND_FLOOR)} %"
        if best >= target or text != f"{(Decimal(repr(float(target))) * 100).quantize(q, rounding=ROUND_FLOOR)} %":
            return text
    return f"{100 * best!r} %"
