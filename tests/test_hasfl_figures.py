"""HASFL figure mends (issue #21): not-reached runs marked instead of drawn as whole-run bars, identical runs
named, a method without any feasible draw said at the axis' foot, the decisions' cut axis spanning every cut.
Figs. 6, 7-8, 9 and the calibration are drawn in ``hasfl_5_train_figures``: their tests run its cells
(:func:`hasfl5_cells.draw`)."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402

from fedlib.lab.hasfl.figures import plots, train_plots  # noqa: E402
from fedlib.lab.plotting import label_log_axis  # noqa: E402
from hasfl5_cells import draw  # noqa: E402


def fig6_bars(rows, models, settings, quantity="target"):
    """Fig. 6 as the notebook draws it."""
    return draw("hasfl_fig6_time_and_accuracy", rows=rows, models=list(models), settings=list(settings),
                fig6_quantity=quantity)["hasfl_fig6_time_and_accuracy"]


def fig9_vs_devices(rows):
    """Fig. 9 as the notebook draws it."""
    return draw("hasfl_fig9_vs_devices", rows=rows)["hasfl_fig9_vs_devices"]


def fig78_trained(rows, model, setting="iid"):
    """Figs. 7-8 trained as the notebook draws them (``sweep`` on)."""
    return draw("hasfl_fig7_8_trained", rows=rows, models=[model], settings=[setting], sweep=True)["hasfl_fig7_8_trained"]


def fig_calibration(calibration):
    """The calibration figure as the notebook draws it."""
    return draw("hasfl_calibration_fit", calibration=calibration)["hasfl_calibration_fit"]


def _row(method, setting="iid", t=None, sim=10.0, acc=0.7, fig="fig6", model="vgg16", N=10, conv=None):
    return {"method": method, "setting": setting, "time_to_target_s": t, "sim_s": sim, "final_test_acc": acc,
            "figures": [fig], "model": model, "target_acc": 0.6, "N": N, "converged_time_s": conv}


def test_fig6_marks_not_reached_runs_with_a_cross_and_no_bar():
    rows = [_row("HASFL", t=0.156), _row("RBS+RHAMS", t=None, sim=0.3), _row("HASFL", "noniid", t=1.2),
            _row("RBS+RHAMS", "noniid", t=2.0)]
    fig = fig6_bars(rows, ("vgg16",), ("iid", "noniid"))
    ax = fig.axes[0]
    heights = sorted(round(p.get_height(), 3) for p in ax.patches)
    assert heights == [0.0, 0.156, 1.2, 2.0]             # RBS+RHAMS IID: no bar at its whole run's 0.3 s
    assert [t.get_text() for t in ax.texts] == ["× not reached"]     # in its slot, upright
    assert ax.get_ylim()[0] == np.float64(0.156) / 3       # the log floor keeps the 0.156 s bar visible
    plt.close(fig)


def test_fig9_marks_runs_that_do_not_converge_at_their_whole_time():
    rows = [_row(m, t=1.0 * n, sim=20.0 * n, fig="fig9", N=n, conv=(None if m == "RBS+RMS" else 5.0 * n))
            for m in ("HASFL", "RBS+RMS") for n in (5, 10, 20)]
    fig = fig9_vs_devices(rows)
    right = fig.axes[1]
    crosses = [ln for ln in right.lines if ln.get_marker() == "x"]
    assert len(crosses) == 1 and list(crosses[0].get_ydata()) == [100.0, 200.0, 400.0]
    assert any("not converged" in t.get_text() for t in right.get_legend().get_texts())
    assert not [ln for ln in fig.axes[0].lines if ln.get_marker() == "x"]     # every run reached the target
    plt.close(fig)


def test_fig9_has_a_row_of_panels_per_setting_iid_first():
    rows = [_row(m, setting, t=1.0 * n * (2 if setting == "noniid" else 1), fig="fig9", N=n, conv=3.0 * n)
            for setting in ("noniid", "iid") for m in ("HASFL", "RBS+RMS") for n in (5, 10, 20)]
    fig = fig9_vs_devices(rows)
    assert len(fig.axes) == 4
    assert [ax.get_title().split(":")[0] for ax in fig.axes] == ["IID", "IID", "non-IID", "non-IID"]
    assert list(fig.axes[2].lines[0].get_ydata()) == [10.0, 20.0, 40.0]       # non-IID's times, HASFL
    assert list(fig.axes[0].lines[0].get_ydata()) == [5.0, 10.0, 20.0]
    plt.close(fig)


def test_fig5_names_identical_runs():
    curve = {"sim_s": [0.0, 1.0, 2.0], "test_acc": [0.1, 0.5, 0.7]}
    other = {"sim_s": [0.0, 1.5, 3.0], "test_acc": [0.1, 0.4, 0.6]}
    entries = [{"row": {"method": m, "figures": ["fig5"], "model": "vgg16", "setting": "iid"}, "curve": c}
               for m, c in (("HASFL", curve), ("HABS+RMS", curve), ("RBS+RMS", other))]
    fig = train_plots.fig5_accuracy_vs_time(entries, ("vgg16",), ("iid",))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["identical runs (dashed over):\nHABS+RMS = HASFL"]
    assert [ln.get_linestyle() for ln in ax.lines] == ["-", "--", "-"]
    plt.close(fig)


def test_fig5_keeps_a_methods_colour_and_marker_in_every_panel():
    """VGG-16 has HASFL-max, ResNet-18 not: HASFL-calibrated must not take HASFL-max's colour in the ResNet-18 panel
    (it did in the first converged figure)."""
    curve = {"sim_s": [0.0, 1.0, 2.0], "test_acc": [0.1, 0.5, 0.7]}
    methods = {"vgg16": ("HASFL", "HASFL-max", "HASFL-calibrated"), "resnet18": ("HASFL", "HASFL-calibrated")}
    entries = [{"row": {"method": m, "figures": ["fig5"], "model": model, "setting": "iid"},
                "curve": dict(curve, test_acc=[0.1, 0.5, 0.7 - 0.1 * k])}
               for model, ms in methods.items() for k, m in enumerate(ms)]
    fig = train_plots.fig5_accuracy_vs_time(entries, ("vgg16", "resnet18"), ("iid",))
    style = [{ln.get_label(): (ln.get_color(), ln.get_marker()) for ln in ax.lines} for ax in fig.axes[:2]]
    assert style[1]["HASFL-calibrated"] == style[0]["HASFL-calibrated"] != style[0]["HASFL-max"]
    assert style[1]["HASFL"] == style[0]["HASFL"]
    plt.close(fig)


def test_fig5_draws_the_papers_methods_bold_and_the_variants_faint_in_an_announced_symlog_axis():
    curve = {"sim_s": [0.0, 1.0, 2.0], "test_acc": [0.1, 0.5, 0.7]}
    methods = ("HASFL-calibrated", "HASFL", "RBS+RMS(C1)", "RBS+HAMS", "mine:strategy")   # a variant first
    entries = [{"row": {"method": m, "figures": ["fig5"], "model": "vgg16", "setting": "iid"},
                "curve": dict(curve, test_acc=[0.1, 0.5, 0.7 - 0.05 * k])} for k, m in enumerate(methods)]
    fig = train_plots.fig5_accuracy_vs_time(entries, ("vgg16",), ("iid",))
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.lines}
    for m in ("HASFL", "RBS+HAMS", "mine:strategy"):                            # a method of your own: bold
        assert lines[m].get_marker() != "None" and lines[m].get_alpha() is None and lines[m].get_linewidth() == 1.3
    for m in ("HASFL-calibrated", "RBS+RMS(C1)"):
        assert lines[m].get_marker() == "None" and lines[m].get_alpha() == 0.55 and lines[m].get_linewidth() == 0.9
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["HASFL", "RBS+HAMS", "mine:strategy", "HASFL-calibrated",
                                                          "RBS+RMS(C1)"]
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 8
    assert legend.get_title().get_text() == "bold: the paper's methods · thin: our variants"
    assert ax.get_xscale() == "symlog" and "symlog" in ax.get_xlabel()
    paper_only = train_plots.fig5_accuracy_vs_time(entries[1:2], ("vgg16",), ("iid",))
    assert paper_only.axes[0].get_legend().get_title().get_text() == ""          # no variant: no key to explain
    plt.close("all")


def test_strategies_says_when_a_method_has_no_feasible_draw():
    rows = [{"method": "HASFL", "theta": 3200.0, "theta_std": 0.0, "infeasible": 0},
            {"method": "RBS+HAMS", "theta": 12000.0, "theta_std": 2000.0, "infeasible": 1},
            {"method": "RBS+RHAMS", "theta": None, "theta_std": None, "infeasible": 5}]
    fig = plots.fig_strategies(rows)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["1 infeasible", "no feasible draw (5 infeasible)"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["HASFL", "RBS+HAMS", "RBS+RHAMS"]
    plt.close(fig)


def _swept(method, key, factor, conv, theta, fig="fig7"):
    r = _row(method, fig=fig, conv=conv, sim=2 * (conv or 50.0))
    return dict(r, scale_key=key, scale_factor=factor, theta_pred_s=theta)


def test_fig78_trained_normalises_to_hasfl_at_table_i_and_marks_unconverged_runs():
    rows = [dict(_row(m, fig="fig5", conv=c), theta_pred_s=t, scale_key=None, scale_factor=None)
            for m, c, t in (("HASFL", 10.0, 100.0), ("RBS+HAMS", 20.0, 300.0))]
    rows += [_swept("HASFL", "device_flops", 4.0, 5.0, 50.0), _swept("RBS+HAMS", "device_flops", 4.0, None, 90.0),
             _swept("HASFL", "device_flops", 0.25, 30.0, 400.0), _swept("RBS+HAMS", "device_flops", 0.25, 60.0, 900.0)]
    fig = fig78_trained(rows, "vgg16")
    ax = fig.axes[0]
    assert len(fig.axes) == 1 and ax.get_title().startswith("Fig. 7: device compute")
    lines = {ln.get_label(): ln for ln in ax.lines}
    assert list(lines["HASFL: trained"].get_ydata()) == [3.0, 1.0, 0.5]          # 30, 10, 5 over HASFL's 10 s
    assert list(lines["RBS+HAMS: trained"].get_ydata()) == [6.0, 2.0]            # factor 4 did not converge
    assert list(lines["RBS+HAMS: not converged (× at run's end)"].get_ydata()) == [10.0]   # its 100 s, a bound
    assert list(lines["RBS+HAMS: predicted Θ"].get_ydata()) == [9.0, 3.0, 0.9]
    plt.close(fig)


def test_fig_calibration_has_a_panel_per_model_and_says_why_a_fit_failed():
    ok = [{"model": "vgg16", "seed": 0, "batch": 16, "cut": c, "kappa": 0.3, "lambda": 2.0, "eps": 50.0,
           "residual": 0.01, "rounds_measured": m, "rounds_fit": f, "note": ""}
          for c, m, f in ((2, 100, 110), (8, 200, 190), (5, None, 150))]
    failed = [{"model": "resnet18", "seed": 0, "batch": None, "cut": None, "kappa": None, "lambda": None,
               "eps": None, "note": "fewer than 2 cuts reach 0.86"}]
    fig = fig_calibration(ok + failed)
    left, right = fig.axes
    assert left.get_title().startswith("vgg16: κ = 0.3") and right.get_title() == "resnet18"
    assert any("not reached: 16/5" in t.get_text() for t in left.texts)
    assert any("fewer than 2 cuts reach 0.86" in t.get_text() for t in right.texts)
    pts = [(ln.get_xdata()[0], ln.get_ydata()[0]) for ln in left.lines if len(ln.get_xdata()) == 1]
    assert pts == [(100, 110), (200, 190)]
    # under a decade (77-260 rounds): ticks at 1, 2, 5 x 10^k only (the default labelled 2, 3, 4, 6 x 10^2, colliding)
    fig.canvas.draw()
    lo, hi = left.get_xlim()
    assert [t for t in left.get_xticks() if lo <= t <= hi] == [100, 200]
    assert [t.get_text() for t in left.get_xticklabels() if lo <= t.get_position()[0] <= hi] == ["100", "200"]
    plt.close(fig)


def test_fig78_trained_averages_seeds_and_labels_an_unconverged_reference():
    rows = [dict(_row("HASFL", fig="fig5", conv=c, sim=40.0), theta_pred_s=100.0, scale_key=None, scale_factor=None)
            for c in (10.0, None)]                                            # seed 1 at Table I did not converge
    rows += [_swept("HASFL", "rate_up", 4.0, c, 50.0, fig="fig8") for c in (5.0, 7.0)]
    fig = fig78_trained(rows, "vgg16")
    ax = fig.axes[0]
    lines = {ln.get_label(): ln for ln in ax.lines}
    assert list(lines["HASFL: trained"].get_ydata()) == [1.0, 0.6]           # means 10 s (converged seeds), 6 s
    assert "did not converge" not in ax.get_ylabel()
    plt.close(fig)
    rows[0]["converged_time_s"] = None                                     # no converged reference: ÷ 40 s, said
    fig = fig78_trained(rows, "vgg16")
    ax = fig.axes[0]
    assert "HASFL did not converge at Table I" in ax.get_ylabel()
    assert list({ln.get_label(): ln for ln in ax.lines}["HASFL: trained"].get_ydata()) == [0.15]
    plt.close(fig)


def test_fig6_converged_shows_the_papers_converged_time_and_hatches_unconverged_accuracy():
    rows = [dict(_row("HASFL", t=1.0, acc=0.9, conv=4.0), converged_acc=0.88),
            dict(_row("RBS+RMS", t=2.0, acc=0.7, conv=None), converged_acc=None)]
    fig = fig6_bars(rows, ("vgg16",), ("iid",), quantity="converged")
    times, accs = fig.axes[0], fig.axes[1]
    assert [round(p.get_height(), 6) for p in times.patches] == [4.0, 0.0]   # converged time, not time to target
    assert [t.get_text() for t in times.texts] == ["× never converged"]      # in its slot, upright
    assert "never converged" in times.get_title()
    assert [round(p.get_height(), 6) for p in accs.patches] == [88.0, 70.0]  # converged acc; final acc where none
    assert [p.get_hatch() for p in accs.patches] == [None, "///"] and "hatched" in accs.get_title()
    plt.close(fig)
    fig = fig6_bars(rows, ("vgg16",), ("iid",))                   # default: time to target, final acc
    assert [round(p.get_height(), 6) for p in fig.axes[0].patches] == [1.0, 2.0]
    assert [round(p.get_height(), 6) for p in fig.axes[1].patches] == [90.0, 70.0]
    plt.close(fig)


def test_a_flat_log_panel_still_labels_several_ticks():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [1.0, 3.0, 7.0])
    ax.set_yscale("log")
    label_log_axis(ax)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if 1.0 <= t.get_position()[1] <= 7.0]
    assert labels == ["1", "2", "5"]
    with pytest.raises(ValueError, match="axis must be 'x' or 'y'"):
        label_log_axis(ax, "z")
    plt.close(fig)


def test_log_tick_labels_beyond_9999_are_powers_of_ten():
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1.5e4, 6e4])
    ax.set_yscale("log")
    label_log_axis(ax)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if 1.5e4 <= t.get_position()[1] <= 6e4]
    assert labels == ["$2\\times10^{4}$", "$5\\times10^{4}$"]
    plt.close(fig)


def test_a_method_keeps_its_style_in_fig5_and_fig9():
    from fedlib.lab.hasfl.figures.train_plots import method_styles
    fig5 = method_styles(["HASFL", "RBS+HAMS", "HABS+RMS", "RBS+RMS", "RBS+RHAMS", "HASFL-calibrated"])
    fig9 = method_styles(["HASFL", "RBS+HAMS", "RBS+RHAMS", "HABS+RMS", "RBS+RMS"])
    assert all(fig5[m] == fig9[m] for m in fig9)
    assert method_styles(["new", "HASFL", "other"]) == {"new": 9, "HASFL": 0, "other": 10}
