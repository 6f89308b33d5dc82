"""What a reader of a live explorer sees (fedlib.lab.explore): the status line times the display too, an output
that did not change is not redrawn, controls that do not apply are greyed out, a range slider's readout sits in a
label beside it, the Verdict cell does not repeat the block above it at the defaults, the DTFL summary states the
Verdict's ratio, and the round timelines' titles carry no self-check."""
import time

import matplotlib
import pytest

from fedlib.lab import explore
from fedlib.lab.explore import READOUT_PX, ROW_WIDTH, Control, Explorer, range_text

matplotlib.use("Agg")


def _compute(x: float, n: int, typed: str) -> dict:
    return {"y": x * n, "n": n, "typed": typed}


def _explorer(**kw):
    controls = [Control("x", "x", "float", 2.0, 0.5, 8.0), Control("n", "n", "int", 3, 1, 10),
                Control("typed", "typed", "text", "")]
    drawn = []

    def slow_view(r):
        drawn.append(r["n"])
        return f"n = {r['n']}"
    return Explorer(controls, _compute, [lambda r: f"y = {r['y']:g}", slow_view], **kw), drawn


def test_the_status_line_times_the_display_of_what_changed(monkeypatch, capsys):
    """elapsed_s covers the display areas' updates (in a kernel, where each output is rendered), not only the
    compute and the views."""
    ex, _ = _explorer()
    ex.show()
    real = explore._Area.update

    def slow(self, obj):
        if not isinstance(obj, explore._Message):
            time.sleep(0.15)                          # what rendering an output costs in a kernel
        real(self, obj)
    monkeypatch.setattr(explore._Area, "update", slow)
    ex.update(x=4.0)
    assert ex.elapsed_s >= 0.3                        # two outputs changed, each displayed
    assert "computed and displayed; 2 of 2 outputs changed" in ex._status.last.text
    capsys.readouterr()


def test_an_output_whose_key_did_not_change_is_neither_drawn_nor_redisplayed(capsys):
    ex, drawn = _explorer(view_keys=[None, lambda r: r["n"]])
    ex.show()
    handle = ex._handles[1]
    first = handle.last
    ex.update(x=5.0)                                  # n unchanged: the keyed view is not drawn again
    assert drawn == [3] and handle.last is first and "1 of 2 outputs changed" in ex._status.last.text
    ex.update(n=4)
    assert drawn == [3, 4] and handle.last == "n = 4"
    ex.update(n=3)                                    # back to a state drawn lately: from the memo
    assert drawn == [3, 4] and handle.last is first
    capsys.readouterr()


def test_controls_that_do_not_apply_are_greyed_out_and_come_back(capsys):
    ex, _ = _explorer(inactive=lambda v: {"n": "typed rows replace it"} if v["typed"].strip() else {})
    ex.show()
    assert not ex._widgets["n"].disabled
    ex.update(typed="1, 2")
    assert ex._widgets["n"].disabled and "typed rows replace it" in ex._widgets["n"].tooltip
    ex.update(typed="")
    assert not ex._widgets["n"].disabled
    capsys.readouterr()


def test_the_papers_explorers_grey_out_what_typed_input_replaces():
    from fedlib.lab.dtfl.explore import inactive_controls as dtfl_inactive
    from fedlib.lab.hasfl.explore import inactive_controls as hasfl_inactive
    assert set(hasfl_inactive({"devices": "1, 80, 370, 1"})) == {"num_devices", "device_tflops", "uplink_mbps",
                                                                 "downlink_mbps", "memory_gb"}
    assert hasfl_inactive({"devices": "  "}) == {}
    assert set(dtfl_inactive({"clients": "1, 30", "clients_from": "ranges"})) == {
        "clients_from", "cpus_range", "mbps_range", "num_clients", "seed"}
    assert "samples_per_client" in dtfl_inactive({"clients": "1, 30, 200", "clients_from": "ranges"})
    assert set(dtfl_inactive({"clients": "", "clients_from": "case1"})) == {"cpus_range", "mbps_range"}
    assert dtfl_inactive({"clients": "", "clients_from": "ranges"}) == {}


