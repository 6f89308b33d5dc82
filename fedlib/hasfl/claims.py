"""HASFL's claims, their rules and how each is read out of a notebook's metrics.

The paper: Zheng Lin, Zhe Chen, Xianhao Chen, Wei Ni, Yue Gao, *HASFL: Heterogeneity-aware Split Federated
Learning over Edge Computing Systems*, arXiv:2506.08426. :mod:`fedlib.core.verdicts` judges each :class:`Claim`
below on the committed metrics of :data:`PROFILE` (``python -m fedlib.tables``) and each notebook's Verdict cell
judges the claims it decides on the metrics it just wrote (:func:`fedlib.core.story.verdict_section`).

Estimation variants (separate cells, never averaged):

- ``pilot``: HASFL as the paper defines it, the bound with constants estimated on a pilot run (and, for claims
  that need no bound, the measured runs themselves);
- ``calibrated``: HASFL-calibrated (ours, not in the paper): the bound's shape fitted per model to the IID
  fixed-cut / fixed-batch runs of the same seed (in sample), against the same benchmark runs;
- ``calibrated, out of sample``: the fit of seed 0 deciding at seed 1 (its own system, data split, initial weights
  and benchmark draws; VGG-16 only).

Speed-ups are converged times, benchmark / HASFL (> 1: HASFL faster), with "converged" the paper's rule (< 0.02 %
gain over 5 evaluations). A run the rule never stopped (within its 6-epoch cap) has no converged time: a ratio
against it is a :class:`Censored` bound (its whole simulated time stands for the converged time). Comparisons use
the paper's four benchmarks with the paper's random split (RMS among the memory-feasible cuts); our earlier
RMS(C1) draw is shown in the notebooks, not judged.

Every threshold below comes from the paper's wording and was fixed before the tables were regenerated.
"""
from __future__ import annotations

import math
from functools import partial
from typing import Mapping, Sequence

from ..core.verdicts import AtLeast, Censored, Claim, Trend, registered

PROFILE = "converged"

SUMMARY = {"title": "HASFL: heterogeneity-aware split FL", "ref": "arXiv:2506.08426", "link": "https://arxiv.org/abs/2506.08426",
           "scale": "converged profile, Fashion-MNIST, VGG-16 (width 1/4) and ResNet-18 (width 1/8), "
                    "Table I's 20 devices, seed 0 (+ seeds 1, 2 out of sample, VGG-16)"}

BENCHMARKS = ("RBS+HAMS", "HABS+RMS", "RBS+RMS", "RBS+RHAMS")
"""The paper's four benchmarks (Sec. VII), with the paper's random split."""

PILOT, CALIBRATED, OUT = "pilot", "calibrated", "calibrated, out of sample"
VARIANTS = (PILOT, CALIBRATED, OUT)
GAMMA, INTERVAL = 5e-4, 15
"""Table I's step size and aggregation interval (the bound's split term of the hasfl_2 claim)."""

SPLIT_CUTS = (1, 4, 7, 10, 13)
"""The cuts of Fig. 2b (VGG-16's conv layers, every third) at which the hasfl_1 / hasfl_2 claims are read."""
FIXED_BATCHES = (8, 16, 32)
"""Fig. 10's fixed batch sizes (the paper's)."""


# --- reading runs -------------------------------------------------------------------------------------------------

def _run(rows: Sequence[Mapping], method: str, model: str, setting: str, figure: str = "fig5", **match) -> Mapping:
    """The one row of ``method`` on ``model`` / ``setting`` drawn in ``figure`` (KeyError when there is none)."""
    for r in rows:
        if (r["method"] == method and r["model"] == model and r["setting"] == setting and figure in r["figures"]
                and all(r.get(k) == v for k, v in match.items())):
            return r
    raise KeyError(f"no run of {method} on {model} {setting} in {figure} {match or ''}".rstrip())


def _models_settings(rows: Sequence[Mapping], figure: str = "fig5") -> list[tuple[str, str]]:
    found = sorted({(r["model"], r["setting"]) for r in rows if figure in r["figures"]})
    if not found:
        raise KeyError(f"no run in {figure}")
    return found


