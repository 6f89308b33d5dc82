"""The inputs of HASFL's explorer (:mod:`fedlib.lab.hasfl.explore`): the plan's setup read from a committed store
(:func:`setup`), a model of your own (:func:`own_model`, :func:`own_model_setup`) and devices typed or from a CSV
file (:func:`devices_from_text`, :func:`devices_from_csv`). HASFL paper: arXiv:2506.08426.

Units of typed devices: TFLOP/s, Mbit/s, GB (bytes x 10^9), converted to the library's FLOP/s, bit/s and bits.
Choice: typed devices use the same rate to the fed server as to the edge server (Table I lists them together).
"""
from __future__ import annotations

import csv
import dataclasses
import io
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from fedlib.core.validate import ParameterTypeError, check_float, check_str
from fedlib.lab.units import check_plausible
from fedlib.split import EdgeDevices, LayerProfile

#: typed / CSV device columns, in this order, and their units
DEVICE_COLUMNS = ("compute_tflops", "uplink_mbps", "downlink_mbps", "memory_gb")
#: the most devices the explorer takes (its N slider's top): one decision then stays within seconds
MAX_DEVICES = 100
#: upper limits of typed values, refused above (never clamped): memory beyond 1,000 GB puts batch caps of 10^8+
#: samples into the optimiser's exact batch search, which enumerates them (memory and time without bound)
MAX_TYPED = {"memory_gb": 1000.0}
#: each typed column's quantity and unit in :data:`fedlib.lab.units.PLAUSIBLE` (a unit slip is refused by name)
UNITS = {"compute_tflops": ("compute", "TFLOP/s"), "uplink_mbps": ("rate", "Mbit/s"),
         "downlink_mbps": ("rate", "Mbit/s"), "memory_gb": ("memory", "GB")}


@dataclass(frozen=True)
class HasflSetup:
    """What every decision shares: the plan's settings (model, width, γ, I, ε rule), the model's layer profile,
    the pilot record, the calibrated fit (or why there is none), and where each came from."""

    settings: object
    profile: LayerProfile
    pilot: dict
    fit: dict | None
    fit_error: str
    seed: int
    source: str


def setup(profile: str = "converged", dataset: str | None = None, seed: int = 0, store=None) -> HasflSetup:
    """The plan of ``profile`` (``hasfl_4_train_experiments``'s parameters there: first model and width, γ, I, the
    ε rule, and the dataset it names, unless ``dataset`` is given: "auto" would read CIFAR-10 on a machine that has
    it on disk and miss every committed pilot), its pilot record read from the profile's committed result store (``figures/<profile>/store``; never
    trained: a missing record raises, naming the command that computes it; at smoke, which has no committed store,
    the active store is used and the pilot, seconds long, is computed when missing) and the calibration committed at
    ``profile`` (optional: its absence is recorded in ``fit_error``).

    Raises:
        ValueError: unknown profile; a pilot record missing from a committed store."""
    from fedlib.lab.notebooks import notebook_parameters
    from fedlib.lab.params import declared_parameters
    from fedlib.lab.paths import REPO_ROOT, committed_store_dir
    from fedlib.split import model_profile
    from fedlib.data import DATASET_SHAPES
    from fedlib.lab.hasfl.runs import experiments, plan_analysis
    from fedlib.lab.hasfl.runs.training import TrainSettings, pilot

    nb = REPO_ROOT / "notebooks" / "hasfl" / "hasfl_4_train_experiments.ipynb"
    p = dict(declared_parameters(nb), **notebook_parameters(nb, profile))    # the plan's parameters at the profile
    dataset = experiments.resolve_dataset(p["dataset"] if dataset is None else dataset, p["models"][0])
    settings = {f.name for f in dataclasses.fields(TrainSettings)} & set(p)     # every one the plan's cell states
    s = TrainSettings(**dict({k: p[k] for k in settings}, model=p["models"][0], width=p["widths"][0], dataset=dataset))
    committed = committed_store_dir(profile)
    if store is None:
        store = experiments.result_store(None if committed is None else str(committed))
    cfg = experiments.constants_config(s.model, s.dataset, s.pilot_steps, s.pilot_lr, s.pilot_batch, s.num_batches,
                                       s.power_iters, seed, s.width, s.interval)
    if committed is not None and not store.has(cfg):
        raise ValueError(f"constants_from = {profile!r}: no pilot record of {s.model} at width {s.width:g} (seed "
                         f"{seed}) in {committed.relative_to(committed.parents[2])}: FEDLIB_COMMIT=1 ./run_all.sh "
                         f"--profile {profile} --only hasfl_4 computes it")
    rec = pilot(store, s, seed)
    try:
        fit, _target = plan_analysis.committed_fit(profile, s.model, s.width)
        fit_error = ""
    except ValueError as err:
        fit, fit_error = None, str(err)
    ch, size, classes = DATASET_SHAPES[s.dataset]
    prof = model_profile(s.model, ch, size, classes, width=s.width)
    return HasflSetup(s, prof, rec, fit, fit_error, seed, f"{s.model} at width {s.width:g} on {s.dataset}, the "
                      f"{profile} plan's pilot constants of seed {seed}" + ("" if committed is None else " (committed store)"))


