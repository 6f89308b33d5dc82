"""HASFL: heterogeneity-aware split federated learning (batch sizes and cut layers from a convergence bound and
a latency model). HASFL paper: arXiv:2506.08426.

Two sub-packages and a module, each on the ones before it:

- :mod:`.bound`: the system model and the bound (latency, eqs. 28-40, and Table I; Theorem 1 and Corollary 1; the
  constants from a pilot run; problem (41) and Θ);
- :mod:`.optimiser`: Newton-Jacobi + Proposition 1 (P1), Dinkelbach over MILPs (P2), Algorithm 2 (BCD), exact
  batch search, refinement, exhaustive search, the paper's benchmark strategies;
- :mod:`.training`: a training record of a decision on the shared split engine.
The lab (:mod:`fedlib.lab.hasfl`) holds the runs, the result store, the figures and the claims.

The public names below stay importable from ``fedlib.hasfl``.
"""
from .optimiser.batch_search import batch_coefficients, exact_batches
from .optimiser.bcd import algorithm2, bcd, start_batches, uniform_cut_candidates
from .optimiser.refinement import cut_moves, enumerate_cuts, habs_batches, line_search_batches, polish, refine
from .bound.estimate import estimate_at, online_beta, pilot_constants
from .optimiser.exhaustive import exhaustive
from .bound.latency import TABLE_I, round_latency, table_i, total_latency
from .optimiser.p1 import kappa, newton_jacobi, p1_closed_form, p1_coefficients, solve_p1
from .optimiser.p2 import min_round_latency_cuts, solve_p2
from .bound.problem import (Decision, Problem, admissible_cuts, aux_variables, batch_caps, common_cut_floors, eps_with_slack,
                      feasible_cuts, initial_cuts, theta)
from .optimiser.strategies import PAPER_STRATEGIES, STRATEGIES, draw_stream, strategy
from .bound.theory import HasflConstants, bound_floor, rounds_needed, theorem1_bound
from ..split import sample_system

__all__ = ["TABLE_I", "table_i", "round_latency", "total_latency", "sample_system", "HasflConstants", "bound_floor",
           "rounds_needed", "theorem1_bound", "estimate_at", "online_beta", "pilot_constants", "Problem", "Decision", "theta",
           "feasible_cuts", "aux_variables", "eps_with_slack", "p1_coefficients", "newton_jacobi", "p1_closed_form",
           "kappa", "solve_p1", "solve_p2", "min_round_latency_cuts", "admissible_cuts", "initial_cuts", "polish",
           "algorithm2", "bcd", "exhaustive", "STRATEGIES", "PAPER_STRATEGIES", "draw_stream", "strategy", "habs_batches", "batch_caps", "common_cut_floors", "start_batches",
           "line_search_batches", "uniform_cut_candidates", "batch_coefficients", "exact_batches", "refine", "cut_moves",
           "enumerate_cuts"]
