"""Cache keys as the README says: each paper's result store hashes the modules that compute its records (and every
module they import), not its figure modules, so a plotting edit redraws from the cache and a computing edit
recomputes."""
import ast
import importlib
import importlib.util
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FEDLIB = Path(__file__).resolve().parents[1] / "fedlib"
PAPERS = ("hist", "hasfl", "dtfl")
#: per paper, the modules of its method package that its store does not hash, and why (the lab, fedlib.lab, is
#: hashed by no store: tests/test_layers.py keeps the methods from importing it)
_DECISIONS = "HASFL's decisions are computed from the stored pilots each time, never stored: a changed decision is a new training config"
UNHASHED = {
    "hist": {"__init__": "re-exports"},
    "dtfl": {"__init__": "re-exports",
             "scheduler": "the tier scheduler: its tiers enter a record through its config (each round's cuts and participants)",
             "timing": "the time model: enters a record only through the scheduler's tiers (its config)",
             "baseline_time": "the baselines' time model: charges a stored record afterwards"},
    "hasfl": {"__init__": "re-exports", "bound.__init__": "docstring", "optimiser.__init__": "docstring",
              "bound.latency": "the latency model: charges a stored training record afterwards (the clock)",
              "bound.problem": _DECISIONS,
              "bound.calibrate": "the calibrated bound's fit: its decisions (b, cuts) enter the training records' configs",
              **{f"optimiser.{m}": _DECISIONS for m in ("bcd", "p1", "p2", "memo", "batch_search", "refinement", "exhaustive",
                                                        "strategies")},
              "training": "hashed by the training records' own code (fedlib.lab.hasfl.runs.train_run.TRAIN_CODE)"},
}
#: modules a hashed module imports that its paper's records still do not depend on
NOT_NEEDED = {"hasfl": {"fedlib.split.resnet_cifar": "DTFL's CIFAR ResNets, imported by split.models; HASFL builds "
                                                     "only vgg16 / resnet18",
                        **{m: "the engine's stacked backend: its source enters the keys of the training records it "
                              "computes (fedlib.lab.hasfl.runs.train_run.BACKEND_CODE), not those of the loop backend"
                           for m in ("fedlib.split.stacked", "fedlib.split.stacked_ops", "fedlib.split.stacked_layers")}},
              "dtfl": {**{m: "the engine's stacked backend: its source enters the keys of the records it computes "
                          "(fedlib.dtfl.training.keyed_by_backend adds fedlib.split.backends.STACKED_CODE), not "
                          "those of the loop backend (fedlib.dtfl.local_loss holds DTFL's step for both backends)"
                          for m in ("fedlib.split.stacked", "fedlib.split.stacked_ops", "fedlib.split.stacked_layers")},
                       "fedlib.dtfl.scheduler": "imported by fedlib.dtfl.run.dtfl only (the scheduler deciding each "
                                                "round, a run never stored): a stored run replays the tiers decided "
                                                "ahead, which enter its config"}}


#: the module that defines each paper's STORE_CODE
EXPERIMENTS = {"hist": "fedlib.lab.hist.experiments", "dtfl": "fedlib.lab.dtfl.experiments", "hasfl": "fedlib.lab.hasfl.runs.experiments"}


def _store_code(paper: str) -> tuple:
    return importlib.import_module(EXPERIMENTS[paper]).STORE_CODE


def _files(code) -> dict[str, Path]:
    """Module name -> file of every module the store hashes (packages expanded as the store does)."""
    out = {}
    for name in code:
        spec = importlib.util.find_spec(name)
        paths = (sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.py"))
                 if spec.submodule_search_locations else [Path(spec.origin)])
        out.update({_module_name(p): p for p in paths if "__pycache__" not in p.parts and p.name != "__main__.py"})
    return out


