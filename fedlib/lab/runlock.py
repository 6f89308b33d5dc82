"""Claim a cached run before computing it, so that two workers that reach the same run at once do not both train it.

:meth:`fedlib.lab.ResultStore.get_or_run` creates ``<key>.lock`` next to the record (``O_CREAT | O_EXCL``, holding
the writer's host, pid and start time) before it calls ``run()`` and removes it afterwards. A second caller that
finds the lock held by a live writer either waits for the record (the default: poll until it appears) or, inside
:func:`deferring` (what :func:`fedlib.lab.map_jobs` sets in its pool workers on a job's first attempt), raises
:class:`RunInProgress` at once so that the pool can run another job first and retry this one at the end.

The writer refreshes its lock's modification time every ``REFRESH_S`` seconds while it computes (:class:`Heartbeat`).
A lock is stale, and taken over, when its writer ran on this host and its process is gone (a killed worker), when
it has not been refreshed for ``stale_s`` seconds (a writer on another host of a shared filesystem that died; the
store's default is :data:`STALE_S`, ten missed refreshes), or when it has stayed empty for more than a minute.
Taking over a live writer's lock (a clock skew, a reused pid) only costs a duplicate computation: records are
written atomically, so the result stays one valid record. A caller that waits says so at once and every
``NOTE_EVERY_S`` seconds, in words (:func:`describe`: which process computes the run and since when; for a
process of another host, or one that is gone, also the time since its last refresh and how to break the lock).

Takeovers are serialised, so that a stale lock's takeover never removes the lock that another waiter has just
created. (Before, each waiter checked the lock and then deleted it: two waiters could both find the same stale lock,
the first delete it and create its own, and the second then delete that fresh lock and create another, so that two
writers computed the run.) A waiter that finds a stale lock takes it over only while it holds
``<key>.lock.takeover``, a :class:`filelock.FileLock` (``flock`` on the store's folder, which the kernel releases
when its holder dies; filelock's own soft lock on a file system without ``flock``), and waits at most
:data:`TAKEOVER_WAIT_S` for it (then it polls again as for a live lock). Under that guard it reads the lock again and,
if it is still stale, renames it to a unique ``.tmp-<key>.lock.stale-*`` name and deletes that file only if it is
the file it inspected (same inode, same content). A different file means the inspected lock's owner released it
and a new writer claimed the name just before the rename: that lock is put back (a hard link, which never
replaces a lock created meanwhile) and the waiter keeps waiting. Creating a lock needs no guard: of the waiters
that find the name free, ``O_EXCL`` lets exactly one win. The guard file is made only when a stale lock is found and
then stays next to the lock (deleting a ``flock`` file while others wait on it would let two waiters lock two
different files); it holds nothing, and ``figures/*/store/*.lock.takeover`` is git-ignored like the locks. (Only
filelock's soft lock, without ``flock``, can outlive a waiter that died mid-takeover on another host; the others
then keep waiting and say so, and deleting the lock file, as :func:`describe` advises, lets them claim it at once.)
What stays possible: a live writer whose lock was judged stale (a clock skew, a reused pid, a writer that stopped
refreshing) keeps computing after the takeover, and its release then deletes the new writer's lock; in the
microseconds between the rename and the link back of that case a third waiter may claim the free name. Both cost
only a duplicate computation, as above.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from pathlib import Path

import filelock

_STATE = threading.local()
#: seconds between refreshes of a held lock (its mtime), and the default age after which an unrefreshed lock is stale
REFRESH_S = 60.0
STALE_S = 600.0
#: seconds between the notes of a caller waiting for another writer's record
NOTE_EVERY_S = 300.0
#: seconds a waiter waits for the takeover guard (``<key>.lock.takeover``) before it gives up for this poll
TAKEOVER_WAIT_S = 10.0


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


def _inspect(lock: Path) -> tuple[os.stat_result, str] | None:
    """The lock file's status and text, read from one open file; ``None`` when it does not exist."""
    try:
        with open(lock, "rb") as fh:
            return os.fstat(fh.fileno()), fh.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return None


def _stale(seen: tuple[os.stat_result, str] | None, stale_s: float, now: float | None = None) -> bool:
    if seen is None:
        return True
    st, text = seen
    age = (time.time() if now is None else now) - st.st_mtime
    if age > stale_s:
        return True
    try:
        owner = json.loads(text)
        host, pid = owner["host"], int(owner["pid"])
    except (ValueError, KeyError, TypeError):
        return age > 60.0            # being written (empty) or garbage
    return host == socket.gethostname() and not _alive(pid)


def is_stale(lock: Path, stale_s: float, now: float | None = None) -> bool:
    """Whether the lock file ``lock`` belongs to no live writer (module docstring). A missing file is stale."""
    return _stale(_inspect(lock), stale_s, now)


def _same_file(a: tuple[os.stat_result, str], b: tuple[os.stat_result, str]) -> bool:
    # the inode alone could be a new lock's (a freed inode number is reused); its text names host, pid and start
    return (a[0].st_dev, a[0].st_ino, a[1]) == (b[0].st_dev, b[0].st_ino, b[1])


