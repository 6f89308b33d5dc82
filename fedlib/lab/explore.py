"""The explorers' shared machinery: controls (ipywidgets) that drive a plain compute function, whose result is drawn
by views into display areas that update in place; bad input is shown in place as one message, never a traceback.

An explorer (``notebooks/<paper>/<paper>_explore.ipynb``) is three things a paper module supplies:

- :class:`Control` s: each one input, with its type, its range (a slider cannot reach a value outside it) and its
  default (the notebook's parameter);
- ``compute(**values) -> dict``: a plain function of the controls' values that only calls the library (the tests
  call it directly); it raises ``ValueError`` / :class:`fedlib.core.validate.ParameterTypeError` naming the field
  for bad input, as every library function does;
- views ``view(result) -> displayable`` (a :class:`fedlib.lab.story` table, a matplotlib figure, markdown).

:meth:`Explorer.show` draws the views of the default values as ordinary outputs (so papermill's copy and the site
show the default state, with no widget script) and, beside them, the controls. In a live kernel (JupyterLab)
moving a control recomputes and replaces each view's output in place (``IPython.display`` display handles, not an
``Output`` widget, whose contents only a widget manager can render). Under papermill no control moves, so the
notebook draws its defaults. Actions (:class:`Action`: a button, e.g. a sweep) run on a click with a progress bar
and draw into their own area; ``run_headless`` actions also run once at the defaults so the papermill copy shows
them.

Errors a user can cause (``ValueError`` and :class:`fedlib.core.validate.ParameterTypeError`, which the library's
validators raise naming the field) are shown as one line; anything else (a ``KeyError``, a ``TypeError``) is a bug,
shown as its type and message with a pointer to the kernel log (the traceback goes to the log, not the page).
"""
from __future__ import annotations

import html
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from fedlib.core.validate import check_choice, check_float, check_int, check_str

log = logging.getLogger(__name__)

KINDS = ("float", "int", "range", "choice", "text", "bool")


