"""Sweeps you can trust and scale out: device-independent random streams, seeds, and the same records from a
sequential sweep, a process pool and a Dask LocalCluster (the result store is the only shared state)."""
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch

from fedlib.lab.store import ResultStore
from fedlib.core.seeding import torch_generator
from fedlib.hist import HistConfig
from fedlib.lab.hist import experiments
from fedlib.hist import run, sampling

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(num_clients=6, hidden=30, H=5, E=10, global_rounds=2, batch_size=8)
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _comparable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in ("elapsed_s",)}


def test_generators_are_cpu_and_draws_happen_on_cpu(monkeypatch):
    assert torch_generator(0, "data").device.type == "cpu"
    seen = []
    orig = torch.rand

    def spy(*args, **kwargs):
        seen.append(str(kwargs.get("device")))
        return orig(*args, **kwargs)

    monkeypatch.setattr(torch, "rand", spy)
    idx = torch.arange(12).reshape(3, 4)
    sampling.sample_batch_indices(idx, torch.tensor([4, 3, 2]), 5, torch_generator(0, "data"), steps=2)
    assert seen == ["cpu"]


@pytest.mark.parametrize("device", DEVICES)
def test_drawn_indices_do_not_depend_on_the_device(device):
    client_index = torch.arange(40).reshape(4, 10)
    sizes = torch.tensor([10, 7, 3, 1])
    cpu = sampling.sample_batch_indices(client_index, sizes, 6, torch_generator(5, "data"), steps=3)
    dev = sampling.sample_batch_indices(client_index.to(device), sizes.to(device), 6, torch_generator(5, "data"), steps=3)
    assert dev.device.type == device
    assert torch.equal(cpu, dev.cpu())
    assert (cpu < 40).all() and (cpu[:, 3] == 30).all()    # client 3 has one sample: index 30


@pytest.mark.parametrize("device", DEVICES)
def test_hist_run_on_each_device_follows_the_cpu_sample_path(fmnist, device):
    cfg = HistConfig(num_cells=3, **TINY)
    a = run.run_hist(cfg, fmnist, "cpu", progress=False)
    b = run.run_hist(cfg, fmnist, device, progress=False)
    np.testing.assert_allclose(a["test_loss"], b["test_loss"], rtol=1e-4)
    assert max(abs(x - y) for x, y in zip(a["test_acc"], b["test_acc"])) <= 2e-3


def test_seed_band_and_summary_by_hand():
    recs = [{"config": {"method": "hist", "seed": s, "setting": "noniid", "num_cells": 2, "H": 5, "E": 10,
                        "global_rounds": 2}, "round": [0, 1, 2], "test_acc": acc, "comm_client_L0": [0, 1, 2],
             "elapsed_s": 1.0} for s, acc in ((0, [0.1, 0.5, 0.8]), (1, [0.1, 0.7, 0.6]))]
    (group,) = experiments.seed_groups(recs)
    x, mean, lo, hi = experiments.seed_band(group, "round")
    np.testing.assert_allclose(mean, [0.1, 0.6, 0.7])
    np.testing.assert_allclose(lo, [0.1, 0.5, 0.6])
    np.testing.assert_allclose(hi, [0.1, 0.7, 0.8])
    (row,) = experiments.summarize_seeds(experiments.summarize(recs, target_acc=0.65))
    assert row["seeds"] == [0, 1] and row["final_test_acc"] == pytest.approx(0.7)
    assert row["final_test_acc_sd"] == pytest.approx(0.1)
    assert row["reached"] == 2 and row["comm_to_target"] == pytest.approx(1.5)       # rounds 2 and 1
    assert (row["comm_to_target_min"], row["comm_to_target_max"]) == (1, 2)
    (row,) = experiments.summarize_seeds(experiments.summarize(recs, target_acc=0.75))
    assert row["reached"] == 1 and row["comm_to_target"] is None and row["comm_to_target_max"] is None


def _configs():
    return [HistConfig(method=m, num_cells=n, seed=s, **TINY) for m, n in (("hist", 2), ("hfedavg", 3)) for s in (0, 1)]


@pytest.fixture(scope="module")
def sequential(tmp_path_factory, fmnist):
    store = ResultStore(tmp_path_factory.mktemp("seq"))
    return experiments.run_sweep(_configs(), store, fmnist, device="cpu", progress=False)


def test_process_pool_sweep_equals_sequential(sequential, tmp_path):
    store = ResultStore(tmp_path / "pool")
    # spawn, not fork: a forked child of a process whose torch thread pool is running can deadlock
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        recs = experiments.run_sweep(_configs(), store, device="cpu", progress=False, executor=pool)
    assert [_comparable(r) for r in recs] == [_comparable(r) for r in sequential]
    assert not list((tmp_path / "pool").glob(".tmp-*"))
    # a rerun is all cache hits: the same files, untouched
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "pool").glob("*.json")}
    experiments.run_sweep(_configs(), store, device="cpu", progress=False)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "pool").glob("*.json")} == mtimes


def _thread_count_runner(cfg, dataset, device, progress):
    """A runner whose record is the torch thread count it ran on (module level: pool workers unpickle it)."""
    return {"threads": torch.get_num_threads(), "seed": cfg.seed}


def test_every_run_is_pinned_to_the_same_thread_count(tmp_path):
    # a record must not depend on the thread count a process starts with (torch's default is the core count,
    # and a BLAS library may choose its own under load): run_sweep pins every run, in-process and in workers
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        recs = experiments.run_sweep(_configs()[:2], ResultStore(tmp_path / "seq"), device="cpu", progress=False,
                                     runner=_thread_count_runner)
        assert [r["threads"] for r in recs] == [1, 1]
        assert torch.get_num_threads() == 2                      # the caller's count is restored
        recs = experiments.run_sweep(_configs()[:2], ResultStore(tmp_path / "seq3"), device="cpu", progress=False,
                                     runner=_thread_count_runner, threads=3)
        assert [r["threads"] for r in recs] == [3, 3]
    finally:
        torch.set_num_threads(before)
    # spawned workers start with torch's default (the core count); no initializer sets it
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        recs = experiments.run_sweep(_configs(), ResultStore(tmp_path / "pool"), device="cpu", progress=False,
                                     runner=_thread_count_runner, executor=pool)
    assert [r["threads"] for r in recs] == [1] * 4
    with pytest.raises(ValueError, match="threads"):
        experiments.run_sweep(_configs()[:1], ResultStore(tmp_path / "bad"), progress=False, threads=0)


def test_dask_local_cluster_sweep_equals_sequential(sequential, tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    # workers are fresh processes: they import the installed (editable) fedlib of this checkout
    store = ResultStore(tmp_path / "dask")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        recs = experiments.run_sweep(_configs(), store, device="cpu", progress=False, executor=client.get_executor())
    assert [_comparable(r) for r in recs] == [_comparable(r) for r in sequential]
