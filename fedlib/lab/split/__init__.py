"""The split engine's lab: its benchmark (:mod:`.bench`, ``python -m fedlib.bench sfl``) and the round timeline figure
(:mod:`.timeline`)."""
from fedlib.lab.split.reference import Reference

__all__ = ["Reference"]
