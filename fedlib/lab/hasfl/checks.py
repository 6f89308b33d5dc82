"""The HASFL notebooks' parameters checked together, before any work (profiles, data, store, pilot, training).

Every HASFL notebook calls its function here right after :func:`fedlib.lab.notebooks.setup_notebook` (which checks
each parameter's *type* against the parameters cell); these check each parameter's *range*, *choices* and the
*combinations* the runs need, so that no pilot or training run starts on a value a later cell would refuse (as
``eps_sweep_points = 1`` once did, after 36 training runs). Each takes the notebook's namespace (``globals()``)
and raises ``ValueError`` (:class:`fedlib.core.validate.ParameterTypeError` for a wrong type) naming the
notebook's parameter and what it allows. They compute nothing (no model is profiled: cut ranges come from
:data:`fedlib.lab.hasfl.runs.training.NUM_LAYERS`); the checks are the library's own (:mod:`fedlib.core.validate`,
:func:`fedlib.lab.hasfl.runs.experiments.check_sensitivity`, :func:`fedlib.lab.hasfl.runs.plan_analysis.committed_fit`)
under the notebook's names. The training notebooks' settings and plan are checked once, where they enter: by the
:class:`fedlib.lab.hasfl.runs.training.TrainSettings` and :class:`fedlib.lab.hasfl.runs.train_plan.TrainPlan` their
design cell builds before any work; the ranges below are theirs too.

Ranges (the paper's Table I values in brackets):

- ``profile``: smoke, quick, converged, paper (checked by ``setup_notebook``).
- ``model`` / ``models``: the cuttable models vgg16, resnet18 (Figs. 3b, 5, 6); ``widths``: one per model, in
  (0, 1] (1.0: the paper's model), no (model, width) pair twice; ``dataset``: ``auto``, a name of
  :data:`fedlib.data.DATASET_SHAPES` or a dataset of your own by import path ``"module:function"``
  (:mod:`fedlib.lab.datasets`, checked and fitted to the model first).
- cut layers (``cuts``, ``cut_for_eps``, ``fixed_cut``, ``cut_grid``, ``model_cut_grids``): 1..L of their model
  (VGG-16: 16, ResNet-18: 10) [L_c = 8]; batch sizes (``batch_sizes``, ``batch_for_eps``, ``batch_grid``,
  ``fixed_batch``, ``pilot_batch``) >= 1 [16]; lists distinct.
- ``num_devices`` >= 1, >= 2 in the training notebooks [20]; ``device_counts``: distinct N >= 1; ``interval``
  (I), ``interval_grid`` >= 1 [15]; ``seed`` >= 0; ``seeds``: distinct integers >= 0; ``out_of_sample_seeds``:
  distinct seeds >= 0 not in ``seeds`` (empty: none); ``out_of_sample_later_seeds``: distinct seeds of
  ``out_of_sample_seeds`` (empty: none; else ``models`` holds a later model).
- ``classes``: one per model, each >= 2 [10, 100]; ``in_channels`` >= 1, ``image_size`` >= 8 (the models' floor)
  [3, 32].
- pilot: ``pilot_steps`` >= 0 (>= 1 for the bound figure), ``num_batches`` >= 2 (two minibatches per estimation
  point, :func:`fedlib.hasfl.estimate_at`), ``power_iters`` >= 1, ``gamma`` / ``pilot_lr`` > 0 [5e-4].
- ``rounds`` >= 1; ``eps_grid``, ``factors``: distinct numbers > 0; ``eps_slack`` > 0; ``num_draws`` >= 1.
- training: ``epochs`` > 0; ``extend_epochs`` 0 or > ``epochs`` (needs ``stop_at_convergence``); ``min_rounds``
  >= 1; ``max_rounds`` 0 or >= ``min_rounds``; ``evals`` >= 5 (the convergence rule's window); ``test_subset``
  >= 0; ``optimizer``: adam, sgd; ``lr`` > 0; ``constants``: pilot, max, calibrated (``calibrated`` fits on at
  least 2 cuts of ``cut_grid`` and, with ``calibrate_variance``, 2 batch sizes of ``batch_grid``);
  ``eps_mode``: slack, grad_norm; ``eps_factor`` > 0; ``target_acc``, ``target_acc_noniid``: fractions in (0, 1].
- plan: ``settings``: distinct of iid, noniid; ``fig9_settings`` among them; ``fig9_draws`` >= 1 (Fig. 9's draws
  of each random benchmark per N); ``n_methods``, ``sweep_methods``:
  distinct of :data:`fedlib.lab.hasfl.runs.training.N_METHODS`; ``sweep_factors``: distinct numbers > 0;
  ``model_cut_grids``: with ``calibrate_later_models``, one grid of >= 2 distinct cuts per later model.
- figures: ``fig6_quantity``: target, converged; ``eps_sweep_points`` >= 2; ``transfer_fit_from``: "" (none) or
  a profile whose committed calibration is of this run's first model and width.
- ``device``: ``auto``, ``cpu``, ``cuda`` (only where present) or another torch device name
  (:func:`fedlib.core.seeding.resolve_device`); ``workers`` >= 1.
- ``sweep``, ``stop_at_convergence``, ``calibrate_variance``, ``calibrate_later_models``: True or False (their
  combinations above); ``beta24_runs`` (train HASFL decided with [24]'s β where it differs): True or False.
- ``own_methods`` (``hasfl_4_train_experiments``, ``hasfl_5_train_figures``): distinct import paths ``module:function``
  that import now (empty: none; a built-in name is refused), checked by the notebook's
  :class:`~fedlib.lab.hasfl.runs.train_plan.TrainPlan`.
- your own method (``hasfl_your_method``): ``strategy`` an import path ``module:function`` that imports (a module
  beside the notebook; a built-in name is refused, the paper's are compared anyway); ``benchmark`` one of the
  paper's four (RBS+HAMS, HABS+RMS, RBS+RMS, RBS+RHAMS); ``setting`` iid or noniid; ``width`` in (0, 1].
"""
from __future__ import annotations

