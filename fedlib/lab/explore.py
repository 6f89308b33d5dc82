"""The explorers' shared machinery: controls (ipywidgets) that drive a plain compute function, whose result is drawn
by views into display areas that update in place; bad input is shown in place as one message, never a traceback.

An explorer (``notebooks/<paper>/<paper>_explore.ipynb``) is three things a paper module supplies:

- :class:`Control` s: each one input, with its type, its range (a slider cannot reach a value outside it) and its
  default (the notebook's parameter);
- ``compute(**values) -> dict``: a plain function of the controls' values that only calls the library (the tests
  call it directly); it raises ``ValueError`` / :class:`fedlib.core.validate.ParameterTypeError` naming the field
  for bad input, as every library function does;
- views ``view(result) -> displayable`` (a :class:`fedlib.lab.story` table, a matplotlib figure, markdown);
- ``to_json(result) -> str``: the state shown as JSON text, what :meth:`Explorer.export` writes.

:meth:`Explorer.show` draws the views of the default values as ordinary outputs (so papermill's copy and the site
show the default state, with no widget script) and, beside them, the controls. In a live kernel (JupyterLab)
moving a control recomputes and replaces each view's output in place (``IPython.display`` display handles, not an
``Output`` widget, whose contents only a widget manager can render). Under papermill no control moves, so the
notebook draws its defaults. Actions (:class:`Action`: a button, e.g. a sweep) run on a click with a progress bar
and draw into their own area; each also runs once at the defaults, so the papermill copy shows it.

Errors a user can cause (``ValueError`` and :class:`fedlib.core.validate.ParameterTypeError`, which the library's
validators raise naming the field) are shown as one line; anything else (a ``KeyError``, a ``TypeError``) is a bug,
shown as its type and message with a pointer to the kernel log (the traceback goes to the log, not the page).
"""
from __future__ import annotations

import html
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from fedlib.core.validate import check_choice, check_float, check_int, check_str

log = logging.getLogger(__name__)

KINDS = ("float", "int", "range", "choice", "text")
ROW_WIDTH = "48em"
"""A control's width: its label (18em), then the slider and its readout, or the dropdown or text box."""
READOUT_PX = 76
"""What a slider's own readout takes of its row in JupyterLab (px: ipywidgets' 72 px box and its margin)."""


