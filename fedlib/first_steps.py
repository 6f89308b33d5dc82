"""``python -m fedlib.first_steps``: a short name for ``python -m fedlib.lab.first_steps`` (:mod:`fedlib.lab.first_steps`)."""
import sys

if __name__ == "__main__":
    from fedlib.lab.first_steps import main
    sys.exit(main())
