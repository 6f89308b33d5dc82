"""DTFL's benchmark command (clear errors; the literal loops on a named device) and the multi-seed legends of its
accuracy figures (one entry per method, seeds told apart)."""
import numpy as np
import pytest
import torch

from fedlib.dtfl import DtflConfig
from tests.reference_dtfl import run_literal, run_literal_baseline
from fedlib.lab.dtfl.bench import bench_dtfl
from fedlib.lab.dtfl.compare_plots import fig2_accuracy_vs_time


@pytest.mark.parametrize("kwargs, name", [(dict(rounds=0), "rounds"), (dict(rounds=2, loop_rounds=0), "loop_rounds"),
                                          (dict(rounds=1.5), "rounds")])
def test_bench_dtfl_rejects_bad_rounds(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        bench_dtfl(**kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_literal_loops_name_a_missing_device(fmnist):
    cfg = DtflConfig(model="resnet20", width=0.25, num_clients=2, batch_size=10, train_subset=40, test_subset=20)
    with pytest.raises(ValueError, match="(?i)cuda"):
        run_literal(cfg, fmnist, [[1, 2]], device="cuda")
    with pytest.raises(ValueError, match="(?i)cuda"):
        run_literal_baseline(cfg, fmnist, 8, 1, device="cuda")


def _entries(methods, seeds):
    out = []
    for m in methods:
        for s in seeds:
            acc = list(np.linspace(0.1, 0.8, 4) - 0.01 * s)
            out.append({"row": {"setting": "iid", "model": "resnet20", "method": m, "seed": s, "target_acc": 0.7,
                                "num_clients": 10},
                        "sim": {"round_s": [10.0, 10.0, 10.0]}, "record": {"round": [0, 1, 2, 3], "test_acc": acc}})
    return out


def test_fig2_legend_names_each_method_once_over_seeds():
    fig = fig2_accuracy_vs_time(_entries(["dtfl", "fedavg"], [0, 1, 2]), "iid", "resnet20")
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert len(texts) == 2 and all(t.endswith("(seeds 0, 1, 2)") for t in texts)
    assert len(fig.axes[0].get_lines()) == 6 + 1          # every seed drawn, plus the target line
    one = fig2_accuracy_vs_time(_entries(["dtfl", "fedavg"], [0]), "iid", "resnet20")
    assert [t.get_text() for t in one.axes[0].get_legend().get_texts()] == ["DTFL (seed 0)", "FedAvg (seed 0)"]