@dataclass(frozen=True)
class Control:
    """One input of an explorer.

    Attributes:
        name: the keyword ``compute`` receives. label: shown beside it. kind: one of :data:`KINDS`: ``float`` /
        ``int`` (a slider over ``[low, high]``; ``log``: a log-scale slider for floats), ``range`` (a two-handled
        float slider, value ``(low, high)``), ``choice`` (a dropdown of ``options``), ``text`` (a text area, free
        text checked by ``compute``). default: the starting value. step: slider step.
        help: a one-line description (tooltip).
    """

    name: str
    label: str
    kind: str
    default: Any
    low: float | None = None
    high: float | None = None
    step: float | None = None
    options: tuple = ()
    log: bool = False
    help: str = ""

    def __post_init__(self):
        check_str("name", self.name)
        check_str(f"label of control {self.name!r}", self.label)
        check_choice(f"kind of control {self.name!r}", self.kind, KINDS)
        where = f"control {self.name!r}"
        if self.kind in ("float", "int", "range"):
            for end in ("low", "high"):
                if getattr(self, end) is None:
                    raise ValueError(f"{where}: a slider needs low < high, got {self.low!r}, {self.high!r}")
                check_float(f"{where}: {end}", getattr(self, end))
            if not self.low < self.high:
                raise ValueError(f"{where}: a slider needs low < high, got {self.low!r}, {self.high!r}")
            if self.step is not None:
                check_float(f"{where}: step", self.step, 0, self.high - self.low, low_open=True)
            ends = tuple(self.default) if self.kind == "range" and isinstance(self.default, (tuple, list)) else None
            if self.kind == "range" and (ends is None or len(ends) != 2):
                raise ValueError(f"{where}: a range's default must be (low, high), got {self.default!r}")
            for v in ends or (self.default,):        # a slider cannot show a default it cannot reach
                (check_int if self.kind == "int" else check_float)(f"{where}: default", v, self.low, self.high)
            if ends and ends[0] > ends[1]:
                raise ValueError(f"{where}: a range's default must have low <= high, got {self.default!r}")
        if self.kind == "choice":
            if not self.options:
                raise ValueError(f"{where}: a choice needs options")
            if len(set(map(repr, self.options))) != len(self.options):
                raise ValueError(f"{where}: options must be distinct, got {self.options!r}")
            check_choice(f"{where}: default", self.default, tuple(self.options))
        if self.kind == "text":
            check_str(f"{where}: default", self.default, nonempty=False)
        if self.log and (self.kind != "float" or self.low <= 0):
            raise ValueError(f"{where}: a log slider needs kind 'float' and low > 0")

    def widget(self):
        """The ipywidgets control at its default value (sliders update on release, not while dragging). A range
        slider has no readout of its own (its two numbers overflow the slider's column and shorten it):
        :meth:`row` shows them in a label beside it, and the slider is narrower than a row by the readout it lacks
        (:data:`READOUT_PX`), so its track is as long as every other slider's."""
        import ipywidgets as w
        style, layout = {"description_width": "18em"}, w.Layout(width=ROW_WIDTH)      # the longest label fits
        common = dict(description=self.label, style=style, layout=layout, tooltip=self.help or None)
        common = {k: v for k, v in common.items() if v is not None}
        if self.kind == "float" and self.log:
            import math
            return w.FloatLogSlider(value=self.default, base=10, min=math.log10(self.low), max=math.log10(self.high),
                                    step=self.step or 0.01, continuous_update=False, readout_format=".3g", **common)
        if self.kind == "float":
            return w.FloatSlider(value=self.default, min=self.low, max=self.high, step=self.step or (self.high - self.low) / 100,
                                 continuous_update=False, readout_format=".3g", **common)
        if self.kind == "int":
            return w.IntSlider(value=self.default, min=int(self.low), max=int(self.high), step=int(self.step or 1),
                               continuous_update=False, **common)
        if self.kind == "range":
            return w.FloatRangeSlider(value=tuple(self.default), min=self.low, max=self.high,
                                      step=self.step or (self.high - self.low) / 100, continuous_update=False,
                                      readout=False, **dict(common, layout=w.Layout(width=f"calc({ROW_WIDTH} - {READOUT_PX}px)")))
        if self.kind == "choice":
            return w.Dropdown(options=list(self.options), value=self.default, **common)
        return w.Textarea(value=str(self.default), rows=4, continuous_update=False,
                          placeholder=self.help, **dict(common, layout=w.Layout(width=ROW_WIDTH, height="6em")))


    def row(self, widget):
        """What is displayed for ``widget`` (:meth:`widget`'s): the widget itself, or for a range slider the slider
        with its value ``low – high`` in a label beside it, updated as it moves."""
        if self.kind != "range":
            return widget
        import ipywidgets as w
        label = w.Label(range_text(widget.value), layout=w.Layout(width="8em"))
        widget.observe(lambda change: setattr(label, "value", range_text(change["new"])), names="value")
        return w.HBox([widget, label])


def range_text(value) -> str:
    """A range control's readout: ``"0.25 – 8"`` (3 significant digits each)."""
    lo, hi = value
    return f"{lo:.3g} – {hi:.3g}"


@dataclass(frozen=True)
class Action:
    """A button: ``run(values, progress) -> displayable`` with the controls' values and ``progress(done, total)``
    to report its steps; its result is drawn in its own area. It also runs once at the defaults when the explorer
    is shown (so papermill's copy and the site show it)."""

    label: str
    run: Callable[[dict, Callable[[int, int], None]], Any]


