"""The runs behind HASFL's training figures, shared between figures (Fig. 10's fixed batch sizes are Fig. 2a's
runs, Fig. 11's fixed cuts Fig. 3a's, Fig. 9's N = 20 is Fig. 5's): :class:`TrainPlan` lists them,
:func:`decided_runs` decides each on its problem; ``hasfl_4_train_experiments``' runs cell trains them through the
result store (an interrupted plan resumes from its cache) and reads each into its metrics row (:func:`decision_row`). With the ``"calibrated"`` constants (ours,
:mod:`fedlib.hasfl.bound.calibrate`) the decisions use the bound fitted to the plan's IID fixed-cut and fixed-batch
runs (:func:`plan_calibration`, :func:`calibration_table`)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace


from fedlib.lab.store import ResultStore
from fedlib.data import TensorDataset
from fedlib.split import time_to_target
from fedlib.hasfl.bound.calibrate import CalibrationFit, calibrated_constants, fit_calibration, fitted_rounds
from fedlib.lab.hasfl.runs.plan_analysis import (VARIANT_MODES, claim_ratios,  # noqa: F401  (re-exported)
                                                 committed_fit, split_variant, variants)  # noqa: F401  (re-exported)
from fedlib.hasfl.optimiser.strategies import STRATEGIES
from fedlib.hasfl.bound.theory import HasflConstants, bound_floor, rounds_needed
from fedlib.lab.hasfl.runs.train_config import extension_config, run_config, summary_row, train
from fedlib.lab.hasfl.runs.train_jobs import TRAIN_ORDER, train_parallel, stored_run, train_job, train_priority  # noqa: F401 (re-exported)
from fedlib.lab.hasfl.runs.training import TrainSettings, bound_constants, check_plan, decide, pilot, target_eps, training_problem
from fedlib.hasfl.bound.latency import SCALE_KEYS
from fedlib.hasfl.bound.problem import Problem

#: the paper's random benchmarks whose Fig. 9 points are drawn ``TrainPlan.fig9_draws`` times at each N (draw k
#: decides from its own seed stream, :func:`fedlib.lab.hasfl.runs.training.decision_stream`; draw 0 is the plan's
#: only draw before draws existed, and Fig. 5's run at N = ``num_devices``)
DRAWN_METHODS = ("HABS+RMS", "RBS+RMS")


@dataclass(frozen=True)
class TrainPlan:
    """Which runs the training figures need.

    Attributes:
        settings: data settings (``iid``, ``noniid``). num_devices: N of Figs. 2a-6, 10, 11.
        batch_grid / fixed_cut: Figs. 2a, 10 (every device b at cut ``fixed_cut``).
        cut_grid / fixed_batch: Figs. 3a, 11 (every device cut c at b = ``fixed_batch``).
        models: Fig. 5 / 6 models; ``widths``: their channel multipliers (same order).
        device_counts / n_methods / fig9_settings: Fig. 9 (first model; the data settings it runs, each also in
        ``settings``). fig9_draws: Fig. 9's draws (>= 1) of each benchmark of :data:`DRAWN_METHODS` in
        ``n_methods`` at each N and setting: draw k varies only the benchmark's random decision (its own seed
        stream; the data partition, initial model and system are the seed's), draw 0 is the single draw of
        ``fig9_draws = 1``; the other methods run once. sweep_factors / sweep_methods: Figs. 7-8 trained (ours; the paper's are the system model's
        predictions): each Table I quantity of :data:`fedlib.hasfl.bound.latency.SCALE_KEYS` multiplied by each factor,
        the methods decided on that system and trained (first model, first setting); empty: none. A factor-1
        point is Fig. 5's run (same decision, a cache hit). compare_constants: add to Fig. 5, for the first
        model, one HASFL run per constants mode other than the settings' own, and to Figs. 10 / 11 HABS / HAMS
        under the pilot and calibrated modes other than the settings' own (:data:`VARIANT_MODES`). calibrate_variance: the calibrated constants fit a scale λ on the variance term
        too, on the fixed-batch runs of Fig. 2a (:func:`plan_calibration`; needs >= 2 batch sizes in
        ``batch_grid``); else only ε and κ, on the fixed-cut runs. model_cut_grids: fixed-cut grids of the later
        models (``models[1:]``, one per model) for a calibration of their own (IID fixed-cut runs at
        ``fixed_batch`` over that grid, fixed-batch runs over ``batch_grid`` at ``fixed_cut``; figure tag
        ``calibration``) and their ``HASFL-calibrated`` run in Figs. 5 / 6; empty: only the first model is
        calibrated (the fit does not transfer between models, issue #21). own_methods: strategies of your own by
        import path ``"package.module:fn"`` (:func:`fedlib.hasfl.optimiser.strategies.own_strategy`), trained
        beside the paper's methods in Figs. 5 / 6 (every model and setting) and Fig. 9 (every N and
        ``fig9_settings``, one draw), after them; shown, never judged (the notebook keeps their rows apart from
        the rows its claims read). Each is imported when the plan is built: a bad path is refused naming it.
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
    fig9_settings: tuple = ("iid",)
    fig9_draws: int = 1
    sweep_factors: tuple = ()
    sweep_methods: tuple = ("HASFL", "RBS+HAMS")
    model_cut_grids: tuple = ()
    compare_constants: bool = True
    calibrate_variance: bool = True
    own_methods: tuple = ()

    def __post_init__(self):
        for name, value in check_plan(self).items():         # lists as tuples; raises naming the field
            object.__setattr__(self, name, value)


