"""fedlib.dtfl.privacy: distance correlation (against a literal numpy loop and hand-computed values), the private
client loss, patch shuffling, PSNR and the reconstruction attack."""
import math
import pickle

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fedlib.core.validate import ParameterTypeError
from fedlib.dtfl.privacy import dcor_loss, distance_correlation, patch_shuffle, psnr, reconstruction_attack
from fedlib.split import resnet20


pytestmark = pytest.mark.usefixtures("one_thread")


def dcor_literal(x, z):
    """Székely et al. (2007) sample distance correlation, written out with loops (non-squared dCor)."""
    n = len(x)
    xs, zs = np.asarray(x, float).reshape(n, -1), np.asarray(z, float).reshape(n, -1)

    def centred(v):
        a = np.zeros((n, n))
        for i in range(n):
            for j in range(n):
                a[i, j] = math.sqrt(sum((v[i, k] - v[j, k]) ** 2 for k in range(v.shape[1])))
        big = np.zeros((n, n))
        for i in range(n):
            for j in range(n):
                big[i, j] = a[i, j] - sum(a[i, :]) / n - sum(a[:, j]) / n + a.sum() / n ** 2
        return big

    def dcov2(p, q):
        return sum(p[i, j] * q[i, j] for i in range(n) for j in range(n)) / n ** 2

    big_a, big_b = centred(xs), centred(zs)
    return math.sqrt(dcov2(big_a, big_b) / math.sqrt(dcov2(big_a, big_a) * dcov2(big_b, big_b)))


# ---- distance correlation -----------------------------------------------------------------------------------------

def test_dcor_by_hand_three_points():
    # x = 0, 1, 2; z = 0, 1, 0: mean(A∘B) = 8/81, mean(A∘A) = 40/81, mean(B∘B) = 16/81 (worked out on paper)
    # -> dCor² = 8 / sqrt(640) = 1/sqrt(10), dCor = 10^(-1/4)
    x = torch.tensor([[0.0], [1.0], [2.0]], dtype=torch.float64)
    z = torch.tensor([[0.0], [1.0], [0.0]], dtype=torch.float64)
    assert float(distance_correlation(x, z)) == pytest.approx(10 ** -0.25, abs=1e-12)
    assert dcor_literal(x.numpy(), z.numpy()) == pytest.approx(10 ** -0.25, abs=1e-12)
    # n = 2: A = [[-d/2, d/2], [d/2, -d/2]] for any pair, so dCor = 1
    assert float(distance_correlation(torch.randn(2, 3), torch.randn(2, 5))) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("n", [4, 5])
def test_dcor_matches_literal_loops(n):
    rng = np.random.default_rng(n)
    x, z = rng.normal(size=(n, 2, 3)), rng.normal(size=(n, 4))
    z[:, 0] += x[:, 0, 0] ** 2                                    # some dependence
    want = dcor_literal(x, z)
    assert float(distance_correlation(torch.tensor(x), torch.tensor(z))) == pytest.approx(want, abs=1e-10)
    got32 = distance_correlation(torch.tensor(x, dtype=torch.float32), torch.tensor(z, dtype=torch.float32))
    assert got32.dtype == torch.float32 and float(got32) == pytest.approx(want, abs=1e-6)
    assert 0.0 < want < 1.0


def test_dcor_one_for_identity_and_affine():
    x = torch.randn(20, 3, 4, 4, generator=torch.Generator().manual_seed(0))
    assert float(distance_correlation(x, x)) == pytest.approx(1.0, abs=1e-6)
    assert float(distance_correlation(x, 2 * x + 3)) == pytest.approx(1.0, abs=1e-6)
    assert float(distance_correlation(x.double(), -0.5 * x.double() + 7)) == pytest.approx(1.0, abs=1e-12)