def error_text(err: BaseException) -> str:
    """The one line shown in place for a failed update: a user's bad input (``ValueError``, ``ParameterTypeError``)
    as its message; anything else as a bug, with its type (the traceback is logged)."""
    first = str(err).strip().splitlines()[0] if str(err).strip() else ""      # one line, whatever the library says
    if isinstance(err, ValueError):
        return f"Cannot compute this: {first}"
    return f"Internal error ({type(err).__name__}: {first}); the traceback is in the kernel's log. Please report it."


class _Message:
    """A one-line message for a display area (HTML in JupyterLab, plain text elsewhere)."""

    def __init__(self, text: str, error: bool = False):
        self.text, self.error = text, error

    def _repr_html_(self) -> str:
        colour = "#b00020" if self.error else "#444"
        return f'<p style="color:{colour}; font-family: sans-serif">{html.escape(self.text)}</p>'

    def __repr__(self) -> str:
        return self.text


class _Area:
    """A display area that updates in place: IPython's display handle in a kernel; outside one (a plain Python
    session, a test) the object is printed once and later updates are only kept (:attr:`last`)."""

    def __init__(self, obj):
        from IPython.display import display
        self.last = obj
        self._handle = display(obj, display_id=True)

    def update(self, obj) -> None:
        self.last = obj
        if self._handle is not None:
            self._handle.update(obj)


def _comparable(value):
    """A control's value as compared with its default (a range's list and tuple alike)."""
    return tuple(value) if isinstance(value, (list, tuple)) else value


class _Memo:
    """The last few outputs of one view by key (the least recently used dropped past ``size``)."""

    def __init__(self, size: int = 8):
        self.size, self._items = size, {}

    def get(self, key, make: Callable[[], Any]):
        if key in self._items:
            self._items[key] = self._items.pop(key)      # most recently used last
            return self._items[key]
        obj = self._items[key] = make()
        while len(self._items) > self.size:
            self._items.pop(next(iter(self._items)))
        return obj


def figure_png(fig):
    """``fig`` rendered once to a PNG image (``IPython.display.Image``) at its dpi and closed: what the page shows
    for a view's figure. One pass, without the inline backend's second ("tight" bounding box) pass: the explorers'
    figures fix their own margins (``tight_layout`` or ``subplots_adjust``), so nothing falls outside them."""
    import io

    import matplotlib.pyplot as plt
    from IPython.display import Image
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi)
    plt.close(fig)
    return Image(data=buf.getvalue(), format="png")


