"""The DTFL notebooks' parameters checked together, before any work (data, store, jobs, training).

Every DTFL notebook calls its function here right after :func:`fedlib.lab.params.setup_notebook` (which checks
each parameter's *type* against the parameters cell); these check each parameter's *range*, *choices* and the
*combinations* the runs need, so that no run starts on a value a later cell or a job would refuse. Each takes the
notebook's namespace (``globals()``) and raises ``ValueError`` (:class:`fedlib.core.validate.ParameterTypeError`
for a wrong type) naming the notebook's parameter and what it allows. They compute nothing: the checks are the
library's own (:mod:`fedlib.core.validate`, :class:`fedlib.lab.dtfl.experiments.Setup`,
:func:`fedlib.lab.dtfl.experiments.check_lists`, :mod:`fedlib.lab.dtfl.compare`'s) under the notebook's names.

Ranges (the paper's values, DTFL App. A.3 and Sec. 4, in brackets):

- ``profile``: smoke, quick, converged, paper (checked by ``setup_notebook``).
- ``dataset``: ``auto``, a name of :data:`fedlib.data.DATASET_SHAPES` or a dataset of your own by import path
  ``"module:function"`` (:mod:`fedlib.lab.datasets`, checked and fitted to the model first); ``model`` / ``train_model`` / ``models``
  / the models of ``runs``: :data:`fedlib.dtfl.training.MODELS` [ResNet-56 / 110]; ``width``: (0, 1] [1.0].
- ``num_clients``: >= 2 where the notebook says so (Tables 1, 3, Figs. 2-3) [10], else >= 1 (Table 5) [20];
  ``clients_list``: distinct K >= 1 [20, 50, 100, 200].
- ``batch_size`` >= 1 [100]; ``lr`` > 0 [1e-3]; ``train_subset``, ``test_subset`` >= 0 (0: all; the data's
  size is checked once it is loaded); ``rounds`` >= 1 (Table 4: >= 0, 0 = from ``client_rounds``);
  ``eval_every``, ``evals`` >= 1.
- ``target_acc``, ``target_acc_noniid``: fractions in (0, 1) [0.8 / 0.7].
- ``seeds``: distinct integers >= 0.
- ``num_tiers``, ``table2_tiers``, ``tiers_list[i]``: M in 1..7 (Table 11: tiers of the 8-module model)
  [6 / 7]; ``cases``: distinct of :data:`fedlib.dtfl.timing.CASES`; ``settings``: distinct of iid, noniid.
- ``change_every`` >= 0 (0: never) [20 / 50]; ``change_frac``, in [0, 1] [0.3]; ``fraction`` in (0, 1] [0.1];
  ``samples_per_client``, ``client_rounds`` >= 1.
- ``authors_scheduler``: with True, ``num_tiers`` must be 7 (the authors' scheduler,
  :func:`fedlib.lab.dtfl.experiments.system_run`).
- ``methods``: distinct of :data:`fedlib.lab.dtfl.compare.METHODS`; ``runs``: distinct ``<model>/<setting>``.
- ``alphas``: distinct, each in [0, 1) (f = (1 − α)·CE + α·DCor, Sec. 4.4); ``patches`` >= 1; ``cut`` in 1..7;
  ``attack_fit``, ``attack_epochs`` >= 1; ``attack_eval`` >= 2 (the data's sizes are checked once loaded).
- ``core_gflops``, ``server_gflops`` > 0; ``noise`` >= 0.
- ``device``: ``cpu``, ``cuda`` (only where present), ``auto`` or another torch device name
  (:func:`fedlib.core.seeding.resolve_device`); ``threads`` >= 0 (0: torch's default); ``workers`` >= 1.
"""
from __future__ import annotations

from typing import Mapping

from fedlib.core.seeding import resolve_device
from fedlib.core.validate import check_choice, check_float, check_int, check_list
from fedlib.dtfl.tiers import MAX_TIERS, check_num_tiers