def _module_name(path: Path) -> str:
    parts = path.resolve().relative_to(FEDLIB.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(name: str) -> bool:
    return hasattr(importlib.import_module(name), "__path__")


def _defining_module(pkg: str, name: str) -> str:
    """The module that defines ``name`` as imported ``from pkg import name`` (through re-exports)."""
    if not _is_package(pkg):
        return pkg
    if importlib.util.find_spec(f"{pkg}.{name}") is not None:
        return f"{pkg}.{name}"
    obj = getattr(importlib.import_module(pkg), name)
    if (inspect.isclass(obj) or callable(obj)) and str(getattr(obj, "__module__", "")).startswith("fedlib"):
        return obj.__module__
    init = Path(importlib.import_module(pkg).__file__)
    for node in ast.walk(ast.parse(init.read_text())):   # a constant re-exported by the package's __init__
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            return _defining_module(_absolute(node, pkg), name)
    return pkg


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(path: Path) -> set[str]:
    """The fedlib modules ``path`` imports, each resolved to the module that defines the imported name."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "fedlib")
        elif isinstance(node, ast.ImportFrom):
            mod = _absolute(node, package)
            if mod.split(".")[0] == "fedlib":
                out.update(_defining_module(mod, a.name) for a in node.names)
    return out


def _only_reexports(name: str) -> bool:
    """Whether a package's ``__init__`` holds only a docstring, imports and ``__all__`` / ``__version__``."""
    body = ast.parse(Path(importlib.import_module(name).__file__).read_text()).body
    names = lambda n: [t.id for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                       if isinstance(t, ast.Name)]
    return all(isinstance(n, (ast.Import, ast.ImportFrom))
               or isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
               or isinstance(n, (ast.Assign, ast.AugAssign)) and set(names(n)) <= {"__all__", "__version__"}
               for n in body)


@pytest.mark.parametrize("paper", PAPERS)
def test_store_hashes_every_module_of_the_paper_but_figures_and_references(paper):
    # a new module must be classified: hashed (computes records) or named in UNHASHED with its reason
    # names relative to the paper's package: "training", "runs.training", "runs.__init__" (sub-packages' __init__)
    rel = lambda p: ".".join(p.relative_to(FEDLIB / paper).with_suffix("").parts)
    modules = {rel(p) for p in (FEDLIB / paper).rglob("*.py") if "__pycache__" not in p.parts}
    prefix = f"fedlib.{paper}."
    hashed = set()
    for m, path in _files(_store_code(paper)).items():
        if m.startswith(prefix) or m == f"fedlib.{paper}":
            hashed.add(rel(path))
    assert hashed | set(UNHASHED[paper]) == modules, f"unclassified: {modules - hashed - set(UNHASHED[paper])}"
    assert not hashed & set(UNHASHED[paper]), f"hashed figure/reference modules: {hashed & set(UNHASHED[paper])}"
    for m in UNHASHED[paper]:
        if m.endswith("__init__"):
            pkg = ".".join(["fedlib", paper, *m.split(".")[:-1]])
            assert _only_reexports(pkg), f"{pkg.replace('.', '/')}/__init__.py computes something: hash it"


@pytest.mark.parametrize("paper", PAPERS)
def test_store_hashes_every_module_its_records_import(paper):
    files = _files(_store_code(paper))
    allowed = NOT_NEEDED.get(paper, {})
    for name, path in sorted(files.items()):
        for dep in sorted(_imports(path) - set(files) - set(allowed)):
            assert _is_package(dep) and _only_reexports(dep), (
                f"{paper}'s store hashes {name}, which imports {dep}, which it does not hash: add {dep} to "
                f"{EXPERIMENTS[paper]}.STORE_CODE")


def test_hasfl_training_records_hash_every_module_they_import():
    from fedlib.lab.hasfl.runs.train_run import TRAIN_CODE
    files = _files(TRAIN_CODE)
    assert {m for m in files if m.startswith("fedlib.hasfl.")} == {"fedlib.hasfl.training"}
    assert not [m for m in files if m.startswith("fedlib.lab")]
    allowed = NOT_NEEDED["hasfl"]
    for name, path in sorted(files.items()):
        for dep in sorted(_imports(path) - set(files) - set(allowed)):
            assert _is_package(dep) and _only_reexports(dep), (
                f"HASFL's training records hash {name}, which imports {dep}, which they do not hash: add {dep} "
                f"to fedlib.lab.hasfl.runs.train_run.TRAIN_CODE")


def test_hasfl_stacked_training_records_hash_every_module_they_import():
    from fedlib.lab.hasfl.runs.train_run import BACKEND_CODE
    from fedlib.lab.hasfl.runs.train_run import TRAIN_CODE
    files = _files(tuple(TRAIN_CODE) + BACKEND_CODE)
    assert {"fedlib.split.stacked", "fedlib.split.stacked_layers", "fedlib.split.backends"} <= set(files)
    assert not [m for m in files if m.startswith("fedlib.lab")]
    allowed = {"fedlib.split.resnet_cifar": NOT_NEEDED["hasfl"]["fedlib.split.resnet_cifar"]}
    for name, path in sorted(files.items()):
        for dep in sorted(_imports(path) - set(files) - set(allowed)):
            assert _is_package(dep) and _only_reexports(dep), (
                f"HASFL's stacked training records hash {name}, which imports {dep}, which they do not hash: add "
                f"{dep} to fedlib.lab.hasfl.runs.train_run.BACKEND_CODE")


_PROBE = r"""
import ast, json, sys
from pathlib import Path
root = Path(sys.argv[1])
import fedlib
assert Path(fedlib.__file__).resolve().parent == (root / "fedlib").resolve(), fedlib.__file__
from fedlib.lab import code_hash
codes = {p: __import__(m, fromlist=["_"]).STORE_CODE for p, m in (("hist", "fedlib.lab.hist.experiments"),
         ("hasfl", "fedlib.lab.hasfl.runs.experiments"), ("dtfl", "fedlib.lab.dtfl.experiments"))}
codes["hasfl-train"] = __import__("fedlib.lab.hasfl.runs.train_run", fromlist=["_"]).TRAIN_CODE
def hashes():
    return {p: code_hash.source_hash(c) for p, c in codes.items()}

def offset(src, line, col):
    # ast's columns count UTF-8 bytes: work on bytes
    return sum(len(l) for l in src.splitlines(keepends=True)[:line - 1]) + col

def behaviour(src):
    # the first number in the code (not a docstring) plus one; a file without numbers gets a new name
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            a, b = offset(src, node.lineno, node.col_offset), offset(src, node.end_lineno, node.end_col_offset)
            return src[:a] + repr(node.value + 1).encode() + src[b:]
    return src + b"\n_AN_EDIT = 1\n"

def docstring(src):
    # a word added to the first docstring (module, class or function), else a docstring given to the module
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node) is not None:
            c = node.body[0].value
            b = offset(src, c.end_lineno, c.end_col_offset)
            q = 3 if src[b - 3:b] in (b'\"\"\"', b"\'\'\'") else 1
            return src[:b - q] + b" An edit." + src[b - q:]
    return b'\"\"\"An edit.\"\"\"\n' + src

def layout(src):
    # a comment and blank lines
    return src.replace(b"\n", b"\n\n", 1) + b"\n# an edit\n"

base = hashes()
out = {"behaviour": {}, "docstring": {}, "layout": {}}
for rel in sorted(str(p.relative_to(root)) for p in (root / "fedlib").rglob("*.py")):
    f = root / rel
    old = f.read_bytes()
    for kind, edit in (("behaviour", behaviour), ("docstring", docstring), ("layout", layout)):
        f.write_bytes(edit(old))
        try:
            now = hashes()
        finally:
            f.write_bytes(old)
        out[kind][rel] = sorted(p for p in codes if now[p] != base[p])
assert hashes() == base
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory) -> dict[str, dict[str, list[str]]]:
    """On a copy of fedlib, for each kind of edit (``behaviour``: the first number in the code plus one;
    ``docstring``: a word added to a docstring; ``layout``: a comment and blank lines): file -> the papers whose
    store hash that edit of that file changes."""
    root = tmp_path_factory.mktemp("tree")
    shutil.copytree(FEDLIB, root / "fedlib", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", _PROBE, str(root)], cwd=root, env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def edits(probe) -> dict[str, list[str]]:
    """File -> the papers whose store hash a change of behaviour in that file changes."""
    return probe["behaviour"]


@pytest.mark.parametrize("kind", ["docstring", "layout"])
def test_a_docstring_comment_or_layout_edit_of_any_module_keeps_every_store_hash(probe, kind):
    changed = {rel: papers for rel, papers in probe[kind].items() if papers}
    assert len(probe[kind]) == len(probe["behaviour"]) > 100
    assert not changed, f"a {kind} edit changes store hashes: {changed}"


def test_a_behaviour_edit_of_every_hashed_module_changes_its_papers_hash(edits):
    # every file some store hashes: a changed number changes that store's hash
    files = {_module_name(p) for c in (_store_code(x) for x in PAPERS) for p in _files(c).values()}
    hashed = {str(p.relative_to(FEDLIB.parent)) for p in FEDLIB.rglob("*.py") if _module_name(p) in files}
    assert len(hashed) > 30
    assert not [rel for rel in hashed if not edits[rel]]


def _package(tmp_path, name: str, files: dict[str, str]) -> str:
    pkg = tmp_path / name
    pkg.mkdir()
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    return name


def test_the_hash_ignores_file_names_and_docstrings_and_sees_operators(tmp_path, monkeypatch):
    from fedlib.lab.code_hash import source_hash
    monkeypatch.syspath_prepend(str(tmp_path))
    code = 'def f(x):\n    """Doc."""\n    return x + 1\n'
    a = _package(tmp_path, "pkg_a", {"__init__.py": '"""A package."""\n', "one.py": code})
    b = _package(tmp_path, "pkg_b", {"__init__.py": "", "two.py": "# moved\n" + code.replace("Doc.", "Other.")})
    c = _package(tmp_path, "pkg_c", {"__init__.py": "", "one.py": code.replace("x + 1", "x - 1")})
    d = _package(tmp_path, "pkg_d", {"__init__.py": "", "one.py": code.replace("x + 1", "x + 1.0")})
    assert source_hash([a]) == source_hash([b]) == source_hash([b, f"{b}.two"])
    assert len({source_hash([a]), source_hash([c]), source_hash([d])}) == 3
    e = _package(tmp_path, "pkg_e", {"__init__.py": "", "one.py": code + 'X = 1\n"""X\'s docstring."""\n'})
    f = _package(tmp_path, "pkg_f", {"__init__.py": "", "one.py": code + "X = 1\n"})
    assert source_hash([e]) == source_hash([f]) != source_hash([a])
    bad = _package(tmp_path, "pkg_bad", {"__init__.py": "", "one.py": "def f(:\n"})
    with pytest.raises(ValueError, match="one.py is not valid Python"):
        source_hash([bad])


