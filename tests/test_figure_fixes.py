"""Figure review fixes: Figs. 7-8's legend hides no line; DTFL Table 4's "not reached" × sit at their K and a missed
accuracy never reads as the target; a HASFL run that never converged says so in Figs. 5 / 6 and in the notebooks'
tables; each method has one colour and marker across a paper's figures (HASFL, DTFL)."""
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from fedlib.lab.dtfl import compare_plots as cp  # noqa: E402
from fedlib.lab.hasfl.figures import plots, train_plots  # noqa: E402
from hasfl5_cells import draw  # noqa: E402
from test_hasfl_figures import fig6_bars, fig78_trained, fig9_vs_devices  # noqa: E402  (hasfl_5's cells)

ROOT = Path(__file__).resolve().parents[1]
HASFL_METRICS = ROOT / "figures" / "converged" / "metrics" / "hasfl_5_train_figures.json"


def _rgba(c):
    return tuple(round(v, 4) for v in to_rgba(c))


# --- Figs. 7-8: the legend hides no data -----------------------------------------------------------------------

def _points_under(box, ax, ln, per_segment: int = 25) -> int:
    """How many points of ``ln`` (its markers and its segments, sampled) inside ``ax`` fall in the display box."""
    x, y = np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
    ok = np.isfinite(x) & np.isfinite(y)
    pts = ln.get_transform().transform(np.column_stack([x[ok], y[ok]]))
    if len(pts) > 1 and ln.get_linestyle() not in ("None", "", " "):
        t = np.linspace(0, 1, per_segment)[:, None]
        pts = np.vstack([a + t * (b - a) for a, b in zip(pts[:-1], pts[1:])] + [pts])
    axbox = ax.get_window_extent()
    pts = pts[(pts[:, 0] >= axbox.x0) & (pts[:, 0] <= axbox.x1) & (pts[:, 1] >= axbox.y0) & (pts[:, 1] <= axbox.y1)]
    return int(box.count_contains(pts)) if len(pts) else 0


def _legends_hiding_data(fig) -> list[str]:
    fig.canvas.draw()
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends, "the figure has no legend"
    hits = []
    for leg in legends:
        box = leg.get_window_extent().padded(2)
        for i, ax in enumerate(fig.axes):
            hits += [f"panel {i}: {ln.get_label()}" for ln in ax.lines if _points_under(box, ax, ln)]
    return hits


def _fig78_rows():
    """Figs. 7-8's shape at the converged profile: flat lines near the top of three of the four panels (the
    benchmark's predicted Θ at 7.4x HASFL's), where matplotlib's "best" legend sat on them."""
    rows = []
    for m, conv, theta in (("HASFL", 10.0, 100.0), ("RBS+HAMS", 35.0, 740.0)):
        rows.append({"method": m, "figures": ["fig5"], "model": "vgg16", "setting": "iid", "converged_time_s": conv,
                     "sim_s": conv, "theta_pred_s": theta, "scale_key": None, "scale_factor": None})
        for key, fig in (("device_flops", "fig7"), ("server_flops", "fig7"), ("rate_up", "fig8"),
                         ("rate_servers", "fig8")):
            for f in (0.25, 4.0):
                slope = f ** -0.7 if key == "rate_up" else 1.0
                rows.append({"method": m, "figures": [fig], "model": "vgg16", "setting": "iid",
                             "converged_time_s": conv * slope, "sim_s": conv * slope, "theta_pred_s": theta * slope,
                             "scale_key": key, "scale_factor": f})
    return rows


def test_fig78_legend_is_opaque_and_hides_no_line():
    fig = fig78_trained(_fig78_rows(), "vgg16")
    assert _legends_hiding_data(fig) == []
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert all(leg.get_frame().get_alpha() == 1 for leg in legends)
    labels = [t.get_text() for leg in legends for t in leg.get_texts()]
    assert len(labels) == len(set(labels)) and "RBS+HAMS: predicted Θ" in labels     # one legend, each entry once
    plt.close(fig)


@pytest.mark.skipif(not HASFL_METRICS.exists(), reason="no committed HASFL metrics")
def test_fig78_legend_hides_no_line_on_the_committed_runs():
    rows = json.loads(HASFL_METRICS.read_text())["runs"]
    if not any("fig7" in r["figures"] for r in rows):
        pytest.skip("the committed metrics hold no trained Figs. 7-8")
    fig = fig78_trained(rows, "vgg16", "iid")
    assert _legends_hiding_data(fig) == []
    plt.close(fig)


