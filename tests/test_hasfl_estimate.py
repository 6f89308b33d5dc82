"""HASFL's estimators of Theorem 1's constants (fedlib.hasfl.bound.estimate): G_j² without the bias of the mean
of M minibatch gradients, and [24]'s online smoothness estimate."""
import numpy as np
import pytest
import torch
from torch import nn

from fedlib.hasfl.bound.estimate import estimate_at, online_beta, pilot_constants


def _linear_task(n=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 2)).double()
    x = torch.randn(n, 3, generator=g, dtype=torch.float64)
    y = torch.randint(0, 2, (n,), generator=g)
    return model, x, y


def _per_sample_grads(model, x, y):
    """``[n, P_j]`` per unit: the gradient of each sample's loss, by autograd one sample at a time."""
    out = [[] for _ in model]
    for i in range(len(x)):
        model.zero_grad()
        nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for j, unit in enumerate(model):
            out[j].append(torch.cat([p.grad.reshape(-1) for p in unit.parameters()]).clone())
    return [torch.stack(g) for g in out]


def test_g2_is_an_unbiased_second_moment_of_the_minibatch_gradient():
    """Minibatches are drawn with replacement from n samples, so the per-sample gradient's population is the n
    samples: E‖g_b0‖² = ‖∇f‖² + σ²/b0 exactly, with ∇f the mean and σ² the (1/n) variance of the per-sample
    gradients. The mean of G_j² over many estimates must land there; without the correction it lands σ²/(b0·M)
    higher (here σ²/2: M = 2, b0 = 1)."""
    model, x, y = _linear_task()
    per = _per_sample_grads(model, x, y)
    b0, m, reps = 1, 2, 3000
    truth = np.array([float((g.mean(0) ** 2).sum() + ((g - g.mean(0)) ** 2).sum(1).mean() / b0) for g in per])
    bias = np.array([float(((g - g.mean(0)) ** 2).sum(1).mean() / (b0 * m)) for g in per])
    rng = np.random.default_rng(0)
    est = np.array([estimate_at(model, x, y, b0, m, 1, rng)["G2"] for _ in range(reps)])
    mean, se = est.mean(0), est.std(0) / np.sqrt(reps)
    assert np.all(np.abs(mean - truth) < 4 * se), (mean, truth, se)
    assert np.all(bias > 8 * se)                       # the old estimator's offset would be seen


def test_sigma2_and_g2_match_a_literal_reference_at_one_draw():
    model, x, y = _linear_task()
    per = _per_sample_grads(model, x, y)
    b0, m = 3, 4
    rng = np.random.default_rng(5)
    idx = np.random.default_rng(5).integers(0, len(x), (m, b0))      # estimate_at's draws, in order
    got = estimate_at(model, x, y, b0, m, 1, rng)
    for j, g in enumerate(per):
        batches = torch.stack([g[i].mean(0) for i in idx])              # [M, P_j] minibatch gradients
        gbar = batches.mean(0)
        sigma2 = b0 * float(((batches - gbar) ** 2).sum()) / (m - 1)
        assert got["sigma2"][j] == pytest.approx(sigma2, rel=1e-9)
        assert got["G2"][j] == pytest.approx(float((gbar ** 2).sum()) - sigma2 / (b0 * m) + sigma2 / b0, rel=1e-9)


def test_online_beta_is_the_gradient_change_over_the_step_hand_checked():
    # a quadratic f(w) = ½ wᵀHw, H = diag(4, 1): along the first axis the ratio is 4, along the second 1
    h = torch.tensor([4.0, 1.0], dtype=torch.float64)
    ws = [torch.tensor(v, dtype=torch.float64) for v in ([1.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, -1.0])]
    got = online_beta([(w, h * w) for w in ws])
    assert got == pytest.approx([4.0, 1.0])            # the pair that did not move is skipped
    # a step of (3, 4): ‖H dw‖ / ‖dw‖ = ‖(12, 4)‖ / 5
    w0, w1 = torch.zeros(2, dtype=torch.float64), torch.tensor([3.0, 4.0], dtype=torch.float64)
    assert online_beta([(w0, h * w0), (w1, h * w1)]) == pytest.approx([np.hypot(12, 4) / 5])
    with pytest.raises(ValueError, match="at least 2"):
        online_beta([(w0, w0)])
    with pytest.raises(ValueError, match="one size"):
        online_beta([(w0, w0), (torch.zeros(3), torch.zeros(3))])


def test_pilot_records_the_online_beta_at_every_interval():
    model, x, y = _linear_task(n=40)
    rec = pilot_constants(model.float(), x.float(), y, pilot_steps=10, lr=0.1, batch_size=2, num_batches=3,
                          power_iters=2, seed=0, interval=3)
    assert len(rec["beta_online_trace"]) == 3 and rec["interval"] == 3          # steps 3, 6, 9 after w⁰
    assert rec["beta_online"] == max(rec["beta_online_trace"]) > 0
    short = pilot_constants(_linear_task(n=40)[0].float(), x.float(), y, 2, 0.1, 2, 3, 2, 0, interval=3)
    assert short["beta_online"] is None and short["beta_online_trace"] == []
    # the online estimate draws from a stream of its own: the other constants do not depend on interval
    other = pilot_constants(_linear_task(n=40)[0].float(), x.float(), y, 10, 0.1, 2, 3, 2, 0, interval=5)
    assert other["constants"] == rec["constants"]
    with pytest.raises(ValueError, match="interval"):
        pilot_constants(model.float(), x.float(), y, 10, 0.1, 2, 3, 2, 0, interval=0)