@pytest.mark.parametrize("figure_module", ["fedlib/lab/hist/plots.py", "fedlib/lab/hasfl/figures/plots.py",
                                           "fedlib/lab/hasfl/figures/train_plots.py",
                                           "fedlib/lab/dtfl/compare_plots.py", "fedlib/lab/plotting.py"])
def test_editing_a_figure_module_keeps_every_store_hash(edits, figure_module):
    assert edits[figure_module] == [], f"editing {figure_module} invalidates {edits[figure_module]}'s cache"


@pytest.mark.parametrize("module, papers", [
    ("fedlib/hist/run.py", ["hist"]), ("fedlib/hist/engine.py", ["hist"]), ("fedlib/hist/estimate.py", ["hist"]),
    ("fedlib/hasfl/training.py", ["hasfl-train"]), ("fedlib/hasfl/bound/estimate.py", ["hasfl"]),
    ("fedlib/hasfl/bound/beta24.py", ["hasfl"]), ("fedlib/dtfl/training.py", ["dtfl"]),
    ("fedlib/dtfl/privacy.py", ["dtfl"]), ("fedlib/dtfl/fedgkt.py", ["dtfl"]), ("fedlib/dtfl/baselines.py", ["dtfl"]),
    # decisions, the latency models and the tier scheduler enter records through their configs: no store hashes them
    ("fedlib/hasfl/optimiser/bcd.py", []), ("fedlib/hasfl/bound/latency.py", []), ("fedlib/dtfl/scheduler.py", []),
    ("fedlib/dtfl/timing.py", []), ("fedlib/split/profile.py", ["dtfl"]),
    ("fedlib/split/engine.py", ["dtfl", "hasfl-train"]), ("fedlib/split/resnet_cifar.py", ["dtfl"]),
    ("fedlib/split/models.py", ["dtfl", "hasfl", "hasfl-train"]),
    ("fedlib/data/partition.py", ["dtfl", "hasfl", "hasfl-train", "hist"]),
    ("fedlib/core/seeding.py", ["dtfl", "hasfl", "hasfl-train", "hist"]),
    ("fedlib/core/estimators.py", ["dtfl", "hasfl", "hasfl-train", "hist"]),
    ("fedlib/core/validate.py", ["dtfl", "hasfl", "hasfl-train", "hist"]),
])
def test_editing_a_computing_module_changes_its_papers_hashes(edits, module, papers):
    assert edits[module] == papers


