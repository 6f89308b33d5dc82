"""Result store: keys over config + source hash, cache hits, force, validated loads, atomic and concurrent
writes, stale temporary files, file mode, resume of an interrupted sweep, run locks (one computation per run;
OS locks, released when their holder ends)."""
import functools
import json
import multiprocessing
import os
import signal
import stat
import socket
import sys
import threading
import time
import warnings
from pathlib import Path
from concurrent.futures import ProcessPoolExecutor

import pytest

from fedlib.lab.store import ResultStore, config_key
from fedlib.lab.parallel import map_jobs
from fedlib.lab import runlock
from fedlib.lab.runlock import RunInProgress
from fedlib.lab.code_hash import source_hash
from fedlib.lab.store import CorruptRecordError
from fedlib.hist import HistConfig
from fedlib.lab.hist import experiments
from fedlib.hist import run


def test_key_depends_on_config_seed_and_code_not_order():
    a = {"x": 1, "seed": 0}
    assert config_key(a) == config_key({"seed": 0, "x": 1})
    assert config_key(a) != config_key({"x": 1, "seed": 1})
    assert config_key(a, "abc") != config_key(a, "abd")
    with pytest.raises(ValueError, match="NaN"):
        config_key({"lr": float("nan")})
    with pytest.raises(TypeError, match="JSON"):
        config_key({"f": object()})


