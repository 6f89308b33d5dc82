"""The hash of what method modules do (:func:`source_hash`): each file's syntax tree without docstrings, comments,
layout or file names. The result store keys every record by it (:mod:`fedlib.lab.store`); components and datasets
of your own are keyed by the hash of their module's source (:mod:`fedlib.lab.own_components`,
:mod:`fedlib.lab.datasets`)."""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Sequence

from fedlib.core.validate import ParameterTypeError


def _strip_docstrings(node: ast.AST) -> ast.AST:
    """``node`` with every statement that is a bare string constant removed (docstrings of modules, classes and
    functions, and attribute docstrings): such a statement never runs anything."""
    for sub in ast.walk(node):
        for field, value in ast.iter_fields(sub):
            if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
                kept = [v for v in value if not (isinstance(v, ast.Expr) and isinstance(v.value, ast.Constant)
                                                 and isinstance(v.value.value, str))]
                setattr(sub, field, kept)
    return node


def _dump(node) -> str:
    """A serialisation of a syntax tree that Python versions agree on: each node's class and fields, leaving out
    fields that are ``None`` or empty (the ones newer Pythons add, such as ``type_params``, are empty in code
    that does not use them) and every position."""
    if isinstance(node, ast.AST):
        fields = (f"{name}={_dump(value)}" for name, value in ast.iter_fields(node) if value is not None and value != [])
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return "[" + ",".join(_dump(v) for v in node) + "]"
    return repr(node)


@functools.lru_cache(maxsize=4096)
def _tree_digest(source: bytes) -> str | None:
    tree = _strip_docstrings(ast.parse(source))
    return hashlib.sha256(_dump(tree).encode()).hexdigest() if tree.body else None


def _file_digest(path: Path) -> str | None:
    """SHA-256 of ``path``'s syntax tree without docstrings, or ``None`` for a file that holds nothing else (read
    anew on each call; the digest of identical bytes is cached)."""
    try:
        return _tree_digest(path.read_bytes())
    except SyntaxError as err:
        raise ValueError(f"code: {path} is not valid Python: {err}") from None


@functools.lru_cache(maxsize=None)
def _module_files(name: str) -> tuple[Path, ...]:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None and not spec.submodule_search_locations:
        raise ValueError(f"code: no importable module or package named {name!r}")
    if spec.submodule_search_locations:                    # a package: every .py file below its folder but its
        root = Path(next(iter(spec.submodule_search_locations)))   # command line (__main__.py, which no import runs)
        return tuple(sorted(p.resolve() for p in root.rglob("*.py")
                            if "__pycache__" not in p.parts and p.name != "__main__.py"))
    return (Path(spec.origin).resolve(),)


def _files_run(name: str) -> tuple[Path, ...]:
    """:func:`_module_files` of ``name``, checked against the module this process holds under that name: when the
    cached list does not hold its file (a module of the same name from another folder, imported since the list was
    made), the list is made again, so that the hash is of the source that runs (issue 70, item 1)."""
    files = _module_files(name)
    held = getattr(sys.modules.get(name), "__file__", None)
    if held is not None and Path(held).resolve() not in files:
        _module_files.cache_clear()
        files = _module_files(name)
    return files


def source_hash(modules: Sequence[str]) -> str:
    """SHA-256 (hex, 16 chars) of what the named importable modules or packages do (a package: every ``*.py``
    file below its folder but a ``__main__.py``, its command line): each file's syntax tree with docstrings removed (comments and layout are not in a
    syntax tree), and no file or module names, so that editing a docstring, a comment or the layout, or moving a
    file, keeps the hash, while any change of a name, a constant, an operator or an import changes it. A file
    named by two entries counts once; a file holding only a docstring counts as none. Each call reads the files
    again (an edit in a running process is seen); the list of a package's files is cached per process: call
    ``source_hash.cache_clear()`` after adding or removing a file in a running process.

    Raises:
        ValueError: ``modules`` is empty, names a module that cannot be found, or a file is not valid Python.
        TypeError: ``modules`` is a string or holds a non-string.
    """
    if isinstance(modules, str) or not all(isinstance(m, str) for m in modules):
        raise ParameterTypeError(f"code must be a sequence of module names, got {modules!r}")
    if not modules:
        raise ValueError("code must name at least one module")
    files = {f for m in set(modules) for f in _files_run(m)}
    digests = sorted(d for d in map(_file_digest, files) if d is not None)
    return hashlib.sha256("".join(digests).encode()).hexdigest()[:16]


source_hash.cache_clear = _module_files.cache_clear  # type: ignore[attr-defined]
