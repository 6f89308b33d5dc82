"""Moved to :mod:`fedlib.lab.notebooks` (``python -m fedlib.lab.notebooks``)."""
import sys

_MOVED = "fedlib.core.notebooks moved: run python -m fedlib.lab.notebooks"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
