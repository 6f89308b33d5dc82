"""fedlib: reference implementations of HIST, DTFL and HASFL for federated-learning research.

The library is thin and importable; notebooks under ``notebooks/`` only call it and plot.
Modules:

- :mod:`fedlib.paths`      output folders (figures, metrics, result cache, data) set in one place
- :mod:`fedlib.seeding`    one seed -> independent ``numpy.random.SeedSequence`` streams
- :mod:`fedlib.data`       real datasets through torchvision (Fashion-MNIST, CIFAR-10/100)
- :mod:`fedlib.partition`  seeded label-array -> per-client index partitioners
- :mod:`fedlib.models`     models used by the papers
- :mod:`fedlib.hist`       HIST / HFedAvg (Fang et al., hierarchical independent submodel training)
- :mod:`fedlib.hist_theory` HIST Theorem 1, Corollary 1, step-size condition, constant estimators
- :mod:`fedlib.estimators` shared estimators (Hessian power iteration)
- :mod:`fedlib.split_models` cuttable VGG-16 / ResNet-18 and their measured layer profiles
- :mod:`fedlib.latency`    split-FL latency model (devices, links, servers; HASFL eqs. 28-40), Table I sampler
- :mod:`fedlib.hasfl_theory` HASFL Theorem 1, Corollary 1, constant estimators
- :mod:`fedlib.hasfl_opt`  HASFL optimiser (P1, P2, BCD, exhaustive search, benchmark strategies)
- :mod:`fedlib.hasfl_experiments`, :mod:`fedlib.hasfl_plots` notebook helpers and figures
- :mod:`fedlib.store`      result store keyed by config + seed + library version
- :mod:`fedlib.plotting`   figure / metrics helpers
- :mod:`fedlib.notebooks`  papermill runner used by run_all.sh
- :mod:`fedlib.bench`      ``python -m fedlib.bench {hist,hasfl}``
"""

__version__ = "0.1.0"
