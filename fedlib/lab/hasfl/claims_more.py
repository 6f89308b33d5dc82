"""How HASFL's claims read the metrics (2): the ``extract`` functions added on 2026-12-01, when every claim came to be
judged as the paper words it (issue 57): Fig. 11's converged time and accuracy in both data settings, Fig. 10's
accuracy, HAMS against the fixed cuts, Fig. 5's ordering, every benchmark across Figs. 7–8's resources and HASFL's
slowdown as they shrink, Fig. 2's rounds and latency per batch size, the bound's predicted rounds against the
measured ones, and the optimiser's checks (Θ against the feasible benchmarks, where each benchmark is feasible).

Every ``extract`` returns ``{variant: [value per seed]}`` (:mod:`fedlib.lab.hasfl.claims_read`). A run the paper's
convergence rule never stopped has no converged time: its whole simulated time stands in as a lower bound
(:class:`Censored`), and likewise its best accuracy so far for its converged accuracy.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from fedlib.lab.verdicts import Censored, Unjudged
from fedlib.lab.hasfl.claims_read import BENCHMARKS, CALIBRATED, FIXED_BATCHES, PILOT, _models_settings, _other_seeds, _run, acc_gain_points, largest, rbs_hams_ratios_over_resources, resource_points, smallest, time_ratio

HAMS_BASED = ("HASFL", "RBS+HAMS", "RBS+RHAMS")
RMS_BASED = ("HABS+RMS", "RBS+RMS")
"""Fig. 5's two groups: the methods with a heterogeneity-aware split and those with the random one."""


# --- Fig. 11 and Fig. 2: sequences over the cut and the batch size ------------------------------------------------

def _fixed(metrics: Mapping, figure: str, setting: str, key: str) -> list[Mapping]:
    """The fixed runs of ``figure`` in ``setting``, sorted by ``key`` ("cut" or "batch"; KeyError below 2 runs)."""
    rows = sorted((r for r in metrics["runs"] if figure in r["figures"] and r["method"] == "fixed"
                   and r["setting"] == setting), key=lambda r: r[key])
    if len(rows) < 2:
        raise KeyError(f"fewer than 2 fixed runs of {figure} ({setting})")
    return rows


def _converged_time(r: Mapping):
    return r["converged_time_s"] if r["converged_time_s"] is not None else Censored(r["sim_s"], "lower")


def _converged_acc(r: Mapping):
    return r["converged_acc"] if r["converged_acc"] is not None else Censored(r["best_test_acc"], "lower")


def _rounds_to_target(r: Mapping):
    return r["rounds_to_target"] if r["rounds_to_target"] is not None else Censored(r["rounds"], "lower")


def _cut_sequence(metrics: Mapping, setting: str, read) -> dict:
    return {PILOT: [[read(r) for r in _fixed(metrics, "fig11", setting, "cut")]]}


def converged_time_vs_cut_iid(metrics: Mapping) -> dict:
    """Fig. 11 (IID): converged time (simulated s) of the fixed-cut runs at b = 16, cuts ascending."""
    return _cut_sequence(metrics, "iid", _converged_time)


def converged_time_vs_cut_noniid(metrics: Mapping) -> dict:
    """Fig. 11 (non-IID): as :func:`converged_time_vs_cut_iid`."""
    return _cut_sequence(metrics, "noniid", _converged_time)


def converged_acc_vs_cut_iid(metrics: Mapping) -> dict:
    """Fig. 11 (IID): converged accuracy of the fixed-cut runs at b = 16, cuts ascending."""
    return _cut_sequence(metrics, "iid", _converged_acc)


def converged_acc_vs_cut_noniid(metrics: Mapping) -> dict:
    """Fig. 11 (non-IID): as :func:`converged_acc_vs_cut_iid`."""
    return _cut_sequence(metrics, "noniid", _converged_acc)


def rounds_vs_batch_noniid(metrics: Mapping) -> dict:
    """Fig. 2a (non-IID, the paper's setting): rounds to the target of the fixed-b runs at cut 8, b ascending; a run
    that never reached it gives the bound ``≥`` its rounds."""
    return {PILOT: [[_rounds_to_target(r) for r in _fixed(metrics, "fig2a", "noniid", "batch")]]}