def test_editing_any_lab_module_keeps_every_store_hash(edits):
    # the store itself, the runs' orchestration, figures, claims, explorers, the site: a behaviour edit of any of
    # them recomputes nothing (the store hashes the method modules only)
    lab = sorted(rel for rel in edits if rel.startswith("fedlib/lab/"))
    assert len(lab) > 60
    assert {rel: edits[rel] for rel in lab if edits[rel]} == {}


#: modules of fedlib.core no record's value depends on, with the reason
CORE_UNHASHED = {"fedlib.core.components": "resolves a component of your own by its import path; not in every "
                                           "store's code: a store whose modules import it hashes it (HIST's)"}


def test_the_core_package_is_what_records_depend_on():
    from fedlib.lab.store import RECORD_CODE
    core = {f"fedlib.core.{p.stem}" for p in (FEDLIB / "core").glob("*.py") if p.stem != "__init__"}
    assert set(RECORD_CODE) == core - set(CORE_UNHASHED)
    for paper in PAPERS:                      # a store whose hashed modules import it hashes it too
        code = _store_code(paper)
        users = [name for name, path in _files(code).items() if set(CORE_UNHASHED) & _imports(path)]
        assert not users or set(CORE_UNHASHED) <= set(code), (paper, users)


def test_rekey_moves_old_hash_records_to_the_current_key(tmp_path):
    # a record under an old hash named in the mapping moves to the current key with config and record unchanged;
    # a record of another old hash stays stale
    from fedlib.lab.store import ResultStore, config_key
    from fedlib.lab.dtfl.experiments import STORE_CODE
    from fedlib.lab.prune import REKEYED, prune, rekey
    assert set(REKEYED.values()) == {"hist", "dtfl", "dtfl_stacked", "hasfl", "hasfl_train", "hasfl_train_stacked"}
    cfg, rec = {"kind": "dtfl_train", "seed": 0}, {"test_acc": [0.1, 0.5]}
    for old in ("0123456789abcdef", "fedcba9876543210"):
        key = config_key(dict(cfg, old=old), old)
        (tmp_path / f"{key}.json").write_text(json.dumps({"schema": 1, "key": key, "config": dict(cfg, old=old),
                                                          "code_hash": old, "record": rec}))
    assert rekey(tmp_path, {"0123456789abcdef": "dtfl"}) == {"dtfl": 1}
    store = ResultStore(tmp_path, code=STORE_CODE)
    assert store.load(dict(cfg, old="0123456789abcdef")) == dict(rec, store_key=store.key(dict(cfg, old="0123456789abcdef")))
    assert prune(tmp_path)["stale_by_hash"] == {"fedcba9876543210": 1}


