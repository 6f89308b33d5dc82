"""DTFL: models (parameter counts, MACs, module shapes), the tier rule for every M, auxiliary-head widths, the
time model (eq. 5) and the tier scheduler on hand-computed toys, profile dynamics, and clear errors."""
import numpy as np
import pytest
import torch

from fedlib.dtfl.scheduler import SCHEDULERS
from fedlib.dtfl import (CASES, PROFILES, ResourceProfile, TierCosts, TierScheduler, TimeModel, aux_head_factory,
                         case_profiles, client_modules, profile_schedule, simulate, tier_costs, tier_cuts, tier_table)
from fedlib.split import LayerProfile, model_profile, resnet20, resnet38, resnet56, resnet110
from fedlib.split import resnet_cifar


def count(m):
    return sum(p.numel() for p in m.parameters())


# --- models -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, params, macs", [("resnet56", 591_322, 87.21e6), ("resnet110", 1_147_738, 167.43e6)])
def test_resnet_params_and_macs_match_the_spec(name, params, macs):
    p = model_profile(name, 3, 32, 10)
    assert int(p.params_per_unit.sum()) == params
    assert p.fwd_flops[-1] / 2 == pytest.approx(macs, abs=0.005e6)          # FLOPs = 2 x MACs
    assert p.num_layers == 8


def test_module_split_and_smashed_shapes():
    m = resnet56()
    assert len(m) == 8 and count(resnet20()) == 220_378 and count(m) == count(resnet_cifar(6))
    # parameters are linear in n (each block of a stage adds the same count): ResNet-38 (n = 4) sits midway
    assert count(resnet38()) == 405_850 == (count(resnet20()) + count(m)) // 2 and len(resnet38()[1]) == 2
    assert [len(m[j]) for j in range(1, 7)] == [3] * 6 and [len(resnet110()[j]) for j in range(1, 7)] == [6] * 6
    shapes, h = [], torch.zeros(2, 3, 32, 32)
    for unit in m.eval():
        h = unit(h)
        shapes.append(tuple(h.shape[1:]))
    assert shapes[:7] == [(16, 32, 32), (64, 32, 32), (64, 32, 32), (128, 16, 16), (128, 16, 16), (256, 8, 8),
                          (256, 8, 8)] and shapes[7] == (10,)
    h = torch.zeros(2, 1, 28, 28)
    for unit in resnet20(1, 28, 10).eval():
        h = unit(h)
    assert h.shape == (2, 10)
    for bad in (1, 3, 0, 2.0):
        with pytest.raises(ValueError, match="n must be"):
            resnet_cifar(bad)


# --- tiers ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("M", range(1, 8))
def test_tier_rule_for_every_M(M):
    cuts = tier_cuts(M)
    assert cuts == list(range(8 - M, 8))                      # tier m keeps md1..md_{7-M+m}; md8 on the server
    assert cuts[-1] == 7 and len(cuts) == M
    assert [r["tier"] for r in tier_table(M)] == list(range(1, M + 1))


def test_tier_table_matches_paper_tables_10_and_11():
    assert tier_cuts(7) == [1, 2, 3, 4, 5, 6, 7] and tier_cuts(6) == [2, 3, 4, 5, 6, 7] and tier_cuts(1) == [7]
    assert tier_table(7)[0] == {"tier": 1, "cut": 1, "client": "md1", "server": "md2..md8"}
    assert tier_table(6)[-1] == {"tier": 6, "cut": 7, "client": "md1..md7", "server": "md8"}


def test_aux_head_widths_table10():
    costs = tier_costs(resnet56(), (3, 32, 32), 7, 10)
    head = aux_head_factory(10)
    m, widths, h = resnet56().eval(), [], torch.zeros(2, 3, 32, 32)
    for c in range(1, 8):
        h = m[c - 1](h)
        widths.append(head(c, tuple(h.shape[1:]))[-1].in_features)
    assert widths == [16, 64, 64, 128, 128, 256, 256]
    assert costs.aux_flops.tolist() == [6 * w * 10 for w in widths]
    assert costs.smashed_bytes.tolist() == [4 * v for v in (16 * 1024, 64 * 1024, 64 * 1024, 128 * 256, 128 * 256,
                                                             256 * 64, 256 * 64)]


