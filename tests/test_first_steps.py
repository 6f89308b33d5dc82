"""The ``paper`` profiles start and fit in memory: the first step of each paper's largest full-width configuration
(``python -m tests.tools.first_steps``), in its own process, on real Fashion-MNIST."""
import json
import math
import subprocess
import sys

import pytest

from fedlib.lab.paths import REPO_ROOT
from tests.tools.first_steps import first_steps, main
from fedlib.split.models import MODELS


FASHION_MNIST_MIB = (60_000 + 10_000) * 1 * 28 * 28 * 4 / 2 ** 20    # x_train and x_test as float32, MiB


def _bytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


@pytest.fixture(scope="module")
def measured():
    done = subprocess.run([sys.executable, "-m", "tests.tools.first_steps", "--steps", "0"], capture_output=True,
                          text=True, timeout=600, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return {r["paper"]: r for r in rows}


def test_every_paper_profile_starts_and_fits_in_memory(measured):
    assert sorted(measured) == ["dtfl", "hasfl", "hist"]
    for paper, r in measured.items():
        # DTFL, HASFL: one step of a freshly initialised 10-class model, cross-entropy near ln 10 = 2.30; HIST: the
        # mean over its first global round (E = 200 steps), already learning
        low, high = (0.1, 2.0) if paper == "hist" else (1.0, 4.0)
        assert math.isfinite(r["loss"]) and low < r["loss"] < high, (paper, r["loss"])
        assert r["peak_rss_mib"] < 8192, (paper, r["peak_rss_mib"])      # fits a machine with 8 GiB free
        # ... and at least what the process held at once: the Fashion-MNIST tensors it loaded (float32
        # [60,000 + 10,000, 1, 28, 28]: 209 MiB) and the engine's state (state_mib: parameters, buffers, optimiser
        # moments, for DTFL and HASFL). x 0.75: room for pages the kernel may have swapped out. (A peak read in the
        # wrong unit, e.g. getrusage's KiB divided by 2**20, is 1,024x too small and fails here.)
        held = FASHION_MNIST_MIB + (r["state_mib"] or 0.0)
        assert r["peak_rss_mib"] >= 0.75 * held, (paper, r["peak_rss_mib"], held)
        assert r["steps"] == 0 and r["s_per_step"] is None


def test_dtfl_state_holds_every_client_copy(measured):
    # K = 200 copies of ResNet-110 (every unit per client, copies mode): parameters and buffers, and once each
    # client has trained, Adam's two moments per parameter; the auxiliary heads add a little
    model = MODELS["resnet110"](1, 28, 10, width=1.0)
    params, buffers = _bytes(model.parameters()), _bytes(model.buffers())
    r = measured["dtfl"]
    now = 200 * (params + buffers) / 2 ** 20
    trained = now + 200 * 2 * params / 2 ** 20
    assert now - 0.1 <= r["state_mib"] <= 1.05 * now + 2 * 2 * params / 2 ** 20
    assert trained - 0.1 <= r["state_mib_trained"] <= 1.05 * trained


def test_hasfl_state_holds_per_device_units_up_to_the_cut(measured):
    # N = 50 devices at cut 8 (common mode): units 1..8 per device, units 9..L once, Adam's moments for each copy
    model = MODELS["vgg16"](1, 28, 10, width=1.0)
    dev = _bytes(p for u in model[:8] for p in u.parameters()), _bytes(b for u in model[:8] for b in u.buffers())
    common = _bytes(p for u in model[8:] for p in u.parameters()), _bytes(b for u in model[8:] for b in u.buffers())
    expected = (50 * (3 * dev[0] + dev[1]) + 3 * common[0] + common[1]) / 2 ** 20
    assert expected - 0.1 <= measured["hasfl"]["state_mib"] <= expected * 1.001    # reported to 0.1 MiB


def test_first_steps_rejects_bad_input(capsys):
    with pytest.raises(ValueError, match="paper"):
        first_steps("fedavg")
    with pytest.raises(ValueError, match="steps"):
        first_steps("hist", steps=-1)
    with pytest.raises(SystemExit):
        main(["--steps", "-1"])
    assert "--steps" in capsys.readouterr().err
    with pytest.raises(ValueError, match="device"):
        first_steps("hist", device="gpu")
    with pytest.raises(SystemExit):
        main(["--device", "gpu"])
    assert "--device" in capsys.readouterr().err