__all__ = ["check_dtfl_1_profiles", "check_dtfl_2_table1", "check_dtfl_3_fig3", "check_dtfl_4_training",
           "check_dtfl_5_baselines", "check_dtfl_6_scaling", "check_dtfl_7_privacy", "check_dtfl_explore",
           "check_dtfl_your_method"]


def _fraction(name: str, value) -> float:
    return check_float(name, value, 0, 1, low_open=True, high_open=True)


def _plumbing(p: Mapping, target: bool = True) -> None:
    """``device``, ``threads``, ``workers``, ``seeds`` and (``target``) ``target_acc``: every training notebook's."""
    resolve_device(p["device"])
    check_int("threads", p["threads"], 0, extra=" (0: torch's default)")
    check_int("workers", p["workers"], 1)
    check_list("seeds", p["seeds"], lambda k, v: check_int(k, v, 0, extra=" (seeds: distinct integers)"),
               distinct=True)
    if target:
        _fraction("target_acc", p["target_acc"])


SETUP_FIELDS = ("model", "width", "num_clients", "batch_size", "lr", "train_subset", "test_subset", "eval_every",
                "rounds", "core_gflops", "server_gflops", "noise")
"""The fields of :class:`fedlib.lab.dtfl.experiments.Setup` a notebook sets (``dataset`` aside: resolved first)."""


def _setup(p: Mapping, min_clients: int, **per_run) -> None:
    """The Setup fields under the notebook's names, then the :class:`fedlib.lab.dtfl.experiments.Setup` of a run (its own
    checks); ``per_run``: the fields a notebook sets per run (``model`` of ``runs``; Table 4's K, subset, rounds)."""
    from fedlib.lab.dtfl import experiments as dx
    from fedlib.dtfl.training import MODELS

    dataset = dx.resolve_dataset(p["dataset"])
    if "model" in p:
        check_choice("model", p["model"], MODELS)
    check_float("width", p["width"], 0, 1, low_open=True)
    if "num_clients" in p:
        check_int("num_clients", p["num_clients"], min_clients)
    check_int("batch_size", p["batch_size"], 1)
    check_float("lr", p["lr"], 0, low_open=True)
    for name in ("train_subset", "test_subset"):
        if name in p:
            check_int(name, p[name], 0, extra=" (0: all)")
    check_int("rounds", p["rounds"], 0 if "client_rounds" in p else 1,
              extra=" (0: from client_rounds)" if "client_rounds" in p else "")
    if "eval_every" in p:
        check_int("eval_every", p["eval_every"], 1)
    for name in ("core_gflops", "server_gflops"):
        check_float(name, p[name], 0, low_open=True)
    check_float("noise", p["noise"], 0)
    dx.Setup(dataset=dataset, **{**{n: p[n] for n in SETUP_FIELDS if n in p}, **per_run})


def _changes(p: Mapping) -> None:
    check_int("change_every", p["change_every"], 0, extra=" (0: never)")
    check_float("change_frac", p["change_frac"], 0, 1)


def _authors(p: Mapping) -> None:
    check_num_tiers(p["num_tiers"])
    if p["authors_scheduler"] and p["num_tiers"] != MAX_TIERS:
        raise ValueError(f"authors_scheduler = True runs the authors' scheduler, which needs num_tiers = {MAX_TIERS} "
                         f"(fedlib.lab.dtfl.experiments.system_run), got num_tiers = {p['num_tiers']}")


def check_dtfl_1_profiles(p: Mapping) -> None:
    """``dtfl_1_profiles``' parameters (module docstring; :func:`fedlib.lab.dtfl.experiments.check_profile_parameters`),
    before any profile. Raises ValueError / ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import experiments as dx
    from fedlib.dtfl.training import MODELS

    check_list("models", p["models"], lambda k, v: check_choice(k, v, MODELS), distinct=True)
    check_float("width", p["width"], 0, 1, low_open=True)
    dx.check_profile_parameters(p["models"], p["train_model"], p["width"], p["dataset"], p["table2_tiers"])
    check_int("threads", p["threads"], 0, extra=" (0: torch's default)")


def check_dtfl_2_table1(p: Mapping) -> None:
    """``dtfl_2_table1``' parameters (module docstring), before the data and the runs. Raises ValueError /
    ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import experiments as dx

    _plumbing(p)
    _setup(p, 2)
    check_num_tiers(p["num_tiers"])
    dx.check_lists(cases=p["cases"])