def time_ratio(slow: Mapping, fast: Mapping):
    """``slow``'s converged time / ``fast``'s, or a :class:`Censored` bound when one of them never converged
    (its whole simulated time stands in: a lower bound when ``slow`` never converged, an upper one for ``fast``)."""
    ts, tf = slow["converged_time_s"], fast["converged_time_s"]
    if ts is not None and tf is not None:
        return ts / tf
    if ts is None and tf is not None:
        return Censored(slow["sim_s"] / tf, "lower")
    if tf is None and ts is not None:
        return Censored(ts / fast["sim_s"], "upper")
    raise KeyError(f"neither {slow['method']} nor {fast['method']} converged")


def acc_gain_points(ours: Mapping, other: Mapping):
    """Converged accuracy of ``ours`` minus ``other``'s, in points; a run that never converged counts with its best
    accuracy so far, as a bound (its converged accuracy can only be higher)."""
    a, b = ours["converged_acc"], other["converged_acc"]
    if a is not None and b is not None:
        return 100 * (a - b)
    if a is not None:
        return Censored(100 * (a - other["best_test_acc"]), "upper")
    if b is not None:
        return Censored(100 * (ours["best_test_acc"] - b), "lower")
    raise KeyError(f"neither {ours['method']} nor {other['method']} converged")


def smallest(values: Sequence):
    """The minimum of numbers and :class:`Censored` bounds, as a number or a bound.

    A lower bound ``≥ c`` below every number leaves the minimum in ``[c, min numbers]``: reported as ``≥ c``; an
    upper bound ``≤ c`` makes the minimum at most ``min(c, numbers)``. Raises ``KeyError`` on no values and
    ``TypeError`` on bounds of both sides (the minimum is then not bounded in one direction)."""
    values = list(values)
    if not values:
        raise KeyError("no values")
    exact = [v for v in values if not isinstance(v, Censored)]
    lower = [v.value for v in values if isinstance(v, Censored) and v.side == "lower"]
    upper = [v.value for v in values if isinstance(v, Censored) and v.side == "upper"]
    if lower and upper:
        raise TypeError("a minimum over lower and upper bounds at once")
    m = min(exact) if exact else math.inf
    if upper:
        return Censored(min([m, *upper]), "upper")
    if lower and min(lower) < m:
        return Censored(min(lower), "lower")
    return m


# --- extract functions: metrics -> {variant: [value per seed]} ---------------------------------------------------

def _oos_rows(metrics: Mapping) -> dict | None:
    """The out-of-sample runs by seed, ``{seed: rows}`` in the order of ``out_of_sample_seeds``; ``None`` when the
    run chose none (an empty list: no such cell), a ``KeyError`` when a chosen seed has no runs. Metrics written
    before the seeds became a list hold ``out_of_sample_seed`` (one seed, -1: none)."""
    rows = metrics["runs_out_of_sample"]
    if "out_of_sample_seeds" in metrics:
        seeds = list(metrics["out_of_sample_seeds"])
    else:
        seeds = [] if metrics.get("out_of_sample_seed", -1) < 0 else [metrics["out_of_sample_seed"]]
    if not seeds and not rows:
        return None
    by_seed = {s: [r for r in rows if r["seed"] == s] for s in seeds}
    if missing := [s for s, rs in by_seed.items() if not rs]:
        raise KeyError(f"runs_out_of_sample holds no run of out-of-sample seed(s) {missing}")
    return by_seed


def _speedups(rows, ours: str, versus: Sequence[str], models: Sequence[str] | None = None) -> list:
    pairs = [(m, s) for m, s in _models_settings(rows) if models is None or m in models]
    if not pairs:
        raise KeyError(f"no Fig. 5 run of {', '.join(models or ())}")
    return [time_ratio(_run(rows, b, m, s), _run(rows, ours, m, s)) for m, s in pairs for b in versus]


def _other_seeds(metrics: Mapping, models: Sequence[str] | None) -> list:
    """The out-of-sample seeds' rows (one list per seed) that hold a run of ``models`` (every model: None)."""
    oos = _oos_rows(metrics) or {}
    return [rows for rows in oos.values()
            if any(models is None or m in models for m, _ in _models_settings(rows))]


