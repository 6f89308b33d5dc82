"""The newest command surfaces refuse bad input in one line before any work, write nowhere they were not pointed,
and one build at a time writes a shared folder (fedlib/lab/cli.py's convention). Each command's work is replaced by
a function that fails the test if it is reached."""
from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fedlib.lab import cli, notebooks, prune, runlock, site, tables, verify
from tests.tools import first_steps, spread
from fedlib.lab.paths import REPO_ROOT


def _never(*a, **k):
    pytest.fail("the command started its work")


def _refused(capsys, call, *says) -> str:
    """``call()`` exits 2 (argparse's SystemExit or a return value) with one error line holding each of ``says``."""
    try:
        code = call()
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln and not ln.startswith(("usage:", " "))
             and not re.match(r"[WI]\d{4} ", ln)]          # torch's own log lines (no CUDA runtime found)
    assert code == 2 and len(lines) == 1, (code, err)
    assert all(s in lines[0] for s in says), lines[0]
    return lines[0]


@pytest.fixture
def scratch_locks(monkeypatch, tmp_path):
    """The command locks go to a scratch folder (``.cache/locks`` of a scratch repository root)."""
    import fedlib.lab.paths
    monkeypatch.setattr(fedlib.lab.paths, "REPO_ROOT", tmp_path / "root")
    return tmp_path / "root" / ".cache" / "locks"


# -- a folder given as a store holds records only; committed folders are not written ----------------------------

def test_a_scratch_store_is_taken(monkeypatch, tmp_path):
    (tmp_path / "0a1b.json").write_text('{"schema": 1, "key": "0a1b", "config": {}, "code_hash": "c", "record": {}}')
    (tmp_path / "0a1b.lock").write_text("")
    (tmp_path / ".tmp-x.json").write_text("")
    assert cli.store_dir(str(tmp_path)) == tmp_path and cli.not_a_store(tmp_path) is None
    monkeypatch.setenv("FEDLIB_CACHE_DIR", str(tmp_path))
    assert cli.check_environment()["FEDLIB_CACHE_DIR"] == str(tmp_path)
    (tmp_path / "0a1b.json").write_text("{}")          # named like a record, not one: no store (issue 70)
    assert "its JSON files are not fedlib records (e.g. 0a1b.json" in cli.not_a_store(tmp_path)


def test_fedlib_cache_dir_naming_a_metrics_folder_is_refused(monkeypatch):
    monkeypatch.setenv("FEDLIB_CACHE_DIR", str(REPO_ROOT / "figures" / "metrics"))
    with pytest.raises(ValueError, match="^FEDLIB_CACHE_DIR must name a result store folder.*dtfl_1_profiles.json"):
        cli.check_environment()


def test_prune_refuses_a_metrics_folder(capsys):
    _refused(capsys, lambda: prune.main(["--dir", "figures/converged/metrics"]), "--dir", "is not a result store")


@pytest.mark.parametrize("argv, says", [
    (["--out", "figures/site"], "--out figures/site: is in figures/, a committed folder"),
    (["--out", "notebooks/new_site"], "is in notebooks/, a committed folder"),
    (["--executed", "figures"], "argument --executed: figures is in figures/, a committed folder"),
    (["--executed", "no_such_executed_folder"], "argument --executed: no folder at no_such_executed_folder")])
def test_site_refuses_committed_or_missing_folders(capsys, monkeypatch, argv, says):
    monkeypatch.setattr(site, "build_site", _never)
    _refused(capsys, lambda: site.main(argv), says)


@pytest.mark.parametrize("module, argv, says", [
    (notebooks, ["--only", "hist", "--out", "figures/executed"], "--out: figures/executed is in figures/"),
    (verify, ["--keep", "figures/rerun"], "--keep: figures/rerun is in figures/")])
def test_runners_refuse_a_committed_output_folder(capsys, monkeypatch, module, argv, says):
    monkeypatch.setattr(notebooks, "run_notebooks", _never)
    monkeypatch.setattr(verify, "verify", _never)
    _refused(capsys, lambda: module.main(argv), says)
    assert not (REPO_ROOT / argv[-1]).exists()


# -- options that do not apply are refused, not dropped -----------------------------------------------------------

@pytest.mark.parametrize("argv, says", [
    (["--paper", "hist", "--backend", "stacked"], "argument --backend: applies to dtfl and hasfl only, not hist"),
    (["--paper", "hasfl", "--active", "3"], "argument --active: applies to dtfl only, not hasfl"),
    (["--paper", "hist", "hasfl", "--active", "3"], "argument --active: applies to dtfl only, not hist hasfl"),
    # the command convention (fedlib/lab/cli.py) for this developer's command outside fedlib
    (["--paper", "hist", "--paper", "dtfl"], "--paper: given twice"), (["--paper", "hist", "hist"], "--paper"),
    (["--steps", "-1"], "--steps"), (["--active", "0"], "--active"), (["--backend", "stacked_gpu"], "--backend")])
