"""HIST / HFedAvg: masks, eqs. (2)-(7), equivalences, engine vs literal loop, accounting, bad input."""
import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fedlib.hist import config, engine, run, sampling
import tests.reference_hist as reference
from fedlib.lab.hist import experiments
from fedlib.hist import HistConfig, MLPState
from fedlib.core.seeding import numpy_rng, torch_generator

TINY = dict(num_clients=6, hidden=30, H=5, E=10, global_rounds=2, batch_size=8)


def test_groups_are_disjoint_covering_equal_and_redrawn():
    rng = numpy_rng(0, "system")
    draws = [sampling.draw_groups("hist", 300, 3, rng) for _ in range(3)]
    for g in draws:
        masks = sampling.masks_from_groups(g, 300)
        assert masks.shape == (3, 300)
        assert (masks.sum(0) == 1).all()            # disjoint and covering: sum_j p_j = 1 (eq. 3)
        assert (masks.sum(1) == 100).all()          # equal sizes
    assert not np.array_equal(draws[0], draws[1])   # redrawn every global round
    full = sampling.draw_groups("hfedavg", 300, 3, rng)
    assert (sampling.masks_from_groups(full, 300).sum(0) == 3).all()


def test_engine_draws_new_masks_each_round(fmnist, monkeypatch):
    seen = []
    orig = sampling.draw_groups
    monkeypatch.setattr(run, "draw_groups", lambda *a: seen.append(orig(*a)) or seen[-1])
    run.run_hist(HistConfig(num_cells=3, global_rounds=3, **{k: v for k, v in TINY.items() if k != "global_rounds"}),
                  fmnist, "cpu", progress=False)
    assert len(seen) == 3 and not np.array_equal(seen[0], seen[1]) and not np.array_equal(seen[1], seen[2])


