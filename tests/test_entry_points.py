"""Every way into fedlib follows one convention (fedlib/lab/cli.py): each ``python -m fedlib.*`` command (found in
the source tree), each ``run_all.sh`` flag and each ``FEDLIB_*`` variable.

The commands run in a git copy of the working tree (tracked and untracked files, none ignored), so that
``git status --porcelain --ignored`` and the times of every file and folder there say whether a command wrote,
changed or deleted anything, whatever else runs in the project meanwhile. To stay fast on 2 loaded cores, one
Python process runs every command in turn as ``python -m`` does (``runpy``, ``sys.argv`` set) and compares the
snapshots around each; ``test_one_real_python_m`` runs one of them as a real ``python -m`` to show the two agree.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fedlib.lab import cli
from fedlib.lab.paths import REPO_ROOT

ENTRY_POINTS = {"fedlib.lab.bench", "fedlib.lab.jupyter_setup", "fedlib.lab.notebooks", "fedlib.lab.site",
                "fedlib.lab.verify", "fedlib.lab.data", "fedlib.lab.prune", "fedlib.lab.split.bench",
                "fedlib.lab.tables"}
#: entry points whose unknown-flag case needs a positional argument first: none (fedlib.lab.data names the flag
#: even with its NAME missing, as fedlib.lab.cli.ArgumentParser does everywhere)
NEEDS_NAME: dict = {}
TYPO = "figures/convergd/store"          # a misspelt folder: refused, never created

# (module, argv, extra environment, exit codes allowed, text stderr must hold)
CASES = [
    ("fedlib.lab.site", ["--out", ""], {}, (2,), "--out"),
    ("fedlib.lab.site", ["--out", "README.md"], {}, (2,), "--out"),
    ("fedlib.lab.site", ["--out", "notebooks"], {}, (2,), "--out"),     # a folder it did not make: never replaced
    ("fedlib.lab.site", ["--jobs", "0"], {}, (2,), "--jobs"),
    ("fedlib.lab.prune", ["--dir", TYPO], {}, (2,), "--dir"),
    ("fedlib.lab.prune", ["--rekey", "--dir", TYPO], {}, (2,), "--dir"),
    ("fedlib.lab.prune", ["--delete", "--dir", TYPO], {}, (2,), "--dir"),
    ("fedlib.lab.tables", ["--check"], {}, (0, 1), ""),
    ("fedlib.lab.verify", ["--rules"], {}, (0,), ""),
    ("fedlib.lab.notebooks", ["--check", "--only", "hist"], {}, (0,), ""),
    ("fedlib.lab.notebooks", ["--check", "--only", "no_such_notebook"], {}, (2,), "no_such_notebook"),
    ("fedlib.lab.notebooks", ["--prof", "quick", "--check"], {}, (2,), "--prof"),      # no abbreviations
    ("fedlib.lab.notebooks", ["--check", "--check"], {}, (2,), "--check: given twice"),
    ("fedlib.lab.verify", ["--profile", "quick", "--profile=smoke"], {}, (2,), "--profile: given twice"),
    ("fedlib.lab.site", ["-j", "1", "--jobs", "2"], {}, (2,), "given twice (as -j and --jobs)"),
    ("fedlib.lab.bench", ["hist", "--repeats", "2", "--repeats", "3"], {}, (2,), "--repeats: given twice"),
    ("fedlib.lab.bench", ["dtfl", "--variants", "stacked_gpu"], {}, (2,), "--variants"),
    ("fedlib.lab.bench", ["dtfl", "--variants", "stacked_cl,stacked_cl"], {}, (2,), "--variants"),
    ("fedlib.lab.bench", ["sfl", "--variants", "stacked_cl"], {}, (2,), "applies to dtfl only"),
    ("fedlib.lab.bench", ["dtfl_sweep", "--runs", "1"], {}, (2,), "--runs"),
    ("fedlib.lab.bench", ["dtfl", "--runs", "3"], {}, (2,), "applies to dtfl_sweep only"),
    ("fedlib.lab.tables", ["--check"], {"FEDLIB_COMMIT": "maybe"}, (2,), "FEDLIB_COMMIT must be 1, true or yes"),
    ("fedlib.lab.prune", ["--dir", "figures/quick/store"], {"FEDLIB_" + "COMIT": "1"}, (2,),
     "FEDLIB_" + "COMIT is not a fedlib variable"),
    ("fedlib.lab.verify", ["--rules"], {"FEDLIB_CACHE_DIR": "README.md"}, (2,), "FEDLIB_CACHE_DIR must name a folder"),
    ("fedlib.lab.notebooks", ["--check"], {"FEDLIB_THREADS": "two"}, (2,), "FEDLIB_THREADS"),
    # a folder that is no store, a committed folder as an output, an option that does not apply: refused
    ("fedlib.lab.prune", ["--dir", "figures/converged/metrics"], {}, (2,), "is not a result store"),
    ("fedlib.lab.verify", ["--rules"], {"FEDLIB_CACHE_DIR": "figures/metrics"}, (2,), "must name a result store"),
    ("fedlib.lab.site", ["--out", "figures/site"], {}, (2,), "a committed folder"),
    ("fedlib.lab.site", ["--executed", "figures"], {}, (2,), "a committed folder"),
    ("fedlib.lab.notebooks", ["--only", "hist", "--out", "figures/executed"], {}, (2,), "a committed folder"),
    ("fedlib.lab.verify", ["--keep", "figures/rerun"], {}, (2,), "a committed folder"),
    ("fedlib.lab.verify", ["--rules", "--only", "hist"], {}, (2,), "--rules: prints the rules and runs nothing"),
    ("fedlib.lab.data", ["fashion-mnist", "--root", "figures/data"], {}, (2,), "a committed folder"),
    ("fedlib.lab.data", ["ham10000", "--download"], {}, (2,), "--download: applies to"),
    # a scratch store outside the repository (FEDLIB_CACHE_DIR): created there, nothing written in the repository
    ("fedlib.lab.prune", [], {"FEDLIB_CACHE_DIR": "../scratch_store"}, (2,), "holds no records"),
    ("fedlib.lab.tables", ["--check"], {"FEDLIB_CACHE_DIR": "../scratch_store"}, (0, 1), ""),
    ("fedlib.lab.notebooks", ["--check", "--profile", "converged", "--only", "hasfl"],
     {"FEDLIB_CACHE_DIR": "../scratch_store"}, (0,), ""),
]

DRIVER = r'''
import contextlib, io, json, os, runpy, subprocess, sys, warnings
from pathlib import Path
root = Path.cwd()
watch = [root, Path(sys.prefix) / "etc" / "jupyter", Path(sys.prefix) / "share" / "jupyter" / "kernels" / "fedlib"]

def snapshot():
    status = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
    times = {}
    for top in watch:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not (Path(dirpath) == root and d == ".git")]
            for name in [""] + filenames:
                p = os.path.join(dirpath, name) if name else dirpath
                st = os.lstat(p)
                times[p] = (st.st_mtime_ns, st.st_size)
    return status, times

import fedlib
assert Path(fedlib.__file__).resolve().is_relative_to(root.resolve()), fedlib.__file__
warnings.simplefilter("ignore", RuntimeWarning)          # runpy: "found in sys.modules", as python -m would not say
results = []
for module, argv, env in json.load(sys.stdin):
    saved = dict(os.environ)
    os.environ.update(env)
    before = snapshot()
    out, err = io.StringIO(), io.StringIO()
    sys.argv = [module, *argv]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:
            code, err = "raised", io.StringIO(err.getvalue() + repr(exc))
    os.environ.clear()
    os.environ.update(saved)
    after = snapshot()
    changed = sorted(k for k in set(before[1]) | set(after[1]) if before[1].get(k) != after[1].get(k))
    results.append({"code": code, "out": out.getvalue(), "err": err.getvalue(), "changed": changed,
                    "status": (before[0], after[0])})
print("\nRESULTS" + json.dumps(results))
'''


def discover() -> set[str]:
    """Every ``python -m`` entry point of fedlib: a module with ``if __name__ == "__main__"``, a package with a
    ``__main__.py``."""
    found = set()
    for path in (REPO_ROOT / "fedlib").rglob("*.py"):
        parts = path.relative_to(REPO_ROOT).with_suffix("").parts
        if path.name == "__main__.py":
            found.add(".".join(parts[:-1]))
        elif re.search(r"""^if __name__ == ["']__main__["']:""", path.read_text(), re.M):
            found.add(".".join(parts))
    return found


def _clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FEDLIB_")}
    return {**env, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", **extra}


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """A git copy of the working tree (tracked and untracked files; nothing git ignores), committed."""
    root = tmp_path_factory.mktemp("entry") / "repo"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, listed):
        src = REPO_ROOT / rel
        if src.is_file() and not src.is_symlink():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / rel)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.hooksPath=/dev/null"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "copy"]):
        subprocess.run(git + cmd, cwd=root, check=True, capture_output=True)
    assert subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=root, capture_output=True,
                          text=True).stdout == ""
    return root


