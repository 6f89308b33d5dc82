"""Claim a cached run before computing it, so that two workers that reach the same run at once do not both train it.

:meth:`fedlib.core.ResultStore.get_or_run` creates ``<key>.lock`` next to the record (``O_CREAT | O_EXCL``, holding
the writer's host, pid and start time) before it calls ``run()`` and removes it afterwards. A second caller that
finds the lock held by a live writer either waits for the record (the default: poll until it appears) or, inside
:func:`deferring` (what :func:`fedlib.core.map_jobs` sets in its pool workers on a job's first attempt), raises
:class:`RunInProgress` at once so that the pool can run another job first and retry this one at the end.

The writer refreshes its lock's modification time every ``REFRESH_S`` seconds while it computes (:class:`Heartbeat`).
A lock is stale, and taken over, when its writer ran on this host and its process is gone (a killed worker), when
it has not been refreshed for ``stale_s`` seconds (a writer on another host of a shared filesystem that died; the
store's default is :data:`STALE_S`, ten missed refreshes), or when it has stayed empty for more than a minute.
Taking over a live writer's lock (a clock skew, a reused pid) only costs a duplicate computation: records are
written atomically, so the result stays one valid record. A caller that waits says so at once and every
``NOTE_EVERY_S`` seconds (:func:`describe`: host, process, start time, and how to break the lock).
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from pathlib import Path

_STATE = threading.local()
#: seconds between refreshes of a held lock (its mtime), and the default age after which an unrefreshed lock is stale
REFRESH_S = 60.0
STALE_S = 600.0
#: seconds between the notes of a caller waiting for another writer's record
NOTE_EVERY_S = 300.0


class RunInProgress(RuntimeError):
    """Another live writer is computing this run (raised only inside :func:`deferring`); the message names the
    lock file."""


@contextlib.contextmanager
def deferring(on: bool = True):
    """Within this block (this thread), a run whose lock another live writer holds raises :class:`RunInProgress`
    instead of waiting for it."""
    old = getattr(_STATE, "defer", False)
    _STATE.defer = bool(on)
    try:
        yield
    finally:
        _STATE.defer = old


def defer_requested() -> bool:
    """Whether :func:`deferring` is active in this thread."""
    return getattr(_STATE, "defer", False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:          # someone else's live process
        return True
    return True


def is_stale(lock: Path, stale_s: float, now: float | None = None) -> bool:
    """Whether the lock file ``lock`` belongs to no live writer (module docstring). A missing file is stale."""
    now = time.time() if now is None else now
    try:
        age = now - lock.stat().st_mtime
        text = lock.read_text()
    except FileNotFoundError:
        return True
    if age > stale_s:
        return True
    try:
        owner = json.loads(text)
        host, pid = owner["host"], int(owner["pid"])
    except (ValueError, KeyError, TypeError):
        return age > 60.0            # being written (empty) or garbage
    return host == socket.gethostname() and not _alive(pid)


def try_acquire(lock: Path, stale_s: float) -> bool:
    """Create ``lock`` for this process; ``False`` when a live writer holds it (a stale lock is removed first).

    Raises:
        OSError: the folder is not writable (other than the lock existing).
    """
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if not is_stale(lock, stale_s):
                return False
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
            continue
        with os.fdopen(fd, "w") as fh:
            json.dump({"host": socket.gethostname(), "pid": os.getpid(), "time": time.time()}, fh)
        return True
    return False


def release(lock: Path) -> None:
    """Remove ``lock`` (nothing if it is gone already)."""
    with contextlib.suppress(FileNotFoundError):
        lock.unlink()


def describe(lock: Path, now: float | None = None) -> str:
    """Who holds ``lock``: host, process id, start time and the time since its last refresh, and how to break it.
    Never raises (a lock that vanished or holds garbage is described as such)."""
    now = time.time() if now is None else now
    try:
        owner = json.loads(lock.read_text())
        refreshed = now - lock.stat().st_mtime
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(owner["time"])))
        who = f"host {owner['host']}, process {owner['pid']}, started {started}, refreshed {refreshed:.0f} s ago"
    except FileNotFoundError:
        return f"{lock} (released meanwhile)"
    except (ValueError, KeyError, TypeError, OSError):
        who = "an unreadable owner"
    return (f"{lock} is held by {who}; if that process is gone, delete the lock file to break it (a lock not "
            f"refreshed for the store's stale_lock_s is taken over by itself)")


class Heartbeat:
    """Context manager: refresh ``lock``'s modification time every ``interval`` seconds (default :data:`REFRESH_S`;
    a daemon thread) while the block runs, so that other hosts can tell a live writer from a dead one.

    Raises:
        ValueError: ``interval`` not a finite number of seconds > 0."""

    def __init__(self, lock: Path, interval: float | None = None):
        interval = REFRESH_S if interval is None else interval
        if isinstance(interval, bool) or not isinstance(interval, (int, float)) or not 0 < interval < float("inf"):
            raise ValueError(f"interval must be a finite number of seconds > 0, got {interval!r}")
        self.lock, self.interval = Path(lock), float(interval)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name=f"heartbeat {self.lock.name}")

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            with contextlib.suppress(OSError):
                os.utime(self.lock)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