def test_cloud_aggregation_is_eq6_exactly():
    gen = torch.Generator().manual_seed(1)
    n_cells, per_cell, hidden, d, c = 3, 2, 6, 4, 2
    groups = torch.tensor([[4, 0], [2, 5], [1, 3]])
    cells = [MLPState(torch.randn(2, d, generator=gen), torch.randn(2, generator=gen),
                      torch.randn(c, 2, generator=gen), torch.randn(c, generator=gen)) for _ in range(n_cells)]
    clients = MLPState(*(torch.stack([getattr(cells[u // per_cell], k) for u in range(n_cells * per_cell)])
                         for k in ("w1", "b1", "w2", "b2")))
    glob = engine.cloud_aggregate(clients, groups, hidden)
    for j, cell in enumerate(cells):
        assert torch.equal(glob.w1[groups[j]], cell.w1)          # x̄ = sum_j p_j ⊙ x̄_j, bit for bit
        assert torch.equal(glob.b1[groups[j]], cell.b1)
        assert torch.equal(glob.w2[:, groups[j]], cell.w2)
    assert torch.allclose(glob.b2, torch.stack([cl.b2 for cl in cells]).mean(0))
    # distribute (eq. 7) gives each cell back its rows
    back = engine.distribute(glob, groups, per_cell)
    assert torch.equal(back.w1[2], cells[1].w1) and torch.equal(back.w2[5], cells[2].w2)


def test_edge_aggregation_is_eq5():
    w = torch.arange(24.0).reshape(4, 3, 2)  # 2 cells x 2 clients
    st = MLPState(w.clone(), torch.zeros(4, 3), torch.zeros(4, 1, 3), torch.zeros(4, 1))
    engine.edge_aggregate(st, 2)
    assert torch.equal(st.w1[0], (w[0] + w[1]) / 2) and torch.equal(st.w1[1], st.w1[0])
    assert torch.equal(st.w1[3], (w[2] + w[3]) / 2)


def test_client_step_matches_autograd_sgd():
    gen = torch.Generator().manual_seed(0)
    u, b, d, h, c = 3, 5, 7, 4, 3
    st = MLPState(torch.randn(u, h, d, generator=gen), torch.randn(u, h, generator=gen),
                  torch.randn(u, c, h, generator=gen), torch.randn(u, c, generator=gen))
    x_all, y_all = torch.randn(20, d, generator=gen), torch.randint(0, c, (20,), generator=gen)
    idx = torch.randint(0, 20, (u, b), generator=gen)
    x, y = x_all[idx], y_all[idx]
    before = st.clone()
    loss = engine.client_step(st, x_all, y_all, idx, lr=0.1)
    total = 0.0
    for i in range(u):
        params = [t[i].clone().requires_grad_(True) for t in (before.w1, before.b1, before.w2, before.b2)]
        li = F.cross_entropy(torch.relu(x[i] @ params[0].T + params[1]) @ params[2].T + params[3], y[i])
        grads = torch.autograd.grad(li, params)
        total += float(li.detach())
        for new, old, g in zip((st.w1, st.b1, st.w2, st.b2), params, grads):
            assert torch.allclose(new[i], old - 0.1 * g, atol=1e-6)
    assert float(loss) == pytest.approx(total, rel=1e-6)


class _Workspace64(engine.Workspace):
    """The engine's buffers in the data's dtype: ``iterate_hist`` allocates its Workspace in float32 whatever the
    data (a float64 run would fail on ``index_select(out=...)``), so the float64 comparison patches it."""

    @classmethod
    def create(cls, *args, dtype=None, **kwargs):
        return engine.Workspace.create(*args, dtype=torch.float64, **kwargs)


PAIRS = [("hist", "noniid", "averaged"), ("hfedavg", "cell_iid", "averaged"), ("hist", "cell_iid", "frozen")]


@pytest.mark.parametrize("method,setting,bias", PAIRS)
def test_batched_engine_equals_per_client_loop_float64(fmnist, method, setting, bias, float64, one_thread,
                                                       monkeypatch):
    """Every global parameter tensor and the test scores of every round, engine vs the independent literal
    loop (own nn.Module, own cross-entropy, own evaluation), in float64 at one thread: equal to 1e-12."""
    monkeypatch.setattr(run, "Workspace", _Workspace64)
    cfg = HistConfig(method=method, setting=setting, num_cells=3, output_bias=bias, **TINY)
    p = run.prepare(cfg, fmnist, "cpu")
    p = dataclasses.replace(p, x_train=p.x_train.double(), x_test=p.x_test.double())
    assert p.init.w1.dtype == torch.float64
    fast = [(m, g.clone(), loss) for m, g, loss in run.iterate_hist(p)]
    slow = list(reference.iterate_reference(p, as_dict=True))
    assert [m for m, _, _ in fast] == [m for m, _, _ in slow] == list(range(cfg.global_rounds + 1))
    for (m, g_fast, l_fast), (_, g_slow, l_slow) in zip(fast, slow):
        for key, name in zip(("w1", "b1", "w2", "b2"), reference.PARAMS):
            got, want = getattr(g_fast, key), g_slow[name]
            assert got.dtype == want.dtype == torch.float64 and got.shape == want.shape, (m, name)
            torch.testing.assert_close(got, want, atol=1e-12, rtol=0, msg=f"round {m} {name}")
        acc_fast, loss_fast = engine.evaluate(g_fast, p.x_test, p.y_test)
        acc_slow, loss_slow = reference.evaluate(g_slow, p.x_test, p.y_test)
        assert acc_fast == acc_slow and loss_fast == pytest.approx(loss_slow, rel=1e-12, abs=0), m
        assert (l_fast is None and l_slow is None and m == 0) or l_fast == pytest.approx(l_slow, rel=1e-12, abs=0)
    # not vacuous: training moved every trained tensor; a frozen b2 stayed at its initial value (to the rounding
    # of the cells' average of N equal values)
    last = slow[-1][1]
    for name, init in zip(reference.PARAMS, (p.init.w1, p.init.b1, p.init.w2, p.init.b2)):
        moved = float((last[name] - init).abs().max())
        assert moved < 1e-15 if (name == "fc2.bias" and bias == "frozen") else moved > 1e-4, (name, moved)
    assert 0.05 < fast[-1][2] < 5 and 0.0 < engine.evaluate(fast[-1][1], p.x_test, p.y_test)[0] <= 1.0


@pytest.mark.parametrize("method,setting,bias", PAIRS)
def test_run_hist_record_equals_run_reference_record(fmnist, method, setting, bias, one_thread):
    """The records of the float32 runs (the dtype of every experiment): same accuracy, losses, norms and
    accounting; the global parameters themselves agree to 1e-6 (measured: <= 1e-7)."""
    cfg = HistConfig(method=method, setting=setting, num_cells=3, output_bias=bias, **TINY)
    fast = run.run_hist(cfg, fmnist, "cpu", progress=False)
    slow = reference.run_reference(cfg, fmnist, "cpu")
    assert fast["test_acc"] == slow["test_acc"]
    np.testing.assert_allclose(fast["test_loss"], slow["test_loss"], rtol=1e-5)
    np.testing.assert_allclose(fast["train_loss"][1:], slow["train_loss"][1:], rtol=1e-5)
    assert fast["train_loss"][0] is None and slow["train_loss"][0] is None
    np.testing.assert_allclose(fast["global_sq_norm"], slow["global_sq_norm"], rtol=1e-6)
    for key in ("round", "step", "comm_client_L0", "comm_edge_server_L0", "comm_cloud_L0"):
        assert fast[key] == slow[key], key
    p = run.prepare(cfg, fmnist, "cpu")
    for (_, g_fast, _), (_, g_slow, _) in zip(run.iterate_hist(p), reference.iterate_reference(p, as_dict=True)):
        for key, name in zip(("w1", "b1", "w2", "b2"), reference.PARAMS):
            torch.testing.assert_close(getattr(g_fast, key), g_slow[name], atol=1e-6, rtol=0, msg=name)


def test_reference_cross_entropy_and_evaluation_by_hand():
    # logits (0, ln 3) with label 1: p = 3/4, CE = ln(4/3); logits (ln 2, 0) with label 1: p = 1/3, CE = ln 3
    logits = torch.tensor([[0.0, np.log(3.0)], [np.log(2.0), 0.0]], dtype=torch.float64)
    y = torch.tensor([1, 1])
    assert float(reference.cross_entropy(logits, y)) == pytest.approx((np.log(4 / 3) + np.log(3)) / 2, rel=1e-12)
    assert float(reference.cross_entropy(logits + 1000.0, y)) == pytest.approx((np.log(4 / 3) + np.log(3)) / 2,
                                                                                rel=1e-12)    # shift-invariant
    # MLP 2-2-2: W1 = I, b1 = (0, -1), W2 = [[1, 0], [0, 2]], b2 = (0, 0.5):
    # x = (3, 2): hidden relu(3, 1) = (3, 1), logits (3, 2.5) -> class 0; x = (0, 4): hidden (0, 3), logits (0, 6.5)
    # -> class 1. Labels (0, 0): accuracy 1/2, CE = mean(ln(1 + e^-0.5), ln(1 + e^6.5))
    glob = {"fc1.weight": torch.eye(2, dtype=torch.float64), "fc1.bias": torch.tensor([0.0, -1.0], dtype=torch.float64),
            "fc2.weight": torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64),
            "fc2.bias": torch.tensor([0.0, 0.5], dtype=torch.float64)}
    acc, loss = reference.evaluate(glob, torch.tensor([[3.0, 2.0], [0.0, 4.0]], dtype=torch.float64),
                                   torch.tensor([0, 0]))
    assert acc == 0.5 and loss == pytest.approx((np.log1p(np.exp(-0.5)) + np.log1p(np.exp(6.5))) / 2, rel=1e-12)
    assert reference.sq_norm(glob) == pytest.approx(2 + 1 + 5 + 0.25, rel=1e-15)


def test_hist_with_one_cell_equals_hfedavg(fmnist):
    a = run.run_hist(HistConfig(method="hist", num_cells=1, **TINY), fmnist, "cpu", progress=False)
    b = run.run_hist(HistConfig(method="hfedavg", num_cells=1, **TINY), fmnist, "cpu", progress=False)
    np.testing.assert_allclose(a["test_loss"], b["test_loss"], rtol=1e-5)
    np.testing.assert_allclose(a["global_sq_norm"], b["global_sq_norm"], rtol=1e-6)
    assert a["comm_client_L0"] == b["comm_client_L0"]


def test_hfedavg_one_cell_h_equals_e_is_fedavg(fmnist):
    cfg = HistConfig(method="hfedavg", num_cells=1, num_clients=4, hidden=16, H=6, E=6, global_rounds=3, batch_size=8)
    res = run.run_hist(cfg, fmnist, "cpu", progress=False)
    # FedAvg written out independently: every round all clients start from the global model, run E local SGD
    # steps, and the server averages the client models.
    p = run.prepare(cfg, fmnist, "cpu")
    gen = torch_generator(cfg.seed, "data")
    glob = [p.init.w1.clone(), p.init.b1.clone(), p.init.w2.clone(), p.init.b2.clone()]
    losses = []
    for _ in range(cfg.global_rounds):
        locals_ = [[t.clone() for t in glob] for _ in range(cfg.num_clients)]
        interval = sampling.sample_batch_indices(p.client_index, p.sizes, cfg.batch_size, gen, steps=cfg.E)
        for idx in interval:
            for u, params in enumerate(locals_):
                params = [t.requires_grad_(True) for t in params]
                xb, yb = p.x_train[idx[u]], p.y_train[idx[u]]
                loss = F.cross_entropy(torch.relu(xb @ params[0].T + params[1]) @ params[2].T + params[3], yb)
                grads = torch.autograd.grad(loss, params)
                locals_[u] = [(t - cfg.lr * g).detach() for t, g in zip(params, grads)]
        glob = [torch.stack([loc[k] for loc in locals_]).mean(0) for k in range(4)]
        acc, tl = engine.evaluate(MLPState(*glob), p.x_test, p.y_test)
        losses.append(tl)
    np.testing.assert_allclose(res["test_loss"][1:], losses, rtol=1e-5)


def test_communication_accounting_matches_spec(fmnist):
    cfg = HistConfig(method="hist", num_cells=3, **TINY)  # E/H = 2, n_j = 2
    res = run.run_hist(cfg, fmnist, "cpu", progress=False)
    assert res["comm_client_L0"] == pytest.approx([0, 2 / 3, 4 / 3])
    assert res["comm_edge_server_L0"] == pytest.approx([0, 4 / 3, 8 / 3])
    assert res["comm_cloud_L0"] == pytest.approx([0, 1, 2])
    assert config.comm_per_round("hist", 3, 60, 40, 200) == pytest.approx({"client": 5 / 3, "edge_server": 100 / 3,
                                                                         "cloud": 1.0})
    assert config.comm_per_round("hfedavg", 3, 60, 40, 200) == pytest.approx({"client": 5.0, "edge_server": 100.0,
                                                                            "cloud": 3.0})
    assert config.rounds_for_budget("hist", 3, 40, 200, 30.0) == 18
    assert config.rounds_for_budget("hfedavg", 3, 40, 200, 30.0) == 6


def test_hist_submodel_is_a_third_of_the_compute():
    assert HistConfig(num_cells=3).submodel_hidden == 100
    assert HistConfig(method="hfedavg", num_cells=3).submodel_hidden == 300
    full, sub = engine.step_flops(32, 784, 300, 10), engine.step_flops(32, 784, 100, 10)
    assert full == 4 * 32 * 784 * 300 + 6 * 32 * 300 * 10 == 30_681_600
    assert sub * 3 == full


def test_comm_to_target_and_summary():
    rec = {"config": HistConfig().to_dict(), "test_acc": [0.1, 0.7, 0.76, 0.8], "comm_client_L0": [0, 1, 2, 3],
           "elapsed_s": 1.0}
    assert experiments.comm_to_target(rec, 0.75) == 2
    assert experiments.comm_to_target(rec, 0.9) is None
    row = experiments.summarize([rec], 0.75)[0]
    assert row["final_test_acc"] == 0.8 and row["comm_to_target"] == 2 and row["N"] == 3


@pytest.mark.parametrize("kwargs,needle", [
    (dict(num_cells=301), "num_cells (N=301) must be <= hidden (300)"),
    (dict(num_cells=7, num_clients=63), "must divide hidden (300)"),
    (dict(num_cells=4, num_clients=62), "must divide num_clients (62)"),
    (dict(H=40, E=100), "E (cloud aggregation interval, 100) must be a multiple of H"),
    (dict(lr=0.0), "lr must be > 0"),
    (dict(method="fedavg"), "method must be one of"),
    (dict(setting="iid"), "setting must be one of"),
    (dict(batch_size=0), "batch_size must be a positive integer"),
    (dict(output_bias="trained"), "output_bias must be one of"),
])
def test_bad_config_errors(kwargs, needle):
    with pytest.raises(ValueError) as err:
        HistConfig(**kwargs)
    assert needle in str(err.value)


def test_cache_blocking_does_not_change_results(fmnist):
    cfg = HistConfig(method="hist", num_cells=2, **TINY)
    runs = []
    for block_bytes in (None, 1):  # all clients at once; one client per block
        p = run.prepare(cfg, fmnist, "cpu")
        runs.append([(m, g.clone(), loss) for m, g, loss in run.iterate_hist(p, block_bytes=block_bytes)])
    for (m1, g1, l1), (m2, g2, l2) in zip(*runs):
        assert m1 == m2 and torch.allclose(g1.w1, g2.w1, atol=1e-6) and (l1 is None or l1 == pytest.approx(l2))
    assert [(b.start, b.stop) for b in engine.client_blocks(60, 940_000, torch.device("cpu"))] == \
        [(0, 8), (8, 15), (15, 22), (22, 30), (30, 38), (38, 45), (45, 52), (52, 60)]
    assert engine.client_blocks(60, 940_000, torch.device("meta")) == [slice(0, 60)]
