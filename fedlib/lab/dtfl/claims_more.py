"""How DTFL's claims read the metrics: the helpers and ``extract`` functions of :mod:`fedlib.lab.dtfl.claims`.

Every ``extract`` reads the structure that the notebook writes with ``write_metrics`` (``runs``: one row per training
run with ``method``, ``model``, ``setting``, ``seed``, ``time_to_target_s``, ``sim_total_s``, ``final_test_acc``,
...) and returns ``{model column: [value per seed]}``.

Censored times. A run that never reached its target has ``time_to_target_s = None``: its time to target is only
known to exceed its whole simulated time ``sim_total_s``. A speed-up or saving that involves such a run is then a
bound (:class:`fedlib.lab.verdicts.Censored`), and the rule decides it only when every value the bound admits
gets the same word (else **not reached**). A trend (Fig. 3) with a point that never reached the target is not
judged at all (its metrics lack the value; no verdict from partial data). A seed whose metrics lack a run the claim
compares with (a baseline, a static tier) is :class:`fedlib.lab.verdicts.Unjudged` with the reason.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from fedlib.lab.verdicts import Censored, Unjudged

BASELINES = ("fedavg", "splitfed", "fedyogi", "fedgkt")
NAMES = {"fedavg": "FedAvg", "splitfed": "SplitFed", "fedyogi": "FedYogi", "fedgkt": "FedGKT"}
MODEL_NAMES = {"resnet20": "ResNet-20", "resnet38": "ResNet-38", "resnet56": "ResNet-56", "resnet110": "ResNet-110"}

# the paper's Table 3 (CIFAR-10, ResNet-56: its smaller model, the one we train), DTFL's saving 1 - DTFL / baseline
_T3 = {"dtfl": (2750, 3986), "fedavg": (13157, 20773), "splitfed": (35877, 46514), "fedyogi": (9122, 13130),
       "fedgkt": (25458, 30808)}
PAPER_SAVING = {b: tuple(1 - d / t for d, t in zip(_T3["dtfl"], _T3[b])) for b in BASELINES}
"""``{baseline: (IID, non-IID)}``: the paper's saving with ResNet-56 on CIFAR-10 (fedavg: 0.79 / 0.81)."""


# ---------------------------------------------------------------------------------------------------- deviations
# stated deviations that bear on claims; claims_setup's notebook text uses the same sentences
FEDGKT_EVAL = ("FedGKT has no global model: its accuracy is the mean of the composite models (the server model on "
               "the features of each client taking part in the round, each scored on its own slice of the test "
               "images), not a global model's accuracy as for DTFL and the other baselines")
"""The deviation of every claim that compares with FedGKT, and of the notebooks that show FedGKT (a sentence without
its full stop, as the verdict tables add one; see :mod:`fedlib.dtfl.fedgkt`, ``evaluate_composites``)."""

SHUFFLE_SETTINGS = ("Table 5 shuffles the intermediate data of ResNet-56, a CNN like ours, with the same settings as "
                    "Yao et al. (2022), but states neither the block size nor the tier; ours permutes p × p spatial "
                    "blocks of the smashed data per sample at one cut (converged: 4 × 4 blocks after md2), both "
                    "choices of ours")
"""The deviation of the patch-shuffling claim and of the ``dtfl_7_privacy`` notebook."""


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
    """Fig. 3: time to target for M = 1, 2, ... per seed (a point that never reached: no value)."""
    def value(mine):
        mine = sorted(mine, key=lambda r: r["M"])
        for r in mine:
            if r["time_to_target_s"] is None:
                raise KeyError(f"time to target at M = {r['M']} (never reached the target; a trend needs every point)")
        return [r["time_to_target_s"] for r in mine]
    return lambda m: _per_seed(_rows(m, case=case), value)


NO_STATIC = ("Fig. 3's runs hold no static tier but M = 1's single tier (md1..md7); the static tiers of Table 1 ran "
             "in another notebook, with fixed client profiles and no dynamic run beside them")
"""Why the committed Fig. 3 metrics cannot decide the dynamic scheduler against the best static tier."""


def _dynamic_vs_static(case: str, best: bool):
    """Fig. 3: the dynamic scheduler's speed-up to the target, T(static) / T(dynamic at the largest M), per seed.
    ``best``: against the fastest of the seed's fixed-tier runs (rows with a ``tier``; :class:`Unjudged` with
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