@pytest.mark.parametrize("call, word", [
    (lambda: tier_cuts(0), "num_tiers"), (lambda: tier_cuts(8), "num_tiers"), (lambda: client_modules(7, 0), "tier"),
    (lambda: client_modules(3, 4), "tier"), (lambda: client_modules(2.0, 1), "num_tiers"),
    (lambda: case_profiles("case3"), "case"), (lambda: ResourceProfile(-1, 30), "cpus"),
    (lambda: ResourceProfile(1, 0), "mbps"), (lambda: ResourceProfile(float("nan"), 30), "cpus"),
    (lambda: aux_head_factory(1), "num_classes")])
def test_clear_errors(call, word):
    with pytest.raises(ValueError, match=word):
        call()


# --- time model (eq. 5) by hand -------------------------------------------------------------------------------

def toy_costs(client_flops, server_flops, act_bits, model_bytes, label_bytes, aux=None):
    """M tiers at cuts 8-M..7 of an 8-unit profile; forward FLOPs only (backward 0) so T_F carries everything."""
    m = len(client_flops)
    cuts = np.arange(8 - m, 8)
    aux = np.zeros(m) if aux is None else np.asarray(aux, float)
    fwd, act = np.zeros(8), np.ones(8)
    fwd[cuts - 1], act[cuts - 1] = np.asarray(client_flops, float) - aux, act_bits
    fwd[7] = fwd.max() + 1
    prof = LayerProfile("toy", (1, 28, 28), "adam", fwd, np.zeros(8), act, act, np.ones(8), np.ones(8), act, act,
                        np.ones(8, dtype=np.int64))
    return TierCosts(m, cuts, prof, aux, np.asarray(client_flops, float), np.asarray(server_flops, float),
                     np.asarray(act_bits, float) / 8, label_bytes, np.asarray(model_bytes, float))


def test_time_model_two_clients_by_hand():
    # tier 1 (cut 6): client 3.1 GFLOP/sample (0.1 of it the aux head), server 6 GFLOP/sample, z 1 MB, model 1 MB
    # tier 2 (cut 7): client 6 GFLOP, server 1 GFLOP, z 0.5 MB, model 2 MB; labels 8 bytes
    costs = toy_costs([3.1e9, 6e9], [6e9, 1e9], [8e6, 4e6], [1e6, 2e6], 8, aux=[1e8, 1e8])
    tm = TimeModel(costs, core_flops=1e9, server_flops=1e10)
    # client A: 2 CPUs, 10 Mbps, 100 samples, tier 1; client B: 0.5 CPU, 100 Mbps, 50 samples, tier 2
    t = tm.times([1, 2], [2, 0.5], [10, 100], [100, 50])
    t_c = [100 * 3.1e9 / 2e9, 50 * 6e9 / 0.5e9]                                    # 155 s, 600 s
    t_s = [100 * 6e9 / 1e10, 50 * 1e9 / 1e10]                                       # 60 s, 5 s
    t_com = [(100 * 8e6 + 8 * (100 * 8 + 2 * 1e6)) / 10e6, (50 * 4e6 + 8 * (50 * 8 + 2 * 2e6)) / 100e6]
    np.testing.assert_allclose(t["T_c"], t_c)
    np.testing.assert_allclose(t["T_s"], t_s)
    np.testing.assert_allclose(t_com, [81.60064, 2.320032])
    np.testing.assert_allclose(t["T_com"], t_com)
    np.testing.assert_allclose(t["T"], [155 + 81.60064, 600 + 2.320032])              # max(T_c, T_s) + T_com
    slow_server = TimeModel(costs, core_flops=1e9, server_flops=1e8).times([1, 2], [2, 0.5], [10, 100], [100, 50])
    np.testing.assert_allclose(slow_server["T"], [6000 + 81.60064, 600 + 2.320032])   # T_s + T_com wins for A
    for kw, word in ((dict(tiers=[0, 1]), "tiers"), (dict(tiers=[1, 3]), "tiers"), (dict(cpus=[-1, 1]), "cpus"),
                     (dict(mbps=[10, 0]), "mbps"), (dict(samples=[0, 5]), "samples")):
        args = dict(tiers=[1, 2], cpus=[2, 0.5], mbps=[10, 100], samples=[100, 50]) | kw
        with pytest.raises(ValueError, match=word):
            tm.times(**args)


