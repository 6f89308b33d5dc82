"""HIST's claims, judged by :mod:`fedlib.lab.verdicts` on the committed quick-profile metrics.

Every claim quotes the paper (Fang, Han, Brinton, arXiv:2310.17890, Sec. V-B and Theorem 1), names the notebook
whose metrics decide it and reads its values out of that notebook's metrics dict (the one it writes with
``write_metrics``; the committed copies are ``figures/metrics/hist_*.json``). The thresholds follow the paper's
wording and the resolution of the measurement; each ``Claim.why`` says how, without today's numbers.

Columns (variants) are the paper's two data settings, Figs. 2-4 (a) and (b): ``fully non-iid`` and ``cell-iid``
(cells i.i.d., clients non-i.i.d.); each is judged alone. Each seed is judged alone (``verdicts`` module).

Which runs a claim reads (from the metrics' ``runs`` rows, :func:`fedlib.lab.hist.summarize`):

- Figs. 2-3: the HFedAvg rows (only Figs. 2-3 run HFedAvg) and, for each, the HIST row of the same setting, N,
  H, E and seed whose communication spent is closest to it (both spend the per-client budget).
- Fig. 4: HIST rows at N = 3 (the paper's Fig. 4) with the number of global synchronisations most of them share
  (the Fig. 2 run at N = 3 spends the budget instead); the E/H sweep is those at the Figs. 2-3 H, the H sweep
  those at the Figs. 2-3 E/H.

Accuracies are on the 10,000 Fashion-MNIST test images: one image is 0.01 percentage points, the resolution
used as the margin of every accuracy comparison.
"""
from __future__ import annotations

import math

from fedlib.lab.verdicts import AtMost, Better, Censored, Claim, Trend, Unjudged, accuracy_se, registered

PROFILE = "quick"
SUMMARY = {"title": "HIST: hierarchical independent submodel training", "ref": "arXiv:2310.17890",
           "link": "https://arxiv.org/abs/2310.17890",
           "scale": "quick profile, Fashion-MNIST, 784-300-10 MLP, 60 clients, 30 L0 budget, seeds 0–2; the paper "
                    "profile (100 L0, 30 synchronisations) in its own columns"}

from fedlib.lab.hist.claims_read import FIG4_N, SETTINGS  # noqa: F401  (metrics' setting name -> column; Fig. 4's N)

N_TEST = 10_000
"""Fashion-MNIST's test images, on which every accuracy is measured."""

ACC_RESOLUTION = round(100 * accuracy_se(N_TEST, 0.75), 2)
"""The standard error of an accuracy near the paper's 75 % target on the 10,000 test images, in percentage points
(0.43): the margin of every accuracy comparison. One image (0.01 points) is the granularity of the number, not
what it can tell apart (set 2026-12-01, after the numbers; the margin was one image before)."""

HFEDAVG_EVAL_L0 = 5.0
"""The communication between two evaluations of HFedAvg at the paper's H = 40, E = 200 (E/H = 5 L0 per client):
communication to a target is resolved to that, so it is the margin of a HIST-vs-HFedAvg communication difference."""

HIST_EVAL_L0 = 2.5
"""The coarsest communication between two evaluations of HIST among N = 2, 3, 4 (E/(N H) L0 at N = 2): the margin of
a step of HIST's communication to the target over N."""


from fedlib.lab.hist.claims_read import _acc, _comm_saving, _diff, _min_bounded, _need, _per_setting, fig2_pairs, fig4_sweeps

# --- extract functions (metrics -> {variant: [value per seed]}) -------------------------------------------

def higher_accuracy(metrics):
    """Smallest HIST minus HFedAvg final accuracy (points) over N, at the per-client budget both spend."""
    return _per_setting(fig2_pairs(metrics), lambda by_n: min(_diff(_acc(h), _acc(b)) for h, b in by_n.values()))


def less_communication(metrics):
    """Smallest HFedAvg minus HIST communication to the target (L0) over N."""
    return _per_setting(fig2_pairs(metrics), lambda by_n: _min_bounded([_comm_saving(h, b) for h, b in
                                                                        by_n.values()]))