def test_first_steps_refuses_an_option_no_chosen_paper_takes(capsys, monkeypatch, argv, says):
    monkeypatch.setattr(subprocess, "run", _never)
    _refused(capsys, lambda: first_steps.main(argv), says)


def test_first_steps_passes_each_paper_only_its_own_options(capsys, monkeypatch):
    calls = []

    def fake(cmd, **k):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, stdout='{"paper": "x"}\n', stderr="")
    monkeypatch.setattr(subprocess, "run", fake)
    assert first_steps.main(["--paper", "hist", "dtfl", "hasfl", "--backend", "stacked", "--active", "3"]) == 0
    by_paper = {c[c.index("--paper") + 1]: c for c in calls}
    assert "--backend" not in by_paper["hist"] and "--active" not in by_paper["hist"]
    assert by_paper["dtfl"][-4:] == ["--backend", "stacked", "--active", "3"]
    assert "--active" not in by_paper["hasfl"] and "--backend" in by_paper["hasfl"]
    with pytest.raises(ValueError, match="backend applies to dtfl and hasfl only"):
        first_steps.first_steps("hist", backend="stacked")
    with pytest.raises(ValueError, match="active applies to dtfl only"):
        first_steps.first_steps("hasfl", active=3)


@pytest.mark.parametrize("argv, says", [(["--rules", "--only", "hist"], "--rules: prints the rules and runs nothing"),
                                        (["--rules", "--profile", "quick"], "it takes no --profile"),
                                        (["--spread", "default"], "--spread")])     # moved to tests.tools.spread
def test_verify_refuses_options_that_do_not_apply(capsys, monkeypatch, argv, says):
    monkeypatch.setattr(verify, "verify", _never)
    _refused(capsys, lambda: verify.main(argv), says)


def test_spread_refuses_a_setting_given_twice(capsys, monkeypatch):
    monkeypatch.setattr(spread, "rerun", _never)
    _refused(capsys, lambda: spread.main(["default", "default"]), "each once", "['default', 'default']")


def test_bench_refuses_cuda_on_a_machine_without_it(capsys, monkeypatch):
    import torch

    from fedlib.lab import bench
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(bench, "bench_hist", _never)
    _refused(capsys, lambda: bench.main(["hist", "--device", "cuda"]), "argument --device", "CUDA is not available")


# -- files that are truncated, empty, unreadable or of another kind: named with their path ----------------------

@pytest.mark.parametrize("text, says", [('{"seeds": [0, 1', "not valid JSON"), ("", "not valid JSON"),
                                        ("[1, 2]", "holds a JSON list, not a notebook's metrics"),
                                        (b"\xff\xfe{}", "not valid JSON")])
def test_tables_names_a_bad_metrics_file_in_one_line(capsys, monkeypatch, tmp_path, text, says):
    bad = tmp_path / "figures" / "metrics" / "hist_2_figures.json"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(text if isinstance(text, bytes) else text.encode())
    monkeypatch.setattr(tables, "generated", lambda root=None: tables._load(bad))
    line = _refused(capsys, lambda: tables.main([]), str(bad), says)
    assert line.startswith("error: ")
    _refused(capsys, lambda: tables.main(["--check"]), str(bad), says)


def test_tables_names_an_unreadable_metrics_file(capsys, monkeypatch, tmp_path):
    bad = tmp_path / "hist_2_figures.json"          # a folder where the file should be: unreadable as a file
    bad.mkdir()
    monkeypatch.setattr(tables, "generated", lambda root=None: tables._load(bad))
    _refused(capsys, lambda: tables.main(["--check"]), str(bad), "unreadable")


# -- a profile key a notebook does not declare: refused before any notebook runs ----------------------------------

@pytest.fixture
def profiles(monkeypatch, tmp_path):
    """A copy of ``notebooks/profiles/`` that the runner reads; papermill fails the test if a notebook starts."""
    import papermill
    copy = tmp_path / "profiles"
    shutil.copytree(notebooks.PROFILE_DIR, copy)
    monkeypatch.setattr(notebooks, "PROFILE_DIR", copy)
    monkeypatch.setattr(papermill, "execute_notebook", _never)
    return copy


def test_a_notebooks_own_profile_key_it_does_not_declare_stops_the_run_before_any_notebook(capsys, profiles, tmp_path):
    with open(profiles / "smoke" / "hasfl_1_latency.yaml", "a") as fh:
        fh.write("seeds: [3]\n")
    line = _refused(capsys, lambda: notebooks.main(["--profile", "smoke", "--only", "hasfl", "--out",
                                                    str(tmp_path / "ex")]),
                    "hasfl_1_latency.yaml sets seeds", "which hasfl_1_latency does not declare",
                    "its parameters: batch_sizes, classes")
    assert line.endswith(", seed") and not (tmp_path / "ex").exists()


