"""fedlib: reference implementations of HIST, HASFL and DTFL for federated-learning research.

The library is thin and importable; notebooks under ``notebooks/<paper>/`` only call it and plot. One package per
paper over shared packages; papers import the shared packages, never each other:

- :mod:`fedlib.core`     output folders, seeding (``numpy.random.SeedSequence`` streams), the result store, the
  shared estimators (Hessian power iteration), input checks, notebook parameters and the notebook runner used by
  ``run_all.sh``
- :mod:`fedlib.data`     real datasets through torchvision (Fashion-MNIST, CIFAR-10/100) and client partitioners
- :mod:`fedlib.split`    cuttable models (VGG-16, ResNet-18), measured layer profiles, devices / links / servers
  and their samplers, the per-device latency terms of split training
- :mod:`fedlib.plotting` figures saved by name, captions, metrics files
- :mod:`fedlib.hist`     HIST / HFedAvg (hierarchical independent submodel training): engine, reference loop,
  experiments, theory, plots
- :mod:`fedlib.hasfl`    HASFL (heterogeneity-aware split FL): round latency and Table I, theory, constants,
  optimiser (P1, P2, BCD, exhaustive search, benchmark strategies), experiments, plots
- :mod:`fedlib.dtfl`     DTFL (dynamic tiering split FL): tiers and their costs, the tier scheduler, training with
  auxiliary networks, the baselines (FedAvg, SplitFed, FedYogi, FedGKT), privacy (distance correlation, patch
  shuffling, the reconstruction attack), experiments, plots
- :mod:`fedlib.bench`    ``python -m fedlib.bench {hist,hasfl,sfl,dtfl}``

Install with ``pip install -e .`` (extras ``[notebooks]``, ``[dask]``, ``[dev]``); each paper's README has a
"Use it in your own code" example.
"""

__version__ = "0.4.0"
