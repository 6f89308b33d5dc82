"""Where fedlib reads and writes: one place for every output folder.

Environment variables override the defaults, so that tests and smoke runs never write over the committed
``figures/``:

- ``FEDLIB_FIGURES_DIR`` (default ``<repo>/figures``): PNG/PDF figures; metrics go to ``<that>/metrics``.
- ``FEDLIB_CACHE_DIR`` (default ``<repo>/.cache/results``): the result store.
- ``FEDLIB_DATA_DIR`` (default ``<repo>/data``): torchvision dataset roots.
"""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _dir(env: str, default: Path) -> Path:
    path = Path(os.environ.get(env) or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


def figures_dir() -> Path:
    """Folder for figures (created if missing); ``$FEDLIB_FIGURES_DIR`` or ``<repo>/figures``."""
    return _dir("FEDLIB_FIGURES_DIR", REPO_ROOT / "figures")


def metrics_dir() -> Path:
    """Folder for per-notebook metrics JSON files: ``figures_dir()/metrics``."""
    return _dir("FEDLIB_METRICS_DIR", figures_dir() / "metrics")


def cache_dir() -> Path:
    """Root of the result store; ``$FEDLIB_CACHE_DIR`` or ``<repo>/.cache/results``."""
    return _dir("FEDLIB_CACHE_DIR", REPO_ROOT / ".cache" / "results")


def data_dir() -> Path:
    """Root under which torchvision datasets live; ``$FEDLIB_DATA_DIR`` or ``<repo>/data``."""
    return _dir("FEDLIB_DATA_DIR", REPO_ROOT / "data")
