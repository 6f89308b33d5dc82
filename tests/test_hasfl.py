"""HASFL system model: profiles vs the spec's reference values, latency eqs. (28)-(40) by hand, Theorem 1,
Newton–Jacobi's first-order condition, BCD vs exhaustive search, constraints C3-C5, infeasible inputs."""
import itertools
from dataclasses import replace

import numpy as np
import pytest

from fedlib import hasfl as ho
from fedlib.hasfl import TABLE_I, HasflConstants, bound_floor, round_latency, rounds_needed, theorem1_bound, total_latency
from fedlib.split import EdgeDevices, LayerProfile, Servers, memory_bits, model_profile, sample_system


@pytest.fixture(scope="module")
def vgg():
    return model_profile("vgg16")


def test_vgg16_profile_matches_spec(vgg):
    assert vgg.num_layers == 16
    assert vgg.fwd_flops[12] / 2 == pytest.approx(313.2e6, rel=1e-3)          # conv stack MACs, 32x32
    kib = vgg.act_bits[:13] / 8 / 1024
    assert kib.tolist() == [256, 64, 128, 32, 64, 64, 16, 32, 32, 8, 8, 8, 2]
    assert np.all(np.diff(vgg.fwd_flops) > 0) and np.all(vgg.bwd_flops >= vgg.fwd_flops)
    # backward of a conv unit with an input gradient ≈ 2x its forward; unit 1 computes no input gradient
    assert vgg.bwd_flops[0] == pytest.approx(vgg.fwd_flops[0], rel=0.01)
    assert (vgg.bwd_flops[12] - vgg.bwd_flops[11]) / (vgg.fwd_flops[12] - vgg.fwd_flops[11]) == pytest.approx(2, rel=0.02)
    assert vgg.param_bits[-1] == 32 * vgg.params_per_unit.sum()


def test_resnet18_profile_matches_spec():
    p = model_profile("resnet18", num_classes=100)
    assert p.num_layers == 10 and int(p.params_per_unit.sum()) == 11_220_132
    assert p.fwd_flops[-1] / 2 == pytest.approx(555.5e6, rel=1e-3)
    assert p.act_bits[0] == 32 * 64 * 32 * 32


def test_profiles_serve_fashion_mnist_and_optimizers():
    p = model_profile("vgg16", in_channels=1, image_size=28, num_classes=10, optimizer="adam")
    assert p.act_bits[0] == 32 * 64 * 28 * 28 and p.act_bits[12] == 32 * 512  # 28→14→7→4→2→1
    assert np.array_equal(p.opt_state_bits, 2 * p.param_bits)
    m = model_profile("resnet18", 1, 28, 10, optimizer="momentum")
    assert np.array_equal(m.opt_state_bits, m.param_bits)
    assert np.all(model_profile("resnet18", 1, 28, 10).opt_state_bits == 0)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        model_profile("vgg16", optimizer="lion")
    with pytest.raises(ValueError, match=r"must be one of \[.*'vgg16'\], got 'vgg19'"):
        model_profile("vgg19")
    with pytest.raises(ValueError, match="image_size must be an integer >= 8"):
        model_profile("vgg16", image_size=4)


def toy_profile():
    """L = 2: ρ = (10, 30), ϖ = (20, 60) FLOPs, ψ = χ = (8, 4) bits, δ = (100, 300) bits."""
    arr = np.asarray
    return LayerProfile("toy", (1, 1, 1), "sgd", arr([10.0, 30.0]), arr([20.0, 60.0]), arr([8.0, 4.0]), arr([8.0, 4.0]),
                        arr([100.0, 300.0]), arr([0.0, 0.0]), arr([8.0, 12.0]), arr([8.0, 12.0]), arr([3, 6]))


def toy_system():
    dev = EdgeDevices(flops=[10.0, 5.0], rate_up=[2.0, 4.0], rate_down=[8.0, 8.0], rate_up_fed=[50.0, 100.0],
                      rate_down_fed=[100.0, 100.0], memory_bits=[1000.0, 1000.0])
    return dev, Servers(flops=100.0, rate_to_fed=200.0, rate_from_fed=400.0)


