"""The explorers' shared machinery (fedlib.lab.explore): controls refuse impossible ranges, an update shows a user's
bad input as one line and a bug as one, the last good result stays, a widget change recomputes, an action runs
with progress and shows its error in place."""
import matplotlib
import pytest

from fedlib.lab.explore import Action, Control, Explorer, bench, error_text
from fedlib.core.validate import ParameterTypeError, check_float

matplotlib.use("Agg")


def _compute(x: float, n: int, mode: str) -> dict:
    check_float("x", x, 0, low_open=True)
    if mode == "bug":
        raise KeyError("no_such_key")
    return {"y": x * n, "mode": mode}


def _explorer(actions=()):
    controls = [Control("x", "x", "float", 2.0, 0.5, 8.0, log=True), Control("n", "n", "int", 3, 1, 10),
                Control("mode", "mode", "choice", "ok", options=("ok", "bug"))]
    return Explorer(controls, _compute, [lambda r: f"y = {r['y']:g}"], actions)


def test_controls_refuse_impossible_ranges_and_build_their_widgets():
    for bad in (dict(kind="float", default=1, low=2, high=1), dict(kind="int", default=1, low=None, high=3),
                dict(kind="choice", default="a"), dict(kind="float", default=1, low=0, high=2, log=True),
                dict(kind="slider", default=1, low=0, high=1)):
        with pytest.raises(ValueError):
            Control("c", "c", **bad)
    w = Control("x", "x", "float", 2.0, 0.5, 8.0, log=True).widget()
    assert w.value == pytest.approx(2.0) and w.min == pytest.approx(-0.30103, abs=1e-4)   # log10 of the range
    assert Control("r", "r", "range", (1.0, 2.0), 0.5, 4.0).widget().value == (1.0, 2.0)
    with pytest.raises(ValueError, match="distinct"):
        Explorer([Control("a", "a", "int", 1, 0, 2), Control("a", "b", "int", 1, 0, 2)], _compute, [])


def test_evaluate_shows_bad_input_and_bugs_as_one_line():
    ex = _explorer()
    assert ex.evaluate() == ({"y": 6.0, "mode": "ok"}, ["y = 6"], "")
    result, views, err = ex.evaluate(x=float("nan"))
    assert result is None and views == [] and err.startswith("Cannot compute this: x must be")
    _, _, err = ex.evaluate(mode="bug")
    assert err.startswith("Internal error (KeyError") and "kernel's log" in err
    assert error_text(ParameterTypeError("n must be an int")) == "Cannot compute this: n must be an int"
    assert error_text(TypeError("Overflow\nException raised from C++")) == \
        "Internal error (TypeError: Overflow); the traceback is in the kernel's log. Please report it."   # one line
    _, _, err = ex.evaluate(nn=5)                       # a misspelt control: refused, not computed at the defaults
    assert err.startswith("Cannot compute this: unknown control(s) ['nn']")


def test_a_widget_change_recomputes_and_the_last_good_result_stays(capsys):
    ex = _explorer()
    ex.show()
    assert ex.result == {"y": 6.0, "mode": "ok"}
    ex._widgets["n"].value = 5                          # what moving the slider does
    assert ex.result["y"] == 10.0 and ex._handles[0].last == "y = 10" and ex.error == ""
    assert ex.update(mode="bug") is None and ex.error.startswith("Internal error")
    assert ex.result["y"] == 10.0 and ex._handles[0].last == "y = 10"      # the views keep the last good result
    assert ex.update(mode="ok", n=2)["y"] == 4.0 and ex._widgets["n"].value == 2
    with pytest.raises(ValueError, match="unknown control"):
        ex.update(z=1)
    capsys.readouterr()


def test_the_status_line_says_computing_before_the_work(capsys):
    # planted: the status written only after compute (a slow update showed nothing new for 29 s) -> red
    seen = []
    ex = _explorer()

    def compute(**values):
        seen.append(ex._status.last.text)              # what the page shows while the work runs
        return _compute(**values)

    ex.compute = compute
    ex.show()
    ex._widgets["n"].value = 5
    assert seen[-1] == "Computing at the new control values (n 3 -> 5) ..."
    assert ex._status.last.text.startswith("Updated in ")
    ex.update(x=4.0)
    assert seen[-1] == "Computing at the new control values (x 2.0 -> 4.0, n 3 -> 5) ..."
    capsys.readouterr()


def test_an_attached_view_follows_the_controls(capsys):
    """An explorer's Verdict cell: a view attached after show() is drawn at once and redrawn on each change; a
    refused input keeps its last good state; before show() attach is refused."""
    ex = _explorer()
    with pytest.raises(RuntimeError, match="after show"):
        ex.attach(lambda r: "never")
    ex.show()
    ex.attach(lambda r: f"verdict at y = {r['y']:g}")
    assert ex._handles[-1].last == "verdict at y = 6"
    ex._widgets["n"].value = 5
    assert ex._handles[-1].last == "verdict at y = 10" and ex._handles[0].last == "y = 10"
    ex.update(x=float("nan"))
    assert ex._handles[-1].last == "verdict at y = 10"
    capsys.readouterr()


def test_attach_returns_what_it_drew(capsys):
    ex = _explorer()
    ex.show()
    assert ex.attach(lambda r: f"drawn at y = {r['y']:g}") == "drawn at y = 6"
    capsys.readouterr()


def test_an_action_runs_with_progress_and_shows_its_error_in_place(capsys):
    seen = []

    def run(values, progress):
        for k in range(3):
            progress(k + 1, 3)
            seen.append(k)
        if values["mode"] == "bug":
            raise ValueError("bad sweep")
        return f"swept at n = {values['n']}"

    ex = _explorer([Action("sweep", run)])
    ex.show()                                           # an action runs once at the defaults
    assert seen == [0, 1, 2] and ex._action_notes[0].last.text == ""
    ex.update(n=4)                                      # the sweep above is now stale, and says so
    assert "earlier control values" in ex._action_notes[0].last.text
    capsys.readouterr()


def test_bench_times_compute_and_update():
    res = bench(_explorer(), repeats=2, n=4)
    assert set(res) == {"compute_s", "update_s", "update_spread_s", "repeats"} and res["repeats"] == 2
    assert 0 <= res["compute_s"] and res["update_spread_s"][0] <= res["update_s"] <= res["update_spread_s"][1]
    with pytest.raises(RuntimeError, match="Cannot compute this"):
        bench(_explorer(), repeats=1, x=-1.0)
