"""HASFL's training experiments (Figs. 2a, 3a, 5, 6, 9, 10, 11): decisions from the optimiser, split training on
the shared engine (:func:`fedlib.split.run_split`) charged by HASFL's latency model, cached in the result store.
This module holds the settings, the bound's constants and the decisions; one run (its key, extension, clock and
row) is :mod:`fedlib.lab.hasfl.runs.train_config`.

Choices where the paper is silent (also in ``notebooks/hasfl/README.md``, "Deviations"):

- **Optimizer**: not stated in the paper (its theory is plain SGD). We train with Adam, lr 1e-3 (one Adam state
  for the common part, fed the mean gradient, eq. 4; per-device states for the client-specific parts), because it
  reaches the quick targets within the 2-core budget; SGD (``optimizer="sgd"``) is a setting away. The bound's
  γ (Table I, 5e-4) is used by the optimiser's prediction only.
- **Run length**: every run processes the same number of device samples, ``epochs`` x |D_train| (rounds =
  ceil(epochs·|D| / Σ_i b_i)), so a run with larger batches has fewer rounds; the x-axis of Figs. 2a / 3a is
  that epoch count. Each run has ``evals`` evaluations, evenly spaced in rounds (plus round 0 and the last).
- **Convergence**: the paper's rule (:func:`fedlib.split.converged_at`: the best test accuracy of the last 5
  evaluations beats the best before them by < 0.02 %), on those evaluations, looked at only from the first
  evaluation above twice chance accuracy (the global model's accuracy stays at chance for the first ~20 rounds,
  which the bare rule takes for convergence); ``None`` when a run does not converge within its budget. The
  converged time is the simulated time of that evaluation. With ``stop_at_convergence`` (the converged profile)
  a run ends at the evaluation where the rule fires (the engine's ``stop`` hook): its rounds and epochs are then
  a cap, and no compute goes past the converged point; the rule's result is the same as on the full run.
- **Extension** (``extend_epochs``, the converged profile; ours): a run whose rule has not fired by its cap
  ``epochs``, although it left chance (an evaluation at or above twice chance), is trained again from the start
  up to ``extend_epochs`` with the same evaluation spacing (``eval_every`` in rounds), so its first ``epochs`` are
  the same rounds on the same batches (the engine draws batches round by round): no cap stops a rising curve
  (issue #21) while a run that converged early costs nothing more. Its record replaces the capped one and says
  so (``extended_from_epochs``). A run that never leaves chance is not extended (HABS's b = 1 at cut 8: more
  rounds of a model that does not learn). The capped record stays in the store, so turning the extension off
  (quick, smoke) or on never retrains the first ``epochs``.
- **Rounds**: clamped to [``min_rounds``, ``max_rounds``] (``max_rounds`` 0 = no cap): early learning is limited
  by rounds, not samples (a large-batch run with few rounds never leaves the initial plateau), and tiny batch
  sizes would otherwise need hundreds of rounds.
- **Constants** (``constants``, :data:`CONSTANTS_MODES`): ``"pilot"`` = HASFL's constants measured at the pilot
  model (after ``pilot_steps`` SGD steps, the model the trajectory passes through), ``"max"`` = the maximum over
  w⁰ and the pilot model (the worst case the bound asks for; w⁰'s huge G_j² then force cut 1 everywhere),
  ``"calibrated"`` = the pilot constants with G_j² scaled by κ, σ_j² by λ and ε fitted to the IID fixed-cut and
  fixed-batch runs (ours,
  :mod:`fedlib.hasfl.bound.calibrate`; built by :func:`fedlib.lab.hasfl.runs.train_plan.plan_calibration`, which needs training
  runs, so :func:`bound_constants` gives only pilot and max). With ``"calibrated"`` the target ε is the fitted
  one and ``eps_mode`` / ``eps_factor`` are not used by the training runs.
- **Target ε** (``eps_mode``): ``"grad_norm"`` = ``eps_factor`` x Σ_j G_j² at the pilot model (the measured
  squared gradient norm where the pilot stops: ε asks the bound for the gradient norm training actually reaches);
  ``"slack"`` = (1 + ``eps_factor``) x the bound's floor at b = 64 and cut 1 (the system-model notebooks' rule).
- **Clock**: each round adds T_S (eq. 38) of that round's decision and, every I rounds, T_A (eq. 39), on a Table I
  system drawn from the ``system`` stream, with the profile of the model actually trained (width and input size).
  The clock is applied to the cached training record afterwards (:func:`with_clock`), so that a training record
  depends only on the code that trains (:mod:`fedlib.lab.hasfl.runs.train_run`, its own code hash): editing the optimiser
  or the bound never retrains a run whose b and cuts it leaves unchanged.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from fedlib.lab.store import ResultStore
from fedlib.lab.own_components import check_own, load_own
from fedlib.core import numpy_rng
from fedlib.core.components import is_path
from fedlib.core.validate import check_bool, check_choice, check_float, check_int, check_list
from fedlib.data import TensorDataset
from fedlib.split import model_profile, sample_system
from fedlib.split.models import check_model, make_model
from fedlib.lab.hasfl.runs.experiments import DATASET_SHAPES, constants_config, estimated_constants
from fedlib.hasfl.bound.latency import table_i
from fedlib.hasfl.optimiser.p2 import solve_p2
from fedlib.hasfl.optimiser.refinement import habs_batches
from fedlib.hasfl.bound.problem import Problem, eps_with_slack, theta
from fedlib.hasfl.optimiser.strategies import STRATEGIES, draw_stream, strategy
from fedlib.hasfl.bound.theory import HasflConstants, bound_floor
from fedlib.lab.hasfl.runs.train_run import converged_index, split_config, train_record  # noqa: F401 (re-exported)

#: the constants of the bound behind the decisions (module docstring, "Constants")
CONSTANTS_MODES = ("pilot", "max", "calibrated")
#: methods a training run can use: the paper's five strategies, HABS (HASFL's batch sizes at a fixed cut),
#: HAMS (HASFL's cuts at a fixed batch size) and ``fixed`` (one batch size and one cut for every device).
TRAIN_METHODS = STRATEGIES + ("HABS", "HAMS", "fixed")
NUM_LAYERS = {"vgg16": 16, "resnet18": 10}


@dataclass(frozen=True)
class TrainSettings:
    """Hyper-parameters shared by a notebook's training runs (see the module docstring for the choices).

    Attributes:
        model, width: cuttable model and channel multiplier (in (0, 1]; 1 is the paper's model). dataset: data
            name (``fashion-mnist``, ...) or a dataset of your own by import path ``"module:function"``
            (:mod:`fedlib.lab.datasets`: checked and fitted to the model here, loaded by each worker by its path, its
            records keyed by its path and source).
        interval: I (rounds between eq. 7 aggregations). optimizer, lr, momentum: the training optimiser.
        epochs: device samples per run / |D_train| (> 0); min_rounds / max_rounds: clamp of the rounds (0 = no
        cap). evals: evaluations per run (>= 5, the rule's window). stop_at_convergence: end a run where the
        convergence rule fires (module docstring). extend_epochs: 0 (off) or the longer cap (> ``epochs``, needs
        ``stop_at_convergence``) of a run whose rule has not fired at ``epochs`` (module docstring, "Extension").
        test_subset: evaluate on the first n test samples (0 = the full test set). shards_per_client: non-IID
            shards (HASFL: 40 shards, 2 per device). gamma: the bound's step size. pilot_*, num_batches (>= 2: two
            minibatches per estimation point), power_iters: the pilot run of :func:`fedlib.hasfl.pilot_constants`.
            constants: one of :data:`CONSTANTS_MODES` (``"pilot"``,
            ``"max"``, ``"calibrated"``). eps_mode: ``"grad_norm"`` or ``"slack"``; eps_factor: its factor (> 0)
            (not used with ``"calibrated"``: ε is fitted).

    Raises:
        ValueError / ParameterTypeError: a value outside its range, naming it.
    """

    model: str = "vgg16"
    width: float = 0.25
    dataset: str = "fashion-mnist"
    interval: int = 15
    optimizer: str = "adam"
    lr: float = 1e-3
    momentum: float = 0.0
    epochs: float = 0.2
    min_rounds: int = 1
    max_rounds: int = 0
    evals: int = 15
    test_subset: int = 0
    shards_per_client: int = 2
    gamma: float = 5e-4
    pilot_steps: int = 200
    pilot_lr: float = 0.01
    pilot_batch: int = 16
    num_batches: int = 8
    power_iters: int = 10
    constants: str = "pilot"
    eps_mode: str = "slack"
    eps_factor: float = 0.1
    stop_at_convergence: bool = False
    extend_epochs: float = 0.0

    def __post_init__(self):
        check_model(self.model, tuple(NUM_LAYERS))     # or a split model of your own by import path
        if is_path(self.dataset):              # yours: loaded, checked and fitted to the model before any run
            from fedlib.lab import datasets as own_data
            own_data.check_fits(self.dataset, own_data.use_dataset(self.dataset), self.model,
                                lambda ch, size, classes: make_model(self.model, ch, size, classes, self.width),
                                self.width)
        check_choice("dataset", self.dataset, tuple(DATASET_SHAPES))
        check_choice("optimizer", self.optimizer, ("sgd", "adam"))
        check_choice("constants", self.constants, CONSTANTS_MODES)
        check_choice("eps_mode", self.eps_mode, ("grad_norm", "slack"))
        check_float("width", self.width, 0, 1, low_open=True)
        for name in ("lr", "epochs", "gamma", "pilot_lr", "eps_factor"):
            check_float(name, getattr(self, name), 0, low_open=True)
        check_float("momentum", self.momentum, 0, 1, high_open=True)
        check_bool("stop_at_convergence", self.stop_at_convergence)
        for name, low in (("interval", 1), ("min_rounds", 1), ("max_rounds", 0), ("evals", 5), ("test_subset", 0),
                          ("shards_per_client", 1),
                          ("pilot_steps", 0), ("pilot_batch", 1), ("num_batches", 2), ("power_iters", 1)):
            check_int(name, getattr(self, name), low)
        check_float("extend_epochs", self.extend_epochs, 0)
        if self.extend_epochs and self.extend_epochs <= self.epochs:
            raise ValueError(f"extend_epochs must be 0 (off) or > epochs = {self.epochs}, got {self.extend_epochs}")
        if self.extend_epochs and not self.stop_at_convergence:
            raise ValueError("extend_epochs > 0 needs stop_at_convergence=True (an extended run ends where the "
                             "convergence rule fires)")
        if self.max_rounds and self.max_rounds < self.min_rounds:
            raise ValueError(f"max_rounds must be 0 (no cap) or >= min_rounds = {self.min_rounds}, got {self.max_rounds}")


#: methods Fig. 9 can run (``TrainPlan.n_methods``): the strategies and HASFL under another constants mode (HABS /
#: HAMS need a fixed batch size or cut, which Fig. 9 has not)
N_METHODS = STRATEGIES + tuple(f"HASFL-{m}" for m in CONSTANTS_MODES)


def check_plan(plan) -> dict:
    """The list fields of a :class:`fedlib.lab.hasfl.runs.train_plan.TrainPlan` as tuples, after checking every field: the
    settings (``iid`` / ``noniid``), models, widths (in (0, 1]), grids, device counts and Fig. 9's methods are
    non-empty lists without repeats of known names / integers >= 1, cuts within the first model's layers,
    ``fig9_draws`` >= 1, ``num_devices`` >= 2; ``own_methods``: distinct import paths ``"package.module:fn"`` of
    strategies of your own, each imported now and naming a function or class (a built-in name refused).

    Raises:
        ValueError / ParameterTypeError: naming the field, its allowed values and the value given (``own_methods``:
        the path and why, :func:`fedlib.lab.own_components.check_own`)."""
    out = {}

    def items(name, check, distinct=True):
        out[name] = tuple(check_list(name, getattr(plan, name), check, distinct=distinct))
        return out[name]

    positive = lambda k, v: check_int(k, v, 1)   # noqa: E731
    items("settings", lambda k, v: check_choice(k, v, ("iid", "noniid")))
    models = items("models", lambda k, v: check_choice(k, v, tuple(NUM_LAYERS)), distinct=False)
    widths = items("widths", lambda k, v: check_float(k, v, 0, 1, low_open=True), distinct=False)
    if len(widths) != len(models):
        raise ValueError(f"widths must have one entry per model ({len(models)}), got {list(widths)}")
    if len(set(zip(models, widths))) != len(models):
        raise ValueError(f"models / widths must not repeat a (model, width) pair, got {list(zip(models, widths))}")
    layers, cut_text = NUM_LAYERS[models[0]], f" (cuts of {models[0]}: 1..{NUM_LAYERS[models[0]]})"
    items("batch_grid", positive)
    items("cut_grid", lambda k, v: check_int(k, v, 1, layers, extra=cut_text))
    items("device_counts", positive)
    items("n_methods", lambda k, v: check_choice(k, v, N_METHODS))
    check_int("fig9_draws", plan.fig9_draws, 1)
    out["sweep_factors"] = tuple(check_list("sweep_factors", plan.sweep_factors,
                                            lambda k, v: check_float(k, v, 0, low_open=True), min_len=0, distinct=True))
    items("sweep_methods", lambda k, v: check_choice(k, v, N_METHODS))
    fig9 = items("fig9_settings", lambda k, v: check_choice(k, v, ("iid", "noniid")))
    if not set(fig9) <= set(out["settings"]):
        raise ValueError(f"fig9_settings must be among settings {list(out['settings'])}, got {list(fig9)}")
    check_int("fixed_cut", plan.fixed_cut, 1, layers, extra=cut_text)
    grids = check_list("model_cut_grids", plan.model_cut_grids, min_len=0)
    if grids and len(grids) != len(models) - 1:
        raise ValueError(f"model_cut_grids must be empty or hold one cut grid per later model ({len(models) - 1}: "
                         f"{list(models[1:])}), got {list(grids)}")
    out["model_cut_grids"] = ()
    for model, grid in zip(models[1:], grids):
        top, text = NUM_LAYERS[model], f" (cuts of {model}: 1..{NUM_LAYERS[model]})"
        out["model_cut_grids"] += (tuple(check_list(f"model_cut_grids ({model})", grid,
                                                    lambda k, v, top=top, text=text: check_int(k, v, 1, top, extra=text),
                                                    min_len=2, distinct=True)),)
        check_int(f"fixed_cut (calibration of {model})", plan.fixed_cut, 1, top, extra=text)
    check_int("fixed_batch", plan.fixed_batch, 1)
    check_int("num_devices", plan.num_devices, 2)
    out["own_methods"] = tuple(check_list("own_methods", plan.own_methods, min_len=0, distinct=True))
    for i, path in enumerate(out["own_methods"]):   # each imported now; a bad path refused naming it (check_own)
        check_own(path, f"own_methods[{i}]", "my_strategy:compute_proportional", STRATEGIES)
    for name in ("compare_constants", "calibrate_variance"):
        check_bool(name, getattr(plan, name))
    return out


# --- constants, target and problem ------------------------------------------------------------------------------

def pilot(store: ResultStore, s: TrainSettings, seed: int, data: TensorDataset | None = None) -> dict:
    """The cached pilot estimation for ``s`` (model at its width, ``pilot_*`` settings, seed)."""
    cfg = constants_config(s.model, s.dataset, s.pilot_steps, s.pilot_lr, s.pilot_batch, s.num_batches,
                           s.power_iters, seed, s.width, s.interval)
    return estimated_constants(store, cfg, data)


def bound_constants(record: dict, mode: str) -> HasflConstants:
    """HASFL's constants from a pilot record: ``"max"`` over its points, or ``"pilot"`` at the last point (the
    pilot model; ϑ is f(w⁰) in both).

    Raises:
        ValueError: ``mode`` not pilot / max (``"calibrated"`` needs training runs: the message points to
        :func:`fedlib.lab.hasfl.runs.train_plan.plan_calibration`).
    """
    if mode == "calibrated":
        raise ValueError("constants 'calibrated' are fitted to training runs: use "
                         "fedlib.lab.hasfl.runs.train_plan.plan_calibration; bound_constants gives 'pilot' or 'max'")
    check_choice("constants", mode, ("pilot", "max"))
    if mode == "max":
        return HasflConstants.from_dict(record["constants"])
    last = record["per_point"][-1]
    return HasflConstants(last["beta"], np.asarray(last["sigma2"]), np.asarray(last["G2"]),
                          record["constants"]["vartheta"])


def target_eps(record: dict, constants: HasflConstants, s: TrainSettings, num_devices: int) -> float:
    """ε of constraint C1 by ``s.eps_mode`` (module docstring): ``grad_norm`` = factor x Σ_j G_j² at the pilot
    model; ``slack`` = (1 + factor) x the floor at b = 64, cut 1."""
    if s.eps_mode == "grad_norm":
        return float(s.eps_factor * np.sum(record["per_point"][-1]["G2"]))
    return eps_with_slack(constants, s.gamma, s.interval, num_devices, s.eps_factor)


def training_problem(s: TrainSettings, constants: HasflConstants, eps: float, num_devices: int,
                     seed: int, scale: dict | None = None) -> Problem:
    """Problem (41) on a Table I system of ``num_devices`` devices (``system`` stream of ``seed``) with the
    profile of the trained model (``s.model`` at ``s.width`` and the dataset's input shape); ``scale``: Table I
    ranges multiplied by factors (:func:`fedlib.hasfl.bound.latency.table_i`, Figs. 7-8)."""
    ch, size, classes = DATASET_SHAPES[s.dataset]
    devices, servers = sample_system(table_i(num_devices, scale), numpy_rng(seed, "system"))
    profile = model_profile(s.model, ch, size, classes, width=s.width)
    return Problem(profile, devices, servers, constants, s.gamma, eps, s.interval)


def decision_stream(method: str, draw: int = 0) -> str:
    """The seed stream (:mod:`fedlib.core.seeding`) a random strategy's decision draws from: ``system/<method>``
    (a ``(C1)`` variant its paper strategy's, :func:`draw_stream`) for draw 0, today's and the only one before
    draws existed, and the separate stream ``system/<method>/draw<k>`` for draw k >= 1 (Fig. 9's further draws,
    ``TrainPlan.fig9_draws``). Only the decision's stream changes with the draw: the data partition, the initial
    model and the system are drawn from the ``data``, ``model`` and ``system`` streams of the same seed."""
    return f"system/{draw_stream(method)}" + (f"/draw{draw}" if draw else "")


def decide(problem: Problem, method: str, seed: int, batch: int | None = None, cut: int | None = None,
           draw: int = 0) -> dict:
    """One decision for ``method`` (:data:`TRAIN_METHODS`, or a strategy of your own by import path
    ``"package.module:fn"``: :func:`fedlib.hasfl.optimiser.strategies.own_strategy`, drawing from the
    ``system/<path>`` stream of ``seed``) on ``problem``.

    HASFL and the benchmarks: :func:`fedlib.hasfl.strategy` (random ones draw from the ``system/<method>``
    stream of ``seed``, a ``(C1)`` variant from its paper strategy's, :func:`draw_stream`; draw k >= 1 from
    ``system/<method>/draw<k>``, :func:`decision_stream`: HASFL, HABS, HAMS and fixed ignore ``draw``); HABS: cuts all
    ``cut``, batch sizes by :func:`fedlib.hasfl.optimiser.refinement.habs_batches` (choice: when ε is at or below the bound's
    floor at that cut, HABS is solved for ε = 1.1 x that floor, and ``note`` says so); HAMS: batch sizes all
    ``batch``, cuts by P2 (choice: when ε is at or below the floor at that b even at cut 1, P2 is solved for
    ε = 1.1 x that floor, ``note`` says so); fixed: every device ``batch`` and ``cut``. Θ is always scored on ``problem``.

    Returns:
        ``{"method", "b": [N], "cuts": [N], "theta": predicted Θ (s; None when ε is unreachable), "note"}``.

    Raises:
        ValueError: unknown method. ``batch`` / ``cut`` (HABS, HAMS, fixed) are a plan's, checked there
        (:class:`fedlib.lab.hasfl.runs.train_plan.TrainPlan`).
    """
    if is_path(method):                      # imported again after an edit: the decision is its source's
        load_own(method, "strategy", STRATEGIES)
    else:
        check_choice("method", method, TRAIN_METHODS)
    n = problem.num_devices
    note, original = "", problem
    if method in STRATEGIES or is_path(method):
        d = strategy(problem, method, numpy_rng(seed, decision_stream(method, draw)))
        b, cuts = d.b, d.cuts
        note = "; ".join(d.info[k] for k in ("note", "infeasible") if k in d.info)
    elif method == "fixed":
        b, cuts = np.full(n, batch), np.full(n, cut)
    else:
        if method == "HABS":
            cuts = np.full(n, cut)
            floor = float(bound_floor(problem.constants, problem.gamma, np.full(n, 64.0), cut, problem.interval))
            if problem.eps <= floor:  # choice: ε unreachable at this cut -> 1.1 x its floor (noted in the row)
                problem = replace(problem, eps=1.1 * floor)
                note = f"eps raised to 1.1 x the floor at cut {cut}: {problem.eps:.4g}"
            b = habs_batches(problem, cuts)
        else:
            b = np.full(n, batch)
            floor = float(bound_floor(problem.constants, problem.gamma, b.astype(float), 1, problem.interval))
            if problem.eps <= floor:  # choice: ε unreachable at this b (even at cut 1) -> 1.1 x that floor
                problem = replace(problem, eps=1.1 * floor)
                note = f"eps raised to 1.1 x the floor at b = {batch}, cut 1: {problem.eps:.4g}"
            cuts = solve_p2(problem, b)[0]
    th = float(theta(original, b, cuts))
    return {"method": method, "b": [int(v) for v in b], "cuts": [int(v) for v in cuts],
            "theta": th if math.isfinite(th) else None, "note": note}