def test_a_paper_profile_key_no_notebook_declares_is_refused(capsys, profiles, tmp_path):
    with open(profiles / "quick" / "hasfl.yaml", "a") as fh:
        fh.write("seedz: [3]\n")
    _refused(capsys, lambda: notebooks.main(["--profile", "quick", "--only", "hasfl_1", "--check"]),
             "hasfl.yaml sets seedz", "which no hasfl notebook declares", "seeds")
    with pytest.raises(ValueError, match="seedz"):
        notebooks.run_notebooks("quick", tmp_path / "ex", only="hasfl_1")


def test_every_committed_profile_file_passes_the_check():
    for profile in notebooks.PROFILES:
        notebooks.check_profiles(profile, notebooks.list_notebooks())


# -- one build at a time ----------------------------------------------------------------------------------------

def _hold_command_lock(folder, ready, done):
    held = runlock.try_acquire(runlock.command_lock(folder))
    ready.set()
    done.wait(60)
    if held is not None:
        runlock.release(held)


def _fork():
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs the fork start method")
    return multiprocessing.get_context("fork")


def test_a_second_site_build_is_refused_while_one_runs(capsys, monkeypatch, scratch_locks, tmp_path):
    """The first build is another process (as two ``./run_all.sh --site`` started at once); the second is refused
    in one line naming the holder, and the first's lock is freed when it ends."""
    ctx = _fork()
    scratch_locks.mkdir(parents=True)
    ready, done = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_command_lock, args=(site.REPO_ROOT / "site", ready, done))
    holder.start()
    try:
        assert ready.wait(60)
        monkeypatch.setattr(site, "build_site", _never)
        _refused(capsys, lambda: site.main(["--out", str(tmp_path / "out")]),
                 "python -m fedlib.lab.site is already writing", f"process {holder.pid}", "wait for it to finish")
    finally:
        done.set()                                          # the first build ends
        holder.join(30)
    built = []
    monkeypatch.setattr(site, "build_site", lambda *a, **k: built.append(a) or {
        "html": "x", "seconds": 0, "pages": {}, "warnings": [], "times": {"execute": 0, "prepare": 0, "sphinx": 0}})
    assert site.main(["--out", str(tmp_path / "out")]) == 0 and built
    lock = runlock.command_lock(site.REPO_ROOT / "site")
    held = runlock.try_acquire(lock)                        # released after the build
    assert held is not None
    runlock.release(held)


def _hold_until_killed(folder, ready):
    held = runlock.try_acquire(runlock.command_lock(folder))   # kept referenced: a collected lock object releases
    ready.set()
    time.sleep(600)
    runlock.release(held)


def test_a_killed_builds_lock_is_free_at_once(scratch_locks, tmp_path):
    ctx = _fork()
    scratch_locks.mkdir(parents=True)
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_until_killed, args=(tmp_path, ready))
    holder.start()
    assert ready.wait(60)
    with pytest.raises(runlock.Busy, match=f"process {holder.pid}"):
        with runlock.exclusive(tmp_path, "test"):
            pass
    os.kill(holder.pid, signal.SIGKILL)                     # killed while holding it: it never releases
    holder.join(30)
    with runlock.exclusive(tmp_path, "test") as lock:      # the kernel released it
        assert json.loads(lock.read_text())["pid"] == os.getpid()


@pytest.mark.parametrize("argv, folder", [(["--only", "hist_1", "--out", "OUT"], "OUT"),
                                          (["--only", "hist_1", "--out", "OUT", "--commit"], "figures")])
def test_a_second_notebook_runner_on_the_same_folder_is_refused(capsys, monkeypatch, scratch_locks, tmp_path, argv,
                                                                folder):
    import fedlib.lab.paths
    out = tmp_path / "ex"
    argv = [str(out) if a == "OUT" else a for a in argv]
    held = out if folder == "OUT" else fedlib.lab.paths.committed_figures_dir("quick")
    monkeypatch.setattr(notebooks, "run_notebooks", _never)
    with runlock.exclusive(held, "the first run"):
        _refused(capsys, lambda: notebooks.main(argv), "fedlib.lab.notebooks", "already writing", str(held))


def test_prune_delete_and_tables_take_the_lock(capsys, monkeypatch, scratch_locks, tmp_path):
    (tmp_path / "store").mkdir()
    with runlock.exclusive(tmp_path / "store", "the first"):
        _refused(capsys, lambda: prune.main(["--dir", str(tmp_path / "store"), "--delete"]), "already writing")
        assert prune.main(["--dir", str(tmp_path / "store")]) == 2     # report only: no lock (an empty store)
        assert "holds no records" in capsys.readouterr().err
    monkeypatch.setattr(tables, "generated", lambda root=None: {})
    with runlock.exclusive(REPO_ROOT / "figures" / "verdicts", "the first"):
        _refused(capsys, lambda: tables.main([]), "fedlib.lab.tables is already writing")
        assert tables.main(["--check"]) == 0                            # writes nothing: no lock


def test_the_locks_live_in_the_ignored_cache_folder():
    lock = runlock.command_lock(REPO_ROOT / "site")
    assert lock.parent == REPO_ROOT / ".cache" / "locks" and lock.name.startswith("site-")
    assert runlock.command_lock(Path("/tmp/a/site")) != lock
