"""DTFL's claims, the rule that judges each, and the Setup rows of its notebooks.

Read by :mod:`fedlib.tables` (the README's verdict table, from the committed ``converged`` metrics) and by each
notebook's Verdict cell (:func:`fedlib.core.story.verdict_section` on the metrics the notebook just wrote). Every
``extract`` reads the structure that the notebook writes with ``write_metrics`` (``runs``: one row per training
run with ``method``, ``model``, ``setting``, ``seed``, ``time_to_target_s``, ``sim_total_s``, ...).

Censored times. A run that never reached its target has ``time_to_target_s = None``: its time to target is only
known to exceed its whole simulated time ``sim_total_s``. A speed-up or saving that involves such a run is then a
bound (:class:`fedlib.core.verdicts.Censored`), and the rule decides it only when every value the bound admits
gets the same word (else **not reached**). A trend (Fig. 3) with a point that never reached the target is not
judged at all (its metrics lack the value; no verdict from partial data).

Seeds: every seed present in the metrics is judged alone (``seed`` of each row).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from ..core.verdicts import AtLeast, AtMost, Better, Censored, Claim, Trend, registered

PROFILE = "converged"
SUMMARY = {"title": "DTFL: dynamic tiering-based federated learning", "ref": "arXiv:2312.05642",
           "link": "https://arxiv.org/abs/2312.05642",
           "scale": "converged profile, Fashion-MNIST, ResNet-20 / ResNet-56 at width 0.25, 10 clients, 36 rounds, seeds 0 and 1 (seed 1 for Tables 1, 3, 5 and Fig. 3)"}

BASELINES = ("fedavg", "splitfed", "fedyogi", "fedgkt")
NAMES = {"fedavg": "FedAvg", "splitfed": "SplitFed", "fedyogi": "FedYogi", "fedgkt": "FedGKT"}
MODEL_NAMES = {"resnet20": "ResNet-20", "resnet38": "ResNet-38", "resnet56": "ResNet-56", "resnet110": "ResNet-110"}
MODEL_VARIANTS = ("ResNet-56", "ResNet-20", "ResNet-38", "ResNet-110")

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


def _fastest(setting: str, first_model_only: bool = False):
    """Fig. 2: DTFL's speed-up against the fastest baseline to the target, per model and seed."""
    def extract(m):
        out: dict[str, list] = {}
        rows = _rows(m, setting=setting, method="dtfl")
        models = list(dict.fromkeys(r["model"] for r in rows))
        for model in models[:1] if first_model_only else models:
            vals = []
            for seed in _seeds([r for r in rows if r["model"] == model]):
                base = [r for r in m["runs"] if r["model"] == model and r["seed"] == seed
                        and r["setting"] == setting and r["method"] in BASELINES]
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
    """Fig. 3: time to target for M = 1, 2, ... per seed (a point that never reached: no value)."""
    def value(mine):
        mine = sorted(mine, key=lambda r: r["M"])
        for r in mine:
            if r["time_to_target_s"] is None:
                raise KeyError(f"time to target at M = {r['M']} (never reached the target; a trend needs every point)")
        return [r["time_to_target_s"] for r in mine]
    return lambda m: _per_seed(_rows(m, case=case), value)


def _scaling(dtfl_method: str):
    """Table 4: DTFL's speed-up against the fastest baseline at its worst K, per seed."""
    def extract(m):
        def value(mine):
            ivs = []
            for d in mine:
                base = [r for r in m["runs"] if r["num_clients"] == d["num_clients"] and r["seed"] == d["seed"]
                        and r["method"] in BASELINES]
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


# ---------------------------------------------------------------------------------------------------- claims
_SAVING_WHY = ("the paper's own number (Table 3, CIFAR-10, ResNet-56, 1 − DTFL / {b}) is the target; a positive "
               "saving short of it is the claimed direction by less (partly); no saving (0 %) or a loss fails")


def _saving_claims():
    out = []
    for b in BASELINES:
        for i, (setting, label) in enumerate((("iid", "IID"), ("noniid", "non-IID"))):
            p = PAPER_SAVING[b][i]
            out.append(Claim(
                id=f"table3_saving_{b}_{setting}", text=f"DTFL saves time to target vs {NAMES[b]}, {label}",
                figure="Table 3", paper=f"{100 * p:.0f} % (ResNet-56)", notebook="dtfl_5_baselines",
                rule=AtLeast(unit="%", digits=2, target=p, partly=0.0), extract=_saving(b, setting),
                why=_SAVING_WHY.format(b=NAMES[b]), variants=MODEL_VARIANTS))
    return out


