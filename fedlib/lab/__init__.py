"""The lab: everything the notebooks need to run, store, plot, judge, explore and publish the methods of
:mod:`fedlib` (which never imports it).

- runs and their records: the result store (:mod:`.store`, keyed by config, seed and the method modules' source,
  :mod:`.code_hash`),
  datasets of your own named by import path (:mod:`.datasets`),
  run locks (:mod:`.runlock`), the process pool and threads (:mod:`.parallel`), output folders (:mod:`.paths`);
- notebooks: parameters (:mod:`.params`), a notebook's start, its profiles and the runner behind ``run_all.sh``
  (:mod:`.notebooks`), the Jupyter set-up (:mod:`.jupyter_setup`), verification of a rerun's metrics (:mod:`.verify`);
- figures (:mod:`.plotting`), claims and verdicts (:mod:`.verdicts`, :mod:`.verdict_rules`, :mod:`.verdict_tables`,
  :mod:`.story`, :mod:`.notebook_verdicts`, :mod:`.tables`), the explorers (:mod:`.explore`), the results site
  (:mod:`.site`, :mod:`.site_pages`), benchmarks (:mod:`.bench`, :mod:`.benchtime`), stale
  records (:mod:`.prune`) and the command-line convention (:mod:`.cli`);
- per paper (:mod:`.hist`, :mod:`.dtfl`, :mod:`.hasfl`): its experiments, figures, claims, input checks before
  work and explorer.
"""
from fedlib.lab.parallel import cluster_executor, map_jobs, set_threads
from fedlib.lab.params import validate_parameters
from fedlib.lab.paths import REPO_ROOT, cache_dir, data_dir, figures_dir, metrics_dir, use_profile
from fedlib.lab.runlock import RunInProgress
from fedlib.lab.store import RECORD_CODE, ResultStore, config_key

__all__ = ["cluster_executor", "map_jobs", "set_threads", "setup_notebook", "validate_parameters", "REPO_ROOT", "cache_dir", "data_dir", "figures_dir", "metrics_dir", "use_profile", "RunInProgress", "RECORD_CODE", "ResultStore", "config_key"]


def __getattr__(name: str):
    """``fedlib.lab.setup_notebook`` (the notebooks' first call), imported when first asked for: the runner module
    it lives in (:mod:`fedlib.lab.notebooks`) is also a command, and a package that imports a command's module
    makes ``python -m`` run that module a second time (runpy's warning)."""
    if name == "setup_notebook":
        from fedlib.lab.notebooks import setup_notebook
        return setup_notebook
    raise AttributeError(f"module 'fedlib.lab' has no attribute {name!r}")
