"""Figure and metrics helpers: figures are saved by name through :func:`savefig`, into one folder
(:func:`fedlib.lab.paths.figures_dir`); metrics through :func:`write_metrics` (``<figures>/metrics``).

No backend is forced: in Jupyter (and in the notebooks ``run_all.sh`` executes) figures show inline and are
embedded in the executed notebook; without a display matplotlib picks a non-interactive backend itself."""
from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from fedlib import __version__
from fedlib.lab import paths
from fedlib.lab.paths import env_flag
from fedlib.core.validate import ParameterTypeError, check_bool, check_str


class SavedFigures(list):
    """The paths :func:`savefig` wrote (a list of :class:`~pathlib.Path`). As a notebook cell's last value it shows
    nothing (the figure itself is shown inline), so no page holds a path of the machine that ran it."""

    def _ipython_display_(self):
        pass


def savefig(fig, name: str, formats: tuple[str, ...] = ("png", "pdf"), dpi: int = 150) -> SavedFigures:
    """Save ``fig`` as ``<figures_dir>/<name>.<fmt>`` for each format; returns the paths (:class:`SavedFigures`)."""
    out = SavedFigures()
    for fmt in formats:
        path = paths.figures_dir() / f"{name}.{fmt}"
        # no timestamp in the PDF, so an unchanged figure is an unchanged file
        metadata = {"CreationDate": None} if fmt == "pdf" else None
        fig.savefig(path, dpi=dpi, bbox_inches="tight", metadata=metadata)
        out.append(path)
    return out


NO_FOOTER = "FEDLIB_NO_FOOTER"
"""The environment variable that leaves the provenance footer out of every figure (:func:`caption`), for a figure
exported into a paper: ``FEDLIB_NO_FOOTER=1`` (read by :func:`fedlib.lab.paths.env_flag`); unset, it is drawn."""


def caption(fig, dataset: str, profile: str, differs: str = "") -> None:
    """Write the provenance line under a figure: dataset, profile, what differs from the paper, version. Nothing
    when ``FEDLIB_NO_FOOTER`` is on (:data:`NO_FOOTER`): the figure as a paper would show it.

    Raises:
        ValueError: ``FEDLIB_NO_FOOTER`` holds anything but ``0``/``1``/``true``/``false``/``yes``/``no``/empty.
    """
    if env_flag(NO_FOOTER, "leave the provenance footer out of the figures"):
        return
    text = f"dataset: {dataset} · profile: {profile} · fedlib {__version__}"
    if differs:
        text += f"\ndiffers from the paper: {differs}"
    fig.text(0.5, -0.02, text, ha="center", va="top", fontsize=7, color="0.3", wrap=True)


def _non_finite(value, where: str):
    """The first path in ``value`` (nested dicts / lists / arrays) holding NaN or ±inf, as ``(path, value)``."""
    if isinstance(value, dict):
        for k, v in value.items():
            found = _non_finite(v, f"{where}.{k}" if where else str(k))
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = _non_finite(v, f"{where}[{i}]")
            if found:
                return found
    elif isinstance(value, np.ndarray) and value.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(value))
        if len(bad):
            return f"{where}[{int(bad[0])}]", value.reshape(-1)[bad[0]]
    elif isinstance(value, (float, np.floating)) and not math.isfinite(value):
        return where, value
    return None


