"""HASFL: heterogeneity-aware split federated learning (batch sizes and cut layers from a convergence bound and
a latency model).

Source: HASFL paper, restated in ``shared/spec/hasfl.md``. Modules: :mod:`.latency` (round composition, eqs.
38-40, and Table I), :mod:`.theory` (Theorem 1, Corollary 1), :mod:`.estimate` (constants from a pilot run),
:mod:`.problem` (problem 41, Θ), the optimiser :mod:`.p1` (Newton–Jacobi + Proposition 1), :mod:`.p2`
(Dinkelbach over MILPs), :mod:`.bcd` (Algorithm 2), :mod:`.batch_search` (exact batch sizes at fixed cuts),
:mod:`.refinement` (polish, cut moves, cut enumeration), :mod:`.exhaustive`, :mod:`.strategies` (the paper's
benchmarks), and the notebook helpers :mod:`.experiments`, :mod:`.plots`; split training on the shared engine: :mod:`.training` (settings, decisions,
the clock, one cached run), :mod:`.train_plan` (the runs of Figs. 2a-11, claim ratios), :mod:`.plan_status` (a long plan's progress in its store: ``python -m
fedlib.hasfl.plan_status``), :mod:`.train_plots`, :mod:`.calibrate` (our
bound calibrated on fixed-cut training runs).
"""
from .batch_search import batch_coefficients, exact_batches
from .bcd import bcd, start_batches, uniform_cut_candidates
from .refinement import cut_moves, enumerate_cuts, line_search_batches, polish, refine
from .estimate import estimate_at, pilot_constants
from .exhaustive import exhaustive
from .latency import TABLE_I, round_latency, table_i, total_latency
from .p1 import kappa, newton_jacobi, p1_closed_form, p1_coefficients, solve_p1
from .p2 import min_round_latency_cuts, solve_p2
from .instances import random_instance
from .problem import (Decision, Problem, admissible_cuts, aux_variables, batch_caps, common_cut_floors, eps_with_slack,
                      feasible_cuts, initial_cuts, theta)
from .strategies import STRATEGIES, strategy
from .theory import HasflConstants, bound_floor, rounds_needed, theorem1_bound
from ..split import sample_system
from .train_config import hasfl_clock
from .training import TRAIN_METHODS, TrainSettings, decide, training_problem
from .calibrate import CalibrationFit, calibrated_constants, fit_calibration, fitted_rounds
from .train_plan import TrainPlan, calibration_table, claim_ratios, plan_calibration, run_plan

__all__ = ["TABLE_I", "table_i", "round_latency", "total_latency", "sample_system", "HasflConstants", "bound_floor",
           "rounds_needed", "theorem1_bound", "estimate_at", "pilot_constants", "Problem", "Decision", "theta",
           "feasible_cuts", "aux_variables", "eps_with_slack", "p1_coefficients", "newton_jacobi", "p1_closed_form",
           "kappa", "solve_p1", "solve_p2", "min_round_latency_cuts", "admissible_cuts", "initial_cuts", "polish",
           "bcd", "exhaustive", "STRATEGIES", "strategy", "batch_caps", "common_cut_floors", "start_batches",
           "line_search_batches", "uniform_cut_candidates", "batch_coefficients", "exact_batches", "refine", "cut_moves",
           "enumerate_cuts", "random_instance", "TRAIN_METHODS", "TrainSettings", "decide",
           "hasfl_clock", "training_problem", "TrainPlan", "run_plan", "claim_ratios", "CalibrationFit",
           "calibrated_constants", "fit_calibration", "fitted_rounds", "plan_calibration", "calibration_table"]
