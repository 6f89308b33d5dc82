"""fedlib.lab.parallel.get_or_run_all (the notebooks' one call of the method-layer record functions through the
store): each record read from its store or computed by its run and stored, in the order given; the stored ones are
read in this process, so a redraw from the store starts no worker."""
import os
from concurrent.futures import Executor
from functools import partial

import pytest

from fedlib.lab.parallel import get_or_run_all
from fedlib.lab.store import CacheMiss, ResultStore


def _record(tag: int) -> dict:
    return {"tag": tag, "pid": os.getpid()}


class _NoWorkers(Executor):
    def submit(self, *args, **kwargs):
        raise AssertionError("a stored record was sent to a worker")


def test_stored_records_are_read_here_and_the_others_computed_in_workers(tmp_path):
    store = ResultStore(tmp_path)
    runs = [(store, {"kind": "test", "tag": t}, partial(_record, t)) for t in (0, 1, 2)]
    store.get_or_run(runs[1][1], runs[1][2])                     # stored before: computed here
    out = get_or_run_all(runs, workers=2)
    assert [r["tag"] for r in out] == [0, 1, 2]                  # in the order given
    assert out[1]["pid"] == os.getpid()
    assert os.getpid() not in {out[0]["pid"], out[2]["pid"]}     # the two missing ones: in the pool's workers
    assert get_or_run_all(runs, workers=_NoWorkers()) == out    # every record stored now: no worker asked


def test_a_missing_record_under_cache_only_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_CACHE_ONLY", "1")
    store = ResultStore(tmp_path)
    with pytest.raises(CacheMiss):
        get_or_run_all([(store, {"kind": "test", "tag": 0}, partial(_record, 0))], workers=1)
    assert not list(tmp_path.glob("*.json"))
    with pytest.raises(ValueError, match="runs"):
        get_or_run_all([], workers=1)
