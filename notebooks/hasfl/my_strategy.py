"""A benchmark strategy of my own for HASFL, beside the paper's (notebooks/hasfl/hasfl_your_method.ipynb runs it as
``"my_strategy:compute_proportional"``)."""
import numpy as np

from fedlib.hasfl import batch_caps, bcd


def compute_proportional(problem, rng):
    """HASFL's cut layers, with each device's batch size proportional to its compute instead of HASFL's.

    The common heuristic of heterogeneous federated learning: a device twice as fast takes twice the samples per
    round. The total batch size is HASFL's (Σ b_i unchanged), so only how it is shared out differs; each b_i is
    rounded, at least 1 and at most what the device's memory allows at its cut. Deterministic: ``rng`` is not used.

    Args:
        problem: the ``fedlib.hasfl.Problem`` (the devices, the servers, the model's profile and the bound).
        rng: a seeded ``numpy.random.Generator`` (unused).

    Returns:
        ``(b, cuts)``: ``[N]`` batch sizes and ``[N]`` cut layers.
    """
    hasfl = bcd(problem)                                   # HASFL's own decision (Algorithm 2)
    f = problem.devices.flops                              # each device's compute (FLOP/s)
    b = np.rint(hasfl.b.sum() * f / f.sum())
    b = np.clip(b, 1, batch_caps(problem, hasfl.cuts))     # memory constraint C4 at each device's cut
    return b.astype(np.int64), hasfl.cuts
