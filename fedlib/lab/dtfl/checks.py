"""The DTFL notebooks' parameters checked together, before any work (data, store, jobs, training).

Every DTFL notebook calls its function here right after :func:`fedlib.lab.notebooks.setup_notebook` (which checks
each parameter's *type* against the parameters cell); these check each parameter's *range*, *choices* and the
*combinations* the runs need, so that no run starts on a value a later cell or a job would refuse. A parameter a
config holds is checked by that config (:class:`fedlib.lab.dtfl.experiments.Setup`, and through it
:class:`fedlib.dtfl.DtflConfig`), built before any work, by the notebook itself or here. Each takes the
notebook's namespace (``globals()``) and raises ``ValueError`` (:class:`fedlib.core.validate.ParameterTypeError`
for a wrong type) naming the notebook's parameter and what it allows. They compute nothing: the checks are the
library's own (:mod:`fedlib.core.validate`, :class:`fedlib.lab.dtfl.experiments.Setup`,
:func:`fedlib.lab.dtfl.experiments.check_lists`, :mod:`fedlib.lab.dtfl.compare`'s) under the notebook's names.

Ranges (the paper's values, DTFL App. A.3 and Sec. 4, in brackets):

- ``profile``: smoke, quick, converged, paper (checked by ``setup_notebook``).
- ``dataset``: ``auto``, a name of :data:`fedlib.data.DATASET_SHAPES` or a dataset of your own by import path
  ``"module:function"`` (:mod:`fedlib.lab.datasets`, checked and fitted to the model first); ``model`` / ``train_model`` / ``models``
  / the models of ``runs``: :data:`fedlib.dtfl.training.MODELS` [ResNet-56 / 110]; ``dtfl_your_method``'s
  ``model`` also a split model of your own by import path ``"module:function"`` (:func:`check_dtfl_model`: 8 units
  of image-shaped smashed data); ``width``: (0, 1] [1.0].
- ``num_clients``: >= 1 (:class:`fedlib.dtfl.DtflConfig`'s range) [10; Table 5: 20];
  ``clients_list``: distinct K >= 1 [20, 50, 100, 200].
- ``batch_size`` >= 1 [100]; ``lr`` > 0 [1e-3]; ``train_subset``, ``test_subset`` >= 0 (0: all; the data's
  size is checked once it is loaded); ``rounds`` >= 1 (Table 4: >= 0, 0 = from ``client_rounds``);
  ``eval_every``, ``evals`` >= 1.
- ``target_acc``, ``target_acc_noniid``: fractions in (0, 1) [0.8 / 0.7].
- ``seeds``: distinct integers >= 0.
- ``num_tiers``, ``table2_tiers``, ``tiers_list[i]``: M in 1..7 (Table 11: tiers of the 8-module model)
  [6 / 7]; ``static_tiers[i]``: distinct tiers in 1..max(``tiers_list``) (may be empty); ``scale_model``: a model
  of :data:`fedlib.dtfl.training.MODELS` [ResNet-110]; ``scale_rounds`` >= 1 [300]; ``scale_change_every`` >= 0 [20]
  (the paper-scale time model, no training); ``cases``: distinct of :data:`fedlib.dtfl.timing.CASES`; ``settings``: distinct of iid, noniid.
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

import re
from pathlib import Path
from typing import Mapping

from fedlib.core.seeding import resolve_device
from fedlib.core.validate import check_choice, check_float, check_int, check_list, check_str
from fedlib.dtfl.tiers import MAX_TIERS, check_num_tiers
from fedlib.dtfl.timing import CASES, check_resources
from fedlib.dtfl.training import MODELS
from fedlib.lab.units import check_plausible

__all__ = ["check_dtfl_1_profiles", "check_dtfl_2_table1", "check_dtfl_3_fig3", "check_dtfl_4_training",
           "check_dtfl_5_baselines", "check_dtfl_6_scaling", "check_dtfl_7_privacy", "check_dtfl_explore",
           "check_dtfl_your_method", "check_dtfl_model", "check_scheduler"]


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


def _setup(p: Mapping, **per_run) -> None:
    """The :class:`fedlib.lab.dtfl.experiments.Setup` of a run built from the notebook's parameters, for a notebook
    that builds its own only after loading the data: the Setup checks its fields, and
    :class:`fedlib.dtfl.DtflConfig` the training's, under the notebook's names. ``per_run``: the fields a notebook
    sets per run (``model`` of ``runs``; Table 4's K, subset, rounds)."""
    from fedlib.lab.dtfl import experiments as dx

    dx.Setup(dataset=dx.resolve_dataset(p["dataset"]), **{**{n: p[n] for n in SETUP_FIELDS if n in p}, **per_run})


def _changes(p: Mapping) -> None:
    check_int("change_every", p["change_every"], 0, extra=" (0: never)")
    check_float("change_frac", p["change_frac"], 0, 1)


def _authors(p: Mapping) -> None:
    check_num_tiers(p["num_tiers"])
    if p["authors_scheduler"] and p["num_tiers"] != MAX_TIERS:
        raise ValueError(f"authors_scheduler = True runs the authors' scheduler, which needs num_tiers = {MAX_TIERS} "
                         f"(fedlib.lab.dtfl.experiments.system_run), got num_tiers = {p['num_tiers']}")


def check_dtfl_1_profiles(p: Mapping) -> None:
    """``dtfl_1_profiles``' parameters (module docstring), before any profile: every name in ``models`` and
    ``train_model`` a DTFL model (:data:`fedlib.dtfl.training.MODELS`), ``width`` in (0, 1], ``table2_tiers`` a valid
    M (1..7), ``dataset`` known. Raises ValueError / ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import experiments as dx

    check_list("models", p["models"], lambda k, v: check_choice(k, v, MODELS), distinct=True)
    check_choice("train_model", p["train_model"], MODELS)
    check_float("width", p["width"], 0, 1, low_open=True)
    check_num_tiers(p["table2_tiers"], "table2_tiers")
    dx.resolve_dataset(p["dataset"])
    check_int("threads", p["threads"], 0, extra=" (0: torch's default)")


def check_dtfl_2_table1(p: Mapping) -> None:
    """``dtfl_2_table1``' parameters (module docstring), before the data and the runs. Raises ValueError /
    ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import experiments as dx

    _plumbing(p)
    check_num_tiers(p["num_tiers"])
    dx.check_lists(cases=p["cases"])
    _scale(p)


def _scale(p: Mapping) -> None:
    check_choice("scale_model", p["scale_model"], tuple(MODELS))
    check_int("scale_rounds", p["scale_rounds"], 1)


def check_dtfl_3_fig3(p: Mapping) -> None:
    """``dtfl_3_fig3``' parameters (module docstring), before the data and the runs. Raises ValueError /
    ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import experiments as dx

    _plumbing(p)
    dx.check_lists(cases=p["cases"], tiers_list=p["tiers_list"])
    m_top = max(p["tiers_list"])
    check_list("static_tiers", p["static_tiers"],
               lambda k, v: check_int(k, v, 1, m_top, extra=f" (a tier of the largest M in tiers_list, {m_top})"),
               min_len=0, distinct=True)
    _scale(p)
    check_int("scale_change_every", p["scale_change_every"], 0, extra=" (0: never)")
    _changes(p)


def check_dtfl_4_training(p: Mapping) -> None:
    """``dtfl_4_training``' parameters that no config holds (module docstring), before the data and the runs; the
    training's and the time model's are checked by the notebook's :class:`fedlib.lab.dtfl.experiments.Setup`, built
    before the data. Raises ValueError / ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import experiments as dx

    _plumbing(p)
    check_num_tiers(p["num_tiers"])
    dx.check_lists(settings=p["settings"])
    _changes(p)


def check_dtfl_5_baselines(p: Mapping) -> None:
    """``dtfl_5_baselines``' parameters (module docstring), before the data and the runs: every model of ``runs``
    with the shared settings; ``methods`` names the paper's methods or baselines of your own by import path
    (:func:`fedlib.lab.dtfl.compare.check_methods`). Raises ValueError / ParameterTypeError naming the parameter."""
    from fedlib.lab.dtfl import compare as dc

    _plumbing(p)
    _fraction("target_acc_noniid", p["target_acc_noniid"])
    dc.parse_runs(p["runs"])
    dc.check_methods(p["methods"], own=True)          # a baseline of your own by import path too
    _authors(p)
    _changes(p)


def check_dtfl_your_method(p: Mapping) -> None:
    """``dtfl_your_method``'s parameters (module docstring), before the data and the runs; ``model`` a DTFL model
    or a split model of your own by import path, built and checked to be DTFL's (:func:`check_dtfl_model`);
    ``scheduler`` must be an import path naming a :class:`fedlib.dtfl.TierScheduler` subclass that imports now
    (:func:`check_scheduler`); ``baseline`` ``""`` or an import path naming a baseline of your
    own (:func:`fedlib.lab.dtfl.compare.check_baseline`). Raises ValueError / ParameterTypeError naming the
    parameter."""
    _plumbing(p)
    check_choice("setting", p["setting"], ("iid", "noniid"))
    check_num_tiers(p["num_tiers"])
    _changes(p)
    check_dtfl_model(p["model"], p["dataset"], p["width"])
    check_scheduler(p["scheduler"])
    if p["baseline"] != "":                             # an aggregation rule of your own beside FedAvg
        from fedlib.lab.dtfl.compare import check_baseline
        check_baseline(p["baseline"], "baseline")


def check_dtfl_model(model, dataset, width) -> str:
    """``model`` if it is a DTFL model (:data:`fedlib.dtfl.training.MODELS`) or an import path
    ``"package.module:function"`` of a split model of your own that imports now and, built at ``dataset``'s input
    shape and ``width``, gives DTFL's 8 units md1..md8 with ``[B, C, H, W]`` smashed data after md1..md7
    (:func:`fedlib.dtfl.run.dtfl_model`, the check training makes; one 2-sample forward pass), so that a model the
    runs would refuse is refused before the data, the time model and the runs. For a model of your own
    ``width`` is checked here first, since the model is built at it before the notebook's
    :class:`fedlib.lab.dtfl.experiments.Setup` (which checks it for every model); ``dataset`` is resolved as Setup
    resolves it, and a dataset of your own is loaded here for its shape (:func:`fedlib.lab.datasets.use_dataset`,
    cached for the notebook's own load).

    Raises:
        ValueError / ParameterTypeError: one line naming ``model`` (its path for one of yours) and what it must be.
        ComponentError: the factory raised (naming its path)."""
    from fedlib.core.components import is_path
    from fedlib.data import DATASET_SHAPES
    from fedlib.dtfl.run import dtfl_model
    from fedlib.lab import datasets as own_data
    from fedlib.lab.dtfl import experiments as dx
    from fedlib.split import SplitConfig
    from fedlib.split.models import check_model

    check_model(model, MODELS)
    if not is_path(model):
        return model
    check_float("width", width, 0, 1, low_open=True)
    dataset = dx.resolve_dataset(dataset)
    if is_path(dataset):
        own_data.use_dataset(dataset)                      # registers its shape
    ch, size, classes = DATASET_SHAPES[dataset]
    dtfl_model(SplitConfig(model=model, width=width, num_devices=1, batch_sizes=(1,), cuts=(1,)),
               (ch, size, size), classes)
    return model


def check_scheduler(scheduler) -> str:
    """``scheduler`` if it is an import path ``"package.module:Class"`` that imports now and names a
    :class:`fedlib.dtfl.TierScheduler` subclass (overriding ``assign``); a built-in name is refused (DTFL's own
    scheduler runs anyway): :func:`fedlib.lab.own_components.check_own`.

    Raises:
        ValueError / ParameterTypeError: naming ``scheduler``, what it allows and why it failed."""
    from fedlib.dtfl import TierScheduler
    from fedlib.dtfl.scheduler import SCHEDULERS
    from fedlib.lab.own_components import check_own

    check_own(scheduler, "scheduler", "my_scheduler:StaticTiers", tuple(SCHEDULERS), TierScheduler,
              f"DTFL's own {list(SCHEDULERS)} runs anyway")
    return scheduler


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
        _setup(p, num_clients=k, train_subset=p["samples_per_client"] * k, rounds=r,
               eval_every=dc.eval_interval(r, p["evals"]))
    _authors(p)
    _scale(p)
    check_int("scale_change_every", p["scale_change_every"], 0, extra=" (0: never)")
    _changes(p)


def check_dtfl_7_privacy(p: Mapping) -> None:
    """``dtfl_7_privacy``' parameters (module docstring), before the data and the runs (the attacker's sizes against
    the data's once it is loaded). Raises ValueError / ParameterTypeError naming the parameter."""
    _plumbing(p, target=False)   # Table 5 has no target accuracy
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
    from torch import nn

    from fedlib.lab.dtfl import experiments as dx
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
        check_range(name, p[name]) if name.endswith("range") else check_float(name, p[name], 0.01, 1e4)
    for name in ("clients_text", "clients_csv", "export_path"):
        check_str(name, p.get(name, ""), nonempty=False)
    if p["clients_text"].strip() and p["clients_csv"].strip():
        raise ValueError("clients_text and clients_csv: give one of them (or neither: the clients are drawn)")
    for name, parse in (("clients_text", clients_from_text), ("clients_csv", clients_from_csv)):
        try:
            parse(p[name]) if p[name].strip() else None
        except ValueError as exc:                    # the row and field, prefixed by the parameter
            raise exc if isinstance(exc, MissingFileError) else ValueError(f"{name}: {exc}") from None
    from fedlib.lab.explore import check_export_path
    check_export_path(p.get("export_path", ""))      # a file in an existing folder, as the export writes it
    return dataset


# -- the DTFL explorer's typed clients and ranges (checked here, before any work; parsed for the explorer) ----

SOURCES = ("ranges", *CASES)
FIELDS = ("cpus", "mbps", "samples")
#: each typed field's and speed's quantity and unit in :data:`fedlib.lab.units.PLAUSIBLE` (a unit slip is refused)
UNITS = {"cpus": ("cpus", "CPUs"), "mbps": ("rate", "Mbit/s"), "samples": ("samples", "samples"),
         "cpus_range": ("cpus", "CPUs"), "mbps_range": ("rate", "Mbit/s"), "core_gflops": ("compute", "GFLOP/s"),
         "server_gflops": ("compute", "GFLOP/s"), "samples_per_client": ("samples", "samples")}
MAX_CLIENTS = 100  # the K slider's top; the views (a row per client) stay within the update target up to here


#: the hint beside a row whose commas may be decimal commas
DECIMALS = "a decimal is written with a point (1.5, not 1,5)"


def clients_from_text(text: str) -> tuple[list, list, list | None]:
    """Clients typed one per line, ``cpus, mbps[, samples]`` (commas, semicolons or spaces; ``#`` starts a comment;
    an optional first header line names the columns, in any order: ``cpus, mbps, samples``).

    Returns ``(cpus [K], mbps [K], samples [K] or None)``: CPUs (> 0), link speed in Mbit/s (> 0), N_k (integers
    >= 1; None when no row gives them). Raises ``ValueError`` / ``ParameterTypeError`` naming the row (its line,
    header included) and the field: not a number, NaN, inf, <= 0, samples not an integer >= 1 or in some rows only,
    a row of the wrong length, an unknown header; no rows at all; a value outside the plausible range of its unit
    (:mod:`fedlib.lab.units`: e.g. a link typed in bit/s where the column is in Mbit/s); a row mixing ``,`` and
    ``;`` (decimal commas, ``1,5; 30``: the hint says so, as it does beside a wrong count of comma-separated values).
    """
    check_str("clients", text, nonempty=False)
    cols, out = None, {f: [] for f in FIELDS}
    for n, raw in enumerate(text.lstrip("\ufeff").replace("\u2212", "-").splitlines(), 1):   # a BOM; a unicode minus
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "," in line and ";" in line:                   # "1,5; 30": a decimal comma read as a separator
            raise ValueError(f"row {n}: mixes ',' and ';' ({line!r}): separate the values with one kind; {DECIMALS}")
        cells = [c.strip() for c in re.split(r"[,;]", line)] if re.search(r"[,;]", line) else line.split()
        if cols is None and not out["cpus"] and cells[0] and not re.match(r"^[-+.\d]|^(nan|inf)", cells[0].lower()):
            cols = [{"cpu": "cpus"}.get(c.lower(), c.lower()) for c in cells]
            if sorted(cols) not in (["cpus", "mbps"], ["cpus", "mbps", "samples"]):
                raise ValueError(f"row {n}: the header must name the columns cpus, mbps[, samples], got {line!r}")
            continue
        names = cols or FIELDS[:len(cells)]
        if len(cells) != len(names) or len(cells) not in (2, 3):
            raise ValueError(f"row {n}: expected {', '.join(cols) if cols else 'cpus, mbps[, samples]'}, got "
                             f"{len(cells)} values: {line!r}" + (f"; {DECIMALS}" if "," in line else ""))
        for name, tok in zip(names, cells):
            try:
                v = float(tok)
            except ValueError:
                raise ValueError(f"row {n}, {name}: not a number: {tok!r}") from None
            where = f"row {n}, {name}:"
            v = check_int(where, int(v) if v.is_integer() else v, 1) if name == "samples" else \
                check_float(where, v, 0, low_open=True)
            check_plausible(where[:-1], v, *UNITS[name])      # a unit slip, e.g. bit/s in the Mbit/s column
            out[name].append(v)
        if out["samples"] and len(out["samples"]) != len(out["cpus"]):
            raise ValueError(f"row {n}, samples: give samples in every row or in none")
        if len(out["cpus"]) > MAX_CLIENTS:
            raise ValueError(f"clients: more than {MAX_CLIENTS} clients (row {n}), the explorer's limit")
    if not out["cpus"]:
        raise ValueError("clients: no client rows (one line per client: cpus, mbps[, samples])")
    check_resources(out["cpus"], out["mbps"], out["samples"] or 1)
    return out["cpus"], out["mbps"], out["samples"] or None


class MissingFileError(FileNotFoundError, ValueError):
    """A file parameter naming no file: a ``FileNotFoundError`` that is a ``ValueError`` too (a bad parameter)."""


def clients_from_csv(path) -> tuple[list, list, list | None]:
    """:func:`clients_from_text` of a CSV file (UTF-8, a BOM allowed). Raises :class:`MissingFileError` naming
    ``clients_csv`` for a missing file, else as :func:`clients_from_text`."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise MissingFileError(f"clients_csv: no file {p}")
    try:
        return clients_from_text(p.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as err:
        raise ValueError(f"clients_csv {p.name}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def check_range(name: str, value) -> tuple[float, float]:
    """``value`` as ``(low, high)``: two positive numbers, low <= high, each plausible in the unit of ``name``
    (:data:`UNITS`, where it has one). Raises ``ValueError`` / ``ParameterTypeError`` naming ``name``."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ValueError(f"{name} must be (low, high), got {value!r}")
    lo, hi = (check_float(f"{name}[{i}]", v, 0, low_open=True) for i, v in enumerate(value))
    if name in UNITS:
        lo, hi = (check_plausible(f"{name}[{i}]", v, *UNITS[name]) for i, v in enumerate((lo, hi)))
    if lo > hi:
        raise ValueError(f"{name} must have low <= high, got {value!r}")
    return lo, hi
