"""HIST's lab: the experiments behind its figures (cached sweeps through the result store), the figures, the paper's
claims and their verdicts, the checks of a notebook's parameters before any work and the explorer. The method itself
is :mod:`fedlib.hist`; the literal per-client loop the tests hold Algorithm 1 to is ``tests/reference_hist.py``."""
from fedlib.lab.hist.experiments import (STORE_CODE, comm_to_target, result_store, run_sweep, seed_band, seed_groups,
                                         summarize, summarize_seeds)

__all__ = ["STORE_CODE", "result_store", "run_sweep", "summarize", "summarize_seeds", "seed_groups",
           "seed_band", "comm_to_target"]
