"""Moved to :mod:`fedlib.lab.verify` (``python -m fedlib.lab.verify``)."""
import sys

_MOVED = "fedlib.core.verify moved: run python -m fedlib.lab.verify"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