def test_rekey_keep_old_copies_and_a_later_prune_removes_the_old_files(tmp_path):
    """``keep_old``: the old-hash file stays readable by a run of the older code until a prune deletes it."""
    from fedlib.lab.store import ResultStore, config_key
    from fedlib.lab.dtfl.experiments import STORE_CODE
    from fedlib.lab.prune import prune, rekey
    cfg, rec, old = {"kind": "dtfl_train", "seed": 0}, {"test_acc": [0.1, 0.5]}, "0123456789abcdef"
    key = config_key(cfg, old)
    (tmp_path / f"{key}.json").write_text(json.dumps({"schema": 1, "key": key, "config": cfg, "code_hash": old,
                                                      "record": rec}))
    assert rekey(tmp_path, {old: "dtfl"}, keep_old=True) == {"dtfl": 1}
    assert (tmp_path / f"{key}.json").is_file()
    assert ResultStore(tmp_path, code=STORE_CODE).load(cfg)["test_acc"] == [0.1, 0.5]
    assert prune(tmp_path, delete=True)["deleted"] == 1 and not (tmp_path / f"{key}.json").exists()
    assert ResultStore(tmp_path, code=STORE_CODE).load(cfg)["test_acc"] == [0.1, 0.5]


@pytest.mark.parametrize("paper", PAPERS)
def test_edit_of_a_paper_module_changes_the_hash_iff_the_store_lists_it(edits, paper):
    hashed = set(_files(_store_code(paper)))
    for rel, changed in edits.items():
        if rel.startswith(f"fedlib/{paper}/"):
            name = _module_name(FEDLIB.parent / rel)
            assert (paper in changed) == (name in hashed), f"{rel}: changes {changed}, hashed: {name in hashed}"
            assert set(changed) <= {paper, f"{paper}-train"}, f"{rel} (a {paper} module) changes {changed}'s cache"