def test_real_costs_count_real_tensors():
    costs = tier_costs(resnet20(1, 28, 10), (1, 28, 28), 7, 10)
    assert costs.label_bytes == 8                                                  # int64 labels
    m = resnet20(1, 28, 10)
    own = sum(t.numel() * 4 for t in m[0].state_dict().values() if t.is_floating_point()) + 8   # + num_batches_tracked
    assert costs.model_bytes[0] == own + 4 * (16 * 10 + 10)                       # + aux head Linear(16, 10)
    assert np.all(np.diff(costs.client_flops) > 0) and np.all(np.diff(costs.server_flops) < 0)


# --- scheduler by hand ----------------------------------------------------------------------------------------

def toy_scheduler_model():
    # 3 tiers: client 1/2/4 GFLOP per sample (ratios 1:2:4), server 2/1/0.5 GFLOP, z 1/0.5/0.25 MB; no labels or
    # model bytes; server 10 GFLOP/s. With 10 samples: T_s = 2/1/0.5 s, T_com = 10 x 8/4/2 Mbit / link.
    return TimeModel(toy_costs([1e9, 2e9, 4e9], [2e9, 1e9, 0.5e9], [8e6, 4e6, 2e6], [0, 0, 0], 0),
                     core_flops=1e9, server_flops=1e10)


def test_scheduler_three_clients_three_tiers_by_hand():
    s = TierScheduler(toy_scheduler_model(), 3)
    mbps, n = [8, 8, 2], [10, 10, 10]
    assert s.assign(mbps, n).tolist() == [3, 3, 3]                               # no observation yet: tier M
    s.observe([1, 1, 1], [1.0, 4.0, 0.5])                                         # client times in tier 1
    est = s.estimate(mbps, n)
    # c0: T_c 1/2/4, T_com 10/5/2.5, T_s 2/1/0.5 -> max(T_c, T_s) + T_com = 12, 7, 6.5
    # c1: T_c 4/8/16 -> 14, 13, 18.5;  c2 (2 Mbps): T_c 0.5/1/2, T_com 40/20/10 -> 2 + 40, 1 + 20, 2 + 10
    np.testing.assert_allclose(est, [[12, 7, 6.5], [14, 13, 18.5], [42, 21, 12]])
    # T_max = max(6.5, 13, 12) = 13; largest tier with T <= 13: c0 -> 3, c1 -> 2, c2 -> 3
    assert s.assign(mbps, n).tolist() == [3, 2, 3]
    s.observe([3, 2, 3], [6.0, 10.0, 2.0])                                        # now in tiers 3, 2, 3
    # scaled from the current tier: c0 T_c(1) = 6 / 4 = 1.5, c1 T_c(1) = 10 / 2 = 5
    est = s.estimate(mbps, n)
    np.testing.assert_allclose(est[0], [2 + 10, 3 + 5, 6 + 2.5])
    np.testing.assert_allclose(est[1], [5 + 10, 10 + 5, 20 + 2.5])
    s.observe([3, 2, 3], [3.0, 10.0, 2.0])                                        # EMA, alpha = 2/3
    assert s.ema[0, 2] == pytest.approx(2 / 3 * 3 + 1 / 3 * 6)
    assert s.ema[0, 0] == 1.0                                                     # tier 1's history kept


def test_scheduler_leaves_a_sitting_out_clients_estimate_alone_by_hand():
    # planted: observe() writing every client's EMA whatever the mask (a sitting-out client pulled toward the
    # filler time) -> red (issue 70)
    s = TierScheduler(toy_scheduler_model(), 3)
    s.observe([2, 2, 2], [4.0, 5.0, 6.0])
    s.observe([2, 3, 2], [10.0, 99.0, 10.0], mask=[True, False, True])          # client 1 sits the round out
    assert s.ema[0, 1] == pytest.approx(2 / 3 * 10 + 1 / 3 * 4)
    assert s.ema[2, 1] == pytest.approx(2 / 3 * 10 + 1 / 3 * 6)
    assert s.ema[1, 1] == 5.0 and np.isnan(s.ema[1, 2])                          # not read, not moved
    assert s.current.tolist() == [2, 2, 2]                                        # its tier is the one it had


