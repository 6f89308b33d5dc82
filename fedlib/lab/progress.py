"""Progress of long work, one line per event: a notebook starts, is still running (a heartbeat every minute), ends.

Used by the notebook runner (:mod:`fedlib.lab.notebooks`, behind ``./run_all.sh``) and the site build
(:mod:`fedlib.lab.site`). Nothing is printed per training step; a notebook's own output stays in its executed copy.

A start line names the notebook, its place in the selection, the time its last committed run took (the
``notebook_wall_s`` of the profile's committed metrics, :func:`last_wall_s`: a redraw from the store takes seconds, a
run that trains takes minutes) and what is left (the notebooks not started yet and their last committed times
together, where known)::

    [3/13] dtfl/dtfl_3_fig3 started (last committed run 3.9 min); 10 after it (last committed 52 min)
    [3/13] dtfl/dtfl_3_fig3 still running: 1 min so far (last committed run 3.9 min)
"""
from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import IO, Iterable

from fedlib.lab.paths import committed_figures_dir

HEARTBEAT_S = 60.0
"""Seconds between two heartbeat lines of a notebook that is still running."""


def metrics_file(notebook: str, profile: str) -> Path | None:
    """The committed metrics file of ``notebook`` at ``profile``: ``figures/metrics/<notebook>.json`` (quick),
    ``figures/<profile>/metrics/<notebook>.json`` (converged, paper); None at smoke (nothing committed)."""
    folder = committed_figures_dir(profile)
    return None if folder is None else folder / "metrics" / f"{notebook}.json"


def last_wall_s(notebook: str, profile: str) -> float | None:
    """The wall time in seconds of ``notebook``'s last committed run at ``profile`` (``notebook_wall_s`` of its
    committed metrics), or None when there is none."""
    path = metrics_file(notebook, profile)
    try:
        value = json.loads(path.read_text()).get("notebook_wall_s") if path is not None else None
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def duration(seconds: float) -> str:
    """``seconds`` in words a log reader takes in at once: ``42 s``, ``3.9 min``, ``1 h 12 min``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min" if seconds < 600 else f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min"


def start_line(label: str, index: int, total: int, last: float | None, later: Iterable[float | None],
               what: str = "started") -> str:
    """The line that opens a notebook's run: ``[index/total] label started (last committed run ...); n after it
    (last committed ...)``. ``later`` holds the last committed times of the notebooks still to come (None:
    unknown)."""
    later = list(later)
    line = f"[{index}/{total}] {label} {what}"
    if last is not None:
        line += f" (last committed run {duration(last)})"
    if later:
        known = [t for t in later if t is not None]
        line += f"; {len(later)} after it"
        if known:
            some = "" if len(known) == len(later) else f", {len(known)} of them"
            line += f" (last committed {duration(sum(known))}{some})"
    else:
        line += "; the last one"
    return line


class Heartbeat:
    """Context manager: while its block runs, write ``<prefix> still running: <n> min so far`` to ``stream`` every
    ``every`` seconds (a daemon thread), so that a log of long work gets a line at least once a minute.

    Raises:
        ValueError: ``every`` is not a number of seconds > 0.
    """

    def __init__(self, prefix: str, last: float | None = None, every: float = HEARTBEAT_S,
                 stream: IO[str] | None = None):
        if isinstance(every, bool) or not isinstance(every, (int, float)) or not 0 < every < float("inf"):
            raise ValueError(f"every must be a finite number of seconds > 0, got {every!r}")
        self.prefix, self.last, self.every, self.stream = prefix, last, float(every), stream
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name=f"progress {prefix}")
        self._t0 = time.monotonic()

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            elapsed = time.monotonic() - self._t0
            line = f"{self.prefix} still running: {duration(elapsed)} so far"
            if self.last is not None:
                line += f" (last committed run {duration(self.last)})"
            stream = self.stream or sys.stdout
            try:
                print(line, file=stream, flush=True)
            except (OSError, ValueError):     # the stream was closed under us: stop quietly
                return

    def __enter__(self) -> "Heartbeat":
        self._t0 = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