from typing import Mapping

from fedlib.core.seeding import resolve_device
from fedlib.core.validate import check_bool, check_choice, check_float, check_int, check_list, check_str

__all__ = ["check_hasfl_1_latency", "check_hasfl_2_bound", "check_hasfl_3_optimiser",
           "check_hasfl_4_train_experiments", "check_hasfl_5_train_figures", "check_hasfl_6_pilot_decisions",
           "check_hasfl_your_method"]


def _layers() -> dict:
    from fedlib.lab.hasfl.runs.training import NUM_LAYERS
    return NUM_LAYERS


def _cut(name: str, value, model: str) -> int:
    top = _layers()[model]
    return check_int(name, value, 1, top, extra=f" (cut layers of {model}: 1..{top})")


def _positive_ints(name: str, value) -> list:
    return check_list(name, value, lambda k, v: check_int(k, v, 1), distinct=True)


def _pilot(p: Mapping, min_steps: int) -> None:
    """The pilot's parameters (``hasfl_2_bound``, ``hasfl_3_optimiser``): model, dataset and the estimation."""
    from fedlib.lab.hasfl.runs.experiments import resolve_dataset

    check_choice("model", p["model"], tuple(_layers()))
    resolve_dataset(p["dataset"], p["model"])
    check_int("pilot_steps", p["pilot_steps"], min_steps)
    check_float("gamma", p["gamma"], 0, low_open=True)
    check_int("pilot_batch", p["pilot_batch"], 1)
    check_int("num_batches", p["num_batches"], 2)
    check_int("power_iters", p["power_iters"], 1)
    check_int("interval", p["interval"], 1)
    check_int("seed", p["seed"], 0)


