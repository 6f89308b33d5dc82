"""HASFL's estimators of Theorem 1's constants (fedlib.hasfl.bound.estimate) on a toy whose per-sample gradients are known
by hand: σ_j² = b0 · (1/(M−1)) Σ_m ‖g_{m,j} − ḡ_j‖² and G_j² = ‖ḡ_j‖² − σ_j²/(b0·M) + σ_j²/b0 per unit j (the mean
of M minibatch gradients overstates ‖∇f‖² by σ_j²/(b0·M); the module docstring of fedlib.hasfl.bound.estimate), and
ϑ = f(w⁰) on b0·M distinct samples.

The toy: units (1) Linear(1, 1) with weight a = 0 and bias c = 1, (2) ReLU, (3) Linear(1, 2) with
W = [[1], [−1]] and bias v = (−1, 1). Every sample then has hidden value h = a·x + c = 1, logits W·h + v = (0, 0),
softmax p = (1/2, 1/2) and loss ln 2, whatever x is. With s = +1 for label 1 and −1 for label 0, δ = p − e_y =
s·(1/2, −1/2), and the per-sample gradients are
    unit 1: (∂a, ∂c) = (Wᵀδ)·(x, 1) = s·(x, 1)                  (Wᵀδ = δ_0 − δ_1 = s)
    unit 2: none (no parameters: the estimator gives 0)
    unit 3: (∂W_00, ∂W_10, ∂v_0, ∂v_1) = δ·h, δ = s·(1/2, −1/2, 1/2, −1/2) = s·u, ‖u‖² = 1.
A minibatch gradient is the mean of its samples' gradients (mean cross-entropy).
"""
import math

import numpy as np
import pytest
import torch
from torch import nn

from fedlib.hasfl import HasflConstants
from fedlib.hasfl.bound import estimate
pytestmark = pytest.mark.usefixtures("float64", "one_thread")

# samples (x, y):     0: (1, 1)   1: (3, 1)   2: (2, 0)   3: (0, 1)   4: (4, 0)   5: (−2, 1)
X = [[1.0], [3.0], [2.0], [0.0], [4.0], [-2.0]]
Y = [1, 1, 0, 1, 0, 1]
# unit 1's per-sample gradients s·(x, 1): (1, 1), (3, 1), (−2, −1), (0, 1), (−4, −1), (−2, 1)
BATCHES = [[0, 1], [2, 3], [4, 4]]     # b0 = 2, M = 3; the last one draws sample 4 twice (with replacement)


class ScriptedDraws(np.random.Generator):
    """A numpy Generator whose first ``integers`` calls return the given index arrays (the minibatches), in
    order; every other draw comes from PCG64(0)."""

    def __init__(self, draws):
        super().__init__(np.random.PCG64(0))
        self.draws = [np.asarray(d, dtype=np.int64) for d in draws]

    def integers(self, *args, **kwargs):
        return self.draws.pop(0) if self.draws else super().integers(*args, **kwargs)


def toy():
    model = nn.Sequential(nn.Linear(1, 1), nn.ReLU(), nn.Linear(1, 2))
    with torch.no_grad():
        model[0].weight.fill_(0.0)
        model[0].bias.fill_(1.0)
        model[2].weight.copy_(torch.tensor([[1.0], [-1.0]]))
        model[2].bias.copy_(torch.tensor([-1.0, 1.0]))
    return model, torch.tensor(X), torch.tensor(Y)


def test_toy_per_sample_gradients_are_the_hand_values():
    model, x, y = toy()
    u = [0.5, -0.5, 0.5, -0.5]
    for i in range(6):
        s = 1.0 if Y[i] == 1 else -1.0
        g = estimate._unit_grads(model, x[i:i + 1], y[i:i + 1])
        assert g[0].tolist() == [s * X[i][0], s] and g[1].tolist() == [0.0] and g[2].tolist() == [s * v for v in u]


