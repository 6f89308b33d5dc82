"""DTFL's lab: the experiments behind its figures (runs through the result store), the figures, the paper's claims
and their verdicts, the checks of a notebook's parameters before any work, and the explorer. The method itself is
:mod:`fedlib.dtfl`."""
from fedlib.lab.dtfl.experiments import PAPER_TABLE1, PAPER_TABLE2, Setup, result_store, resolve_dataset, run_entry, system_run, time_to_target, train

from fedlib.lab.dtfl.reference import run_literal, run_literal_baseline
__all__ = ["run_literal", "run_literal_baseline", "PAPER_TABLE1", "PAPER_TABLE2", "Setup", "result_store", "resolve_dataset", "run_entry", "system_run", "time_to_target", "train"]
