"""What the **Setup here vs the paper** sections of several DTFL notebooks share: the training rows
(:data:`TRAIN_ROWS`, ``dtfl_2_table1``, ``dtfl_3_fig3``, ``dtfl_4_training``, ``dtfl_your_method``) and the
deviations every trained notebook states (:data:`DATA`, :data:`OPT`, :data:`TIME`). Each notebook writes its own rows
and deviations in its Setup cell (:func:`fedlib.lab.story.setup_section`) around these. The two deviations that bear on
claims (:data:`FEDGKT_EVAL`, :data:`SHUFFLE_SETTINGS`) are here too: the claims (:mod:`fedlib.lab.dtfl.claims`) name
them as their ``deviation`` and the notebooks' text uses the same sentences."""
from __future__ import annotations

FEDGKT_EVAL = ("FedGKT has no global model: its accuracy is the mean of the composite models (the server model on "
               "the features of each client taking part in the round, each scored on its own slice of the test "
               "images), not a global model's accuracy as for DTFL and the other baselines")
"""The deviation of every claim that compares with FedGKT, and of the notebooks that show FedGKT (a sentence without
its full stop, as the verdict tables add one; see :mod:`fedlib.dtfl.fedgkt`, ``evaluate_composites``)."""

SHUFFLE_SETTINGS = ("Table 5 shuffles the intermediate data of ResNet-56, a CNN like ours, with the same settings as "
                    "Yao et al. (2022), but states neither the block size nor the tier; ours permutes p × p spatial "
                    "blocks of the smashed data per sample at one cut (converged: 4 × 4 blocks after md2), both "
                    "choices of ours")
"""The deviation of the patch-shuffling claim and of the ``dtfl_7_privacy`` notebook."""


TRAIN_ROWS = [
    ("data", "dataset", "CIFAR-10 (also CIFAR-100, CINIC-10, HAM10000)"),
    ("model, width", lambda ns: f"{ns['model']} at width {ns['width']:g}", "ResNet-110 / ResNet-56, width 1"),
    ("clients", "num_clients", "10"),
    ("training samples", lambda ns: ns["train_subset"] or "all", "50,000"),
    ("batch, Adam lr", lambda ns: f"{ns['batch_size']}, {ns['lr']:g}", "100, 1e-3"),
    ("rounds", "rounds", "until the target (about 300)"),
    ("target accuracy", "target_acc", "0.80"),
    ("client / server speed (GFLOP/s)", lambda ns: f"{ns['core_gflops']:g} / {ns['server_gflops']:g}",
     "measured wall times"),
    ("seeds", "seeds", "not stated"),
]
"""The rows of a training notebook's Setup: ``(quantity, here, paper)``, ``here`` a parameter's name or a function of
the notebook's namespace (:func:`fedlib.lab.story.setup_section`)."""

DATA = ("Fashion-MNIST (1×28×28) stands in for CIFAR-10, which is not on this machine; the models are the paper's "
        "CIFAR ResNet family at reduced width and depth.")
OPT = "Plain Adam, no weight decay, no amsgrad (the authors' code: amsgrad, weight decay 5e-4); no augmentation."
TIME = ("Times are simulated from profiled FLOPs and message bytes (eq. 5) at the stated GFLOP/s, not measured "
        "wall times; the speeds are scaled so the compute / communication balance matches the paper's model.")
"""The deviations every trained DTFL notebook states (``dtfl_7_privacy``: :data:`DATA` and :data:`OPT`; it times
nothing)."""
