"""``python -m fedlib.prune``: a short name for ``python -m fedlib.lab.prune`` (:mod:`fedlib.lab.prune`)."""
import sys

if __name__ == "__main__":
    from fedlib.lab.prune import main
    sys.exit(main())