def run_in_copy(copy: Path, cases: list) -> list[dict]:
    """Run ``[(module, argv, env), ...]`` in ``copy`` as ``python -m module *argv`` (one driver process)."""
    res = subprocess.run([sys.executable, "-c", DRIVER], cwd=copy, input=json.dumps(cases), capture_output=True,
                         text=True, timeout=600,
                         env=_clean_env(PYTHONPATH=str(copy), MPLCONFIGDIR=str(copy.parent / "mpl")))
    assert res.returncode == 0 and "\nRESULTS" in res.stdout, res.stderr[-3000:]
    return json.loads(res.stdout.rsplit("\nRESULTS", 1)[1])


def _wrote_nothing(r: dict, what: str):
    assert not r["changed"], f"{what} created, changed or deleted {r['changed'][:10]}"
    assert r["status"][0] == r["status"][1], f"{what} changed git status:\n{r['status'][0]}\n--\n{r['status'][1]}"


def test_discovered_entry_points_are_the_expected_set():
    assert discover() == ENTRY_POINTS


@pytest.fixture(scope="module")
def walked(copy) -> dict:
    """Every discovered entry point with ``--help`` and with ``--no-such-flag``, then :data:`CASES`."""
    modules = sorted(discover())
    cases = [(m, ["--help"], {}) for m in modules] + [(m, ["--no-such-flag"], {}) for m in modules]
    cases += [(m, NEEDS_NAME[m] + ["--no-such-flag"], {}) for m in sorted(NEEDS_NAME)]
    cases += [(m, argv, env) for m, argv, env, _, _ in CASES]
    results = run_in_copy(copy, cases)
    return {json.dumps(c): r for c, r in zip(cases, results)}


