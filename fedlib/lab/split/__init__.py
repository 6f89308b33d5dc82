"""The split engine's lab: its benchmark (:mod:`.bench`, ``python -m fedlib.lab.bench sfl``), the round timeline figure
(:mod:`.timeline`), several runs stacked into one batched state (:mod:`.stacked_runs`, the batched sweep's) and the
literal per-device reference the tests hold the engine to (:mod:`.reference`)."""
from fedlib.lab.split.reference import Reference

__all__ = ["Reference"]
