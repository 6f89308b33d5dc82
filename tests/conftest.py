import os
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config):
    """Under pytest-xdist (``./run_all.sh --tests`` runs ``-n 2``), each worker's torch takes its share of the
    threads torch would use alone (its default honours the process's CPU affinity and ``OMP_NUM_THREADS``, where
    ``os.cpu_count()`` can name a container host's cores): two workers of two threads each on 2 cores would
    oversubscribe them."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        torch.set_num_threads(max(1, torch.get_num_threads() // workers))


@pytest.fixture(scope="session")
def fmnist():
    """Real Fashion-MNIST (run_all.sh makes it available before the tests run)."""
    from fedlib.data import load_fashion_mnist
    return load_fashion_mnist()


@pytest.fixture(autouse=True)
def _isolated_outputs(tmp_path, monkeypatch):
    """No test writes into the committed figures/ or the shared result cache."""
    monkeypatch.setenv("FEDLIB_FIGURES_DIR", str(tmp_path / "figures"))
    monkeypatch.setenv("FEDLIB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FEDLIB_METRICS_DIR", raising=False)


@pytest.fixture(autouse=True)
def _own_datasets_forgotten():
    """Datasets of your own a test registered (fedlib.lab.datasets.use_dataset) are unregistered after it: the
    other tests' messages list the built-in datasets alone."""
    yield
    import sys
    own = sys.modules.get("fedlib.lab.datasets")
    if own is not None:                  # the built-in datasets stay; the next use_dataset loads it again
        for path in list(own._LOADED):
            for table in (own.DATASETS, own.DATASET_KEYWORDS, own.DATASET_SHAPES):
                table.pop(path, None)
        own._LOADED.clear()
        own._FITTED.clear()


@pytest.fixture
def one_thread():
    """Deterministic reductions: multi-threaded conv / BN sums vary run to run and tiny BN batches amplify it.
    Test modules that need it throughout use ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture
def float64():
    """float64 as torch's default dtype: in float32, Adam's g / sqrt(v) amplifies rounding differences of near-zero
    gradients (an engine and its literal reference sum in other orders) to ~1e-3 within three rounds; in float64
    both paths agree to ~1e-12."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)