def hist_accuracy_n2_to_n4(metrics):
    """HIST final accuracy (%) at N = 2, 3, 4."""
    return _per_setting(fig2_pairs(metrics), lambda by_n: [_acc(p[0]) for p in _need(by_n, (2, 3, 4), "Fig. 2")])


def hist_comm_n2_to_n4(metrics):
    """HIST communication to the target (L0) at N = 2, 3, 4; a run that never reached the target gives a lower
    bound, its whole budget (:class:`Censored`: the seed's trend is then **not reached**)."""
    def comm(row):
        c = row["comm_to_target"]
        return Censored(float(row["comm_total_L0"]), "lower") if c is None else c
    return _per_setting(fig2_pairs(metrics),
                        lambda by_n: [comm(p[0]) for p in _need(by_n, (2, 3, 4), "Fig. 3")])


def hist_drop_at_n5(metrics):
    """HIST final accuracy at N = 4 minus at N = 5 (points): positive is the paper's degradation."""
    def drop(by_n):
        (h4, _), (h5, _) = _need(by_n, (4, 5), "Fig. 2")
        return _diff(_acc(h4), _acc(h5))
    return _per_setting(fig2_pairs(metrics), drop)


def hfedavg_accuracy_vs_n(metrics):
    """HFedAvg final accuracy (%) at every N, in increasing N."""
    return _per_setting(fig2_pairs(metrics), lambda by_n: [_acc(by_n[n][1]) for n in sorted(by_n)])


def accuracy_vs_e_over_h(metrics):
    """HIST final accuracy (%) after the Fig. 4 synchronisations, in increasing E/H."""
    return _per_setting(fig4_sweeps(metrics), lambda c: [c["E_over_H"][k] for k in sorted(c["E_over_H"])])


def h_peak_at_40(metrics):
    """Fully non-iid: accuracy at H = 40 minus the better of H = 20 and H = 60 (points)."""
    def peak(c):
        a20, a40, a60 = _need(c["H"], (20, 40, 60), "Fig. 4 H sweep")
        return _diff(a40, max(a20, a60))
    return _per_setting(fig4_sweeps(metrics), peak, only=("noniid",))


def h_60_over_40(metrics):
    """Cell-iid: accuracy at H = 60 minus at H = 40 (points)."""
    def gain(c):
        a40, a60 = _need(c["H"], (40, 60), "Fig. 4 H sweep")
        return _diff(a60, a40)
    return _per_setting(fig4_sweeps(metrics), gain, only=("cell_iid",))


def bound_over_trivial(metrics):
    """log10 of the largest Theorem 1 bound over N divided by 2 L (f(x̄0) - f*), per setting (one seed)."""
    out = {}
    for setting, by_n in metrics["bound_total_vs_N"].items():
        if setting not in SETTINGS:
            continue
        c = metrics["constants"][setting]
        scale = 2 * c["L"] * c["f_gap"]
        if not by_n or not scale > 0:
            raise KeyError(f"bound_total_vs_N / constants of {setting}")
        out[SETTINGS[setting]] = [math.log10(max(by_n.values()) / scale)]
    return out


def loads_per_round_times_n(metrics):
    """The largest over N of N x (HIST's per-client communication per global round / HFedAvg's), from the Figs.
    2-3 runs (comm_total_L0 / global_rounds): 1.0 when HIST's load per round is exactly 1/N of HFedAvg's."""
    def worst(by_n):
        return round(max(n * (h["comm_total_L0"] / h["global_rounds"]) / (b["comm_total_L0"] / b["global_rounds"])
                         for n, (h, b) in by_n.items()), 9)
    return _per_setting(fig2_pairs(metrics), worst)


