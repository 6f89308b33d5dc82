"""Notebook parameters: the check of a notebook's parameters cell and the start of every notebook.

Every notebook's first code cell after its parameters cell is::

    from fedlib.lab import setup_notebook
    from fedlib.lab.hist import checks as hist_checks

    setup_notebook(globals(), "hist")
    hist_checks.check_hist_1_experiments(globals())

:func:`setup_notebook` checks the parameters' types (:func:`validate_parameters`), applies the output rule of
:mod:`fedlib.lab.paths` for the notebook's ``profile`` and prints where figures, metrics and records go; the
notebook's checker (``fedlib.<paper>.checks.check_<notebook>``) then checks every parameter's range, choices and
combinations, before any work.

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
combinations are the notebook's checker's (``fedlib.<paper>.checks``), called right after :func:`setup_notebook`.
"""
from __future__ import annotations

import ast
import functools
import json
import typing
from pathlib import Path
from typing import Any, Mapping

from fedlib.lab import paths
from fedlib.core.validate import ParameterTypeError, _got, _is_int, _is_real, check_bool, check_float

__all__ = ["validate_parameters", "setup_notebook", "apply_profile", "declared_parameters", "sibling_parameters"]

PAPERMILL_COMMENT = "# Parameters"
"""First line of the cell papermill injects (tag ``injected-parameters``) with the parameters it was given."""

NOTEBOOK_DIR = paths.REPO_ROOT / "notebooks"
PAPERS = ("hist", "hasfl", "dtfl")

_SCALARS = {int: "an int", float: "a float (or int)", str: "a string", bool: "True or False"}


def _parse(source: str):
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def _injected_names(history: list[str]) -> list[str]:
    """Names assigned by the last cell papermill injected (``# Parameters`` first line), in order."""
    for source in reversed(history):
        if isinstance(source, str) and source.lstrip().startswith(PAPERMILL_COMMENT):
            tree = _parse(source)
            if tree is None:
                continue
            return [t.id for node in tree.body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)]
    return []


def _defaults(history: list[str], declared: Mapping) -> dict:
    """Default values of the parameters cell (the last cell declaring the parameters with annotations)."""
    for source in reversed(history):
        tree = _parse(source) if isinstance(source, str) and ":" in source else None
        if tree is None:
            continue
        nodes = [n for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
        if nodes and {n.target.id for n in nodes} <= set(declared):
            out = {}
            for n in nodes:
                try:
                    out[n.target.id] = ast.literal_eval(n.value) if n.value is not None else None
                except ValueError:
                    pass
            return out
    return {}


def _empty_allowed(history: list[str], declared: Mapping, defaults: Mapping) -> set:
    """The list parameters that may be empty: the cell's default is ``[]``, or its comment names ``[]`` as a value
    (``# []: none; ...``: the cell shows the committed profile's list, another profile may give none)."""
    out = {n for n, v in defaults.items() if v == []}
    for source in reversed(history):
        if not isinstance(source, str):
            continue
        lines = {line.split(":", 1)[0].strip(): line for line in source.splitlines() if "  # " in line}
        if set(declared) <= set(lines):
            return out | {n for n in declared if "[]" in lines[n].split("  # ", 1)[1]}
    return out


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
    defaults = _defaults(history, declared)
    empty_ok = _empty_allowed(history, declared, defaults)
    out = {}
    for name, kind in declared.items():
        if name not in namespace:
            raise ValueError(f"parameter {name} is declared but has no value: run the parameters cell first")
        value = namespace[name]
        if isinstance(kind, str):   # annotations kept as strings (from __future__ import annotations)
            kind = {"int": int, "float": float, "str": str, "bool": bool, "list": list}.get(kind, kind)
        origin, args = typing.get_origin(kind), typing.get_args(kind)
        if kind is list or origin is list:
            value = _as_list(name, value, allow_empty=name in empty_ok)
            item = args[0] if args else _item_type(defaults.get(name))
            if item in _SCALARS:
                for i, v in enumerate(value):
                    _check_scalar(f"{name}[{i}]", v, item)
            namespace[name] = value
        elif kind in _SCALARS:
            _check_scalar(name, value, kind)
        out[name] = value
    return out


def declared_parameters(notebook: str | Path) -> dict[str, Any]:
    """``{name: default}`` of a notebook file's parameters cell (the cell tagged ``parameters``; each line
    ``name: type = value``), read without running it; a default that is not a literal maps to None.

    Raises:
        FileNotFoundError: no such notebook. ValueError: it has no parameters cell, or the cell is not Python.
    """
    path = Path(notebook)
    if not path.is_file():
        raise FileNotFoundError(f"notebook: no file {path}")
    cells = json.loads(path.read_text())["cells"]
    for cell in cells:
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            tree = _parse(source)
            if tree is None:
                raise ValueError(f"{path}: the parameters cell is not valid Python")
            out = {}
            for node in tree.body:
                if isinstance(node, (ast.AnnAssign, ast.Assign)):
                    targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
                    for t in targets:
                        if isinstance(t, ast.Name):
                            try:
                                out[t.id] = ast.literal_eval(node.value) if node.value is not None else None
                            except ValueError:
                                out[t.id] = None
            return out
    raise ValueError(f"{path}: no cell tagged 'parameters'")


@functools.lru_cache(maxsize=None)
def _siblings(paper: str) -> frozenset:
    return frozenset(n for nb in sorted((NOTEBOOK_DIR / paper).glob("*.ipynb")) for n in declared_parameters(nb))


def sibling_parameters(paper: str) -> frozenset:
    """Every parameter name declared by some notebook of ``paper`` (``notebooks/<paper>/*.ipynb``).

    Raises:
        ValueError: ``paper`` is not one of hist, hasfl, dtfl.
    """
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}, got {paper!r}")
    return _siblings(paper)


