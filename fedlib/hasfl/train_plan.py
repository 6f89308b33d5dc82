"""The runs behind HASFL's training figures, shared between figures (Fig. 10's fixed batch sizes are Fig. 2a's
runs, Fig. 11's fixed cuts Fig. 3a's, Fig. 9's N = 20 is Fig. 5's): :class:`TrainPlan` lists them,
:func:`run_plan` trains them through the result store (an interrupted plan resumes from its cache) and returns
one entry per run with its metrics row and its curve."""
from __future__ import annotations

from dataclasses import dataclass, replace

from tqdm.auto import tqdm

from ..core import ResultStore
from ..core.validate import check_float, check_int, check_list
from ..data import TensorDataset
from ..split import time_to_target
from .bcd import bcd
from .strategies import STRATEGIES
from .theory import bound_floor, rounds_needed
from .training import (TrainSettings, bound_constants, decide, floors_by_cut, pilot, run_config, summary_row,
                       target_eps, train, training_problem)

#: the HASFL variant with the worst-case ("max") constants (same ε rule as the main settings)
HASFL_MAX = "HASFL-max"


@dataclass(frozen=True)
class TrainPlan:
    """Which runs the training figures need.

    Attributes:
        settings: data settings (``iid``, ``noniid``). num_devices: N of Figs. 2a-6, 10, 11.
        batch_grid / fixed_cut: Figs. 2a, 10 (every device b at cut ``fixed_cut``).
        cut_grid / fixed_batch: Figs. 3a, 11 (every device cut c at b = ``fixed_batch``).
        models: Fig. 5 / 6 models; ``widths``: their channel multipliers (same order).
        device_counts / n_methods: Fig. 9 (IID, first model). compare_constants: add :data:`HASFL_MAX` to Fig. 5.
    """

    settings: tuple = ("iid", "noniid")
    num_devices: int = 20
    batch_grid: tuple = (8, 16, 32, 64)
    fixed_cut: int = 8
    cut_grid: tuple = (2, 5, 8, 13)
    fixed_batch: int = 16
    models: tuple = ("vgg16", "resnet18")
    widths: tuple = (0.25, 0.25)
    device_counts: tuple = (5, 10, 20)
    n_methods: tuple = ("HASFL", "RBS+RMS")
    compare_constants: bool = True

    def __post_init__(self):
        for name in ("settings", "batch_grid", "cut_grid", "models", "widths", "device_counts", "n_methods"):
            object.__setattr__(self, name, tuple(check_list(name, list(getattr(self, name)))))
        if len(self.widths) != len(self.models):
            raise ValueError(f"widths must have one entry per model ({len(self.models)}), got {list(self.widths)}")
        for v in self.batch_grid + (self.fixed_batch,):
            check_int("batch_grid / fixed_batch", v, 1)
        for v in self.device_counts + (self.num_devices,):
            check_int("device_counts / num_devices", v, 1)
        for w in self.widths:
            check_float("widths", w, 0, low_open=True)


def _jobs(plan: TrainPlan, s: TrainSettings) -> list[tuple]:
    """(figures, settings, setting, N, method, batch, cut) per run, in a stable order."""
    jobs = []
    for setting in plan.settings:
        for b in plan.batch_grid:
            jobs.append((("fig2a", "fig10"), s, setting, plan.num_devices, "fixed", b, plan.fixed_cut))
        jobs.append((("fig10",), s, setting, plan.num_devices, "HABS", None, plan.fixed_cut))
        for c in plan.cut_grid:
            jobs.append((("fig3a", "fig11"), s, setting, plan.num_devices, "fixed", plan.fixed_batch, c))
        jobs.append((("fig11",), s, setting, plan.num_devices, "HAMS", plan.fixed_batch, None))
    for model, width in zip(plan.models, plan.widths):
        sm = replace(s, model=model, width=width)
        methods = STRATEGIES + ((HASFL_MAX,) if plan.compare_constants and model == plan.models[0] else ())
        for setting in plan.settings:
            for m in methods:
                jobs.append((("fig5", "fig6"), sm, setting, plan.num_devices, m, None, None))
    s0 = replace(s, model=plan.models[0], width=plan.widths[0])
    for n in plan.device_counts:
        for m in plan.n_methods:
            jobs.append((("fig9",), s0, plan.settings[0], n, m, None, None))
    return jobs


