"""HASFL's training figures (Figs. 2a, 3a, 5, 6, 9, 10, 11) from :func:`fedlib.hasfl.runs.train_plan.run_plan`
entries. Curves of several seeds are drawn as their mean with a min-max band (interpolated on a common x grid)."""
from __future__ import annotations

import textwrap

import numpy as np

from ...plotting import colour, label_log_axis, log_floor, new_figure


METHOD_ORDER = ("HASFL", "RBS+HAMS", "HABS+RMS", "RBS+RMS", "RBS+RHAMS", "HABS+RMS(C1)", "RBS+RMS(C1)", "HASFL-max",
                "HASFL-calibrated")
"""The methods in one order, so that a method keeps its colour and marker in every figure (Figs. 5, 9)."""


def method_styles(methods) -> dict:
    """``{method: style index}``: :data:`METHOD_ORDER`'s position, then any other method in the order given."""
    methods = list(dict.fromkeys(methods))
    extra = [m for m in methods if m not in METHOD_ORDER]
    return {m: (METHOD_ORDER.index(m) if m in METHOD_ORDER else len(METHOD_ORDER) + extra.index(m)) for m in methods}


def _label(row: dict) -> str:
    if row["method"] == "fixed":
        return f"b = {row['batch']}, cut {row['cut']}"
    return row["method"]


def _groups(entries: list[dict], figure: str, **match) -> dict:
    out: dict = {}
    for e in entries:
        r = e["row"]
        if figure in r["figures"] and all(r[k] == v for k, v in match.items()):
            out.setdefault(_label(r), []).append(e)
    return out


MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*")


def _band(ax, entries: list[dict], xkey: str, i: int, label: str, scale: float = 1.0, ls: str = "-") -> None:
    """Mean curve of the seeds in ``entries`` with a min-max band (when more than one seed); marker i."""
    curves = [(np.asarray(e["curve"][xkey], float) * scale, np.asarray(e["curve"]["test_acc"]) * 100)
              for e in entries]
    style = dict(color=colour(i), lw=1.3, ls=ls, marker=MARKERS[i % len(MARKERS)], ms=3.5, markevery=0.1)
    if len(curves) == 1:
        ax.plot(*curves[0], label=label, **style)
        return
    grid = np.linspace(0, min(c[0][-1] for c in curves), 60)
    ys = np.array([np.interp(grid, x, y) for x, y in curves])
    ax.plot(grid, ys.mean(0), label=f"{label} (mean of {len(curves)})", **style)
    ax.fill_between(grid, ys.min(0), ys.max(0), color=colour(i), alpha=0.2, lw=0)


def _signature(entries: list[dict], xkey: str) -> tuple:
    return tuple((tuple(np.round(e["curve"][xkey], 9)), tuple(np.round(e["curve"]["test_acc"], 9))) for e in entries)


def _draw_groups(ax, groups: dict, xkey: str, index: dict | None = None) -> None:
    """One curve per method; a method whose curves equal an earlier method's (same decisions, so the same run)
    is drawn dashed over it, and the panel names the pairs ("X = Y: identical runs"), so that no curve hides.
    ``index`` (label -> colour and marker index) keeps a method's style the same across panels that hold
    different methods; by default a panel numbers its own."""
    seen, same = {}, []
    for k, (label, es) in enumerate(groups.items()):
        i = k if index is None else index[label]
        sig = _signature(es, xkey)
        ls = "-"
        if sig in seen:
            same.append(f"{label} = {seen[sig]}")
            ls = (0, (4, 3))
        else:
            seen[sig] = label
        _band(ax, es, xkey, i, label, ls=ls)
    if same:
        ax.text(0.98, 0.02, "identical runs (dashed over):\n" + "\n".join(same), transform=ax.transAxes,
                ha="right", va="bottom", fontsize=6, bbox=dict(fc="w", ec="0.7", alpha=0.9))


