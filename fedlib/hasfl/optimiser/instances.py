"""Moved to :mod:`fedlib.lab.hasfl.instances`: the random instances are the lab's (tests and benchmarks)."""
_MOVED = "fedlib.hasfl.optimiser.instances moved: the random instances are in the lab, fedlib.lab.hasfl.instances"
raise ImportError(_MOVED)
