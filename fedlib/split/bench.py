"""Moved to :mod:`fedlib.lab.split.bench` (``python -m fedlib.lab.split.bench``)."""
import sys

_MOVED = "fedlib.split.bench moved: run python -m fedlib.lab.split.bench"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