def test_authors_scheduler_never_tier_1_and_starts_at_tier_2_by_hand():
    """``min_tier`` / ``initial_tier`` (the authors' code at M = 7: min 2, start 2) on the toy model: client 1 has a
    fast link, so its tier-1 estimate is its best and ours sends it to tier 1."""
    ours, authors = TierScheduler(toy_scheduler_model(), 3), TierScheduler(toy_scheduler_model(), 3, **SCHEDULERS["authors"])
    mbps, n = [8, 80, 8], [10, 10, 10]
    assert ours.assign(mbps, n).tolist() == [3, 3, 3] and authors.assign(mbps, n).tolist() == [2, 2, 2]
    for s in (ours, authors):
        s.observe([1, 1, 1], [1.0, 4.0, 0.5])
    # c0 (8 Mbps): T_c 1/2/4, T_s 2/1/0.5, T_com 10/5/2.5 -> 12, 7, 6.5; c1 (80 Mbps): T_c 4/8/16, T_com 1/0.5/0.25
    # -> 5, 8.5, 16.25; c2 (8 Mbps): T_c 0.5/1/2 -> max with T_s 2/1/2, + T_com -> 12, 6, 4.5
    np.testing.assert_allclose(ours.estimate(mbps, n), [[12, 7, 6.5], [5, 8.5, 16.25], [12, 6, 4.5]])
    # ours: T_max = max(6.5, 5, 4.5) = 6.5 -> c1 tier 1 (8.5 > 6.5); authors (tiers 2-3): T_max = max(6.5, 8.5, 4.5)
    assert ours.assign(mbps, n).tolist() == [3, 1, 3]
    assert authors.assign(mbps, n).tolist() == [3, 2, 3]
    with pytest.raises(ValueError, match="min_tier"):
        TierScheduler(toy_scheduler_model(), 3, min_tier=4)
    with pytest.raises(ValueError, match="initial_tier"):
        TierScheduler(toy_scheduler_model(), 3, min_tier=2, initial_tier=1)


def test_simulate_fixed_tier_and_straggler_split():
    tm = toy_scheduler_model()
    profiles = (ResourceProfile(1, 8), ResourceProfile(0.5, 2))
    idx = np.array([[0, 1], [1, 0]])
    sim = simulate(tm, profiles, idx, [10, 10], np.random.default_rng(0), fixed_tier=2, noise=0.0)
    # tier 2: client 0.5 CPU / 2 Mbps: T_c 40, T_com 20 -> 60; 1 CPU / 8 Mbps: T_c 20, T_com 5 -> 25
    assert sim["tiers"] == [[2, 2], [2, 2]] and sim["cuts"] == [[6, 6], [6, 6]]
    np.testing.assert_allclose(sim["round_s"], [60, 60])
    assert sim["straggler"] == [1, 0]
    np.testing.assert_allclose(np.add(sim["comp_s"], sim["comm_s"]), sim["round_s"])
    np.testing.assert_allclose(sim["comm_s"], [20, 20])
    with pytest.raises(ValueError, match="fixed_tier"):
        simulate(tm, profiles, idx, [10, 10], np.random.default_rng(0), fixed_tier=4)
    with pytest.raises(ValueError, match="profile_idx"):
        simulate(tm, profiles, idx + 1, [10, 10], np.random.default_rng(0))


