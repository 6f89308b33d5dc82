"""DTFL's lab: the experiments behind its tables and figures (the simulated system of a run, its training through the
result store, the baselines and privacy runs), the figures, the paper's claims and their verdicts, the checks of a
notebook's parameters before any work, the explorer, the benchmark, the batched sweep (:mod:`.batched`) and the
literal per-client reference loops the tests hold the engine to (:mod:`.reference`). The method itself is
:mod:`fedlib.dtfl`."""
from fedlib.lab.dtfl.experiments import (PAPER_TABLE1, PAPER_TABLE2, Setup, resolve_dataset, result_store, run_entry,
                                         system_run, time_to_target)
from fedlib.lab.dtfl.reference import run_literal, run_literal_baseline

__all__ = ["PAPER_TABLE1", "PAPER_TABLE2", "Setup", "result_store", "resolve_dataset", "run_entry", "system_run",
           "time_to_target", "run_literal", "run_literal_baseline"]