# --- every field of a store key: changing it changes the key ---------------------------------------------------

def _changed(value):
    """A different value of the same kind (so the builders' checks accept it)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 1.5 if value else 0.5
    raise TypeError(value)


def test_every_argument_of_the_hasfl_pilot_key_changes_it():
    """Each argument of constants_config enters the pilot's key: with the aggregation interval missing, I = 5 and
    I = 15 would share one pilot record (and one online β)."""
    from fedlib.lab.store import config_key
    from fedlib.lab.hasfl.runs.experiments import constants_config
    base = dict(model="vgg16", dataset="fashion-mnist", pilot_steps=20, lr=0.01, batch_size=16, num_batches=4,
                power_iters=5, seed=0, width=0.25, interval=15)
    assert set(base) == set(inspect.signature(constants_config).parameters)
    key = config_key(constants_config(**base))
    others = {"model": "resnet18", "dataset": "cifar10"}
    for name, value in base.items():
        other = others.get(name) or _changed(value)
        assert config_key(constants_config(**{**base, name: other})) != key, f"{name} is not in the pilot's key"


def test_every_hasfl_training_setting_changes_the_run_key_or_is_dropped_with_a_reason():
    from dataclasses import fields, replace
    from fedlib.lab.store import config_key
    from fedlib.lab.hasfl.runs.train_config import run_config
    from fedlib.lab.hasfl.runs.training import TrainSettings
    # settings that shape only the decision (whose b and cuts are in the key) or the pilot (its own key); the
    # rounds clamp enters through ``rounds``
    dropped = {"gamma", "pilot_steps", "pilot_lr", "pilot_batch", "num_batches", "power_iters", "constants",
               "eps_mode", "eps_factor", "extend_epochs", "min_rounds", "max_rounds"}
    s = TrainSettings(epochs=0.5, min_rounds=1, evals=10, stop_at_convergence=True)
    decision = {"b": [8, 16], "cuts": [1, 3]}
    key = config_key(run_config(s, "iid", decision, 0, 1000))
    others = {"model": "resnet18", "dataset": "cifar10", "optimizer": "sgd", "constants": "max",
              "eps_mode": "grad_norm", "extend_epochs": 1.0, "stop_at_convergence": False, "max_rounds": 1000, "min_rounds": 2}
    for f in fields(TrainSettings):
        other = others.get(f.name, None)
        other = _changed(getattr(s, f.name)) if other is None else other
        changed = config_key(run_config(replace(s, **{f.name: other}), "iid", decision, 0, 1000)) != key
        assert changed != (f.name in dropped), f"{f.name}: {'in' if changed else 'not in'} the training key"
    for kw in ({"setting": "noniid"}, {"decision": {"b": [8, 17], "cuts": [1, 3]}},
               {"decision": {"b": [8, 16], "cuts": [1, 4]}}, {"seed": 1}):
        args = {"setting": "iid", "decision": decision, "seed": 0, **kw}
        assert config_key(run_config(s, args["setting"], args["decision"], args["seed"], 1000)) != key, kw


@pytest.mark.parametrize("paper", ["hist", "dtfl"])
def test_every_field_of_a_run_config_changes_its_key(paper):
    from dataclasses import fields, replace
    from fedlib.lab.store import config_key
    if paper == "hist":
        from fedlib.hist import HistConfig
        cfg = HistConfig()
        others = {"method": "hfedavg", "setting": "cell_iid", "num_cells": 6, "num_clients": 120, "hidden": 600, "H": 50, "E": 400,
                  "output_bias": "frozen", "dataset": "cifar10"}
    else:
        from fedlib.dtfl.training import DtflConfig
        cfg = DtflConfig()
        others = {"model": "resnet56", "dataset": "cifar10", "partition": "iid"}
    key = config_key(cfg.to_dict())
    for f in fields(cfg):
        value = getattr(cfg, f.name)
        other = others.get(f.name, value if isinstance(value, str) else _changed(value))
        if other == value:
            other = {"dirichlet": "iid", "iid": "dirichlet", "shards": "iid"}.get(value, other)
        try:
            changed = replace(cfg, **{f.name: other})
        except (ValueError, TypeError) as exc:
            pytest.fail(f"{f.name}: no valid other value tried ({exc})")
        assert config_key(changed.to_dict()) != key, f"{f.name} is not in the key"