def speedup(metrics: Mapping, versus: Sequence[str] = BENCHMARKS, models: Sequence[str] | None = None,
            out_of_sample: bool = True) -> dict:
    """The smallest converged-time ratio benchmark / HASFL over ``versus`` and every model and setting of Fig. 5, per
    variant and seed: pilot HASFL at the first seed and at each out-of-sample seed (plain runs of the first model
    only there), HASFL-calibrated in sample (the first seed) and out of sample (each further seed, decided from the
    first seed's fit) when the metrics hold it."""
    rows = metrics["runs"]
    others = _other_seeds(metrics, models) if out_of_sample else []
    out = {PILOT: [smallest(_speedups(r, "HASFL", versus, models)) for r in [rows, *others]],
           CALIBRATED: [smallest(_speedups(rows, "HASFL-calibrated", versus, models))]}
    if others:
        out[OUT] = [smallest(_speedups(r, "HASFL-calibrated", versus, models)) for r in others]
    return out


def accuracy_gain(metrics: Mapping) -> dict:
    """The smallest converged-accuracy gain (points) of HASFL over the four benchmarks, every model and setting,
    per variant and seed as :func:`speedup`."""
    def gains(rows, ours):
        return smallest([acc_gain_points(_run(rows, ours, m, s), _run(rows, b, m, s))
                         for m, s in _models_settings(rows) for b in BENCHMARKS])
    rows = metrics["runs"]
    others = _other_seeds(metrics, None)
    out = {PILOT: [gains(r, "HASFL") for r in [rows, *others]], CALIBRATED: [gains(rows, "HASFL-calibrated")]}
    if others:
        out[OUT] = [gains(r, "HASFL-calibrated") for r in others]
    return out


def fig9_mean(rows: Sequence[Mapping], method: str, setting: str, n: int) -> dict:
    """Fig. 9's runs of ``method`` on VGG-16 at ``n`` devices and ``setting`` (its draws: a random benchmark of
    ``fig9_draws`` > 1 has several, :data:`fedlib.hasfl.runs.train_plan.DRAWN_METHODS`; every other method one) as
    one run for :func:`time_ratio`: ``converged_time_s`` = the mean converged time over them, None when one of them
    never converged, and ``sim_s`` = that mean with a never-converged run's whole simulated time in its place (then
    a lower bound on the mean: its converged time is past its end); ``draws`` = how many runs (KeyError when none)."""
    rs = [r for r in rows if r["method"] == method and r["model"] == "vgg16" and r["setting"] == setting
          and "fig9" in r["figures"] and r["N"] == n]
    if not rs:
        raise KeyError(f"no run of {method} on vgg16 {setting} in fig9 at N = {n}")
    times = [r["converged_time_s"] for r in rs]
    stand_in = [t if t is not None else r["sim_s"] for t, r in zip(times, rs)]
    return {"method": method, "N": n, "setting": setting, "draws": len(rs),
            "converged_time_s": None if None in times else sum(times) / len(times),
            "sim_s": sum(stand_in) / len(stand_in)}


def gap_vs_devices(metrics: Mapping) -> dict:
    """Fig. 9: at each N (ascending), the geometric mean over the four benchmarks and both data settings of the
    converged-time ratio benchmark / HASFL, a benchmark's converged time being the mean over its draws at that N
    and setting (:func:`fig9_mean`; one draw where the plan drew once). A benchmark whose mean is only a lower
    bound (a draw never converged) raises TypeError: no geometric mean of a bound."""
    rows = [r for r in metrics["runs"] if "fig9" in r["figures"]]
    ns = sorted({r["N"] for r in rows})
    settings = sorted({r["setting"] for r in rows})
    if len(ns) < 2:
        raise KeyError(f"Fig. 9 at fewer than 2 device counts ({ns})")
    seq = []
    for n in ns:
        logs = []
        for s in settings:
            ours = fig9_mean(rows, "HASFL", s, n)
            for b in BENCHMARKS:
                r = time_ratio(fig9_mean(rows, b, s, n), ours)
                if isinstance(r, Censored):
                    raise TypeError(f"{b} at N = {n} ({s}) never converged (in at least one draw): no mean of a bound")
                logs.append(math.log(r))
        seq.append(math.exp(sum(logs) / len(logs)))
    return {PILOT: [seq]}