@pytest.fixture
def toy_packages(tmp_path, monkeypatch):
    """Two throwaway packages on sys.path, so that editing one's source can be observed."""
    for name in ("toy_paper_a", "toy_paper_b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("X = 1\n")
        (tmp_path / name / "engine.py").write_text("def step():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    source_hash.cache_clear()
    yield tmp_path
    source_hash.cache_clear()
    for name in ("toy_paper_a", "toy_paper_b"):
        sys.modules.pop(name, None)


def test_editing_a_package_changes_its_runs_keys_and_not_the_others(toy_packages, tmp_path):
    store_a = ResultStore(tmp_path / "cache", code=("toy_paper_a",))
    store_b = ResultStore(tmp_path / "cache", code=("toy_paper_b",))
    ka, kb = store_a.key({"seed": 0}), store_b.key({"seed": 0})
    (toy_packages / "toy_paper_a" / "engine.py").write_text("def step():\n    return 2  # engine edit\n")
    source_hash.cache_clear()
    assert ResultStore(tmp_path / "cache", code=("toy_paper_a",)).key({"seed": 0}) != ka
    assert ResultStore(tmp_path / "cache", code=("toy_paper_b",)).key({"seed": 0}) == kb


def test_rerun_after_an_engine_edit_recomputes(toy_packages, tmp_path):
    calls = []
    ResultStore(tmp_path / "c", code=("toy_paper_a",)).get_or_run({"seed": 0}, lambda: calls.append(1) or {"v": 1})
    ResultStore(tmp_path / "c", code=("toy_paper_a",)).get_or_run({"seed": 0}, lambda: calls.append(1) or {"v": 1})
    assert len(calls) == 1                                                        # cache hit
    (toy_packages / "toy_paper_a" / "engine.py").write_text("def step():\n    return 3\n")
    source_hash.cache_clear()
    ResultStore(tmp_path / "c", code=("toy_paper_a",)).get_or_run({"seed": 0}, lambda: calls.append(1) or {"v": 2})
    assert len(calls) == 2                                                        # recomputed, not stale


def test_unknown_code_module_is_named():
    with pytest.raises(ValueError, match="no_such_module_xyz"):
        source_hash(("no_such_module_xyz",))
    with pytest.raises(TypeError, match="sequence of module names"):
        source_hash("fedlib")


def test_hit_force_and_record(tmp_path):
    store = ResultStore(tmp_path)
    calls = []
    run_ = lambda: calls.append(1) or {"value": len(calls)}  # noqa: E731
    assert store.get_or_run({"a": 1}, run_)["value"] == 1
    assert store.get_or_run({"a": 1}, run_)["value"] == 1 and len(calls) == 1      # cache hit
    assert store.get_or_run({"a": 1}, run_, force=True)["value"] == 2              # recomputed
    assert store.load({"a": 1})["store_key"] == config_key({"a": 1}, store.code_hash)
    with pytest.raises(KeyError, match="run the experiments notebook"):
        store.load({"a": 2})


@pytest.mark.parametrize("content, problem", [
    ('{"schema": 1, "config": {"a": 1}, "rec', "not valid JSON"),     # truncated
    ("", "not valid JSON"),                                          # empty
    ("{}", "schema"),                                                # not a record
    (None, "another config"),                                        # another config's valid record
])
def test_corrupt_or_foreign_file_is_named_and_recomputed_alone(tmp_path, content, problem):
    store = ResultStore(tmp_path)
    store.save({"a": 1}, {"v": 1})
    store.save({"a": 2}, {"v": 2})
    path = store.path({"a": 1})
    path.write_text(store.path({"a": 2}).read_text() if content is None else content)
    with pytest.raises(CorruptRecordError, match=problem) as err:
        store.load({"a": 1})
    assert str(path) in str(err.value)
    calls = []
    with pytest.warns(UserWarning, match=str(path).replace(".", r"\.")):
        rec = store.get_or_run({"a": 1}, lambda: calls.append(1) or {"v": 10})
    assert rec["v"] == 10 and calls == [1]
    assert store.load({"a": 1})["v"] == 10 and store.load({"a": 2})["v"] == 2      # the other run untouched


def test_record_of_other_code_is_refused(tmp_path):
    store = ResultStore(tmp_path)
    store.save({"a": 1}, {"v": 1})
    env = json.loads(store.path({"a": 1}).read_text())
    env["code_hash"] = "0" * 16
    store.path({"a": 1}).write_text(json.dumps(env))
    with pytest.raises(CorruptRecordError, match="other code"):
        store.load({"a": 1})


def test_non_finite_records_are_refused_before_writing(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(ValueError, match=r"/curve/1 = nan"):
        store.save({"a": 1}, {"curve": [0.5, float("nan")]})
    with pytest.raises(ValueError, match="inf"):
        store.get_or_run({"a": 1}, lambda: {"loss": float("inf")})
    # no record; the run's lock file stays, empty and free (fedlib.lab.runlock: waiters must share one file)
    assert [p.name for p in tmp_path.iterdir()] == [store.path({"a": 1}).with_suffix(".lock").name]
    assert _is_free(store.path({"a": 1}).with_suffix(".lock"))


def test_killed_write_leaves_nothing_and_files_are_world_readable(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    store.save({"a": 0}, {"v": 0})
    assert stat.S_IMODE(store.path({"a": 0}).stat().st_mode) == 0o644

    def fsync_then_die(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fsync_then_die)
    with pytest.raises(KeyboardInterrupt):
        store.save({"a": 1}, {"v": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == [store.path({"a": 0}).name]


def test_stale_temporary_files_are_removed_fresh_ones_kept(tmp_path):
    old, fresh = tmp_path / ".tmp-old.json", tmp_path / ".tmp-fresh.json"
    old.write_text("{")
    fresh.write_text("{")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    ResultStore(tmp_path)
    assert not old.exists() and fresh.exists()


def _write_many(root, worker):
    store = ResultStore(root)
    for i in range(20):
        store.save({"same": "key"}, {"worker": worker, "i": i})
    return worker


def test_concurrent_writers_of_one_key_leave_one_valid_record(tmp_path):
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        assert sorted(pool.map(_write_many, [tmp_path] * 2, [0, 1])) == [0, 1]
    rec = ResultStore(tmp_path).load({"same": "key"})
    assert rec["worker"] in (0, 1) and rec["i"] == 19
    assert [p.name for p in tmp_path.iterdir()] == [ResultStore(tmp_path).path({"same": "key"}).name]


_RAN: list = []
_STOP_AFTER: list = []


def _interruptible_runner(cfg, ds, device, progress):
    """A runner of the sweep (module level: a runner of your own is keyed by its import path) that is killed
    when ``_STOP_AFTER`` runs have finished."""
    if _STOP_AFTER and len(_RAN) == _STOP_AFTER[0]:
        raise KeyboardInterrupt  # killed during the next run
    _RAN.append(cfg.num_cells)
    return run.run_hist(cfg, ds, "cpu", progress=False)


def test_interrupted_sweep_resumes(tmp_path, fmnist):
    store = ResultStore(tmp_path)
    cfgs = [HistConfig(num_cells=n, num_clients=6, hidden=30, H=5, E=10, global_rounds=1) for n in (1, 2, 3)]
    _RAN.clear()
    _STOP_AFTER[:] = [2]
    with pytest.raises(KeyboardInterrupt):
        experiments.run_sweep(cfgs, store, fmnist, progress=False, runner=_interruptible_runner)
    assert _RAN == [1, 2] and len(list(tmp_path.glob("*.json"))) == 2
    _RAN.clear()
    _STOP_AFTER.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # finished runs load cleanly: no corrupt-file warning
        out = experiments.run_sweep(cfgs, store, fmnist, progress=False, runner=_interruptible_runner)
    assert _RAN == [3] and [r["config"]["num_cells"] for r in out] == [1, 2, 3]
    rec = out[0]
    assert rec["seed"] == 0 and rec["fedlib_version"] and rec["elapsed_s"] > 0 and rec["config"]["H"] == 5


# ---- run locks: one computation per run across workers (OS locks: fedlib.lab.runlock) ----------------------------

#: the holder's line of a process of another host (a store shared over NFS)
_FOREIGN = {"host": "another-host", "pid": 1, "time": 0.0}


def _is_free(lock) -> bool:
    """Whether ``lock`` can be taken now (taken and released again at once)."""
    held = runlock.try_acquire(lock)
    if held is None:
        return False
    runlock.release(held)
    return True


def test_lock_is_released_after_a_run_and_after_a_failing_run(tmp_path):
    store = ResultStore(tmp_path)
    assert store.get_or_run({"a": 1}, lambda: {"v": 1})["v"] == 1
    with pytest.raises(ZeroDivisionError):
        store.get_or_run({"a": 2}, lambda: 1 / 0)
    for cfg in ({"a": 1}, {"a": 2}):
        lock = store.path(cfg).with_suffix(".lock")
        assert lock.read_text() == "" and _is_free(lock)        # released: the holder's line cleared, free again


def _hold_in_thread(lock, line=None):
    """Hold ``lock`` in a thread of this process (as another worker would), optionally with another holder's line
    written into it; returns ``(taken, done)``: set ``done`` to release it."""
    taken, done = threading.Event(), threading.Event()

    def hold():
        held = runlock.try_acquire(lock)
        assert held is not None
        if line is not None:
            Path(lock).write_text(json.dumps(line))
        taken.set()
        done.wait(60)
        runlock.release(held)
    threading.Thread(target=hold, daemon=True).start()
    assert taken.wait(60)
    return taken, done


def test_live_lock_defers_or_waits_for_the_other_writers_record(tmp_path):
    store = ResultStore(tmp_path, poll_s=0.05)
    cfg = {"shared": "run"}
    _, done = _hold_in_thread(store.path(cfg).with_suffix(".lock"))
    with runlock.deferring():
        with pytest.raises(RunInProgress, match=r"\.lock"):
            store.get_or_run(cfg, lambda: {"v": "mine"})

    def other_writer():
        time.sleep(0.3)
        store.save(cfg, {"v": "theirs"})
        done.set()
    t = threading.Thread(target=other_writer)
    t.start()
    calls = []
    rec = store.get_or_run(cfg, lambda: calls.append(1) or {"v": "mine"})
    t.join()
    assert rec["v"] == "theirs" and calls == []         # waited and took the other writer's record


def _hold_until_killed(lock, ready):
    held = runlock.try_acquire(lock)            # kept referenced: a lock object that is collected releases its lock
    ready.set()
    time.sleep(600)
    runlock.release(held)


def _compute_slowly(root, started):
    def run():
        started.set()
        time.sleep(0.5)
        return {"v": "theirs"}
    ResultStore(root).get_or_run({"shared": 1}, run)


def _fork():
    # fork, not spawn: a spawned child re-imports fedlib.core and torch (4-9 s each on a loaded 2-core machine);
    # the children touch no torch, so a running torch thread pool in this process cannot hang them
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs the fork start method")
    return multiprocessing.get_context("fork")


def test_a_killed_holders_lock_is_released_at_once(tmp_path):
    ctx = _fork()
    store = ResultStore(tmp_path, poll_s=0.05)
    lock = store.path({"k": 1}).with_suffix(".lock")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold_until_killed, args=(lock, ready))
    holder.start()
    assert ready.wait(60)
    assert json.loads(lock.read_text())["pid"] == holder.pid
    with runlock.deferring(), pytest.raises(RunInProgress):      # a live process holds it: refused
        store.get_or_run({"k": 1}, lambda: {"v": 1})
    os.kill(holder.pid, signal.SIGKILL)                          # killed while holding it: it never releases
    holder.join(30)
    with runlock.deferring():                                    # the kernel released it: computed at once
        assert store.get_or_run({"k": 1}, lambda: {"v": 1})["v"] == 1
    with pytest.raises(ValueError, match="poll_s"):
        ResultStore(tmp_path, poll_s=0)


def test_a_second_process_waits_for_the_holders_record(tmp_path):
    ctx = _fork()
    started = ctx.Event()
    first = ctx.Process(target=_compute_slowly, args=(str(tmp_path), started))
    first.start()
    assert started.wait(60)                                      # the first process computes, holding the lock
    calls = []
    rec = ResultStore(tmp_path, poll_s=0.05).get_or_run({"shared": 1}, lambda: calls.append(1) or {"v": "mine"})
    first.join(60)
    assert rec["v"] == "theirs" and calls == [] and first.exitcode == 0


def _shared_run_job(root, tag):
    store = ResultStore(root)

    def run():
        with open(os.path.join(root, "computations.txt"), "a") as fh:
            fh.write(f"{tag}\n")
        time.sleep(1.0)
        return {"tag": tag}
    return store.get_or_run({"shared": True}, run)["tag"]


def test_map_jobs_computes_a_shared_run_once(tmp_path):
    root = str(tmp_path)
    out = map_jobs(_shared_run_job, [dict(root=root, tag=t) for t in range(4)], workers=2)
    assert len(set(out)) == 1                            # every job got the one record
    assert len((tmp_path / "computations.txt").read_text().split()) == 1
    assert all(_is_free(lock) for lock in tmp_path.glob("*.lock"))


# ---- many waiters reach one run at once: exactly one computes ----------------------------------------------------

_RACE_ROUNDS, _RACE_WORKERS = 200, 6


def _race_worker(store, root, barrier, rounds):
    def compute(r):
        with open(os.path.join(root, "computations.txt"), "a") as fh:     # one short O_APPEND write per line
            fh.write(f"{r} {os.getpid()}\n")
        time.sleep(0.002)                                                   # hold the lock for a moment
        return {"round": r}
    for r in range(rounds):
        barrier.wait(timeout=60)                                            # all waiters reach the run at once
        store.get_or_run({"race": r}, functools.partial(compute, r))


def test_waiters_that_race_for_one_run_compute_it_once(tmp_path):
    ctx = _fork()
    store = ResultStore(tmp_path, poll_s=0.005)
    barrier = ctx.Barrier(_RACE_WORKERS)
    procs = [ctx.Process(target=_race_worker, args=(store, str(tmp_path), barrier, _RACE_ROUNDS))
             for _ in range(_RACE_WORKERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * _RACE_WORKERS
    lines = (tmp_path / "computations.txt").read_text().split("\n")[:-1]
    per_round = {r: sum(line.split()[0] == str(r) for line in lines) for r in range(_RACE_ROUNDS)}
    twice = {r: n for r, n in per_round.items() if n != 1}
    assert not twice, f"rounds computed other than once (round: computations): {twice}"


def test_the_holders_line_names_it_and_is_cleared_on_release(tmp_path):
    lock = tmp_path / "k.lock"
    held = runlock.try_acquire(lock)
    owner = json.loads(lock.read_text())
    assert (owner["host"], owner["pid"]) == (socket.gethostname(), os.getpid())
    assert runlock.try_acquire(lock) is None                     # a second claim of this process is refused
    assert json.loads(lock.read_text()) == owner                 # and leaves the holder's line as it was
    runlock.release(held)
    assert lock.read_text() == "" and "released meanwhile" in runlock.describe(lock)
    assert "released meanwhile" in runlock.describe(tmp_path / "gone.lock")


def test_another_hosts_lock_is_described_with_its_host(tmp_path):
    lock = tmp_path / "k.lock"
    lock.write_text(json.dumps(_FOREIGN))
    text = runlock.describe(lock)
    assert "a process of host another-host (process 1, started " in text
    assert "released when that process ends" in text and "delete" not in text


# ---- the store's faults: a waiting caller says who holds the lock; read-only stores; files -----------------------

def test_waiting_caller_names_the_lock_holder(tmp_path, capsys):
    store = ResultStore(tmp_path, poll_s=0.02)
    cfg = {"seed": 0}
    _, done = _hold_in_thread(store.path(cfg).with_suffix(".lock"), line=_FOREIGN)   # held by "another host"

    def writer():
        time.sleep(0.3)
        ResultStore(tmp_path).save(cfg, {"v": 1})
        done.set()
    threading.Thread(target=writer).start()
    assert store.get_or_run(cfg, lambda: pytest.fail("computed while another writer held the lock"))["v"] == 1
    err = capsys.readouterr().err
    assert err.count("waiting for another writer's record") == 1                 # at once, then every 5 min
    assert "host another-host (process 1" in err


def test_a_read_only_store_with_a_killed_writers_temporary_file_can_be_read(tmp_path, monkeypatch):
    ResultStore(tmp_path).save({"seed": 0}, {"v": 1})
    tmp = tmp_path / ".tmp-killed.json"
    tmp.write_text("{")
    os.utime(tmp, (time.time() - 7200, time.time() - 7200))
    real_unlink = Path.unlink

    def read_only_unlink(self, missing_ok=False):
        if self.parent == tmp_path:
            raise PermissionError(13, "Read-only file system", str(self))
        return real_unlink(self, missing_ok)
    monkeypatch.setattr(Path, "unlink", read_only_unlink)
    assert ResultStore(tmp_path).load({"seed": 0})["v"] == 1 and tmp.exists()


def test_a_cache_path_that_is_a_file_asks_for_a_folder(tmp_path, monkeypatch):
    from fedlib.lab import paths
    f = tmp_path / "cache.json"
    f.write_text("{}")
    monkeypatch.setenv("FEDLIB_CACHE_DIR", str(f))
    with pytest.raises(NotADirectoryError, match="is a file; fedlib needs a folder there"):
        paths.cache_dir()
    with pytest.raises(NotADirectoryError, match="needs a folder"):
        ResultStore(f)


def test_cache_only_mode_returns_stored_records_and_never_computes(tmp_path, monkeypatch):
    from fedlib.lab.store import CacheMiss, ResultStore
    store = ResultStore(tmp_path, code=("fedlib.core.seeding",))
    store.get_or_run({"x": 1}, lambda: {"v": 1.0})
    monkeypatch.setenv("FEDLIB_CACHE_ONLY", "1")
    assert store.get_or_run({"x": 1}, lambda: pytest.fail("computed a stored record"))["v"] == 1.0
    with pytest.raises(CacheMiss, match="FEDLIB_CACHE_ONLY=1: no stored record"):
        store.get_or_run({"x": 2}, lambda: pytest.fail("computed under FEDLIB_CACHE_ONLY"))
    assert not store.has({"x": 2})


@pytest.mark.parametrize("name, read", [("FEDLIB_CACHE_ONLY", "cache_only"), ("FEDLIB_COMMIT", "committing")])
def test_boolean_variables_read_one_way(monkeypatch, name, read):
    from fedlib.lab import paths, store
    fn = getattr(store, read) if read == "cache_only" else getattr(paths, read)
    for on in ("1", "true", "TRUE", "Yes", " yes "):
        monkeypatch.setenv(name, on)
        assert fn() is True, on
    for off in ("0", "false", "No", ""):
        monkeypatch.setenv(name, off)
        assert fn() is False, off
    monkeypatch.delenv(name)
    assert fn() is False
    for bad in ("2", "maybe", "on"):
        monkeypatch.setenv(name, bad)
        with pytest.raises(ValueError, match=f"{name} must be 1, true or yes"):
            fn()