THREADS_VAR = "FEDLIB_THREADS"
"""The environment variable that states a notebook kernel's thread count (default 1: :func:`notebook_threads`)."""


def notebook_threads(environ: Mapping[str, str] | None = None) -> int:
    """The thread count a notebook computes with: ``FEDLIB_THREADS`` from ``environ`` (default ``os.environ``) when
    set, else 1.

    One thread is the default because on a shared or small machine torch's own default (one thread per core, each
    spinning while it waits) is slower, not faster: ``hist_3_bounds`` on a loaded 2-core machine took 813 s in
    JupyterLab before the pin, 405 s with torch's default threads and 108 s with one OpenMP thread.

    Raises:
        ValueError: ``FEDLIB_THREADS`` is set but not a positive integer (the message names the variable).
    """
    import os

    raw = (os.environ if environ is None else environ).get(THREADS_VAR)
    if raw is None:
        return 1
    text = str(raw).strip()
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"{THREADS_VAR} must be a positive integer (the notebook's torch and OpenMP threads), "
                         f"got {raw!r}; unset it for 1 thread")
    return int(text)


def pin_threads(environ: Mapping[str, str] | None = None) -> int:
    """Set this process's torch threads (which are its OpenMP / MKL threads) to :func:`notebook_threads` and state
    the count in ``OMP_NUM_THREADS`` / ``MKL_NUM_THREADS`` for the processes it starts. Returns the count.

    Raises:
        ValueError: as :func:`notebook_threads`.
    """
    import os

    from fedlib.lab.parallel import set_threads

    n = notebook_threads(environ)
    set_threads(n)
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(n)
    return n