def test_latency_by_hand():
    dev, srv = toy_system()
    out = round_latency(toy_profile(), b=[2, 3], cuts=[1, 2], devices=dev, servers=srv)
    assert out["T_F"].tolist() == pytest.approx([2 * 10 / 10, 3 * 30 / 5])            # (28): 2, 18
    assert out["T_aU"].tolist() == pytest.approx([2 * 8 / 2, 3 * 4 / 4])              # (29): 8, 3
    assert out["T_sF"] == pytest.approx((2 * (30 - 10) + 3 * 0) / 100)                 # (30): 0.4
    assert out["T_sB"] == pytest.approx((2 * (60 - 20) + 0) / 100)                    # (31): 0.8
    assert out["T_gD"].tolist() == pytest.approx([2 * 8 / 8, 3 * 4 / 8])              # (32): 2, 1.5
    assert out["T_B"].tolist() == pytest.approx([2 * 20 / 10, 3 * 60 / 5])            # (33): 4, 36
    assert out["T_S"] == pytest.approx(max(2 + 8, 18 + 3) + 0.4 + 0.8 + max(2 + 4, 1.5 + 36))  # (38): 59.7
    assert out["Lambda_s"] == pytest.approx(2 * 300 - 400)                             # 200 bits
    assert out["T_A"] == pytest.approx(max(100 / 50, 300 / 100, 200 / 200) + max(1, 3, 200 / 400))  # (39): 6
    assert total_latency(31, 15, out["T_S"], out["T_A"]) == pytest.approx(31 * 59.7 + 2 * 6)          # (40)
    assert memory_bits(toy_profile(), [2, 3], [1, 2]).tolist() == [2 * 16 + 100, 3 * 24 + 300]


def test_latency_is_vectorised_over_decisions():
    dev, srv = toy_system()
    b = np.array([[2, 3], [1, 1], [5, 4]])
    cuts = np.array([[1, 2], [2, 2], [1, 1]])
    many = round_latency(toy_profile(), b, cuts, dev, srv)
    for k in range(3):
        one = round_latency(toy_profile(), b[k], cuts[k], dev, srv)
        assert many["T_S"][k] == pytest.approx(one["T_S"]) and many["T_A"][k] == pytest.approx(one["T_A"])


def test_latency_bad_input():
    dev, srv = toy_system()
    with pytest.raises(ValueError, match="cuts must be integers in 1..L = 1..2"):
        round_latency(toy_profile(), [1, 1], [1, 3], dev, srv)
    with pytest.raises(ValueError, match="batch sizes b must be >= 1"):
        round_latency(toy_profile(), [0, 1], [1, 1], dev, srv)
    with pytest.raises(ValueError, match="flops must be finite and > 0"):
        EdgeDevices([1.0, -1.0], [1, 1], [1, 1], [1, 1], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="device_flops must be a range"):
        replace(TABLE_I, device_flops=(2e12, 1e12))


def test_table_i_sampler():
    dev, srv = sample_system(TABLE_I, np.random.default_rng(0))
    assert dev.num_devices == 20 and srv.flops == 20e12
    assert np.all((dev.flops >= 1e12) & (dev.flops <= 2e12))
    assert np.all((dev.rate_up >= 75e6) & (dev.rate_up <= 80e6)) and np.all(dev.rate_down_fed >= 360e6)
    assert 360e6 <= srv.rate_to_fed <= 380e6
    again, _ = sample_system(TABLE_I, np.random.default_rng(0))
    assert np.array_equal(dev.flops, again.flops)


CONSTS = HasflConstants(beta=2.0, sigma2=np.array([1.0, 3.0]), G2=np.array([0.5, 1.5]), vartheta=2.0)