def _result(walked, module, argv, env=None):
    return walked[json.dumps((module, argv, env or {}))]


@pytest.mark.parametrize("module", sorted(ENTRY_POINTS))
def test_help_prints_usage_and_does_nothing_else(walked, module):
    r = _result(walked, module, ["--help"])
    prog = module
    assert r["code"] == 0, r["err"][-2000:]
    assert r["out"].startswith(f"usage: python -m {prog} ") or r["out"].startswith(f"usage: python -m {prog}\n"), \
        r["out"][:300]
    _wrote_nothing(r, f"python -m {module} --help")


@pytest.mark.parametrize("module", sorted(ENTRY_POINTS))
def test_an_unknown_flag_exits_2_naming_it(walked, module):
    r = _result(walked, module, NEEDS_NAME.get(module, []) + ["--no-such-flag"])
    assert r["code"] == 2 and "--no-such-flag" in r["err"], (r["code"], r["err"][-2000:])
    _wrote_nothing(r, f"python -m {module} --no-such-flag")


@pytest.mark.parametrize("module, argv, env, codes, says", CASES, ids=[" ".join([c[0], *c[1], *c[2]]) for c in CASES])
def test_a_command_refuses_before_work_and_writes_nothing(walked, module, argv, env, codes, says):
    r = _result(walked, module, argv, env)
    assert r["code"] in codes and says in r["err"], (r["code"], r["err"][-2000:])
    _wrote_nothing(r, f"python -m {module} {' '.join(argv)}")


def test_one_real_python_m(copy, walked):
    """The driver's ``runpy`` run agrees with a real ``python -m`` (exit status and output)."""
    argv = ["fedlib.lab.site", "--jobs", "0"]
    res = subprocess.run([sys.executable, "-m", *argv], cwd=copy, capture_output=True, text=True, timeout=300,
                         env=_clean_env(PYTHONPATH=str(copy), MPLCONFIGDIR=str(copy.parent / "mpl")))
    r = _result(walked, argv[0], argv[1:])
    assert (res.returncode, res.stderr) == (r["code"], r["err"])


def _bash(copy: Path, *args) -> tuple[subprocess.CompletedProcess, list]:
    def snap():
        return (subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=copy,
                               capture_output=True, text=True).stdout,
                {str(p): p.lstat().st_mtime_ns for p in [copy, *copy.rglob("*")] if ".git" not in p.parts})
    before = snap()
    res = subprocess.run(["bash", str(copy / "run_all.sh"), *args], cwd=copy, capture_output=True, text=True,
                         timeout=60, env=_clean_env())
    after = snap()
    return res, [k for k in set(before[1]) | set(after[1]) if before[1].get(k) != after[1].get(k)] + \
        ([] if before[0] == after[0] else ["git status"])


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_run_all_help_prints_usage_and_writes_nothing(copy, flag):
    res, changed = _bash(copy, flag)
    assert res.returncode == 0 and "./run_all.sh --tests" in res.stdout and not changed, (res.stderr, changed)