@dataclass
class Explorer:
    """Controls, a compute function and its views (module docstring).

    Attributes:
        controls: the inputs, in display order. compute: ``compute(**values) -> dict``. views: functions of the
        result, each drawn in its own area. actions: buttons. result: the last good result (None before the
        first). error: the last update's error line ('' when it succeeded). elapsed_s: the last update's time (s),
        what the reader waits for: compute, views and the display of every area that changed; compute_s: its
        compute part (s). to_json: the state shown as JSON text (:meth:`export`). inactive: ``inactive
        (values) -> {name: why}``, the controls that do not apply at ``values`` (e.g. the ranges devices are drawn
        from once devices are typed): greyed out, with ``why`` as their tooltip, and re-enabled when they apply again.

    view_keys: one entry per view (or fewer; missing ones None): ``key(result) -> hashable``, what the view's output
    depends on. A view with a key is drawn again only for a key it has not drawn lately (the last 8): an unchanged
    output is the very same object, and its display area is not redrawn. A view's matplotlib figure is shown as
    its PNG (:func:`figure_png`), rendered once. A view whose function takes a ``values`` keyword gets the
    controls' values with the result (an attached Verdict view says whether they are the page's defaults).
    """

    controls: Sequence[Control]
    compute: Callable[..., dict]
    views: Sequence[Callable[[dict], Any]]
    actions: Sequence[Action] = ()
    inactive: Callable[[dict], dict] | None = None
    view_keys: Sequence[Callable[[dict], Any] | None] = ()
    to_json: Callable[[dict], str] | None = None
    result: dict | None = None
    error: str = ""
    elapsed_s: float = 0.0
    compute_s: float = 0.0
    _widgets: dict = field(default_factory=dict, repr=False)
    _handles: list = field(default_factory=list, repr=False)
    _status: Any = field(default=None, repr=False)
    _busy: bool = field(default=False, repr=False)
    _action_notes: list = field(default_factory=list, repr=False)
    _memos: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        names = [c.name for c in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"controls must have distinct names, got {names}")

    def defaults(self) -> dict:
        """The controls' default values, by name."""
        return {c.name: c.default for c in self.controls}

    def values(self) -> dict:
        """The controls' current values (the widgets' when shown, else the defaults)."""
        if not self._widgets:
            return self.defaults()
        return {n: (tuple(w.value) if isinstance(w.value, (list, tuple)) else w.value) for n, w in self._widgets.items()}

    def _view(self, view, result, k: int | None = None):
        """``view(result)`` (with ``values=``, the controls' values, when the view takes it: an attached Verdict
        view), a figure as its PNG;
        view ``k`` with a key (:attr:`view_keys`) from its memo when it drew that key lately."""
        import inspect

        import matplotlib.pyplot as plt
        try:
            takes = "values" in inspect.signature(view).parameters
        except (TypeError, ValueError):
            takes = False

        def make():
            out = view(result, values=self.values()) if takes else view(result)
            return figure_png(out) if isinstance(out, plt.Figure) else out
        key = self.view_keys[k] if k is not None and k < len(self.view_keys) else None
        if key is None or result is None:
            return make()
        return self._memos.setdefault(k, _Memo()).get(key(result), make)

    def _grey_out(self) -> None:
        """Disable the controls :attr:`inactive` names at the current values (tooltip: why), enable the others."""
        if self.inactive is None or not self._widgets:
            return
        try:
            off = self.inactive(self.values())
        except (ValueError, TypeError):             # a refused input: the error line says why; leave them as they are
            return
        for c in self.controls:
            widget = self._widgets[c.name]
            widget.disabled = c.name in off
            widget.tooltip = f"not used now: {off[c.name]}" if c.name in off else (c.help or None)

    def evaluate(self, **values) -> tuple[dict | None, list, str]:
        """Compute and draw at ``values`` (missing names: the current values) without touching the page: returns
        ``(result, rendered views, error line)``; on bad input ``(None, [], line)``."""
        import matplotlib.pyplot as plt
        unknown = sorted(set(values) - {c.name for c in self.controls})
        if unknown:                                   # a misspelt name is refused, never computed at the defaults
            return None, [], error_text(ValueError(f"unknown control(s) {unknown}; controls: "
                                                   f"{[c.name for c in self.controls]}"))
        args = dict(self.values(), **values)
        try:
            t0 = time.perf_counter()
            result = self.compute(**args)
            self.compute_s = time.perf_counter() - t0
            rendered = [self._view(view, result, k) for k, view in enumerate(self.views)]
        except Exception as err:                      # shown in place, never as a traceback on the page
            if not isinstance(err, ValueError):
                log.exception("explorer update failed")
            plt.close("all")
            return None, [], error_text(err)
        for item in rendered:
            if isinstance(item, plt.Figure):
                plt.close(item)                       # drawn through its display area only
        return result, rendered, ""

    def update(self, **values) -> dict | None:
        """Recompute at the current values updated by ``values`` and replace each view's output; returns the
        result, or None when the input was refused (then :attr:`error` says why and the views keep the last good
        result)."""
        t0 = time.perf_counter()
        if values and self._widgets:
            unknown = sorted(set(values) - set(self._widgets))
            if unknown:
                raise ValueError(f"unknown control(s) {unknown}; controls: {sorted(self._widgets)}")
            self._busy = True                         # the observers ignore these assignments
            try:
                for name, value in values.items():
                    self._widgets[name].value = value
            finally:
                self._busy = False
        if self._status is not None:                  # shown at once: the outputs below stay until they are redrawn
            self._status.update(_Message(f"Computing at the new control values ({self._moved_text()}) ..."))
        result, rendered, self.error = self.evaluate(**values)
        redrawn = 0
        if result is not None:
            self.result = result
            for handle, item in zip(self._handles, rendered):
                if item is not handle.last:           # an unchanged view (the same object) is not redrawn
                    handle.update(item)               # in a kernel this renders it (a figure: its PNG)
                    redrawn += 1
            for note in self._action_notes:           # an action's result was drawn at earlier values
                note.update(_Message("Drawn at earlier control values: press the button to redraw it at these."))
        self._grey_out()
        self.elapsed_s = time.perf_counter() - t0     # what the reader waited for: compute, views and their display
        if self._status is not None:
            self._status.update(_Message(self.error, error=True) if self.error else _Message(
                f"Updated in {self.elapsed_s:.2f} s (computed and displayed; {redrawn} of {len(rendered)} outputs "
                f"changed)."))
        return result

    def _moved_text(self) -> str:
        """The controls away from their defaults, ``"n 3 -> 5, ..."`` (``"the defaults"`` when none is)."""
        now = self.values()
        moved = [f"{c.name} {_comparable(c.default)} -> {_comparable(now[c.name])}" for c in self.controls
                 if _comparable(now[c.name]) != _comparable(c.default)]
        return ", ".join(moved) if moved else "the defaults"

    def show(self) -> None:
        """Display the controls, each view at the default values, and each action's button and area."""
        import ipywidgets as w
        from IPython.display import display

        self._widgets = {c.name: c.widget() for c in self.controls}
        self._action_notes = []
        display(w.VBox([c.row(self._widgets[c.name]) for c in self.controls]))
        self._status = _Area(_Message(""))
        t0 = time.perf_counter()
        result, rendered, self.error = self.evaluate()
        self.result = result
        self._handles = [_Area(item) for item in rendered]
        self._grey_out()
        self._status.update(_Message(self.error, error=True) if result is None else _Message(
            f"Drawn at the defaults in {time.perf_counter() - t0:.2f} s. In a live kernel (JupyterLab) each change "
            "of a control recomputes the outputs below in place."))

        def changed(_change):
            if self._busy:
                return
            self._busy = True
            try:
                self.update()
            finally:
                self._busy = False

        for widget in self._widgets.values():
            widget.observe(changed, names="value")
        for action in self.actions:
            self._show_action(action)

    def attach(self, view: Callable[[dict | None], Any]) -> Any:
        """Display ``view(result)`` in the calling cell and redraw it on every update, as the views :meth:`show`
        draws (an explorer's Verdict cell: the verdict follows the controls). ``view`` gets None when no state is
        valid yet. Returns what the view drew now. Raises ``RuntimeError`` before :meth:`show`."""
        if self._status is None:
            raise RuntimeError("attach a view after show(): the explorer is not displayed")
        self.views = [*self.views, view]
        self._handles.append(_Area(self._view(view, self.result)))
        return self._handles[-1].last

    def export(self, path: str) -> "_Message":
        """Write :attr:`to_json` of the state shown (:attr:`result`) to ``path`` (:func:`check_export_path`: a file
        in an existing folder; none is created); an empty path writes nothing. Returns a line saying what was done.

        Raises:
            ValueError: ``path`` refused (:func:`check_export_path`); no state shown (the inputs were refused)."""
        p = check_export_path(path)
        if p is None:
            return _Message("No export (export_path is empty).")
        if self.result is None:
            raise ValueError(f"export_path: nothing to export, the explorer refused its inputs ({self.error})")
        p.write_text(self.to_json(self.result) + "\n")
        return _Message(f"State written to {p.name} ({p.stat().st_size:,} bytes).")

    def _show_action(self, action: Action) -> None:
        import ipywidgets as w
        from IPython.display import display

        button, bar = w.Button(description=action.label, layout=w.Layout(width="auto")), w.IntProgress(value=0, min=0, max=1)
        display(w.HBox([button, bar]))
        note = _Area(_Message(""))
        self._action_notes.append(note)
        area = _Area(_Message(""))

        def progress(done: int, total: int) -> None:
            bar.max, bar.value = max(total, 1), done

        def run(_button=None):
            button.disabled = True
            try:
                area.update(_Message(f"Running '{action.label}' ...") if _button is not None else _Message(""))
                out = action.run(self.values(), progress)
                area.update(out)
                note.update(_Message(""))
                import matplotlib.pyplot as plt
                if isinstance(out, plt.Figure):
                    plt.close(out)
            except Exception as err:
                if not isinstance(err, ValueError):
                    log.exception("explorer action failed")
                area.update(_Message(error_text(err), error=True))
            finally:
                button.disabled = False

        button.on_click(run)
        run()