def test_theorem1_by_hand():
    t = theorem1_bound(CONSTS, gamma=0.1, b=[2, 4], cuts=[1, 2], interval=3, rounds=10)
    assert t["init"] == pytest.approx(2 * 2 / (0.1 * 10))                         # 4
    assert t["variance"] == pytest.approx(2 * 0.1 * 4 * (1 / 2 + 1 / 4) / 4)        # 0.15
    assert t["split"] == pytest.approx(4 * 4 * 0.01 * 9 * 2.0)                      # 2.88 (G̃²_2 = 2)
    assert bound_floor(CONSTS, 0.1, [2, 4], 2, 1) == pytest.approx(0.15)            # I = 1: no split term
    # Corollary 1: R = ceil(2ϑ/(γ(ε − floor))) = ceil(4/(0.1·(5 − 3.03))) = 21
    assert rounds_needed(CONSTS, 0.1, [2, 4], [1, 2], 3, eps=5.0) == 21
    with pytest.raises(ValueError, match="below the bound's floor 3.03"):
        rounds_needed(CONSTS, 0.1, [2, 4], [1, 2], 3, eps=3.0)
    with pytest.raises(ValueError, match="gamma must satisfy 0 < gamma <= 1/beta"):
        theorem1_bound(CONSTS, 0.6, [2, 4], [1, 2], 3, 10)


def test_theta_eq42_by_hand():
    # the 2-device toy of test_latency_by_hand: b = (2, 3), cuts (1, 2): T_S = 59.7 s, T_A = 6 s (eqs. 38, 39)
    # CONSTS: β = 2, Σσ² = 4, G̃²_2 = 2, ϑ = 2; γ = 0.1, I = 3, ε = 5
    #   variance = βγ Σσ² (1/2 + 1/3) / N² = 0.8 x (5/6) / 4 = 1/6;  split = 4β²γ²I² G̃²_{L_c = 2} = 2.88
    #   Θ = 2ϑ (T_S + T_A/I) / (γ (ε − 1/6 − 2.88)) = 4 x 61.7 / (0.1 x 293/150) = 370200/293 = 1263.4812...
    dev, srv = toy_system()
    p = ho.Problem(toy_profile(), dev, srv, CONSTS, gamma=0.1, eps=5.0, interval=3)
    assert float(ho.theta(p, [2, 3], [1, 2])) == pytest.approx(370200 / 293, rel=1e-12)
    # I = 1: no split term and T_A every round: 4 x (59.7 + 6) / (0.1 x (5 − 1/6)) = 15768/29 = 543.724...
    p1 = ho.Problem(toy_profile(), dev, srv, CONSTS, gamma=0.1, eps=5.0, interval=1)
    assert float(ho.theta(p1, [2, 3], [1, 2])) == pytest.approx(15768 / 29, rel=1e-12)
    # vectorised over decisions; inf where infeasible: memory C4 (60 x 16 + 100 = 1060 bits >= 1000), a cut
    # outside allowed_cuts, ε at or below the floor (ε = 3 < 3.0467)
    many = ho.theta(p, [[2, 3], [60, 3], [2, 3]], [[1, 2], [1, 2], [1, 2]])
    assert many.tolist() == pytest.approx([370200 / 293, np.inf, 370200 / 293], rel=1e-12)
    only1 = ho.Problem(toy_profile(), dev, srv, CONSTS, gamma=0.1, eps=5.0, interval=3, allowed_cuts=(1,))
    assert float(ho.theta(only1, [2, 3], [1, 2])) == np.inf
    tight = ho.Problem(toy_profile(), dev, srv, CONSTS, gamma=0.1, eps=3.0, interval=3)
    assert float(ho.theta(tight, [2, 3], [1, 2])) == np.inf


