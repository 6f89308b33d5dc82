"""Moved to :mod:`fedlib.lab.bench` (``python -m fedlib.lab.bench``): the lab's commands live in the lab."""
import sys

_MOVED = "fedlib.bench moved: run python -m fedlib.lab.bench"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