def _take_over(lock: Path, stale_s: float) -> bool:
    """Remove ``lock`` if it is stale; ``True`` when it is gone (the caller may then try to create it), ``False``
    when a live writer holds it or the guard stayed busy for :data:`TAKEOVER_WAIT_S`. Module docstring."""
    seen = _inspect(lock)
    if seen is None:
        return True
    if not _stale(seen, stale_s):        # the common case, a live writer's lock: no guard (and no guard file)
        return False
    guard = filelock.FileLock(f"{lock}.takeover", timeout=TAKEOVER_WAIT_S, poll_interval=0.005)
    try:
        guard.acquire()
    except filelock.Timeout:
        return False
    try:
        seen = _inspect(lock)            # again, under the guard: another waiter may have taken it over already
        if seen is None:
            return True
        if not _stale(seen, stale_s):
            return False
        # a name the store's clean-up of stale temporary files (.tmp-*) removes should this process die right here
        grave = lock.with_name(f".tmp-{lock.name}.stale-{uuid.uuid4().hex}")
        try:
            os.rename(lock, grave)
        except FileNotFoundError:        # its owner released it meanwhile
            return True
        moved = _inspect(grave)
        if moved is not None and not _same_file(moved, seen):
            # a writer released the inspected lock and another claimed the name before the rename: put its lock back
            with contextlib.suppress(FileExistsError):
                os.link(grave, lock)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(grave)
            return False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(grave)
        return True
    finally:
        guard.release()


def try_acquire(lock: Path, stale_s: float) -> bool:
    """Create ``lock`` for this process; ``False`` when a live writer holds it. A stale lock is taken over first,
    under the guard ``<key>.lock.takeover`` (module docstring), so that of many waiters that find the same stale
    lock at once exactly one creates the next one.

    Raises:
        OSError: the folder is not writable (other than the lock existing).
    """
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if not _take_over(Path(lock), stale_s):
                return False
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
    """Who is computing the run that ``lock`` claims, in words: a live process of this machine by its process id
    and start time (the common case, another worker of the same notebook: nothing to do but wait); a process of
    another host, or one of this machine that is gone, also with the time since its last refresh and how to break
    the lock (only then is the lock file named). Never raises (a lock that vanished or holds garbage is described as
    such)."""
    now = time.time() if now is None else now
    try:
        owner = json.loads(lock.read_text())
        refreshed = now - lock.stat().st_mtime
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(owner["time"])))
        host, pid = str(owner["host"]), int(owner["pid"])
    except FileNotFoundError:
        return "the other writer has just finished (released meanwhile)"
    except (ValueError, KeyError, TypeError, OSError):
        return (f"the run's lock has an unreadable owner; if no other process computes it, delete the lock file "
                f"{lock} to break it")
    if host == socket.gethostname() and _alive(pid):
        return (f"another process of this machine (process {pid}, started {started}) is computing this run; this "
                f"one takes its record as soon as it is written")
    where = "this machine, no longer running" if host == socket.gethostname() else f"host {host}"
    return (f"a process of {where} (host {host}, process {pid}, started {started}, refreshed {refreshed:.0f} s ago) "
            f"claimed this run; if that process is gone, delete the lock file {lock} to break it (a lock not "
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


class Busy(RuntimeError):
    """Another live process holds the command lock that :func:`exclusive` asked for; the message is one line naming
    the folder, the lock file and its holder."""


def command_lock(folder: Path | str) -> Path:
    """The lock file of a command that writes ``folder``: ``<repo>/.cache/locks/<folder's name>-<hash>.lock`` (one
    per resolved folder, in the git-ignored ``.cache/``; nothing is written into ``folder`` itself)."""
    import hashlib
    import re

    from fedlib.lab.paths import REPO_ROOT
    resolved = Path(folder).resolve()
    try:
        label = str(resolved.relative_to(REPO_ROOT)) or "repo"
    except ValueError:
        label = resolved.name or "root"
    label = re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_")[:60] or "repo"
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:10]
    return REPO_ROOT / ".cache" / "locks" / f"{label}-{digest}.lock"


@contextlib.contextmanager
def exclusive(folder: Path | str, what: str, stale_s: float = STALE_S):
    """One writer of ``folder`` at a time: hold :func:`command_lock` of ``folder`` (a lock as the store's,
    refreshed by :class:`Heartbeat` and taken over when its holder died) while the block runs, so that two builds
    started at once never write one folder. ``what`` names the command in the refusal.

    Raises:
        Busy: another live process holds the lock (nothing was done); the message names it and the folder.
    """
    lock = command_lock(folder)
    lock.parent.mkdir(parents=True, exist_ok=True)
    if not try_acquire(lock, stale_s):
        raise Busy(f"{what} is already writing {folder} in another process: {describe(lock)}; wait for it to finish")
    try:
        with Heartbeat(lock):
            yield lock
    finally:
        release(lock)
