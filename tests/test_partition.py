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
    (lambda: partition.dirichlet(LABELS, 100, 0.5, np.random.default_rng(0), min_size=100), "training data holds 6000"),
    (lambda: partition.cell_iid_client_shards(LABELS, 7, 2, 2, np.random.default_rng(0)), "num_cells (7) must divide"),
])
def test_partition_errors(call, needle):
    with pytest.raises(ValueError) as err:
        call()
    assert needle in str(err.value)


def test_dirichlet_retry_cap():
    with pytest.raises(RuntimeError, match="max_retries=3"):
        partition.dirichlet(LABELS, 50, 0.01, np.random.default_rng(0), min_size=110, max_retries=3)


@pytest.mark.parametrize("scheme, kw, direct", [
    ("iid", {}, lambda rng: partition.iid(len(LABELS), 12, rng)),
    ("shards", {"shards_per_client": 5}, lambda rng: partition.shards(LABELS, 12, 5, rng)),
    ("cell_shards", {"num_cells": 3, "shards_per_client": 2},
     lambda rng: partition.cell_iid_client_shards(LABELS, 3, 4, 2, rng)),
    ("dirichlet", {"alpha": 0.3}, lambda rng: partition.dirichlet(LABELS, 12, 0.3, rng)),
])
def test_split_dispatch_is_the_direct_call(scheme, kw, direct):
    # the one dispatch (HIST, the split engine, DTFL) gives the scheme's partition and leaves rng where the
    # direct call leaves it: cached runs keep their numbers
    for seed in (0, 3):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        every = {"shards_per_client": 5, "num_cells": 3, "alpha": 0.3, **kw}   # unused keywords are ignored
        got, want = partition.split(LABELS, 12, scheme, r1, **every), direct(r2)
        assert len(got) == len(want) == 12 and all(np.array_equal(a, b) for a, b in zip(got, want))
        assert r1.random() == r2.random()


@pytest.mark.parametrize("kw, needle", [
    (dict(scheme="noniid"), "scheme must be one of ('iid', 'shards', 'cell_shards', 'dirichlet')"),
    (dict(scheme="shards"), "'shards' needs shards_per_client"),
    (dict(scheme="cell_shards", shards_per_client=2), "'cell_shards' needs num_cells"),
    (dict(scheme="dirichlet"), "'dirichlet' needs alpha"),
    (dict(scheme="cell_shards", num_cells=5, shards_per_client=2), "num_cells (5) must divide num_clients (12)"),
])
def test_split_errors(kw, needle):
    with pytest.raises(ValueError) as err:
        partition.split(LABELS, 12, rng=np.random.default_rng(0), **kw)
    assert needle in str(err.value)