def check_export_path(path) -> Path | None:
    """``export_path`` as a Path, None when empty: a file in an existing folder (none is created).

    Raises:
        ParameterTypeError: not a string. ValueError: a folder, or a file in a folder that does not exist."""
    if not check_str("export_path", path, nonempty=False):
        return None
    p = Path(path).expanduser()
    if p.is_dir():
        raise ValueError(f"export_path {path!r} is a folder: name a file in it, e.g. {p / 'state.json'}")
    if not p.parent.is_dir():
        raise ValueError(f"export_path: the folder {p.parent} does not exist (none is created)")
    return p


def _formatter():
    """IPython's display formatter as a JupyterLab kernel's (figures as PNG, ``bbox_inches="tight"``, as the inline
    backend renders them): what :meth:`Explorer.update` costs the page when a display area is updated."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.pylabtools import select_figure_formats
    shell = InteractiveShell.instance()
    select_figure_formats(shell, {"png"}, bbox_inches="tight")
    return shell.display_formatter


def bench(explorer: Explorer, repeats: int = 5, moves: Sequence[dict] = (), **values) -> dict:
    """Seconds of an update of ``explorer`` as a reader waits for it: ``update_s``, compute, the views, and the
    display of every output that changed (IPython's formatter, figures rendered to PNG as JupyterLab's inline
    backend renders them; an unchanged output is not redrawn, as :meth:`Explorer.update` does); ``compute_s``, the
    compute part of the same updates. One untimed update at the defaults updated by ``values`` first (what the
    page shows), then ``repeats`` timed ones: the k-th at those values updated by ``moves[k % len(moves)]``
    (distinct states, so no cache answers for a control that moved; without ``moves``, the same state again).
    Medians and the spread (min, max). For ``python -m fedlib.lab.bench explore`` (targets live there).

    Raises:
        ValueError: ``repeats`` < 1; RuntimeError: an update fails (its error line)."""
    import statistics
    check_int("repeats", repeats, 1)
    fmt = _formatter()
    shown: list = []
    comp, full = [], []

    def one(state: dict) -> tuple[float, float]:
        nonlocal shown
        t = time.perf_counter()
        result, rendered, err = explorer.evaluate(**state)
        if result is None:
            raise RuntimeError(err)
        for k, item in enumerate(rendered):
            if k >= len(shown) or item is not shown[k]:
                fmt.format(item)
        shown = rendered
        return explorer.compute_s, time.perf_counter() - t

    one(dict(values))
    for k in range(repeats):
        c, u = one(dict(values, **(moves[k % len(moves)] if moves else {})))
        comp.append(c)
        full.append(u)
    return {"compute_s": round(statistics.median(comp), 4), "update_s": round(statistics.median(full), 4),
            "update_spread_s": [round(min(full), 4), round(max(full), 4)], "repeats": repeats}
