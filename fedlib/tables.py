"""Moved to :mod:`fedlib.lab.tables` (``python -m fedlib.lab.tables``): the lab's commands live in the lab."""
import sys

_MOVED = "fedlib.tables moved: run python -m fedlib.lab.tables"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