def test_a_range_sliders_readout_is_a_label_beside_it():
    c = Control("r", "r", "range", (0.25, 8.0), 0.05, 16.0)
    slider = c.widget()
    row = c.row(slider)
    assert slider.readout is False and row.children[0] is slider
    assert row.children[1].value == "0.25 – 8" == range_text((0.25, 8.0))
    slider.value = (1.0, 2.5)
    assert row.children[1].value == "1 – 2.5"
    plain = Control("x", "x", "float", 2.0, 0.5, 8.0)
    assert plain.row(w := plain.widget()) is w
    # the range slider is narrower than a plain one by exactly the readout it lacks: the two tracks are as long
    assert w.layout.width == ROW_WIDTH and slider.layout.width == f"calc({ROW_WIDTH} - {READOUT_PX}px)"
    assert row.children[1].layout.width == "8em"


def test_the_verdict_cell_points_at_the_block_at_its_state_and_says_what_moved(monkeypatch):
    from fedlib.lab import story
    monkeypatch.setitem(story._BLOCK_STATES, "dtfl", {"seed": 0, "num_clients": 10})
    view = story.verdict_view("dtfl")
    result = {"fedavg_round_s": 10.0, "dtfl_round_s": 4.0}
    same = str(view(result, values={"seed": 0, "num_clients": 10}))
    assert "the verdict is that table" in same and "| claim |" not in same
    moved = str(view(result, values={"seed": 3, "num_clients": 10}))
    assert moved.startswith("**At the controls' state now**") and "seed 0 → 3" in moved
    assert "num_clients" not in moved.split("\n")[0] and "| claim |" in moved and "2.50×" in moved
    assert "| claim |" in str(view(result))           # without the values (a direct call): the table


def test_dtfl_summary_states_the_verdicts_ratio():
    from fedlib.lab.dtfl import explore as de
    r = de.compute(num_clients=4, width=0.25)
    head = de.table_view(r).data.split("\n\n")[0]
    speedup = r["fedavg_round_s"] / r["dtfl_round_s"]
    assert f"FedAvg / DTFL = **{speedup:.3g}×**" in head and "DTFL / FedAvg" not in head
    assert de.round_speedup(r)["ours"] == [pytest.approx(speedup, rel=1e-12)]


def test_timeline_titles_carry_no_self_check_and_the_layout_still_ends_at_the_model():
    from fedlib.lab.dtfl import explore as de
    r = de.compute(num_clients=4, width=0.25)
    fig = de.timeline_view(r)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles and not any("timeline ends" in t or "model's" in t for t in titles), titles
    assert r["dtfl_timeline"].latency == pytest.approx(r["dtfl_round_s"], rel=1e-12)     # the check, as a value
    assert r["fedavg_timeline"].latency == pytest.approx(r["fedavg_round_s"], rel=1e-12)
    # two panels of 4.8 in: JupyterLab shows the figure unscaled in a cell about 10 in wide (at 12.8 in it was
    # shrunk to 3/4, its labels to about 7 px); the notebooks' committed timelines keep 6.4 in per panel
    assert tuple(fig.get_size_inches().round(2))[0] == 9.6


def test_a_timeline_panel_width_is_checked():
    from fedlib.lab.split.timeline import Step, build_timeline, timeline_figure
    import numpy as np
    tl = build_timeline(["device 0"], [[[Step("compute", "T", np.ones(1))]]], 1.0, "max", devices=1)
    assert timeline_figure([tl, tl]).get_size_inches()[0] == pytest.approx(12.8)
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="panel_width"):
            timeline_figure([tl], panel_width=bad)


def test_many_devices_label_every_kth_row():
    from fedlib.lab.split.timeline import LABELLED_ROWS, Step, build_timeline, timeline_figure
    import numpy as np
    n = 60
    tl = build_timeline([f"device {i}" for i in range(n)], [[[Step("compute", "T", np.linspace(1, 2, n))]]],
                        2.0, "max", devices=n)
    fig = timeline_figure([tl])
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) <= LABELLED_ROWS + 1 and fig.get_size_inches()[1] < 1.8 + 0.2 * n
