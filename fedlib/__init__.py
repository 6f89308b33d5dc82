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

The lab, :mod:`fedlib.lab`: what the notebooks need to run, store, plot, judge, explore and publish the methods
(the result store, runs and plans, figures, claims and verdicts, explorers, the site, benchmarks, the literal
reference loops the tests hold the methods to). The result store hashes the method modules only, so an edit of the
lab never retrains anything. Commands: ``python -m fedlib.lab.bench {hist,hasfl,sfl,dtfl}``, ``python -m fedlib.lab.tables``,
``python -m fedlib.lab.prune``, ``python -m fedlib.lab.first_steps``, ``python -m fedlib.lab.data``.

Install with ``pip install -e .`` (extras ``[notebooks]``, ``[dask]``, ``[dev]``); each paper's README has a
"Use it in your own code" example.
"""

__version__ = "0.4.0"
