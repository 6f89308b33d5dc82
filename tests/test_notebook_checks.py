"""Every notebook refuses a bad value of any of its parameters in its first code cells, before any work.

For every notebook and every parameter of its parameters cell (:func:`fedlib.lab.params.declared_parameters`):
the notebook's code cells run in order in a fresh namespace, in this process, with papermill's injected
``# Parameters`` cell right after the parameters cell (as papermill places it; ``In`` holds the cells run so far,
which :func:`fedlib.lab.params.validate_parameters` reads). A guard makes the first piece of work (a store read
or computation, loading data, a job fan-out, a sweep, a model profile, the training plan) raise
:class:`WorkStarted`; the bad value must be refused before that, by a ``ValueError`` (or ``ParameterTypeError``)
naming the parameter. At the smoke profile's values the checks pass and the guard trips: that is the expected end.

A bad value is one of the right type (what papermill delivers), out of range: an int -5, a float -1.0, an unknown
name, a list of such items; or an impossible combination (:data:`COMBINATIONS`). :data:`SKIP` lists the parameters
that accept every value of their type.
"""
from __future__ import annotations

import importlib
import json
import os
import re
import sys
from pathlib import Path

import pytest

from fedlib.lab.params import declared_parameters

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))
BY_NAME = {p.stem: p for p in NOTEBOOKS}

#: parameters that accept every value of their type (no range, no combination), with the reason
SKIP = {
    ("hist_1_experiments", "force"): "True or False: recompute cached runs or not",
    ("hist_your_method", "force"): "True or False: recompute cached runs or not",
    ("hasfl_4_train_experiments", "sweep"): "True or False: train Figs. 7-8 or not (sweep_factors are checked either way)",
    ("hasfl_5_train_figures", "sweep"): "True or False: train Figs. 7-8 or not (sweep_factors are checked either way)",
    ("hasfl_5_train_figures", "beta24_runs"): "True or False: train HASFL decided with [24]'s beta or not (its decisions "
                                              "are shown either way)",
}

_TRAIN = {"stop_at_convergence": ({"stop_at_convergence": False, "extend_epochs": 1.0}, "stop_at_convergence"),
          "calibrate_variance": ({"calibrate_variance": True, "constants": "calibrated", "batch_grid": [16]},
                                 "calibrate_variance"),
          "calibrate_later_models": ({"calibrate_later_models": True, "models": ["vgg16"], "widths": [0.25]},
                                     "calibrate_later_models"),
          "model_cut_grids": ({"calibrate_later_models": True, "model_cut_grids": [[0, 4]]}, "model_cut_grids")}
#: a parameter's bad value where the generic one does not apply (bools, nested lists): (injected values, name)
BAD = {**{("hasfl_4_train_experiments", k): v for k, v in _TRAIN.items()},
       **{("hasfl_5_train_figures", k): v for k, v in _TRAIN.items()},
       ("hasfl_5_train_figures", "out_of_sample_seeds"): ({"out_of_sample_seeds": [-1]}, "out_of_sample_seeds"),
       ("hasfl_5_train_figures", "out_of_sample_later_seeds"): ({"out_of_sample_later_seeds": [-1]},
                                                                "out_of_sample_later_seeds"),
       **{(nb, "authors_scheduler"): ({"authors_scheduler": True, "num_tiers": 6}, "authors_scheduler")
          for nb in ("dtfl_5_baselines", "dtfl_6_scaling")},
       ("hasfl_your_method", "stop_at_convergence"): _TRAIN["stop_at_convergence"],
       # "" by default (nothing written): a file in a folder that does not exist (none is created)
       **{(nb, "export_path"): ({"export_path": "/no/such/folder/decision.json"}, "export_path")
          for nb in ("hasfl_explore", "dtfl_explore")},
       # an empty list by default: a path that cannot be imported
       **{(nb, "own_methods"): ({"own_methods": ["no_such_module:decide"]}, "own_methods")
          for nb in ("hasfl_4_train_experiments", "hasfl_5_train_figures")}}