def slowest_gap_over_devices(metrics: Mapping) -> dict:
    """Fig. 9: the smallest converged-time ratio benchmark / HASFL over every N, data setting and benchmark, a
    benchmark's converged time being the mean over its draws at that N and setting (:func:`fig9_mean`; one draw
    where the plan drew once); a mean over a draw that never converged is a lower bound (:class:`Censored`, as
    :func:`time_ratio`), and so is the ratio."""
    rows = [r for r in metrics["runs"] if "fig9" in r["figures"]]
    ns, settings = sorted({r["N"] for r in rows}), sorted({r["setting"] for r in rows})
    return {PILOT: [smallest([time_ratio(fig9_mean(rows, b, s, n), fig9_mean(rows, "HASFL", s, n))
                              for n in ns for s in settings for b in BENCHMARKS])]}


def split_vs_batch(metrics: Mapping) -> dict:
    """Fig. 6: converged time of the random split (HABS+RMS) / the random batch (RBS+HAMS), the smallest over the
    models and settings (> 1: the split costs more time than the batch size); one value per seed: the first and each
    out-of-sample seed (VGG-16 only there: neither benchmark depends on the calibration, so they are plain runs at
    another seed)."""
    values = []
    for rows in (metrics["runs"], *_other_seeds(metrics, None)):
        values.append(smallest([time_ratio(_run(rows, "HABS+RMS", m, s), _run(rows, "RBS+HAMS", m, s))
                                for m, s in _models_settings(rows)]))
    return {PILOT: values}


def habs_vs_fixed(metrics: Mapping) -> dict:
    """Fig. 10: converged time of the best fixed b ∈ {8, 16, 32} (the soonest to converge) / HABS's, the smaller
    of IID and non-IID, for HABS (pilot) and HABS-calibrated."""
    rows = [r for r in metrics["runs"] if "fig10" in r["figures"]]
    out = {}
    for variant, method in ((PILOT, "HABS"), (CALIBRATED, "HABS-calibrated")):
        vals = []
        for s in sorted({r["setting"] for r in rows}):
            fixed = [r for r in rows if r["method"] == "fixed" and r["setting"] == s and r["batch"] in FIXED_BATCHES
                     and r["converged_time_s"] is not None]
            if not fixed:
                raise KeyError(f"no converged fixed-b run of Fig. 10 ({s})")
            best = min(fixed, key=lambda r: r["converged_time_s"])
            vals.append(time_ratio(best, _run(rows, method, best["model"], s, "fig10")))
        out[variant] = [smallest(vals)]
    return out


def rounds_vs_cut(metrics: Mapping) -> dict:
    """Fig. 11 / 3a: rounds to the IID target of the fixed runs at b = 16 (the fixed batch), cuts ascending."""
    rows = sorted((r for r in metrics["runs"] if "fig11" in r["figures"] and r["method"] == "fixed"
                   and r["setting"] == "iid"), key=lambda r: r["cut"])
    if len(rows) < 2:
        raise KeyError("fewer than 2 fixed-cut runs of Fig. 11 (IID)")
    seq = [r["rounds_to_target"] for r in rows]
    if any(v is None for v in seq):
        raise TypeError("a fixed-cut run never reached the target")
    return {PILOT: [seq]}


def faster_at_every_resource(metrics: Mapping) -> dict:
    """Figs. 7–8 trained: the smallest converged-time ratio RBS+HAMS / HASFL over every swept resource and factor
    and Table I (Fig. 5's pair)."""
    rows = [r for r in metrics["runs"] if {"fig7", "fig8"} & set(r["figures"])]
    points = sorted({(r["scale_key"], r["scale_factor"]) for r in rows}, key=str)
    if not points:
        raise KeyError("no trained Figs. 7-8 run (sweep false)")
    vals = [time_ratio(_run(rows, "RBS+HAMS", "vgg16", "iid", fig, scale_key=k, scale_factor=f),
                       _run(rows, "HASFL", "vgg16", "iid", fig, scale_key=k, scale_factor=f))
            for k, f in points for fig in ("fig7", "fig8")
            if any(r["scale_key"] == k and r["scale_factor"] == f and fig in r["figures"] for r in rows)]
    base = metrics["runs"]
    vals.append(time_ratio(_run(base, "RBS+HAMS", "vgg16", "iid"), _run(base, "HASFL", "vgg16", "iid")))
    return {PILOT: [smallest(vals)]}


def smashed_vs_cut(metrics: Mapping) -> dict:
    """Fig. 3b: VGG-16's smashed data per sample (KiB) at the cuts of :data:`SPLIT_CUTS`."""
    per = {r["cut"]: r["smashed_kib"] for r in metrics["per_cut"] if r["model"] == "vgg16"}
    return {PILOT: [[per[c] for c in SPLIT_CUTS]]}


