"""Moved to :mod:`fedlib.lab.prune` (``python -m fedlib.lab.prune``): the lab's commands live in the lab."""
import sys

_MOVED = "fedlib.prune moved: run python -m fedlib.lab.prune"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