def bound_vs_n(metrics):
    """Theorem 1's bound (eq. 13 at the evaluated T) at each N over its value at the smallest N, in increasing N,
    per setting (one seed)."""
    out = {}
    for setting, by_n in metrics["bound_total_vs_N"].items():
        if setting in SETTINGS:
            if len(by_n) < 2:
                raise KeyError(f"bound_total_vs_N of {setting}: fewer than 2 N")
            ns = sorted(by_n, key=int)
            out[SETTINGS[setting]] = [[round(by_n[k] / by_n[ns[0]], 9) for k in ns]]
    return out


def h_e_limits(metrics):
    """Not in the metrics: ``hist_3_bounds`` evaluates the bound at one H and one E."""
    return {v: [Unjudged("hist_3_bounds draws condition (12) over H and E/H (its figure's panel c) but writes the "
                         "bound to its metrics at one H and E only, so no committed number decides it")]
            for v in _VARIANTS}


# --- the claims -----------------------------------------------------------------------------------------------

_VARIANTS = tuple(SETTINGS.values())
_ACC_DIFF = dict(margin=ACC_RESOLUTION, unit=" points", digits=2)
_RES = ("The margin is the standard error of an accuracy near 75 % on the 10,000 test images (0.43 points; "
        "`ACC_RESOLUTION`): a difference within it is a tie (partly), a step within it does not count as a rise.")
_ACC = dict(resolution=ACC_RESOLUTION)
_HORIZON = ("the quick profile stops at a 30 L0 per-client budget (10 synchronisations for Fig. 4), where the "
            "paper's plots run to about 100 L0; the paper profile's column is at that horizon")

