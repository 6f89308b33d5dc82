"""Moved to :mod:`fedlib.lab.hasfl.runs` (HASFL's training plan and runs are the lab's)."""