def write_metrics(name: str, payload: dict, require_runs: bool = False) -> Path:
    """Write ``payload`` as ``<metrics_dir>/<name>.json`` (sorted keys, indented); returns the path.

    Every float is written at the precision it is measured at (:func:`measured`): accuracies to 1e-4, times to
    1 ms, anything else to 6 significant digits, so a redraw writes the same file on every CPU.

    Metrics are what a reader compares with the paper, so nothing undefined is written: a NaN or ±inf anywhere in
    ``payload`` is refused (use ``None`` for "not reached" / "infeasible"). With ``require_runs=True`` (notebooks
    whose metrics are a sweep of runs: ``hist_1``, ``hist_2``, ``hasfl_3``), ``payload["runs"]`` must be a non-empty
    list: an empty sweep fails instead of writing empty metrics. Notebooks without runs (``hasfl_2``: ``"runs": []``)
    keep the default. Every ``data_source`` is written without absolute paths (:func:`portable_source`).
    Convention of the notebooks: ``notebook_wall_s`` is this execution's wall time (a redraw from the store takes
    seconds); a row's ``elapsed_s`` is its training record's own time, which a redraw keeps.

    Raises:
        ValueError: a non-finite value (the message names its path, e.g. ``runs[3].final_test_acc``); an empty or
            missing ``runs`` list with ``require_runs``; an empty ``name``.
        ParameterTypeError: ``name`` not a string, ``payload`` not a dict.
    """
    check_str("name", name)
    if "/" in name or "\\" in name:
        raise ValueError(f"name must be a file stem without folders, got {name!r}")
    if not isinstance(payload, dict):
        raise ParameterTypeError(f"payload must be a dict, got {type(payload).__name__}")
    check_bool("require_runs", require_runs)
    found = _non_finite(payload, "")
    if found:
        raise ValueError(f"metrics {name}: {found[0]} = {found[1]!r}; metrics must be finite numbers (None for "
                         f"undefined values)")
    if require_runs and (not isinstance(payload.get("runs"), list) or not payload["runs"]):
        raise ValueError(f"metrics {name}: runs must be a non-empty list (an empty sweep writes no metrics), got "
                         f"{payload.get('runs')!r}")
    path = paths.metrics_dir() / f"{name}.json"
    path.write_text(json.dumps(_portable(payload), indent=1, sort_keys=True, default=float) + "\n")
    return path


def portable_source(text: str) -> str:
    """A dataset's provenance without this machine's absolute paths: a folder inside the repository is given
    relative to it (``torchvision files in data/FashionMNIST/raw``), Debian's package by its name
    (``debian package dataset-fashion-mnist``), any other absolute folder by its last two parts."""
    root = str(paths.REPO_ROOT) + "/"
    if root in text:
        return text.replace(root, "")
    if text.startswith("debian package /usr/share/datasets/"):
        return "debian package dataset-" + text.rsplit("/", 1)[-1]
    head, sep, folder = text.partition(" /")
    if sep:
        return f"{head} .../" + "/".join(folder.rstrip("/").split("/")[-2:])
    return text


#: decimals of an accuracy (a fraction of test samples; 2,000 test images resolve 5e-4) or a difference of two
ACC_DECIMALS = 4
#: decimals of a time in seconds (a key ending in ``_s``, not ``_per_s``)
TIME_DECIMALS = 3
#: significant digits of any other float (ratios, estimated constants, simulated quantities): far finer than any
#: estimate here, and coarse enough that the last digits a CPU's reduction order changes never reach a metrics file
SIGNIFICANT = 6
#: quantities of a model's profile, computed from its layer shapes by exact arithmetic (the same on every CPU):
#: written as computed
EXACT = ("params", "MMACs", "layers", "forward_gflops", "backward_gflops", "client_gflops", "client_model_mb",
         "smashed_kib", "client_ratio", "server_ratio")