# --- DTFL Table 4 (drawn in dtfl_6_scaling): a missed accuracy never reads as the target -------------------------

def test_a_missed_accuracy_is_labelled_with_the_digits_that_tell_it_from_the_target():
    assert cp.missed_label(0.7075, 0.71) == "70.75 %"          # DTFL's 0.7075 against 0.71 (it read "0.71")
    assert cp.missed_label(0.70999, 0.71) == "70.99 %"          # cut, never rounded up to the target
    assert cp.missed_label(0.709999, 0.7100) == "70.99 %"
    assert cp.missed_label(0.63, 0.71) == "63.00 %"


# --- a run that never converged says so -------------------------------------------------------------------------

def _fig6_rows():
    return [{"method": m, "setting": s, "model": "resnet18", "figures": ["fig5", "fig6"], "seed": 0, "rounds": n,
             "converged_time_s": c, "converged_acc": None if c is None else 0.88, "final_test_acc": 0.87,
             "time_to_target_s": 5.0, "target_acc": 0.86, "sim_s": 88.165 if c is None else c}
            for m, s, c, n in (("HASFL", "iid", 15.4, 2352), ("RBS+RMS", "iid", None, 504), ("HASFL", "noniid", 8.0, 1232),
                               ("RBS+RMS", "noniid", 72.4, 414))]


def test_fig6_says_never_converged_in_the_runs_slot():
    fig = fig6_bars(_fig6_rows(), ("resnet18",), ("iid", "noniid"), "converged")
    times = fig.axes[0]
    texts = [t.get_text() for t in times.texts]
    assert texts == ["× never converged (504 rounds)"]
    slot = times.texts[0].get_position()[0]
    assert slot == pytest.approx(1 - 0.2)                      # RBS+RMS (x = 1), the IID bar's slot
    assert "never converged" in times.get_title()
    plt.close(fig)


def test_fig5_legend_says_which_run_never_converged():
    rows = _fig6_rows()
    entries = [{"row": r, "curve": {"sim_s": [0.0, 1.0, r["sim_s"]], "test_acc": [0.1, 0.5, 0.87]}} for r in rows]
    fig = train_plots.fig5_accuracy_vs_time(entries, ("resnet18",), ("iid", "noniid"))
    iid = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert iid == ["HASFL", "RBS+RMS\nnever converged (504 rounds)"]
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["HASFL", "RBS+RMS"]
    plt.close(fig)


def test_tables_say_never_converged_instead_of_a_dash():
    from fedlib.lab import story
    from fedlib.lab.hasfl.runs.plan_analysis import claim_ratios
    rows = _fig6_rows()
    runs = str(story.table(train_plots.convergence_cells(rows), ["method", "setting", "converged_time_s", "converged_acc"],
                           formats={"converged_time_s": ".3g", "converged_acc": "1%"}))
    line = next(ln for ln in runs.splitlines() if "RBS+RMS" in ln and "iid" in ln and "noniid" not in ln)
    assert "never converged (504 rounds)" in line and "–" not in line
    assert [r["converged_time_s"] for r in rows][1] is None               # the rows (the metrics) keep None
    claims = claim_ratios(rows)
    shown = str(story.table(train_plots.claim_cells(claims, rows), ["setting", "versus", "conv_ratio", "conv_acc_gain"],
                            formats={"conv_ratio": ".2f", "conv_acc_gain": "1%"}))
    line = next(ln for ln in shown.splitlines() if "| iid |" in ln)
    assert "≥ 5.72: RBS+RMS never converged (504 rounds)" in line and "n/a: never converged" in line   # 88.165 / 15.4
    assert "| noniid | RBS+RMS | 9.05 |" in shown                          # converged both: the ratio, unchanged
    assert claims[0]["conv_ratio"] is None                                # the claims (the metrics) keep None
    assert train_plots.never_converged([dict(rows[1], seed=1), dict(rows[0], seed=0)]) == \
        "1 of 2 seeds never converged (504 rounds)"
    assert train_plots.never_converged(rows[:1]) is None
    # a claim of one seed (the out-of-sample tables) reads only that seed's runs: seed 2's RBS+RMS converged
    seeded = [dict(r, seed=1) for r in rows] + [dict(r, seed=2, converged_time_s=r["converged_time_s"] or 50.0)
                                                  for r in rows]
    one = [dict(c, seed=s) for s in (1, 2) for c in claim_ratios([r for r in seeded if r["seed"] == s])]
    cells = train_plots.claim_cells(one, seeded)
    iid = [c for c in cells if c["setting"] == "iid"]
    assert str(iid[0]["conv_ratio"]).endswith("RBS+RMS never converged (504 rounds)")      # not "1 of 2 seeds"
    assert iid[1]["conv_ratio"] == pytest.approx(50.0 / 15.4, rel=1e-6)


