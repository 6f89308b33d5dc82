"""Two layers, one rule: the methods (``fedlib/{core,data,split,hist,dtfl,hasfl}``) never import the lab
(``fedlib/lab``), and papers never import each other.

The layers' sizes are figures, printed (files and lines of each), not asserted: a total held at a cap invites
squeezing. Each module keeps a per-module cap (:data:`METHOD_MODULE_LINES`, :data:`LAB_MODULE_LINES`) with slack
above today's largest module, so that a module that grows past one sitting's reading is split where its parts
separate. A commit never meets a cap by packing lines (statements joined onto one line, a lambda where a statement
was): it moves code to the module that owns it, or raises the cap and says why."""
import ast
from pathlib import Path

import pytest

FEDLIB = Path(__file__).resolve().parents[1] / "fedlib"
METHOD_PACKAGES = ("core", "data", "split", "hist", "dtfl", "hasfl")
PAPERS = ("hist", "dtfl", "hasfl")
#: per-module caps with slack (the largest method module held 397 lines and the largest lab module 525 on 2026-12-07)
METHOD_MODULE_LINES, LAB_MODULE_LINES = 450, 600


def _module(path: Path) -> str:
    parts = path.relative_to(FEDLIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports (relative imports resolved; ``from pkg import name`` as ``pkg.name``)."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def _method_files() -> list[Path]:
    """Every file of ``fedlib/`` outside ``fedlib/lab/``: the method packages and the package's top-level files."""
    return sorted([*(p for pkg in METHOD_PACKAGES for p in (FEDLIB / pkg).rglob("*.py") if "__pycache__" not in p.parts),
                   *FEDLIB.glob("*.py")])


def _lab_files() -> list[Path]:
    """Every file of ``fedlib/lab/``."""
    return sorted(p for p in (FEDLIB / "lab").rglob("*.py") if "__pycache__" not in p.parts)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_the_methods_never_import_the_lab():
    bad = {str(p.relative_to(FEDLIB)): sorted(m for m in _imports(p) if m == "fedlib.lab" or m.startswith("fedlib.lab."))
           for p in _method_files()}
    assert {k: v for k, v in bad.items() if v} == {}


def test_print_the_layer_sizes():
    """The sizes are printed (``pytest -s`` or the report), never asserted at a cap."""
    for layer, files in (("method layer", _method_files()), ("lab", _lab_files())):
        largest = max(files, key=_lines)
        print(f"\n{layer}: {len(files)} files, {sum(map(_lines, files))} lines "
              f"(largest {largest.relative_to(FEDLIB)}, {_lines(largest)} lines)")


@pytest.mark.parametrize("layer, cap", [("method", METHOD_MODULE_LINES), ("lab", LAB_MODULE_LINES)])
def test_every_module_fits_its_layer_cap(layer, cap):
    files = _method_files() if layer == "method" else _lab_files()
    assert {str(p.relative_to(FEDLIB)): _lines(p) for p in files if _lines(p) > cap} == {}


@pytest.mark.parametrize("paper", PAPERS)
def test_papers_never_import_each_other(paper):
    others = [p for p in PAPERS if p != paper]
    files = [*(FEDLIB / paper).rglob("*.py"), *(FEDLIB / "lab" / paper).rglob("*.py")]
    bad = {}
    for f in files:
        hits = sorted(m for m in _imports(f) for o in others
                      if m in (f"fedlib.{o}", f"fedlib.lab.{o}") or m.startswith((f"fedlib.{o}.", f"fedlib.lab.{o}.")))
        if hits:
            bad[str(f.relative_to(FEDLIB))] = hits
    assert bad == {}


def test_the_shared_method_packages_import_no_paper():
    bad = {str(p.relative_to(FEDLIB)): sorted(m for m in _imports(p) for paper in PAPERS
                                                if m == f"fedlib.{paper}" or m.startswith(f"fedlib.{paper}."))
           for pkg in ("core", "data", "split") for p in (FEDLIB / pkg).rglob("*.py")}
    assert {k: v for k, v in bad.items() if v} == {}


def test_a_lab_import_planted_in_a_method_module_is_caught(tmp_path):
    # the rule's own check: the import walker sees a relative and an absolute lab import
    pkg = tmp_path / "fedlib" / "hist"
    pkg.mkdir(parents=True)
    f = pkg / "x.py"
    f.write_text("from ..lab import store\nimport fedlib.lab.paths\n")
    global FEDLIB
    saved, FEDLIB = FEDLIB, tmp_path / "fedlib"
    try:
        assert {"fedlib.lab", "fedlib.lab.store", "fedlib.lab.paths"} <= _imports(f)
    finally:
        FEDLIB = saved
