"""Notebook parameters: a notebook's parameters cell read (:func:`declared_parameters`, :func:`parameter_values`)
and checked (:func:`validate_parameters`). The start of every notebook, :func:`fedlib.lab.notebooks.setup_notebook`,
calls the check after it has given the notebook its profile's values; the notebook's checker
(``fedlib.lab.<paper>.checks.check_<notebook>``) then checks every parameter's range, choices and combinations,
before any work.

:func:`validate_parameters` checks every parameter of the parameters cell (``name: type = value  # comment``)
against its annotation (``int``, ``float`` (an int is accepted), ``str``, ``bool``, ``list``) and fails on a
parameter papermill injected that the parameters cell does not declare -- except, with ``paper`` given, a key
that a sibling notebook of the same paper declares (a paper-level profile file,
``notebooks/profiles/<profile>/<paper>.yaml``, holds the keys of all of the paper's notebooks): it is skipped,
removed from the namespace and named in a note. **Lists given as strings** (``papermill -p seeds "[0, 1]"``
delivers the string ``"[0, 1]"``) are parsed as YAML (``yaml.safe_load``); the result must be a list, else the
parameter is refused; the parsed list replaces the string in the notebook's namespace. A list must be non-empty
unless the parameters cell's default is the empty list or its comment names ``[]`` as a value (``# []: none``, e.g.
``out_of_sample_seeds``), and when
the parameters cell's default is a non-empty list whose items share one type (int, float, str, bool), every item
must have that type (an int item is accepted where the default holds floats). Ranges, choices and
combinations are the notebook's checker's (``fedlib.lab.<paper>.checks``).
"""
from __future__ import annotations

import ast
import functools
import typing
from pathlib import Path
from typing import Any, Mapping

from fedlib.lab import paths
from fedlib.core.validate import ParameterTypeError, _got, _is_int, _is_real, check_bool, check_float

__all__ = ["validate_parameters", "declared_parameters", "parameter_values", "sibling_parameters"]

PAPERMILL_COMMENT = "# Parameters"
"""First line of the cell papermill injects (tag ``injected-parameters``) with the parameters it was given."""

NOTEBOOK_DIR = paths.REPO_ROOT / "notebooks"

_SCALARS = {int: "an int", float: "a float (or int)", str: "a string", bool: "True or False"}


def _injected_names(history: list[str]) -> list[str]:
    """Names assigned by the last cell papermill injected (``# Parameters`` first line), in order."""
    for source in reversed(history):
        if isinstance(source, str) and source.lstrip().startswith(PAPERMILL_COMMENT):
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            return [t.id for node in tree.body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)]
    return []