# --- one colour and marker per method across a paper's figures --------------------------------------------------

HASFL_METHODS = ("HASFL", "RBS+HAMS", "HABS+RMS", "RBS+RMS", "RBS+RHAMS", "HABS+RMS(C1)", "RBS+RMS(C1)")


def _line_styles(fig, strip=("", )) -> dict:
    out = {}
    for ax in fig.axes:
        for ln in ax.lines:
            label = ln.get_label()
            for s in strip:
                label = label.split(s)[0] if s else label
            marker = ln.get_marker()                   # none: a faint reference line (Fig. 5's variants)
            if not label.startswith("_") and marker != "x":
                out.setdefault(label, (_rgba(ln.get_color()), None if marker in ("None", None, "") else marker))
    return out


def _hasfl_styles() -> dict:
    """``{figure: {method: (colour, marker or None)}}`` read off the drawn artists of every HASFL figure."""
    curve = {"sim_s": [0.0, 1.0, 2.0], "epoch": [0.0, 0.5, 1.0], "test_acc": [0.1, 0.5, 0.7]}
    fig5_rows = [{"method": m, "figures": ["fig5", "fig6"], "model": "vgg16", "setting": "iid", "converged_time_s": 1.0,
                  "time_to_target_s": 1.0, "final_test_acc": 0.8, "converged_acc": 0.8, "target_acc": 0.6, "sim_s": 1.0,
                  "rounds": 10} for m in HASFL_METHODS[::-1]]                 # any order: the style follows the name
    fixed = [{"method": "fixed", "batch": b, "cut": c, "figures": figs, "model": "vgg16", "setting": "iid"}
             for b, c, figs in ((8, 8, ["fig2a", "fig10"]), (16, 8, ["fig2a", "fig10", "fig3a", "fig11"]),
                                (64, 8, ["fig2a", "fig10"]), (16, 2, ["fig3a", "fig11"]), (16, 13, ["fig3a", "fig11"]))]
    parts = [{"method": m, "figures": [f], "model": "vgg16", "setting": "iid"}
             for m, f in (("HABS", "fig10"), ("HABS-calibrated", "fig10"), ("HAMS", "fig11"), ("HAMS-calibrated", "fig11"))]
    entries = [{"row": r, "curve": dict(curve, test_acc=[0.1, 0.5, 0.7 - 0.01 * i])}
               for i, r in enumerate(fig5_rows + fixed + parts)]
    out = {}
    fig = train_plots.fig5_accuracy_vs_time(entries, ("vgg16",), ("iid",))
    out["fig5"] = _line_styles(fig)
    others = train_plots.fixed_labels(entries)
    figs = {**draw("hasfl_fig2a_accuracy_vs_epochs_batch", entries=entries, settings=["iid"]),
            **draw("hasfl_fig10_habs_vs_fixed_batch", entries=entries, settings=["iid"], others_=others)}
    for name in ("fig10", "fig11", "fig2a", "fig3a"):
        out[name] = _line_styles(next(f for n, f in figs.items() if n.startswith(f"hasfl_{name}_")))
    fig9 = [dict(r, figures=["fig9"], N=n) for r in fig5_rows for n in (5, 10)]
    out["fig9"] = _line_styles(fig9_vs_devices(fig9))
    swept = [dict(r, figures=[f], scale_key=k, scale_factor=s, theta_pred_s=5.0)
             for r in fig5_rows for f, k in (("fig7", "device_flops"), ("fig8", "rate_up")) for s in (0.25, 4.0)]
    fig = fig78_trained([dict(r, theta_pred_s=5.0) for r in fig5_rows] + swept, "vgg16")
    out["fig7_8"] = {k: v for k, v in _line_styles(fig, (": trained",)).items() if ":" not in k}
    fig = plots.fig_strategies([{"method": m, "theta": 10.0 + i, "theta_std": 0.0, "infeasible": 0}
                                for i, m in enumerate(HASFL_METHODS[::-1])])
    ax = fig.axes[0]
    out["strategies"] = {t.get_text(): (_rgba(p.get_facecolor()), None)
                         for t, p in zip(ax.get_xticklabels(), ax.patches)}
    fig = fig6_bars(fig5_rows, ("vgg16",), ("iid",), "converged")
    ax = fig.axes[0]
    out["fig6"] = {t.get_text(): (_rgba(p.get_facecolor()), None) for t, p in zip(ax.get_xticklabels(), ax.patches)}
    plt.close("all")
    return out