def rounds_vs_batch_iid(metrics: Mapping) -> dict:
    """Fig. 2a (IID): as :func:`rounds_vs_batch_noniid`."""
    return {PILOT: [[_rounds_to_target(r) for r in _fixed(metrics, "fig2a", "iid", "batch")]]}


def latency_per_round_vs_batch(metrics: Mapping) -> dict:
    """Fig. 2b (non-IID runs, the paper's setting): the mean simulated latency of a round (s: the run's simulated
    time over its rounds, aggregation rounds included) of the fixed-b runs at cut 8, b ascending."""
    return {PILOT: [[r["sim_s"] / r["rounds"] for r in _fixed(metrics, "fig2a", "noniid", "batch")]]}


# --- Figs. 10 and 11: HABS's accuracy, HAMS against the fixed cuts ------------------------------------------------

def habs_accuracy_vs_fixed(metrics: Mapping) -> dict:
    """Fig. 10: the smallest converged-accuracy gain (points) of HABS over each fixed b ∈ {8, 16, 32}, over IID and
    non-IID, for HABS (pilot) and HABS-calibrated (:func:`acc_gain_points`: a run that never converged counts with
    its best accuracy, as a bound; a gain at or below 0, not more accurate at all, decides the minimum whatever
    the bounds: ``smallest(..., floor=0)``)."""
    rows = [r for r in metrics["runs"] if "fig10" in r["figures"]]
    out = {}
    for variant, method in ((PILOT, "HABS"), (CALIBRATED, "HABS-calibrated")):
        gains = []
        for s in sorted({r["setting"] for r in rows}):
            fixed = [r for r in rows if r["method"] == "fixed" and r["setting"] == s and r["batch"] in FIXED_BATCHES]
            if not fixed:
                raise KeyError(f"no fixed-b run of Fig. 10 ({s})")
            ours = _run(rows, method, fixed[0]["model"], s, "fig10")
            gains += [acc_gain_points(ours, f) for f in fixed]
        out[variant] = [smallest(gains, floor=0.0)]
    return out


def hams_vs_fixed(metrics: Mapping) -> dict:
    """Fig. 11: converged time of the best fixed cut (the soonest to converge) / HAMS's, the smaller of IID and
    non-IID, for HAMS (pilot) and HAMS-calibrated."""
    rows = [r for r in metrics["runs"] if "fig11" in r["figures"]]
    out = {}
    for variant, method in ((PILOT, "HAMS"), (CALIBRATED, "HAMS-calibrated")):
        vals = []
        for s in sorted({r["setting"] for r in rows}):
            fixed = [r for r in rows if r["method"] == "fixed" and r["setting"] == s
                     and r["converged_time_s"] is not None]
            if not fixed:
                raise KeyError(f"no converged fixed-cut run of Fig. 11 ({s})")
            best = min(fixed, key=lambda r: r["converged_time_s"])
            vals.append(time_ratio(best, _run(rows, method, best["model"], s, "fig11")))
        out[variant] = [smallest(vals)]
    return out


# --- Fig. 5 and Figs. 7–8 -------------------------------------------------------------------------------------------

def hams_based_over_rms_based(metrics: Mapping) -> dict:
    """Fig. 5: the smallest converged-time ratio of a random-split method (HABS+RMS, RBS+RMS) over a method with
    a heterogeneity-aware split (HASFL, RBS+HAMS, RBS+RHAMS), over every pair, model and setting; one value per
    seed: the first and each out-of-sample seed (plain runs: none of these depends on the calibration)."""
    values = []
    for rows in (metrics["runs"], *_other_seeds(metrics, None)):
        values.append(smallest([time_ratio(_run(rows, slow, m, s), _run(rows, fast, m, s))
                                for m, s in _models_settings(rows) for slow in RMS_BASED for fast in HAMS_BASED]))
    return {PILOT: values}


def faster_every_benchmark_every_resource(metrics: Mapping) -> dict:
    """Figs. 7–8 as the paper words them: the smallest converged-time ratio benchmark / HASFL (VGG-16, IID) over
    every benchmark the metrics hold at each point: RBS+HAMS at every trained point of the sweep
    (:func:`fedlib.lab.hasfl.claims_read.rbs_hams_ratios_over_resources`) and all four benchmarks at Table I's point
    (factor 1: Fig. 5's runs)."""
    rows = metrics["runs"]
    vals = rbs_hams_ratios_over_resources(metrics)
    vals += [time_ratio(_run(rows, b, "vgg16", "iid"), _run(rows, "HASFL", "vgg16", "iid"))
             for b in BENCHMARKS if b != "RBS+HAMS"]
    return {PILOT: [smallest(vals)]}


