"""Derived metrics are written at the precision they are measured at (fedlib.lab.plotting.measured): accuracies and
their differences to 1e-4, times to 1 ms, anything else to 6 significant digits, so that a redraw of the same
records writes the same metrics on every CPU (a CPU-dependent reduction order moves only the last digits)."""
import glob
import json

import numpy as np
import pytest

from fedlib.lab.paths import REPO_ROOT
from fedlib.core.validate import ParameterTypeError
from fedlib.lab.plotting import _portable, measured, write_metrics


@pytest.mark.parametrize("key, value, expected", [
    ("plateau_rise", 0.028999999999999977, 0.029),       # two CPUs' values of one metric (a reported failure)
    ("plateau_rise", 0.029000000000000064, 0.029),
    ("final_test_acc", 0.78434999, 0.7843),
    ("test_acc_aux", 0.15406, 0.1541),
    ("acc_gain", -0.00001, 0.0),                          # no negative zero
    ("time_to_target_s", 0.5666730886931309, 0.567),
    ("elapsed_s", 46.53052047600005, 46.531),
    ("dtfl_loop_samples_per_s", 4056.94321, 4056.94),     # a rate: significant digits, not ms
    ("ratio", 1.0834193511619723, 1.08342),
    ("theta", 39341.12479876618, 39341.1),
    ("2", 29169778.91471553, 29169800.0),
    ("G2", np.float32(1.4356269), 1.43563),
    ("rounds_measured", 30, 30.0),
    ("forward_gflops", 1.1109376, 1.1109376),          # a model profile's exact arithmetic: as computed
    ("backward_gflops", 2.218336256, 2.218336256),
])
def test_each_kind_of_metric_is_rounded_by_its_rule(key, value, expected):
    out = measured(value, key)
    assert out == expected and type(out) is float
    assert str(measured(-0.00001, "acc_gain")) == "0.0"


def test_bad_input_is_named():
    with pytest.raises(ParameterTypeError, match="value"):
        measured("0.5", "acc")
    with pytest.raises(ParameterTypeError, match="value"):
        measured(True, "acc")
    with pytest.raises(ParameterTypeError, match="key"):
        measured(0.5, 3)


def test_the_writer_rounds_nested_values_by_the_key_that_holds_them(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_METRICS_DIR", str(tmp_path))
    path = write_metrics("m", {"runs": [{"final_test_acc": 0.123456, "wall_s": 1.23456, "test_acc": [0.11111, 0.5]}],
                               "ratio": (1.23456789, 2), "n": 3, "ok": True, "name": "x"})
    assert json.loads(path.read_text()) == {"runs": [{"final_test_acc": 0.1235, "wall_s": 1.235,
                                                      "test_acc": [0.1111, 0.5]}],
                                            "ratio": [1.23457, 2], "n": 3, "ok": True, "name": "x"}


HAND_WRITTEN = {"figures/converged/gpu/metrics/gpu_run.json": "a benchmark summary written by hand from a GPU session"}


@pytest.mark.parametrize("path", sorted(str(p.relative_to(REPO_ROOT)) for p in REPO_ROOT.glob("figures/**/metrics/*.json")))
def test_every_committed_metrics_file_is_at_its_measured_precision(path):
    """A redraw writes every committed metric as it is (re-rounding changes nothing), whatever the CPU."""
    if path in HAND_WRITTEN:
        pytest.skip(HAND_WRITTEN[path])
    data = json.loads((REPO_ROOT / path).read_text())
    assert _portable(data) == data


def test_the_committed_metrics_were_found():
    assert len(glob.glob(str(REPO_ROOT / "figures/**/metrics/*.json"), recursive=True)) >= 30