def test_newton_jacobi_first_order_condition():
    A, B, D = 5.0, 0.3, 2.0
    C = np.array([0.1, 0.4, 0.02, 0.0])
    b = ho.newton_jacobi(A, B, C, D)
    assert np.isinf(b[3])                                        # C_i = 0: Θ' decreasing in b_i
    np.testing.assert_allclose(b, ho.p1_closed_form(A, B, C, D), rtol=1e-9)

    def obj(x):
        x = np.where(np.isinf(x), 1e12, x)
        return ((x * C).sum() + D) / (A - (B / x).sum())

    for i in range(3):                                           # ∂Θ'/∂b_i = 0 (central differences)
        h = 1e-5 * b[i]
        up, dn = b.copy(), b.copy()
        up[i] += h
        dn[i] -= h
        assert (obj(up) - obj(dn)) / (2 * h) == pytest.approx(0.0, abs=1e-7)
    with pytest.raises(ValueError, match="convergence constraint C1"):
        ho.newton_jacobi(-1.0, B, C, D)


@pytest.fixture(scope="module")
def vgg_consts(vgg):
    sig = np.array([22.3, 750, 430, 552, 397, 544, 383, 307, 414, 301, 255, 176, 124, 24, 25.4, 28.7])
    return sig


def _problem(vgg, sig, n, seed, interval, g2_scale, cuts, slack=0.5, max_batch=64):
    c = HasflConstants(326.0, sig, sig * g2_scale, 2.31)
    dev, srv = sample_system(replace(TABLE_I, num_devices=n), np.random.default_rng(seed))
    return ho.Problem(vgg, dev, srv, c, 5e-4, ho.eps_with_slack(c, 5e-4, interval, n, slack), interval, cuts,
                      max_batch=max_batch)


@pytest.mark.parametrize("n,seed,interval,g2_scale,cuts", [
    (2, 0, 1, 1.0, tuple(range(1, 17))),     # I = 1: no split term, every cut allowed
    (2, 1, 5, 1e-6, (1, 4, 7, 13, 16)),
    (3, 2, 15, 1e-7, (1, 7, 13)),
    (3, 3, 15, 1.0, (1, 2, 3)),              # the estimated G² scale: only shallow cuts are admissible
])
def test_bcd_matches_exhaustive_search(vgg, vgg_consts, n, seed, interval, g2_scale, cuts):
    p = _problem(vgg, vgg_consts, n, seed, interval, g2_scale, cuts)
    best = ho.exhaustive(p, b_max=64)
    got = ho.bcd(p)
    assert got.theta <= best.theta * 1.01          # within 1 % (measured: 0 % on every instance here)
    _check_constraints(p, got)


def _check_constraints(p, d):
    assert d.b.dtype.kind == "i" and np.all(d.b >= 1)                                   # C5
    assert d.cuts.shape == (p.num_devices,) and np.all(np.isin(d.cuts, p.allowed_cuts))  # C2/C3
    assert np.all(memory_bits(p.profile, d.b, d.cuts) < p.devices.memory_bits)         # C4
    assert np.isfinite(d.theta) and d.theta == pytest.approx(float(ho.theta(p, d.b, d.cuts)))


def test_p2_dinkelbach_is_optimal_for_fixed_batch_sizes(vgg, vgg_consts):
    p = _problem(vgg, vgg_consts, 3, 4, 5, 1e-6, (1, 4, 7, 13, 16))
    b = np.array([48, 56, 64])
    cuts, T, info = ho.solve_p2(p, b)
    brute = min(float(ho.theta(p, b, np.array(c))) for c in itertools.product(p.allowed_cuts, repeat=3))
    assert float(ho.theta(p, b, cuts)) == pytest.approx(brute, rel=1e-6)
    assert info["dinkelbach_iters"] >= 1


def test_table_i_system_hasfl_beats_benchmarks(vgg, vgg_consts):
    p = _problem(vgg, vgg_consts, 20, 0, 15, 1e-6, (), slack=20.0, max_batch=None)
    hasfl = ho.strategy(p, "HASFL", np.random.default_rng(0))
    _check_constraints(p, hasfl)
    for name in ho.STRATEGIES[1:]:
        other = ho.strategy(p, name, np.random.default_rng(0))
        assert np.isfinite(other.theta) and hasfl.theta <= other.theta, name
    with pytest.raises(ValueError, match="strategy must be one of"):
        ho.strategy(p, "RANDOM", np.random.default_rng(0))


