import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


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
