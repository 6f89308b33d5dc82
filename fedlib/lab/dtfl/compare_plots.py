"""What the figures of DTFL against its baselines share: Fig. 2 (accuracy vs simulated time, every method), drawn by
``dtfl_5_baselines`` and ``dtfl_your_method``; the methods' labels, colours, line styles and order, which Fig. 2,
Table 3 (``dtfl_5_baselines``) and Table 4 (``dtfl_6_scaling``) share; the label of a missed accuracy (Table 4).
Entries are those of :mod:`fedlib.lab.dtfl.compare`."""
from __future__ import annotations

import zlib
from decimal import ROUND_FLOOR, Decimal

import numpy as np

from fedlib.lab.plotting import colour, new_figure
from fedlib.lab.dtfl.compare import METHODS

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