def own_model_setup(base: HasflSetup, model, name: str = "your model", data=None) -> HasflSetup:
    """``base`` with a model of your own: ``model`` (an ``nn.Sequential`` of cuttable units taking the dataset's
    ``(C, H, W)`` input) profiled by :func:`fedlib.split.profile_model` and its constants estimated by the library's
    pilot (:func:`fedlib.hasfl.bound.estimate.pilot_constants`, the plan's pilot settings, on the real training
    set); no calibration (a fit belongs to the model it was trained on).

    Raises:
        ParameterTypeError: ``model`` not an ``nn.Sequential``. ValueError: as ``profile_model`` /
        ``pilot_constants`` (e.g. the model does not take the dataset's input shape), or its output per sample
        is not one score per class of the dataset (before the pilot)."""
    from torch import nn

    from fedlib.data import load_dataset
    from fedlib.data import DATASET_SHAPES
    from fedlib.split import profile_model
    from fedlib.hasfl.bound.estimate import pilot_constants

    if not isinstance(model, nn.Sequential):
        raise ParameterTypeError(f"model must be an nn.Sequential of cuttable units, got {type(model).__name__}")
    s = base.settings
    ch, size, classes = DATASET_SHAPES[s.dataset]
    input_shape = (ch, size, size)
    try:
        prof = profile_model(model, input_shape, name=name)
    except RuntimeError as err:                    # torch: the model does not take this input
        raise ValueError(f"own_model {name}: it does not take the dataset's input (C, H, W) = {input_shape}: "
                         f"{str(err).splitlines()[0]}") from None
    _check_outputs(model, input_shape, classes, name, s.dataset)
    ds = data if data is not None else load_dataset(s.dataset)
    rec = pilot_constants(model, ds.x_train, ds.y_train, s.pilot_steps, s.pilot_lr, s.pilot_batch, s.num_batches,
                          s.power_iters, base.seed, s.interval)
    return replace(base, profile=prof, pilot=rec, fit=None, fit_error="a calibration belongs to the model it was "
                   "fitted on, not to your model", source=f"{name} ({prof.num_layers} units) on {s.dataset}, its own pilot")


def _check_outputs(model, input_shape: tuple, classes: int, name: str, dataset: str) -> None:
    """Refuse a model whose output per sample is not one score per class (``(classes,)``) before its pilot: a
    model with 3 outputs for 10 classes would otherwise end in torch's cross-entropy ``IndexError``."""
    import copy

    import torch
    with torch.no_grad():
        out = copy.deepcopy(model).eval()(torch.zeros(2, *input_shape))
    if not isinstance(out, torch.Tensor) or tuple(out.shape[1:]) != (classes,):
        got = tuple(out.shape[1:]) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(f"own_model {name}: its last unit outputs {got} per sample; {dataset} has {classes} "
                         f"classes, so it must output ({classes},) (one score per class)")


def own_model(spec: str, in_channels: int, image_size: int, num_classes: int):
    """The model of a ``"module:function"`` factory (:func:`fedlib.core.components.resolve`), called as
    ``function(in_channels, image_size, num_classes)`` (e.g. ``fedlib.split.models:vgg16``); it must return an
    ``nn.Sequential`` of units.

    Raises:
        ValueError: as ``resolve`` (not ``module:function``, the module or function not found); the factory
        raised (its error, named)."""
    from fedlib.core.components import resolve

    factory = resolve(check_str("own_model", spec), "own_model")
    try:
        return factory(in_channels, image_size, num_classes)
    except Exception as err:                       # the user's code: its error, named, as a refusal
        raise ValueError(f"own_model {spec!r}: {spec.partition(':')[2]}({in_channels}, {image_size}, {num_classes}) "
                         f"raised {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}") from None


