"""Every argument reaches its function (issue 70, item 6): each test runs a record function or a component at a
non-default value (seed != 0, sampled participants) and fails if the value is dropped on the way, the pattern that
survived the fourth round of planted bugs (the functions were tested by hand, the arguments only at their defaults).

Each test was seen red with its bug planted (listed beside it)."""
import numpy as np
import pytest
import torch
from torch import nn

from fedlib.split.records import draw_batches

pytestmark = pytest.mark.usefixtures("one_thread")


def test_draw_batches_against_a_literal_reference():
    # planted: ``(chunk * (len(p) - 1)).long()`` (a device's last sample never drawn) -> red
    # Reference written out here, not by calling the engine: device i takes b_i uniforms u (float64, from the CPU
    # generator, in device order) and draws parts[i][floor(u * len(parts[i]))].
    parts = [torch.tensor([10, 11, 12]), torch.tensor([20, 21]), torch.tensor([30, 31, 32, 33, 34])]
    b = [4, 3, 5]
    u = torch.rand(12, generator=torch.Generator().manual_seed(11), dtype=torch.float64).tolist()
    want, k = [], 0
    for p, bi in zip(parts, b):
        want.append([int(p[int(u[k + j] * len(p))]) for j in range(bi)])
        k += bi
    got = draw_batches(parts, b, torch.Generator().manual_seed(11))
    assert [g.tolist() for g in got] == want


def test_draw_batches_reaches_every_sample_of_every_device():
    # planted: the last sample of a device never drawn, or one device's draws reused for the next -> red
    parts = [torch.tensor([0, 1, 2]), torch.tensor([5, 6]), torch.tensor([7])]
    gen = torch.Generator().manual_seed(3)
    seen = [set(), set(), set()]
    for _ in range(60):
        for i, idx in enumerate(draw_batches(parts, [2, 3, 1], gen)):
            seen[i] |= set(idx.tolist())
    assert seen == [{0, 1, 2}, {5, 6}, {7}]


def _pilot(seed: int) -> dict:
    """HASFL's pilot on a two-unit model whose weights do not depend on ``seed``: the seed enters only through the
    pilot's own sample draws."""
    from fedlib.hasfl.bound.estimate import pilot_constants

    torch.manual_seed(5)
    model = nn.Sequential(nn.Sequential(nn.Flatten(), nn.Linear(12, 6), nn.ReLU()), nn.Linear(6, 3))
    g = torch.Generator().manual_seed(7)
    x, y = torch.randn(60, 1, 3, 4, generator=g), torch.randint(0, 3, (60,), generator=g)
    return pilot_constants(model, x, y, pilot_steps=4, lr=0.1, batch_size=5, num_batches=2, power_iters=3,
                           seed=seed, interval=2)["constants"]


def test_hasfl_pilot_draws_its_batches_from_the_seed_it_is_given():
    # planted: ``rng = numpy_rng(0, "data")`` in pilot_constants (the seed ignored for the batches) -> red
    one, again, two = _pilot(1), _pilot(1), _pilot(2)
    assert one == again
    assert one["beta"] != two["beta"] and one["vartheta"] != two["vartheta"]
    assert all(a != b for a, b in zip(one["sigma2"], two["sigma2"]))
    assert all(a != b for a, b in zip(one["G2"], two["G2"]))


def test_dtfl_train_record_trains_the_sampled_participants_only():
    # planted: train_record passing ``participants=None`` on to run_dtfl (every client trains under the sampled
    # key) -> red
    from fedlib.data import load_dataset
    from fedlib.dtfl.run import train_record
    from fedlib.dtfl.training import DtflConfig

    data = load_dataset("fashion-mnist")
    cfg = DtflConfig(model="resnet20", width=0.25, num_clients=4, batch_size=20, train_subset=80, test_subset=50,
                     seed=3)
    cuts = np.full((1, 4), 3)
    sampled = np.array([[True, False, False, True]])
    a = train_record(cfg, data, cuts, participants=sampled, backend="loop")
    b = train_record(cfg, data, cuts, participants=sampled, backend="loop")
    every = train_record(cfg, data, cuts, participants=None, backend="loop")
    assert a["train_loss"] == b["train_loss"] and a["test_loss"] == b["test_loss"]
    assert a["train_loss"][1] != every["train_loss"][1] and a["test_loss"][1] != every["test_loss"][1]
    assert a["test_loss"][0] == every["test_loss"][0]          # round 0: the same initial model


def test_dtfl_privacy_attacker_is_fitted_on_images_the_clients_never_trained_on(monkeypatch):
    # planted: ``data.x_train[:attack_fit]`` (the clients' own images) as the attacker's auxiliary set -> red
    from fedlib.data import load_dataset
    from fedlib.dtfl import privacy
    from fedlib.dtfl.training import DtflConfig

    seen = {}

    def spy(client, x_fit, x_eval, **kw):
        seen.update(x_fit=x_fit, x_eval=x_eval, seed=kw["seed"], epochs=kw["epochs"])
        return {"psnr_db": 0.0}

    monkeypatch.setattr(privacy, "reconstruction_attack", spy)
    data = load_dataset("fashion-mnist")
    used, fit = 40, 16
    cfg = DtflConfig(model="resnet20", width=0.25, num_clients=2, batch_size=20, train_subset=used, test_subset=30,
                     seed=2)
    rec = privacy.privacy_record(cfg, data, np.full((1, 2), 2), cut=2, alpha=0.0, patches=1, seed=2, used=used,
                                 attack_fit=fit, attack_eval=8, attack_epochs=3)
    assert torch.equal(seen["x_fit"], data.x_train[used:used + fit])
    assert torch.equal(seen["x_eval"], data.x_test[:8])
    assert (seen["seed"], seen["epochs"]) == (2, 3) and rec["attack"] == {"psnr_db": 0.0}
