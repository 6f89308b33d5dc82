"""A per-device timeline of one round of split training on the simulated clock: when each device computes, sends,
waits for the server and receives, and how long it then waits for the slowest device (a Gantt chart).

The papers' latency models charge a round as phases that end at a barrier: HASFL's T_S (eq. 38) is the slowest
device's forward + upload, then the server, then the slowest device's download + backward, and its aggregation
round T_A (eq. 39) two more barriers; DTFL's round (eq. 5) is one phase that ends with the slowest client. This
module lays such phases out in time (:func:`build_timeline`) and draws them (:func:`draw_timeline`,
:func:`timeline_figure`). It computes no latency of its own: every duration comes from the paper's adapter
(:mod:`fedlib.lab.hasfl.figures.timeline`, :mod:`fedlib.lab.dtfl.timeline`), which reads it from the paper's latency
functions, and :func:`build_timeline` refuses a layout whose end differs from the model's round latency.

Layout (:func:`build_timeline`): the phases run one after another; in a phase every row (a device, or a server)
runs its stages one after another from the phase's start, and the steps of one stage side by side (DTFL: the
client's compute beside its server copy's); a stage lasts as long as its longest step. The phase ends when its
slowest row ends (the barrier); a row that did work in the phase and ends earlier waits until then (kind
``"wait"``). A row with no work in a phase (a server while the devices compute) is idle there, not waiting.

Units: seconds from the round's start. Shapes: R rows, the first ``devices`` of them devices, then the servers.
Segment kinds: :data:`KINDS`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fedlib.core.validate import ParameterTypeError, check_array, check_choice, check_float, check_instance, check_int

#: segment kinds: device (or server) compute, uplink, server compute, downlink, and the wait at a barrier
KINDS = ("compute", "uplink", "server", "downlink", "wait")
#: device rows labelled at most (more devices: every k-th labelled, and rows past this many drawn thinner)
LABELLED_ROWS = 24
#: inches per panel of an explorer's two-panel timeline: two panels fit a JupyterLab cell (about 10 in at 100 dpi) unscaled
EXPLORER_PANEL_IN = 4.8
#: relative tolerance of the layout's end against the model's round latency (float rounding of the sums only)
RTOL = 1e-12


@dataclass(frozen=True)
class Segment:
    """One bar of a row: ``kind`` (one of :data:`KINDS`) from ``start`` to ``end`` (seconds from the round's start),
    ``term`` (the model's term, e.g. ``"T_F (28)"``), ``lane`` (None: the whole row; 0 / 1: upper / lower half, where
    two steps of one row run side by side)."""

    kind: str
    start: float
    end: float
    term: str = ""
    lane: int | None = None

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Step:
    """One piece of work of every row in a stage: ``kind`` (a :data:`KINDS` entry other than ``"wait"``), the
    model's ``term`` and ``durations`` (``[R]`` seconds >= 0; 0: the row does nothing here)."""

    kind: str
    term: str
    durations: np.ndarray


@dataclass(frozen=True)
class Timeline:
    """One round laid out (:func:`build_timeline`).

    Attributes:
        names: ``[R]`` row labels. segments: per row, its :class:`Segment` s in time order. devices: the first
        ``devices`` rows are devices, the rest servers. latency: the end of the last phase (s). phases: ``(start,
        end)`` of each phase (s). model_latency: the round latency the paper's model computes (s), which
        ``latency`` equals to float precision. source: what computed ``model_latency`` (e.g. ``"T_S + T_A, eqs.
        38-39"``). marks: ``(time, label)`` of further instants to draw (e.g. the end of T_S).
    """

    names: tuple
    segments: tuple
    devices: int
    latency: float
    phases: tuple
    model_latency: float
    source: str
    marks: tuple = ()

    def finish(self) -> np.ndarray:
        """``[R]`` seconds: the end of each row's last segment that is not a wait (0 for a row without work)."""
        return np.array([max((s.end for s in row if s.kind != "wait"), default=0.0) for row in self.segments])

    def final_wait(self) -> np.ndarray:
        """``[R]`` seconds: each row's wait at the round's end, i.e. its last segment if that is a wait, else 0."""
        return np.array([row[-1].duration if row and row[-1].kind == "wait" else 0.0 for row in self.segments])

    def busy(self, row: int, phase: int) -> float:
        """Seconds row ``row`` is occupied in phase ``phase`` (its last non-wait end there minus the phase's start;
        0 without work)."""
        start, end = self.phases[phase]
        ends = [s.end for s in self.segments[row] if s.kind != "wait" and start <= s.start < end]
        return max(ends) - start if ends else 0.0

    def device_order(self) -> list[int]:
        """Device rows sorted by finishing time (the earliest first; ties by index)."""
        fin = self.finish()[: self.devices]
        return sorted(range(self.devices), key=lambda i: (fin[i], i))


def _check_step(step, rows: int, where: str) -> Step:
    check_instance(where, step, Step, "a fedlib.lab.split.timeline.Step")
    check_choice(f"{where}.kind", step.kind, KINDS[:-1])
    if not isinstance(step.term, str):
        raise ParameterTypeError(f"{where}.term must be a string, got {step.term!r}")
    d = check_array(f"durations of {step.term or where}", step.durations, low=0)
    if d.shape != (rows,):
        raise ValueError(f"durations of {step.term or where} must hold one entry per row (R = {rows}), got shape "
                         f"{d.shape}")
    return Step(step.kind, step.term, d)


def build_timeline(names, phases, model_latency: float, source: str, devices: int | None = None,
                   marks=()) -> Timeline:
    """Lay out one round of phases (module docstring) and check its end against the model's round latency.

    Args:
        names: ``[R]`` row labels (strings), the devices first. phases: a list of phases, each a list of stages,
            each a list of one or two :class:`Step` s (two: side by side, lanes 0 and 1). model_latency: the paper's
            round latency (s, finite, > 0). source: what computed it (a label). devices: how many of the rows are
            devices (default all). marks: ``(time, label)`` pairs (s) to draw as dotted lines.

    Returns:
        A :class:`Timeline`; its ``latency`` is the sum of the phases' lengths.

    Raises:
        ValueError / ParameterTypeError: names not R >= 1 strings, a phase or stage empty, a stage of more than two
            steps, an unknown kind, durations not ``[R]`` finite numbers >= 0 (naming the term), model_latency not
            finite > 0, devices outside 1..R, a mark not (finite time >= 0, label).
        RuntimeError: the layout's end differs from ``model_latency`` by more than float rounding (:data:`RTOL`):
            the adapter dropped or doubled a term.
    """
    if isinstance(names, str) or not isinstance(names, (list, tuple)) or not names:
        raise ParameterTypeError(f"names must be a non-empty list of row labels, got {names!r}")
    if not all(isinstance(n, str) for n in names):
        raise ParameterTypeError(f"names must be strings, got {names!r}")
    rows = len(names)
    devices = check_int("devices", rows if devices is None else devices, 1, rows, extra=f" (rows: R = {rows})")
    model_latency = check_float("model_latency", model_latency, 0, low_open=True)
    if not isinstance(source, str):
        raise ParameterTypeError(f"source must be a string, got {source!r}")
    if not isinstance(phases, (list, tuple)) or not phases:
        raise ParameterTypeError(f"phases must be a non-empty list of phases, got {phases!r}")
    segments = [[] for _ in range(rows)]
    spans, t = [], 0.0
    for p, phase in enumerate(phases):
        if not isinstance(phase, (list, tuple)) or not phase:
            raise ValueError(f"phases[{p}] must be a non-empty list of stages, got {phase!r}")
        row_t = np.full(rows, t)
        worked = np.zeros(rows, dtype=bool)
        for s, stage in enumerate(phase):
            if not isinstance(stage, (list, tuple)) or not 1 <= len(stage) <= 2:
                raise ValueError(f"phases[{p}][{s}] must be a list of one or two steps (two run side by side), got "
                                 f"{stage!r}")
            steps = [_check_step(st, rows, f"phases[{p}][{s}][{k}]") for k, st in enumerate(stage)]
            length = np.max([st.durations for st in steps], axis=0)
            both = np.sum([st.durations > 0 for st in steps], axis=0) > 1    # a row with two steps at once
            for k, st in enumerate(steps):
                for i in np.flatnonzero(st.durations > 0):
                    segments[i].append(Segment(st.kind, float(row_t[i]), float(row_t[i] + st.durations[i]), st.term,
                                               k if both[i] else None))
            worked |= length > 0
            row_t = row_t + length
        end = float(row_t.max())
        for i in np.flatnonzero(worked & (row_t < end)):
            segments[i].append(Segment("wait", float(row_t[i]), end, "wait for the slowest"))
        spans.append((t, end))
        t = end
    checked_marks = []
    for m in marks:
        if not isinstance(m, (list, tuple)) or len(m) != 2 or not isinstance(m[1], str):
            raise ParameterTypeError(f"marks must be (time, label) pairs, got {m!r}")
        checked_marks.append((check_float("mark time", m[0], 0), m[1]))
    if not abs(t - model_latency) <= RTOL * model_latency:
        raise RuntimeError(f"the timeline ends at {t!r} s, the model's round latency ({source}) is "
                           f"{model_latency!r} s: a term is missing or counted twice")
    return Timeline(tuple(names), tuple(tuple(r) for r in segments), devices, t, tuple(spans), model_latency, source,
                    tuple(checked_marks))


# --- drawing -------------------------------------------------------------------------------------------------------

#: legend text of each kind
KIND_LABELS = {"compute": "compute (device / client)", "uplink": "uplink", "server": "server compute",
               "downlink": "downlink", "wait": "wait for the slowest (hatched)"}


def _kind_style(kind: str) -> dict:
    from fedlib.lab.plotting import colour
    if kind == "wait":
        return {"facecolor": "white", "edgecolor": "0.45", "hatch": "////", "linewidth": 0.5}
    return {"facecolor": colour({"compute": 0, "uplink": 1, "server": 2, "downlink": 4}[kind]), "edgecolor": "white",
            "linewidth": 0.3}


def draw_timeline(ax, timeline: Timeline, title: str = "", xmax: float | None = None) -> list:
    """Draw ``timeline`` on ``ax`` as a Gantt chart: one row per device (sorted by finishing time, the earliest at
    the top), the server rows above them, segments coloured by kind (:data:`KIND_LABELS`; waits hatched; two steps
    of one row side by side share it, one above the other), the round latency as a solid vertical line labelled in
    seconds above the axes, the timeline's marks dotted; the title's further lines give the marks' times. (That the
    layout ends at the model's round latency is :func:`build_timeline`'s check, not the reader's: the title does
    not repeat it.) Above :data:`LABELLED_ROWS` devices, only every k-th device row is labelled.

    Args:
        ax: a matplotlib axes. timeline: :func:`build_timeline`'s. title: the panel's title. xmax: the x-axis'
            upper limit (s; default 4 % past the latency), to share a scale between panels.

    Returns:
        The legend handles (the kinds present, then the lines), for a legend outside the axes.

    Raises:
        ParameterTypeError: ``timeline`` not a :class:`Timeline`, ``title`` not a string. ValueError: ``xmax`` not
            finite > 0.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.transforms import blended_transform_factory
    check_instance("timeline", timeline, Timeline, "a fedlib.lab.split.timeline.Timeline")
    if not isinstance(title, str):
        raise ParameterTypeError(f"title must be a string, got {title!r}")
    tl = timeline
    xmax = 1.04 * tl.latency if xmax is None else check_float("xmax", xmax, 0, low_open=True)
    order = list(range(tl.devices, len(tl.names))) + tl.device_order()       # servers on top, then devices
    from matplotlib.collections import PolyCollection
    boxes: dict = {}                    # one collection per kind (hundreds of bars draw in one artist each)
    for y, row in enumerate(order):
        for seg in tl.segments[row]:
            lo, h = (y - 0.4, 0.8) if seg.lane is None else (y - 0.4 + 0.4 * seg.lane, 0.4)
            x0, x1 = seg.start, seg.start + seg.duration
            boxes.setdefault(seg.kind, []).append([(x0, lo), (x0, lo + h), (x1, lo + h), (x1, lo)])
    for kind in KINDS:
        if kind in boxes:
            ax.add_collection(PolyCollection(boxes[kind], **_kind_style(kind)))
    kinds = set(boxes)
    if tl.devices < len(tl.names):
        ax.axhline(len(tl.names) - tl.devices - 0.5, color="0.6", linewidth=0.6)
    step = -(-tl.devices // LABELLED_ROWS)          # many devices: every step-th device row labelled (and the servers)
    ticks = [y for y, row in enumerate(order) if row >= tl.devices or (y - (len(order) - tl.devices)) % step == 0]
    ax.set_yticks(ticks, [tl.names[order[y]] for y in ticks], fontsize=7 if len(order) > 12 else 8)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(0, xmax)
    ax.set_xlabel("simulated time in the round (s)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    handles = [Patch(label=KIND_LABELS[k], **_kind_style(k)) for k in KINDS if k in kinds]
    lines = [title] if title else []
    for t, label in tl.marks:
        ax.axvline(t, color="0.2", linestyle=":", linewidth=1.3)
        handles.append(Line2D([], [], color="0.2", linestyle=":", linewidth=1.3, label=label))
        lines.append(f"{label} at {t:.4g} s (dotted)")
    ax.axvline(tl.latency, color="black", linewidth=1.4)
    ax.text(tl.latency, 1.005, f"{tl.latency:.4g} s", transform=blended_transform_factory(ax.transData, ax.transAxes),
            ha="center", va="bottom", fontsize=8, fontweight="bold")
    handles.append(Line2D([], [], color="black", linewidth=1.4, label="round latency (its seconds above the line)"))
    ax.set_title("\n".join(lines), fontsize=8.5, pad=14)
    return handles


def timeline_figure(timelines, titles=None, ncols: int | None = None, share_x: str = "row", panel_width: float = 6.4):
    """One panel per timeline (:func:`draw_timeline`), ``ncols`` to a row, one legend below all panels (inside the
    figure, outside every axes). Sized for N = 20 devices (0.2 in per row of a panel; rows past :data:`LABELLED_ROWS` 0.07 in).

    Args:
        timelines: a non-empty list of :class:`Timeline`. titles: one title per timeline (default none). ncols:
            panels per row (default all in one row). share_x: ``"row"`` (the panels of a row on one time scale),
            ``"all"`` (every panel on one scale) or ``"none"``. panel_width: inches per panel (> 0; the explorers
            use 4.8, so that two panels fit a JupyterLab cell, about 10 in, unscaled).

    Returns:
        The matplotlib figure.

    Raises:
        ValueError / ParameterTypeError: an empty list, an entry not a :class:`Timeline`, titles not one string
            per timeline, ncols not an int >= 1, an unknown share_x.
    """
    from fedlib.lab.plotting import new_figure
    if not isinstance(timelines, (list, tuple)) or not timelines:
        raise ParameterTypeError(f"timelines must be a non-empty list of Timeline, got {timelines!r}")
    for i, tl in enumerate(timelines):
        check_instance(f"timelines[{i}]", tl, Timeline, "a fedlib.lab.split.timeline.Timeline")
    titles = [""] * len(timelines) if titles is None else titles
    if not isinstance(titles, (list, tuple)) or len(titles) != len(timelines) or \
            not all(isinstance(t, str) for t in titles):
        raise ParameterTypeError(f"titles must be one string per timeline ({len(timelines)}), got {titles!r}")
    ncols = check_int("ncols", len(timelines) if ncols is None else ncols, 1)
    check_choice("share_x", share_x, ("row", "all", "none"))
    panel_width = check_float("panel_width", panel_width, 0, low_open=True)
    nrows = -(-len(timelines) // ncols)
    rows = max(len(tl.names) for tl in timelines)
    legend_in = 0.4                                             # two legend rows below the panels
    panel = 1.8 + 0.2 * min(rows, LABELLED_ROWS) + 0.07 * max(rows - LABELLED_ROWS, 0)   # thinner rows past 24
    fig, axes = new_figure(ncols=ncols, nrows=nrows, width=panel_width, height=panel + legend_in / nrows)
    handles = {}
    for k, ax in enumerate(axes.flat):
        if k >= len(timelines):
            ax.set_visible(False)
            continue
        same = {"all": timelines, "row": timelines[k - k % ncols: k - k % ncols + ncols], "none": [timelines[k]]}
        xmax = 1.04 * max(tl.latency for tl in same[share_x])
        for h in draw_timeline(ax, timelines[k], titles[k], xmax):
            handles.setdefault(h.get_label(), h)
    _fixed_margins(fig, axes, timelines, titles, legend_in)
    fig.legend(handles=list(handles.values()), loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=4, fontsize=7.5,
               frameon=False)
    return fig


def _fixed_margins(fig, axes, timelines, titles, legend_in: float) -> None:
    """The panels' margins from the measured width of the longest row label and the title's lines (what
    ``tight_layout`` would find, without laying out every text of the figure: a tenth of the time): left of each
    panel its labels, above it its title and the latency's label, below it the axis label, under all the legend."""
    from matplotlib.font_manager import FontProperties
    renderer = fig.canvas.get_renderer()
    nrows, ncols = axes.shape
    size = 7 if max(len(tl.names) for tl in timelines) > 12 else 8
    label_in = max(renderer.get_text_width_height_descent(name, FontProperties(size=size), False)[0]
                   for tl in timelines for name in tl.names) / fig.dpi + 0.2      # tick labels, ticks and pad
    lines = max(len([t for t in [title] if t]) + len(tl.marks) for tl, title in zip(timelines, titles))
    top_in, bottom_in, right_in = 0.42 + 0.15 * lines, 0.5, 0.15
    width, height = fig.get_size_inches()
    gap_w, gap_h = label_in + right_in, top_in + bottom_in
    axes_w = (width - label_in - right_in - (ncols - 1) * gap_w) / ncols
    axes_h = (height - top_in - bottom_in - legend_in - (nrows - 1) * gap_h) / nrows
    fig.subplots_adjust(left=label_in / width, right=1 - right_in / width, top=1 - top_in / height,
                        bottom=(bottom_in + legend_in) / height, wspace=gap_w / axes_w, hspace=gap_h / axes_h)
