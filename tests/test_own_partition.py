"""A HIST client partition of your own (HistConfig(setting="package.module:fn")): it decides the clients' data,
its records are keyed by its path and source (never returned for another partition or a built-in setting), it
reaches worker processes, and a bad one is refused by name."""
from concurrent.futures import ProcessPoolExecutor
import multiprocessing

import numpy as np
import pytest

from fedlib.hist import HistConfig
from fedlib.hist.sampling import client_partition
from fedlib.lab.hist.experiments import run_sweep
from fedlib.lab.store import ResultStore

pytestmark = pytest.mark.usefixtures("one_thread")

SMALL = dict(num_cells=2, num_clients=4, hidden=8, H=2, E=4, global_rounds=1, seed=0)


def test_your_partition_gives_the_clients_their_data():
    labels = np.arange(100) % 10
    parts = client_partition(HistConfig(setting="own_components:first_samples_only", **SMALL), labels)
    assert [p.tolist() for p in parts] == [list(range(10 * u, 10 * u + 10)) for u in range(4)]   # by hand
    d = client_partition(HistConfig(setting="own_components:dirichlet_clients", **SMALL), np.arange(600) % 10)
    assert sorted(np.concatenate(d).tolist()) == list(range(600))                 # every sample, once


@pytest.mark.parametrize("setting, error, words", [
    ("own_components:one_client_short", ValueError, "must return U = 4 non-empty 1-D index arrays"),
    ("own_components:index_out_of_range", ValueError, "client 0's indices as 1 integers in 0..99"),
    ("nowhere_module:f", ValueError, "setting = 'nowhere_module:f': cannot import"),
    ("dirichlet", ValueError, "setting must be one of"),
], ids=["short", "out-of-range", "unimportable", "unknown"])
def test_a_bad_partition_is_refused_naming_it(setting, error, words):
    with pytest.raises(error, match=words):
        client_partition(HistConfig(setting=setting, **SMALL), np.arange(100) % 10)


def test_records_of_two_partitions_never_stand_in_for_each_other(tmp_path, fmnist):
    store = ResultStore(tmp_path)
    mine = HistConfig(setting="own_components:dirichlet_clients", **SMALL)
    built_in = HistConfig(setting="noniid", **SMALL)
    a = run_sweep([mine], store, fmnist, device="cpu", progress=False)[0]
    b = run_sweep([built_in], store, fmnist, device="cpu", progress=False)[0]
    files = sorted(p.read_text() for p in tmp_path.glob("*.json"))
    assert len(files) == 2 and sum("own_components:dirichlet_clients" in f for f in files) == 1
    assert a["test_acc"] != b["test_acc"]
    # the built-in setting's key is its config alone (the committed records); yours adds its path and source
    assert store.has(built_in.to_dict()) and not store.has(mine.to_dict())
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(2, mp_context=ctx) as ex:                          # workers import it by its path
        again = run_sweep([mine], ResultStore(tmp_path / "pool"), progress=False, device="cpu", executor=ex)[0]
    strip = lambda r: {k: v for k, v in r.items() if k not in ("elapsed_s", "store_key", "wall_s")}
    assert strip(again) == strip(a)


PARTITION = '''
import numpy as np


def blocks(labels, num_clients, num_cells, rng):
    return [np.arange({size} * u, {size} * u + {size}) for u in range(num_clients)]
'''


def test_editing_your_partition_recomputes_its_records_only(tmp_path, fmnist, monkeypatch):
    import importlib
    import json
    import sys
    mod = tmp_path / "mod"
    mod.mkdir()
    monkeypatch.syspath_prepend(str(mod))
    (mod / "my_blocks.py").write_text(PARTITION.format(size=50))
    store = ResultStore(tmp_path / "store")
    mine = HistConfig(setting="my_blocks:blocks", **SMALL)
    built_in = HistConfig(setting="noniid", **SMALL)
    run_sweep([mine, built_in], store, fmnist, device="cpu", progress=False)
    before = {p.name for p in (tmp_path / "store").glob("*.json")}
    (mod / "my_blocks.py").write_text(PARTITION.format(size=60))                 # an edit of your module
    sys.modules.pop("my_blocks", None)
    importlib.invalidate_caches()
    run_sweep([mine, built_in], store, fmnist, device="cpu", progress=False)
    after = {p.name for p in (tmp_path / "store").glob("*.json")}
    assert len(before) == 2 and len(after) == 3 and before < after                # yours retrained, ours a hit
    new = json.loads((tmp_path / "store" / (after - before).pop()).read_text())
    assert new["config"]["partition"]["path"] == "my_blocks:blocks"


def test_your_partition_draws_from_the_seed_asked():
    """Issue 70 item 6: the seed reaches a partition of your own (seed 3, not 0). Planted: client_partition
    drawing from seed 0 -> red."""
    from fedlib.core import numpy_rng
    labels = np.arange(100) % 10
    got = {seed: client_partition(HistConfig(setting="own_components:permuted_blocks", **dict(SMALL, seed=seed)),
                                  labels) for seed in (0, 3)}
    for seed, parts in got.items():                                            # by hand: the seed's data stream
        ref = np.array_split(numpy_rng(seed, "data").permutation(100), 4)
        assert [p.tolist() for p in parts] == [sorted(r.tolist()) for r in ref]
    assert [p.tolist() for p in got[3]] != [p.tolist() for p in got[0]]
