"""The HIST notebooks' parameters checked together, before any work (data, store, sweep, training).

Every HIST notebook calls its function here right after :func:`fedlib.lab.notebooks.setup_notebook` (which checks
each parameter's *type* against the parameters cell); these check each parameter's *range*, *choices* and the
*combinations* the runs need, so that no run starts on a value a later cell (or a library call deep in a run)
would refuse. Each takes the notebook's namespace (``globals()``) and raises ``ValueError``
(:class:`fedlib.core.validate.ParameterTypeError` for a wrong type) naming the notebook's parameter and what it
allows. They compute nothing: the checks are the library's own (:mod:`fedlib.core.validate`,
:class:`fedlib.hist.HistConfig`) under the notebook's names.

Ranges (the paper is HIST, Fang et al.; its values in brackets):

- ``profile``: smoke, quick, converged, paper (checked by ``setup_notebook``).
- ``settings``: distinct names of :data:`fedlib.hist.SETTINGS` (``noniid``, ``cell_iid``: Sec. V's two settings).
- ``num_cells``: distinct N >= 2, each dividing ``num_clients`` (U/N clients per cell, Sec. III) and, in the
  training notebooks, the MLP's hidden width (equal submodels, eq. 3) [2, 3, 4, 5].
- ``H`` >= 1 [40]; ``E`` >= 1, a multiple of ``H`` (Algorithm 1) [200].
- ``hidden`` (the training notebooks and ``hist_your_method``): the MLP's hidden units (784-hidden-10), an integer
  >= 1 that every N divides [300].
- ``comm_budget_L0`` > 0 and at least one global round of HFedAvg at every N (:func:`fedlib.hist.comm_per_round`).
- ``target_acc``: a fraction in (0, 1] [0.75].
- ``fig4_num_cells`` >= 1, dividing ``num_clients`` and the hidden width [3]; ``fig4_E_over_H``, ``fig4_H``:
  distinct integers >= 1 [5, 10, 15] / [20, 40, 60]; ``fig4_global_rounds`` >= 1.
- ``seeds``: distinct integers >= 0; ``seed`` >= 0.
- ``num_clients`` >= 1 (>= 2 for the bounds, which need two clients) [60]; ``lr`` > 0 [0.01, the authors' code];
  ``batch_size`` >= 1; ``dataset``: a name of :data:`fedlib.data.DATASETS` or a
  dataset of your own by import path ``"module:function"`` (:func:`fedlib.lab.datasets.use_dataset`).
- ``device``: ``auto``, ``cpu``, ``cuda`` (CUDA only where present) or another torch device name
  (:func:`fedlib.core.seeding.resolve_device`).
- ``force``: True or False (its type only).
- ``partition`` (``hist_your_method``): an import path ``"module:function"`` that imports now (a client partition
  of your own, :func:`fedlib.hist.sampling.client_partition`); ``paper_setting``: a name of
  :data:`fedlib.hist.SETTINGS`, the paper's setting it is compared with.
- Bounds notebook: ``T`` >= 1; ``gamma`` > 0; ``bound_form``: ``telescoped`` or ``printed`` (eq. 13's first term);
  ``H_grid``, ``E_over_H_grid``, ``T_grid``: distinct integers >= 1; ``pilot_rounds``, ``sigma_draws``,
  ``power_iters`` >= 1; ``smoothness_clients`` in 1..``num_clients``; ``num_clients`` divisible by the pilot's
  cells (the ``pilot_num_cells`` of :func:`fedlib.hist.estimate.pilot_constants`).
"""
from __future__ import annotations

import inspect
from typing import Mapping

from fedlib.core.seeding import resolve_device
from fedlib.core.validate import check_choice, check_float, check_int, check_list
from fedlib.lab.datasets import check_dataset_name
from fedlib.hist.config import METHODS, SETTINGS, HistConfig, comm_per_round

__all__ = ["check_hist_1_experiments", "check_hist_2_figures", "check_hist_3_bounds", "check_hist_explore",
           "check_hist_your_method"]