def fig_accuracy(entries: list[dict], figure: str, xkey: str, settings: tuple, title: str, **match):
    """Test accuracy vs ``xkey`` (``"epoch"`` or ``"sim_s"``) of one figure's runs, one panel per setting."""
    fig, axes = new_figure(len(settings))
    for ax, setting in zip(axes[0], settings):
        _draw_groups(ax, _groups(entries, figure, setting=setting, **match), xkey)
        ax.set_xlabel("epochs (device samples / |D|)" if xkey == "epoch" else "simulated time (s)")
        if xkey == "sim_s":
            ax.set_xscale("symlog", linthresh=1.0)
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(f"{title}, {setting}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.3))   # below: curves fill
    fig.tight_layout()
    return fig


def fig5_accuracy_vs_time(entries: list[dict], models: tuple, settings: tuple):
    """Fig. 5: accuracy vs simulated time for HASFL and the benchmarks, one panel per model and setting; a method
    has the same colour and marker in every panel (a panel may lack a variant, e.g. HASFL-max for a model)."""
    fig, axes = new_figure(len(settings), len(models))
    index = method_styles(_label(e["row"]) for e in entries if "fig5" in e["row"]["figures"])
    for row_axes, model in zip(axes, models):
        for ax, setting in zip(row_axes, settings):
            _draw_groups(ax, _groups(entries, "fig5", model=model, setting=setting), "sim_s", index)
            ax.set_xscale("symlog", linthresh=1.0)
            ax.set_xlabel("simulated time (s)")
            ax.set_ylabel("test accuracy (%)")
            ax.set_title(f"{model}, {setting}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.2))   # below: curves fill
    fig.tight_layout()
    return fig


def _mean(vals):
    vals = [v for v in vals if v is not None]
    return float(np.mean(vals)) if vals else None


FIG6_QUANTITIES = {
    # quantity: (time key, accuracy key, time label, accuracy label, what a missing time means)
    "target": ("time_to_target_s", "final_test_acc", "time to target", "final accuracy", "not reached"),
    "converged": ("converged_time_s", "converged_acc", "converged time", "converged accuracy", "not converged"),
}


def fig6_bars(rows: list[dict], models: tuple, settings: tuple, quantity: str = "target"):
    """Fig. 6: a time and an accuracy per method (any method names, e.g. the HASFL variants) and data setting, one
    panel pair per model, legends below the panels.

    ``quantity="converged"`` is the paper's Fig. 6: converged time (simulated s, when the paper's rule fires:
    < 0.02 % gain over 5 evaluations) and the accuracy at that point; ``"target"`` (the default, for profiles whose
    runs stop before convergence) is the time to each setting's target accuracy (``target_acc``, named in the
    legend) and the run's final accuracy. Times are on a log scale from a third of the smallest bar
    (:func:`fedlib.plotting.log_floor`); a run with no time (not converged / not reached) has no bar but a × at the
    axis' foot; in the converged view its accuracy bar is the run's final accuracy, hatched.

    Raises:
        ValueError: ``quantity`` not one of ``FIG6_QUANTITIES``.
    """
    if quantity not in FIG6_QUANTITIES:
        raise ValueError(f"quantity must be one of {sorted(FIG6_QUANTITIES)}, got {quantity!r}")
    tkey, akey, tname, aname, missing = FIG6_QUANTITIES[quantity]
    fig, axes = new_figure(2, len(models), width=5.0, height=3.6)
    for row_axes, model in zip(axes, models):
        methods = list(dict.fromkeys(r["method"] for r in rows if "fig6" in r["figures"] and r["model"] == model))
        x = np.arange(len(methods))
        times, hatched = [], False
        for k, setting in enumerate(settings):
            sel = [[r for r in rows if "fig6" in r["figures"] and r["model"] == model and r["setting"] == setting
                    and r["method"] == m] for m in methods]
            t = [_mean([r.get(tkey) for r in rs]) for rs in sel]
            times += t
            acc = [_mean([r.get(akey) for r in rs]) for rs in sel]
            final = [_mean([r["final_test_acc"] for r in rs]) for rs in sel]
            label = setting
            if quantity == "target":
                targets = sorted({r["target_acc"] for rs in sel for r in rs})
                label += " (to " + (" / ".join(f"{100 * v:.0f} %" for v in targets) or "-") + ")"
            xs = x + 0.4 * k - 0.2
            row_axes[0].bar(xs, [v or 0 for v in t], 0.4, color=colour(k), label=label)
            for xi, v, rs in zip(xs, t, sel):
                if rs and v is None:                       # no time: a cross at the foot, no whole-run bar
                    row_axes[0].text(xi, 0.01, "×", ha="center", va="bottom", fontsize=10, color=colour(k),
                                     transform=row_axes[0].get_xaxis_transform())
            shown = [a if a is not None else f for a, f in zip(acc, final)]
            no_time = [bool(rs) and v is None for v, rs in zip(t, sel)]
            hatched |= quantity == "converged" and any(no_time)
            bars = row_axes[1].bar(xs, [100 * (a or 0) for a in shown], 0.4, color=colour(k), label=setting)
            for bar, miss in zip(bars, no_time):
                if miss and quantity == "converged":       # not converged: its final accuracy, hatched
                    bar.set_hatch("///")
                    bar.set_edgecolor("w")
        row_axes[0].set_yscale("log")
        row_axes[0].set_ylim(bottom=log_floor(times))
        label_log_axis(row_axes[0])
        row_axes[0].set_ylabel(f"simulated {tname} (s)")
        row_axes[0].set_title(f"{model}: {tname} (× = {missing})", fontsize=9)
        row_axes[1].set_ylabel(f"{aname} (%)")
        row_axes[1].set_title(f"{model}: {aname}" + (" (hatched: not converged, final)" if hatched else ""),
                              fontsize=9)
        for ax in row_axes:
            ax.set_xticks(x, methods, rotation=30, fontsize=7, ha="right")
            ax.legend(fontsize=7, ncol=len(settings), loc="upper center", bbox_to_anchor=(0.5, -0.3))
            ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def fig9_vs_devices(rows: list[dict]):
    """Fig. 9: simulated time to the target accuracy and converged time (the paper's rule) vs the number of devices
    N, one line per method, one row of panels per data setting of the Fig. 9 rows (IID first). A run that does not
    reach the target (left) or does not converge by the paper's rule (right) within its rounds is a hollow × at its
    whole simulated time: a lower bound, not a measurement."""
    sel_all = [r for r in rows if "fig9" in r["figures"]]
    settings = sorted({r["setting"] for r in sel_all}, key=lambda x: x != "iid") or ["iid"]
    fig, axes = new_figure(2, len(settings))
    for row_axes, setting in zip(axes, settings):
        sel = [r for r in sel_all if r["setting"] == setting]
        missing = [False, False]
        for method, i in method_styles(r["method"] for r in sel_all).items():
            ns = sorted({r["N"] for r in sel if r["method"] == method})
            for j, (ax, key) in enumerate(zip(row_axes, ("time_to_target_s", "converged_time_s"))):
                runs = [[r for r in sel if r["method"] == method and r["N"] == n] for n in ns]
                ys = [_mean([r[key] for r in rs]) for rs in runs]
                pts = [(n, y) for n, y in zip(ns, ys) if y is not None]
                if pts:
                    ax.plot(*zip(*pts), "-", marker=MARKERS[i % len(MARKERS)], color=colour(i), label=method)
                lower = [(n, _mean([r["sim_s"] for r in rs])) for n, y, rs in zip(ns, ys, runs) if y is None and rs]
                if lower:
                    missing[j] = True
                    ax.plot(*zip(*lower), "x", ms=8, mew=1.5, color=colour(i),
                            label=f"{method} (not {'reached' if j == 0 else 'converged'})")
        target = sel[0]["target_acc"] if sel else 0
        name = "IID" if setting == "iid" else "non-IID"
        titles = (f"{name}: time to {100 * target:.0f} % accuracy",
                  f"{name}: converged time (paper's rule: < 0.02 % gain over 5 evals)")
        for ax, title, miss in zip(row_axes, titles, missing):
            ax.set_xlabel("number of devices N")
            ax.set_ylabel("simulated time (s)" + ("\n(×: lower bound, the run's whole time)" if miss else ""))
            ax.set_yscale("log")
            ax.set_xticks(sorted({r["N"] for r in sel_all}))
            label_log_axis(ax)
            ax.set_title(title, fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.26))   # below: points fill
    fig.tight_layout()
    return fig


def fig_calibration(rows: list[dict]):
    """The calibrated bound per model (ours, :func:`fedlib.hasfl.runs.train_plan.calibration_table` rows): rounds to the
    IID target measured on each calibration run (x) against Corollary 1 under the fitted (ε, κ, λ) (y), one panel
    per model, each run labelled ``b/cut``; the diagonal is a perfect fit. Runs that never reach the target sit at
    the axis' foot as hollow × (no measured value), and a model whose fit failed says why on its panel."""
    models = list(dict.fromkeys(r["model"] for r in rows)) or ["(none)"]
    fig, axes = new_figure(len(models))
    for ax, model in zip(axes[0], models):
        mine = [r for r in rows if r["model"] == model]
        ok = [r for r in mine if r.get("rounds_measured") is not None and r.get("rounds_fit") is not None]
        if not ok:
            note = next((r.get("note") for r in mine if r.get("note")), "no calibration run reached the target")
            ax.text(0.5, 0.5, "no fit:\n" + textwrap.fill(note, 48), ha="center", va="center", fontsize=7,
                    transform=ax.transAxes)
            ax.set_title(model, fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
            continue
        x = np.array([r["rounds_measured"] for r in ok], float)
        y = np.array([r["rounds_fit"] for r in ok], float)
        lo, hi = min(x.min(), y.min()) / 1.3, max(x.max(), y.max()) * 1.3
        ax.plot([lo, hi], [lo, hi], color="0.6", lw=1, label="fit = measured")
        cuts = [r for r in ok if r["batch"] == ok[0]["batch"]]
        for i, r in enumerate(ok):
            fixed_cut_run = r in cuts and len(cuts) > 1
            ax.plot(r["rounds_measured"], r["rounds_fit"], "o" if fixed_cut_run else "s", color=colour(0 if fixed_cut_run else 1),
                    ms=6)
            ax.annotate(f"{r['batch']}/{r['cut']}", (r["rounds_measured"], r["rounds_fit"]), fontsize=6,
                        xytext=(4, 3 if i % 2 else -8), textcoords="offset points")
        missed = [r for r in mine if r.get("rounds_measured") is None and r.get("batch") is not None]
        if missed:
            ax.text(0.02, 0.02, "not reached: " + ", ".join(f"{r['batch']}/{r['cut']}" for r in missed),
                    fontsize=6, transform=ax.transAxes)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        label_log_axis(ax, "x")              # a panel under a decade wide got 2, 3, 4, 6 x 10^2 labels, colliding
        label_log_axis(ax, "y")
        ax.set_xlabel("rounds to the target, measured")
        ax.set_ylabel("rounds, Corollary 1 under the fit")
        r0 = ok[0]
        ax.set_title(f"{model}: κ = {r0['kappa']:.3g}, λ = {r0['lambda']:.3g}, ε = {r0['eps']:.3g}\n"
                     f"relative residual {r0['residual']:.2g} (labels: b/cut)", fontsize=8)
        ax.plot([], [], "o", color=colour(0), label=f"fixed b = {cuts[0]['batch']}, cuts vary")
        ax.plot([], [], "s", color=colour(1), label="fixed cut, b varies")
        ax.legend(fontsize=6, loc="lower right")              # the worst misfits sit high, above the diagonal
        ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


SCALE_LABELS = {"device_flops": "Fig. 7: device compute f_i", "server_flops": "Fig. 7: server compute f_s",
                "rate_up": "Fig. 8: device uplink rate", "rate_servers": "Fig. 8: inter-server rate"}


def fig78_trained(rows: list[dict], model: str, setting: str = "iid", key: str = "converged_time_s"):
    """Figs. 7-8 trained (ours; the paper's are predictions): per swept Table I quantity (one panel each), the
    measured ``key`` (solid; converged time by the paper's rule by default) and the system model's predicted Θ
    (dashed) of each method against the quantity's factor, seeds averaged, both relative to the reference method's
    at Table I (HASFL when swept, else the first method; factor 1 is Fig. 5's run of ``model``, ``setting``), so
    that the trends and the methods' ratios read on one log axis. A point whose runs have no ``key`` (not
    converged / not reached) is a hollow × at the runs' whole time: a lower bound. When the reference itself has
    no ``key``, its whole time is the divisor and the axis label says that every value is then an upper bound."""
    swept = [r for r in rows if {"fig7", "fig8"} & set(r["figures"]) and r["model"] == model
             and r["setting"] == setting]
    methods = list(dict.fromkeys(r["method"] for r in swept))
    base = [r for r in rows if "fig5" in r["figures"] and r["model"] == model and r["setting"] == setting
            and r["method"] in methods]
    keys = [k for k in SCALE_LABELS if any(r["scale_key"] == k for r in swept)]
    fig, axes = new_figure(max(1, len(keys)), width=3.4)
    ref_method = "HASFL" if "HASFL" in methods else (methods[0] if methods else None)
    ref_rows = [r for r in base if r["method"] == ref_method]
    ref_meas = _mean([r[key] for r in ref_rows])
    ref_div = ref_meas if ref_meas is not None else _mean([r["sim_s"] for r in ref_rows])
    ref_pred = _mean([r["theta_pred_s"] for r in ref_rows])

    def point(rs):
        meas = _mean([r[key] for r in rs])
        return (meas, _mean([r["sim_s"] for r in rs]), _mean([r["theta_pred_s"] for r in rs]))

    for ax, k in zip(axes[0], keys):
        for i, m in enumerate(methods):
            by_f = {1.0: [r for r in base if r["method"] == m]}
            for r in swept:
                if r["scale_key"] == k and r["method"] == m:
                    by_f.setdefault(r["scale_factor"], []).append(r)
            pts = sorted((f, point(rs)) for f, rs in by_f.items() if rs)
            if not ref_div or not pts:
                continue
            meas = [(f, p[0] / ref_div) for f, p in pts if p[0] is not None]
            low = [(f, p[1] / ref_div) for f, p in pts if p[0] is None]
            pred = [(f, p[2] / ref_pred) for f, p in pts if p[2] is not None and ref_pred]
            if meas:
                ax.plot(*zip(*meas), "-", marker=MARKERS[i % len(MARKERS)], color=colour(i), label=f"{m}: trained")
            if low:
                ax.plot(*zip(*low), "x", ms=8, mew=1.5, color=colour(i), label=f"{m}: not converged (× at run's end)")
            if pred:
                ax.plot(*zip(*pred), "--", marker=MARKERS[i % len(MARKERS)], mfc="none", color=colour(i), alpha=0.8,
                        label=f"{m}: predicted Θ")
        ax.set_xscale("log")
        ax.set_yscale("log")
        factors = sorted({1.0} | {r["scale_factor"] for r in swept if r["scale_key"] == k})
        ax.set_xticks(factors, [f"{f:g}" for f in factors])
        ax.minorticks_off()
        label_log_axis(ax)                                 # a flat panel spans less than a decade
        ax.set_xlabel("factor on Table I's range")
        ax.set_title(SCALE_LABELS[k], fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=5.5)
    bound = "" if ref_meas is not None else f"\n({ref_method} did not converge at Table I: ÷ its whole time, upper bounds)"
    axes[0][0].set_ylabel(f"time relative to {ref_method} at Table I\n(solid: trained, dashed: predicted){bound}")
    fig.tight_layout()
    return fig
