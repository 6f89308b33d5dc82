"""Analyses of HASFL's training runs beside the bound: decisions at several ε (:func:`decisions_by_eps`,
:func:`eps_sweep`, :func:`pilot_eps_sweep`) and under either β estimator (:func:`decisions_by_beta`), the
bound's predicted rounds against the measured ones (:func:`bound_vs_training`) and the paper's claims as ratios
(:func:`claim_ratios`). Split out of :mod:`fedlib.lab.hasfl.runs.train_plan` (which re-exports them); nothing here computes
a cached record."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from fedlib.lab.store import ResultStore
from fedlib.core.validate import check_choice
from fedlib.data import TensorDataset
from fedlib.hasfl.bound.problem import Problem
from fedlib.hasfl.bound.theory import HasflConstants
from fedlib.hasfl.optimiser.bcd import bcd
from fedlib.lab.hasfl.runs.calibrate import calibrated_constants
from fedlib.lab.hasfl.runs.training import CONSTANTS_MODES, TrainSettings, bound_constants, floors_by_cut, pilot, target_eps, training_problem

#: Methods run under other constants modes than the settings' (``<method>-<mode>``): Fig. 5's HASFL under every
#: mode (``HASFL-max``: the worst-case constants, same ε rule as the main settings; ``HASFL-calibrated``:
#: :mod:`fedlib.lab.hasfl.runs.calibrate`), Figs. 10 / 11's HABS / HAMS under the pilot and the calibrated constants
VARIANT_MODES = {"HASFL": CONSTANTS_MODES, "HABS": ("pilot", "calibrated"), "HAMS": ("pilot", "calibrated")}


def variants(base: str, own: str) -> tuple[str, ...]:
    """The variant names of ``base`` (:data:`VARIANT_MODES`) for every mode other than ``own``.

    Raises:
        ValueError: ``base`` not HASFL, HABS or HAMS."""
    check_choice("base", base, tuple(VARIANT_MODES))
    return tuple(f"{base}-{m}" for m in VARIANT_MODES[base] if m != own)


def split_variant(method: str) -> tuple[str, str | None]:
    """``(base method, constants mode)`` of a method name: ``"HABS-calibrated"`` -> ``("HABS", "calibrated")``;
    a plain method -> ``(method, None)`` (it uses the settings' constants)."""
    base, _, mode = method.partition("-")
    return (base, mode) if mode in VARIANT_MODES.get(base, ()) else (method, None)


def decisions_by_eps(store: ResultStore, s: TrainSettings, factors: list[float], num_devices: int, seed: int,
                     data: TensorDataset, kappa: float | None = None, lam: float = 1.0) -> list[dict]:
    """HASFL's decision (BCD) under the pilot and max constants, and the calibrated ones (pilot with G_j² x
    ``kappa`` and σ_j² x ``lam``) when ``kappa`` is given, at ε = factor x Σ G² (pilot model) for each factor:
    rows with
    ``constants``, ``eps_factor``, ``eps``, ``floor_cut1``, ``b_mean``, ``cuts`` (sorted distinct), ``theta`` or
    ``unreachable`` (the optimiser's C1 / C4 message)."""
    rows = []
    for mode in ("pilot", "max") + (("calibrated",) if kappa is not None else ()):
        for f in factors:
            ss = replace(s, constants=mode, eps_mode="grad_norm", eps_factor=f)
            rec = pilot(store, ss, seed, data)
            consts = (calibrated_constants(bound_constants(rec, "pilot"), kappa, lam) if mode == "calibrated"
                      else bound_constants(rec, mode))
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
    so that every run's ε is reachable. Ratios > 1: slower than the reference. Seeds are averaged. Only the runs
    whose decision used the reference's constants mode are compared (floors under other constants, e.g. the
    calibrated variants', are on another scale; :func:`calibration_table` sets those beside training)."""
    sel = [r for r in rows if figure in r["figures"] and r["setting"] == setting]
    modes = {r.get("constants") for r in sel if r["method"] == reference["method"] and
             r["batch"] == reference.get("batch") and r["cut"] == reference.get("cut")}
    sel = [r for r in sel if r.get("constants") in modes]
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
    per setting, HABS vs the fastest fixed batch size (Fig. 10) and HAMS vs the fastest fixed cut (Fig. 11), one
    row per HABS / HAMS variant (``HABS``, ``HABS-calibrated``, ...: :data:`VARIANT_MODES`). Every row has
    ``claim``, ``model``, ``setting``, ``method`` (the method measured: HASFL for Fig. 6), ``versus``, ``ratio``
    (the other's time / the method's), ``acc_gain`` (final accuracy, method minus other), ``conv_ratio`` (the
    other's converged time by the paper's rule / the method's, each the mean over the seeds whose run converged;
    None when either has no converged run) and
    ``conv_acc_gain`` (converged accuracy, method minus other) and ``note``. ``ratio``
    is None when either run never reached the target (``note`` says which). ``rows``: the training notebooks'
    rows (:func:`fedlib.lab.hasfl.runs.train_plan.decision_row`)."""

    def mean(vals):
        vals = [v for v in vals if v is not None]
        return sum(vals) / len(vals) if vals else None

    def stat(sel, method, **m):
        rs = [r for r in sel if r["method"] == method and all(r[k] == v for k, v in m.items())]
        return mean([r["time_to_target_s"] for r in rs]), mean([r["final_test_acc"] for r in rs])

    def conv(sel, method, other):
        (c0, a0), (c, a) = [(mean([r.get("converged_time_s") for r in sel if r["method"] == x]),
                             mean([r.get("converged_acc") for r in sel if r["method"] == x])) for x in (method, other)]
        return {"conv_ratio": c / c0 if c and c0 else None,
                "conv_acc_gain": a0 - a if a0 is not None and a is not None else None}

    out = []
    fig6 = [r for r in rows if "fig6" in r["figures"]]
    for model, setting in dict.fromkeys((r["model"], r["setting"]) for r in fig6):
        sel = [r for r in fig6 if r["model"] == model and r["setting"] == setting]
        t0, a0 = stat(sel, "HASFL")
        for method in dict.fromkeys(r["method"] for r in sel if r["method"] != "HASFL"):
            t, a = stat(sel, method)
            out.append({"claim": "fig6", "model": model, "setting": setting, "method": "HASFL", "versus": method,
                        "ratio": t / t0 if t and t0 else None, "acc_gain": a0 - a, **conv(sel, "HASFL", method),
                        "note": "" if t and t0 else ("HASFL" if not t0 else method) + " did not reach the target"})
    for fig, base, key in (("fig10", "HABS", "batch"), ("fig11", "HAMS", "cut")):
        sel = [r for r in rows if fig in r["figures"]]
        for setting in dict.fromkeys(r["setting"] for r in sel):
            ss = [r for r in sel if r["setting"] == setting]
            fixed = {v: stat(ss, "fixed", **{key: v}) for v in dict.fromkeys(r[key] for r in ss if r["method"] == "fixed")}
            reached = {v: ta for v, ta in fixed.items() if ta[0] is not None}
            if not reached:
                continue
            best = min(reached, key=lambda v: reached[v][0])
            for method in dict.fromkeys(r["method"] for r in ss if split_variant(r["method"])[0] == base):
                t0, a0 = stat(ss, method)
                out.append({"claim": fig, "model": ss[0]["model"], "setting": setting, "method": method,
                            "versus": f"{key} = {best}", "ratio": reached[best][0] / t0 if t0 else None,
                            "acc_gain": a0 - reached[best][1],
                            **conv([r for r in ss if r["method"] == method or r.get(key) == best and r["method"] == "fixed"],
                                   method, "fixed"),
                            "note": "" if t0 else f"{method} did not reach the target"})
    return out


def calibration_transfer(entries: list[dict], model: str, fit: dict, constants, gamma: float, interval: int,
                         target_acc: float) -> list[dict]:
    """Whether a calibration fitted elsewhere (e.g. at ``quick``, its own N and target) predicts these runs: for
    every IID fixed run of ``model`` here (Figs. 2a / 3a and the calibration runs), the rounds to ``target_acc``
    (the fit's own target) measured on its curve against Corollary 1 under ``fit`` (``eps``, ``kappa``,
    ``lambda``) on ``constants`` (this profile's pilot constants of ``model``) with this run's N, b and cut.

    Returns:
        One row per run: ``model``, ``batch``, ``cut``, ``N``, ``target_acc``, ``rounds_measured`` (None: never
        reached), ``rounds_predicted`` (None: ε at or below the floor) and ``ratio`` (predicted / measured).

    Raises:
        ValueError: ``fit`` lacks eps / kappa / lambda, or a value out of range (:func:`fedlib.lab.hasfl.runs.calibrate`).
    """
    from fedlib.split import time_to_target
    from fedlib.lab.hasfl.runs.calibrate import fitted_rounds
    if missing := [k for k in ("eps", "kappa", "lambda") if not isinstance(fit, dict) or fit.get(k) is None]:
        raise ValueError(f"fit must hold eps, kappa and lambda (a calibration row), missing {missing}")
    cal = calibrated_constants(constants, fit["kappa"], fit["lambda"])
    out, seen = [], set()
    for e in entries:
        r = e["row"]
        if (r["method"] != "fixed" or r["model"] != model or r["setting"] != "iid"
                or not {"fig2a", "fig3a", "calibration"} & set(r["figures"]) or (r["batch"], r["cut"]) in seen):
            continue
        seen.add((r["batch"], r["cut"]))
        measured = time_to_target(e["curve"], target_acc, key="round")
        pred = fitted_rounds(cal, gamma, [float(r["batch"])] * r["N"], r["cut"], interval, fit["eps"])
        out.append({"model": model, "batch": r["batch"], "cut": r["cut"], "N": r["N"], "target_acc": target_acc,
                    "rounds_measured": measured, "rounds_predicted": pred,
                    "ratio": pred / measured if pred is not None and measured else None})
    return out


def committed_fit(profile: str, model: str, width: float) -> tuple[dict, float]:
    """The calibration committed at ``profile`` (its ``hasfl_5_train_figures`` metrics: the first model's fit, first
    seed) and its target accuracy, for :func:`calibration_transfer`. That fit belongs to the first model and width
    of ``profile``'s parameters, so it is refused for any other.

    Returns:
        ``(fit, target_acc)``: the calibration row (``eps``, ``kappa``, ``lambda``, ...) and its target.

    Raises:
        ValueError: an unknown profile, a profile without committed HASFL metrics, or one whose first model or width
            is not ``model`` / ``width`` (naming both); a committed calibration without a fit.
    """
    import json

    from fedlib.lab.notebooks import PROFILES, notebook_parameters
    from fedlib.lab.params import declared_parameters
    from fedlib.lab.paths import REPO_ROOT
    check_choice("transfer_fit_from", profile, PROFILES)
    nb = REPO_ROOT / "notebooks" / "hasfl" / "hasfl_5_train_figures.ipynb"
    path = REPO_ROOT / "figures" / ("" if profile == "quick" else profile) / "metrics" / "hasfl_5_train_figures.json"
    if not path.is_file():
        raise ValueError(f"transfer_fit_from = {profile!r} has no committed calibration ({path} is missing)")
    params = {**declared_parameters(nb), **notebook_parameters(nb, profile)}   # defaults, then the profile's files
    theirs = (params["models"][0], float(params["widths"][0]))
    if theirs != (model, float(width)):
        raise ValueError(f"transfer_fit_from = {profile!r} calibrated {theirs[0]} at width {theirs[1]:g}, but this "
                         f"run's first model is {model} at width {float(width):g}: a fit applies to its own model")
    other = json.loads(path.read_text())
    fits = [r for r in other["calibration"] if r.get("kappa") is not None]
    if not fits:
        raise ValueError(f"transfer_fit_from = {profile!r}: its committed calibration holds no fit")
    return fits[0], other["target_acc"]


def eps_sweep(problem: Problem, points: int = 25, top: float = 10.0) -> list[dict]:
    """HASFL's decision (:func:`fedlib.hasfl.bcd`) against C1's ε, from just above the bound's floor at cut 1 up
    to ``top`` x the floor at the deepest allowed cut (every device at b = 64 for both floors), ``points`` values
    spaced geometrically, plus the project's rule ε = 1.1 x the floor at cut 1
    (:func:`fedlib.lab.hasfl.runs.training.target_eps`, ``eps_mode="slack"``).

    Returns:
        One row per ε, ascending: ``eps``, ``eps_over_floor1`` (ε / the cut-1 floor), ``rule`` (True for the
        project's ε), ``b_mean``, ``b_min``, ``b_max``, ``cuts`` (sorted distinct), ``L_c``, ``theta`` (s), or
        ``b_mean`` None and ``unreachable`` (the optimiser's C1 / C4 message). ``points`` >= 2 and ``top`` > 1 are
        the notebook's (``eps_sweep_points``, checked there).
    """
    floors = floors_by_cut(problem, 64)
    lo, hi = floors[problem.allowed_cuts[0] - 1], floors[problem.allowed_cuts[-1] - 1]
    grid = sorted(set(np.geomspace(lo * 1.001, top * max(hi, lo), points).tolist()) | {1.1 * lo})
    rows = []
    for eps in grid:
        row = {"eps": eps, "eps_over_floor1": eps / lo, "rule": bool(np.isclose(eps, 1.1 * lo, rtol=1e-12))}
        try:
            d = bcd(replace(problem, eps=eps))
            row.update(b_mean=float(d.b.mean()), b_min=int(d.b.min()), b_max=int(d.b.max()),
                       cuts=sorted({int(c) for c in d.cuts}), L_c=int(d.cuts.max()), theta=float(d.theta))
        except ValueError as err:
            row.update(b_mean=None, cuts=None, L_c=None, theta=None, unreachable=str(err).split("\n")[0][:160])
        rows.append(row)
    return rows


def decisions_by_beta(store: ResultStore, s: TrainSettings, num_devices: int, seed: int,
                      data: TensorDataset) -> list[dict]:
    """HASFL's decision under the pilot constants with β from the Hessian (the decisions' β) and with [24]'s
    online β (:func:`fedlib.hasfl.bound.estimate.online_beta`, recorded by the pilot), each at the ε rule of
    ``s`` applied to its own constants (ε moves with β) on the Table I system of ``seed``.

    Returns:
        Two rows: ``beta_estimator`` (``"hessian"`` / ``"online"``), ``beta``, ``eps``, ``floor_cut1``, ``b_mean``,
        ``cuts`` (sorted distinct), ``theta`` (s), or ``unreachable`` (the optimiser's message); the online row
        says ``unreachable`` when γ > 1/β_online (Theorem 1's step size) or the pilot recorded no online β.
    """
    rec = pilot(store, s, seed, data)
    base = bound_constants(rec, "pilot")
    rows = []
    for name, beta in (("hessian", base.beta), ("online", rec.get("beta_online"))):
        row = {"beta_estimator": name, "beta": beta}
        try:
            if beta is None:
                raise ValueError("the pilot recorded no online beta (fewer than interval steps)")
            consts = HasflConstants(beta, base.sigma2, base.G2, base.vartheta)
            p = training_problem(s, consts, target_eps(rec, consts, s, num_devices), num_devices, seed)
            row.update(eps=p.eps, floor_cut1=floors_by_cut(p, 64)[0])
            d = bcd(p)
            row.update(b_mean=float(d.b.mean()), cuts=sorted({int(c) for c in d.cuts}), theta=float(d.theta))
        except ValueError as err:
            row.update(b_mean=None, cuts=None, theta=None, unreachable=str(err).split("\n")[0][:160])
        rows.append(row)
    return rows


def pilot_eps_sweep(store: ResultStore, s: TrainSettings, num_devices: int, seed: int, data: TensorDataset,
                    points: int = 25) -> list[dict]:
    """:func:`eps_sweep` of the problem the plan decides on for ``s`` (its model and width, the pilot constants
    of ``seed``, ``num_devices`` devices of the Table I system of ``seed``; a cache hit of the pilot)."""
    rec = pilot(store, s, seed, data)
    consts = bound_constants(rec, "pilot")
    return eps_sweep(training_problem(s, consts, target_eps(rec, consts, s, num_devices), num_devices, seed), points)
