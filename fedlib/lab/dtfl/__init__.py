"""DTFL's lab: the experiments behind its tables and figures (the simulated system of a run, its training through the
result store, the baselines and privacy runs), the figures, the paper's claims and their verdicts, the checks of a
notebook's parameters before any work, the explorer and the benchmark. The method itself is :mod:`fedlib.dtfl`; the
literal per-client loops the tests hold it to are ``tests/reference_dtfl.py``."""
from fedlib.lab.dtfl.experiments import (PAPER_TABLE1, PAPER_TABLE2, Setup, resolve_dataset, result_store, run_entry,
                                         system_run, time_to_target)

__all__ = ["PAPER_TABLE1", "PAPER_TABLE2", "Setup", "result_store", "resolve_dataset", "run_entry", "system_run",
           "time_to_target"]