def calibrated_models(plan: TrainPlan) -> list[int]:
    """Indices into ``plan.models`` of the models calibrated on their own runs: the first, and every later one when
    ``plan.model_cut_grids`` is given."""
    return [0] + (list(range(1, len(plan.models))) if plan.model_cut_grids else [])


@dataclass(frozen=True)
class PlanJob:
    """One run of a :class:`TrainPlan` before its decision: ``figures`` (tags: ``fig2a`` ... ``fig11``, ``calibration``), ``settings``
    (the run's model and training), ``setting`` (``iid`` / ``noniid``), ``num_devices`` (N), ``method`` (a
    strategy or variant name; ``fixed`` with ``batch`` and ``cut``), ``batch`` / ``cut`` (None: decided),
    ``scale`` (None: Table I; else ``((key, factor),)``) and ``draw`` (Fig. 9's draw of a random benchmark)."""

    figures: tuple
    settings: TrainSettings
    setting: str
    num_devices: int
    method: str
    batch: int | None = None
    cut: int | None = None
    scale: tuple | None = None
    draw: int = 0


def _jobs(plan: TrainPlan, s: TrainSettings) -> list[PlanJob]:
    """One :class:`PlanJob` per run, in a stable order: per setting the fixed
    runs (Figs. 2a, 3a; the IID ones are the calibration's, :func:`calibration_runs`) before the optimiser-driven
    ones (HABS / HAMS and their variants, then the later models' calibration runs, Fig. 5's strategies and HASFL's
    variants, Fig. 9's, then Figs. 7-8's on scaled systems, first setting; :data:`VARIANT_MODES`). ``scale``: None (Table I) or
    ``((key, factor),)`` (:func:`fedlib.hasfl.bound.latency.table_i`); ``draw``: 0, or Fig. 9's draw k of a
    :data:`DRAWN_METHODS` benchmark (``plan.fig9_draws`` draws, after the other methods at that N)."""
    jobs = []
    s = replace(s, model=plan.models[0], width=plan.widths[0])
    for setting in plan.settings:
        for b in plan.batch_grid:
            jobs.append(PlanJob(("fig2a", "fig10"), s, setting, plan.num_devices, "fixed", b, plan.fixed_cut))
        for c in plan.cut_grid:
            jobs.append(PlanJob(("fig3a", "fig11"), s, setting, plan.num_devices, "fixed", plan.fixed_batch, c))
        for habs, hams in zip(*[(m,) + (variants(m, s.constants) if plan.compare_constants else ())
                                for m in ("HABS", "HAMS")]):
            jobs.append(PlanJob(("fig10",), s, setting, plan.num_devices, habs, None, plan.fixed_cut))
            jobs.append(PlanJob(("fig11",), s, setting, plan.num_devices, hams, plan.fixed_batch, None))
    for k in calibrated_models(plan)[1:]:                 # the later models' own calibration runs (IID)
        for b, c in calibration_runs(plan, k):
            sk = replace(s, model=plan.models[k], width=plan.widths[k])
            jobs.append(PlanJob(("calibration",), sk, "iid", plan.num_devices, "fixed", b, c))
    hasfl_variants = variants("HASFL", s.constants) if plan.compare_constants else ()
    own = ("HASFL-calibrated",) if s.constants != "calibrated" else ()
    for k, (model, width) in enumerate(zip(plan.models, plan.widths)):
        sm = replace(s, model=model, width=width)
        methods = STRATEGIES + (hasfl_variants if k == 0 else own if k in calibrated_models(plan) else ())
        methods += plan.own_methods                        # strategies of your own, after the paper's
        for setting in plan.settings:
            for m in methods:
                jobs.append(PlanJob(("fig5", "fig6"), sm, setting, plan.num_devices, m, None, None))
    for setting in plan.fig9_settings:
        for n in plan.device_counts:
            for m in plan.n_methods + plan.own_methods:
                jobs.append(PlanJob(("fig9",), s, setting, n, m, None, None, None, 0))
            for m in plan.n_methods:                       # further draws of the random benchmarks
                if m in DRAWN_METHODS:
                    jobs += [PlanJob(("fig9",), s, setting, n, m, draw=k) for k in range(1, plan.fig9_draws)]
    for key in SCALE_KEYS:                                 # Figs. 7-8 trained: IID, first model, scaled systems
        for factor in plan.sweep_factors:
            for m in plan.sweep_methods:
                fig = "fig7" if key in ("device_flops", "server_flops") else "fig8"
                jobs.append(PlanJob((fig,), s, plan.settings[0], plan.num_devices, m, None, None, ((key, factor),)))
    return jobs


