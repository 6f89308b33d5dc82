"""Moved to :mod:`fedlib.lab.site` (``python -m fedlib.lab.site``)."""
import sys

_MOVED = "fedlib.core.site moved: run python -m fedlib.lab.site"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