def test_dcor_small_for_independent_data():
    g = torch.Generator().manual_seed(3)
    dep = torch.randn(500, 2, generator=g, dtype=torch.float64)
    # the sample (V-statistic) dCor of independent data is biased upwards, ~1/sqrt(n): ≈ 0.12 at n = 500
    assert float(distance_correlation(dep, torch.randn(500, 2, generator=g, dtype=torch.float64))) < 0.2
    big = torch.randn(2000, 2, generator=g, dtype=torch.float64)
    assert float(distance_correlation(big, torch.randn(2000, 2, generator=g, dtype=torch.float64))) < 0.1
    assert float(distance_correlation(dep, dep.pow(2))) > 0.3     # uncorrelated but dependent: detected


def test_dcor_gradient_finite_with_identical_rows_and_constant_z():
    x = torch.randn(6, 3, generator=torch.Generator().manual_seed(1))
    x[1] = x[0]
    x.requires_grad_(True)
    w = torch.randn(3, 4, generator=torch.Generator().manual_seed(2), requires_grad=True)
    d = distance_correlation(x, torch.tanh(x @ w))                # z rows 0 and 1 identical too
    d.backward()
    assert torch.isfinite(d) and torch.isfinite(x.grad).all() and torch.isfinite(w.grad).all()
    assert float(d.detach()) == pytest.approx(dcor_literal(x.detach().numpy(), torch.tanh(x @ w).detach().numpy()), abs=1e-6)
    # integer data, n = 8: the centring and products are exact, so identical rows give squared distance exactly 0
    xi = torch.tensor([[1., 2.], [1., 2.], [3., 5.], [0., 1.], [4., 4.], [2., 7.], [1., 2.], [6., 0.]],
                      dtype=torch.float64, requires_grad=True)
    for zi in (xi, 2 * xi + 1, xi[:, :1] ** 2):
        di = distance_correlation(xi, zi)
        (gx,) = torch.autograd.grad(di, xi)
        assert torch.isfinite(gx).all()
        assert float(di.detach()) == pytest.approx(dcor_literal(xi.detach().numpy(), zi.detach().numpy()), abs=1e-12)
    z = torch.ones(6, 2, requires_grad=True)                      # dCov²(z, z) = 0 -> dCor = 0, zero gradient
    d0 = distance_correlation(x, z)
    d0.backward()
    assert float(d0.detach()) == 0.0 and torch.equal(z.grad, torch.zeros_like(z))


def test_dcor_errors():
    with pytest.raises(ValueError, match="same number of samples"):
        distance_correlation(torch.randn(4, 2), torch.randn(5, 2))
    with pytest.raises(ValueError, match="at least 2 samples"):
        distance_correlation(torch.randn(1, 2), torch.randn(1, 2))
    bad = torch.randn(4, 2)
    bad[2, 1] = float("nan")
    with pytest.raises(ValueError, match="^z must hold finite"):
        distance_correlation(torch.randn(4, 2), bad)
    with pytest.raises(ValueError, match="^x must hold finite"):
        distance_correlation(bad.clone().fill_(float("inf")), torch.randn(4, 2))
    with pytest.raises(ParameterTypeError, match="^x must be"):
        distance_correlation(np.zeros((4, 2)), torch.randn(4, 2))


# ---- private client loss ------------------------------------------------------------------------------------------

def _batch():
    g = torch.Generator().manual_seed(5)
    out, y = torch.randn(8, 10, generator=g), torch.randint(0, 10, (8,), generator=g)
    x = torch.randn(8, 1, 6, 6, generator=g)
    z = torch.nn.functional.conv2d(x, torch.randn(3, 1, 3, 3, generator=g)).requires_grad_(True)
    return out, y, x, z