CLAIMS = (
    *_saving_claims(),
    Claim(id="fig2_dtfl_first", text="DTFL reaches the target before every baseline, IID", figure="Fig. 2",
          paper="DTFL's curve leftmost (\"faster convergence\")", notebook="dtfl_5_baselines",
          rule=AtLeast(unit="×", digits=2, target=1.0), extract=_fastest("iid"),
          why="\"faster convergence using DTFL, compared with baselines\" has no number: DTFL's time to target "
              "against the fastest baseline's, holds at a speed-up ≥ 1×, else fails",
          variants=MODEL_VARIANTS),
    Claim(id="table1_best_tier_case1", text="Best single tier, case 1 (slow CPUs) is tier 1", figure="Table 1",
          paper="tier 1", notebook="dtfl_2_table1",
          rule=AtLeast(unit="×", digits=2, target=1.0, partly=1 / 1.07), extract=_best_tier("case1", 1),
          why="value = T(our fastest tier) / T(the paper's tier): 1 when the paper's tier is our fastest (holds); "
              "partly when it is within 7 % of our fastest, the spread within which the paper's own Table 1 puts "
              "its near-equal tiers (case 2, tiers 3-6); else fails",
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
          why="a trend over M = 1..7: holds when every added tier lowers the time, partly when M = 7 is below "
              "M = 1 (\"generally\"), else fails",
          variants=MODEL_VARIANTS),
    Claim(id="fig3_time_vs_m_case2", text="Time to target falls as M grows, case 2", figure="Fig. 3",
          paper="\"generally decreases with the number of tiers\"", notebook="dtfl_3_fig3",
          rule=Trend(unit=" s", digits=0, direction="down", margin=0.0), extract=_time_vs_m("case2"),
          why="as case 1", variants=MODEL_VARIANTS),
    Claim(id="table4_fastest_every_k", text="DTFL fastest to target at every K (10 % sampled)", figure="Table 4",
          paper="fastest at K = 20 / 50 / 100 (1,877 / 2,547 / 3,102 s)", notebook="dtfl_6_scaling",
          rule=AtLeast(unit="×", digits=2, target=1.0), extract=_scaling("dtfl"),
          why="\"significantly reduces training time compared to other methods\" at every K: DTFL's speed-up "
              "against the fastest baseline at its worst K, holds at ≥ 1×, else fails",
          variants=MODEL_VARIANTS),
    Claim(id="table4_fastest_every_k_authors", text="The same with the authors' scheduler (never tier 1)",
          figure="Table 4", paper="fastest at every K", notebook="dtfl_6_scaling",
          rule=AtLeast(unit="×", digits=2, target=1.0), extract=_scaling("dtfl_authors"),
          why="as above, DTFL scheduled as the authors' code does (every client starts at tier 2, tier 1 unused)",
          variants=MODEL_VARIANTS),
    Claim(id="table5_dcor_accuracy", text="Accuracy falls as the DCor weight α grows", figure="Table 5",
          paper="\"a decreasing trend as α increases\"", notebook="dtfl_7_privacy",
          rule=Trend(unit="%", digits=3, direction="down", margin=0.0005), extract=_dcor_trend("final_test_acc"),
          why="a trend over α = 0, 0.25, 0.5, 0.75; a step counts when it exceeds one test sample in 2,000 "
              "(0.0005), the resolution of the accuracy",
          variants=MODEL_VARIANTS),
    Claim(id="table5_dcor_psnr", text="An attacker's reconstruction worsens as α grows (beyond Table 5)",
          figure="Sec. 4.4", paper="DCor \"enhances the privacy ... against reconstruction attacks\"",
          notebook="dtfl_7_privacy", rule=Trend(unit=" dB", digits=1, direction="down", margin=0.0),
          extract=_dcor_trend("psnr_db"),
          why="the paper gives no leakage number: the attacker's PSNR over α = 0..0.75, holds when every step "
              "lowers it, partly when α = 0.75 is below α = 0",
          variants=MODEL_VARIANTS),
    Claim(id="table5_shuffle_cost", text="Patch shuffling costs little accuracy", figure="Table 5",
          paper="\"minimal impact on accuracy\" (85.4 %)", notebook="dtfl_7_privacy",
          rule=AtMost(unit=" points", digits=1, target=1.0), extract=_shuffle_cost,
          why="\"minimal\" has no number: the accuracy lost against α = 0 without shuffling, holds at ≤ 1 point "
              "(about one standard error of an accuracy on 2,000 test images), else fails",
          variants=MODEL_VARIANTS),
    Claim(id="table2_client_ratio", text="Client time per tier grows with the tier", figure="Table 2",
          paper="1 → 3.81 (tiers 1-6)", notebook="dtfl_1_profiles",
          rule=Trend(unit="", digits=2, direction="up", margin=0.0), extract=_table2("client"),
          why="the paper's measured ratios rise at every tier: holds when ours (profiled FLOPs) do too",
          variants=MODEL_VARIANTS),
    Claim(id="table2_server_ratio", text="Server time per tier falls with the tier", figure="Table 2",
          paper="1 → 0.20 (tiers 1-6)", notebook="dtfl_1_profiles",
          rule=Trend(unit="", digits=2, direction="down", margin=0.0), extract=_table2("server"),
          why="the paper's measured ratios fall at every tier: holds when ours do too", variants=MODEL_VARIANTS),
    Claim(id="dtfl4_holds_target_iid", text="DTFL's global model ends at or above the target, IID",
          figure="Sec. 4.2", paper="accuracy \"comparable to state-of-the-art FL methods\"",
          notebook="dtfl_4_training", rule=Better(unit=" points", digits=2, margin=0.05),
          extract=_holds_target("iid"),
          why="the final accuracy minus the run's target accuracy; a tie within one test sample in 2,000 "
              "(0.05 points) is partly",
          variants=MODEL_VARIANTS),
    Claim(id="dtfl4_holds_target_noniid", text="DTFL's global model ends at or above the target, non-IID",
          figure="Sec. 4.2", paper="accuracy \"comparable to state-of-the-art FL methods\"",
          notebook="dtfl_4_training", rule=Better(unit=" points", digits=2, margin=0.05),
          extract=_holds_target("noniid"), why="as IID", variants=MODEL_VARIANTS),
)

REGISTERED = {c.id: ("2026-11-27", True) for c in CLAIMS}
"""When each rule took its present form and whether its numbers were known then: every claim above was written on
2026-11-27 (git: the first commits of this module), after the seed-0 metrics it judges (2026-11-24/25)."""
CLAIMS = registered(CLAIMS, REGISTERED)

from .claims_setup import DEVIATIONS, SETUP  # noqa: E402,F401  (the notebooks' Setup rows)