def check_dtfl_3_fig3(p: Mapping) -> None:
    """``dtfl_3_fig3``' parameters (module docstring), before the data and the runs. Raises ValueError /
    ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import experiments as dx

    _plumbing(p)
    _setup(p, 2)
    dx.check_lists(cases=p["cases"], tiers_list=p["tiers_list"])
    _changes(p)


def check_dtfl_4_training(p: Mapping) -> None:
    """``dtfl_4_training``' parameters (module docstring), before the data and the runs. Raises ValueError /
    ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import experiments as dx

    _plumbing(p)
    _setup(p, 2)
    check_num_tiers(p["num_tiers"])
    dx.check_lists(settings=p["settings"])
    _changes(p)


def check_dtfl_5_baselines(p: Mapping) -> None:
    """``dtfl_5_baselines``' parameters (module docstring), before the data and the runs: every model of ``runs``
    with the shared settings. Raises ValueError / ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import compare as dc

    _plumbing(p)
    _fraction("target_acc_noniid", p["target_acc_noniid"])
    pairs = dc.parse_runs(p["runs"])
    dc.check_methods(p["methods"])
    for model in dict(pairs):
        _setup(p, 2, model=model)
    _authors(p)
    _changes(p)


def check_dtfl_your_method(p: Mapping) -> None:
    """``dtfl_your_method``'s parameters (module docstring), before the data and the runs; ``scheduler`` must be an
    import path naming a :class:`fedlib.dtfl.TierScheduler` subclass that imports now
    (:func:`fedlib.lab.dtfl.own.check_scheduler`). Raises ValueError / ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import own

    _plumbing(p)
    check_choice("setting", p["setting"], ("iid", "noniid"))
    _setup(p, 2)
    check_num_tiers(p["num_tiers"])
    _changes(p)
    own.check_scheduler(p["scheduler"])


def check_dtfl_6_scaling(p: Mapping) -> None:
    """``dtfl_6_scaling``' parameters (module docstring), before the data and the runs: every K of ``clients_list``
    with its rounds (:func:`fedlib.lab.dtfl.compare.scaling_rounds`; samples_per_client x K against the data's size
    once it is loaded). Raises ValueError / ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import compare as dc

    _plumbing(p)
    dc.check_methods(p["methods"])
    check_int("evals", p["evals"], 1)
    rounds_of, _ = dc.scaling_rounds(p["clients_list"], p["rounds"], p["client_rounds"], p["fraction"],
                                     p["samples_per_client"], float("inf"))   # the data's size: once loaded
    for k, r in rounds_of.items():
        _setup(p, 1, num_clients=k, train_subset=p["samples_per_client"] * k, rounds=r,
               eval_every=dc.eval_interval(r, p["evals"]))
    _authors(p)
    _changes(p)


def check_dtfl_7_privacy(p: Mapping) -> None:
    """``dtfl_7_privacy``' parameters (module docstring), before the data and the runs (the attacker's sizes against
    the data's once it is loaded). Raises ValueError / ParameterTypeError naming the parameter."""
    _plumbing(p, target=False)   # Table 5 has no target accuracy
    _setup(p, 1)
    check_list("alphas", p["alphas"], lambda k, v: check_float(k, v, 0, 1, high_open=True), distinct=True)
    check_int("patches", p["patches"], 1, extra=" (1: no shuffling run)")
    check_int("cut", p["cut"], 1, MAX_TIERS, extra=" (modules md1..md_cut on every client)")
    for name in ("attack_fit", "attack_epochs"):
        check_int(name, p[name], 1)
    check_int("attack_eval", p["attack_eval"], 2)


