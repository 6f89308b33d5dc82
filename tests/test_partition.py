"""Partitioners: disjoint, covering, label counts, determinism, errors."""
import numpy as np
import pytest

from fedlib.data import partition

LABELS = np.repeat(np.arange(10), 600)  # 6,000 samples, 600 per class (Fashion-MNIST's shape, scaled down 10x)


def _disjoint_covering(parts, n):
    allidx = np.concatenate(parts)
    assert len(allidx) == n and len(np.unique(allidx)) == n


def test_shards_pathological_non_iid():
    parts = partition.shards(LABELS, 60, 2, np.random.default_rng(0))  # 120 shards of 50
    _disjoint_covering(parts, len(LABELS))
    assert all(len(p) == 100 for p in parts)
    counts = partition.label_counts(LABELS, parts, 10)
    assert (np.count_nonzero(counts, axis=1) <= 2).all()     # a shard lies in one class: <= 2 labels per client
    assert set(np.unique(counts)) <= {0, 50, 100}


def test_shards_deterministic_and_seed_dependent():
    a = partition.shards(LABELS, 60, 2, np.random.default_rng(5))
    b = partition.shards(LABELS, 60, 2, np.random.default_rng(5))
    c = partition.shards(LABELS, 60, 2, np.random.default_rng(6))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_cell_iid_client_shards():
    parts = partition.cell_iid_client_shards(LABELS, 3, 20, 2, np.random.default_rng(0))
    _disjoint_covering(parts, len(LABELS))
    assert len(parts) == 60 and all(len(p) == 100 for p in parts)
    counts = partition.label_counts(LABELS, parts, 10)
    assert (np.count_nonzero(counts, axis=1) <= 4).all()   # random cell split: a shard may straddle 2 classes
    cell_counts = counts.reshape(3, 20, 10).sum(1)
    assert (cell_counts > 100).all()                       # each cell i.i.d.: every class well represented


def test_iid_sizes_and_cover():
    parts = partition.iid(103, 10, np.random.default_rng(0))
    _disjoint_covering(parts, 103)
    assert sorted({len(p) for p in parts}) == [10, 11]


def test_dirichlet_properties():
    parts = partition.dirichlet(LABELS, 10, 0.5, np.random.default_rng(0), min_size=20)
    _disjoint_covering(parts, len(LABELS))
    assert min(len(p) for p in parts) >= 20
    skewed = partition.label_counts(LABELS, parts, 10)
    flat = partition.label_counts(LABELS, partition.dirichlet(LABELS, 10, 1000.0, np.random.default_rng(0)), 10)
    # large alpha -> nearly uniform class proportions; small alpha -> skewed
    assert np.std(flat / flat.sum(1, keepdims=True)) < 0.02 < np.std(skewed / skewed.sum(1, keepdims=True))


@pytest.mark.parametrize("call,needle", [
    (lambda: partition.shards(LABELS, 7, 2, np.random.default_rng(0)), "14 shards must divide the 6000 samples"),
    (lambda: partition.shards(LABELS, 7000, 1, np.random.default_rng(0)), "num_clients (7000) must be <="),
    (lambda: partition.shards(LABELS, 0, 2, np.random.default_rng(0)), "num_clients must be a positive integer"),
    (lambda: partition.iid(5, 6, np.random.default_rng(0)), "num_clients (6) must be <= the number of samples (5)"),
    (lambda: partition.dirichlet(LABELS, 10, 0.0, np.random.default_rng(0)), "alpha must be > 0"),
    (lambda: partition.dirichlet(LABELS, 10, -1.0, np.random.default_rng(0)), "alpha must be > 0"),
    (lambda: partition.dirichlet(LABELS, 100, 0.5, np.random.default_rng(0), min_size=100), "exceeds the 6000 samples"),
    (lambda: partition.cell_iid_client_shards(LABELS, 7, 2, 2, np.random.default_rng(0)), "num_cells (7) must divide"),
])
def test_partition_errors(call, needle):
    with pytest.raises(ValueError) as err:
        call()
    assert needle in str(err.value)


def test_dirichlet_retry_cap():
    with pytest.raises(RuntimeError, match="max_retries=3"):
        partition.dirichlet(LABELS, 50, 0.01, np.random.default_rng(0), min_size=110, max_retries=3)
