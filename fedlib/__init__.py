"""fedlib: reference implementations of HIST, HASFL and DTFL for federated-learning research.

Two layers. The methods: one package per paper over shared packages; papers import the shared packages, never each
other, and no method module imports the lab (``tests/test_layers.py``):

- :mod:`fedlib.core`     what every record depends on: seeding (``numpy.random.SeedSequence`` streams), the shared
  estimators (Hessian power iteration), input checks
- :mod:`fedlib.data`     real datasets through torchvision (Fashion-MNIST, CIFAR-10/100; CINIC-10, HAM10000 from
  image folders) and client partitioners
- :mod:`fedlib.split`    the split-training engine (loop and stacked backends), cuttable models (VGG-16, ResNet-18,
  the CIFAR ResNets), measured layer profiles, devices / links / servers and the latency terms of split training
- :mod:`fedlib.hist`     HIST / HFedAvg (hierarchical independent submodel training): Algorithm 1, theory, the
  bound's constants
- :mod:`fedlib.hasfl`    HASFL (heterogeneity-aware split FL): round latency and Table I, theory and its constants,
  the optimiser (P1, P2, BCD, exhaustive search, benchmark strategies), one training run
- :mod:`fedlib.dtfl`     DTFL (dynamic tiering split FL): tiers and their costs, the tier scheduler, training with
  auxiliary networks, the baselines (FedAvg, SplitFed, FedYogi, FedGKT), privacy (distance correlation, patch
  shuffling, the reconstruction attack)

The lab, :mod:`fedlib.lab`: the result store, runs, figures, claims and verdicts, explorers, the site, benchmarks
and the literal reference loops; the store hashes the method modules only, so a lab edit never retrains anything.
Commands: ``python -m fedlib.lab.{bench,tables,prune,data}``. Components of your own (a scheduler, a
strategy, a partition) are named by import path (:mod:`fedlib.core.components`).
"""

__version__ = "0.4.0"