def calibration_runs(plan: TrainPlan, model_index: int = 0) -> list[tuple[int, int]]:
    """``(batch, cut)`` of the IID runs the calibration of ``plan.models[model_index]`` uses, in plan order: the
    fixed-cut runs (b = ``plan.fixed_batch``, each cut of ``plan.cut_grid``, or of ``plan.model_cut_grids[k - 1]``
    for a later model k), then, with ``plan.calibrate_variance``, the fixed-batch runs (each b of
    ``plan.batch_grid`` at ``plan.fixed_cut``); a run in both grids is listed once.

    Raises:
        ValueError: ``model_index`` is not a calibrated model (:func:`calibrated_models`)."""
    if model_index not in calibrated_models(plan):
        raise ValueError(f"model_index must be one of the calibrated models {calibrated_models(plan)} (model_cut_grids "
                         f"gives the later models a calibration), got {model_index!r}")
    grid = plan.cut_grid if model_index == 0 else plan.model_cut_grids[model_index - 1]
    runs = [(plan.fixed_batch, c) for c in grid]
    if plan.calibrate_variance:
        runs += [(b, plan.fixed_cut) for b in plan.batch_grid]
    return list(dict.fromkeys(runs))


def plan_calibration(store: ResultStore, s: TrainSettings, plan: TrainPlan, seed: int, target_acc: float,
                     data: TensorDataset, device: str = "auto",
                     model_index: int = 0) -> tuple[CalibrationFit, HasflConstants]:
    """The calibrated bound (:func:`fedlib.hasfl.bound.calibrate.fit_calibration`) of ``plan.models[model_index]`` (the
    first by default; a later one on its own runs, :func:`calibration_runs`): (ε, κ, λ)
    fitted to the rounds-to-``target_acc`` of the IID fixed-cut runs of Figs. 3a / 11 (every one of
    ``plan.num_devices`` devices at b = ``plan.fixed_batch``, cuts ``plan.cut_grid``, this seed) and, with
    ``plan.calibrate_variance``, the IID fixed-batch runs of Figs. 2a / 10 (cut ``plan.fixed_cut``, batch sizes
    ``plan.batch_grid``; else λ = 1 and only the fixed-cut runs), trained through ``store`` (cache hits: they
    are the Fig. 2a / 3a jobs' run configs; a run in both grids is used once).

    Returns:
        ``(fit, pilot)``: the fit and the model's pilot constants (whose G_j² κ and σ_j² λ scale).

    Raises:
        ValueError: fewer than 2 cuts (or batch sizes, with ``calibrate_variance``; also when ``batch_grid``
        has fewer than 2) reach ``target_acc`` (naming them and the target), or the runs do not determine the
        fit (:func:`fedlib.hasfl.bound.calibrate.fit_calibration`).
    """
    runs = calibration_runs(plan, model_index)
    s0, n = replace(s, model=plan.models[model_index], width=plan.widths[model_index]), plan.num_devices
    rec = pilot(store, s0, seed, data)
    consts = bound_constants(rec, "pilot")
    problem = training_problem(s0, consts, target_eps(rec, consts, s0, n), n, seed)   # the clock's system
    rounds = []
    for b, c in runs:
        decision = decide(problem, "fixed", seed, b, c)
        config = run_config(s0, "iid", decision, seed, len(data.y_train))
        record = train(store, config, problem, data, device, extension_config(s0, config, len(data.y_train)))
        rounds.append(time_to_target(record, target_acc, key="round"))
    fit = fit_calibration(consts, s0.gamma, s0.interval, n, [b for b, _ in runs], [c for _, c in runs], rounds,
                          target_acc, fit_variance=plan.calibrate_variance)
    return fit, consts


