"""HASFL's training figures (Figs. 2a, 3a, 5, 6, 9, 10, 11) from :func:`fedlib.hasfl.train_plan.run_plan`
entries. Curves of several seeds are drawn as their mean with a min-max band (interpolated on a common x grid)."""
from __future__ import annotations

import numpy as np

from ..plotting import colour, log_floor, new_figure


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


def _draw_groups(ax, groups: dict, xkey: str) -> None:
    """One curve per method; a method whose curves equal an earlier method's (same decisions, so the same run)
    is drawn dashed over it, and the panel names the pairs ("X = Y: identical runs"), so that no curve hides."""
    seen, same = {}, []
    for i, (label, es) in enumerate(groups.items()):
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
    """Fig. 5: accuracy vs simulated time for HASFL and the benchmarks, one panel per model and setting."""
    fig, axes = new_figure(len(settings), len(models))
    for row_axes, model in zip(axes, models):
        for ax, setting in zip(row_axes, settings):
            _draw_groups(ax, _groups(entries, "fig5", model=model, setting=setting), "sim_s")
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


def fig6_bars(rows: list[dict], models: tuple, settings: tuple):
    """Fig. 6: time to the target accuracy (simulated s, log scale from a third of the smallest bar; a run that
    does not reach the target has no bar and a × at the axis' foot, with its final accuracy in the right panel)
    and final accuracy per method (any method names, e.g. the HASFL variants), one panel pair per model, legends
    below the panels. Each setting's bars are labelled with its own target (the rows' ``target_acc``)."""
    fig, axes = new_figure(2, len(models), width=5.0, height=3.6)
    for row_axes, model in zip(axes, models):
        methods = list(dict.fromkeys(r["method"] for r in rows if "fig6" in r["figures"] and r["model"] == model))
        x = np.arange(len(methods))
        times = []
        for k, setting in enumerate(settings):
            sel = [[r for r in rows if "fig6" in r["figures"] and r["model"] == model and r["setting"] == setting
                    and r["method"] == m] for m in methods]
            t = [_mean([r["time_to_target_s"] for r in rs]) for rs in sel]
            times += t
            acc = [_mean([r["final_test_acc"] for r in rs]) for rs in sel]
            targets = sorted({r["target_acc"] for rs in sel for r in rs})
            to = " / ".join(f"{100 * v:.0f} %" for v in targets) or "-"
            xs = x + 0.4 * k - 0.2
            row_axes[0].bar(xs, [v or 0 for v in t], 0.4, color=colour(k), label=f"{setting} (to {to})")
            for xi, v, rs in zip(xs, t, sel):
                if rs and v is None:                       # not reached: a cross at the foot, no whole-run bar
                    row_axes[0].text(xi, 0.01, "×", ha="center", va="bottom", fontsize=10, color=colour(k),
                                     transform=row_axes[0].get_xaxis_transform())
            row_axes[1].bar(xs, [100 * (a or 0) for a in acc], 0.4, color=colour(k), label=setting)
        row_axes[0].set_yscale("log")
        row_axes[0].set_ylim(bottom=log_floor(times))
        row_axes[0].set_ylabel("simulated time to the setting's target (s)")
        row_axes[0].set_title(f"{model}: time to target (× = not reached)", fontsize=9)
        row_axes[1].set_ylabel("final test accuracy (%)")
        row_axes[1].set_title(f"{model}: final accuracy", fontsize=9)
        for ax in row_axes:
            ax.set_xticks(x, methods, rotation=30, fontsize=7, ha="right")
            ax.legend(fontsize=7, ncol=len(settings), loc="upper center", bbox_to_anchor=(0.5, -0.3))
            ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def fig9_vs_devices(rows: list[dict]):
    """Fig. 9: simulated time to the target accuracy and converged time (the paper's rule) vs the number of devices
    N, one line per method. A run that does not reach the target (left) or does not converge by the paper's rule
    (right) within its rounds is a hollow × at its whole simulated time: a lower bound, not a measurement."""
    fig, axes = new_figure(2)
    sel = [r for r in rows if "fig9" in r["figures"]]
    missing = [False, False]
    for i, method in enumerate(dict.fromkeys(r["method"] for r in sel)):
        ns = sorted({r["N"] for r in sel if r["method"] == method})
        for j, (ax, key) in enumerate(zip(axes[0], ("time_to_target_s", "converged_time_s"))):
            runs = [[r for r in sel if r["method"] == method and r["N"] == n] for n in ns]
            ys = [_mean([r[key] for r in rs]) for rs in runs]
            pts = [(n, y) for n, y in zip(ns, ys) if y is not None]
            if pts:
                ax.plot(*zip(*pts), "-", marker=MARKERS[i % len(MARKERS)], color=colour(i), label=method)
            lower = [(n, _mean([r["sim_s"] for r in rs])) for n, y, rs in zip(ns, ys, runs) if y is None and rs]
            if lower:
                missing[j] = True
                ax.plot(*zip(*lower), "x", ms=8, mew=1.5, color=colour(i),
                        label=f"{method}: not {'reached' if j == 0 else 'converged'} (× at the run's end)")
    target = sel[0]["target_acc"] if sel else 0
    titles = (f"time to {100 * target:.0f} % accuracy", "converged time (paper's rule: < 0.02 % gain over 5 evals)")
    for ax, title, miss in zip(axes[0], titles, missing):
        ax.set_xlabel("number of devices N")
        ax.set_ylabel("simulated time (s)" + ("\n(×: lower bound, the run's whole time)" if miss else ""))
        ax.set_yscale("log")
        ax.set_xticks(sorted({r["N"] for r in sel}))
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    return fig
