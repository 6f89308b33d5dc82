"""DTFL's claims, the rule that judges each and how each reads the metrics (each notebook's Setup rows are its own
cell's, around the shared ones of :mod:`fedlib.lab.dtfl.setup_rows`).

Read by :mod:`fedlib.lab.tables` (the README's verdict table, from the committed ``converged`` metrics) and by each
notebook's Verdict cell (:func:`fedlib.lab.story.verdict_section` on the metrics the notebook just wrote). The
helpers and ``extract`` functions below the constants say how each claim reads the metrics.

Every ``extract`` reads the structure that the notebook writes with ``write_metrics`` (``runs``: one row per training
run with ``method``, ``model``, ``setting``, ``seed``, ``time_to_target_s``, ``sim_total_s``, ``final_test_acc``,
...) and returns ``{model column: [value per seed]}``.

Censored times. A run that never reached its target has ``time_to_target_s = None``: its time to target is only
known to exceed its whole simulated time ``sim_total_s``. A speed-up or saving that involves such a run is then a
bound (:class:`fedlib.lab.verdicts.Censored`), and the rule decides it only when every value the bound admits
gets the same word (else **not reached**). A trend (Fig. 3) with a point that never reached the target is not
judged at all (its metrics lack the value; no verdict from partial data). A seed whose metrics lack a run the claim
compares with (a baseline, a static tier) is :class:`fedlib.lab.verdicts.Unjudged` with the reason.

Seeds: every seed present in the metrics is judged alone (``seed`` of each row). The GPU's seeds of Table 3 and
``dtfl_4`` (``figures/converged/gpu/metrics/``) are judged as their own column (:data:`EXTRA_COLUMNS`).

Accuracies are compared at the standard error of an accuracy on the converged profile's test set
(:data:`ACC_SE`); times to target are read off the simulated time model at each run's evaluations (no
``resolution``: the grid of evaluations is the only rounding, and seeds differ by more).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from fedlib.lab.verdicts import (AtLeast, AtMost, Better, Censored, Claim, Trend, Unjudged, accuracy_se, at_scale,
                                 difference_se, registered)
from fedlib.lab.dtfl.setup_rows import SHUFFLE_SETTINGS

PROFILE = "converged"
SUMMARY = {"title": "DTFL: dynamic tiering-based federated learning", "ref": "arXiv:2312.05642",
           "link": "https://arxiv.org/abs/2312.05642",
           "scale": "converged profile, Fashion-MNIST, ResNet-20 / ResNet-56 at width 0.25, 10 clients, 36 rounds, "
                    "seeds 0 and 1 (Tables 1, 3, 4, 5 and Figs. 2, 3; the own-target checks at seed 0); Table 3, "
                    "Fig. 2 and the checks also at seeds 0-2 on an NVIDIA H200, judged in their own columns"}

MODEL_VARIANTS = ("ResNet-56", "ResNet-20", "ResNet-38", "ResNet-110")

N_TEST = 2000
"""The test images every converged DTFL run is evaluated on: ``test_subset: 2000`` in
``notebooks/profiles/converged/dtfl.yaml`` (no notebook's own profile overrides it; the GPU seeds ran the same
profile)."""

ACC_SE = accuracy_se(N_TEST, 0.8)
"""The standard error of an accuracy near 0.8 (the paper's IID target, and where DTFL and the global-model baselines
end here: 0.76-0.83) on :data:`N_TEST` images: 0.0089, the resolution of every accuracy comparison (set 2026-12-01,
after the numbers; one test image, 0.0005, before)."""
ACC_SE_POINTS = round(100 * ACC_SE, 2)
""":data:`ACC_SE` in percentage points (0.89)."""
ACC_DIFF_SE = difference_se(ACC_SE)
"""The standard error of a difference of two such accuracies (DTFL minus a baseline, a step of a sweep): 0.0126,
:func:`fedlib.lab.verdicts.difference_se` (its upper bound; the models are scored on the same images). The
resolution of the reasons of every accuracy-difference claim (set 2026-12-07; one accuracy's, 0.0089, before);
the rules' margins stay :data:`ACC_SE`."""
ACC_DIFF_SE_POINTS = round(100 * ACC_DIFF_SE, 2)
""":data:`ACC_DIFF_SE` in percentage points (1.26)."""

PAPER_SCALE = "CIFAR-10/100, CINIC-10 and HAM10000, ResNet-56 / ResNet-110 at full width"
"""The paper's scale, as the README's verdict section states it above the table."""
SCALE = ("Fashion-MNIST, ResNet-20 / ResNet-56 at width 0.25, 10 clients, 6,000 training samples, 36 rounds; the "
         "paper: CIFAR-10/100, CINIC-10 and HAM10000 at full width")
"""Our scale against the paper's, as every DTFL reason says it (no column at the paper's scale exists yet)."""

FEDGKT_DIFFERS = ("our FedGKT differs from the authors' FedML code where tests/test_dtfl_fedgkt_round.py pins it (its "
                  "three strict xfails): a client sends the output of its stem and both blocks (FedML: the stem's "
                  "only), the server trains 1 epoch per round over the features (FedML's runs: 20), and composite k "
                  "is scored on its 1/n share of the test images (FedML: each on the whole test set); its accuracy "
                  "as the mean of the composite models is FedML's own")
"""The stated deviation of every claim that compares with FedGKT: the differences from FedML's code that the xfail
tests pin, not the mean of the composite models (FedML computes FedGKT's accuracy so; the run log of 2026-12-01
says so). Until they are adopted (issue 69, item 5), no run without them exists: the reasons say "untested"."""

PAPER_SCALE_LABEL = "paper scale: full-width ResNet-56/110, 32x32x3, time model"
"""The column of the time-model claims (Tables 1, 4, Fig. 3, the scheduler against static tiers) computed at the
paper's model size without training, each notebook's ``paper_scale`` metrics (issue 69, item 2)."""

GPU_CARD = "NVIDIA H200"
"""The card of the committed GPU seeds (``bench_dtfl.gpu`` in ``figures/converged/gpu/metrics/gpu_run.json``)."""
EXTRA_COLUMNS = ({"label": f"GPU ({GPU_CARD})", "metrics": "figures/converged/gpu/metrics", "seed_dirs": (),
                  "scale": "the same converged profile (our scale) at seeds 0-2 on one GPU, float32: another machine, "
                           "not another scale"},
                 {"label": PAPER_SCALE_LABEL, "within": "paper_scale", "at_paper_scale": True,
                  "scale": "the time model alone at the paper's model size (Tables 1, 4 and Fig. 3: ResNet-110 at "
                           "width 1 on 32x32x3, CIFAR-10's 50,000 images over the clients; no training): each run's "
                           "simulated time over the same 300 rounds, profiles changing as the paper says (Fig. 3: "
                           "every 20 rounds; Table 4: 30 % every 50), so every run is read as reaching the target at "
                           "the same round; seeds 0 and 1"})
"""Table 3 (``dtfl_5_baselines``) and ``dtfl_4_training`` at seeds 0-2 on one GPU (2026-11-26, float32, the same
converged profile): judged alone, a column per model. Then Tables 1, 4 and Fig. 3 (with the scheduler against the
static tiers) timed at the paper's scale by the time model alone (2026-12-07): each notebook's ``paper_scale``
metrics, judged by the same claims; the reason of each of our cells names the scale from it
(:func:`fedlib.lab.verdicts.reason`)."""


BASELINES = ("fedavg", "splitfed", "fedyogi", "fedgkt")
NAMES = {"fedavg": "FedAvg", "splitfed": "SplitFed", "fedyogi": "FedYogi", "fedgkt": "FedGKT"}
MODEL_NAMES = {"resnet20": "ResNet-20", "resnet38": "ResNet-38", "resnet56": "ResNet-56", "resnet110": "ResNet-110"}

# the paper's Table 3 (CIFAR-10, ResNet-56: its smaller model, the one we train), DTFL's saving 1 - DTFL / baseline
_T3 = {"dtfl": (2750, 3986), "fedavg": (13157, 20773), "splitfed": (35877, 46514), "fedyogi": (9122, 13130),
       "fedgkt": (25458, 30808)}
PAPER_SAVING = {b: tuple(1 - d / t for d, t in zip(_T3["dtfl"], _T3[b])) for b in BASELINES}
"""``{baseline: (IID, non-IID)}``: the paper's saving with ResNet-56 on CIFAR-10 (fedavg: 0.79 / 0.81)."""


# ---------------------------------------------------------------------------------------------------- helpers
def _rows(metrics: Mapping[str, Any], **where) -> list[dict]:
    """The rows of ``metrics["runs"]`` whose fields equal ``where`` (KeyError when there are none)."""
    rows = [r for r in metrics["runs"] if all(r.get(k) == v for k, v in where.items())]
    if not rows:
        raise KeyError(f"runs with {', '.join(f'{k}={v!r}' for k, v in where.items())}")
    return rows


def _seeds(rows) -> list[int]:
    return sorted({r["seed"] for r in rows})


def _one(rows, **where) -> dict:
    found = [r for r in rows if all(r.get(k) == v for k, v in where.items())]
    if not found:
        raise KeyError(f"a run with {', '.join(f'{k}={v!r}' for k, v in where.items())}")
    return found[0]


def _time(row: dict) -> tuple[float, float]:
    """A run's time to target as an interval: ``(t, t)`` when reached, ``(sim_total_s, inf)`` when not."""
    t = row["time_to_target_s"]
    if t is not None:
        return float(t), float(t)
    return float(row["sim_total_s"]), math.inf


def _ratio(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """The interval of ``a / b`` for positive intervals (KeyError for a zero time: the target was met before any
    training, so no ratio of times is defined)."""
    if b[0] <= 0 or a[0] <= 0:
        raise KeyError("a positive time to target (a run met the target before training)")
    lo = a[0] / b[1] if b[1] != math.inf else 0.0
    hi = a[1] / b[0] if a[1] != math.inf else math.inf
    return lo, hi


def _value(lo: float, hi: float, pivot: float, top: float = math.inf):
    """An interval as a value: exact when ``lo == hi``; else the bound that is true and decides at ``pivot`` (the
    rule's target): ``≥ lo`` when ``lo`` is at or above it or nothing but the quantity's own ceiling ``top``
    bounds it from above, else ``≤ hi``."""
    if lo == hi:
        return lo
    if hi >= top or lo >= pivot:
        return Censored(lo, "lower")
    return Censored(hi, "upper")


def _speedup(base_rows, dtfl_row) -> tuple[float, float]:
    """DTFL's speed-up to the target against the fastest of ``base_rows``: min over baselines of T_b / T_DTFL."""
    ivs = [_ratio(_time(b), _time(dtfl_row)) for b in base_rows]
    return min(lo for lo, _ in ivs), min(hi for _, hi in ivs)


def _model_variant(model: str) -> str:
    return MODEL_NAMES.get(model, model)


def _per_seed(rows, value) -> dict[str, list]:
    """``{model column: [value(the rows of one seed) for each seed]}``: the shape every extract returns."""
    out: dict[str, list] = {}
    for seed in _seeds(rows):
        mine = [r for r in rows if r["seed"] == seed]
        out.setdefault(_model_variant(mine[0]["model"]), []).append(value(mine))
    return out


# ---------------------------------------------------------------------------------------------------- extracts
def _saving(baseline: str, setting: str):
    """Table 3: DTFL's saving 1 - T_DTFL / T_baseline per model and seed (bounds where a run never reached)."""
    def extract(m):
        out: dict[str, list] = {}
        rows = _rows(m, setting=setting, method="dtfl")
        for model in dict.fromkeys(r["model"] for r in rows):
            vals = []
            for seed in _seeds([r for r in rows if r["model"] == model]):
                d = _one(rows, model=model, seed=seed)
                b = _one(m["runs"], model=model, seed=seed, setting=setting, method=baseline)
                lo, hi = _ratio(_time(d), _time(b))          # T_DTFL / T_baseline
                if lo == 0.0 and hi == math.inf:             # neither reached: the saving is only below 100 %
                    vals.append(Censored(1.0, "upper"))
                    continue
                vals.append(_value(1 - hi, 1 - lo, PAPER_SAVING[baseline][setting == "noniid"], top=1.0))
            out[_model_variant(model)] = vals
        return out
    return extract


def _fastest(setting: str, first_model_only: bool = False, baselines: tuple = BASELINES):
    """Fig. 2: DTFL's speed-up against the fastest of ``baselines`` to the target, per model and seed."""
    def extract(m):
        out: dict[str, list] = {}
        rows = _rows(m, setting=setting, method="dtfl")
        models = list(dict.fromkeys(r["model"] for r in rows))
        for model in models[:1] if first_model_only else models:
            vals = []
            for seed in _seeds([r for r in rows if r["model"] == model]):
                base = [r for r in m["runs"] if r["model"] == model and r["seed"] == seed
                        and r["setting"] == setting and r["method"] in baselines]
                if not base:
                    raise KeyError(f"baseline runs of {model} {setting} seed {seed}")
                vals.append(_value(*_speedup(base, _one(rows, model=model, seed=seed)), 1.0))
            out[_model_variant(model)] = vals
        return out
    return extract


def _best_tier(case: str, paper_tier: int):
    """Table 1: T(our fastest tier) / T(the paper's fastest tier), per seed; 1 when the paper's tier is ours."""
    def value(mine):
        best = min(_time(r)[0] for r in mine), min(_time(r)[1] for r in mine)
        lo, hi = _ratio(best, _time(_one(mine, tier=paper_tier)))
        return _value(lo, min(hi, 1.0), 1.0, top=1.0)
    return lambda m: _per_seed(_rows(m, case=case), value)


def _time_vs_m(case: str):
    """Fig. 3: the scheduler's time to target for M = 1, 2, ... per seed (a point that never reached: no value);
    the static tiers' runs beside it (rows with a ``tier``) are not points of the trend."""
    def value(mine):
        mine = sorted(mine, key=lambda r: r["M"])
        for r in mine:
            if r["time_to_target_s"] is None:
                raise KeyError(f"time to target at M = {r['M']} (never reached the target; a trend needs every point)")
        return [r["time_to_target_s"] for r in mine]
    return lambda m: _per_seed(_rows(m, case=case, tier=None), value)


NO_STATIC = ("the run holds no static tier beside the scheduler but M = 1's single tier (md1..md7): its metrics "
             "predate dtfl_3_fig3's static_tiers (2026-12-07) or it ran with static_tiers empty")
"""Why a Fig. 3 run cannot decide the dynamic scheduler against the best static tier (its metrics before
2026-12-07, or ``static_tiers: []``)."""


def _dynamic_vs_static(case: str, best: bool):
    """Fig. 3: the dynamic scheduler's speed-up to the target, T(static) / T(dynamic at the largest M), per seed.
    ``best``: against the fastest of the seed's static-tier runs (rows with a ``tier``: dtfl_3_fig3's
    ``static_tiers``, tiers of the largest M in the same switching profiles; :class:`Unjudged` with
    :data:`NO_STATIC` when there are none); else against M = 1's single tier, run in the same environment."""
    def value(mine):
        dynamic = [r for r in mine if r.get("tier") is None]
        if not dynamic:
            raise KeyError(f"a run of the dynamic scheduler in {case}")
        top = max(dynamic, key=lambda r: r["M"])
        if best:
            static = [r for r in mine if r.get("tier") is not None]
            if not static:
                return Unjudged(NO_STATIC)
        else:
            static = [r for r in dynamic if r["M"] == 1]
            if not static or top["M"] == 1:
                return Unjudged(f"no M = 1 run beside a run with more tiers in {case}")
        t_static = min(_time(r)[0] for r in static), min(_time(r)[1] for r in static)
        return _value(*_ratio(t_static, _time(top)), 1.0)
    return lambda m: _per_seed(_rows(m, case=case), value)


def _scaling(dtfl_method: str, baselines: tuple = BASELINES):
    """Table 4: DTFL's speed-up against the fastest of ``baselines`` at its worst K, per seed."""
    def extract(m):
        def value(mine):
            ivs = []
            for d in mine:
                base = [r for r in m["runs"] if r["num_clients"] == d["num_clients"] and r["seed"] == d["seed"]
                        and r["method"] in baselines]
                if not base:
                    raise KeyError(f"baseline runs at K = {d['num_clients']}, seed {d['seed']}")
                ivs.append(_speedup(base, d))
            return _value(min(lo for lo, _ in ivs), min(hi for _, hi in ivs), 1.0)
        return _per_seed(_rows(m, method=dtfl_method), value)
    return extract


def _dcor_trend(key: str):
    """Table 5: ``key`` of the runs without patch shuffling, ordered by α, per seed."""
    return lambda m: _per_seed(_rows(m, patch_shuffling=False),
                               lambda mine: [r[key] for r in sorted(mine, key=lambda r: r["alpha"])])


def _shuffle_cost(m):
    """Table 5: accuracy lost to patch shuffling, in points: acc(α = 0) − acc(shuffled), per seed."""
    def value(mine):
        s = _one(mine)
        plain = _one(m["runs"], seed=s["seed"], patch_shuffling=False, alpha=0.0)
        return 100 * (plain["final_test_acc"] - s["final_test_acc"])
    return _per_seed(_rows(m, patch_shuffling=True), value)


def _table2(side: str):
    """Table 2: the profiled per-tier time ratios (relative to tier 1) of ``side``, per model."""
    def extract(m):
        out: dict[str, list] = {}
        for label in dict.fromkeys(r["model"] for r in m["runs"]):
            name = label.split(",")[0]
            name = MODEL_NAMES.get(name, name)
            rows = sorted((r for r in m["runs"] if r["model"] == label), key=lambda r: r["tier"])
            out[name] = [[r[f"{side}_ratio"] for r in rows]]
        return out
    return extract


def _holds_target(setting: str):
    """dtfl_4: the global model's final accuracy minus the run's target, in points, per seed."""
    return lambda m: _per_seed(_rows(m, setting=setting),
                               lambda mine: 100 * (_one(mine)["final_test_acc"] - _one(mine)["target_acc"]))


def _accuracy_vs(baseline: str, setting: str):
    """Table 3's runs: DTFL's final test accuracy minus ``baseline``'s, in points, per model and seed (the last
    evaluation of each run, never the best); :class:`Unjudged` for a seed without that baseline's run."""
    def extract(m):
        out: dict[str, list] = {}
        rows = _rows(m, setting=setting, method="dtfl")
        for model in dict.fromkeys(r["model"] for r in rows):
            vals = []
            for seed in _seeds([r for r in rows if r["model"] == model]):
                d = _one(rows, model=model, seed=seed)
                base = [r for r in m["runs"] if r["model"] == model and r["seed"] == seed
                        and r["setting"] == setting and r["method"] == baseline]
                if not base:
                    vals.append(Unjudged(f"no {NAMES.get(baseline, baseline)} run of {model} {setting}"))
                    continue
                vals.append(round(100 * (d["final_test_acc"] - base[0]["final_test_acc"]), 6))
            out[_model_variant(model)] = vals
        return out
    return extract


# ---------------------------------------------------------------------------------------------------- claims
_SAVING_WHY = ("Sec. 4.2: 'In all cases for both I.I.D. and non-I.I.D. settings, DTFL significantly reduces the "
               "training time, compared to baselines'. The paper's own number (Table 3, CIFAR-10, ResNet-56, 1 − DTFL "
               "/ {b}) is the target; a positive saving short of it is the claimed direction by less (partly); no "
               "saving (0 %) or a loss fails")

_ACC_WHY = ("Sec. 1: DTFL 'can significantly reduce the training time while maintaining model accuracy comparable to "
            "state-of-the-art FL methods'. Comparable is two-sided; we read it as the paper uses it, as not losing "
            "accuracy: the value is DTFL's final test accuracy minus {b}'s in the same Table 3 runs (data, partition, "
            "seed), holds when DTFL is at most one standard error below {b} or above it, fails when lower by more (a "
            "higher accuracy is not held against DTFL). The margin is the standard error of an accuracy near 0.8 on "
            "the 2,000 test images of the converged profile (test_subset in notebooks/profiles/converged/dtfl.yaml): "
            "0.89 points. Final accuracy: the last of the 36 rounds, not the best.{extra}")
_ACC_EXTRA = {"splitfed": " SplitFed-V1 computes what FedAvg computes (tested), so its accuracies are FedAvg's.",
              "fedgkt": " FedGKT's accuracy is the mean of its composite models, as FedML computes it; where our "
                        "FedGKT differs from FedML is its stated deviation."}


def _saving_claims():
    out = []
    for b in BASELINES:
        for i, (setting, label) in enumerate((("iid", "IID"), ("noniid", "non-IID"))):
            p = PAPER_SAVING[b][i]
            out.append(Claim(
                id=f"table3_saving_{b}_{setting}", text=f"DTFL saves time to target vs {NAMES[b]}, {label}",
                figure="Table 3", paper=f"{100 * p:.0f} % (ResNet-56)", notebook="dtfl_5_baselines",
                rule=AtLeast(unit="%", digits=2, target=p, partly=0.0), extract=_saving(b, setting),
                why=_SAVING_WHY.format(b=NAMES[b]), variants=MODEL_VARIANTS,
                deviation=FEDGKT_DIFFERS if b == "fedgkt" else ""))
    return out


def _accuracy_claims():
    return [Claim(
        id=f"accuracy_vs_{b}_{setting}", text=f"DTFL's final accuracy comparable to {NAMES[b]}'s, {label}",
        figure="Sec. 1, Table 3 runs", paper="accuracy \"comparable to state-of-the-art FL methods\"",
        notebook="dtfl_5_baselines", rule=AtLeast(unit=" points", digits=2, target=-ACC_SE_POINTS),
        extract=_accuracy_vs(b, setting), why=_ACC_WHY.format(b=NAMES[b], extra=_ACC_EXTRA.get(b, "")),
        variants=MODEL_VARIANTS, resolution=ACC_DIFF_SE_POINTS, deviation=FEDGKT_DIFFERS if b == "fedgkt" else "",
        reading="duplicate" if b == "splitfed" else "paper")
        for b in BASELINES for setting, label in (("iid", "IID"), ("noniid", "non-IID"))]


def _dynamic_claims():
    out = []
    for case, what in (("case1", "case 1"), ("case2", "case 2")):
        out.append(Claim(
            id=f"dynamic_vs_best_static_{case}",
            text=f"The dynamic scheduler reaches the target before the best static tier, {what}", figure="Sec. 3.3",
            paper="\"a static tier assignment may still lead to a severe straggler problem\"", notebook="dtfl_3_fig3",
            rule=AtLeast(unit="×", digits=2, target=1.0), extract=_dynamic_vs_static(case, best=True),
            why="Sec. 3.3: as the capacities of clients change over time, 'a static tier assignment may still lead "
                "to a severe straggler problem'; the dynamic tier scheduler re-assigns every client each round. The "
                "value is T(the fastest static tier) / T(the scheduler at the largest M), both in Fig. 3's "
                "environment (profiles switching every 2 rounds, the same seed and time model): holds at ≥ 1×, else "
                "fails. The static tiers are those of the largest M (M = 7: tier 1 = md1, ..., tier 7 = md1..md7), "
                "every client in one tier every round (dtfl_3_fig3's static_tiers); before 2026-12-07 Fig. 3's runs "
                "held none and the row read not reached.",
            variants=MODEL_VARIANTS))
        out.append(Claim(
            id=f"dynamic_vs_single_tier_{case}",
            text=f"The same against the single static tier (M = 1), {what}: a narrower reading", figure="Sec. 3.1",
            paper="\"DTFL provides more flexibility via multiple tiers\"", notebook="dtfl_3_fig3",
            rule=AtLeast(unit="×", digits=2, target=1.0), extract=_dynamic_vs_static(case, best=False),
            why="Sec. 3.1: existing works 'can be treated as a single-tier case in DTFL, DTFL provides more "
                "flexibility via multiple tiers'. The value is T(M = 1: every client at md1..md7, the training of "
                "Table 1's top tier) / T(the scheduler at M = 7), the same seed and environment: holds at ≥ 1×, else "
                "fails. Narrower than the row above (one static tier, not the best), beside it, not in its place.",
            variants=MODEL_VARIANTS, reading="narrower"))
    return out


CLAIMS = (
    *_saving_claims(),
    *_accuracy_claims(),
    Claim(id="fig2_dtfl_first", text="DTFL reaches the target before every baseline, IID", figure="Fig. 2",
          paper="DTFL's curve leftmost (\"faster convergence\")", notebook="dtfl_5_baselines",
          rule=AtLeast(unit="×", digits=2, target=1.0), extract=_fastest("iid"),
          why="Sec. 4.2: 'we observe a faster convergence using DTFL, compared with baselines' has no number: "
              "DTFL's time to target against the fastest baseline's (FedGKT included), holds at a speed-up ≥ 1×, "
              "else fails",
          variants=MODEL_VARIANTS, deviation=FEDGKT_DIFFERS, without_deviation=_fastest("iid", baselines=BASELINES[:3]),
          deviating="FedGKT"),
    Claim(id="fig2_dtfl_first_global_models",
          text="The same against FedAvg, SplitFed and FedYogi, IID: a narrower reading", figure="Fig. 2",
          paper="DTFL's curve leftmost (\"faster convergence\")", notebook="dtfl_5_baselines",
          rule=AtLeast(unit="×", digits=2, target=1.0), extract=_fastest("iid", baselines=BASELINES[:3]),
          why="The row above without FedGKT, the one baseline whose accuracy is not a global model's: DTFL's time to "
              "target against the fastest of FedAvg, SplitFed and FedYogi, holds at ≥ 1×, else fails. Narrower than "
              "the paper's reading (every baseline), beside it, not in its place.",
          variants=MODEL_VARIANTS, reading="narrower"),
    Claim(id="table1_best_tier_case1", text="Best single tier, case 1 (slow CPUs) is tier 1", figure="Table 1",
          paper="tier 1", notebook="dtfl_2_table1",
          rule=AtLeast(unit="×", digits=2, target=1.0, partly=1 / 1.07), extract=_best_tier("case1", 1),
          why="Sec. 3.2: 'there exists a non-trivial tier assignment that minimizes the overall training time', and "
              "Table 1 names it per case. value = T(our fastest tier) / T(the paper's tier): 1 when the paper's tier "
              "is our fastest (holds); partly when it is within 7 % of our fastest, the spread within which the "
              "paper's own Table 1 puts its near-equal tiers (case 2, tiers 3-6); else fails",
          variants=MODEL_VARIANTS),
    Claim(id="table1_best_tier_case2", text="Best single tier, case 2 (slow links) is tier 5", figure="Table 1",
          paper="tier 5 (tiers 3-6 within 7 %)", notebook="dtfl_2_table1",
          rule=AtLeast(unit="×", digits=2, target=1.0, partly=1 / 1.07), extract=_best_tier("case2", 5),
          why="as case 1: holds when tier 5 is our fastest, partly within 7 % of it (the paper's own tie band), "
              "else fails",
          variants=MODEL_VARIANTS),
    Claim(id="fig3_time_vs_m_case1", text="Time to target falls as M grows, case 1", figure="Fig. 3",
          paper="\"generally decreases with the number of tiers\"", notebook="dtfl_3_fig3",
          rule=Trend(unit=" s", digits=0, direction="down", margin=0.0), extract=_time_vs_m("case1"),
          why="Sec. 4.3: the training 'time generally decreases with the number of tiers'. A trend over M = 1..7: "
              "holds when every added tier lowers the time, partly when only M = 7 is below M = 1 (the paper's "
              "generally), else fails",
          variants=MODEL_VARIANTS),
    Claim(id="fig3_time_vs_m_case2", text="Time to target falls as M grows, case 2", figure="Fig. 3",
          paper="\"generally decreases with the number of tiers\"", notebook="dtfl_3_fig3",
          rule=Trend(unit=" s", digits=0, direction="down", margin=0.0), extract=_time_vs_m("case2"),
          why="as case 1", variants=MODEL_VARIANTS),
    *_dynamic_claims(),
    Claim(id="table4_fastest_every_k", text="DTFL fastest to target at every K (10 % sampled)", figure="Table 4",
          paper="fastest at K = 20 / 50 / 100 (1,877 / 2,547 / 3,102 s)", notebook="dtfl_6_scaling",
          rule=AtLeast(unit="×", digits=2, target=1.0), extract=_scaling("dtfl"),
          why="Sec. 4.3: DTFL 'significantly reduces training time compared to other methods' at every K: DTFL's "
              "speed-up against the fastest baseline (FedGKT included) at its worst K, holds at ≥ 1×, else fails",
          variants=MODEL_VARIANTS, deviation=FEDGKT_DIFFERS, without_deviation=_scaling("dtfl", BASELINES[:3]),
          deviating="FedGKT"),
    Claim(id="table4_fastest_every_k_authors", text="The same with the authors' scheduler (never tier 1)",
          figure="Table 4", paper="fastest at every K", notebook="dtfl_6_scaling",
          rule=AtLeast(unit="×", digits=2, target=1.0), extract=_scaling("dtfl_authors"),
          why="as above, DTFL scheduled as the authors' code does (every client starts at tier 2, tier 1 unused)",
          variants=MODEL_VARIANTS, deviation=FEDGKT_DIFFERS,
          without_deviation=_scaling("dtfl_authors", BASELINES[:3]), deviating="FedGKT"),
    Claim(id="table5_dcor_accuracy", text="Accuracy falls as the DCor weight α grows", figure="Table 5",
          paper="\"a decreasing trend as α increases\"", notebook="dtfl_7_privacy",
          rule=Trend(unit="%", digits=3, direction="down", margin=ACC_SE), extract=_dcor_trend("final_test_acc"),
          why="Sec. 4.4: Table 5 'illustrates the model accuracy of DTFL with distance correlation, showing a "
              "decreasing trend as α increases', the loss small 'especially for relatively smaller values of α'. A "
              "trend over α = 0, 0.25, 0.5, 0.75; a step counts when it exceeds the standard error of an accuracy "
              "near 0.8 on the 2,000 test images (0.0089; one test image, 0.0005, before 2026-12-01)",
          variants=MODEL_VARIANTS, resolution=ACC_DIFF_SE),
    Claim(id="table5_dcor_psnr", text="An attacker's reconstruction worsens as α grows (beyond Table 5)",
          figure="Sec. 4.4", paper="DCor \"enhances the privacy ... against reconstruction attacks\"",
          notebook="dtfl_7_privacy", rule=Trend(unit=" dB", digits=1, direction="down", margin=0.0),
          extract=_dcor_trend("psnr_db"),
          why="the paper gives no leakage number: the attacker's PSNR over α = 0..0.75, holds when every step "
              "lowers it, partly when α = 0.75 is below α = 0",
          variants=MODEL_VARIANTS, reading="not in the paper"),
    Claim(id="table5_shuffle_cost", text="Patch shuffling costs little accuracy", figure="Table 5",
          paper="\"minimal impact on accuracy\" (85.4 %)", notebook="dtfl_7_privacy",
          rule=AtMost(unit=" points", digits=1, target=1.0), extract=_shuffle_cost,
          why="Sec. 4.4: 'applying patch shuffling with the same settings as in Yao et al. (2022) to intermediate "
              "data has minimal impact on accuracy'. Minimal has no number: the accuracy lost against α = 0 without "
              "shuffling, holds at ≤ 1 point (about one standard error of an accuracy on the 2,000 test images, "
              "0.89 points near 0.8), else fails",
          variants=MODEL_VARIANTS, resolution=ACC_DIFF_SE_POINTS, deviation=SHUFFLE_SETTINGS),
    Claim(id="table2_client_ratio", text="Client FLOPs per tier grow with the tier", figure="Table 2",
          paper="times 1 → 3.81 (tiers 1-6)", notebook="dtfl_1_profiles",
          rule=Trend(unit="", digits=2, direction="up", margin=0.0), extract=_table2("client"),
          why="A check of the tier splits, not of Table 2: our ratios are profiled FLOPs, which rise by construction "
              "(a higher tier keeps more modules on the client), so they cannot contradict Table 2's measured times; "
              "our time model assumes, as the paper finds, that 'the normalized training times for both client-side "
              "and server-side models in different tiers are the same' for any client",
          variants=MODEL_VARIANTS, kind="check"),
    Claim(id="table2_server_ratio", text="Server FLOPs per tier fall with the tier", figure="Table 2",
          paper="times 1 → 0.20 (tiers 1-6)", notebook="dtfl_1_profiles",
          rule=Trend(unit="", digits=2, direction="down", margin=0.0), extract=_table2("server"),
          why="as the client's: profiled FLOPs, which fall by construction as modules move to the client",
          variants=MODEL_VARIANTS, kind="check"),
    Claim(id="dtfl4_holds_target_iid", text="DTFL's global model ends at or above our target, IID",
          figure="Table 3 runs", paper="our target (0.71), not the paper's", notebook="dtfl_4_training",
          rule=Better(unit=" points", digits=2, margin=ACC_SE_POINTS), extract=_holds_target("iid"),
          why="A check of the run against our own target (0.86 of FedAvg's probe plateau), not the paper's accuracy "
              "claim, which the rows against each baseline judge. The final accuracy minus the run's target; a tie "
              "within the standard error of an accuracy on the 2,000 test images (0.89 points; one test image, "
              "0.05 points, before 2026-12-01) is partly",
          variants=MODEL_VARIANTS, kind="check", resolution=ACC_SE_POINTS),
    Claim(id="dtfl4_holds_target_noniid", text="DTFL's global model ends at or above our target, non-IID",
          figure="Table 3 runs", paper="our target (0.71), not the paper's", notebook="dtfl_4_training",
          rule=Better(unit=" points", digits=2, margin=ACC_SE_POINTS), extract=_holds_target("noniid"),
          why="as IID", variants=MODEL_VARIANTS, kind="check", resolution=ACC_SE_POINTS),
)

_UNCHANGED = ("table1_best_tier_case2", "fig3_time_vs_m_case2", "table5_dcor_psnr")
REGISTERED = {c.id: ("2026-11-27", True) if c.id in _UNCHANGED else ("2026-12-01", True) for c in CLAIMS}
"""When each rule took its present form and whether its numbers were known then. The first rules were written on
2026-11-27 (git: the first commits of this module), after the seed-0 metrics they judge (2026-11-24/25); three are
as written then (``_UNCHANGED``). Every other claim was written or changed on 2026-12-01, after the committed
numbers of every seed and the GPU's were seen: the run log's section of that date lists each change and why."""
CLAIMS = at_scale(registered(CLAIMS, REGISTERED), SCALE)
