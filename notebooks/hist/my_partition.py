"""A client partition of my own for HIST: Dirichlet(α) label proportions over all clients.

The paper's fully non-i.i.d. setting gives every client two label shards (1,000 samples, at most two classes).
Here every class c instead draws its proportions p_c ~ Dir(α·1_U) over the U clients and splits its samples by
them (Hsu et al. 2019), so clients hold unequal amounts of data and a skewed mix of classes whose skew α sets:
small α (0.1) gives clients of one or two classes, large α (100) nearly i.i.d. clients. The 60,000 training
images are spread over all clients, about 1,000 per client on average at the paper's 60 clients, as in the paper.
Cells play no part: client u is in cell u // (U/N), whatever its data.

Used as ``fedlib.hist.HistConfig(setting="my_partition:dirichlet", ...)`` (this folder on the Python path, as it
is for the notebooks beside it). Records are keyed by this module's source: edit ``ALPHA`` and only this
partition's runs are trained again.
"""
from fedlib.data import partition

ALPHA = 0.3
"""Concentration of the per-class Dirichlet draw (> 0): smaller is more skewed."""


def dirichlet(labels, num_clients, num_cells, rng):
    """Per-client index arrays into ``labels``: a Dirichlet(``ALPHA``) label partition over all ``num_clients``
    clients, drawn from ``rng`` (the run's ``data`` stream); ``num_cells`` is unused (no cell structure). Every
    client gets at least 10 samples (:func:`fedlib.data.partition.dirichlet`'s ``min_size``)."""
    return partition.split(labels, num_clients, "dirichlet", rng, alpha=ALPHA)