def decided_runs(store: ResultStore, s: TrainSettings, plan: TrainPlan, seeds: list[int], calibration_target: float,
                 data: TensorDataset, device: str, which: str = "all", fit_seed: int | None = None,
                 only_figures: tuple = ()):
    """Every (run, seed) of ``plan`` decided, in plan order: a dict with ``figs``, ``method``, ``sm`` (the job's
    settings), ``ss`` (with the decision's constants mode), ``setting``, ``n``, ``batch``, ``cut``, ``draw``, ``seed``,
    ``problem``, ``decision``, ``config`` and ``fit`` (when calibrated: the seed's fit of the run's model, or of
    the first model for a model without calibration runs of its own, :func:`calibrated_models`; else None).
    ``which``: ``"all"``, ``"plain"`` (only runs whose decision needs no calibration: nothing is trained) or
    ``"calibrated"`` (only the calibrated ones; fitting them trains the calibration runs through ``store``).
    A calibrated variant whose calibration fails is skipped with a warning (raises when ``s`` itself is
    calibrated). ``fit_seed``: calibrated decisions of every seed use the calibrated bound of that seed (its fit
    and its pilot constants: out of sample for the other seeds) on the run's own system; ``only_figures``: only
    the jobs of these figures (empty: all)."""
    cache: dict = {}
    fits: dict = {}
    for seed in seeds:
        for job in _jobs(plan, s):
            figs, sm, setting, n, method = job.figures, job.settings, job.setting, job.num_devices, job.method
            batch, cut, scale, draw = job.batch, job.cut, job.scale, job.draw
            if only_figures and not set(figs) & set(only_figures):
                continue
            base, mode = split_variant(method)
            ss = replace(sm, constants=mode or sm.constants)
            calibrated = ss.constants == "calibrated"
            if (which == "plain" and calibrated) or (which == "calibrated" and not calibrated):
                continue
            k = list(zip(plan.models, plan.widths)).index((sm.model, sm.width))
            fk = (seed if fit_seed is None else fit_seed,               # the seed whose calibration decides
                  k if k in calibrated_models(plan) else 0)             # a model without its own runs: the first's fit
            if calibrated and fk not in fits:
                try:
                    fits[fk] = plan_calibration(store, s, plan, fk[0], calibration_target, data, device, k)[0]
                except ValueError as err:
                    if s.constants == "calibrated":
                        raise ValueError(f"constants 'calibrated' (seed {seed}, {sm.model}): {err}") from err
                    fits[fk] = err
            if isinstance(fits.get(fk), ValueError) and calibrated:
                warnings.warn(f"{method} skipped for {sm.model}, {setting}, seed {seed}: {fits[fk]}")
                continue
            key = (ss, n, seed, scale)
            if key not in cache:
                rec = pilot(store, ss, fk[0] if calibrated else seed, data)
                if calibrated:
                    consts = calibrated_constants(bound_constants(rec, "pilot"), fits[fk].kappa, fits[fk].lam)
                    cache[key] = training_problem(ss, consts, fits[fk].eps, n, seed, dict(scale or ()))
                else:
                    consts = bound_constants(rec, ss.constants)
                    cache[key] = training_problem(ss, consts, target_eps(rec, consts, ss, n), n, seed,
                                                  dict(scale or ()))
            problem = cache[key]
            decision = decide(problem, base, seed, batch, cut, draw=draw)
            config = run_config(sm, setting, decision, seed, len(data.y_train))
            yield dict(figs=figs, method=method, sm=sm, ss=ss, setting=setting, n=n, batch=batch, cut=cut, draw=draw,
                       seed=seed, scale=scale, problem=problem, decision=decision, config=config,
                       extend=extension_config(sm, config, len(data.y_train)), fit=fits[fk] if calibrated else None)