def test_dcor_loss_weights():
    out, y, x, z = _batch()
    ce, dc = F.cross_entropy(out, y), distance_correlation(x, z)
    assert torch.equal(dcor_loss(0)(out, y, x, z), ce)
    assert torch.equal(dcor_loss(1.0)(out, y, x, z), dc)
    ce, dc = float(ce), float(dc.detach())
    assert float(dcor_loss(0.5)(out, y, x, z).detach()) == pytest.approx(0.5 * ce + 0.5 * dc, rel=1e-6)
    assert float(dcor_loss(0.25)(out, y, x, z).detach()) == pytest.approx(0.75 * ce + 0.25 * dc, rel=1e-6)
    dcor_loss(0.75)(out, y, x, z).backward()
    assert z.grad is not None and torch.isfinite(z.grad).all() and z.grad.abs().sum() > 0
    loss = pickle.loads(pickle.dumps(dcor_loss(0.25)))           # picklable for worker processes
    assert loss.alpha == 0.25


@pytest.mark.parametrize("alpha", [1.5, -0.1, float("nan")])
def test_dcor_loss_alpha_range(alpha):
    with pytest.raises(ValueError, match="^alpha must be >= 0.0 and <= 1.0"):
        dcor_loss(alpha)


def test_dcor_loss_alpha_type():
    with pytest.raises(ParameterTypeError, match="^alpha"):
        dcor_loss(True)


# ---- patch shuffling ----------------------------------------------------------------------------------------------

def _blocks(t, p):
    """Sample i's blocks as a list of p·p tuples (all channels of one block), by explicit slicing."""
    h, w = t.shape[2] // p, t.shape[3] // p
    return [[tuple(t[i, :, r * h:(r + 1) * h, c * w:(c + 1) * w].flatten().tolist()) for r in range(p)
             for c in range(p)] for i in range(len(t))]


def test_patch_shuffle_permutes_blocks_per_sample():
    z = torch.randn(8, 3, 6, 9, generator=torch.Generator().manual_seed(0))
    out = patch_shuffle(z, 3, torch.Generator().manual_seed(1))
    assert out.shape == z.shape
    perms = set()
    for bi, bo in zip(_blocks(z, 3), _blocks(out, 3)):
        assert sorted(bi) == sorted(bo)                              # same blocks, channels kept together
        perms.add(tuple(bi.index(b) for b in bo))
    assert len(perms) > 1                                             # samples get their own permutations
    assert all(sorted(p) == list(range(9)) for p in perms)
    for i in range(len(z)):                                           # values unchanged as a multiset
        assert torch.equal(z[i].flatten().sort().values, out[i].flatten().sort().values)
    assert not torch.equal(out, z)
    # documented draw: perm = argsort of one CPU rand [B, patches²]; output block k (row-major) = input block perm[k]
    want = torch.rand(8, 9, generator=torch.Generator().manual_seed(1)).argsort(dim=1)
    for i, (bi, bo) in enumerate(zip(_blocks(z, 3), _blocks(out, 3))):
        assert bo == [bi[k] for k in want[i].tolist()]


def test_patch_shuffle_identity_and_seeding():
    z = torch.randn(4, 2, 28, 28)
    one = patch_shuffle(z, 1, torch.Generator().manual_seed(0))
    assert torch.equal(one, z) and one.data_ptr() != z.data_ptr()
    a = patch_shuffle(z, 7, torch.Generator().manual_seed(3))
    assert torch.equal(a, patch_shuffle(z, 7, torch.Generator().manual_seed(3)))
    assert not torch.equal(a, patch_shuffle(z, 7, torch.Generator().manual_seed(4)))
    tiny = torch.arange(4.0).view(1, 1, 2, 2)                       # 2×2 blocks of one pixel
    assert sorted(patch_shuffle(tiny, 2, torch.Generator().manual_seed(0)).flatten().tolist()) == [0, 1, 2, 3]


def test_patch_shuffle_errors():
    with pytest.raises(ValueError, match=r"patches must divide .*valid values: \[1, 2, 4, 7, 14, 28\]; got 3"):
        patch_shuffle(torch.zeros(2, 1, 28, 28), 3, torch.Generator())
    with pytest.raises(ValueError, match="^patches must be a positive integer"):
        patch_shuffle(torch.zeros(2, 1, 28, 28), 0, torch.Generator())
    with pytest.raises(ValueError, match="4-D"):
        patch_shuffle(torch.zeros(2, 28, 28), 2, torch.Generator())
    with pytest.raises(ParameterTypeError, match="^generator"):
        patch_shuffle(torch.zeros(2, 1, 28, 28), 2, 0)


