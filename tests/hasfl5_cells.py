"""Run a figure cell (or a table's cell) of ``notebooks/hasfl/hasfl_5_train_figures.ipynb`` on hand-made rows.

The notebook draws Figs. 2a, 3a, 6, 7-8, 9, 10, 11, the calibration and the ε sweep in its own cells (issue 68);
their tests execute the cell that saves a figure, with the notebook's imports and parameter defaults, and read the
drawn artists. Nothing is written: ``savefig`` only collects the figures.
"""
import ast
import json
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "hasfl" / "hasfl_5_train_figures.ipynb"


def _code_cells() -> list[str]:
    nb = json.loads(NOTEBOOK.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def draw(figure: str, **inputs) -> dict:
    """Execute the cell of the notebook that saves ``figure`` (``savefig(fig, "<figure>")`` or, in a loop, its name
    in the cell) after the parameters cell and the imports of the setup cell, with ``inputs`` (the cell's inputs:
    ``rows``, ``rows_own``, ``entries``, ``calibration``, ``sweeps``, parameters) over them; ``st`` defaults to
    ``tuple(settings)``, ``rows_own`` to ``[]``, ``note`` to ``""``, ``dataset`` to ``"fashion-mnist"``.

    Returns:
        ``{name: figure}`` of every figure the cell saved.

    Raises:
        LookupError: no code cell, or more than one, names ``figure``.
    """
    cells = _code_cells()
    matches = [c for c in cells if f'"{figure}"' in c and "savefig(" in c]
    if len(matches) != 1:
        raise LookupError(f"{len(matches)} cells of {NOTEBOOK.name} save {figure!r}")
    ns: dict = {}
    exec(cells[0], ns)                                       # the parameters cell: every default
    setup = next(c for c in cells if "setup_notebook(" in c)
    imports = [n for n in ast.parse(setup).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    exec(compile(ast.Module(body=imports, type_ignores=[]), "setup-imports", "exec"), ns)
    saved: dict = {}
    ns.update(note="", dataset="fashion-mnist", profile="smoke")
    ns.update(inputs)
    ns.setdefault("st", tuple(ns["settings"]))
    ns.setdefault("rows_own", [])                           # no strategy of your own unless given
    ns["savefig"] = saved.__setitem__                       # savefig(fig, name): saved[fig] = name, nothing written
    exec(matches[0], ns)
    return {name: fig for fig, name in saved.items()}


def run(name: str, **inputs) -> dict:
    """Execute the one code cell of the notebook that assigns ``name`` (``<name> = ...`` at the start of a line) as
    :func:`draw` executes a figure cell (the parameters, the setup's imports, ``inputs`` over them; ``display`` shows
    nothing). Returns the namespace after the cell.

    Raises:
        LookupError: no code cell, or more than one, assigns ``name``.
    """
    matches = [c for c in _code_cells() if c.startswith(f"{name} = ") or f"\n{name} = " in c]
    if len(matches) != 1:
        raise LookupError(f"{len(matches)} cells of {NOTEBOOK.name} assign {name!r}")
    cells = _code_cells()
    ns: dict = {}
    exec(cells[0], ns)
    setup = next(c for c in cells if "setup_notebook(" in c)
    imports = [n for n in ast.parse(setup).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    exec(compile(ast.Module(body=imports, type_ignores=[]), "setup-imports", "exec"), ns)
    ns.update(inputs)
    ns.setdefault("st", tuple(ns["settings"]))
    ns["display"] = lambda *a, **k: None
    exec(matches[0], ns)
    return ns
