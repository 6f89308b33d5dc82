"""Shared infrastructure of every paper: output folders (:mod:`.paths`), seeding (:mod:`.seeding`), the result
store (:mod:`.store`), the shared estimators (:mod:`.estimators`), input checks (:mod:`.validate`), notebook
parameters (:mod:`.params`) and the notebook runner (:mod:`.notebooks`).

Records depend only on :data:`RECORD_CODE` of this package (seeding, estimators, input checks); the store, paths,
locks, process pool, notebook runner and verification are infrastructure that no record's value depends on, so
editing them keeps every cached record valid."""
from .estimators import hessian_top_eigenvalue
from .seeding import STREAMS, numpy_rng, resolve_device, seed_sequence, torch_generator
from .validate import (ParameterTypeError, check_array, check_bool, check_callable, check_choice, check_float,
                       check_instance, check_int, check_list, check_str)

__all__ = ["STREAMS", "seed_sequence",
           "numpy_rng", "torch_generator", "resolve_device", "hessian_top_eigenvalue",
           "ParameterTypeError", "check_int", "check_float", "check_bool", "check_str", "check_choice", "check_list",
           "check_array", "check_instance", "check_callable"]