def measured(value: float, key: str) -> float:
    """``value`` at the precision the metric ``key`` is measured at: accuracies and their differences (a key
    holding ``acc``, or ``plateau_rise`` / ``plateau_spread``) to :data:`ACC_DECIMALS` decimals, times (a key
    ending in ``_s``; rates ``*_per_s`` excluded) to :data:`TIME_DECIMALS` decimals (1 ms), a model profile's
    exact quantities (:data:`EXACT`) as they are, any other float to :data:`SIGNIFICANT` significant digits. A redraw of the same records then writes the same metrics on every CPU
    (a reduction whose order depends on the CPU changes only the 15th-16th digit), except where a value sits on a
    rounding boundary.

    Raises:
        ParameterTypeError: ``value`` is not a real number or ``key`` not a string."""
    if isinstance(value, bool) or not isinstance(value, (float, int, np.floating, np.integer)):
        raise ParameterTypeError(f"value must be a real number, got {type(value).__name__}")
    if not isinstance(key, str):
        raise ParameterTypeError(f"key must be a string, got {type(key).__name__}")
    value = float(value)
    if not math.isfinite(value) or key in EXACT:
        return value
    if "acc" in key or key in ("plateau_rise", "plateau_spread"):
        return round(value, ACC_DECIMALS) + 0.0
    if key.endswith("_s") and not key.endswith("_per_s"):
        return round(value, TIME_DECIMALS) + 0.0
    return float(f"{value:.{SIGNIFICANT}g}") + 0.0


def _portable(value, key: str = ""):
    """``payload`` with every ``data_source`` string made :func:`portable_source` (committed metrics hold no
    absolute path) and every float at its measured precision (:func:`measured`, by the key that holds it)."""
    if isinstance(value, dict):
        return {k: _portable(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_portable(v, key) for v in value]
    if key == "data_source" and isinstance(value, str):
        return portable_source(value)
    if isinstance(value, (float, np.floating)):
        return measured(value, key)
    return value


def colour(i: int):
    """The i-th colour of matplotlib's ``tab10`` cycle (the project's figure palette)."""
    return plt.get_cmap("tab10")(i % 10)


def log_floor(values) -> float:
    """A log axis' lower limit: a third of the smallest positive value among ``values`` (``None`` and values <= 0
    skipped), so that no bar is a sliver at the axis' foot; 1.0 when there is none."""
    v = [x for x in values if x is not None and x > 0]
    return min(v) / 3 if v else 1.0


def _log_label(value: float, _pos=None) -> str:
    """A log-axis tick label: a plain number from 0.001 to 9999 (``0.5``, ``20``), else ``m×10^e`` in mathtext."""
    if value <= 0:
        return ""
    if 1e-3 <= value < 1e4:
        return f"{value:g}"
    exp = math.floor(math.log10(value) + 1e-9)
    mant = value / 10 ** exp
    return f"$10^{{{exp}}}$" if round(mant, 6) == 1 else f"${mant:g}\\times10^{{{exp}}}$"


def label_log_axis(ax, axis: str = "y") -> None:
    """Major ticks of a log ``axis`` ("x" or "y") at 1, 2 and 5 times each power of ten, labelled as plain numbers
    (``0.5``, ``2``, ``50``; ``2×10⁵`` beyond 9999), minor ticks off: a panel spanning less than a decade still
    reads (matplotlib's default labels only the powers of ten, so a flat panel can show a single tick). Where fewer
    than two such ticks fall inside the limits, matplotlib's locator falls back to evenly spaced ticks, labelled the
    same way.

    Raises:
        ValueError: ``axis`` not "x" or "y".
    """
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    target.set_major_formatter(FuncFormatter(_log_label))
    target.set_minor_locator(NullLocator())


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 4.2, height: float = 3.3,
               height_ratios: list | None = None):
    """``plt.subplots`` with the project's default panel size (inches); returns ``(fig, axes)``, axes ``[nrows,
    ncols]``. ``height_ratios``: each row's height in units of ``height`` (e.g. ``[1, 0.4]``: a panel row and a
    short row for legends below it); default every row ``height``.

    Raises:
        ValueError: ``height_ratios`` is not ``nrows`` numbers > 0.
    """
    ratios = [1.0] * nrows if height_ratios is None else list(height_ratios)
    if len(ratios) != nrows or not all(isinstance(r, (int, float)) and r > 0 for r in ratios):
        raise ValueError(f"height_ratios must be {nrows} numbers > 0, got {height_ratios!r}")
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * sum(ratios)), squeeze=False,
                             gridspec_kw={"height_ratios": ratios})
    return fig, axes

