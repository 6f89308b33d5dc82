"""HIST's lab: the experiments behind its figures (runs through the result store), the figures, the paper's claims
and their verdicts, the checks of a notebook's parameters before any work, and the explorer. The method itself is
:mod:`fedlib.hist`."""
from fedlib.lab.hist.experiments import STORE_CODE, result_store, comm_to_target, figure_configs, run_sweep, seed_band, seed_groups, summarize, summarize_seeds

from fedlib.lab.hist.reference import iterate_reference, run_reference
__all__ = ["run_reference", "iterate_reference", "STORE_CODE", "result_store", "comm_to_target", "figure_configs", "run_sweep", "seed_band", "seed_groups", "summarize", "summarize_seeds"]
