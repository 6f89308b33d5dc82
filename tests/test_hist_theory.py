"""HIST theory: eq. (12), eq. (13), Corollary 1 and orders against hand-computed values; estimators."""
import math

import numpy as np
import pytest
import torch

from fedlib.hist import estimate as est
from fedlib.hist import theory as th
from fedlib.hist import MLPState

CPC = [4, 4]  # N = 2 cells of 4 clients: Ñ = 1/4 + 1/4 = 0.5


def test_step_size_condition_hand_computed():
    out = th.step_size_terms(L=2.0, clients_per_cell=CPC, H=2, E=4)
    # 1/(32·4·1·2), 0.5/(2·2·2), 1/(2·4·2), 1/(3·4·2)
    assert out["terms"] == pytest.approx([1 / 256, 1 / 16, 1 / 16, 1 / 24])
    assert out["gamma_max"] == pytest.approx(1 / 256) and out["binding"] == 0
    assert th.step_size_ok(1 / 300, 2.0, CPC, 2, 4) and not th.step_size_ok(1 / 200, 2.0, CPC, 2, 4)


def test_theorem1_bound_hand_computed():
    b = th.theorem1_bound(gamma=0.001, L=2.0, sigma2=3.0, delta1_sq=0.5, delta2_sq=2.0, f_gap=2.3,
                          clients_per_cell=CPC, E=4, T=100, mean_sq_norm=10.0)
    assert b["init"] == pytest.approx(92.0)              # 4·2.3/(0.001·100)
    assert b["variance"] == pytest.approx(0.15)          # 50·0.001·0.5·2·3
    assert b["client_dissimilarity"] == pytest.approx(0.096)  # 24·0.001·2·2
    assert b["cell_dissimilarity"] == pytest.approx(6.0)      # 12·0.5
    assert b["model_norm"] == pytest.approx(960.0)            # 24·1·4·10
    assert b["total"] == pytest.approx(1058.246)
    printed = th.theorem1_bound(0.001, 2.0, 3.0, 0.5, 2.0, 2.3, CPC, 4, 100, 10.0, form="printed")
    assert printed["init"] == pytest.approx(9200.0)


def test_corollary_and_orders_hand_computed():
    assert th.n_tilde([2, 4, 4]) == pytest.approx(1.0)
    assert th.corollary1_step_size(100, CPC) == pytest.approx(1 / math.sqrt(50))
    assert th.max_H_order(CPC, 100) == pytest.approx(min(50 ** 0.25 / math.sqrt(2), 0.5 ** 1.5 * 10 / 2))
    assert th.max_H_order(CPC, 100) == pytest.approx(1.767767, rel=1e-6)
    assert th.max_E_order(CPC, 100) == pytest.approx(math.sqrt(50) / 2)
    assert th.corollary1_min_T(2.0, CPC, 2, 4) == 131072    # 1/(0.5·(1/256)²)


@pytest.mark.parametrize("call,needle", [
    (lambda: th.step_size_terms(2.0, [4], 2, 4), "N (number of cells) must be >= 2"),
    (lambda: th.step_size_terms(0.0, CPC, 2, 4), "L must be > 0"),
    (lambda: th.theorem1_bound(0.0, 2.0, 1, 1, 1, 1, CPC, 4, 100, 1), "gamma must be > 0"),
    (lambda: th.theorem1_bound(0.1, 2.0, -1, 1, 1, 1, CPC, 4, 100, 1), "sigma2 must be >= 0"),
    (lambda: th.theorem1_bound(0.1, 2.0, 1, 1, 1, 1, CPC, 4, 100, 1, form="x"), "form must be"),
    (lambda: th.n_tilde([3, 0]), "clients_per_cell must be"),
])
def test_theory_errors(call, needle):
    with pytest.raises(ValueError) as err:
        call()
    assert needle in str(err.value)


def test_dissimilarities_hand_computed():
    g = torch.tensor([[1.0, 0], [3, 0], [0, 1], [0, 5]])  # cells {0,1}, {2,3}
    d1, d2 = est.dissimilarities(g, 2)
    # cell means (2,0), (0,3); global (1,1.5): δ1² = 1 + 2.25; δ2² = max(1, 4)
    assert d1 == pytest.approx(3.25) and d2 == pytest.approx(4.0)
    with pytest.raises(ValueError, match="must divide"):
        est.dissimilarities(g, 3)


def _tiny_state(seed=0, d=3, h=2, c=2):
    gen = torch.Generator().manual_seed(seed)
    return MLPState(torch.randn(h, d, generator=gen), torch.randn(h, generator=gen),
                    torch.randn(c, h, generator=gen), torch.randn(c, generator=gen))


def test_hessian_power_iteration_matches_full_hessian():
    st = _tiny_state()
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(6, 3, generator=gen), torch.tensor([0, 1, 0, 1, 1, 0])
    flat = torch.cat([st.w1.reshape(-1), st.b1, st.w2.reshape(-1), st.b2]).double()
    shapes = [(2, 3), (2,), (2, 2), (2,)]

    def f(v):
        parts, k = [], 0
        for s in shapes:
            n = int(np.prod(s))
            parts.append(v[k:k + n].reshape(s))
            k += n
        return est._loss(parts, x.double(), y)

    eig = torch.linalg.eigvalsh(torch.autograd.functional.hessian(f, flat)).abs().max().item()
    top = est._hessian_top(MLPState(*(t.double() for t in (st.w1, st.b1, st.w2, st.b2))), x.double(), y,
                           200, torch.Generator().manual_seed(2))
    assert top == pytest.approx(eig, rel=1e-3)


def test_gradient_variance_zero_for_identical_samples_and_scales_with_batch():
    st = _tiny_state()
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(40, 3, generator=gen), torch.randint(0, 2, (40,), generator=gen)
    same = [np.zeros(5, dtype=np.int64)]
    assert est.gradient_variance(st, x, y, same, 4, 3, np.random.default_rng(0))[0] == pytest.approx(0.0, abs=1e-12)
    parts = [np.arange(40)]
    s1 = est.gradient_variance(st, x, y, parts, 1, 3000, np.random.default_rng(0))[0]
    s8 = est.gradient_variance(st, x, y, parts, 8, 3000, np.random.default_rng(1))[0]
    assert s1 / s8 == pytest.approx(8.0, rel=0.15)   # with replacement: variance ∝ 1/B
