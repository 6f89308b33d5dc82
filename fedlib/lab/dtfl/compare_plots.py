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
#: the line styles of methods of your own (import paths), the first for the first of them; a further one takes the
#: next where the palette's free colours are spent
OWN_LINES = ("-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (6, 2)))
#: the palette's colours no paper method takes, each a method of your own's
FREE_COLOURS = 10 - len(BAR_METHODS)


def method_label(method: str, yours: bool = False) -> str:
    """A method's name in the figures: the paper's spelling for its methods, a method of your own its name (with
    ``yours``: its import path and "(yours)", so a reader tells it from the paper's)."""
    if method in LABELS:
        return LABELS[method]
    return f"{method} (yours)" if yours else method


def _own_styles(among) -> dict:
    """``{path: (colour slot, line-style index)}`` of the methods of your own in ``among`` (the methods one figure
    draws, in order): each takes the free colour its name hashes to (the same in every figure where it is alone),
    or where an earlier one holds it the next free one; past :data:`FREE_COLOURS` paths the line style changes, so
    two paths of one figure never share colour and line."""
    out = {}
    for m in dict.fromkeys(m for m in among if m not in BAR_METHODS):
        slot, line = zlib.crc32(str(m).encode()) % FREE_COLOURS, len(out) // FREE_COLOURS
        while (slot, line) in out.values():               # held by an earlier path: the next free colour
            slot = (slot + 1) % FREE_COLOURS
        out[m] = (slot, line)
    return out


def method_colour(method: str, among=()):
    """One colour per method in every figure (the authors'-scheduler DTFL its own, apart from DTFL's); a method of
    your own one of the palette's free colours, from its name, and apart from the other methods of your own that
    ``among`` (the methods the figure draws) holds (:func:`_own_styles`)."""
    if method in BAR_METHODS:
        return colour(BAR_METHODS.index(method))
    slot, _ = _own_styles(list(among) + [method])[method]
    return colour(len(BAR_METHODS) + slot)


def line_style(method: str, among=()):
    """SplitFed dashed over FedAvg, the authors' scheduler dotted, a method of your own dash-dotted (a further one
    of ``among``, past the free colours, another line: :data:`OWN_LINES`)."""
    if method in BAR_METHODS:
        return LINE_STYLES.get(method, "-")
    _, line = _own_styles(list(among) + [method])[method]
    return OWN_LINES[line % len(OWN_LINES)]


def methods_of(rows: list[dict]) -> list[str]:
    """The methods of ``rows`` in the figures' order: the paper's (:data:`BAR_METHODS`), then any other name in the
    order it first appears (a method of your own is drawn, never dropped)."""
    names = list(dict.fromkeys(r["method"] for r in rows))
    return [m for m in BAR_METHODS if m in names] + [m for m in names if m not in BAR_METHODS]


def fig2_accuracy_vs_time(entries: list[dict], setting: str, model: str, num_clients: int | None = None,
                          yours: bool = False):
    """Fig. 2: global test accuracy vs simulated time (s) of every method in one (setting, model), one line per
    method and seed (FedGKT: the mean of the participants' composite models; DTFL with the authors' scheduler
    dotted in DTFL's colour); the target as a grey dotted line; right panel: accuracy vs round. With several seeds
    the legend names each method once ("seeds 0, 1, 2"; a method's seeds share its colour) in the lower right,
    where the curves have risen above it. A method of your own (an import path) is drawn in a colour and line of
    its own (:func:`method_colour`, :func:`line_style` among the figure's methods); with ``yours`` its label says
    "(yours)"."""
    fig, axes = new_figure(ncols=2, width=4.6)
    sel = [e for e in entries if e["row"]["setting"] == setting and e["row"]["model"] == model
           and (num_clients is None or e["row"]["num_clients"] == num_clients)]
    seeds = sorted({e["row"]["seed"] for e in sel})
    drawn = methods_of([e["row"] for e in sel])
    named = set()
    for e in sel:
        m = e["row"]["method"]
        if len(seeds) == 1:
            label = f"{method_label(m, yours)} (seed {e['row']['seed']})"
        else:
            label = None if m in named else f"{method_label(m, yours)} (seeds {', '.join(str(s) for s in seeds)})"
            named.add(m)
        t = np.concatenate([[0.0], np.cumsum(e["sim"]["round_s"])])
        c = method_colour(m, drawn)
        rounds = e["record"]["round"]
        # SplitFed-V1 = FedAvg round by round (dashed over it); DTFL with the authors' scheduler dotted
        ls = line_style(m, drawn)
        axes[0, 0].plot(t[rounds], e["record"]["test_acc"], "o", ls=ls, ms=2.5, color=c,
                        label=label)
        axes[0, 1].plot(rounds, e["record"]["test_acc"], "o", ls=ls, ms=2.5, color=c, label=method_label(m, yours))
    for ax in axes[0]:
        if sel:
            ax.axhline(sel[0]["row"]["target_acc"], color="0.6", lw=0.7, ls=":")
        ax.set(ylabel="test accuracy (global model)")
    axes[0, 0].set(xlabel="simulated training time (s)", title=f"{model}, {setting}: accuracy vs time")
    axes[0, 1].set(xlabel="round", title="accuracy vs round" + (" (SplitFed dashed: it equals FedAvg)"
                                                                if {"splitfed", "fedavg"} <= set(drawn) else ""))
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
