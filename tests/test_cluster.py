"""fedlib.lab.map_jobs on any concurrent.futures.Executor and on a Dask cluster: DTFL's, HASFL's and HIST's records
(with components of your own: a tier scheduler, a dataset, a client partition) do not depend on where, or in how
many workers, they ran."""
import dataclasses
import multiprocessing
import json
import os
import sys
import types
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
import torch

from fedlib.core import ParameterTypeError
from fedlib.hist import HistConfig
from fedlib.lab.hist.experiments import run_sweep
from fedlib.lab.store import ResultStore
from fedlib.lab.parallel import cluster_executor, map_jobs
from fedlib.lab.parallel import SCHEDULER_ENV, check_scheduler_address


def _threads_and_pid(tag: int) -> tuple:
    return tag, torch.get_num_threads(), os.getpid()


def test_map_jobs_takes_an_executor_and_pins_its_workers_threads():
    jobs = [dict(tag=t) for t in range(4)]
    before = torch.get_num_threads()
    here = map_jobs(_threads_and_pid, jobs, workers=1, threads=1)
    assert [(t, n) for t, n, _ in here] == [(t, 1) for t in range(4)]        # in-process jobs run as a worker's
    assert torch.get_num_threads() == before                                 # and the caller's count comes back
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        pooled = map_jobs(_threads_and_pid, jobs, workers=pool, threads=1)
    assert [(t, n) for t, n, _ in pooled] == [(t, 1) for t in range(4)]
    assert {p for _, _, p in pooled} - {os.getpid()} and os.getpid() not in {p for _, _, p in pooled}
    with pytest.raises(ValueError, match="workers"):
        map_jobs(_threads_and_pid, jobs, workers=0)
    with pytest.raises(Exception, match="workers"):
        map_jobs(_threads_and_pid, jobs, workers=object())


def test_scheduler_variable_is_checked(monkeypatch):
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    with cluster_executor() as ex:
        assert ex is None
    monkeypatch.setenv(SCHEDULER_ENV, "localhost:8786")
    with pytest.raises(ValueError, match="FEDLIB_DASK_SCHEDULER"):
        map_jobs(_threads_and_pid, [dict(tag=0)], workers=1)


def _fake_distributed(monkeypatch, connected: list):
    """``distributed`` replaced by a module whose Client records the address it would connect to."""
    fake = types.ModuleType("distributed")

    class Client:
        def __init__(self, address):
            connected.append(address)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def get_executor(self):
            return "executor"
    fake.Client = Client
    monkeypatch.setitem(sys.modules, "distributed", fake)


@pytest.mark.parametrize("address, why", [
    ("tcp://127.0.0.1:notaport", "port 'notaport'"), ("tcp://127.0.0.1:0", "port '0'"),
    ("tcp://127.0.0.1:70000", "port '70000'"), ("tcp://:8786", "host is empty"), ("tls://[]:8786", "host is empty"),
    ("tcp://127.0.0.1", "port is missing"), ("tcp://127.0.0.1:", "port ''"), ("tcp://127.0.0.1:-1", "port '-1'"),
    ("tcp://::1:8786", "brackets"), ("tcp://[::1:8786", "closing bracket"), ("inproc://", "inproc:// address is empty"),
    ("http://127.0.0.1:8786", "scheme"), ("", "scheme")])
def test_a_scheduler_address_is_checked_whole_before_any_work(monkeypatch, address, why):
    connected = []
    _fake_distributed(monkeypatch, connected)
    monkeypatch.setenv(SCHEDULER_ENV, address)
    with pytest.raises(ValueError, match="FEDLIB_DASK_SCHEDULER") as err:
        map_jobs(_threads_and_pid, [dict(tag=0)], workers=1)
    assert why in str(err.value) and "1-65535" in str(err.value) and "tcp://HOST:PORT" in str(err.value)
    assert connected == []                                   # refused before distributed is even asked
    with pytest.raises(ValueError, match="FEDLIB_DASK_SCHEDULER"):
        check_scheduler_address(address)


def test_a_good_scheduler_address_passes_the_check_without_connecting(monkeypatch):
    for address in ("tcp://127.0.0.1:8786", "tls://scheduler.example.org:1", "tcp://[::1]:65535",
                    "inproc://10.0.0.1/1234/1"):
        assert check_scheduler_address(address) == address
    with pytest.raises(ParameterTypeError, match="address"):
        check_scheduler_address(8786)
    connected = []
    _fake_distributed(monkeypatch, connected)
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://127.0.0.1:8786")
    with cluster_executor() as ex:
        assert ex == "executor"
    assert connected == ["tcp://127.0.0.1:8786"]             # passed on unchanged


def _hasfl_jobs(store):
    from fedlib.hasfl import HasflConstants
    from fedlib.lab.hasfl.runs.train_config import run_config
    from fedlib.lab.hasfl.runs.training import TrainSettings, decide, training_problem
    s = TrainSettings(model="resnet18", width=0.0625, epochs=0.0004, min_rounds=3, max_rounds=3, evals=5,
                      test_subset=100, interval=2)
    consts = HasflConstants(10.0, np.ones(10), np.ones(10), 2.3)
    problem = training_problem(s, consts, 1e3, 3, 0)
    jobs = []
    for b, cut in ((4, 2), (6, 4)):
        config = run_config(s, "iid", decide(problem, "fixed", 0, b, cut), 0, 60_000)
        jobs.append(dict(store=store, config=config, problem=problem, dataset="fashion-mnist", device="cpu"))
    return jobs


