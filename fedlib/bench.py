"""``python -m fedlib.bench``: a short name for ``python -m fedlib.lab.bench`` (:mod:`fedlib.lab.bench`)."""
import sys

if __name__ == "__main__":
    from fedlib.lab.bench import main
    sys.exit(main())