def run_plan(store: ResultStore, s: TrainSettings, plan: TrainPlan, seeds: list[int], target_acc: float,
             data: TensorDataset, device: str = "auto", progress: bool = True) -> list[dict]:
    """Decide and train every run of ``plan`` for every seed (cache hits when already trained).

    Returns:
        One entry per (run, seed): ``row`` (:func:`fedlib.hasfl.training.summary_row` + ``figures``, ``method``,
        ``model``, ``setting``, ``N``, ``batch``, ``cut``, ``eps``, ``rounds_pred``: Corollary 1's rounds to ε
        for the decision, None when ε is unreachable; ``floor``: the bound's floor for the decision;
        ``rounds_to_target``: measured), ``decision`` and ``curve`` (``epoch``, ``sim_s``,
        ``round``, ``test_acc`` lists).

    Raises:
        ValueError: bad seeds / target (naming them), or no feasible decision for HASFL (C1 / C4 message).
    """
    check_list("seeds", seeds, lambda n, v: check_int(n, v, 0))
    check_float("target_acc", target_acc, 0, 1, low_open=True)
    jobs = _jobs(plan, s)
    cache: dict = {}
    out = []
    bar = tqdm(total=len(jobs) * len(seeds), desc="HASFL training runs", disable=not progress)
    for seed in seeds:
        for figs, sm, setting, n, method, batch, cut in jobs:
            ss = replace(sm, constants="max") if method == HASFL_MAX else sm
            key = (ss, n, seed)
            if key not in cache:
                rec = pilot(store, ss, seed, data)
                consts = bound_constants(rec, ss.constants)
                cache[key] = training_problem(ss, consts, target_eps(rec, consts, ss, n), n, seed)
            problem = cache[key]
            decision = decide(problem, "HASFL" if method == HASFL_MAX else method, seed, batch, cut)
            config = run_config(sm, setting, decision, seed, len(data.y_train))
            record = train(store, config, problem, data, device)
            pred = rounds_needed(problem.constants, problem.gamma, decision["b"], decision["cuts"],
                                 problem.interval, problem.eps) if decision["theta"] is not None else None
            row = summary_row(record, decision, target_acc, figures=list(figs), method=method, model=sm.model,
                              width=sm.width, setting=setting, N=n, batch=batch, cut=cut, eps=problem.eps,
                              constants=ss.constants, rounds_pred=pred, floor=float(bound_floor(
                                  problem.constants, problem.gamma, decision["b"], max(decision["cuts"]),
                                  problem.interval)),
                              rounds_to_target=time_to_target(record, target_acc, key="round"))
            out.append({"row": row, "decision": decision,
                        "curve": {k: record[k] for k in ("epoch", "sim_s", "round", "test_acc")}})
            bar.update()
    bar.close()
    return out


def decisions_by_eps(store: ResultStore, s: TrainSettings, factors: list[float], num_devices: int, seed: int,
                     data: TensorDataset) -> list[dict]:
    """HASFL's decision (BCD) under both constants at ε = factor x Σ G² (pilot model) for each factor: rows with
    ``constants``, ``eps_factor``, ``eps``, ``floor_cut1``, ``b_mean``, ``cuts`` (sorted distinct), ``theta`` or
    ``unreachable`` (the optimiser's C1 / C4 message)."""
    rows = []
    for mode in ("pilot", "max"):
        for f in factors:
            ss = replace(s, constants=mode, eps_mode="grad_norm", eps_factor=f)
            rec = pilot(store, ss, seed, data)
            consts = bound_constants(rec, mode)
            p = training_problem(ss, consts, target_eps(rec, consts, ss, num_devices), num_devices, seed)
            row = {"constants": mode, "eps_factor": f, "eps": p.eps,
                   "floor_cut1": floors_by_cut(p, 64)[0]}
            try:
                d = bcd(p)
                row.update(b_mean=float(d.b.mean()), cuts=sorted(set(int(c) for c in d.cuts)), theta=float(d.theta))
            except ValueError as err:
                row.update(b_mean=None, cuts=None, theta=None, unreachable=str(err).split("\n")[0][:120])
            rows.append(row)
    return rows