def test_simulate_dynamic_tiers_by_hand():
    """The scheduler inside the simulation, three rounds, two clients that swap profiles after round 1 (Sec. 3.3:
    T_max = max_k min_m T̂_k(m), each client the largest tier m with T̂_k(m) <= T_max)."""
    tm = toy_scheduler_model()        # client 1/2/4 GFLOP, server 2/1/0.5 GFLOP, z 8/4/2 Mbit per sample; 10 samples
    profiles = (ResourceProfile(1, 8), ResourceProfile(0.5, 2))
    idx = np.array([[0, 1], [1, 0], [1, 0]])
    dyn = simulate(tm, profiles, idx, [10, 10], np.random.default_rng(0), noise=0.0)
    # round 1: nothing observed, both in tier M = 3. c0 (1 CPU, 8 Mbps): T_c = 10 x 4 / 1 = 40, T_com = 10 x 2 / 8
    #   = 2.5 -> T = 42.5; c1 (0.5 CPU, 2 Mbps): T_c = 80, T_com = 10 -> T = 90 (the straggler)
    # round 2 (profiles swapped, the EMAs still from round 1, scaled by the client FLOP ratios 1:2:4 from tier 3):
    #   c0 at 2 Mbps: T_c = 10/20/40, T_com = 40/20/10, T_s = 2/1/0.5 -> T̂ = 50, 40, 50
    #   c1 at 8 Mbps: T_c = 20/40/80, T_com = 10/5/2.5            -> T̂ = 30, 45, 82.5
    #   T_max = max(40, 30) = 40: c0 -> tier 2 (40 <= 40, 50 > 40), c1 -> tier 1 (45 > 40)
    #   times: c0 (0.5 CPU, 2 Mbps) tier 2: 40 + 20 = 60; c1 (1 CPU, 8 Mbps) tier 1: max(10, 2) + 10 = 20
    # round 3: c0's EMA in tier 2 = 40 -> T_c = 20/40/80: T̂ = 60, 60, 90; c1's EMA in tier 1 = 10 -> T_c = 10/20/40:
    #   T̂ = 20, 25, 42.5. T_max = max(60, 20) = 60: c0 -> tier 2 (60 <= 60 < 90), c1 -> tier 3 (42.5 <= 60)
    #   times: c0 tier 2: 60 (straggler); c1 (1 CPU, 8 Mbps) tier 3: 40 + 2.5 = 42.5
    assert dyn["tiers"] == [[3, 3], [2, 1], [2, 3]]
    assert dyn["cuts"] == [[7, 7], [6, 5], [6, 7]]                                # toy tiers 1/2/3 = cuts 5/6/7
    np.testing.assert_allclose(dyn["T"], [[42.5, 90], [60, 20], [60, 42.5]], rtol=1e-12)
    np.testing.assert_allclose(dyn["round_s"], [90, 60, 60], rtol=1e-12)
    assert dyn["straggler"] == [1, 0, 0]
    np.testing.assert_allclose(dyn["comp_s"], [80, 40, 40], rtol=1e-12)
    np.testing.assert_allclose(dyn["comm_s"], [10, 20, 20], rtol=1e-12)


def test_profile_schedule_balanced_start_and_changes():
    rng = np.random.default_rng(1)
    idx = profile_schedule(10, 120, 5, 50, 0.3, rng)
    assert np.bincount(idx[0], minlength=5).tolist() == [2] * 5                  # 20 % in each profile
    changes = [int((idx[r] != idx[r - 1]).sum()) for r in range(1, 120)]
    assert [r for r, c in enumerate(changes, start=1) if c] == [50, 100]
    assert changes[49] == 3 and changes[99] == 3                                  # 30 % switch, each to another one
    static = profile_schedule(4, 5, 2, 0, 1.0, rng)                             # change_every 0: never
    assert (static == static[0]).all()
    for kw, word in ((dict(change_frac=1.5), "change_frac"), (dict(change_every=-1), "change_every"),
                     (dict(num_clients=0), "num_clients")):
        args = dict(num_clients=4, rounds=5, num_profiles=2, change_every=1, change_frac=0.5, rng=rng) | kw
        with pytest.raises(ValueError, match=word):
            profile_schedule(**args)


def test_profiles_and_cases_of_the_paper():
    assert [(p.cpus, p.mbps) for p in PROFILES] == [(4, 100), (2, 30), (1, 30), (0.2, 30), (0.1, 10)]
    assert [(p.cpus, p.mbps) for p in CASES["case1"]] == [(2, 30), (1, 30), (0.2, 30)]
    assert [(p.cpus, p.mbps) for p in CASES["case2"]] == [(4, 100), (1, 10)]