def _same(a, b) -> bool:
    """Whether two parameter values are equal as a parameters cell states them (``1`` and ``1.0`` alike, a list
    and a tuple alike, ``True`` never ``1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def apply_profile(namespace: dict, paper: str, notebook: str, history: list[str] | None = None) -> dict:
    """Give the notebook its profile's parameters, as ``run_all.sh`` gives them through papermill: every parameter
    of ``notebooks/profiles/<profile>/<paper>.yaml`` and ``<notebook>.yaml`` (:func:`fedlib.lab.notebooks.
    notebook_parameters`, the files ``run_all.sh`` reads) that the notebook declares and the user did not set
    takes the profile's value in ``namespace``. The user set a parameter when papermill injected it or its value
    differs from the committed notebook's parameters cell (``notebooks/<paper>/<notebook>.ipynb``): that value wins.
    (A value typed equal to the cell's default reads as unchanged and takes the profile's.)

    Returns:
        ``{"profile", "files": [profile files read], "taken": {name: profile value}, "kept": {name: (your value,
        profile value)}, "injected": [names]}``: ``taken``, the values the profile gives that differ from the
        cell's defaults; ``kept``, the parameters the user set that the profile sets to another value;
        ``injected``, the declared parameters papermill gave (``profile`` aside).

    Raises:
        FileNotFoundError: no ``notebooks/<paper>/<notebook>.ipynb``. ValueError: as
            :func:`fedlib.lab.notebooks.notebook_parameters` (a profile file naming a parameter the notebook lacks).
    """
    from fedlib.lab.notebooks import PROFILE_DIR, has_profile, notebook_parameters

    path = NOTEBOOK_DIR / paper / f"{notebook}.ipynb"
    profile = namespace.get("profile", "quick")
    out = {"profile": profile, "files": [], "taken": {}, "kept": {}, "injected": []}
    if not isinstance(profile, str) or profile not in paths.PROFILES or not has_profile(path, profile):
        return out
    out["files"] = [f for f in (PROFILE_DIR / profile / f"{paper}.yaml", PROFILE_DIR / profile / f"{notebook}.yaml")
                    if f.is_file()]
    defaults = declared_parameters(path)
    if history is None:
        history = list(namespace.get("In") or namespace.get("_ih") or [])
    injected = set(_injected_names(history))
    out["injected"] = sorted(n for n in injected if n in defaults and n != "profile")
    for name, value in notebook_parameters(path, profile).items():
        if name == "profile" or name not in namespace:
            continue
        mine = namespace[name]
        if name not in injected and name in defaults and _same(mine, defaults[name]):
            namespace[name] = value
            if not _same(value, defaults[name]):         # a value the profile changes (not one it restates)
                out["taken"][name] = value
        elif not _same(mine, value):
            out["kept"][name] = (mine, value)
    return out


def _profile_note(applied: dict, default_profile) -> str:
    from fedlib.lab.story import display_path
    profile = applied["profile"]
    if profile == default_profile:
        line = f"profile {profile} (this notebook's default: the profile of its committed verdict)"
    else:
        line = f"profile {profile} (given; this notebook's default, the profile of its committed verdict, is " \
               f"{default_profile})"
    if not applied["files"]:
        return line + "; no profile file for it: every parameter is the cell's"
    files = ", ".join(display_path(f) for f in applied["files"])
    taken = ", ".join(f"{k}={v!r}" for k, v in applied["taken"].items())
    line += f"; from {files}: " + (taken if taken else "no value beyond the cell's or papermill's")
    if applied["injected"]:
        line += f"; given by papermill: {', '.join(applied['injected'])}"
    if applied["kept"]:
        line += "; set in the cell or by papermill, over the profile's: " + ", ".join(
            f"{k}={mine!r} (profile: {theirs!r})" for k, (mine, theirs) in applied["kept"].items())
    return line + "; every other parameter is the cell's"


def setup_notebook(namespace: dict, paper: str, notebook: str | None = None) -> dict:
    """Start a notebook: give it its profile's parameters (:func:`apply_profile`, with ``notebook`` named), check
    its parameters (:func:`validate_parameters` with ``paper``), make its ``profile`` parameter the active profile
    (:func:`fedlib.lab.paths.use_profile`) and print which profile and which values it took from where, and where
    its figures, metrics and new records go and which committed store it reads. Call it with ``globals()`` right
    after the parameters cell.

    The profile a notebook's parameters cell names by default is the one its committed verdict was judged at
    (``converged`` for DTFL and HASFL, ``quick`` for HIST), so that Run All on an unchanged notebook redraws the
    committed result from the committed store, in JupyterLab as under ``run_all.sh``. Typing another ``profile``
    in the first cell brings that profile's parameters, the same files ``run_all.sh`` gives papermill; a value
    typed in the cell wins over the profile's.

    Threads: it pins torch to one thread (:func:`pin_threads`), the count the project's kernel ``fedlib`` also
    gives OpenMP and MKL (``OMP_NUM_THREADS=1``, ``MKL_NUM_THREADS=1`` in its ``kernel.json``, written by
    ``python -m fedlib.lab.jupyter_setup``), in JupyterLab and under papermill alike. ``FEDLIB_THREADS=<n>``
    in the environment the kernel starts from states another count. A notebook's own ``threads`` parameter,
    where it has one and it is not 0, applies after this.

    Args:
        namespace: the notebook's ``globals()``. paper: hist, hasfl or dtfl. notebook: the notebook's name
            (``dtfl_2_table1``): its committed parameters cell tells which values the user changed; None (an
            explorer): no profile file is applied, every value is the cell's.

    Returns:
        ``{"parameters", "profile", "figures", "metrics", "store", "reads", "applied"}``: the checked parameters,
        the profile, the figures, metrics and store folders (:class:`pathlib.Path`), the read-only stores and what
        :func:`apply_profile` took (None without ``notebook``).

    Raises:
        ValueError / ParameterTypeError: as :func:`validate_parameters`; ``profile`` is not one of smoke, quick,
        converged, paper; ``FEDLIB_THREADS`` is not a positive integer.
    """
    pin_threads()
    applied = None
    if notebook is not None:
        applied = apply_profile(namespace, paper, notebook)
    params = validate_parameters(namespace, paper=paper)
    profile = paths.use_profile(params.get("profile", "quick"), paper)
    where = {"parameters": params, "profile": profile, "figures": paths.figures_dir(),
             "metrics": paths.metrics_dir(), "store": paths.cache_dir(), "reads": paths.read_only_stores(),
             "applied": applied}
    kind = "committed" if paths.committing() else "scratch (git ignores it)"
    from fedlib.lab.story import display_path  # the project-relative path: no machine's absolute path in a rendered page
    if applied is not None:
        print(_profile_note(applied, declared_parameters(NOTEBOOK_DIR / paper / f"{notebook}.ipynb").get("profile")))
    print(f"profile {profile}: figures -> {display_path(where['figures'])} [{kind}]; new records -> "
          f"{display_path(where['store'])}"
          + (f"; also reads {', '.join(map(display_path, where['reads']))}" if where["reads"] else ""))
    return where
