"""``python -m fedlib.tables``: a short name for ``python -m fedlib.lab.tables`` (:mod:`fedlib.lab.tables`)."""
import sys

if __name__ == "__main__":
    from fedlib.lab.tables import main
    sys.exit(main())
