"""``python -m fedlib.data <name> [--download]``: prepare a dataset ahead of time (see :func:`.datasets.main`)."""
import sys

from .datasets import main

sys.exit(main())
