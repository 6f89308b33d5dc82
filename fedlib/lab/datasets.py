"""Datasets of your own, named by import path ``"package.module:function"`` wherever a paper's runs take a dataset
name (DTFL's ``Setup(dataset=...)``, HIST's ``HistConfig(dataset=...)`` after :func:`use_dataset`, HASFL's
settings): the path travels in every job, so each worker (a spawned process, a Dask worker) imports and loads the
dataset itself.

The function takes no arguments and returns a :class:`fedlib.data.TensorDataset`:

- ``x_train [n_train, C, S, S]`` and ``x_test [n_test, C, S, S]`` float32 (square images, normalised as you
  like; every value finite), ``n_train``, ``n_test`` >= 1;
- ``y_train [n_train]``, ``y_test [n_test]`` int64 labels in ``0..len(classes) - 1``;
- ``classes``: the class names (at least 2); ``source``: free text for provenance; ``name`` is replaced by the
  path (the name the runs' configs and records carry).

:func:`use_dataset` loads it once per process and per version of its module, checks it (a wrong shape, dtype or
label refused naming the path, before any work) and registers it under its path in
:data:`fedlib.data.DATASETS`, :data:`fedlib.data.DATASET_SHAPES` (``(C, S, classes)``, from which the models are
built) and ``fedlib.data.datasets.DATASET_KEYWORDS`` (none), so that the methods' own checks and
``load_dataset(path)`` accept it in this process.

Keys: a record computed on a dataset of your own carries ``{"path": path, "code": <hash of its module's
source>}`` under ``"own_dataset"`` in its config (:func:`dataset_key`); a record of one dataset is never returned
for another, and editing the module computes new records of that dataset only (the built-in datasets' keys are
unchanged). The key covers the source of the module the path names (as :func:`fedlib.lab.code_hash.source_hash`
hashes it: docstrings, comments and layout aside), not modules it imports nor files it reads: put a version in
that module (a constant) when those change. In a running process, an edit of the module is seen at the next
:func:`use_dataset` (the module is imported again) once the dataset was loaded before the edit.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import torch

from fedlib.core.components import is_path, resolve
from fedlib.core.validate import ParameterTypeError, check_choice
from fedlib.data import DATASET_SHAPES, TensorDataset
from fedlib.data.datasets import DATASET_KEYWORDS, DATASETS
from fedlib.lab.own_components import follow_path, reimport
from fedlib.lab.code_hash import source_hash

#: the datasets fedlib ships, for the messages
BUILT_IN = tuple(DATASETS)
#: path -> (source hash of its module when loaded, the checked dataset)
_LOADED: dict[str, tuple[str, TensorDataset]] = {}
#: (path, source hash, model, width, shape) that :func:`check_fits` passed
_FITTED: set = set()
#: called after a dataset of your own changed its shape (caches of anything built from the shape: time models)
_ON_RESHAPE: list[Callable[[], None]] = []


def on_reshape(clear: Callable[[], None]) -> Callable[[], None]:
    """Have ``clear()`` called whenever a dataset of your own is loaded again with another ``(C, S, classes)``
    (a cache of models or costs built from :data:`fedlib.data.DATASET_SHAPES`); returns ``clear``."""
    _ON_RESHAPE.append(clear)
    return clear


def use_dataset(path: str) -> TensorDataset:
    """The dataset of your own named ``path`` = ``"package.module:function"`` (module docstring), loaded, checked
    and registered under ``path``; loaded again when its module's source changed since (the module re-imported).

    It is loaded twice at its first load (and after each edit) and refused if the two differ: a record keyed by
    the path and source must hold one dataset. A module of that name held from another file than the one the
    current ``sys.path`` imports (a notebook in another folder, earlier in the process) is dropped first and the
    file of now loaded (:func:`fedlib.lab.own_components.follow_path`).

    Raises (each naming the path): ValueError (not an import path; the module cannot be imported; the function
    raised, its error quoted; two loads differ; tensors of the wrong shape, dtype or size, labels outside the classes),
    ParameterTypeError (it names no function, or returns something other than a ``fedlib.data.TensorDataset``).
    """
    if not is_path(path):
        raise ValueError(f"dataset must be one of {list(BUILT_IN)} or an import path 'package.module:function', "
                         f"got {path!r}")
    module = path.partition(":")[0]
    follow_path(module)                                   # held from another folder's file: the file of now
    loader = resolve(path, "dataset", BUILT_IN)          # refused here, naming it, when not importable
    code = source_hash([module])
    cached = _LOADED.get(path)
    if cached is not None and cached[0] == code:
        return cached[1]
    if cached is not None:                                # its module was edited: import the new version
        loader = reimport(path, "dataset", BUILT_IN)
    try:
        data, again = loader(), loader()                  # twice: a dataset must be the same at every load
    except Exception as exc:  # noqa: BLE001  (any failure of the user's loader: quoted, named)
        raise ValueError(f"dataset = {path!r}: loading it raised {type(exc).__name__}: {exc}") from exc
    shape = check_dataset(path, data)
    check_dataset(path, again)
    differ = [f"{name}_{split}" for split in ("train", "test") for name in ("x", "y")
              if not torch.equal(getattr(data, f"{name}_{split}"), getattr(again, f"{name}_{split}"))]
    if differ:
        raise ValueError(f"dataset = {path!r} is not deterministic: two loads gave different {', '.join(differ)}; "
                         f"draw any random choice from a fixed seed")
    data = dataclasses.replace(data, name=path)           # the name the methods' configs and records carry
    DATASETS[path] = _registered(path)
    DATASET_KEYWORDS[path] = ()
    reshaped = DATASET_SHAPES.get(path, shape) != shape
    DATASET_SHAPES[path] = shape
    _LOADED[path] = (code, data)
    for clear in _ON_RESHAPE if reshaped else ():
        clear()
    return data


def _registered(path: str) -> Callable:
    def load(**kwargs):
        return use_dataset(path)
    return load


def check_dataset(path: str, data) -> tuple[int, int, int]:
    """``data``, returned by the dataset ``path``, checked against the module docstring's contract; returns its
    ``(C, S, classes)``. Raises ParameterTypeError / ValueError naming ``path`` and what is wrong."""
    if not isinstance(data, TensorDataset):
        raise ParameterTypeError(f"dataset = {path!r} must return a fedlib.data.TensorDataset, got "
                                 f"{type(data).__name__}")
    for split in ("train", "test"):
        x = getattr(data, f"x_{split}")
        if x.dim() != 4 or x.shape[2] != x.shape[3] or len(x) < 1:
            raise ValueError(f"dataset = {path!r}: x_{split} must be [n, C, S, S] (square images, n >= 1), got "
                             f"shape {list(x.shape)}")
        if x.dtype != torch.float32:
            raise ValueError(f"dataset = {path!r}: x_{split} must be float32, got {x.dtype}")
        if not bool(torch.isfinite(x).all()):
            raise ValueError(f"dataset = {path!r}: x_{split} holds NaN or infinite values")
    _, ch, size, _ = data.x_train.shape
    return int(ch), int(size), data.num_classes


def dataset_by_name(name: str, builtin: Callable[[str], TensorDataset]) -> TensorDataset:
    """A job's dataset: :func:`use_dataset` for an import path (each worker loads yours itself), else
    ``builtin(name)`` (a paper's cached loader of the built-in datasets)."""
    return use_dataset(name) if is_path(name) else builtin(name)


def check_dataset_name(name) -> str:
    """A notebook's ``dataset`` parameter: a built-in name of :data:`fedlib.data.DATASETS`, or an import path
    (:func:`use_dataset`: loaded, checked and registered now, before any run). Returns ``name``.

    Raises:
        ValueError / ParameterTypeError: an unknown name, or a dataset of your own refused (naming it)."""
    if is_path(name):
        use_dataset(name)
        return name
    return check_choice("dataset", name, BUILT_IN)


def dataset_key(name: str) -> dict:
    """What a record of dataset ``name`` adds to its config: ``{}`` for a built-in dataset (the keys of every
    record computed before datasets of your own existed), ``{"own_dataset": {"path": name, "code": <hash of its
    module's source>}}`` for yours (loaded with :func:`use_dataset` if it is not yet)."""
    if not is_path(name):
        return {}
    use_dataset(name)
    return {"own_dataset": {"path": name, "code": _LOADED[name][0]}}


def check_fits(path: str, data: TensorDataset, model: str, build: Callable[..., torch.nn.Module],
               width: float = 1.0) -> None:
    """One forward pass of ``build(C, S, classes)`` (the model ``model`` at channel multiplier ``width`` that a run
    trains) on two training images of ``data``, before any training; once per process for a version of the
    dataset's module, a model and a width. Raises ValueError, one line naming ``path``, its input shape and
    ``model``, when the model cannot take them or does not give one score per class."""
    ch, size, classes = check_dataset(path, data)
    done = (path, _LOADED[path][0] if path in _LOADED else None, model, width, (ch, size, classes))
    if done in _FITTED:
        return
    try:
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            net = build(ch, size, classes).eval()
            out = net(data.x_train[:2])
    except Exception as exc:  # noqa: BLE001  (the model's own error, quoted in one line)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"dataset = {path!r}: its images [C, S, S] = [{ch}, {size}, {size}] do not fit model "
                         f"{model} ({first})") from None
    if tuple(out.shape) != (len(data.x_train[:2]), classes):
        raise ValueError(f"dataset = {path!r}: model {model} gives outputs of shape {list(out.shape)} for its "
                         f"[{ch}, {size}, {size}] images, not one score per class ({classes})")
    _FITTED.add(done)