# Hand computation of the estimators on BATCHES (b0 = 2, M = 3):
#   unit 1: minibatch means g_1 = ((1+3)/2, (1+1)/2) = (2, 1); g_2 = ((−2+0)/2, (−1+1)/2) = (−1, 0);
#           g_3 = (−4, −1).  ḡ = ((2−1−4)/3, (1+0−1)/3) = (−1, 0).
#           deviations (3, 1), (0, 0), (−3, −1): Σ‖·‖² = 10 + 0 + 10 = 20
#           σ² = b0 · 20 / (M−1) = 2 · 20 / 2 = 20;  G² = ‖ḡ‖² − σ²/(b0·M) + σ²/b0 = 1 − 10/3 + 10 = 23/3
#   unit 2: no parameters: σ² = G² = 0
#   unit 3: minibatch means (mean s)·u: s̄ = 1, 0, −1 -> u, 0, −u; ḡ = 0
#           Σ‖g_m − ḡ‖² = 1 + 0 + 1 = 2;  σ² = 2 · 2 / 2 = 2;  G² = 0 − 2/6 + 2/2 = 2/3
#   loss: every sample's loss is ln 2, so f(w) = ln 2 on the b0·M = 6 distinct samples
SIGMA2 = [20.0, 0.0, 2.0]
G2 = [23 / 3, 0.0, 2 / 3]


def test_estimate_at_equals_the_hand_computed_sigma2_and_G2():
    model, x, y = toy()
    rng = ScriptedDraws(BATCHES)
    out = estimate.estimate_at(model, x, y, batch_size=2, num_batches=3, power_iters=3, rng=rng)
    assert rng.draws == []                                               # the M minibatches are the scripted ones
    assert out["sigma2"] == pytest.approx(SIGMA2, rel=1e-12, abs=1e-12)
    assert out["G2"] == pytest.approx(G2, rel=1e-12, abs=1e-12)
    assert out["loss"] == pytest.approx(math.log(2), rel=1e-12)
    assert math.isfinite(out["beta"]) and out["beta"] > 0


def test_estimate_at_single_sample_batches():
    # b0 = 1, M = 3 on samples 1, 2, 5: unit 1 gradients (3, 1), (−2, −1), (−2, 1); ḡ = (−1/3, 1/3)
    #   deviations (10/3, 2/3), (−5/3, −4/3), (−5/3, 2/3): Σ‖·‖² = (100 + 4 + 25 + 16 + 25 + 4)/9 = 174/9
    #   σ² = 1 · (174/9) / 2 = 29/3;  G² = ‖ḡ‖² − σ²/3 + σ² = 2/9 + (2/3)(29/3) = 60/9
    # unit 3: s = +1, −1, +1: ḡ = u/3, deviations (2/3)u, (−4/3)u, (2/3)u: Σ = (4 + 16 + 4)/9 = 24/9
    #   σ² = (24/9)/2 = 4/3;  G² = 1/9 + (2/3)(4/3) = 1
    model, x, y = toy()
    out = estimate.estimate_at(model, x, y, 1, 3, 1, ScriptedDraws([[1], [2], [5]]))
    assert out["sigma2"] == pytest.approx([29 / 3, 0.0, 4 / 3], rel=1e-12, abs=1e-12)
    assert out["G2"] == pytest.approx([60 / 9, 0.0, 1.0], rel=1e-12, abs=1e-12)
    assert out["loss"] == pytest.approx(math.log(2), rel=1e-12)        # on 3 distinct samples, each ln 2


def test_pilot_constants_without_steps_are_the_estimates_at_w0(monkeypatch):
    monkeypatch.setattr(estimate, "numpy_rng", lambda seed, name: ScriptedDraws(BATCHES))
    model, x, y = toy()
    rec = estimate.pilot_constants(model, x, y, pilot_steps=0, lr=0.1, batch_size=2, num_batches=3, power_iters=3,
                                   seed=0)
    c = HasflConstants.from_dict(rec["constants"])
    assert c.sigma2.tolist() == pytest.approx(SIGMA2, rel=1e-12, abs=1e-12)
    assert c.G2.tolist() == pytest.approx(G2, rel=1e-12, abs=1e-12)
    assert c.vartheta == pytest.approx(math.log(2), rel=1e-12) and len(rec["per_point"]) == 1
    assert c.beta == rec["per_point"][0]["beta"]