def split_term_vs_cut(metrics: Mapping) -> dict:
    """Theorem 1's split term 4β²γ²I²Σ_{j≤L_c}G_j² with the pilot's β and G_j², Table I's γ and I, at L_c in
    :data:`SPLIT_CUTS` (those within the model's layers)."""
    c = metrics["constants"]
    g2, beta = list(c["G2"]), float(c["beta"])
    cuts = [k for k in SPLIT_CUTS if k <= len(g2)]
    return {PILOT: [[4 * beta ** 2 * GAMMA ** 2 * INTERVAL ** 2 * sum(g2[:k]) for k in cuts]]}


def predicted_speedup(metrics: Mapping) -> dict:
    """The smallest predicted Θ ratio benchmark / HASFL (eq. 42) over the four benchmarks, Table I and every point of
    the sensitivity sweep, among the draws where both reach ε (a benchmark that never reaches ε is left out: HASFL
    is ahead of it without bound)."""
    rows = [dict(r, value=None) for r in metrics["runs"]] + list(metrics["sensitivity"])
    points = {(r["setting"], r.get("value"), r["N"]) for r in rows}
    vals = []
    for p in sorted(points, key=str):
        at = {r["method"]: r["theta"] for r in rows if (r["setting"], r.get("value"), r["N"]) == p}
        ours = at["HASFL"]
        if ours is None:
            continue
        vals += [at[b] / ours for b in BENCHMARKS if at.get(b) is not None]
    return {PILOT: [smallest(vals)]}


X = "×"
_SPEEDUP_WHY = ("a speed-up of converged time: the paper's number is the target, and 1 (not faster at all) the floor "
                "below which it fails")

