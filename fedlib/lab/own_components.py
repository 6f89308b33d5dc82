"""Components of your own in the lab's notebooks and jobs (a tier scheduler, a benchmark strategy, a client
partition, a baseline, a dataset), named by import path ``"package.module:name"``: one check of the path before any
work (:func:`check_own`), and the component imported again after an edit of its module (:func:`load_own`), so that
what runs is the source its records are keyed by (:func:`fedlib.lab.store.path_key`: its path and the hash of its
module's source)."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Callable

from fedlib.core.components import is_path, resolve
from fedlib.core.validate import ParameterTypeError
from fedlib.lab.code_hash import source_hash

__all__ = ["check_own", "load_own", "reimport"]

#: path -> (the hash of its module's source when :func:`load_own` imported it, the object)
_LOADED: dict[str, tuple[str, Callable]] = {}


def check_own(value, what: str, example: str, builtins: tuple = (), kind=None, note: str = "") -> Callable:
    """The component ``value`` names, if it is an import path ``"package.module:name"`` that imports now; a
    built-in name (or anything but a path) is refused, since the method's own run anyway.

    Args:
        value: the notebook's or job's parameter. what: its name, for the messages. example: a path the message
            shows (``"my_scheduler:StaticTiers"``). builtins: the method's own names, for the messages.
        kind: None (any function or class), ``"function"`` (a function, not a class) or a class the path must
            name a subclass of. note: a clause the first message adds (what the method's own are, the protocol).

    Raises:
        ValueError: ``value`` is not an import path; its module cannot be imported or has no such name (as
            :func:`fedlib.core.components.resolve`). ParameterTypeError: it names no function or class, or not
            the ``kind`` asked for. Each message is one line naming ``what`` and what it allows."""
    if not is_path(value):
        form = "module:Class" if isinstance(kind, type) else "module:function"
        raise ValueError(f"{what} must be an import path '{form}' of your own (a module beside the notebook, e.g. "
                         f"{example!r}{'; ' + note if note else ''}), got {value!r}")
    imported = value.partition(":")[0] in sys.modules
    obj = resolve(value, what, tuple(builtins))
    if not imported and value not in _LOADED:              # imported now, from its source on disk: known
        _LOADED[value] = (source_hash([value.partition(":")[0]]), obj)
    if isinstance(kind, type) and not (isinstance(obj, type) and issubclass(obj, kind)):
        name = f"{kind.__module__.rpartition('.')[0] or kind.__module__}.{kind.__qualname__}"
        raise ParameterTypeError(f"{what} {value!r} must name a subclass of {name}, got {type(obj).__name__} {obj!r}")
    if kind == "function" and not inspect.isroutine(obj):
        raise ParameterTypeError(f"{what} {value!r} must name a function, got {type(obj).__name__} {obj!r}")
    return obj


def load_own(path: str, what: str, builtins: tuple = ()) -> tuple[Callable, str]:
    """``(obj, code)``: the object ``path`` names and ``code``, the hash of its module's source
    (:func:`fedlib.lab.code_hash.source_hash`) that this object was imported from: imported again when the module
    was edited since this function last loaded it, and on its first call for a module that something else imported
    earlier in this process (which source that import read cannot be told), so that a record keyed by ``code`` is
    computed by that source. The module is replaced in ``sys.modules``: the method layer, which resolves the same
    path (:func:`fedlib.core.components.resolve`), then runs the new version too.

    Raises:
        as :func:`fedlib.core.components.resolve` (naming ``what``)."""
    module = path.partition(":")[0]
    imported = module in sys.modules
    obj = resolve(path, what, tuple(builtins))
    code = source_hash([module])
    known = _LOADED.get(path)
    if (known is None and imported) or (known is not None and known[0] != code):
        obj = reimport(path, what, builtins)              # edited since this process imported it, or not known
    _LOADED[path] = (code, obj)
    return obj, code


def reimport(path: str, what: str, builtins: tuple = ()) -> Callable:
    """The object ``path`` names, its module imported anew (its cached bytecode dropped first: an edit within the
    same second keeping the file's size would otherwise read the old bytecode).

    Raises:
        as :func:`fedlib.core.components.resolve` (naming ``what``)."""
    module = path.partition(":")[0]
    spec = importlib.util.find_spec(module)
    if spec is not None and spec.origin and spec.origin.endswith(".py"):
        try:
            Path(importlib.util.cache_from_source(spec.origin)).unlink(missing_ok=True)
        except OSError:                                   # a read-only folder: Python checks the time stamp
            pass
    sys.modules.pop(module, None)
    importlib.invalidate_caches()
    return resolve(path, what, tuple(builtins))
