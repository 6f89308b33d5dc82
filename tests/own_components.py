"""Components of a user's own, as a researcher would write them in a module of their own (imported by path in the
tests: ``"own_components:FastestTier"``); not a test module."""
import numpy as np

from fedlib.dtfl import TierScheduler


class FastestTier(TierScheduler):
    """A DTFL scheduler variant: each observed client gets the tier of its own smallest estimated round time
    (no common T_max), among min_tier..M; clients not yet observed keep initial_tier."""

    def assign(self, mbps, samples, mask=None):
        here = np.ones(self.k, dtype=bool) if mask is None else np.asarray(mask, bool)
        est = self.estimate(mbps, samples)
        out = np.where(here, self.initial_tier, self.current).astype(np.int64)
        seen = ~np.isnan(est[:, 0]) & here
        out[seen] = self.min_tier + np.argmin(est[seen][:, self.min_tier - 1:], axis=1)
        return out


class ConstantTier(TierScheduler):
    """Every client at tier 3, every round (a hand-checkable scheduler)."""

    def assign(self, mbps, samples, mask=None):
        return np.full(self.k, 3, dtype=np.int64)


class WrongShape(TierScheduler):
    """A broken scheduler: one tier too few."""

    def assign(self, mbps, samples, mask=None):
        return np.full(self.k - 1, 2, dtype=np.int64)


class NotAScheduler:
    """Built, but with neither observe nor assign."""

    def __init__(self, *args):
        pass


NOT_CALLABLE = 3


def random_b_cut_two(problem, rng):
    """A HASFL benchmark strategy: random batch sizes in 1..64 (one draw per device), every device at cut 2."""
    n = problem.num_devices
    return rng.integers(1, 65, n), np.full(n, 2)


def cut_too_deep(problem, rng):
    """A broken strategy: a cut past the model's last layer."""
    n = problem.num_devices
    return np.full(n, 8), np.full(n, problem.profile.num_layers + 1)


def returns_nothing(problem, rng):
    """A broken strategy: no decision."""
    return None


def dirichlet_clients(labels, num_clients, num_cells, rng):
    """A HIST client partition: Dirichlet(α = 0.3) label proportions per client (fedlib's Dirichlet partitioner)."""
    from fedlib.data import partition
    return partition.split(labels, num_clients, "dirichlet", rng, alpha=0.3)


def permuted_blocks(labels, num_clients, num_cells, rng):
    """A hand-checkable random partition: the samples in the order of ``rng.permutation``, cut into U blocks."""
    return np.array_split(rng.permutation(len(labels)), num_clients)


def first_samples_only(labels, num_clients, num_cells, rng):
    """A hand-checkable partition: client u gets samples 10u .. 10u+9."""
    return [np.arange(10 * u, 10 * u + 10) for u in range(num_clients)]


def one_client_short(labels, num_clients, num_cells, rng):
    """A broken partition: one client too few."""
    return [np.arange(10 * u, 10 * u + 10) for u in range(num_clients - 1)]


def index_out_of_range(labels, num_clients, num_cells, rng):
    """A broken partition: an index past the dataset."""
    return [np.array([len(labels)])] + [np.arange(10) for _ in range(num_clients - 1)]