CLAIMS = (
    Claim("faster_every_benchmark", "≥ 4× faster than every benchmark", "Sec. VIII",
          "≥ 4×", "hasfl_5_train_figures", AtLeast(target=4.0, partly=1.0, unit=X),
          speedup,
          why="The conclusion claims 'at least 4× faster convergence' than the benchmarks: the smallest ratio over the "
              "four benchmarks, both models and both data settings must reach 4; " + _SPEEDUP_WHY + ".",
          variants=VARIANTS),
    Claim("faster_rbs_rms_vgg", "faster than RBS+RMS, VGG-16", "Fig. 6", "9.4×", "hasfl_5_train_figures",
          AtLeast(target=9.4, partly=1.0, unit=X), partial(speedup, versus=("RBS+RMS",), models=("vgg16",)),
          why="Sec. VII: 9.4× over RBS+RMS on CIFAR-10 (VGG-16); the smaller of IID and non-IID; " + _SPEEDUP_WHY + ".",
          variants=VARIANTS),
    Claim("faster_rbs_rms_resnet", "faster than RBS+RMS, ResNet-18", "Fig. 6", "6.4×", "hasfl_5_train_figures",
          AtLeast(target=6.4, partly=1.0, unit=X),
          partial(speedup, versus=("RBS+RMS",), models=("resnet18",), out_of_sample=False),
          why="Sec. VII: 6.4× over RBS+RMS on CIFAR-100 (ResNet-18); the smaller of IID and non-IID; " + _SPEEDUP_WHY +
              ". A benchmark run that never converged gives a lower bound.",
          variants=VARIANTS),
    Claim("accuracy_every_benchmark", "higher accuracy than every benchmark", "Sec. VIII",
          "+1 point", "hasfl_5_train_figures", AtLeast(target=1.0, partly=0.0, unit=" points", digits=1),
          accuracy_gain,
          why="The conclusion claims '1% higher training and testing accuracy': the smallest gain over the four "
              "benchmarks, both models and settings, in points; 1 point holds, higher by less is partly, not higher fails.",
          variants=VARIANTS),
    Claim("gap_grows_with_n", "gap to the benchmarks grows with N", "Fig. 9",
          "grows", "hasfl_4_train_experiments", Trend(direction="up", margin=0.0, unit=X), gap_vs_devices,
          why="'The performance gap ... becomes increasingly pronounced with the increasing number of edge devices': "
              "the geometric mean of the four benchmarks' converged-time ratios (IID and non-IID; a random benchmark's "
              "time the mean over its draws) at each N must rise at every step; rising from the first N to the last only is partly.",
          variants=VARIANTS),
    Claim("faster_at_every_n", "faster than every benchmark at every N", "Fig. 9",
          "consistently", "hasfl_4_train_experiments", AtLeast(target=1.0, unit=X), slowest_gap_over_devices,
          why="'HASFL consistently outperforms the other benchmarks across all configurations of N': the smallest "
              "converged-time ratio over every N, data setting and benchmark (a random benchmark's time the mean over "
              "its draws) must reach 1 (no number: no partly).",
          variants=VARIANTS),
    Claim("split_over_batch", "random split costs more than random batch", "Fig. 6",
          "~6× vs 4.4×", "hasfl_5_train_figures", AtLeast(target=1.0, unit=X), split_vs_batch,
          why="'MS plays a more decisive role in model training than BS': the converged time of HABS+RMS (random "
              "split) over RBS+HAMS (random batch) must exceed 1 in every model and setting (the smallest ratio); "
              "the paper's comparison carries no number of its own.",
          variants=VARIANTS),
    Claim("habs_vs_fixed_batch", "HABS faster than the best fixed b", "Fig. 10", "1.4× / 1.6×",
          "hasfl_5_train_figures", AtLeast(target=1.4, partly=1.0, unit=X), habs_vs_fixed,
          why="Fig. 10: HABS converges 1.4× (IID) and 1.6× (non-IID) sooner than the best fixed b ∈ {8, 16, 32}: the "
              "smaller ratio of the two settings against the smaller of the paper's numbers; 1 is the floor.",
          variants=VARIANTS),
    Claim("deeper_cut_more_rounds", "deeper cuts need more rounds (IID)", "Figs. 3a, 11",
          "slower", "hasfl_5_train_figures", Trend(direction="up", margin=0.0, unit="", digits=0), rounds_vs_cut,
          why="'Deeper cuts converge slower': the rounds to the IID target of the fixed b = 16 runs must rise at every "
              "deeper cut; rising from the shallowest to the deepest only is partly.",
          variants=VARIANTS),
    Claim("faster_every_resource", "faster than RBS+HAMS at every resource level", "Figs. 7–8",
          "faster", "hasfl_5_train_figures", AtLeast(target=1.0, unit=X), faster_at_every_resource,
          why="'HASFL consistently achieves faster model convergence than the other benchmarks across varying network "
              "resources': the smallest ratio over the trained resource sweep must exceed 1 (no number: no partly).",
          variants=VARIANTS),
    Claim("smashed_shrinks_with_depth", "smashed data shrinks with depth (KiB)", "Fig. 3b",
          "shrinks", "hasfl_1_latency", Trend(direction="down", margin=0.0, unit="", digits=0), smashed_vs_cut,
          why="Sec. I: a shallower cut 'incurs higher communication overhead due to the larger output dimensions of "
              "shallower layers': the smashed data at cuts 1 / 4 / 7 / 10 / 13 must fall at every step.",
          variants=VARIANTS),
    Claim("split_term_grows_with_cut", "bound's split term grows with the cut", "Theorem 1",
          "grows", "hasfl_2_bound", Trend(direction="up", margin=0.0, unit="", digits=0), split_term_vs_cut,
          why="Theorem 1: a deeper L_c adds G_j² terms to 1{I>1}·4β²γ²I²Σ_{j≤L_c}G_j² (a shallower cut converges "
              "better); with the pilot's constants it must rise at every cut of 1 / 4 / 7 / 10 / 13.",
          variants=VARIANTS),
    Claim("predicted_faster", "predicted Θ below every benchmark's", "eq. 42",
          "lower", "hasfl_3_optimiser", AtLeast(target=1.0, unit=X, digits=2), predicted_speedup,
          why="HASFL minimises Θ (eq. 42), so the benchmarks' predicted Θ over HASFL's must be at least 1 at every "
              "point of the system model's sweeps (no number: no partly).",
          variants=VARIANTS),
)


REGISTERED = {c.id: ("2026-11-27", True) for c in CLAIMS}
"""When each rule took its present form and whether its numbers were known then: every claim above was written on
2026-11-27 (git: the first commits of this module), after the seed-0 metrics it judges (2026-11-24/25)."""
CLAIMS = registered(CLAIMS, REGISTERED)

from .claims_setup import DEVIATIONS, SETUP  # noqa: E402,F401  (the notebooks' Setup rows)