def test_rms_draws_among_memory_feasible_cuts_and_its_c1_variant_among_reachable_ones(vgg, vgg_consts):
    # the estimated G² scale: ε reachable only at cut 1, every cut up to 8 fits memory at b = 64
    from fedlib.hasfl.bound.problem import admissible_cuts, feasible_cuts
    p = _problem(vgg, vgg_consts, 3, 3, 15, 1.0, tuple(range(1, 9)))
    assert admissible_cuts(p, np.full(3, 64)).sum(1).tolist() == [1, 1, 1]
    assert feasible_cuts(p, np.full(3, 64))[:, :8].all()                 # allowed_cuts: 1..8
    drawn = set()
    for seed in range(6):
        paper, c1 = (ho.strategy(p, n, np.random.default_rng(seed)) for n in ("RBS+RMS", "RBS+RMS(C1)"))
        b = np.random.default_rng(seed).integers(1, 65, 3)
        assert paper.b.tolist() == c1.b.tolist() == b.tolist()       # one stream: the same batch sizes
        assert c1.cuts.tolist() == [1, 1, 1] and np.isfinite(c1.theta)
        drawn |= set(paper.cuts.tolist())
        if paper.cuts.max() > 1:                                        # a deep draw leaves ε unreachable
            assert paper.theta == np.inf and "C1" in paper.info["infeasible"]
        habs = ho.strategy(p, "HABS+RMS", np.random.default_rng(seed))
        if habs.cuts.max() > 1:                  # HABS at the drawn cuts, for ε = 1.1 x their floor at b = 64
            floor = ho.bound_floor(p.constants, p.gamma, np.full(3, 64.0), int(habs.cuts.max()), p.interval)
            assert "1.1 x the floor" in habs.info["note"] and f"{1.1 * floor:.4g}" in habs.info["note"]
            q = replace(p, eps=1.1 * floor)
            assert habs.b.tolist() == ho.exact_batches(q, habs.cuts).tolist()
    assert len(drawn) >= 6                                          # the paper's draw reaches deep cuts
    assert ho.draw_stream("HABS+RMS(C1)") == "HABS+RMS" and ho.draw_stream("RBS+HAMS") == "RBS+HAMS"


def test_infeasible_inputs_name_the_constraint(vgg, vgg_consts):
    p = _problem(vgg, vgg_consts, 3, 0, 15, 1.0, ())
    unreachable = ho.Problem(p.profile, p.devices, p.servers, p.constants, p.gamma, 1e-3, p.interval)
    with pytest.raises(ValueError, match="convergence constraint C1"):
        ho.bcd(unreachable)
    tiny = EdgeDevices(p.devices.flops, p.devices.rate_up, p.devices.rate_down, p.devices.rate_up_fed,
                       p.devices.rate_down_fed, np.array([1e9, 1e3, 1e9]))
    small = ho.Problem(p.profile, tiny, p.servers, p.constants, p.gamma, p.eps, p.interval)
    with pytest.raises(ValueError, match=r"memory constraint C4: device 1"):
        ho.bcd(small)
    with pytest.raises(ValueError, match="too large"):
        ho.exhaustive(_problem(vgg, vgg_consts, 20, 0, 15, 1.0, ()))
    with pytest.raises(ValueError, match="gamma must satisfy"):
        ho.Problem(p.profile, p.devices, p.servers, p.constants, 1.0, p.eps, p.interval)


# --- HAMS (cuts by P2) and HABS (batch sizes by P1) against brute force --------------------------------------------