def test_pilot_constants_take_the_maximum_over_the_points(monkeypatch):
    points = iter([{"sigma2": [1.0, 5.0], "G2": [2.0, 0.5], "beta": 3.0, "loss": 2.0},
                   {"sigma2": [4.0, 2.0], "G2": [1.0, 0.75], "beta": 7.0, "loss": 1.0}])
    monkeypatch.setattr(estimate, "estimate_at", lambda *args: next(points))
    model, x, y = toy()
    c = estimate.pilot_constants(model, x, y, pilot_steps=1, lr=0.1, batch_size=2, num_batches=3, power_iters=1,
                                 seed=0)["constants"]
    # element-wise maxima; ϑ is the loss at w⁰ (the first point), not the maximum
    assert c == {"beta": 7.0, "sigma2": [4.0, 5.0], "G2": [2.0, 0.75], "vartheta": 2.0}


def test_beta_is_the_top_hessian_eigenvalue_of_the_loss_on_the_b0_M_samples():
    # Assumption 1 bounds the smoothness of the local loss f_i, not of one minibatch: β is taken on the same
    # b0·M distinct samples as f(w). Reference: the exact Hessian (torch.autograd.functional.hessian of a
    # softmax regression written out by hand) on those samples, its largest |eigenvalue| by numpy.
    torch.manual_seed(0)
    x = torch.randn(40, 3, dtype=torch.float64)
    y = torch.randint(0, 3, (40,))
    model = nn.Sequential(nn.Linear(3, 3)).double()
    w0, c0 = model[0].weight.detach().clone(), model[0].bias.detach().clone()

    class Draws(np.random.Generator):          # records the distinct samples of β and f(w)
        def __init__(self):
            super().__init__(np.random.PCG64(1))
            self.chosen = None

        def choice(self, *args, **kwargs):
            self.chosen = super().choice(*args, **kwargs)
            return self.chosen

    rng = Draws()
    out = estimate.estimate_at(model, x, y, batch_size=4, num_batches=5, power_iters=300, rng=rng)
    idx = torch.from_numpy(rng.chosen)
    assert len(set(rng.chosen.tolist())) == 20

    def loss(flat):
        w, c = flat[:9].reshape(3, 3), flat[9:]
        z = x[idx] @ w.T + c
        return (torch.logsumexp(z, 1) - z[torch.arange(20), y[idx]]).mean()

    hess = torch.autograd.functional.hessian(loss, torch.cat([w0.reshape(-1), c0])).numpy()
    ref = np.max(np.abs(np.linalg.eigvalsh(hess)))
    assert out["beta"] == pytest.approx(ref, rel=1e-6)
    assert out["loss"] == pytest.approx(float(loss(torch.cat([w0.reshape(-1), c0]))), rel=1e-12)


def test_the_pilot_runs_on_one_thread_and_restores_the_callers_count(monkeypatch):
    # one thread makes the pilot's SGD trajectory (and so β, σ², G²) independent of the caller's thread count: with
    # the notebook's two threads the VGG-16 pilot gave β 237, with one 316, on the same machine (README, HASFL).
    seen = []

    def fake_estimate(model, x, *args):
        seen.append(torch.get_num_threads())
        return {"sigma2": [1.0, 0.0, 1.0], "G2": [1.0, 0.0, 1.0], "beta": 1.0, "loss": 1.0}

    monkeypatch.setattr(estimate, "estimate_at", fake_estimate)
    model, x, y = toy()
    torch.set_num_threads(2)
    try:
        estimate.pilot_constants(model, x, y, pilot_steps=2, lr=0.1, batch_size=2, num_batches=3, power_iters=1,
                                 seed=0)
        assert seen == [1, 1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(1)