CLAIMS = (
    Claim("fig2_higher_accuracy", "HIST beats HFedAvg at equal communication", "Fig. 2",
          "higher accuracy", "hist_1_experiments", Better(**_ACC_DIFF), higher_accuracy,
          why="Sec. V-B: HIST 'outperforms hierarchical FedAvg in terms of testing accuracy at the same levels of "
              "communication consumption for both data distribution settings', for every N. The value is the "
              "smallest HIST-minus-HFedAvg final accuracy over N after both spend the same per-client budget, so "
              "'holds' means HIST is ahead at every N. " + _RES, variants=_VARIANTS, horizon=_HORIZON, **_ACC),
    Claim("fig3_less_communication", "HIST needs less communication to 75 %", "Fig. 3", "less",
          "hist_1_experiments", Better(margin=0.0, unit=" L0", digits=1), less_communication,
          why="Sec. V-B: 'HIST needs less communication to achieve the preset accuracy'. The value is the smallest "
              "HFedAvg-minus-HIST communication to the target over N, read like Fig. 3's bars (the per-client "
              "load at the first evaluation at or above the target, counted exactly by the paper's accounting), so "
              "the margin is 0: equal loads are a tie. A run that never reaches the target within its budget "
              "gives a bound. The load is read at evaluations E/H = 5 L0 apart for HFedAvg (E/(N H) for HIST), so a "
              "measured saving of at least 5 L0 means a true saving above 0; a smaller one is within that "
              "resolution (`HFEDAVG_EVAL_L0`).", variants=_VARIANTS, resolution=HFEDAVG_EVAL_L0, horizon=_HORIZON),
    Claim("fig2_hist_improves_n2_n4", "HIST's accuracy rises from N = 2 to 4", "Fig. 2", "higher accuracy",
          "hist_1_experiments", Trend(direction="up", margin=ACC_RESOLUTION, unit=" %", digits=2),
          hist_accuracy_n2_to_n4,
          why="Sec. V-B: 'HIST achieves a higher testing accuracy when N increases from N=2 to N=4'. Final "
              "accuracy at the common budget at N = 2, 3, 4; every step must rise. " + _RES,
          variants=_VARIANTS, horizon=_HORIZON, **_ACC),
    Claim("fig3_hist_comm_falls_n2_n4", "HIST's communication to 75 % falls from N = 2 to 4", "Fig. 3",
          "decreasing trend", "hist_1_experiments", Trend(direction="down", margin=0.0, unit=" L0", digits=1),
          hist_comm_n2_to_n4,
          why="Sec. V-B: 'as the number of cells increases from N=2 to N=4, the communication cost shows a "
              "decreasing trend'. Communication to the target at N = 2, 3, 4, counted exactly (margin 0); every "
              "step must fall for 'holds', the ends alone give 'partly'. Each value is read at evaluations E/(N H) L0 "
              "apart (2.5 L0 at N = 2), so a fall of less than 2.5 L0 is within that resolution (`HIST_EVAL_L0`). A "
              "run that never reached the target is a lower bound, its whole budget; the seed decides when every "
              "sequence the bound admits gets one word.", variants=_VARIANTS, resolution=HIST_EVAL_L0,
          horizon=_HORIZON),
    Claim("fig2_hist_degrades_n5", "HIST degrades at N = 5", "Fig. 2", "degradation",
          "hist_1_experiments", Better(**_ACC_DIFF), hist_drop_at_n5,
          why="Sec. V-B, on Fig. 2's testing accuracy: 'when we increase the number of cells to N=5, HIST also "
              "suffers performance degradation'. The value is the final accuracy at N = 4 minus that at N = 5 at "
              "the common budget (positive: degradation). " + _RES, variants=_VARIANTS, horizon=_HORIZON, **_ACC),
    Claim("fig2_hfedavg_degrades", "HFedAvg degrades as N grows", "Fig. 2", "degradation",
          "hist_1_experiments", Trend(direction="down", margin=ACC_RESOLUTION, unit=" %", digits=2),
          hfedavg_accuracy_vs_n,
          why="Sec. V-B: 'as N increases, the non-i.i.d. extent of data among clients becomes more pronounced, "
              "leading to performance degradation for hierarchical FedAvg'. HFedAvg's final accuracy at the "
              "common budget over every N run; every step must fall for 'holds'. " + _RES, variants=_VARIANTS, horizon=_HORIZON, **_ACC),
    Claim("fig4_larger_e_over_h", "larger E/H converges faster per sync", "Fig. 4", "better",
          "hist_2_figures", Trend(direction="up", margin=ACC_RESOLUTION, unit=" %", digits=2),
          accuracy_vs_e_over_h,
          why="Sec. V-B: 'As E/H increases from 5 to 10 to 15, HIST attain a better convergence performance, "
              "which is witnessed by both Figs. 4a and 4b'. Accuracy after the same number of global "
              "synchronisations, in increasing E/H; every step must rise. " + _RES, variants=_VARIANTS, horizon=_HORIZON, **_ACC),
    Claim("fig4_h_peaks_at_40", "H 20 → 40 faster, 40 → 60 slower", "Fig. 4", "not monotone",
          "hist_2_figures", Better(**_ACC_DIFF), h_peak_at_40,
          why="Sec. V-B: 'When H increases from 20 to 40, and from 40 to 60, ... the convergence speed of HIST first "
              "enjoys an acceleration and then a degradation, where the latter is induced by data heterogeneity': "
              "the fully non-iid setting (the cell-iid one is the next claim). The value is the accuracy at H = 40 "
              "after the same synchronisations minus the better of H = 20 and H = 60: positive only when H = 40 "
              "beats both. " + _RES, variants=("fully non-iid",), horizon=_HORIZON, **_ACC),
    Claim("fig4_h_60_beats_40", "H 40 → 60 better (lower heterogeneity)", "Fig. 4", "better",
          "hist_2_figures", Better(**_ACC_DIFF), h_60_over_40,
          why="Sec. V-B: 'HIST has a better performance as H increases from 40 to 60. This is because this data "
              "distribution exhibits lower data heterogeneity': the cell-iid setting. The value is the accuracy at "
              "H = 60 minus at H = 40 after the same synchronisations. " + _RES, variants=("cell-iid",), horizon=_HORIZON, **_ACC),
    Claim("thm1_bound_informative", "Theorem 1 bounds the error, below the smoothness scale", "Thm. 1",
          "a bound", "hist_3_bounds", AtMost(target=0.0, unit=" orders of magnitude", digits=1),
          bound_over_trivial,
          why="Theorem 1 bounds the time-averaged E||∇f(x̂ᵗ)||². For an L-smooth loss bounded below, "
              "||∇f(x)||² ≤ 2L(f(x) − f*), so at any model no worse than the start the quantity is at most "
              "2L(f(x̄⁰) − f*), from the same estimated constants. A bound above that scale says nothing that "
              "smoothness alone does not. The value is log10 of the bound (eq. 13 at the evaluated T, the largest "
              "over N) divided by 2L(f(x̄⁰) − f*): 'holds' at ≤ 0 (the bound is below the scale); the paper "
              "gives no number, so there is no partly band.", variants=_VARIANTS),
    Claim("thm1_h_e_bounded", "H and E cannot grow without bound (condition 12)", "Thm. 1", "an upper limit",
          "hist_3_bounds", AtMost(target=0.0), h_e_limits,
          why="Sec. IV, on the choice of H and E: 'these values cannot be infinitely large. The maximum value of H "
              "and E can be derived from the condition of the step size'. Deciding it needs the bound or condition "
              "(12) swept over H and E; the metrics hold neither, so no seed decides.", variants=_VARIANTS),
    Claim("sec3b_loads_1_over_n", "HIST's per-round client communication is 1/N of HFedAvg's", "Sec. III-B",
          "1/N", "hist_1_experiments", AtMost(target=1.0, digits=3), loads_per_round_times_n, kind="check",
          why="Sec. IV: as N grows 'the training costs including computation, communication, and storage will be "
              "reduced at each iteration', and Sec. V-B: a client's cost per global round is (1/N)(E/H) full "
              "models. The value is the largest over N of N times HIST's per-client load per global round over "
              "HFedAvg's, from the runs' own accounting (1 when exactly 1/N). It checks our accounting, not the "
              "paper: the load is counted, not measured. Computation and storage are not in the metrics; "
              "hist_explore shows all three loads from the same accounting.", variants=_VARIANTS),
    Claim("thm1_bound_grows_with_n", "Theorem 1's bound grows with N", "Thm. 1", "larger N, larger bound",
          "hist_3_bounds", Trend(direction="up", margin=0.0, unit="×", digits=2), bound_vs_n, kind="check",
          why="Sec. IV: 'a large N causes the sequence to deviate further from the stationary point'. Eq. (13) at "
              "the estimated constants for each N, over its value at the smallest N, in increasing N. The constants are estimated once per setting, "
              "so the trend is the formula's own: a check of our evaluation of (13).", variants=_VARIANTS),
)

