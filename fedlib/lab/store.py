"""Result store: each run is cached on disk under a key of its full config (with its seed) and a hash of the
fedlib source that computes it.

- The key covers ``config`` and :func:`source_hash` of the modules named by the store's ``code``: editing a
  paper's computing modules invalidates that paper's runs, not the others' (a HIST store hashes the modules of
  ``fedlib.hist`` that compute records, :data:`RECORD_CODE` of ``fedlib.core`` and ``fedlib.data``). This module,
  the paths, locks, process pool, notebook runner and verification are not hashed: no record's value depends on
  them. The source enters as syntax trees without docstrings and without file names (:func:`source_hash`): a
  docstring, comment or layout edit, or a file moved, keeps every key. A rerun of the same config and code is a
  cache hit; ``force=True`` recomputes and overwrites.
- A store may read, after its own folder, read-only stores (``read_only``; by default the active profile's
  committed store when the run does not write it: :func:`fedlib.lab.paths.read_only_stores`). A record found
  there is returned as is; a missing one is computed and written to the store's own folder only.
- Records are stored in an envelope ``{"schema", "key", "config", "code_hash", "record"}``. Every load checks
  that the file is valid JSON with this schema and that the stored config and code hash are the requested ones:
  a truncated, empty or foreign file raises :class:`CorruptRecordError` naming the file, and
  :meth:`ResultStore.get_or_run` warns and recomputes that run alone. A record of a newer fedlib (a higher
  ``schema``, e.g. in a store shared between checkouts) is never overwritten: it raises
  :class:`NewerRecordError` naming the file, before any work.
- Writes are atomic (a temporary file in the same folder, then ``os.replace``): a run killed mid-way leaves no
  half-written result, concurrent workers writing the same key leave one valid record (the last), and a sweep
  interrupted between runs resumes without redoing the finished ones. Temporary files older than
  ``stale_tmp_s`` (a writer that was killed) are removed when a store is opened; files are world-readable
  (0644), so a shared cache folder works for a whole group.
- Records must be JSON without NaN or infinity: a non-finite number is refused before anything is written.
- Concurrent callers of one config (pool workers, Dask, two notebooks) compute it once: the first holds
  ``<key>.lock`` (:mod:`fedlib.lab.runlock`: an OS file lock, released when its holder ends; the empty file
  stays), the others wait for its record or, inside
  :func:`fedlib.lab.runlock.deferring` (:func:`fedlib.lab.map_jobs`'s workers), step aside to run other jobs.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Callable, Sequence

from fedlib.lab import paths, runlock
from fedlib.lab.code_hash import source_hash
from fedlib.lab.datasets import dataset_key
from fedlib.lab.own_components import load_own
from fedlib.lab.runlock import RunInProgress
from fedlib.core.validate import ParameterTypeError, check_float

SCHEMA = 1
DEFAULT_CODE = ("fedlib",)
RECORD_CODE = ("fedlib.core.estimators", "fedlib.core.seeding", "fedlib.core.validate")
"""The modules of ``fedlib.core`` whose source a record's value can depend on: the shared estimators, the seed
streams and the input checks (``check_array`` converts dtypes). Every paper's store hashes them; the rest of
``fedlib.core`` (this store, paths, run locks, the process pool, notebook parameters and runner, verification,
the roofline benchmark) is infrastructure and is not hashed."""


class CacheMiss(LookupError):
    """A record is missing while ``FEDLIB_CACHE_ONLY=1`` forbids computing it (the results site's build)."""


def cache_only() -> bool:
    """Whether ``FEDLIB_CACHE_ONLY`` is on (``1`` / ``true`` / ``yes``, read as every boolean variable is:
    :func:`fedlib.lab.paths.env_flag`): :meth:`ResultStore.get_or_run` then returns stored records only and raises
    :class:`CacheMiss` instead of computing one (a build that must never train).

    Raises:
        ValueError: ``FEDLIB_CACHE_ONLY`` holds a value that is neither on nor off (the message names it)."""
    return paths.env_flag("FEDLIB_CACHE_ONLY", "return stored records only, never compute one")


class NewerRecordError(ValueError):
    """A record written by a newer fedlib (a higher envelope ``schema``): left as it is, never overwritten nor
    recomputed here. The message names the file and the schema."""


def _newer(path: Path, schema: int) -> NewerRecordError:
    return NewerRecordError(f"{path}: written by a newer fedlib (record schema {schema}, this fedlib reads {SCHEMA}): "
                            f"upgrade, or use another cache folder (FEDLIB_CACHE_DIR); the record is left as it is")


def is_record(env) -> bool:
    """Whether ``env`` (a file's parsed JSON) is a result store's envelope, of any schema: a dict with ``schema``
    (an int), ``key``, ``config``, ``code_hash`` and ``record``."""
    return (isinstance(env, dict) and type(env.get("schema")) is int and isinstance(env.get("record"), dict)
            and {"key", "config", "code_hash"} <= set(env))


class CorruptRecordError(ValueError):
    """A stored record that cannot be used: unreadable JSON, wrong schema, or another config's or code's record.
    The message names the file."""


def component_key(fn, name: str) -> dict:
    """The key entry of a component of your own ``fn`` (a runner, a scheduler...): ``{"path": "module:qualname",
    "code": source_hash([module])}``. A record computed with it carries both in its config, so a record of one
    component is never returned for another, and an edit of its module computes new records (its own source is
    hashed as the project's is).

    Raises:
        ValueError: ``fn`` cannot be imported by that path, which worker processes need and the key names (a
            lambda, a closure, a ``functools.partial``, a method, or a function defined in ``__main__`` or a
            notebook); the message names ``name`` and says to define it at the top level of a module of your own.
            A function of an earlier version of its module (imported again since, after an edit: its code differs
            from the module's current one) is refused too; the same code imported again (a fresh module object)
            is the same function.
    """
    import importlib

    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    hint = (f"{name} must be a function defined at the top level of a module of your own (a .py file on the Python "
            f"path), so that its records are keyed by its import path and source and worker processes can import "
            f"it; got {fn!r}")
    if not isinstance(mod, str) or not isinstance(qual, str) or "<" in qual or "." in qual or mod == "__main__":
        raise ValueError(hint)
    try:
        found = getattr(importlib.import_module(mod), qual, None)
    except ImportError:
        found = None
    if found is None:
        raise ValueError(hint)
    if found is not fn and getattr(found, "__code__", None) != getattr(fn, "__code__", False):
        raise ValueError(f"{name} {mod}:{qual}: the function given is not its module's current one (the module was "
                         f"edited since it was imported): import it again, or name it by its path '{mod}:{qual}'")
    return {"path": f"{mod}:{qual}", "code": source_hash([mod])}


def path_key(path: str) -> dict:
    """The key entry of a component of your own named by import path ``"package.module:name"`` (a partition, a
    scheduler): ``{"path": path, "code": source_hash([module])}``; a record it produces carries it in its config.

    Raises:
        ValueError: ``path`` is not ``"module:name"`` or its module cannot be found."""
    if not isinstance(path, str) or ":" not in path:
        raise ValueError(f"path must be an import path 'package.module:name', got {path!r}")
    return {"path": path, "code": source_hash([path.partition(":")[0]])}


def _canonical(obj, what: str) -> str:
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:
        raise ValueError(f"{what} must not hold NaN or infinity: {_first_non_finite(obj) or exc}") from None
    except TypeError as exc:
        raise TypeError(f"{what} is not JSON-serialisable: {exc}") from None


def _first_non_finite(obj, path: str = "") -> str | None:
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return f"{path or '<root>'} = {obj}"
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    else:
        return None
    for k, v in items:
        found = _first_non_finite(v, f"{path}/{k}")
        if found:
            return found
    return None


def with_own_dataset(config):
    """``config`` with ``"own_dataset"`` (:func:`fedlib.lab.datasets.dataset_key`: the path and its module's source
    hash) added where its top-level ``"dataset"`` is an import path and it carries none yet, so that every record
    on a dataset of your own is keyed by its source, whichever code built the config (a pilot's config built in a
    notebook included); any other config is returned as it is (the built-in datasets' keys do not change)."""
    name = config.get("dataset") if isinstance(config, dict) else None
    if not (isinstance(name, str) and ":" in name) or "own_dataset" in config:
        return config
    return {**config, **dataset_key(name)}


def with_own_model(config):
    """``config`` with ``"own_model"`` (``{"path", "code"}``: the path and the hash of its module's source,
    :func:`fedlib.lab.own_components.load_own`, which imports the module again after an edit so that what runs is
    the source keyed) added where its top-level ``"model"`` is an import path (a split model of your own,
    :func:`fedlib.split.models.make_model`) and it carries none yet; any other config is returned as it is (the
    built-in models' keys do not change).

    Raises:
        ValueError / ParameterTypeError: the path cannot be imported or names nothing (naming it)."""
    name = config.get("model") if isinstance(config, dict) else None
    if not (isinstance(name, str) and ":" in name) or "own_model" in config:
        return config
    _, code = load_own(name, "model")
    return {**config, "own_model": {"path": name, "code": code}}


def with_own(config):
    """``config`` keyed by the source of its components of your own: :func:`with_own_dataset`, then
    :func:`with_own_model`."""
    return with_own_model(with_own_dataset(config))


def config_key(config: dict, code: str = "") -> str:
    """SHA-256 (hex, 20 chars) of the canonical JSON of ``{"config": config, "code": code}``; key order does not
    matter. ``config`` must hold the seed; ``code`` is a :func:`source_hash`.

    Raises:
        TypeError: ``config`` is not a dict or not JSON-serialisable.
        ValueError: ``config`` holds NaN or infinity.
    """
    if not isinstance(config, dict):
        raise ParameterTypeError(f"config must be a dict, got {type(config).__name__}")
    blob = _canonical({"config": config, "code": code}, "config")
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


class ResultStore:
    """A folder of ``<key>.json`` result records (default :func:`fedlib.lab.paths.cache_dir`).

    Args:
        root: the folder (created if missing).
        code: modules / packages whose source is hashed into every key (default the whole ``fedlib``).
        stale_tmp_s: temporary files older than this (seconds) are removed on opening (a killed writer's).
        poll_s: seconds between checks while waiting for another writer's record (its run's lock,
            :mod:`fedlib.lab.runlock`, is the operating system's: released when that writer ends, however it ends).
        read_only: folders of stores read after ``root`` and never written (a committed store). Default: with
            ``root=None``, :func:`fedlib.lab.paths.read_only_stores`; with a ``root`` given, none.
    """

    def __init__(self, root: str | Path | None = None, code: Sequence[str] = DEFAULT_CODE,
                 stale_tmp_s: float = 3600.0, poll_s: float = 0.5,
                 read_only: Sequence[str | Path] | None = None):
        if root is not None and not isinstance(root, (str, os.PathLike)):
            raise ParameterTypeError(f"root must be a folder path (str or pathlib.Path) or None, got {root!r}")
        if read_only is None:
            read_only = paths.read_only_stores() if root is None else ()
        if isinstance(read_only, (str, os.PathLike)) or not all(isinstance(r, (str, os.PathLike)) for r in read_only):
            raise ParameterTypeError(f"read_only must be a list of folder paths, got {read_only!r}")
        self.root = Path(root) if root is not None else paths.cache_dir()
        if self.root.exists() and not self.root.is_dir():
            raise NotADirectoryError(f"root: {self.root} is a file; the result store needs a folder")
        self.root.mkdir(parents=True, exist_ok=True)
        self.read_only = tuple(Path(r) for r in read_only if Path(r).resolve() != self.root.resolve())
        self.code = tuple(code) if not isinstance(code, str) else code
        self.code_hash = source_hash(self.code)
        check_float("stale_tmp_s", stale_tmp_s, 0, allow_inf=True)
        if isinstance(poll_s, bool) or not isinstance(poll_s, (int, float)) or not 0 < poll_s < float("inf"):
            raise ValueError(f"poll_s must be a finite number of seconds > 0, got {poll_s!r}")
        self.poll_s = float(poll_s)
        now = time.time()
        for tmp in self.root.glob(".tmp-*"):
            try:
                if now - tmp.stat().st_mtime > stale_tmp_s:
                    tmp.unlink()
            except FileNotFoundError:      # another worker finished or removed it meanwhile
                pass
            except OSError:                # a read-only store (a shared cache): left there, reading still works
                pass

    def __getstate__(self):
        return {"root": self.root, "code": self.code, "code_hash": self.code_hash,
                "poll_s": self.poll_s, "read_only": self.read_only}

    def __setstate__(self, state):
        # a worker (process pool, Dask) checks that it runs the same fedlib source as the process that sent it
        self.__dict__.update(state)
        self.read_only = tuple(state.get("read_only", ()))
        mine = source_hash(self.code)
        if mine != self.code_hash:
            raise RuntimeError(f"this worker's source of {self.code} hashes to {mine}, the sender's to "
                               f"{self.code_hash}: run the same fedlib checkout on every worker")

    def key(self, config: dict) -> str:
        """The key of ``config`` under this store's code hash (:func:`config_key`); a config whose ``dataset`` is a
        dataset or model of your own (an import path) is keyed by its module's source too (:func:`with_own`)."""
        return config_key(with_own(config), self.code_hash)

    def path(self, config: dict) -> Path:
        """File of ``config``'s record: ``<root>/<key>.json``."""
        return self.root / f"{self.key(config)}.json"

    def has(self, config: dict) -> bool:
        """Whether a file for ``config`` exists here or in a read-only store (it may still be corrupt:
        :meth:`load` checks)."""
        name = self.path(config).name
        return any((folder / name).is_file() for folder in (self.root, *self.read_only))

    def with_code(self, code: Sequence[str]) -> "ResultStore":
        """A store over the same folders (own and read-only) that hashes ``code`` instead."""
        return ResultStore(self.root, code=code, poll_s=self.poll_s, read_only=self.read_only)

    def load(self, config: dict) -> dict:
        """The stored record for ``config`` (with ``store_key`` added).

        Raises:
            KeyError: no record (run the experiments notebook first); the message names the config and file.
            NewerRecordError: the file holds a record of a newer fedlib (a higher schema; never overwritten).
            CorruptRecordError: the file is not valid JSON, has another schema, or holds another config's or
                code's record; the message names the file.
        """
        return self._read(self.root / f"{self.key(config)}.json", _canonical(config, "config"))

    def _read(self, path: Path, want: str) -> dict:
        """:meth:`load` of the record file ``path`` whose config's canonical JSON is ``want``."""
        for folder in self.read_only:                  # own folder first, then the read-only stores
            if not path.is_file() and (folder / path.name).is_file():
                path = folder / path.name
        try:
            text = path.read_text()
        except FileNotFoundError:
            where = ", ".join(str(p / path.name) for p in (self.root, *self.read_only))
            raise KeyError(f"no stored result for config {want} (looked for {where}); run the experiments "
                           f"notebook or fedlib's sweep first") from None
        try:
            env = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CorruptRecordError(f"{path}: not valid JSON ({exc.msg} at char {exc.pos}; "
                                     f"{len(text)} bytes)") from None
        if is_record(env) and env["schema"] > SCHEMA:
            raise _newer(path, env['schema'])
        if not isinstance(env, dict) or env.get("schema") != SCHEMA or not isinstance(env.get("record"), dict):
            raise CorruptRecordError(f"{path}: not a fedlib result record of schema {SCHEMA}")
        if _canonical(env.get("config"), "stored config") != want:
            raise CorruptRecordError(f"{path}: holds the record of another config ({env.get('config')})")
        if env.get("code_hash") != self.code_hash:
            raise CorruptRecordError(f"{path}: computed by other code ({env.get('code_hash')} != {self.code_hash})")
        return dict(env["record"], store_key=path.stem)

    def save(self, config: dict, record: dict) -> Path:
        """Write ``record`` for ``config`` atomically (mode 0644); returns the file path.

        Raises:
            TypeError: ``record`` is not a dict or not JSON-serialisable.
            ValueError: ``record`` or ``config`` holds NaN or infinity (nothing is written).
        """
        path = self.path(config)
        return self._write(path, {"key": path.stem, "config": config}, record)

    def _write(self, path: Path, head: dict, record: dict) -> Path:
        """:meth:`save` into ``path``; ``head``: the envelope's ``key`` and ``config``."""
        if not isinstance(record, dict):
            raise TypeError(f"record must be a dict, got {type(record).__name__}")
        env = {"schema": SCHEMA, **head, "code_hash": self.code_hash,
               "record": {k: v for k, v in record.items() if k != "store_key"}}
        blob = _canonical(env, "record")
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(blob)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    def get_or_run(self, config: dict, run: Callable[[], dict], force: bool = False) -> dict:
        """The stored record for ``config``, or ``run()``'s record, saved first (always when ``force``).

        With ``FEDLIB_CACHE_ONLY=1`` (:func:`cache_only`) a missing record raises :class:`CacheMiss` and nothing
        runs. A corrupt or mismatched file is reported (``warnings.warn`` naming the file and the problem) and that
        run alone is recomputed and overwritten. Before ``run()`` the caller locks ``<key>.lock``
        (:mod:`fedlib.lab.runlock`); while another live writer holds it, the caller polls every ``poll_s`` until
        that writer's record appears (and returns it), or raises :class:`fedlib.lab.runlock.RunInProgress` at
        once inside :func:`fedlib.lab.runlock.deferring`. ``force`` computes without claiming or waiting.
        """
        config = with_own(config)                     # a dataset or model of your own: keyed by its source too
        key = self.key(config)                        # the config is read here once: key and canonical JSON
        path, want, head = self.root / f"{key}.json", _canonical(config, "config"), {"key": key, "config": config}
        if cache_only():
            rec = self._cached(path, want, set())
            if rec is None:
                raise CacheMiss(f"FEDLIB_CACHE_ONLY=1: no stored record for {path.name} in {self.root}"
                                f"{' or ' + ', '.join(map(str, self.read_only)) if self.read_only else ''}; config "
                                f"{want[:300]}")
            return rec
        if force:
            self._refuse_newer(path)
            self._write(path, head, run())
            return self._read(path, want)
        lock = path.with_suffix(".lock")
        warned: set = set()
        noted = None                                  # when the last note about waiting was printed
        while True:
            rec = self._cached(path, want, warned)
            if rec is not None:
                return rec
            held = runlock.try_acquire(lock)
            if held is not None:
                break
            if runlock.defer_requested():
                raise RunInProgress(f"another worker is computing this run (its lock: {lock})")
            if noted is None or time.monotonic() - noted >= runlock.NOTE_EVERY_S:
                noted = time.monotonic()
                print(f"waiting for another writer's record: {runlock.describe(lock)}", file=sys.stderr, flush=True)
            time.sleep(self.poll_s)
        try:
            rec = self._cached(path, want, warned)   # finished between the check and the claim
            if rec is not None:
                return rec
            record = run()
            self._write(path, head, record)
        finally:
            runlock.release(held)
        return self._read(path, want)

    @staticmethod
    def _refuse_newer(path: Path) -> None:
        """Raise :class:`NewerRecordError` when ``path`` holds a record of a newer fedlib (before any work)."""
        try:
            env = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return
        if is_record(env) and env["schema"] > SCHEMA:
            raise _newer(path, env['schema'])

    def _cached(self, path: Path, want: str, warned: set) -> dict | None:
        try:
            return self._read(path, want)
        except KeyError:
            return None
        except CorruptRecordError as exc:
            if str(exc) not in warned:
                warned.add(str(exc))
                warnings.warn(f"recomputing: {exc}", stacklevel=3)
            return None