def train_in_workers(store: ResultStore, s: TrainSettings, plan: TrainPlan, seeds: list[int],
                     calibration_target: float, data: TensorDataset, device: str, workers: int, **which) -> None:
    """Train every run of :func:`decided_runs` not yet stored in ``workers`` processes (:func:`fedlib.lab.map_jobs`,
    one torch thread each; :data:`TRAIN_ORDER`, costliest first): first every run whose decision needs no
    calibration, then the calibrated ones (their fit reads the first pass's runs). Nothing is returned: a loop
    over :func:`decided_runs` then reads the records from the store. ``which``: ``fit_seed`` / ``only_figures`` of
    :func:`decided_runs`. Warnings (a skipped calibrated variant) are left to that loop."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kind in ("plain", "calibrated"):
            runs = list(decided_runs(store, s, plan, seeds, calibration_target, data, device, which=kind, **which))
            train_parallel(store, runs, data, device, workers)


def decision_row(record: dict, problem: Problem, decision: dict, target_acc: float, figures, method: str,
                 s: TrainSettings, setting: str, batch: int | None = None, cut: int | None = None, draw: int = 0,
                 constants: str | None = None, scale: tuple | None = None, fit: CalibrationFit | None = None) -> dict:
    """The metrics row of one trained decision, as the training notebooks write it:
    :func:`fedlib.lab.hasfl.runs.train_config.summary_row` + ``figures``, ``method``, ``model``, ``width``,
    ``setting``, ``N``, ``batch``, ``cut``, ``draw`` (Fig. 9's draw of a :data:`DRAWN_METHODS` benchmark, else 0),
    ``constants`` (the decision's mode, default ``s.constants``), ``scale_key`` / ``scale_factor`` (Figs. 7-8),
    ``eps`` (C1's ε: the fitted ε when calibrated), ``kappa``, ``lambda`` (κ, λ when calibrated, else None),
    ``rounds_pred`` (Corollary 1's rounds to ε for the decision, None when ε is unreachable), ``floor`` (the bound's
    floor at the decision) and ``rounds_to_target`` (measured, to ``target_acc``)."""
    pred = rounds_needed(problem.constants, problem.gamma, decision["b"], decision["cuts"],
                         problem.interval, problem.eps) if decision["theta"] is not None else None
    return summary_row(record, decision, target_acc, figures=list(figures), method=method,
                       model=s.model, width=s.width, setting=setting, N=len(decision["b"]), batch=batch,
                       cut=cut, draw=draw, eps=problem.eps, constants=constants or s.constants,
                       scale_key=scale[0][0] if scale else None,
                       scale_factor=scale[0][1] if scale else None,
                       kappa=fit.kappa if fit is not None else None,
                       **{"lambda": fit.lam if fit is not None else None},
                       rounds_pred=pred, floor=float(bound_floor(
                           problem.constants, problem.gamma, decision["b"], max(decision["cuts"]),
                           problem.interval)),
                       rounds_to_target=time_to_target(record, target_acc, key="round"))


def train_decision(store: ResultStore, s: TrainSettings, setting: str, decision: dict, problem: Problem,
                   seed: int, data: TensorDataset, target_acc: float, device: str = "auto",
                   figures: tuple = ("fig5",)) -> dict:
    """Train one decision, per-device batch sizes ``decision["b"]`` ``[N]`` and cut layers ``decision["cuts"]``
    ``[N]`` (from :func:`fedlib.lab.hasfl.runs.training.decide`, with a strategy of your own or ``"fixed"``, or
    typed: ``{"method", "b", "cuts", "theta"}``, Θ in s or None), on ``setting`` (``iid`` / ``noniid``) at
    ``seed``, as a Fig. 5 run is trained: the run config of ``s`` (:func:`fedlib.lab.hasfl.runs.train_config.
    run_config`), its extension past the cap, through ``store`` (a cache hit when trained before), charged on
    ``problem``'s clock (T_S, eq. 38, plus T_A, eq. 39, on aggregation rounds).

    Returns:
        ``{"row", "decision", "curve"}`` (``row``: :func:`decision_row`, whose
        ``method`` is ``decision["method"]``; ``curve``: the ``epoch``, ``sim_s`` (s), ``round``, ``test_acc``
        lists).
    """
    config = run_config(s, setting, decision, seed, len(data.y_train))
    record = train(store, config, problem, data, device, extension_config(s, config, len(data.y_train)))
    row = decision_row(record, problem, decision, target_acc, figures, decision.get("method", "yours"), s, setting)
    return {"row": row, "decision": decision,
            "curve": {k: record[k] for k in ("epoch", "sim_s", "round", "test_acc")}}


def calibration_table(store: ResultStore, s: TrainSettings, plan: TrainPlan, seeds: list[int], target_acc: float,
                      data: TensorDataset, device: str = "auto") -> list[dict]:
    """The calibration of every seed and calibrated model (:func:`plan_calibration`, :func:`calibrated_models`;
    cache hits) beside the bound's predictions.

    Returns:
        One row per (model, seed, calibration run: ``batch``, ``cut``): ``model``, ``seed``, ``batch``, ``cut``, ``kappa``,
        ``lambda``, ``eps`` (fitted), ``residual`` (relative), ``rounds_measured`` (None: not reached),
        ``rounds_fit`` (Corollary 1 under the fit, unrounded), and rounds ratios to the reference run (b =
        ``plan.fixed_batch`` at ``plan.fixed_cut`` if calibrated on, else the first run): ``measured_ratio``,
        ``pred_ratio_calibrated`` (fitted ε, κ, λ) and ``pred_ratio_pilot`` (pilot constants at ε = 1.1 x the
        largest floor of these runs, as ``hasfl_5_train_figures`` compares the bound with training; R ∝ 1/(ε − floor)). A seed whose
        calibration fails gives one row with ``kappa`` None and ``note`` = why.
    """
    return [dict(model=plan.models[k], **row) for k in calibrated_models(plan) for seed in seeds
            for row in _calibration_rows(store, s, plan, seed, target_acc, data, device, k)]


def _calibration_rows(store, s, plan, seed, target_acc, data, device, k) -> list[dict]:
    """:func:`calibration_table`'s rows of one seed and model."""
    rows = []
    try:
        fit, consts = plan_calibration(store, s, plan, seed, target_acc, data, device, k)
    except ValueError as err:
        return [{"seed": seed, "batch": None, "cut": None, "kappa": None, "lambda": None, "eps": None,
                 "note": str(err)}]
    runs = calibration_runs(plan, k)                     # plan order, reached or not
    ref = (plan.fixed_batch, plan.fixed_cut) if (plan.fixed_batch, plan.fixed_cut) in runs else runs[0]

    def bvec(b):
        return [float(b)] * plan.num_devices

    floors = {r: float(bound_floor(consts, s.gamma, bvec(r[0]), r[1], s.interval)) for r in runs}
    eps_pilot = 1.1 * max(floors.values())
    cal = calibrated_constants(consts, fit.kappa, fit.lam)
    fitted = {r: fitted_rounds(cal, s.gamma, bvec(r[0]), r[1], s.interval, fit.eps) for r in runs}
    measured = dict(zip(zip(fit.batches, fit.cuts), fit.rounds))

    def ratio(d, r):
        return d[r] / d[ref] if d.get(r) is not None and d.get(ref) else None

    for r in runs:
        rows.append({"seed": seed, "batch": r[0], "cut": r[1], "kappa": fit.kappa, "lambda": fit.lam,
                     "eps": fit.eps, "residual": fit.residual, "rounds_measured": measured.get(r),
                     "rounds_fit": fitted[r], "measured_ratio": ratio(measured, r),
                     "pred_ratio_calibrated": ratio(fitted, r),
                     "pred_ratio_pilot": (eps_pilot - floors[ref]) / (eps_pilot - floors[r]), "note": ""})
    return rows
