"""Shared infrastructure of every paper: output folders (:mod:`.paths`), seeding (:mod:`.seeding`), the result
store (:mod:`.store`), the shared estimators (:mod:`.estimators`) and the notebook runner (:mod:`.notebooks`)."""
from .estimators import hessian_top_eigenvalue
from .paths import REPO_ROOT, cache_dir, data_dir, figures_dir, metrics_dir
from .seeding import STREAMS, numpy_rng, resolve_device, seed_sequence, torch_generator
from .store import ResultStore, config_key

__all__ = ["REPO_ROOT", "cache_dir", "data_dir", "figures_dir", "metrics_dir", "STREAMS", "seed_sequence",
           "numpy_rng", "torch_generator", "resolve_device", "ResultStore", "config_key", "hessian_top_eigenvalue"]