def slowdown_as_resources_shrink(metrics: Mapping) -> dict:
    """Figs. 7–8: HASFL's converged time at each trained point where a resource is scaled below Table I's (factor
    < 1) over its converged time at Table I (Fig. 5's VGG-16 IID run), the largest over the resources and factors
    (:func:`largest`; a run that never converged gives a bound as :func:`time_ratio`)."""
    rows = metrics["runs"]
    base = _run(rows, "HASFL", "vgg16", "iid")
    shrunk = [(k, x, f) for k, x, f in resource_points(metrics) if x < 1]
    if not shrunk:
        raise KeyError("no trained Figs. 7-8 point below Table I's resources (factor < 1)")
    return {PILOT: [largest([time_ratio(_run(rows, "HASFL", "vgg16", "iid", f, scale_key=k, scale_factor=x), base)
                             for k, x, f in shrunk])]}


# --- the bound against the measured rounds --------------------------------------------------------------------------

def _miss(pred: float, measured: float) -> float:
    return max(pred / measured, measured / pred)


def _largest_miss(pairs: Sequence[tuple[float | None, float | None]]):
    """The largest factor ``max(p / m, m / p)`` over the pairs with both ratios; ``≥`` that factor (a lower bound)
    when some pair lacks its measured ratio (a run that never reached the target: its factor is unknown, and a
    maximum can only grow with it). KeyError when no pair has both."""
    known = [_miss(p, m) for p, m in pairs if p is not None and m is not None]
    if not known:
        raise KeyError("no run with both a predicted and a measured rounds ratio")
    return Censored(max(known), "lower") if len(known) < len(pairs) else max(known)


def bound_rounds_miss(metrics: Mapping) -> dict:
    """The bound's predicted rounds ratio (Corollary 1, relative to the reference run b = 16 at cut 8) against the
    measured ratio of rounds to target, as the largest factor between them: pilot, over every run of Figs. 10–11
    in ``bound_vs_training`` (VGG-16, IID and non-IID); calibrated, over the IID runs of ``calibration`` (every
    model; in sample: the fit was made on these runs)."""
    out = {PILOT: [_largest_miss([(r["pred_ratio"], r["measured_ratio"]) for r in metrics["bound_vs_training"]])]}
    cal = [(r.get("pred_ratio_calibrated"), r["measured_ratio"]) for r in metrics.get("calibration", ())]
    if cal:
        out[CALIBRATED] = [_largest_miss(cal)]
    return out


# --- the optimiser: predicted Θ (hasfl_3) ---------------------------------------------------------------------------

def _theta_points(metrics: Mapping) -> dict:
    """``{(setting, value, N): {method: Θ or None}}`` over Table I's rows and every point of the sensitivity sweep
    (Θ: the mean over a method's feasible draws; None: no draw reaches ε)."""
    rows = [dict(r, value=None) for r in metrics["runs"]] + list(metrics["sensitivity"])
    points: dict = {}
    for r in rows:
        points.setdefault((r["setting"], r.get("value"), r["N"]), {})[r["method"]] = r["theta"]
    if not points:
        raise KeyError("no Θ at any point")
    return points


def predicted_vs_feasible(metrics: Mapping) -> dict:
    """The smallest predicted Θ ratio benchmark / HASFL (eq. 42) over the four benchmarks and every point where
    both have a finite Θ; :class:`Unjudged` when no benchmark has one anywhere."""
    vals = []
    for at in _theta_points(metrics).values():
        ours = at.get("HASFL")
        if ours is not None:
            vals += [at[b] / ours for b in BENCHMARKS if at.get(b) is not None]
    if not vals:
        return {PILOT: [Unjudged("no benchmark has a finite Θ at any point (every draw infeasible)")]}
    return {PILOT: [smallest(vals)]}


def feasible_share(metrics: Mapping) -> dict:
    """Per benchmark (one variant each): the share of the points (Table I and the sensitivity sweep) at which it
    has a finite predicted Θ, i.e. at least one draw reaches ε."""
    points = list(_theta_points(metrics).values())
    return {b: [sum(at.get(b) is not None for at in points) / len(points)] for b in BENCHMARKS}