@dataclass(frozen=True)
class Control:
    """One input of an explorer.

    Attributes:
        name: the keyword ``compute`` receives. label: shown beside it. kind: one of :data:`KINDS`: ``float`` /
        ``int`` (a slider over ``[low, high]``; ``log``: a log-scale slider for floats), ``range`` (a two-handled
        float slider, value ``(low, high)``), ``choice`` (a dropdown of ``options``), ``text`` (a text area, free
        text checked by ``compute``), ``bool`` (a checkbox). default: the starting value. step: slider step.
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
        if self.kind == "bool" and not isinstance(self.default, bool):
            raise ValueError(f"{where}: a checkbox's default must be True or False, got {self.default!r}")
        if self.kind == "text":
            check_str(f"{where}: default", self.default, nonempty=False)
        if self.log and (self.kind != "float" or self.low <= 0):
            raise ValueError(f"{where}: a log slider needs kind 'float' and low > 0")

    def widget(self):
        """The ipywidgets control at its default value (sliders update on release, not while dragging)."""
        import ipywidgets as w
        style, layout = {"description_width": "18em"}, w.Layout(width="48em")      # the longest label fits
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
                                      readout_format=".3g", **common)
        if self.kind == "choice":
            return w.Dropdown(options=list(self.options), value=self.default, **common)
        if self.kind == "bool":
            return w.Checkbox(value=bool(self.default), indent=False, **common)
        return w.Textarea(value=str(self.default), rows=4, continuous_update=False,
                          placeholder=self.help, **dict(common, layout=w.Layout(width="48em", height="6em")))


@dataclass(frozen=True)
class Action:
    """A button: ``run(values, progress) -> displayable`` with the controls' values and ``progress(done, total)``
    to report its steps; its result is drawn in its own area. ``run_headless``: also run once at the defaults
    when the explorer is shown (so papermill's copy and the site show it)."""

    label: str
    run: Callable[[dict, Callable[[int, int], None]], Any]
    run_headless: bool = True


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


@dataclass
class Explorer:
    """Controls, a compute function and its views (module docstring).

    Attributes:
        controls: the inputs, in display order. compute: ``compute(**values) -> dict``. views: functions of the
        result, each drawn in its own area. actions: buttons. result: the last good result (None before the
        first). error: the last update's error line ('' when it succeeded). elapsed_s: the last update's time (s),
        compute and views together.
    """

    controls: Sequence[Control]
    compute: Callable[..., dict]
    views: Sequence[Callable[[dict], Any]]
    actions: Sequence[Action] = ()
    result: dict | None = None
    error: str = ""
    elapsed_s: float = 0.0
    _widgets: dict = field(default_factory=dict, repr=False)
    _handles: list = field(default_factory=list, repr=False)
    _status: Any = field(default=None, repr=False)
    _busy: bool = field(default=False, repr=False)
    _action_notes: list = field(default_factory=list, repr=False)

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
            result = self.compute(**args)
            rendered = [view(result) for view in self.views]
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
        result, rendered, self.error = self.evaluate(**values)
        self.elapsed_s = time.perf_counter() - t0
        if result is not None:
            self.result = result
            for handle, item in zip(self._handles, rendered):
                handle.update(item)
            for note in self._action_notes:           # an action's result was drawn at earlier values
                note.update(_Message("Drawn at earlier control values: press the button to redraw it at these."))
        if self._status is not None:
            self._status.update(_Message(self.error, error=True) if self.error
                                else _Message(f"Updated in {self.elapsed_s:.2f} s."))
        return result

    def show(self) -> None:
        """Display the controls, each view at the default values, and each action's button and area."""
        import ipywidgets as w
        from IPython.display import display

        self._widgets = {c.name: c.widget() for c in self.controls}
        self._action_notes = []
        display(w.VBox(list(self._widgets.values())))
        self._status = _Area(_Message(""))
        result, rendered, self.error = self.evaluate()
        if result is None:
            self._status.update(_Message(self.error, error=True))
        self.result = result
        self._handles = [_Area(item) for item in rendered]

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
        self._handles.append(_Area(view(self.result)))
        return self._handles[-1].last

    def _show_action(self, action: Action) -> None:
        import ipywidgets as w
        from IPython.display import display

        button, bar = w.Button(description=action.label, layout=w.Layout(width="auto")), w.IntProgress(value=0, min=0, max=1)
        display(w.HBox([button, bar]))
        note = _Area(_Message(""))
        self._action_notes.append(note)
        area = _Area(_Message("" if action.run_headless else f"Press '{action.label}' to run it."))

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
        if action.run_headless:
            run()


def bench(explorer: Explorer, repeats: int = 5, **values) -> dict:
    """Seconds of one update of ``explorer`` at its defaults updated by ``values``, as a live change costs it:
    ``compute_s`` (the compute function alone) and ``update_s`` (compute, the views, and each figure rendered to
    PNG as JupyterLab's inline backend renders it); medians over ``repeats`` after one warm-up, with the spread
    (min, max). For ``python -m fedlib.lab.bench explore`` (speed targets live there, not in tests).

    Raises:
        ValueError: ``repeats`` < 1; RuntimeError: the update fails at these values (its error line)."""
    import io
    import statistics

    import matplotlib.pyplot as plt

    from fedlib.core.validate import check_int
    check_int("repeats", repeats, 1)
    args = dict(explorer.defaults(), **values)
    comp, full = [], []
    for k in range(repeats + 1):
        t = time.perf_counter()
        result, rendered, err = explorer.evaluate(**values)
        if err:
            raise RuntimeError(err)
        for item in rendered:
            if isinstance(item, plt.Figure):
                item.savefig(io.BytesIO(), format="png", dpi=item.dpi, bbox_inches="tight")
        u = time.perf_counter() - t
        t = time.perf_counter()
        explorer.compute(**args)
        if k:                                            # the first is the warm-up
            comp.append(time.perf_counter() - t)
            full.append(u)
    return {"compute_s": round(statistics.median(comp), 4), "update_s": round(statistics.median(full), 4),
            "update_spread_s": [round(min(full), 4), round(max(full), 4)], "repeats": repeats}
