"""HASFL's training figures (Figs. 2a, 3a, 5, 6, 9, 10, 11) from :func:`fedlib.hasfl.train_plan.run_plan`
entries. Curves of several seeds are drawn as their mean with a min-max band (interpolated on a common x grid)."""
from __future__ import annotations

import numpy as np

from ..plotting import colour, new_figure


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


def _band(ax, entries: list[dict], xkey: str, i: int, label: str, scale: float = 1.0) -> None:
    """Mean curve of the seeds in ``entries`` with a min-max band (when more than one seed)."""
    curves = [(np.asarray(e["curve"][xkey], float) * scale, np.asarray(e["curve"]["test_acc"]) * 100)
              for e in entries]
    if len(curves) == 1:
        ax.plot(*curves[0], color=colour(i), label=label, lw=1.3)
        return
    grid = np.linspace(0, min(c[0][-1] for c in curves), 60)
    ys = np.array([np.interp(grid, x, y) for x, y in curves])
    ax.plot(grid, ys.mean(0), color=colour(i), label=f"{label} (mean of {len(curves)})", lw=1.3)
    ax.fill_between(grid, ys.min(0), ys.max(0), color=colour(i), alpha=0.2, lw=0)


def fig_accuracy(entries: list[dict], figure: str, xkey: str, settings: tuple, title: str, **match):
    """Test accuracy vs ``xkey`` (``"epoch"`` or ``"sim_s"``) of one figure's runs, one panel per setting."""
    fig, axes = new_figure(len(settings))
    for ax, setting in zip(axes[0], settings):
        for i, (label, es) in enumerate(_groups(entries, figure, setting=setting, **match).items()):
            _band(ax, es, xkey, i, label)
        ax.set_xlabel("epochs (device samples / |D|)" if xkey == "epoch" else "simulated time (s)")
        if xkey == "sim_s":
            ax.set_xscale("symlog", linthresh=1.0)
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(f"{title}, {setting}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def fig5_accuracy_vs_time(entries: list[dict], models: tuple, settings: tuple):
    """Fig. 5: accuracy vs simulated time for HASFL and the benchmarks, one panel per model and setting."""
    fig, axes = new_figure(len(settings), len(models))
    for row_axes, model in zip(axes, models):
        for ax, setting in zip(row_axes, settings):
            for i, (label, es) in enumerate(_groups(entries, "fig5", model=model, setting=setting).items()):
                _band(ax, es, "sim_s", i, label)
            ax.set_xscale("symlog", linthresh=1.0)
            ax.set_xlabel("simulated time (s)")
            ax.set_ylabel("test accuracy (%)")
            ax.set_title(f"{model}, {setting}", fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def _mean(vals):
    vals = [v for v in vals if v is not None]
    return float(np.mean(vals)) if vals else None


def fig6_bars(rows: list[dict], models: tuple, settings: tuple):
    """Fig. 6: time to the target accuracy (simulated s; hatched bar = not reached within the run, drawn at the
    run's whole simulated time) and final accuracy per method (any method names, e.g. the HASFL variants), one
    panel pair per model. Each setting's bars are labelled with its own target (the rows' ``target_acc``)."""
    fig, axes = new_figure(2, len(models), width=5.0)
    for row_axes, model in zip(axes, models):
        methods = list(dict.fromkeys(r["method"] for r in rows if "fig6" in r["figures"] and r["model"] == model))
        x = np.arange(len(methods))
        for k, setting in enumerate(settings):
            sel = [[r for r in rows if "fig6" in r["figures"] and r["model"] == model and r["setting"] == setting
                    and r["method"] == m] for m in methods]
            t = [_mean([r["time_to_target_s"] for r in rs]) for rs in sel]
            tt = [v if v is not None else _mean([r["sim_s"] for r in rs]) for v, rs in zip(t, sel)]
            acc = [_mean([r["final_test_acc"] for r in rs]) for rs in sel]
            targets = sorted({r["target_acc"] for rs in sel for r in rs})
            to = " / ".join(f"{100 * v:.0f} %" for v in targets) or "-"
            bars = row_axes[0].bar(x + 0.4 * k - 0.2, tt, 0.4, color=colour(k), label=f"{setting} (to {to})")
            for bar, v in zip(bars, t):
                if v is None:
                    bar.set_hatch("//")
                    bar.set_alpha(0.5)
            row_axes[1].bar(x + 0.4 * k - 0.2, [100 * (a or 0) for a in acc], 0.4, color=colour(k), label=setting)
        row_axes[0].set_yscale("log")
        row_axes[0].set_ylabel("simulated time to the setting's target (s)\n(hatched: not reached; whole run)")
        row_axes[1].set_ylabel("final test accuracy (%)")
        for ax in row_axes:
            ax.set_xticks(x, methods, rotation=30, fontsize=7, ha="right")
            ax.set_title(model, fontsize=9)
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def fig9_vs_devices(rows: list[dict]):
    """Fig. 9: simulated time to the target accuracy and converged time vs the number of devices N."""
    fig, axes = new_figure(2)
    sel = [r for r in rows if "fig9" in r["figures"]]
    for i, method in enumerate(dict.fromkeys(r["method"] for r in sel)):
        ns = sorted({r["N"] for r in sel if r["method"] == method})
        for ax, key in zip(axes[0], ("time_to_target_s", "converged_time_s")):
            ys = [_mean([r[key] for r in sel if r["method"] == method and r["N"] == n]) for n in ns]
            pts = [(n, y) for n, y in zip(ns, ys) if y is not None]
            if pts:
                ax.plot(*zip(*pts), "o-", color=colour(i), label=method)
    target = sel[0]["target_acc"] if sel else 0
    for ax, title in zip(axes[0], (f"time to {100 * target:.0f} % accuracy", "converged time (paper's rule)")):
        ax.set_xlabel("number of devices N")
        ax.set_ylabel("simulated time (s)")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
