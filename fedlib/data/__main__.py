"""Moved to :mod:`fedlib.lab.data` (``python -m fedlib.lab.data``): the lab's commands live in the lab."""
import sys

_MOVED = "fedlib.data moved: run python -m fedlib.lab.data"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