BOUND_FORMS = ("telescoped", "printed")
"""The forms of eq. (13)'s first term (:func:`fedlib.hist.theory.theorem1_bound`'s ``form``)."""


def _seeds(name: str, value) -> list:
    return check_list(name, value, lambda k, v: check_int(k, v, 0, extra=" (seeds: distinct integers)"), distinct=True)


def _cells(name: str, values: list, num_clients: int, hidden: int | None) -> None:
    """Every N of ``values`` divides ``num_clients`` (and ``hidden`` unless None), naming ``name``."""
    what = f"num_clients ({num_clients})" + (f" and the MLP's hidden width ({hidden})" if hidden else "")
    for n in values:
        if num_clients % n or (hidden and hidden % n):
            raise ValueError(f"{name} must hold cell counts N that divide {what}: U/N clients per cell"
                             f"{', equal submodels (HIST eq. 3)' if hidden else ''}; got N = {n}")


def _training(p: Mapping) -> None:
    """The parameters of ``hist_1_experiments`` and ``hist_2_figures`` (the same runs)."""
    check_list("settings", p["settings"], lambda k, v: check_choice(k, v, SETTINGS), distinct=True)
    num_cells = check_list("num_cells", p["num_cells"], lambda k, v: check_int(k, v, 2), distinct=True)
    for name in ("H", "E", "fig4_num_cells", "fig4_global_rounds", "num_clients", "batch_size"):
        check_int(name, p[name], 1)
    if p["E"] % p["H"]:
        raise ValueError(f"E must be a multiple of H = {p['H']} (cloud aggregations every E/H edge aggregations), "
                         f"got {p['E']}")
    check_float("comm_budget_L0", p["comm_budget_L0"], 0, low_open=True)
    check_float("target_acc", p["target_acc"], 0, 1, low_open=True)
    check_list("fig4_E_over_H", p["fig4_E_over_H"], lambda k, v: check_int(k, v, 1), distinct=True)
    check_list("fig4_H", p["fig4_H"], lambda k, v: check_int(k, v, 1), distinct=True)
    _seeds("seeds", p["seeds"])
    check_float("lr", p["lr"], 0, low_open=True)
    check_dataset_name(p["dataset"])
    hidden = check_int("hidden", p["hidden"], 1, extra=" (the MLP's hidden units; the paper's 300)")
    _cells("num_cells", num_cells, p["num_clients"], hidden)
    _cells("fig4_num_cells", [p["fig4_num_cells"]], p["num_clients"], hidden)
    _budget(p, num_cells)


def _budget(p: Mapping, num_cells: list) -> None:
    """The budget buys at least one global round of HFedAvg at every N (rounds_for_budget would give 1 round,
    overshooting it); every other field of a run is checked by HistConfig when the notebook builds it, before the
    data."""
    one_round = max(comm_per_round(m, n, num_clients=n, H=p["H"], E=p["E"])["client"] for m in METHODS
                    for n in num_cells)
    if p["comm_budget_L0"] < one_round:
        raise ValueError(f"comm_budget_L0 = {p['comm_budget_L0']:g} is below one global round of HFedAvg "
                         f"({one_round:g} L0 per client at E/H = {p['E']}/{p['H']}): give at least {one_round:g}")


def check_hist_1_experiments(p: Mapping) -> None:
    """``hist_1_experiments``' parameters (the module docstring's ranges), before the data and the sweep.

    Raises:
        ValueError / ParameterTypeError: naming the parameter and its allowed values.
    """
    _training(p)
    resolve_device(p["device"])


def check_hist_2_figures(p: Mapping) -> None:
    """``hist_2_figures``' parameters (as ``hist_1_experiments``', whose runs it draws), before the store reads.

    Raises:
        ValueError / ParameterTypeError: naming the parameter and its allowed values.
    """
    _training(p)