def _parameters_cell(history: list[str], declared: Mapping) -> tuple[dict, set]:
    """``(defaults, empty allowed)`` of the parameters cell, the last executed cell whose annotated lines declare
    parameters of ``declared`` only: each default's literal (an expression is left out), and the list parameters
    that may be empty: the default is ``[]``, or the line's comment names ``[]`` as a value (``# []: none; ...``:
    the cell shows the committed profile's list, another profile may give none)."""
    for source in reversed(history):
        try:
            body = ast.parse(source).body if isinstance(source, str) and ":" in source else []
        except SyntaxError:
            body = []
        nodes = [n for n in body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
        if nodes and {n.target.id for n in nodes} <= set(declared):
            lines, defaults, empty = source.splitlines(), {}, set()
            for n in nodes:
                try:
                    defaults[n.target.id] = ast.literal_eval(n.value) if n.value is not None else None
                except ValueError:
                    pass
                if defaults.get(n.target.id) == [] or "[]" in lines[n.end_lineno - 1].partition("  # ")[2]:
                    empty.add(n.target.id)
            return defaults, empty
    return {}, set()


def _item_type(default):
    if not isinstance(default, list) or not default:
        return None
    kinds = {type(v) for v in default}
    if kinds == {int, float}:
        return float
    return kinds.pop() if len(kinds) == 1 and next(iter(kinds)) in _SCALARS else None


def _check_scalar(name: str, value, kind) -> Any:
    if kind is bool:
        return check_bool(name, value)
    if kind is int:
        if not _is_int(value):
            raise ParameterTypeError(f"{name} must be an int, got {_got(value)}")
        return value
    if kind is float:
        if not _is_real(value):
            raise ParameterTypeError(f"{name} must be a float (or an int), got {_got(value)}")
        return check_float(name, value)
    if kind is str:
        if not isinstance(value, str):
            raise ParameterTypeError(f"{name} must be a string, got {_got(value)}")
        return value
    return value


def _as_list(name: str, value, allow_empty: bool = False) -> list:
    """A list parameter: a list/tuple, or a string holding a YAML list (what ``papermill -p`` delivers); empty only
    with ``allow_empty`` (the parameters cell's default is the empty list)."""
    if isinstance(value, str):
        import yaml

        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise ParameterTypeError(f"{name} must be a list (a string is parsed as YAML), got {value!r}, which is "
                                     f"not valid YAML: {str(exc).splitlines()[0]}") from exc
        if not isinstance(parsed, list):
            raise ParameterTypeError(f"{name} must be a list (a string is parsed as YAML), got {value!r}, which "
                                     f"parses to {_got(parsed)}")
        value = parsed
    if not isinstance(value, (list, tuple)):
        raise ParameterTypeError(f"{name} must be a list (or a string holding a YAML list), got {_got(value)}")
    if not value and not allow_empty:
        raise ValueError(f"{name} must be a non-empty list, got {value!r}")
    return list(value)


def validate_parameters(namespace: dict, history: list[str] | None = None, paper: str | None = None) -> dict:
    """Check a notebook's parameters against the annotations of its parameters cell; see the module docstring.

    Args:
        namespace: the notebook's ``globals()``: holds ``__annotations__`` (filled by the parameters cell's
            ``name: type = value`` lines) and IPython's input history ``In``.
        history: the executed cells' sources (default ``namespace["In"]``); used to find the cell papermill
            injected (first line ``# Parameters``) and the parameters cell's defaults.
        paper: the notebook's paper (``hist``, ``hasfl``, ``dtfl``); an injected parameter that the notebook does
            not declare but a sibling notebook ``notebooks/<paper>/*.ipynb`` does is skipped: deleted from
            ``namespace`` and named in a printed note. ``None``: every undeclared parameter fails.

    Returns:
        ``{name: value}`` of the declared parameters after checking. A list given as a string is replaced by the
        parsed list in ``namespace`` too.

    Raises:
        ValueError: no annotated parameters in ``namespace``; a parameter papermill injected that neither the
            parameters cell nor (with ``paper``) a sibling notebook declares (the message names it and lists the
            declared ones); an empty list; an unknown ``paper``.
        ParameterTypeError: a value whose type is not its annotation's (the message names the parameter).
    """
    declared = dict(namespace.get("__annotations__") or {})
    if not declared:
        raise ValueError("validate_parameters found no annotated parameters: call it with globals() after the "
                         "parameters cell (lines `name: type = value  # comment`)")
    if history is None:
        history = list(namespace.get("In") or namespace.get("_ih") or [])
    unknown = [n for n in _injected_names(history) if n not in declared]
    if unknown and paper is not None:
        siblings = sibling_parameters(paper)
        skipped = [n for n in unknown if n in siblings]
        unknown = [n for n in unknown if n not in siblings]
        if skipped and not unknown:
            for n in skipped:
                namespace.pop(n, None)
            print(f"note: skipped {', '.join(skipped)}: declared by other {paper} notebooks, not by this one")
    if unknown:
        raise ValueError(f"unknown parameter(s) {', '.join(unknown)} given to the notebook (papermill -p / profile "
                         f"file); its parameters are: {', '.join(sorted(declared))}")
    defaults, empty_ok = _parameters_cell(history, declared)
    out = {}
    for name, kind in declared.items():
        if name not in namespace:
            raise ValueError(f"parameter {name} is declared but has no value: run the parameters cell first")
        try:
            out[name] = _checked(namespace, name, kind, name in empty_ok, defaults.get(name))
        except ValueError as exc:                         # ParameterTypeError too: the parameter named on it
            exc.parameter = name
            raise
    return out


def _checked(namespace: dict, name: str, kind, allow_empty: bool, default) -> Any:
    """``namespace[name]`` checked against its annotation ``kind`` (a list given as a string parsed and put back
    into ``namespace``). Raises as :func:`validate_parameters`."""
    value = namespace[name]
    if isinstance(kind, str):   # annotations kept as strings (from __future__ import annotations)
        kind = {"int": int, "float": float, "str": str, "bool": bool, "list": list}.get(kind, kind)
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is list or origin is list:
        value = _as_list(name, value, allow_empty=allow_empty)
        item = args[0] if args else _item_type(default)
        if item in _SCALARS:
            for i, v in enumerate(value):
                _check_scalar(f"{name}[{i}]", v, item)
        namespace[name] = value
    elif kind in _SCALARS:
        _check_scalar(name, value, kind)
    return value


def declared_parameters(notebook: str | Path) -> dict[str, Any]:
    """``{name: default}`` of a notebook file's parameters cell (the cell tagged ``parameters``; each line
    ``name: type = value``), read without running it by papermill (``papermill.inspect_notebook``); a default
    that is not a literal maps to None.

    Raises:
        FileNotFoundError: no such notebook. ValueError: it has no parameters cell.
    """
    import papermill as pm

    path = Path(notebook)
    if not path.is_file():
        raise FileNotFoundError(f"notebook: no file {path}")
    found = pm.inspect_notebook(str(path))
    if not found:
        raise ValueError(f"{path}: no cell tagged 'parameters'")
    out = {}
    for name, parameter in found.items():
        try:
            out[name] = ast.literal_eval(parameter["default"])
        except (ValueError, SyntaxError):
            out[name] = None
    return out


def parameter_values(nb) -> dict:
    """The values of a notebook's ``parameters`` cell (``nb``: an ``nbformat`` notebook), the cell executed as
    papermill reads it (typed assignments and comments only): a default that is an expression is evaluated, where
    :func:`declared_parameters` gives None.

    Raises:
        ValueError: the notebook has no cell tagged ``parameters``."""
    cell = next((c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if cell is None:
        raise ValueError("the notebook has no cell tagged 'parameters'")
    values: dict = {}
    exec(compile(cell.source, "<parameters>", "exec"), {}, values)   # the notebook's own literals
    return values


@functools.cache
def sibling_parameters(paper: str) -> frozenset:
    """Every parameter name declared by some notebook of ``paper`` (``notebooks/<paper>/*.ipynb``), read once.

    Raises:
        ValueError: ``paper`` is not one of hist, hasfl, dtfl.
    """
    if paper not in paths.PAPERS:
        raise ValueError(f"paper must be one of {', '.join(paths.PAPERS)}, got {paper!r}")
    return frozenset(n for nb in sorted((NOTEBOOK_DIR / paper).glob("*.ipynb")) for n in declared_parameters(nb))