def bound_vs_training(rows: list[dict], figure: str, setting: str, reference: dict) -> list[dict]:
    """For one figure's runs in one setting: the bound's predicted ratio of rounds-to-ε against ``reference``
    (a row's ``method``/``batch``/``cut``, e.g. fixed b = 16 at cut 8) beside the measured ratio of
    rounds-to-target. Corollary 1: R ∝ 1/(ε − floor); the shared ε is 1.1 x the largest floor among the runs,
    so that every run's ε is reachable. Ratios > 1: slower than the reference. Seeds are averaged."""
    sel = [r for r in rows if figure in r["figures"] and r["setting"] == setting]
    if not sel:
        return []
    eps = 1.1 * max(r["floor"] for r in sel)
    groups: dict = {}
    for r in sel:
        groups.setdefault((r["method"], r["batch"], r["cut"]), []).append(r)
    ref = groups.get((reference["method"], reference.get("batch"), reference.get("cut")))
    if not ref:
        return []

    def mean(vals):
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None

    ref_pred = mean([1 / (eps - r["floor"]) for r in ref])
    ref_meas = mean([r["rounds_to_target"] for r in ref])
    out = []
    for (method, batch, cut), rs in groups.items():
        meas = mean([r["rounds_to_target"] for r in rs])
        out.append({"figure": figure, "setting": setting, "method": method, "batch": batch, "cut": cut,
                    "b_mean": mean([r["b_mean"] for r in rs]), "cut_max": max(r["cut_max"] for r in rs),
                    "pred_ratio": mean([1 / (eps - r["floor"]) for r in rs]) / ref_pred,
                    "measured_ratio": None if meas is None or not ref_meas else meas / ref_meas})
    return out


def claim_ratios(rows: list[dict]) -> list[dict]:
    """The paper's claims as measured ratios (seeds averaged): per model and setting, each benchmark's simulated
    time to target / HASFL's (Fig. 6; > 1 = HASFL faster) and HASFL's final accuracy minus the benchmark's;
    per setting, HABS vs the fastest fixed batch size (Fig. 10) and HAMS vs the fastest fixed cut (Fig. 11).
    ``ratio`` is None when either run never reached the target (``note`` says which)."""
    def mean(vals):
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None

    def stat(sel, method, **m):
        rs = [r for r in sel if r["method"] == method and all(r[k] == v for k, v in m.items())]
        return mean([r["time_to_target_s"] for r in rs]), mean([r["final_test_acc"] for r in rs])

    out = []
    fig6 = [r for r in rows if "fig6" in r["figures"]]
    for model, setting in dict.fromkeys((r["model"], r["setting"]) for r in fig6):
        sel = [r for r in fig6 if r["model"] == model and r["setting"] == setting]
        t0, a0 = stat(sel, "HASFL")
        for method in dict.fromkeys(r["method"] for r in sel if r["method"] != "HASFL"):
            t, a = stat(sel, method)
            out.append({"claim": "fig6", "model": model, "setting": setting, "versus": method,
                        "ratio": t / t0 if t and t0 else None, "acc_gain": a0 - a,
                        "note": "" if t and t0 else ("HASFL" if not t0 else method) + " did not reach the target"})
    for fig, method, key in (("fig10", "HABS", "batch"), ("fig11", "HAMS", "cut")):
        sel = [r for r in rows if fig in r["figures"]]
        for setting in dict.fromkeys(r["setting"] for r in sel):
            ss = [r for r in sel if r["setting"] == setting]
            t0, a0 = stat(ss, method)
            fixed = {v: stat(ss, "fixed", **{key: v}) for v in dict.fromkeys(r[key] for r in ss if r["method"] == "fixed")}
            reached = {v: ta for v, ta in fixed.items() if ta[0] is not None}
            if not reached:
                continue
            best = min(reached, key=lambda v: reached[v][0])
            out.append({"claim": fig, "model": ss[0]["model"], "setting": setting, "versus": f"{key} = {best}",
                        "ratio": reached[best][0] / t0 if t0 else None, "acc_gain": a0 - reached[best][1],
                        "note": "" if t0 else f"{method} did not reach the target"})
    return out