def _hetero(vgg, sig):
    """3 devices, one on a 5 Mbit/s uplink (Table I: 75-80): the optimal cuts differ between devices."""
    c = HasflConstants(326.0, sig, sig * 1e-6, 2.31)
    dev = EdgeDevices(flops=[1.5e12, 1e12, 1.5e12], rate_up=[78e6, 5e6, 78e6], rate_down=[372e6, 375e6, 371e6],
                      rate_up_fed=[79.7e6, 79.1e6, 75e6], rate_down_fed=[377e6, 361e6, 375e6], memory_bits=[8e9] * 3)
    return ho.Problem(vgg, dev, Servers(20e12, 366e6, 368e6), c, 5e-4, ho.eps_with_slack(c, 5e-4, 5, 3, 20.0), 5,
                      (1, 2, 4, 7, 10, 13, 16), max_batch=64)


def _best_cuts(p, b):
    """Brute force over P2: Θ of every cut vector in allowed_cuts^N at batch sizes b; (argmin, min, 2nd smallest)."""
    cands = np.array(list(itertools.product(p.allowed_cuts, repeat=p.num_devices)))
    vals = ho.theta(p, np.broadcast_to(np.asarray(b), cands.shape), cands)
    order = np.argsort(vals)
    return cands[order[0]].tolist(), float(vals[order[0]]), float(vals[order[1]])


def _best_batches(p, cuts, b_max=64):
    """Brute force over the batch sizes: Θ of every b in {1..b_max}^N at the given cuts."""
    grid = np.stack(np.meshgrid(*[np.arange(1, b_max + 1)] * p.num_devices, indexing="ij"), -1).reshape(-1, p.num_devices)
    vals = ho.theta(p, grid, np.broadcast_to(np.asarray(cuts), grid.shape))
    order = np.argsort(vals)
    return grid[order[0]].tolist(), float(vals[order[0]]), float(vals[order[1]])


def test_hams_cuts_are_the_brute_force_optimum(vgg, vgg_consts):
    from fedlib.lab.hasfl.runs.training import decide
    p = _hetero(vgg, vgg_consts)
    best, low, second = _best_cuts(p, [16, 16, 16])
    assert best == [7, 7, 4] and second > low * 1.005          # heterogeneous and unique (measured 1.1 % apart)
    d = decide(p, "HAMS", 0, batch=16)
    assert d["b"] == [16, 16, 16] and d["cuts"] == best and d["theta"] == pytest.approx(low, rel=1e-12)
    # RBS+HAMS: b drawn uniformly in 1..64 from the strategy's generator, then the cuts of P2
    for seed in (0, 1):
        b = np.random.default_rng(seed).integers(1, 65, 3)
        got = ho.strategy(p, "RBS+HAMS", np.random.default_rng(seed))
        best, low, second = _best_cuts(p, b)
        assert got.b.tolist() == b.tolist() and got.cuts.tolist() == best and second > low * 1.0005, seed
        assert got.theta == pytest.approx(low, rel=1e-12)


def test_habs_batch_sizes_are_the_brute_force_optimum(vgg, vgg_consts):
    from fedlib.hasfl.optimiser.p1 import solve_p1
    from fedlib.hasfl.bound.problem import admissible_cuts
    from fedlib.lab.hasfl.runs.training import decide
    p = _problem(vgg, vgg_consts, 3, 2, 15, 1e-7, (1, 7, 13), slack=20.0)      # Table I's system
    best, low, second = _best_batches(p, [13, 13, 13])
    assert best == [31, 32, 40] and second > low * (1 + 1e-4)                    # unique (measured 2e-4 apart)
    d = decide(p, "HABS", 0, cut=13)
    assert d["cuts"] == [13] * 3 and d["b"] == best and d["theta"] == pytest.approx(low, rel=1e-12) and d["note"] == ""
    # the decision is P1 + Proposition 1 at T from b = 64 (the strategy's definition)
    cuts = np.full(3, 13)
    assert solve_p1(p, cuts, ho.aux_variables(p, np.full(3, 64), cuts)).tolist() == best
    # HABS+RMS: each device's cut drawn among its admissible cuts at b = 64, then P1; seed 4 draws 13, 13, 13
    rng = np.random.default_rng(4)
    cuts = [int(rng.choice(np.flatnonzero(row))) + 1 for row in admissible_cuts(p, np.full(3, 64))]
    got = ho.strategy(p, "HABS+RMS", np.random.default_rng(4))
    assert cuts == got.cuts.tolist() == [13, 13, 13] and got.b.tolist() == best
    assert got.theta == pytest.approx(low, rel=1e-12)