# ---- PSNR and the reconstruction attack ---------------------------------------------------------------------------

def test_psnr_by_hand():
    x = torch.zeros(2, 1, 2, 2)
    x_hat = torch.stack([torch.full((1, 2, 2), 0.1), torch.full((1, 2, 2), 0.01)])   # MSE 0.01 and 1e-4
    assert psnr(x, x_hat).tolist() == pytest.approx([20.0, 40.0], abs=1e-6)
    assert psnr(x, x).tolist() == [math.inf, math.inf]
    with pytest.raises(ValueError, match="same shape"):
        psnr(x, x_hat[:1])
    with pytest.raises(ValueError, match=r"^x_hat must hold pixels in \[0, 1\]"):
        psnr(x, x_hat + 1.0)


class Zeros(torch.nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


FAST = dict(epochs=2, batch_size=16, lr=1e-2)


def test_attack_separates_leaking_from_blank_smashed_data(fmnist):
    x_fit, x_eval = fmnist.x_train[:64], fmnist.x_test[:32]
    leak = reconstruction_attack(torch.nn.Identity(), x_fit, x_eval, **FAST)
    blank = reconstruction_attack(Zeros(), x_fit, x_eval, **FAST)
    assert set(leak) == {"psnr_db", "mse", "dcor", "dcor_chunks", "n_fit", "n_eval"}
    assert (leak["n_fit"], leak["n_eval"], leak["dcor_chunks"]) == (64, 32, 1)
    assert math.isfinite(leak["psnr_db"]) and math.isfinite(blank["psnr_db"])
    assert leak["psnr_db"] > blank["psnr_db"] + 3.0                  # measured: ≈ 15.1 vs 9.0 dB
    assert leak["dcor"] == pytest.approx(1.0, abs=1e-6) and blank["dcor"] == 0.0
    assert reconstruction_attack(torch.nn.Identity(), x_fit, x_eval, **FAST) == leak   # seeded


def test_attack_on_resnet_cut_and_patch_shuffle(fmnist):
    torch.manual_seed(0)
    model = resnet20(1, 28, 10, width=0.25)
    client = model[:1]
    before = [p.clone() for p in client.parameters()]
    x_fit, x_eval = fmnist.x_train[:64], fmnist.x_test[:32]
    plain = reconstruction_attack(client, x_fit, x_eval, **FAST)
    g = torch.Generator().manual_seed(0)
    shuffled = reconstruction_attack(client, x_fit, x_eval, transform=lambda z: patch_shuffle(z, 4, g), **FAST)
    assert 0.5 < plain["dcor"] < 1.0 and math.isfinite(plain["psnr_db"])
    assert shuffled["psnr_db"] < plain["psnr_db"] - 3.0            # measured: ≈ 9.6 vs 17.0 dB
    assert client.training and all(torch.equal(a, b) for a, b in zip(before, client.parameters()))


def test_attack_errors(fmnist):
    x = fmnist.x_test[:8]
    with pytest.raises(ValueError, match="pixel_mean"):
        reconstruction_attack(torch.nn.Identity(), x, x, pixel_mean=0.0, pixel_std=1.0)
    with pytest.raises(ValueError, match="x_eval >= 2 images"):
        reconstruction_attack(torch.nn.Identity(), x, x[:1])
    with pytest.raises(ValueError, match="^epochs"):
        reconstruction_attack(torch.nn.Identity(), x, x, epochs=0)
    with pytest.raises(ValueError, match="same image shape"):
        reconstruction_attack(torch.nn.Identity(), x, x[:, :, :14])
    with pytest.raises(ParameterTypeError, match="^client"):
        reconstruction_attack(lambda v: v, x, x)