#: impossible combinations (each value alone is in range): (notebook, injected values, a name the error names)
COMBINATIONS = [
    ("hist_1_experiments", {"E": 50}, "E"),                                     # not a multiple of H = 40
    ("hist_1_experiments", {"num_cells": [7]}, "num_cells"),                    # does not divide 60 clients
    ("hist_1_experiments", {"fig4_num_cells": 7}, "fig4_num_cells"),
    ("hist_2_figures", {"comm_budget_L0": 1.0}, "comm_budget_L0"),              # below one HFedAvg round
    ("hist_3_bounds", {"smoothness_clients": 61}, "smoothness_clients"),
    ("hist_your_method", {"partition": "my_partition:nowhere"}, "partition"),   # the module has no such function
    ("hist_your_method", {"partition": "no_such_module:dirichlet"}, "partition"),   # cannot be imported
    ("hist_your_method", {"E": 50}, "E"),
    ("hist_your_method", {"num_cells": [7]}, "num_cells"),
    ("hist_your_method", {"comm_budget_L0": 1.0}, "comm_budget_L0"),
    ("hist_3_bounds", {"num_clients": 20, "num_cells": [2, 4, 5]}, "num_clients"),   # the pilot's 3 cells
    ("dtfl_3_fig3", {"tiers_list": [1, 8]}, "tiers_list"),
    ("dtfl_3_fig3", {"tiers_list": [1, 2], "static_tiers": [3]}, "static_tiers"),   # above the largest M
    ("dtfl_6_scaling", {"authors_scheduler": True, "num_tiers": 3}, "num_tiers"),
    ("hasfl_1_latency", {"cuts": [1, 17]}, "cuts"),                             # VGG-16 has 16 cut layers
    ("hasfl_1_latency", {"classes": [10]}, "classes"),                          # one per model
    ("hasfl_2_bound", {"model": "resnet18", "cut_for_eps": 11}, "cut_for_eps"),
    ("hasfl_4_train_experiments", {"fixed_cut": 17}, "fixed_cut"),
    ("hasfl_4_train_experiments", {"widths": [0.25]}, "widths"),
    ("hasfl_4_train_experiments", {"fig9_settings": ["noniid"], "settings": ["iid"]}, "fig9_settings"),
    ("hasfl_4_train_experiments", {"max_rounds": 20}, "max_rounds"),            # below min_rounds = 30
    ("hasfl_4_train_experiments", {"constants": "calibrated", "cut_grid": [8]}, "cut_grid"),
    ("hasfl_5_train_figures", {"out_of_sample_seeds": [0]}, "out_of_sample_seeds"),   # a seed of seeds
    ("hasfl_5_train_figures", {"out_of_sample_seeds": [1, 1]}, "out_of_sample_seeds"),   # repeated
    ("hasfl_5_train_figures", {"out_of_sample_seeds": [1], "out_of_sample_later_seeds": [2]},
     "out_of_sample_later_seeds"),                                               # not an out-of-sample seed
    ("hasfl_5_train_figures", {"out_of_sample_seeds": [1], "out_of_sample_later_seeds": [1], "models": ["vgg16"],
      "widths": [0.25]}, "out_of_sample_later_seeds"),                           # no later model
    ("hasfl_5_train_figures", {"transfer_fit_from": "quick", "widths": [0.5, 0.125]}, "transfer_fit_from"),
    ("hasfl_your_method", {"max_rounds": 20}, "max_rounds"),                     # below min_rounds = 30
    ("hasfl_your_method", {"width": 1.5}, "width"),                              # above the paper's model
    ("hasfl_your_method", {"strategy": "RBS+RMS"}, "strategy"),                  # a built-in name, not yours
    ("hasfl_your_method", {"strategy": "my_strategy:no_such_function"}, "strategy"),
    ("hasfl_your_method", {"strategy": "no_such_module:fn"}, "strategy"),
    ("dtfl_your_method", {"scheduler": "ours"}, "scheduler"),                      # a built-in name, not yours
    ("dtfl_your_method", {"scheduler": "my_scheduler:NoSuchClass"}, "scheduler"),
    ("dtfl_your_method", {"scheduler": "no_such_module:StaticTiers"}, "scheduler"),
    ("dtfl_your_method", {"scheduler": "my_scheduler:np"}, "scheduler"),           # a module, not a TierScheduler
    ("dtfl_your_method", {"num_tiers": 8}, "num_tiers"),
    ("dtfl_your_method", {"setting": "dirichlet"}, "setting"),
    # a split model of your own (my_model.py beside the notebook): each refused naming its path, before any work
    ("dtfl_your_method", {"model": "my_model:no_such_function"}, "my_model:no_such_function"),
    ("dtfl_your_method", {"model": "no_such_module:small_cnn"}, "no_such_module:small_cnn"),
    ("dtfl_your_method", {"model": "my_model:conv_unit"}, "my_model:conv_unit"),    # a unit, not a factory
    ("dtfl_your_method", {"model": "own_models:four_units"}, "own_models:four_units"),   # 4 units, not DTFL's 8
    ("dtfl_your_method", {"model": "own_models:flat_mlp"}, "own_models:flat_mlp"),       # [B, F] smashed data
    ("dtfl_your_method", {"model": "vgg16"}, "model"),                              # HASFL's, not DTFL's
    ("hasfl_explore", {"devices": "1, 80, 370, 0.5", "devices_csv": "d.csv"}, "devices"),   # one of the two
    ("hasfl_explore", {"devices": "1, 80, 370, 0.5; 1, 80, 0, 1"}, "devices row 2, downlink_mbps"),
    ("dtfl_explore", {"clients_text": "1, 30", "clients_csv": "d.csv"}, "clients_text"),   # one of the two
    ("dtfl_explore", {"clients_text": "1, 30\n1, -2"}, "clients_text"),
]