def check_hasfl_1_latency(p: Mapping) -> None:
    """``hasfl_1_latency``' parameters (module docstring), before the models are profiled. Raises ValueError /
    ParameterTypeError naming the parameter."""
    from fedlib.split.models import _check_shape

    models = check_list("models", p["models"], lambda k, v: check_choice(k, v, tuple(_layers())), distinct=True)
    _positive_ints("batch_sizes", p["batch_sizes"])
    check_list("cuts", p["cuts"], lambda k, v: _cut(k, v, models[0]), distinct=True)   # Fig. 2b: the first model
    check_int("num_devices", p["num_devices"], 1)
    check_int("seed", p["seed"], 0)
    classes = check_list("classes", p["classes"], lambda k, v: check_int(k, v, 2))
    if len(classes) != len(models):
        raise ValueError(f"classes must hold one entry per model of models {models}, got {classes}")
    check_int("in_channels", p["in_channels"], 1)
    _check_shape(p["in_channels"], p["image_size"], classes[0])   # the models' floor on image_size
    check_int("interval", p["interval"], 1)


def check_hasfl_2_bound(p: Mapping) -> None:
    """``hasfl_2_bound``' parameters (module docstring; the grids of its figure too), before the pilot. Raises
    ValueError / ParameterTypeError naming the parameter."""
    _pilot(p, 1)
    check_int("rounds", p["rounds"], 1)
    _positive_ints("batch_sizes", p["batch_sizes"])
    _positive_ints("interval_grid", p["interval_grid"])
    check_list("eps_grid", p["eps_grid"], lambda k, v: check_float(k, v, 0, low_open=True), distinct=True)
    check_int("batch_for_eps", p["batch_for_eps"], 1)
    _cut("cut_for_eps", p["cut_for_eps"], p["model"])
    check_int("num_devices", p["num_devices"], 1)


def check_hasfl_3_optimiser(p: Mapping) -> None:
    """``hasfl_3_optimiser``' parameters (module docstring), before the pilot. Raises ValueError /
    ParameterTypeError naming the parameter."""
    from fedlib.lab.hasfl.runs.experiments import check_sensitivity

    _pilot(p, 0)
    check_int("num_devices", p["num_devices"], 1)
    check_float("eps_slack", p["eps_slack"], 0, low_open=True)
    check_int("num_draws", p["num_draws"], 1)
    check_sensitivity(p["factors"], p["device_counts"])


def check_hasfl_4_train_experiments(p: Mapping) -> None:
    """``hasfl_4_train_experiments``' parameters that no config holds (module docstring): the seeds, targets,
    device and workers, the sweep's factors (also when ``sweep`` is off) and the combinations of switches; the
    rest is checked where it enters, by the notebook's :class:`~fedlib.lab.hasfl.runs.train_plan.TrainPlan` and
    :class:`~fedlib.lab.hasfl.runs.training.TrainSettings`, built before the data are loaded. Raises ValueError /
    ParameterTypeError naming the parameter."""
    check_list("models", p["models"], lambda k, v: check_choice(k, v, tuple(_layers())))  # the first picks the data
    check_list("seeds", p["seeds"], lambda k, v: check_int(k, v, 0, extra=" (seeds: distinct integers)"),
               distinct=True)
    for name in ("target_acc", "target_acc_noniid"):
        check_float(name, p[name], 0, 1, low_open=True)
    resolve_device(p["device"])
    check_int("workers", p["workers"], 1)
    check_list("sweep_factors", p["sweep_factors"], lambda k, v: check_float(k, v, 0, low_open=True), distinct=True)
    if p["constants"] == "calibrated":   # the fit of the decisions (fedlib.lab.hasfl.runs.train_plan.plan_calibration)
        if len(p["cut_grid"]) < 2:
            raise ValueError(f"cut_grid must hold at least 2 cuts with constants = 'calibrated' (the fit of eps and "
                             f"kappa), got {p['cut_grid']}")
        if p["calibrate_variance"] and len(p["batch_grid"]) < 2:
            raise ValueError(f"calibrate_variance = True with constants = 'calibrated' fits the variance term on at "
                             f"least 2 batch sizes of batch_grid, got {p['batch_grid']}: give 2 or more, or set "
                             "calibrate_variance = False")
    if p["calibrate_later_models"] and len(p["model_cut_grids"]) != len(p["models"]) - 1:
        raise ValueError(f"calibrate_later_models = True needs model_cut_grids with one cut grid per later model "
                         f"({len(p['models']) - 1}: {p['models'][1:]}), got {p['model_cut_grids']}")