def devices_from_text(text: str) -> EdgeDevices:
    """Devices typed one per line (or separated by ``;``), ``compute TFLOP/s, uplink Mbit/s, downlink Mbit/s,
    memory GB`` (comma or whitespace separated; a header line naming :data:`DEVICE_COLUMNS` and ``#`` comments
    allowed).

    Returns:
        :class:`fedlib.split.EdgeDevices` in FLOP/s, bit/s and bits; the fed-server links equal the edge links.

    Raises:
        ValueError: no device, a row without 4 values, a value not a finite number > 0 or outside the plausible
        range of its unit (:mod:`fedlib.lab.units`: a unit slip, e.g. FLOP/s typed as TFLOP/s), naming the row and
        the column."""
    check_str("devices", text, nonempty=False)
    rows = []
    lines = [ln.split("#")[0].strip() for ln in text.lstrip("\ufeff").replace(";", "\n").splitlines()]
    for k, line in enumerate(lines, start=1):
        if not line:
            continue
        cells = [c.strip() for c in next(csv.reader(io.StringIO(line.replace("\t", ",")))) if c.strip()]
        if len(cells) == 1:
            cells = cells[0].split()
        if not rows and cells and cells[0].lower() == DEVICE_COLUMNS[0]:
            continue                                           # the header
        if len(cells) != len(DEVICE_COLUMNS):
            raise ValueError(f"devices row {k}: {len(cells)} values, expected {len(DEVICE_COLUMNS)} "
                             f"({', '.join(DEVICE_COLUMNS)}): {line!r}")
        vals = []
        for col, cell in zip(DEVICE_COLUMNS, cells):
            try:
                v = float(cell)
            except ValueError:
                raise ValueError(f"devices row {k}, {col}: not a number: {cell!r}") from None
            where = f"devices row {k}, {col}"
            v = check_plausible(where, check_float(where, v, 0, low_open=True), *UNITS[col])
            vals.append(check_float(where, v, 0, MAX_TYPED.get(col), low_open=True))
        rows.append(vals)
        if len(rows) > MAX_DEVICES:
            raise ValueError(f"devices: more than {MAX_DEVICES} devices (row {k}); the explorer answers within seconds up "
                             f"to {MAX_DEVICES}: for more, call fedlib.hasfl.bcd on a Problem directly")
    if not rows:
        raise ValueError("devices: no device given (one line per device: " + ", ".join(DEVICE_COLUMNS) + ")")
    a = np.array(rows)
    return EdgeDevices(a[:, 0] * 1e12, a[:, 1] * 1e6, a[:, 2] * 1e6, a[:, 1] * 1e6, a[:, 2] * 1e6, a[:, 3] * 8e9)


def devices_from_csv(path) -> EdgeDevices:
    """:func:`devices_from_text` of a CSV file. Raises ``ValueError`` for a missing file (naming it) and as
    :func:`devices_from_text`."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ValueError(f"devices_csv: no such file: {path}")
    try:
        return devices_from_text(p.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError as err:
        raise ValueError(f"devices_csv {p.name}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except ValueError as err:
        raise ValueError(f"devices_csv {p.name}: {err}") from None


def prepare(constants_from: str, seed: int, own_model_spec: str = "", devices: str = "",
            devices_csv: str = "") -> tuple[HasflSetup, str]:
    """The notebook's setup in one call: :func:`setup` of ``constants_from``, with :func:`own_model_setup` of the
    ``module:function`` in ``own_model_spec`` when given, and the typed devices (``devices``, or the text of the
    CSV file ``devices_csv``, checked by :func:`devices_from_text`). Returns ``(setup, devices text)``.

    Raises:
        ValueError: as :func:`setup`, :func:`own_model`, :func:`own_model_setup`, :func:`devices_from_csv`."""
    from fedlib.data import DATASET_SHAPES

    st = setup(constants_from, seed=seed)
    if own_model_spec:
        ch, size, classes = DATASET_SHAPES[st.settings.dataset]
        st = own_model_setup(st, own_model(own_model_spec, ch, size, classes), own_model_spec)
    if devices_csv:
        devices_from_csv(devices_csv)
        devices = Path(devices_csv).expanduser().read_text(encoding="utf-8-sig")
    elif devices:
        devices_from_text(devices)
    return st, devices