def _dtfl_jobs(store):
    from fedlib.lab.dtfl import experiments as dx
    s = dx.Setup(model="resnet20", width=0.125, num_clients=4, batch_size=8, train_subset=64, test_subset=50,
                 rounds=2)
    jobs = [dict(store=store, s=s, num_tiers=3, case="all", setting=setting, seed=1, target_acc=0.5)
            for setting in ("iid", "noniid")]
    # a tier scheduler and a dataset of your own, named by import path: every worker imports them
    # (tests/own_components.py, tests/own_datasets.py)
    own_data = dataclasses.replace(s, dataset="own_datasets:flipped")
    return jobs + [dict(jobs[0], num_tiers=7, scheduler="own_components:ConstantTier"), dict(jobs[0], s=own_data)]


#: HIST with a client partition of your own (tests/own_components.py) and with the paper's non-i.i.d. setting
_HIST = [HistConfig(setting=setting, num_cells=2, num_clients=4, hidden=8, H=2, E=4, global_rounds=1, seed=0)
         for setting in ("own_components:dirichlet_clients", "noniid")]


def _hist_records(records):
    return [{k: v for k, v in r.items() if k not in ("elapsed_s", "store_key", "wall_s")} for r in records]


def _hasfl_records(store, jobs):
    from fedlib.lab.hasfl.runs.train_run import train_store
    runs = train_store(store)
    return [{k: v for k, v in runs.load(j["config"]).items() if k != "elapsed_s"} for j in jobs]


def _dtfl_records(entries):
    return [{k: v for k, v in e["record"].items() if k != "elapsed_s"} for e in entries]


def test_dask_cluster_records_equal_the_sequential_ones(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    from fedlib.lab.dtfl import experiments as dx
    from fedlib.lab.hasfl.runs.experiments import result_store as hasfl_store
    from fedlib.lab.hasfl.runs.train_jobs import train_job
    seq_h, seq_d = hasfl_store(tmp_path / "seq_h"), dx.result_store(tmp_path / "seq_d")
    map_jobs(train_job, _hasfl_jobs(seq_h), workers=1)
    seq_dtfl = _dtfl_records(map_jobs(dx.run_entry, _dtfl_jobs(seq_d), workers=1))
    seq_hist = _hist_records(run_sweep(_HIST, ResultStore(tmp_path / "seq_hist"), device="cpu", progress=False))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        # the environment variable sends every map_jobs call, whatever its workers, to the scheduler
        monkeypatch.setenv(SCHEDULER_ENV, cluster.scheduler_address)
        pids = {p for _, _, p in map_jobs(_threads_and_pid, [dict(tag=t) for t in range(4)], workers=1)}
        assert os.getpid() not in pids
        dask_h, dask_d = hasfl_store(tmp_path / "dask_h"), dx.result_store(tmp_path / "dask_d")
        map_jobs(train_job, _hasfl_jobs(dask_h), workers=1)
        dask_dtfl = _dtfl_records(map_jobs(dx.run_entry, _dtfl_jobs(dask_d), workers=2))
        with distributed.Client(cluster) as client:      # HIST's sweep on the cluster's executor
            dask_hist = _hist_records(run_sweep(_HIST, ResultStore(tmp_path / "dask_hist"), device="cpu",
                                                progress=False, executor=client.get_executor()))
    # a partition of your own (HIST), imported by each Dask worker: the records of one process
    assert dask_hist == seq_hist and seq_hist[0]["test_acc"] != seq_hist[1]["test_acc"]
    stored = [json.loads(p.read_text())["config"] for p in (tmp_path / "dask_hist").glob("*.json")]
    assert sorted(c["setting"] for c in stored) == ["noniid", "own_components:dirichlet_clients"]
    assert _hasfl_records(dask_h, _hasfl_jobs(dask_h)) == _hasfl_records(seq_h, _hasfl_jobs(seq_h))
    assert dask_dtfl == seq_dtfl
    cuts = [json.loads(p.read_text())["config"].get("cuts") for p in (tmp_path / "dask_d").glob("*.json")]
    assert [[3, 3, 3, 3]] * 2 in cuts                # every round at tier 3 of 7: a Dask worker ran your scheduler
    own = [json.loads(p.read_text())["config"].get("own_dataset") for p in (tmp_path / "dask_d").glob("*.json")]
    assert [o["path"] for o in own if o] == ["own_datasets:flipped"]   # and loaded your dataset by its path
    # two local workers (a process pool) give the same records again
    pool_h = hasfl_store(tmp_path / "pool_h")
    monkeypatch.delenv(SCHEDULER_ENV)
    map_jobs(train_job, _hasfl_jobs(pool_h), workers=2)
    assert _hasfl_records(pool_h, _hasfl_jobs(pool_h)) == _hasfl_records(seq_h, _hasfl_jobs(seq_h))
    assert isinstance(seq_h, ResultStore)