def test_habs_batch_sizes_follow_a_slow_uplink(vgg, vgg_consts):
    from fedlib.lab.hasfl.runs.training import decide
    p = _hetero(vgg, vgg_consts)
    best, low, _ = _best_batches(p, [1, 1, 1])
    assert best == [29, 2, 29]
    d = decide(p, "HABS", 0, cut=1)                   # P1 alone: b = [6, 6, 6], Θ = 568 s against 262 s
    assert d["b"] == best and d["theta"] == pytest.approx(low, rel=1e-9)


def test_habs_gives_the_slow_device_a_small_batch_hand_checked(vgg):
    """Two devices at cut 1 of VGG-16 (32x32x3), one on a 5 Mbit/s uplink, the other on 78: Θ (eq. 42) at fixed
    cuts is K·(max_i a_i b_i + Σ c_i b_i + max_i d_i b_i + E) / (A − B·Σ 1/b_i), whose per-sample terms are
    computed here by hand from cut 1's smashed data (64·32·32 floats = 2,097,152 bits, eqs. 29 and 32) and
    FLOPs (3,538,944 forward = backward, eqs. 28 and 33)."""
    from fedlib.hasfl.optimiser.batch_search import batch_coefficients
    from fedlib.lab.hasfl.runs.training import decide
    sig = np.linspace(1.0, 0.1, vgg.num_layers)
    c = HasflConstants(326.0, sig, sig * 1e-6, 2.31)
    dev = EdgeDevices(flops=[1.5e12, 1.5e12], rate_up=[78e6, 5e6], rate_down=[372e6, 372e6],
                      rate_up_fed=[79e6, 79e6], rate_down_fed=[377e6, 377e6], memory_bits=[8e9] * 2)
    p = ho.Problem(vgg, dev, Servers(20e12, 366e6, 368e6), c, 5e-4, ho.eps_with_slack(c, 5e-4, 5, 2, 20.0), 5,
                   (1,), max_batch=64)
    assert vgg.act_bits[0] == vgg.grad_bits[0] == 2_097_152 and vgg.fwd_flops[0] == 3_538_944
    a = np.array([2_097_152 / 78e6, 2_097_152 / 5e6]) + 3_538_944 / 1.5e12     # uplink + device forward, s/sample
    d = 2_097_152 / 372e6 + 3_538_944 / 1.5e12                                # downlink + device backward
    co = batch_coefficients(p, [1, 1])
    assert co["a"] == pytest.approx(a, rel=1e-12) and co["d"] == pytest.approx([d, d], rel=1e-12)
    cc, E, A, B, K = co["c"][0], co["E"], co["A"], co["B"], co["K"]

    def hand(b0, b1):
        return K * (max(a[0] * b0, a[1] * b1) + cc * (b0 + b1) + d * max(b0, b1) + E) / (A - B * (1 / b0 + 1 / b1))

    grid = [(b0, b1) for b0 in range(1, 65) for b1 in range(1, 65) if A - B * (1 / b0 + 1 / b1) > 0]
    best = min(grid, key=lambda b: hand(*b))
    assert best == (29, 3)                                    # the slow device gets a tenth of the fast one's batch
    assert hand(29, 3) == pytest.approx(127_238.5, rel=1e-6)
    assert hand(*best) < 0.63 * hand(6, 6)                    # P1 alone: [6, 6], Θ 203,521 s
    got = decide(p, "HABS", 0, cut=1)
    assert tuple(got["b"]) == best and got["theta"] == pytest.approx(hand(*best), rel=1e-12)