@pytest.fixture(autouse=True)
def notebook_folders_on_the_path(monkeypatch):
    """A kernel starts in its notebook's folder, which is on its Python path: a module of your own beside a notebook
    (``notebooks/hasfl/my_strategy.py``, named ``"my_strategy:compute_proportional"``) imports there, and here."""
    for folder in sorted({p.parent for p in NOTEBOOKS}):
        monkeypatch.syspath_prepend(str(folder))


class WorkStarted(Exception):
    """The guard: the notebook started work (not a ValueError, so it never passes for a refusal)."""


def _generic_bad(default):
    if isinstance(default, bool):
        return None
    if isinstance(default, int):
        return -5
    if isinstance(default, float):
        return -1.0
    if isinstance(default, str):
        return "nope"
    if isinstance(default, list) and default and not isinstance(default[0], (list, bool)):
        return [_generic_bad(default[0])]
    return None


def _cases():
    out = []
    for path in NOTEBOOKS:
        for name, default in declared_parameters(path).items():
            if (path.stem, name) in SKIP:
                continue
            values, named = BAD.get((path.stem, name), ({name: _generic_bad(default)}, name))
            out.append(pytest.param(path.stem, values, named, id=f"{path.stem}-{name}"))
    return out


def test_every_parameter_has_a_bad_value_or_a_reason():
    for path in NOTEBOOKS:
        for name, default in declared_parameters(path).items():
            key = (path.stem, name)
            assert key in SKIP or key in BAD or _generic_bad(default) is not None, f"{key}: give a bad value or a reason"
    assert set(SKIP) | set(BAD) <= {(p.stem, n) for p in NOTEBOOKS for n in declared_parameters(p)}


def _code_cells(path: Path) -> list[tuple[str, list]]:
    return [("".join(c["source"]), c["metadata"].get("tags", [])) for c in json.loads(path.read_text())["cells"]
            if c["cell_type"] == "code"]


def run_cells(name: str, params: dict) -> None:
    """Run notebook ``name``'s code cells in order, in a fresh namespace, with ``params`` injected as papermill
    does; stops at the first exception (raised)."""
    from papermill.translators import translate_parameters

    history = [""]
    ns = {"__name__": "__main__", "In": history}
    for source, tags in _code_cells(BY_NAME[name]):
        sources = [source] + ([translate_parameters("python3", "python", params, "Parameters")]
                              if "parameters" in tags and params else [])
        for src in sources:
            history.append(src)
            exec(compile(src, f"<{name}>", "exec"), ns)