def check_hasfl_5_train_figures(p: Mapping) -> None:
    """``hasfl_5_train_figures``' parameters that no config holds (module docstring): those of
    ``hasfl_4_train_experiments`` (the same plan), then the figures' own, before the data and the training plan
    (whose :class:`~fedlib.lab.hasfl.runs.train_plan.TrainPlan` checks ``own_methods``). Raises ValueError /
    ParameterTypeError naming the parameter."""
    from fedlib.lab.hasfl.runs.plan_analysis import committed_fit

    check_hasfl_4_train_experiments(p)
    check_choice("fig6_quantity", p["fig6_quantity"], ("target", "converged"))   # the notebook's Fig. 6 cell
    check_int("eps_sweep_points", p["eps_sweep_points"], 2, extra=" (the sweep's values of eps)")
    oos = check_list("out_of_sample_seeds", p["out_of_sample_seeds"], lambda k, v: check_int(k, v, 0), min_len=0)
    if len(set(oos)) != len(oos) or set(oos) & set(p["seeds"]):
        raise ValueError(f"out_of_sample_seeds must be distinct seeds >= 0 not in seeds {p['seeds']} ([]: none), got "
                         f"{oos}")
    later = check_list("out_of_sample_later_seeds", p["out_of_sample_later_seeds"], lambda k, v: check_int(k, v, 0),
                       min_len=0)
    if len(set(later)) != len(later) or not set(later) <= set(oos):
        raise ValueError(f"out_of_sample_later_seeds must be distinct seeds of out_of_sample_seeds {oos} ([]: none), "
                         f"got {later}")
    if later and len(p["models"]) < 2:
        raise ValueError(f"out_of_sample_later_seeds {later} needs a later model: models holds only {p['models']}")
    if p["transfer_fit_from"]:
        committed_fit(p["transfer_fit_from"], p["models"][0], p["widths"][0])   # its profile, file and model
    check_bool("beta24_runs", p["beta24_runs"])


def check_hasfl_6_pilot_decisions(p: Mapping) -> None:
    """``hasfl_6_pilot_decisions``' parameters that no config holds (module docstring), before any pilot: the models
    (the training notebooks' built-in models), one width in (0, 1] per model, the seeds and N; the pilot and the
    target are checked by the :class:`~fedlib.lab.hasfl.runs.training.TrainSettings` its first cell builds, N again
    by Table I's system. Raises ValueError / ParameterTypeError naming the parameter."""
    models = check_list("models", p["models"], lambda k, v: check_choice(k, v, tuple(_layers())), distinct=True)
    widths = check_list("widths", p["widths"], lambda k, v: check_float(k, v, 0, 1, low_open=True))
    if len(widths) != len(models):
        raise ValueError(f"widths must hold one width per model ({len(models)}: {models}), got {widths}")
    check_list("pilot_seeds", p["pilot_seeds"], lambda k, v: check_int(k, v, 0, extra=" (seeds: distinct integers)"),
               distinct=True)
    check_int("num_devices", p["num_devices"], 1)


