"""Moved to :mod:`fedlib.lab.first_steps` (``python -m fedlib.lab.first_steps``): the lab's commands live in the lab."""
import sys

_MOVED = "fedlib.first_steps moved: run python -m fedlib.lab.first_steps"
if __name__ == "__main__":
    print(_MOVED, file=sys.stderr)
    sys.exit(1)
raise ImportError(_MOVED)