def test_each_hasfl_method_has_one_colour_and_marker_in_every_figure():
    styles = _hasfl_styles()
    seen: dict = {}
    for figure, by_method in styles.items():
        for method, (c, marker) in by_method.items():
            seen.setdefault(method, []).append((figure, c, marker))
    for method in HASFL_METHODS:
        figures = seen[method]
        assert len({c for _, c, _ in figures}) == 1, (method, figures)
        assert len({m for _, _, m in figures if m is not None}) == 1, (method, figures)
        assert len(figures) == 5, (method, [f for f, _, _ in figures])   # Figs. 5, 6, 7-8, 9, strategies
    # no two methods (HASFL's blocks and the fixed configurations included) share a colour and a marker
    first = {method: (fs[0][1], next((m for _, _, m in fs if m is not None), None)) for method, fs in seen.items()}
    assert len(set(first.values())) == len(first), first
    # and no fixed configuration wears a method's colour
    method_colours = {first[m][0] for m in first if not m.startswith("b = ")}
    assert not {first[m][0] for m in first if m.startswith("b = ")} & method_colours
    assert styles["fig10"]["b = 16, cut 8"] == styles["fig11"]["b = 16, cut 8"] == styles["fig2a"]["b = 16, cut 8"]


def _dtfl_entries(methods):
    return [{"row": {"setting": "iid", "model": "resnet20", "method": m, "seed": 0, "target_acc": 0.7, "num_clients": 10},
             "sim": {"round_s": [10.0, 10.0, 10.0]}, "record": {"round": [0, 1, 2, 3], "test_acc": [0.1, 0.4, 0.6, 0.8]}}
            for m in methods]


def test_each_dtfl_method_has_one_colour_in_every_figure():
    # Fig. 2 (the lab's) draws each method in method_colour, which Tables 3 and 4 (drawn in dtfl_5 / dtfl_6) use too
    methods = list(cp.BAR_METHODS)
    names = {cp.LABELS[m]: m for m in methods}
    fig = cp.fig2_accuracy_vs_time(_dtfl_entries(methods[::-1]), "iid", "resnet20")
    drawn = {names[ln.get_label()]: _rgba(ln.get_color()) for ln in fig.axes[1].lines if ln.get_label() in names}
    plt.close("all")
    assert drawn == {m: _rgba(cp.method_colour(m)) for m in methods}
    assert len(set(drawn.values())) == len(methods)


# --- the provenance footer can be left out of a figure exported for a paper --------------------------------------

def _saved_texts(fig, tmp_path, monkeypatch) -> list[str]:
    from fedlib.lab.plotting import savefig
    monkeypatch.setenv("FEDLIB_FIGURES_DIR", str(tmp_path))
    paths = savefig(fig, "footer_probe", formats=("png",))
    assert [p.name for p in paths] == ["footer_probe.png"] and paths[0].stat().st_size > 0
    return [t.get_text() for t in fig.texts]


@pytest.mark.parametrize("raw, drawn", [("", True), ("0", True), ("1", False), ("true", False)])
def test_the_provenance_footer_is_switched_off_by_fedlib_no_footer(tmp_path, monkeypatch, raw, drawn):
    from fedlib.lab.plotting import caption
    monkeypatch.setenv("FEDLIB_NO_FOOTER", raw)
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    caption(fig, "fashion-mnist", "converged", "N = 20")
    texts = _saved_texts(fig, tmp_path, monkeypatch)
    expected = ["dataset: fashion-mnist · profile: converged · fedlib "] if drawn else []
    assert [t.split("fedlib ")[0] + "fedlib " for t in texts] == expected
    assert drawn == any("differs from the paper: N = 20" in t for t in texts)
    plt.close(fig)


def test_a_bad_fedlib_no_footer_is_refused(monkeypatch):
    from fedlib.lab.plotting import caption
    monkeypatch.setenv("FEDLIB_NO_FOOTER", "maybe")
    fig = plt.figure()
    with pytest.raises(ValueError, match="^FEDLIB_NO_FOOTER must be 1, true or yes .*got 'maybe'"):
        caption(fig, "fashion-mnist", "converged")
    assert fig.texts == []
    plt.close(fig)
