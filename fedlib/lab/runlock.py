"""Claim a cached run before computing it, so that two workers that reach the same run at once do not both train it;
and claim a folder a command writes, so that two builds started at once never write one folder.

Both claims are operating-system file locks, :class:`filelock.FileLock` (``flock`` on the lock file).
:meth:`fedlib.lab.ResultStore.get_or_run` holds ``<key>.lock`` next to the record while ``run()`` computes it; a
second caller that finds it held either waits for the record (the default: poll until it appears) or, inside
:func:`deferring` (what :func:`fedlib.lab.map_jobs` sets in its pool workers on a job's first attempt), raises
:class:`RunInProgress` at once so that the pool can run another job first and retry this one at the end.
:func:`exclusive` holds :func:`command_lock` of a folder while a command writes it and refuses a second one
(:class:`Busy`).

The kernel releases a lock when the process holding it ends, however it ends (a killed worker, a crashed kernel):
no lock is ever stale, so none is judged by its age, its host or its process id, none is taken over, and none is
refreshed while its holder computes. (This replaces the project's own claim protocol of ``O_EXCL`` files with a
host, a pid and a heartbeat, whose staleness rules could take a live writer's lock, e.g. another host's fresh
lock or another user's live process: issue 70, Why 3. An OS lock leaves no such question for a local folder.)
The lock file stays in place when released (filelock's rule: every waiter must lock the same file; deleting it
while one waits would let two processes lock two different files); it is empty while free, and git ignores
``figures/*/store/*.lock``. Lock files are created group-writable (``0664``), so that a store folder shared by a
group can be locked by each of its members.

What is our own, and why (no library does it): the holder's line (host, process id, start time) written into the
lock file when it is taken (filelock's ``on_acquired``) and cleared when it is released, so that a waiting caller
says in words who computes the run (:func:`describe`; filelock says whether a lock is held, not by whom);
:func:`deferring`, a policy of our pool, not a lock; the lock's place (:func:`command_lock`).

A shared folder (NFS): the Linux NFS client implements ``flock`` as a lock held by the server (NFSv4, or NFSv3
with its lock manager), so the hosts that share a store exclude each other as the processes of one host do; a
killed process's lock is released at once, and a lock of a host that crashed when the server's lease of that host
expires (NFSv4: 90 s by default). On a mount without locking (``nolock`` or ``local_lock=flock``, some FUSE file
systems) a lock excludes only the processes of one host: two hosts may then both compute a run, a duplicate
computation, never a corrupt record (records are written atomically; one valid record stays). A file system
without ``flock`` at all gets filelock's soft lock (a marker file, with a warning and without the holder's line),
which a killed holder leaves behind until filelock breaks it.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import socket
import threading
import time
from pathlib import Path

import filelock

from fedlib.lab import paths

_STATE = threading.local()
#: seconds between the notes of a caller waiting for another writer's record
NOTE_EVERY_S = 300.0
#: the lock files' mode: the owner and the group read and write (a store shared by a group)
MODE = 0o664


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


def _write_holder(fd: int) -> None:
    """filelock's ``on_acquired``: the holder's line, written into the lock file it has just locked."""
    line = json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "time": time.time()}).encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, line, 0)


def try_acquire(lock: Path | str) -> filelock.BaseFileLock | None:
    """Lock ``lock`` for this process without waiting: the held lock (give it to :func:`release`, from the same
    thread; keep it referenced until then: filelock releases a lock whose object is collected), or None when another
    process (or another lock object of this one) holds it. The lock file is created if missing.

    Raises:
        OSError: the folder is not writable, or the lock file is another user's and not writable by this one.
    """
    held = filelock.FileLock(str(lock), mode=MODE, on_acquired=_write_holder)
    try:
        held.acquire(timeout=0)
    except filelock.Timeout:
        return None
    except OSError as err:               # no flock on this file system: filelock's soft lock, without our line
        if err.errno != errno.ENOSYS:
            raise
        held = filelock.FileLock(str(lock), mode=MODE)
        try:
            held.acquire(timeout=0)
        except filelock.Timeout:
            return None
    return held


def release(held: filelock.BaseFileLock) -> None:
    """Clear the holder's line and release the lock :func:`try_acquire` returned."""
    with contextlib.suppress(OSError):
        os.truncate(held.lock_file, 0)
    held.release()


def describe(lock: Path | str) -> str:
    """Who is computing the run that ``lock`` claims, in words: a process of this machine by its process id and
    start time (the common case, another worker of the same notebook: nothing to do but wait), or a process of
    another host (a store shared over NFS). Never raises (a lock released meanwhile, or one whose holder wrote no
    line, is described as such)."""
    try:
        owner = json.loads(Path(lock).read_text() or "null")
    except FileNotFoundError:
        owner = None
    except (ValueError, OSError):
        owner = {}
    if owner is None:
        return "the other writer has just finished (released meanwhile)"
    try:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(owner["time"])))
        host, pid = str(owner["host"]), int(owner["pid"])
    except (KeyError, TypeError, ValueError):
        return "another process is computing this run; this one takes its record as soon as it is written"
    if host == socket.gethostname():
        return (f"another process of this machine (process {pid}, started {started}) is computing this run; this "
                f"one takes its record as soon as it is written")
    return (f"a process of host {host} (process {pid}, started {started}) is computing this run; this one takes its "
            f"record as soon as it is written (the lock is released when that process ends)")


class Busy(RuntimeError):
    """Another live process holds the command lock that :func:`exclusive` asked for; the message is one line naming
    the folder and its holder."""


def command_lock(folder: Path | str) -> Path:
    """The lock file of a command that writes ``folder``: ``<repo>/.cache/locks/<folder's name>-<hash>.lock`` (one
    per resolved folder, in the git-ignored ``.cache/``; nothing is written into ``folder`` itself)."""
    resolved = Path(folder).resolve()
    try:
        label = str(resolved.relative_to(paths.REPO_ROOT)) or "repo"
    except ValueError:
        label = resolved.name or "root"
    label = re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_")[:60] or "repo"
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:10]
    return paths.REPO_ROOT / ".cache" / "locks" / f"{label}-{digest}.lock"


@contextlib.contextmanager
def exclusive(folder: Path | str, what: str):
    """One writer of ``folder`` at a time: hold :func:`command_lock` of ``folder`` (an OS lock, released when its
    holder ends however it ends) while the block runs. ``what`` names the command in the refusal.

    Raises:
        Busy: another live process holds the lock (nothing was done); the message names it and the folder.
    """
    lock = command_lock(folder)
    lock.parent.mkdir(parents=True, exist_ok=True)
    held = try_acquire(lock)
    if held is None:
        raise Busy(f"{what} is already writing {folder} in another process: {describe(lock)}; wait for it to finish")
    try:
        yield lock
    finally:
        release(held)
