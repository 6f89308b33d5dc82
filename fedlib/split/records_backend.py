"""Moved into :func:`fedlib.split.records.run_split`: one record loop for every backend (its ``backend`` argument)."""
_MOVED = "fedlib.split.records_backend moved: call fedlib.split.run_split(..., backend=...)"
raise ImportError(_MOVED)
