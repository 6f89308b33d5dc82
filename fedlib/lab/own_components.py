"""Components of your own in the lab's notebooks and jobs (a tier scheduler, a benchmark strategy, a client
partition, a baseline, a dataset), named by import path ``"package.module:name"``: one check of the path before any
work (:func:`check_own`), and the component imported again after an edit of its module (:func:`load_own`), so that
what runs is the source its records are keyed by (:func:`fedlib.lab.store.path_key`: its path and the hash of its
module's source).

Two files of the same module name (``my_baseline.py`` beside two notebooks, or in two test folders) met in one
process: Python's ``sys.modules`` holds the one imported first, and an import path names a module, not a file, so
the other folder's call ran the first file's code, silently (and a module imported by something else was keyed by
the first file's source while the second ran). Here the held module is compared with the file the current
``sys.path`` imports now (:func:`follow_path`); when they differ, the held one is dropped and the file of now
imported, keyed by its own source. Chosen over refusing: the file that ``sys.path`` names now is what the caller
means and what a fresh process (a worker, a rerun) imports, so this process computes the record a fresh one would,
under the same key; a refusal would fail a correct notebook or test because of what ran before it in the same
process (a test order, a kernel that ran another notebook), with no remedy but a restart or a rename. What it
costs: the other folder's module leaves ``sys.modules`` (a function already taken from it keeps running its own
code; its next load through here switches back, keyed by its source)."""
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

__all__ = ["check_own", "follow_path", "load_own", "reimport"]

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
    follow_path(value.partition(":")[0])
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
    computed by that source. A module held from another file than the one the current ``sys.path`` imports is
    dropped first (:func:`follow_path`). The module is replaced in ``sys.modules``: the method layer, which resolves
    the same path (:func:`fedlib.core.components.resolve`), then runs the new version too.

    Raises:
        as :func:`fedlib.core.components.resolve` (naming ``what``)."""
    module = path.partition(":")[0]
    follow_path(module)
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
    follow_path(module)
    spec = importlib.util.find_spec(module)
    if spec is not None and spec.origin and spec.origin.endswith(".py"):
        try:
            Path(importlib.util.cache_from_source(spec.origin)).unlink(missing_ok=True)
        except OSError:                                   # a read-only folder: Python checks the time stamp
            pass
    sys.modules.pop(module, None)
    importlib.invalidate_caches()
    return resolve(path, what, tuple(builtins))


def _spec_now(module: str):
    """The spec the import system finds for ``module`` from the current ``sys.path`` (each finder of
    ``sys.meta_path`` in turn, each parent package's folders as the current path gives them), not looking at
    ``sys.modules``; ``None`` when nothing is found."""
    search = None
    spec = None
    for name in _prefixes(module):
        if spec is not None and search is None:            # a parent that is a module, not a package
            return None
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, search, None) if find is not None else None
            if spec is not None:
                break
        if spec is None:
            return None
        search = spec.submodule_search_locations
    return spec


def _prefixes(module: str) -> list[str]:
    """``"a.b.c"`` -> ``["a", "a.b", "a.b.c"]``."""
    parts = module.split(".")
    return [".".join(parts[:i + 1]) for i in range(len(parts))]


def _below(module: str, name: str) -> bool:
    """Whether ``module`` is ``name`` or inside package ``name``."""
    return module == name or module.startswith(name + ".")


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file (links and ``..`` resolved)."""
    return Path(a).resolve() == Path(b).resolve()


def follow_path(module: str) -> tuple[str, str] | None:
    """Make ``sys.modules`` hold ``module`` from the file the current ``sys.path`` imports: if it (or a parent
    package) is held from another file, that module and everything below it leave ``sys.modules``, the paths
    loaded from it are forgotten (:func:`load_own`) and the file list of :func:`fedlib.lab.code_hash.source_hash`
    is cleared, so that the next import reads the file of now and the key hashes it (module docstring: why this
    rather than a refusal). Nothing is done for a module not held, or held without a file (a namespace package),
    or that the current path does not find (the held one then runs, as Python's import gives it).

    Returns:
        ``(held file, file of now)`` when it dropped a module held from another file, else ``None``."""
    for name in _prefixes(module):
        held = getattr(sys.modules.get(name), "__file__", None)
        if held is None:
            return None
        spec = _spec_now(name)
        now = getattr(spec, "origin", None)
        if now is None or not Path(now).is_file():
            return None
        if not _same_file(held, now):
            for gone in [k for k in sys.modules if _below(k, name)]:
                sys.modules.pop(gone)
            for path in [p for p in _LOADED if _below(p.partition(":")[0], name)]:
                _LOADED.pop(path)
            source_hash.cache_clear()
            importlib.invalidate_caches()
            return held, now
    return None
