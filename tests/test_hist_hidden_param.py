"""HIST's width as a notebook parameter (issue 71, item 7): ``hidden`` (the MLP's hidden units) is declared by the
training notebooks and ``hist_your_method``, so ``-p hidden 128`` is taken, not skipped; its checks name it; the
default 300 builds the configs of the committed records (their keys unchanged) and another width keys its own runs;
a run at another width is the same in this process and in a worker.

Planted once each and seen red: the check of N against ``hidden`` reading the default 300 again; ``hidden`` left
out of the notebooks' configs."""
import concurrent.futures
import multiprocessing
from pathlib import Path

import pytest

from fedlib.hist import HistConfig
from fedlib.lab.hist import checks
from fedlib.lab.params import declared_parameters

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ("hist_1_experiments", "hist_2_figures", "hist_your_method")

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebooks_declare_hidden_at_the_papers_300_and_build_their_runs_with_it(name):
    path = ROOT / "notebooks" / "hist" / f"{name}.ipynb"
    assert declared_parameters(path)["hidden"] == 300
    assert "hidden=hidden" in path.read_text()


def _p(name, **kw):
    p = {k: v for k, v in declared_parameters(ROOT / "notebooks" / "hist" / f"{name}.ipynb").items()}
    return {**p, **kw}


def test_a_width_every_n_divides_is_taken_and_one_that_n_does_not_divide_is_refused_naming_hidden(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "notebooks" / "hist"))          # hist_your_method's my_partition
    checks.check_hist_1_experiments(_p("hist_1_experiments", hidden=128, num_cells=[2, 4], fig4_num_cells=4))
    with pytest.raises(ValueError, match=r"num_cells.*hidden width \(128\)") as info:
        checks.check_hist_1_experiments(_p("hist_1_experiments", hidden=128, num_cells=[2, 3], fig4_num_cells=4))
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match=r"hidden width \(100\)"):
        checks.check_hist_your_method(_p("hist_your_method", hidden=100, num_cells=[2, 3]))
    with pytest.raises(ValueError, match=r"^hidden must be a positive integer .*the MLP's hidden units.*got 0$"):
        checks.check_hist_2_figures(_p("hist_2_figures", hidden=0))


def test_the_default_width_keeps_the_committed_keys_and_another_width_keys_its_own_runs():
    from fedlib.lab.store import config_key
    assert HistConfig(hidden=300).to_dict() == HistConfig().to_dict()      # the committed records' configs
    assert config_key(HistConfig(hidden=120).to_dict()) != config_key(HistConfig().to_dict())


def _run(hidden):
    import torch
    from fedlib.hist.run import run_hist
    from fedlib.data import load_dataset
    torch.set_num_threads(1)
    cfg = HistConfig(num_cells=2, num_clients=4, hidden=hidden, H=2, E=4, global_rounds=2, seed=3)
    return run_hist(cfg, load_dataset("fashion-mnist"))


def test_a_run_at_another_width_is_the_same_in_this_process_and_in_a_worker():
    here = _run(32)
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        there = pool.submit(_run, 32).result()
    assert here["test_acc"] == there["test_acc"] and here["config"]["hidden"] == 32
    assert here["test_acc"] != _run(30)["test_acc"]