def check_hist_3_bounds(p: Mapping) -> None:
    """``hist_3_bounds``' parameters (the module docstring's ranges), before the data and the pilot runs.

    Raises:
        ValueError / ParameterTypeError: naming the parameter and its allowed values.
    """
    from fedlib.hist import estimate

    check_list("settings", p["settings"], lambda k, v: check_choice(k, v, SETTINGS), distinct=True)
    num_clients = check_int("num_clients", p["num_clients"], 2)
    num_cells = check_list("num_cells", p["num_cells"], lambda k, v: check_int(k, v, 2), distinct=True)
    _cells("num_cells", num_cells, num_clients, None)
    for name in ("H", "E", "T", "pilot_rounds", "batch_size", "sigma_draws", "power_iters"):
        check_int(name, p[name], 1)
    if p["E"] % p["H"]:
        raise ValueError(f"E must be a multiple of H = {p['H']} (cloud aggregations every E/H edge aggregations), "
                         f"got {p['E']}")
    check_float("gamma", p["gamma"], 0, low_open=True)
    check_choice("bound_form", p["bound_form"], BOUND_FORMS)
    check_int("seed", p["seed"], 0)
    check_dataset_name(p["dataset"])
    for name in ("H_grid", "E_over_H_grid", "T_grid"):
        check_list(name, p[name], lambda k, v: check_int(k, v, 1), distinct=True)
    check_float("lr", p["lr"], 0, low_open=True)
    check_int("smoothness_clients", p["smoothness_clients"], 1, num_clients, extra=f" (num_clients = {num_clients})")
    pilot_cells = inspect.signature(estimate.pilot_constants).parameters["pilot_num_cells"].default
    if num_clients % pilot_cells:
        raise ValueError(f"num_clients must be divisible by the pilot's {pilot_cells} cells (its HFedAvg run, "
                         f"fedlib.hist.estimate.pilot_constants), got {num_clients}")
    resolve_device(p["device"])
    for n in [pilot_cells, *num_cells]:    # the pilot's own checks: every N a valid HFedAvg run for these U, H, E
        HistConfig(method="hfedavg", num_cells=n, num_clients=num_clients, H=p["H"], E=p["E"], lr=p["lr"],
                   batch_size=p["batch_size"], seed=p["seed"], setting=p["settings"][0], dataset=p["dataset"])


def check_hist_explore(p: Mapping) -> None:
    """``hist_explore``: the explorer's parameters (:func:`fedlib.lab.hist.explore.check_parameters`: every slider's
    range, the settings and the x-axis' choices, N dividing the clients and the width, E a multiple of H,
    ``export_path`` a ``.json`` file name or "")."""
    from fedlib.lab.hist.explore import check_parameters
    check_parameters(p)


def check_hist_your_method(p: Mapping) -> None:
    """``hist_your_method``: ``partition`` an importable ``"module:function"``, ``paper_setting`` one of the paper's
    settings, the cells, intervals, budget and training parameters as in ``hist_1_experiments``, before the data and
    the sweep (each run's :class:`HistConfig`, built by the notebook before the data, checks the rest).

    Raises:
        ValueError / ParameterTypeError: naming the parameter and its allowed values.
    """
    from fedlib.lab.own_components import check_own

    check_own(p["partition"], "partition", "my_partition:dirichlet",
              note="a client partition fn(labels, num_clients, num_cells, rng)")
    check_choice("paper_setting", p["paper_setting"], SETTINGS)
    num_cells = check_list("num_cells", p["num_cells"], lambda k, v: check_int(k, v, 2), distinct=True)
    for name in ("H", "E", "num_clients", "batch_size"):
        check_int(name, p[name], 1)
    if p["E"] % p["H"]:
        raise ValueError(f"E must be a multiple of H = {p['H']} (cloud aggregations every E/H edge aggregations), "
                         f"got {p['E']}")
    check_float("comm_budget_L0", p["comm_budget_L0"], 0, low_open=True)
    check_float("target_acc", p["target_acc"], 0, 1, low_open=True)
    _seeds("seeds", p["seeds"])
    check_float("lr", p["lr"], 0, low_open=True)
    check_dataset_name(p["dataset"])
    hidden = check_int("hidden", p["hidden"], 1, extra=" (the MLP's hidden units; the paper's 300)")
    _cells("num_cells", num_cells, p["num_clients"], hidden)
    resolve_device(p["device"])
    _budget(p, num_cells)