def check_attack_data(data, train_subset: int, attack_fit: int, attack_eval: int) -> int:
    """``dtfl_7_privacy``'s attacker against the loaded data: ``attack_eval`` test images in 2..(the data's test
    images), and ``attack_fit`` held-out training images after the clients' ``train_subset`` (0: all of them).
    Returns the training images the clients use (``train_subset``, or the data's size for 0): the attacker's
    images are the next ``attack_fit`` (:func:`fedlib.dtfl.privacy.privacy_record`'s ``used``).

    Raises:
        ValueError / ParameterTypeError: naming ``attack_eval`` or ``attack_fit`` and the data's sizes."""
    check_int("attack_eval", attack_eval, 2, len(data.y_test), extra=f" (the data's {len(data.y_test)} test images)")
    used = train_subset or len(data.y_train)
    if used + attack_fit > len(data.y_train):
        raise ValueError(f"attack_fit = {attack_fit} held-out images need train_subset + attack_fit <= "
                         f"{len(data.y_train)}; train_subset is {used}")
    return used


def check_dtfl_explore(p: Mapping) -> str:
    """The notebook's parameters (:func:`explorer`'s names, plus ``export_path``) checked without any work:
    ``dataset`` auto or a known shape, ``model`` a DTFL model, ``width`` in (0, 1], ``num_clients`` 1..100 (the
    slider), ``num_tiers`` 1..7, ``samples_per_client`` >= 1, ``clients_from`` in :data:`SOURCES`, ranges 0 < low
    <= high, ``seed`` >= 0, speeds in [0.01, 10^4] GFLOP/s, ``clients_text`` / ``clients_csv`` not both and every
    row valid, ``export_path`` "" or a file in an existing folder. Returns the dataset (``auto`` resolved). Raises
    ``ValueError`` / ``ParameterTypeError`` naming the parameter (a typed row: the parameter, row and field)."""
    from pathlib import Path

    from torch import nn

    from fedlib.lab.dtfl import experiments as dx
    from fedlib.lab.dtfl.explore import MODELS, SOURCES, MissingFileError, _range, clients_from_csv, clients_from_text
    from fedlib.core.validate import check_str
    from fedlib.dtfl.tiers import check_num_tiers
    dataset = dx.resolve_dataset(p["dataset"])
    if not isinstance(p["model"], nn.Module):
        check_choice("model", p["model"], MODELS)
    check_float("width", p["width"], 0, 1, low_open=True)
    check_int("num_clients", p["num_clients"], 1, 100)
    check_num_tiers(p["num_tiers"])
    check_int("samples_per_client", p["samples_per_client"], 1)
    check_choice("clients_from", p["clients_from"], SOURCES)
    check_int("seed", p["seed"], 0)
    for name in ("cpus_range", "mbps_range", "core_gflops", "server_gflops"):
        _range(name, p[name]) if name.endswith("range") else check_float(name, p[name], 0.01, 1e4)
    for name in ("clients_text", "clients_csv", "export_path"):
        check_str(name, p.get(name, ""), nonempty=False)
    if p["clients_text"].strip() and p["clients_csv"].strip():
        raise ValueError("clients_text and clients_csv: give one of them (or neither: the clients are drawn)")
    for name, parse in (("clients_text", clients_from_text), ("clients_csv", clients_from_csv)):
        try:
            parse(p[name]) if p[name].strip() else None
        except ValueError as exc:                    # the row and field, prefixed by the parameter
            raise exc if isinstance(exc, MissingFileError) else ValueError(f"{name}: {exc}") from None
    if p.get("export_path") and not Path(p["export_path"]).resolve().parent.is_dir():
        raise ValueError(f"export_path: the folder of {p['export_path']!r} does not exist (it is not created)")
    return dataset
