"""HASFL's lab: the experiments behind its figures (runs through the result store), the figures, the paper's claims
and their verdicts, the checks of a notebook's parameters before any work, and the explorer. The method itself is
:mod:`fedlib.hasfl`."""
from fedlib.lab.hasfl.runs.train_config import hasfl_clock
from fedlib.lab.hasfl.runs.training import TRAIN_METHODS, TrainSettings, decide, training_problem
from fedlib.lab.hasfl.runs.train_plan import TrainPlan, calibration_table, claim_ratios, plan_calibration

__all__ = ["hasfl_clock", "TRAIN_METHODS", "TrainSettings", "decide", "training_problem", "TrainPlan", "calibration_table", "claim_ratios", "plan_calibration"]