REGISTERED = {**{c.id: ("2026-11-27", True) for c in CLAIMS},
              **{i: ("2026-12-01", True) for i in ("thm1_h_e_bounded", "sec3b_loads_1_over_n",
                                                   "thm1_bound_grows_with_n", "fig2_higher_accuracy",
                                                   "fig2_hist_improves_n2_n4", "fig2_hist_degrades_n5",
                                                   "fig2_hfedavg_degrades", "fig4_larger_e_over_h",
                                                   "fig4_h_peaks_at_40", "fig4_h_60_beats_40",
                                                   "fig3_less_communication", "fig3_hist_comm_falls_n2_n4")}}
"""When each rule took its present form and whether its numbers were known then. Every claim was first written on
2026-11-27 (git: the first commit of this module), after the seed-0 quick metrics it judges (2026-11-22). On
2026-12-01, with every quick number known, the accuracy margins were raised from one test image to the standard
error, the communication claims got their evaluation resolution and the horizon, and three rows were added (the
run log lists each change and its reason). The paper profile's numbers were not known when these were set."""

EXTRA_COLUMNS = ({"label": "paper profile", "metrics": "figures/paper/metrics", "seed_dirs": (),
                  "at_paper_horizon": True},)
"""The ``paper`` profile (100 L0 per client, 30 synchronisations, seeds 0-2), judged as its own column per
setting; at the paper's horizon, so no reason there reads "horizon"."""
CLAIMS = registered(CLAIMS, REGISTERED)

from fedlib.lab.hist.claims_setup import DEVIATIONS, SETUP  # noqa: E402,F401  (the notebooks' Setup rows)
