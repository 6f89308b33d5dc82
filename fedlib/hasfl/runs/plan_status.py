"""Moved to :mod:`fedlib.lab.hasfl.runs.plan_status` (``python -m fedlib.lab.hasfl.runs.plan_status``)."""
import sys

_MOVED = "fedlib.hasfl.runs.plan_status moved: run python -m fedlib.lab.hasfl.runs.plan_status"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
