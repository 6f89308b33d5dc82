"""Result store: each run is cached on disk under a key of its full config + seed + fedlib version.

- A rerun of the same config is a cache hit; ``force=True`` recomputes and overwrites.
- Writes are atomic (write to a temporary file in the same folder, then ``os.replace``): a run killed
  mid-way leaves no half-written result, and a sweep interrupted between runs resumes without redoing the
  finished ones.
- Records are JSON: they carry their config, seed, versions, curves and wall time (see each runner).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Callable

from .. import __version__
from . import paths


def config_key(config: dict, version: str = __version__) -> str:
    """SHA-256 (hex, 20 chars) of the canonical JSON of ``{"config": config, "fedlib": version}``.

    ``config`` must hold the seed; key order does not matter.

    Raises:
        TypeError: ``config`` is not JSON-serialisable.
    """
    blob = json.dumps({"config": config, "fedlib": version}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


class ResultStore:
    """A folder of ``<key>.json`` result records (default :func:`fedlib.core.paths.cache_dir`)."""

    def __init__(self, root: str | Path | None = None, version: str = __version__):
        self.root = Path(root) if root is not None else paths.cache_dir()
        self.root.mkdir(parents=True, exist_ok=True)
        self.version = version

    def path(self, config: dict) -> Path:
        """File of ``config``'s record: ``<root>/<config_key>.json``."""
        return self.root / f"{config_key(config, self.version)}.json"

    def has(self, config: dict) -> bool:
        """Whether a record for ``config`` is stored."""
        return self.path(config).is_file()

    def load(self, config: dict) -> dict:
        """The stored record for ``config``.

        Raises:
            KeyError: no record (run the experiments notebook first); the message names the config.
        """
        path = self.path(config)
        if not path.is_file():
            raise KeyError(f"no stored result for config {config} (looked for {path}); run the experiments "
                           f"notebook or fedlib's sweep first")
        return json.loads(path.read_text())

    def save(self, config: dict, record: dict) -> Path:
        """Write ``record`` for ``config`` atomically; returns the file path."""
        path = self.path(config)
        record = dict(record, store_key=path.stem)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(record, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    def get_or_run(self, config: dict, run: Callable[[], dict], force: bool = False) -> dict:
        """The stored record for ``config``, or ``run()``'s record, saved first (always when ``force``)."""
        if not force and self.has(config):
            return self.load(config)
        record = run()
        self.save(config, record)
        return self.load(config)