@pytest.mark.parametrize("args, says", [
    (["--no-such-flag"], "unknown argument '--no-such-flag'"), (["--tests=1"], "unknown argument '--tests=1'"),
    (["--tests", "--tests"], "--tests given twice"), (["--site", "--site"], "--site given twice"),
    (["--verify", "--verify"], "--verify given twice"), (["--lab", "--lab"], "--lab given twice"),
    (["--only", "hist", "--only=dtfl"], "--only given twice"), (["--profile=smoke", "--profile", "quick"],
                                                                 "--profile given twice"),
    (["--profile", "fast"], "--profile must be smoke, quick, converged or paper")])
def test_run_all_refuses_before_any_work(copy, args, says):
    res, changed = _bash(copy, *args)
    assert res.returncode == 2 and says in res.stderr and not changed, (res.stderr, changed)


# -- FEDLIB_* variables ---------------------------------------------------------------------------------------

SOURCES = ["fedlib/**/*.py", "tests/**/*.py", "notebooks/**/*.ipynb", "run_all.sh", "README.md", "*/README.md",
           "notebooks/*/README.md", "docs/**/*.py"]


def _sources():
    seen = set()
    for pattern in SOURCES:
        for path in REPO_ROOT.glob(pattern):
            if path not in seen and path.name != Path(__file__).name and ".venv" not in path.parts:
                seen.add(path)
                yield path, path.read_text(errors="replace")


def test_every_fedlib_variable_is_registered():
    """A variable the project names is one :func:`fedlib.lab.cli.check_environment` knows (a new one is added
    there, with its check)."""
    named = {}
    for path, text in _sources():
        for name in re.findall(r"FEDLIB_[A-Z0-9_]*[A-Z0-9]", text):
            named.setdefault(name, str(path.relative_to(REPO_ROOT)))
    assert {k: v for k, v in named.items() if k not in cli.ENVIRONMENT} == {}
    assert set(cli.BOOLEANS) <= set(named)


READ = re.compile(r"""(?:environ\.get|getenv)\(\s*["'](FEDLIB_\w+)["']|environ\[\s*["'](FEDLIB_\w+)["']\s*\](?!\s*=[^=])""")


def test_no_boolean_variable_is_read_past_env_flag():
    """Source scan: ``os.environ.get("FEDLIB_X")`` / ``os.getenv`` / ``os.environ["FEDLIB_X"]`` of a boolean
    variable reads it some other way than :func:`fedlib.lab.paths.env_flag` (``!= "1"`` misses ``true``)."""
    bad = [f"{path.relative_to(REPO_ROOT)}: {m.group(0)}" for path, text in _sources() for m in READ.finditer(text)
           if (m.group(1) or m.group(2)) in cli.BOOLEANS]
    assert bad == []


def test_the_scan_sees_a_boolean_read():
    assert READ.search('if os.environ.get("FEDLIB_SLOW") != "1":') and READ.search("os.environ['FEDLIB_COMMIT']")
    assert not READ.search('os.environ["FEDLIB_COMMIT"] = "1"')


@pytest.mark.parametrize("name", sorted(cli.BOOLEANS))
def test_boolean_variables_read_one_way(monkeypatch, name):
    from fedlib.lab.paths import committing
    from fedlib.lab.store import cache_only
    library = {"FEDLIB_COMMIT": committing, "FEDLIB_CACHE_ONLY": cache_only}.get(name)
    for raw, value in (("TRUE", True), ("no", False), (" Yes ", True), ("0", False)):
        monkeypatch.setenv(name, raw)
        assert cli.check_environment()[name] is value, raw
        assert library is None or library() is value, raw
    monkeypatch.setenv(name, "maybe")
    with pytest.raises(ValueError, match=f"^{name} must be 1, true or yes .*got 'maybe'"):
        cli.check_environment()
    if library is not None:
        with pytest.raises(ValueError, match=f"^{name} must be"):
            library()


@pytest.mark.parametrize("raw, slow", [("TRUE", True), ("no", False), ("maybe", None)])
def test_the_property_tests_read_fedlib_slow_one_way(monkeypatch, raw, slow):
    import importlib.util
    spec = importlib.util.spec_from_file_location("property_copy", REPO_ROOT / "tests" / "test_hasfl_property.py")
    monkeypatch.setenv("FEDLIB_SLOW", raw)
    if slow is None:
        with pytest.raises(ValueError, match="^FEDLIB_SLOW must be 1, true or yes"):
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
    else:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert module.SLOW is slow