def check_hasfl_explore(p: Mapping) -> None:
    """``hasfl_explore``: ``constants_from`` a profile with a HASFL plan (converged: the committed store; smoke:
    computed in seconds); ``constants`` pilot or calibrated; ``num_devices`` 2..100 (the slider's range);
    ``draws`` 1..10; ``timeline_benchmark`` one of the paper's four benchmarks; ``sweep_over`` one of
    :data:`fedlib.lab.hasfl.explore.SWEEPS`, ``sweep_points`` 2..50; ``seed`` >= 0; ``devices`` and ``devices_csv``
    not both given, each row of either four numbers > 0 (:func:`fedlib.lab.hasfl.explore.devices_from_text`);
    ``own_model`` "" or ``module:function``; strings for the paths, ``export_path`` "" or a file in an existing
    folder (:func:`fedlib.lab.explore.check_export_path`)."""
    from fedlib.lab.notebooks import PROFILES
    from fedlib.lab.hasfl.explore import BENCHMARKS, SWEEPS
    check_choice("constants_from", p["constants_from"], PROFILES)
    check_choice("constants", p["constants"], ("pilot", "calibrated"))
    check_int("num_devices", p["num_devices"], 2, 100)
    check_int("draws", p["draws"], 1, 10)
    check_choice("timeline_benchmark", p["timeline_benchmark"], BENCHMARKS)
    check_choice("sweep_over", p["sweep_over"], tuple(SWEEPS))
    check_int("sweep_points", p["sweep_points"], 2, 50)
    check_int("seed", p["seed"], 0)
    for name in ("devices", "devices_csv", "own_model", "export_path"):
        check_str(name, p[name], nonempty=False)
    if p["devices"].strip() and p["devices_csv"].strip():
        raise ValueError("devices and devices_csv: give one of them (or neither: the devices are drawn)")
    from fedlib.lab.hasfl.explore import devices_from_csv, devices_from_text
    if p["devices"].strip():
        devices_from_text(p["devices"])              # every row and column checked (a parse, no work)
    if p["devices_csv"].strip():
        devices_from_csv(p["devices_csv"])
    if p["own_model"] and (p["own_model"].count(":") != 1 or not all(x.strip() for x in p["own_model"].split(":"))):
        raise ValueError(f"own_model must be '' or 'module:function', got {p['own_model']!r}")
    from fedlib.lab.hasfl.explore import TYPED_OVERRIDES
    if (p["devices"].strip() or p["devices_csv"].strip()) and p["sweep_over"] in TYPED_OVERRIDES:
        raise ValueError(f"sweep_over {p['sweep_over']!r} moves the drawn devices' ranges, which typed devices "
                         "replace: with devices or devices_csv sweep 'epsilon' or 'aggregation interval'")
    from fedlib.lab.explore import check_export_path
    check_export_path(p["export_path"])              # a file in an existing folder, as the export writes it


def check_hasfl_your_method(p: Mapping) -> None:
    """``hasfl_your_method``' parameters that no config holds (module docstring), before the data, the pilot and any
    training: the benchmark, N, the data setting, the target, the draws, the seed, the device, then ``strategy``:
    an import path ``"package.module:fn"`` that imports now and names a function or class
    (:func:`fedlib.lab.own_components.check_own`; a built-in name is refused, the paper's are compared anyway). The
    model and dataset are checked where the notebook resolves the dataset, the training and the pilot by the
    :class:`~fedlib.lab.hasfl.runs.training.TrainSettings` its problem cell builds before the data are loaded.
    Raises ValueError / ParameterTypeError naming the parameter."""
    from fedlib.hasfl.optimiser.strategies import PAPER_STRATEGIES, STRATEGIES
    from fedlib.lab.own_components import check_own

    check_choice("benchmark", p["benchmark"], PAPER_STRATEGIES[1:])   # the paper's four benchmarks (Sec. VII-A)
    check_int("num_devices", p["num_devices"], 2)
    check_choice("setting", p["setting"], ("iid", "noniid"))
    check_float("target_acc", p["target_acc"], 0, 1, low_open=True)
    check_int("num_draws", p["num_draws"], 1, extra=" (draws of each random strategy in the predicted comparison)")
    check_int("seed", p["seed"], 0)
    resolve_device(p["device"])
    check_own(p["strategy"], "strategy", "my_strategy:compute_proportional", STRATEGIES,
              note=f"the paper's {list(STRATEGIES[:5])} are compared anyway")