@pytest.fixture
def guard(monkeypatch, tmp_path):
    """The first work of every notebook raises :class:`WorkStarted`; the process state a notebook's setup changes
    (profile, thread counts and their environment variables) is restored afterwards."""
    import torch

    from fedlib.lab import paths
    from fedlib.lab.store import ResultStore

    mods = {m: importlib.import_module(m) for m in (
        "fedlib.lab", "fedlib.lab.parallel", "fedlib.data", "fedlib.data.datasets", "fedlib.split",
        "fedlib.split.profile", "fedlib.lab.hist", "fedlib.lab.hist.experiments", "fedlib.lab.dtfl.experiments",
        "fedlib.lab.hasfl.runs.experiments", "fedlib.lab.hasfl.runs.train_plan")}

    def stop(what):
        def work(*args, **kwargs):
            raise WorkStarted(what)
        return work

    monkeypatch.setattr(ResultStore, "get_or_run", stop("a store computation"))
    monkeypatch.setattr(ResultStore, "load", stop("a store read"))
    load = mods["fedlib.data.datasets"].load_dataset
    for mod in [m for n, m in list(sys.modules.items()) if n.startswith("fedlib")]:
        if getattr(mod, "load_dataset", None) is load:
            monkeypatch.setattr(mod, "load_dataset", stop("loading data"))
    for mod, attr, what in (("fedlib.lab", "map_jobs", "jobs"), ("fedlib.lab.parallel", "map_jobs", "jobs"),
                            ("fedlib.lab.dtfl.experiments", "dataset_by_name", "loading data"),
                            ("fedlib.lab.dtfl.experiments", "time_model", "a model profile"),
                            ("fedlib.split", "model_profile", "a model profile"),
                            ("fedlib.split", "model_profiles", "model profiles"),
                            ("fedlib.split.profile", "model_profiles", "model profiles"),
                            ("fedlib.lab.hist", "run_sweep", "a sweep"), ("fedlib.lab.hist.experiments", "run_sweep", "a sweep"),
                            ("fedlib.lab.hasfl.runs.train_plan", "decided_runs", "the training plan")):
        monkeypatch.setattr(mods[mod], attr, stop(what))
    monkeypatch.setattr(paths, "_profile", paths._profile)
    monkeypatch.delenv("FEDLIB_COMMIT", raising=False)
    monkeypatch.setenv("FEDLIB_METRICS_DIR", str(tmp_path / "metrics"))
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if var in os.environ:
            monkeypatch.setenv(var, os.environ[var])
        else:
            monkeypatch.delenv(var, raising=False)
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def _refused(name: str, values: dict, named: str) -> None:
    # the cases are written against the parameters cell's values: at quick, whose profile file adds none (the
    # notebook's default profile, converged for DTFL and HASFL, would bring its own values: setup_notebook)
    try:
        run_cells(name, {"profile": "quick", **values})
    except WorkStarted as exc:
        pytest.fail(f"{name} with {values}: work started ({exc}) before the value was refused")
    except ValueError as exc:          # ParameterTypeError is one too
        assert re.search(rf"(?<![\w.]){re.escape(named)}(?!\w)", str(exc)), f"{name} with {values}: {exc!r}"
    else:
        pytest.fail(f"{name} with {values}: no error")


@pytest.mark.parametrize("name, values, named", _cases())
def test_a_bad_value_is_refused_before_any_work(guard, name, values, named):
    _refused(name, values, named)


@pytest.mark.parametrize("name, values, named", COMBINATIONS, ids=[f"{c[0]}-{'-'.join(c[1])}" for c in COMBINATIONS])
def test_an_impossible_combination_is_refused_before_any_work(guard, name, values, named):
    _refused(name, values, named)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_smoke_profile_passes_the_checks_and_reaches_the_first_work(guard, name):
    from fedlib.lab.notebooks import notebook_parameters

    with pytest.raises(WorkStarted):
        run_cells(name, notebook_parameters(BY_NAME[name], "smoke"))


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_profile_passes_the_notebooks_checker(name):
    """The checker alone (no cells) accepts the defaults and every committed profile of its notebook: the paper's
    file alone (as ``papermill -f profiles/<profile>/<paper>.yaml``) and with the notebook's own file."""
    from fedlib.lab import notebooks
    from fedlib.lab.notebooks import PROFILES, has_profile, notebook_parameters

    paper = BY_NAME[name].parent.name
    check = getattr(importlib.import_module(f"fedlib.lab.{paper}.checks"), f"check_{name}")
    setup = _code_cells(BY_NAME[name])[1][0]       # the cell after the parameters cell
    named = "" if name.endswith("_explore") else f", \"{name}\""    # a study names itself: its profile's values apply
    assert re.search(rf"^setup_notebook\(globals\(\), \"{paper}\"{named}\).*\n{paper}_checks\.check_{name}\(globals\(\)\)",
                     setup, re.M), "the notebook calls its checker right after setup_notebook"
    declared = declared_parameters(BY_NAME[name])
    check(declared)
    for profile in PROFILES:
        if has_profile(BY_NAME[name], profile):   # the paper's file alone (papermill -f), then with the notebook's
            shared = notebooks._read_yaml(notebooks.PROFILE_DIR / profile / f"{paper}.yaml")
            check({**declared, **{k: v for k, v in shared.items() if k in declared}})
            check({**declared, **notebook_parameters(BY_NAME[name], profile)})


def test_hasfl_cut_ranges_are_the_models_layers():
    """The HASFL checks take cut ranges from NUM_LAYERS (no model is profiled before the work): they agree."""
    from fedlib.lab.hasfl.runs.training import NUM_LAYERS
    from fedlib.split import model_profile

    assert {m: model_profile(m).num_layers for m in NUM_LAYERS} == NUM_LAYERS
