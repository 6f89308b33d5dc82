"""Package layout: the public API at package level, and paper packages that import only the shared ones."""
import ast
from pathlib import Path

import pytest

FEDLIB = Path(__file__).resolve().parents[1] / "fedlib"
PAPERS = ("hist", "hasfl", "dtfl")
SHARED = ("core", "data", "split", "__init__")   # the method layer's shared packages (never the lab)


@pytest.mark.parametrize("module, names", [
    ("fedlib.hist", "HistConfig run_hist iterate_hist prepare"),
    ("fedlib.lab.hist", "run_sweep summarize"),
    ("fedlib.split", "LayerProfile EdgeDevices Servers SystemSpec profile_model model_profile vgg16 resnet18"),
    ("fedlib.hasfl", "Problem Decision HasflConstants bcd exhaustive strategy round_latency theta TABLE_I sample_system"),
    ("fedlib.core", "seed_sequence numpy_rng check_int hessian_top_eigenvalue"),
    ("fedlib.lab", "ResultStore config_key map_jobs setup_notebook"),
    ("fedlib.data", "load_dataset iid shards dirichlet"),
    ("fedlib.dtfl", "DtflConfig run_dtfl TierScheduler TimeModel tier_costs tier_cuts simulate profile_schedule"),
    ("fedlib.lab.dtfl", "run_entry Setup"),
    ("fedlib.split", "resnet_cifar resnet20 resnet56 resnet110"),
])
def test_public_api_at_package_level(module, names):
    mod = __import__(module, fromlist=["_"])
    missing = [n for n in names.split() if not hasattr(mod, n)]
    assert not missing, f"{module} lacks {missing}"
    assert set(names.split()) <= set(mod.__all__)


def _is_module(name: str) -> bool:
    return (FEDLIB / name).is_dir() or (FEDLIB / f"{name}.py").is_file() or name in PAPERS


def _fedlib_imports(path: Path, root: Path = FEDLIB) -> set[str]:
    """Top-level fedlib packages a module imports (absolute or relative), e.g. {"core", "hasfl"}; ``root`` is the
    ``fedlib`` folder ``path`` lies in."""
    rel = path.relative_to(root).with_suffix("").parts
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] == "fedlib" and len(parts) > 1:
                    out.add(parts[1])
                elif parts[0] == "fedlib":
                    out.update(a.name for a in node.names if _is_module(a.name))
            else:
                base = list(rel[:-1])[: len(rel) - node.level]   # package of the module, then up
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    out.add(target[0])
                else:
                    out.update(a.name for a in node.names if _is_module(a.name))
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "fedlib" and len(parts) > 1:
                    out.add(parts[1])
    return out


def test_import_walker_sees_relative_and_absolute_imports(tmp_path):
    # the walker itself must be able to fail: a paper module importing another paper, both ways of writing it.
    # The probe lies in a temporary fedlib/hist/, never in the source tree (a file left there by an interrupted
    # run would change HIST's cache key)
    fake = tmp_path / "fedlib" / "hist" / "_probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from ..hasfl import bcd\nfrom fedlib.dtfl import x\nfrom . import engine\nfrom .. import __version__, core\n")
    assert _fedlib_imports(fake, tmp_path / "fedlib") == {"hasfl", "dtfl", "hist", "core"}


@pytest.mark.parametrize("paper", [p for p in PAPERS if (FEDLIB / p).is_dir()])
def test_paper_packages_import_only_shared_packages(paper):
    for path in sorted((FEDLIB / paper).rglob("*.py")):
        bad = _fedlib_imports(path) - set(SHARED) - {paper}
        assert not bad, f"{path.relative_to(FEDLIB)} imports {sorted(bad)}: papers may import only {SHARED}"


@pytest.mark.parametrize("pkg", ["core", "data", "split"])
def test_shared_packages_import_no_paper(pkg):
    for path in sorted((FEDLIB / pkg).rglob("*.py")):
        bad = _fedlib_imports(path) & set(PAPERS)
        assert not bad, f"{path.relative_to(FEDLIB)} imports the paper package(s) {sorted(bad)}"
