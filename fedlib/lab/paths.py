"""Where fedlib reads and writes: one rule for every output folder, the same from Jupyter, papermill and
``run_all.sh``.

**Committed outputs** are the figures and metrics in git: ``figures/`` (profile ``quick``) and
``figures/<profile>/`` (``converged``, ``paper``), with the result store in ``figures/<profile>/store/``
(``quick``, ``converged``, ``paper``: at ``quick`` it holds the runs the committed quick metrics come from, so a
redraw or the site never trains them). They are written only when asked for:

- by the regeneration command (``./run_all.sh`` sets ``FEDLIB_COMMIT=1`` for the notebooks it runs), or
- explicitly, with ``FEDLIB_COMMIT=1`` in the environment, or by naming a folder in ``FEDLIB_FIGURES_DIR`` /
  ``FEDLIB_CACHE_DIR``.

At ``quick`` the committed store holds HIST's runs only (:data:`QUICK_STORE_PAPERS`): DTFL's and HASFL's verdicts
are judged at ``converged``, so the regeneration writes their quick records to ``.cache/results`` and ``git
status`` stays clean of them.

**Any other run** (a notebook opened in Jupyter, a papermill call, a script) writes its figures and metrics to
the scratch folder ``.scratch/<profile>/`` (git ignores it; :func:`setup_notebook
<fedlib.lab.notebooks.setup_notebook>` prints it) and its new records to ``.cache/results``. It still *reads*
the profile's committed store (``figures/<profile>/store/``) first, so a redraw of the converged figures from
Jupyter is a cache hit, and a changed parameter trains only what is missing -- into ``.cache/results``.

The profile comes from the notebook's ``profile`` parameter (:func:`use_profile`, called by
``setup_notebook``); library code that never calls it works at ``quick``.

Environment variables (each overrides the rule above):

- ``FEDLIB_FIGURES_DIR``: PNG/PDF figures; metrics go to ``<that>/metrics`` (``FEDLIB_METRICS_DIR`` overrides).
- ``FEDLIB_CACHE_DIR``: the result store (no committed store is read beside it).
- ``FEDLIB_DATA_DIR`` (default ``<repo>/data``): torchvision dataset roots.
- ``FEDLIB_COMMIT``: ``1`` writes the profile's committed folders.
"""
from __future__ import annotations

from fedlib.data.tensors import data_dir  # noqa: F401  (the data folder is the method layer's: re-exported)

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PROFILES = ("smoke", "quick", "converged", "paper")
#: profiles with a committed result store in ``figures/<profile>/store/``
STORED_PROFILES = ("quick", "converged", "paper")

PAPERS = ("hist", "dtfl", "hasfl")
#: the papers whose ``quick`` records are committed (``figures/quick/store/``): HIST, whose verdicts are judged at
#: quick. DTFL's and HASFL's verdicts are judged at ``converged``: their quick runs, which ``./run_all.sh`` trains to
#: draw the quick figures, are written to ``.cache/results/`` (git ignores it), never into ``figures/``.
QUICK_STORE_PAPERS = ("hist",)

_profile = "quick"
_paper: str | None = None


def _check_profile(profile) -> str:
    if not isinstance(profile, str) or profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    return profile


def use_profile(profile: str, paper: str | None = None) -> str:
    """Make ``profile`` the one whose folders :func:`figures_dir`, :func:`cache_dir` and
    :func:`read_only_stores` follow in this process, and ``paper`` (``setup_notebook`` names it; None: any) the
    paper whose records :func:`cache_dir` takes (:func:`writes_committed_store`); returns the profile.

    Raises:
        ValueError: ``profile`` is not one of :data:`PROFILES`; ``paper`` is not one of :data:`PAPERS` or None.
    """
    global _profile, _paper
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)} or None, got {paper!r}")
    _profile, _paper = _check_profile(profile), paper
    return _profile


def active_profile() -> str:
    """The profile set by :func:`use_profile` (``quick`` until then)."""
    return _profile


def writes_committed_store(profile: str, paper: str | None) -> bool:
    """Whether a committing run (:func:`committing`) of ``paper`` at ``profile`` writes its new records into the
    committed store ``figures/<profile>/store/``: at quick only for :data:`QUICK_STORE_PAPERS` (or when no paper is
    named), at converged and paper always, at smoke never (it has no committed store)."""
    profile = _check_profile(profile)
    if profile not in STORED_PROFILES:
        return False
    return profile != "quick" or paper is None or paper in QUICK_STORE_PAPERS


