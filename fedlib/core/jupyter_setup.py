"""Moved to :mod:`fedlib.lab.jupyter_setup` (``python -m fedlib.lab.jupyter_setup``)."""
import sys

_MOVED = "fedlib.core.jupyter_setup moved: run python -m fedlib.lab.jupyter_setup"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
