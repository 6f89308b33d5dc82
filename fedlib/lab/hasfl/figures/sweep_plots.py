"""HASFL's calibration figure and the trained resource sweep (Figs. 7-8, ours), one legend below the panels.
Computes no record."""
from __future__ import annotations

import textwrap

import numpy as np

from fedlib.lab.plotting import colour, label_log_axis, new_figure

from fedlib.lab.hasfl.figures.styles import _mean, method_style


def fig_calibration(rows: list[dict]):
    """The calibrated bound per model (ours, :func:`fedlib.lab.hasfl.runs.train_plan.calibration_table` rows): rounds to the
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
    no ``key``, its whole time is the divisor and the axis label says that every value is then an upper bound.
    Each method has its :func:`method_style`; one opaque legend for every panel sits below them, outside the axes
    (inside, it hid the lines of 3 of the 4 converged panels)."""
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
        for m in methods:
            st = method_style(m, methods)
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
                ax.plot(*zip(*meas), "-", marker=st["marker"], mfc=st["mfc"], color=st["color"], label=f"{m}: trained")
            if low:
                ax.plot(*zip(*low), "x", ms=8, mew=1.5, color=st["color"], label=f"{m}: not converged (× at run's end)")
            if pred:
                ax.plot(*zip(*pred), "--", marker=st["marker"], mfc="none", color=st["color"], alpha=0.8,
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
    bound = "" if ref_meas is not None else f"\n({ref_method} did not converge at Table I: ÷ its whole time, upper bounds)"
    axes[0][0].set_ylabel(f"time relative to {ref_method} at Table I\n(solid: trained, dashed: predicted){bound}")
    _legend_below(fig, [ax for ax in axes[0]])
    return fig


def _legend_below(fig, axes, fontsize: float = 7) -> None:
    """One opaque legend of every labelled line of ``axes`` (each label once), centred below the panels, outside
    every axes: the panels are laid out (``tight_layout``) above the legend's height."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if not handles:
        fig.tight_layout()
        return
    leg = fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(labels), 4),
                     fontsize=fontsize,
                     framealpha=1.0, frameon=True)
    fig.canvas.draw()                                      # the legend's size, in pixels
    height = leg.get_window_extent().height / fig.bbox.height
    fig.tight_layout(rect=(0, height + 0.02, 1, 1))