TRUE, FALSE = ("1", "true", "yes"), ("", "0", "false", "no")


def env_flag(name: str, meaning: str) -> bool:
    """The boolean environment variable ``name``, read one way everywhere: ``1`` / ``true`` / ``yes`` (any case) is
    on, ``0`` / ``false`` / ``no`` / unset / empty is off.

    Raises:
        ValueError: any other value; the message names the variable, what it turns on (``meaning``) and the values
        allowed.
    """
    raw = os.environ.get(name, "").strip().lower()
    if raw in FALSE:
        return False
    if raw in TRUE:
        return True
    raise ValueError(f"{name} must be 1, true or yes ({meaning}) or 0, false, no or unset, got {raw!r}")


def committing() -> bool:
    """Whether this process writes the committed folders: ``FEDLIB_COMMIT`` is on (:func:`env_flag`).

    Raises:
        ValueError: ``FEDLIB_COMMIT`` holds anything but ``0``/``1``/``true``/``false``/``yes``/``no``/empty.
    """
    return env_flag("FEDLIB_COMMIT", "write the committed figures and store")


def committed_figures_dir(profile: str) -> Path | None:
    """The committed figures folder of ``profile``: ``figures/`` (quick), ``figures/<profile>/`` (converged,
    paper), None (smoke: nothing of it is committed)."""
    profile = _check_profile(profile)
    if profile == "smoke":
        return None
    return REPO_ROOT / "figures" if profile == "quick" else REPO_ROOT / "figures" / profile


def committed_store_dir(profile: str) -> Path | None:
    """The committed result store of ``profile``: ``figures/<profile>/store/`` for quick, converged and paper, else
    None (smoke)."""
    profile = _check_profile(profile)
    return REPO_ROOT / "figures" / profile / "store" if profile in STORED_PROFILES else None


def scratch_dir(profile: str | None = None) -> Path:
    """``.scratch/<profile>/`` (git ignores it): figures and metrics of a run that does not commit (not created
    here)."""
    return REPO_ROOT / ".scratch" / _check_profile(profile or _profile)


def _dir(path: Path | str) -> Path:
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"{path} is a file; fedlib needs a folder there")
    path.mkdir(parents=True, exist_ok=True)
    return path


def figures_dir() -> Path:
    """Folder for figures (created if missing): ``$FEDLIB_FIGURES_DIR``; else the active profile's committed
    folder when :func:`committing` (smoke has none: its scratch folder); else :func:`scratch_dir`."""
    if os.environ.get("FEDLIB_FIGURES_DIR"):
        return _dir(os.environ["FEDLIB_FIGURES_DIR"])
    committed = committed_figures_dir(_profile)
    return _dir(committed if committing() and committed is not None else scratch_dir())


def metrics_dir() -> Path:
    """Folder for per-notebook metrics JSON files: ``$FEDLIB_METRICS_DIR`` or ``figures_dir()/metrics``."""
    return _dir(os.environ.get("FEDLIB_METRICS_DIR") or figures_dir() / "metrics")


def cache_dir() -> Path:
    """Root of the result store, where new records are written: ``$FEDLIB_CACHE_DIR``; else the active profile's
    committed store when :func:`committing` and the active paper's records of that profile are committed
    (:func:`writes_committed_store`); else ``<repo>/.cache/results``."""
    if os.environ.get("FEDLIB_CACHE_DIR"):
        return _dir(os.environ["FEDLIB_CACHE_DIR"])
    committed = committed_store_dir(_profile) if writes_committed_store(_profile, _paper) else None
    return _dir(committed if committing() and committed is not None else REPO_ROOT / ".cache" / "results")


def read_only_stores() -> list[Path]:
    """Stores read (never written) after :func:`cache_dir`: the active profile's committed store when it exists
    and is not :func:`cache_dir` itself; none when ``$FEDLIB_CACHE_DIR`` is set."""
    if os.environ.get("FEDLIB_CACHE_DIR"):
        return []
    committed = committed_store_dir(_profile)
    if committed is None or not committed.is_dir() or committed.resolve() == cache_dir().resolve():
        return []
    return [committed]


