"""Components of your own, named by import path ``"package.module:name"`` where a method takes one of its own
names (DTFL's tier scheduler, HASFL's benchmark strategy): the path travels in a job, so every worker (a process
pool, a Dask worker) imports the component itself."""
from __future__ import annotations

import importlib
import inspect
from typing import Callable

import numpy as np

from .validate import ParameterTypeError


def is_path(name) -> bool:
    """Whether ``name`` names a component by import path (a string holding ``":"``), not a built-in name."""
    return isinstance(name, str) and ":" in name


def resolve(path: str, what: str, builtins: tuple = ()) -> Callable:
    """The object ``path`` = ``"package.module:name"`` names (``name`` may be dotted: ``"mod:Class.method"``),
    imported now; a function or class given itself is returned as it is.

    ``what``: the parameter's name, for the messages; ``builtins``: the method's own names, for the messages.
    Raises (naming ``what`` and the path): ParameterTypeError (neither a string nor callable; names no function
    or class), ValueError (not ``"module:name"``; the module cannot be imported, its error quoted; no such name).
    """
    if callable(path) and not isinstance(path, str):   # the component itself (in this process only)
        return path
    if not isinstance(path, str):
        raise ParameterTypeError(f"{what} must be a name, an import path 'package.module:name' or a function or "
                                 f"class, got {type(path).__name__} {path!r}")
    mod_name, sep, attr = path.partition(":")
    if not sep or not mod_name or not attr or ":" in attr:
        names = f"one of {list(builtins)} or " if builtins else ""
        raise ValueError(f"{what} must be {names}an import path 'package.module:name', got {path!r}")
    try:
        obj = importlib.import_module(mod_name)
    except Exception as exc:  # noqa: BLE001  (any failure of the user's module: quoted, named)
        raise ValueError(f"{what} = {path!r}: cannot import module {mod_name!r} ({type(exc).__name__}: {exc}); make "
                         f"it importable in every worker (a module on the Python path, or a package)") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{what} = {path!r}: module {mod_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ParameterTypeError(f"{what} = {path!r} must name a function or class, got {type(obj).__name__}")
    return obj


def check_output(who: str, what: str, value, n: int, low: int, high: int | None = None) -> np.ndarray:
    """A component's ``[n]`` integers ``what`` (each >= ``low``, <= ``high`` when given) as int64, else
    ValueError naming the component ``who``, ``n`` and the range."""
    a = np.asarray(value)
    if (a.shape != (n,) or not np.issubdtype(a.dtype, np.integer) or a.min() < low
            or (high is not None and a.max() > high)):
        allowed = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{who} must give {what} as {n} integers {allowed}, got {a.tolist()!r} (dtype {a.dtype})")
    return a.astype(np.int64)


class ComponentError(ValueError):
    """A component of your own raised an error: the message names the component (its role and import path) and
    the error it raised; the original exception is the ``__cause__``. A ``ValueError``, as a dataset of your own
    that failed to load was before."""


def call(fn: Callable, who: str, params: str, *args):
    """``fn(*args)`` for a component of your own, its signature bound to ``args`` before it runs
    (:func:`inspect.signature` ``.bind``) and anything it raises wrapped with its name.

    Args:
        fn: the component (a function, class or bound method). who: its role and path, for the messages
            (``"partition 'my_cells:by_label'"``). params: the contract's parameters, for the messages
            (``"(labels, num_clients, num_cells, rng)"``). args: the positional arguments the method passes.

    Raises:
        ParameterTypeError: ``fn`` cannot take ``args`` (its signature and the contract both named), before it
            runs. ComponentError: ``fn`` raised (``"<who> raised IndexError: ..."``, the original as the cause).
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):                       # no signature to read (a builtin): called as it is
        signature = None
    if signature is not None:
        try:
            signature.bind(*args)
        except TypeError as exc:
            raise ParameterTypeError(f"{who} must take {params}; its signature is {signature} ({exc})") from None
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001  (any failure of the user's component: named, the original kept)
        raise ComponentError(f"{who} raised {type(exc).__name__}: {exc}") from exc
