"""HASFL's Fig. 9 (converged time against the number of devices N): each benchmark's draws as their mean with a
min-max range. Computes no record."""
from __future__ import annotations

import numpy as np
from matplotlib.transforms import ScaledTranslation

from fedlib.lab.plotting import label_log_axis, new_figure

from fedlib.lab.hasfl.figures.styles import method_style, method_styles


def fig9_points(runs: list[dict], key: str) -> dict | None:
    """One Fig. 9 point from the runs of a method at one N and setting (a random benchmark's draws, or seeds):
    ``mean`` of ``key`` over them, a run without ``key`` (it never reached the target / never converged) counted
    at its whole simulated time ``sim_s``, so that the mean is then a lower bound (``censored`` = how many such
    runs); ``low`` / ``high`` the smallest and largest of those values; ``n`` the runs, ``draws`` and ``seeds``
    how many distinct ones they hold (a row without ``draw`` is draw 0). None when ``runs`` is empty."""
    if not runs:
        return None
    vals = [r[key] if r[key] is not None else r["sim_s"] for r in runs]
    return {"mean": float(np.mean(vals)), "low": float(min(vals)), "high": float(max(vals)), "n": len(vals),
            "censored": sum(r[key] is None for r in runs), "draws": len({r.get("draw", 0) for r in runs}),
            "seeds": len({r.get("seed") for r in runs})}


def _counted(point: dict) -> str:
    """``"3 draws"``, ``"2 seeds"`` or ``"3 draws x 2 seeds"``: what a :func:`fig9_points` mean is over."""
    parts = [f"{point[k]} {k}" for k in ("draws", "seeds") if point[k] > 1]
    return " x ".join(parts) or f"{point['n']} runs"


FIG9_DODGE = 0.3
"""Horizontal offset (in devices) between the methods that have several runs at an N in Fig. 9, so that their
min-max bars do not hide one another; a method with one run per N stays at N."""


def fig9_vs_devices(rows: list[dict]):
    """Fig. 9: simulated time to the target accuracy and converged time (the paper's rule) vs the number of devices
    N, one line per method, one row of panels per data setting of the Fig. 9 rows (IID first). A method with
    several runs at an N (a random benchmark's draws, ``TrainPlan.fig9_draws``, or several seeds) is their mean
    with a min-max bar, set a little apart in x (:data:`FIG9_DODGE`), and its legend says how many. A run that does
    not reach the target (left) or does not converge by the paper's rule (right) within its rounds counts at its
    whole simulated time, and a mean over such a run is a × where the method's line breaks: a lower bound, not a
    measurement (:func:`fig9_points`)."""
    sel_all = [r for r in rows if "fig9" in r["figures"]]
    settings = sorted({r["setting"] for r in sel_all}, key=lambda x: x != "iid") or ["iid"]
    methods = list(dict.fromkeys(r["method"] for r in sel_all))
    methods = sorted(methods, key=lambda m: method_styles(methods)[m])
    several = [m for m in methods
               if any(sum(r["method"] == m and r["N"] == n and r["setting"] == st for r in sel_all) > 1
                      for n in {r["N"] for r in sel_all} for st in settings)]
    shift = {m: FIG9_DODGE * (i - (len(several) - 1) / 2) for i, m in enumerate(several)}
    fig, axes = new_figure(2, len(settings), height=4.2)                 # room for the legends below each panel
    for row_axes, setting in zip(axes, settings):
        sel = [r for r in sel_all if r["setting"] == setting]
        missing, ranged = [False, False], False
        for method in methods:
            st = method_style(method, methods)
            ns = sorted({r["N"] for r in sel if r["method"] == method})
            for j, (ax, key) in enumerate(zip(row_axes, ("time_to_target_s", "converged_time_s"))):
                pts = [(n + shift.get(method, 0.0), fig9_points([r for r in sel if r["method"] == method
                                                                 and r["N"] == n], key)) for n in ns]
                most = max(pts, key=lambda xp: xp[1]["n"])[1] if pts else {"n": 1}
                label = method + (f" (mean of {_counted(most)})" if most["n"] > 1 else "")
                if any(not p["censored"] for _, p in pts):        # the line breaks at a lower bound (NaN)
                    ax.plot([x for x, _ in pts], [np.nan if p["censored"] else p["mean"] for _, p in pts], "-",
                            marker=st["marker"], mfc=st["mfc"], color=st["color"], label=label)
                lower = [(x, p) for x, p in pts if p["censored"]]
                if lower:
                    missing[j] = True
                    word = "reached" if j == 0 else "converged"
                    some = any(p["censored"] < p["n"] or p["n"] > 1 for _, p in lower)
                    ax.plot([x for x, _ in lower], [p["mean"] for _, p in lower], "x", ms=8, mew=1.5,
                            color=st["color"],
                            label=f"{method} (not {word}" + (" in a draw: mean ≥" if some else "") + ")")
                bars = [(x, p) for x, p in pts if p["n"] > 1]
                if bars:
                    ranged = True
                    ys = np.array([p["mean"] for _, p in bars])
                    err = [ys - [p["low"] for _, p in bars], [p["high"] for _, p in bars] - ys]
                    ax.errorbar([x for x, _ in bars], ys, yerr=err, fmt="none", ecolor=st["color"], elinewidth=1.2,
                                capsize=3, alpha=0.8)
        target = sel[0]["target_acc"] if sel else 0
        name = "IID" if setting == "iid" else "non-IID"
        titles = (f"{name}: time to {100 * target:.0f} % accuracy",
                  f"{name}: converged time\n(paper's rule: < 0.02 % gain over 5 evals)")
        for ax, title, miss in zip(row_axes, titles, missing):
            ax.set_xlabel("number of devices N")
            ax.set_ylabel("simulated time (s)")
            ax.set_yscale("log")
            ax.set_xticks(sorted({r["N"] for r in sel_all}))
            label_log_axis(ax)
            ax.set_title(title, fontsize=9)
            ax.grid(alpha=0.3)
            notes = (["bars: min-max over the draws"] if ranged else []) + (
                ["×: lower bound (a run counted at its whole time)"] if miss else [])
            below = ax.transAxes + ScaledTranslation(0, -34 / 72, fig.dpi_scale_trans)   # under the x label
            ax.legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=below,
                      title="; ".join(notes) or None, title_fontsize=6)           # below the panel: points fill it
    fig.tight_layout()
    return fig
