"""Every knob moves the outcome (issue 70, item 7): for each heterogeneity setting of the three system models (DTFL's
eq. 5 time model and tier scheduler, HASFL's latency model and memory constraint C4, the client partitions, HIST's
cell count and aggregation intervals), changing it moves the simulated time, the decision or the record it should,
by a hand-computed amount where the formula is simple, and changing an unrelated setting leaves them exactly equal.

A knob that silently does nothing is the bug users of FL simulators report most (PFLlib #202, easyFL #53, APPFL
#439). Each group was seen red with a bug planted once (listed in the group's comment)."""
import dataclasses

import numpy as np
import pytest
import torch

from fedlib import hasfl as ho
from fedlib.core.seeding import numpy_rng
from fedlib.data import partition
from fedlib.dtfl import (PROFILES, DtflConfig, TimeModel, case_profiles, client_data, profile_schedule,
                         sample_participants, simulate, tier_costs)
from fedlib.hasfl import TABLE_I, HasflConstants, round_latency, table_i, total_latency
from fedlib.hist import HistConfig, run
from fedlib.hist.config import comm_per_round, rounds_for_budget
from fedlib.hist.sampling import client_partition as hist_partition
from fedlib.split import EdgeDevices, Servers, SplitConfig, memory_bits, model_profile, resnet20, sample_system
from fedlib.split.records import client_partition as split_partition

pytestmark = pytest.mark.usefixtures("one_thread")


# --- DTFL: eq. 5's time model ------------------------------------------------------------------------------------
# planted, each red: TimeModel.times with a constant link rate (``rate = 30e6`` whatever mbps) -> the link-rate, cases,
# scheduler and profile-change tests; the CPUs dropped (``cpus * 0 + core_flops``) -> the compute, scheduler and
# profile-change tests

@pytest.fixture(scope="module")
def tm():
    """ResNet-20 (width 1) on 28x28 Fashion-MNIST, M = 7 tiers, at the quick notebooks' speeds (3 GFLOP/s per CPU,
    5 GFLOP/s per client copy on the server)."""
    return TimeModel(tier_costs(resnet20(1, 28, 10), (1, 28, 28), 7, 10), core_flops=3e9, server_flops=5e9)


#: three clients: tiers, CPUs, link (Mbit/s), samples N_k
DTFL = dict(tiers=[3, 5, 2], cpus=[2.0, 1.0, 0.5], mbps=[30.0, 30.0, 10.0], samples=[200, 150, 100])


def _dtfl(key=None, value=None, who=1):
    """DTFL's three clients with client ``who``'s ``key`` set to ``value``."""
    args = {k: np.array(v) for k, v in DTFL.items()}
    if key is not None:
        args[key][who] = value
    return args


def _others_equal(a: dict, b: dict, who: int = 1, keys=("T_c", "T_s", "T_com", "T")):
    """Every client but ``who`` has exactly the same times in ``a`` and ``b``."""
    for key in keys:
        assert np.array_equal(np.delete(a[key], who), np.delete(b[key], who)), key


def _com(tm, tier, n, mbps):
    """T_com by hand (timing.py): 8 · (N · (z + 8-byte label) + 2 · model bytes of the tier) / (Mbps · 1e6) s."""
    c = tm.costs
    return 8 * (n * (c.smashed_bytes[tier - 1] + 8) + 2 * c.model_bytes[tier - 1]) / (mbps * 1e6)


def test_dtfl_device_compute_moves_only_that_clients_compute_time(tm):
    base = tm.times(**_dtfl())
    slow = tm.times(**_dtfl("cpus", 0.5))                     # client 1 (tier 5, 150 samples): 1 CPU -> 0.5
    # T_c = N · (client FLOPs of tier 5, auxiliary head included) / (CPUs · 3 GFLOP/s) = 150 · f / 1.5e9
    assert slow["T_c"][1] == pytest.approx(150 * tm.costs.client_flops[4] / (0.5 * 3e9), rel=1e-12)
    assert slow["T_c"][1] == pytest.approx(2 * base["T_c"][1], rel=1e-12) and slow["T"][1] > base["T"][1]
    assert np.array_equal(slow["T_s"], base["T_s"]) and np.array_equal(slow["T_com"], base["T_com"])
    _others_equal(base, slow)
    # the FLOP/s of one CPU: every T_c halves at 6 GFLOP/s, the server and the links do not move
    fast = TimeModel(tm.costs, core_flops=6e9, server_flops=5e9).times(**_dtfl())
    np.testing.assert_allclose(fast["T_c"], base["T_c"] / 2, rtol=1e-12)
    assert np.array_equal(fast["T_s"], base["T_s"]) and np.array_equal(fast["T_com"], base["T_com"])


def test_dtfl_server_speed_moves_only_the_server_time(tm):
    base = tm.times(**_dtfl())
    slow = TimeModel(tm.costs, core_flops=3e9, server_flops=1e9).times(**_dtfl())
    # T_s = N · server FLOPs of the tier / 1 GFLOP/s: 200 · s(3), 150 · s(5), 100 · s(2)
    s = tm.costs.server_flops
    np.testing.assert_allclose(slow["T_s"], [200 * s[2] / 1e9, 150 * s[4] / 1e9, 100 * s[1] / 1e9], rtol=1e-12)
    assert np.array_equal(slow["T_c"], base["T_c"]) and np.array_equal(slow["T_com"], base["T_com"])
    assert np.all(slow["T"] >= base["T"]) and np.any(slow["T"] > base["T"])


def test_dtfl_link_rate_moves_only_that_clients_communication_time(tm):
    base = tm.times(**_dtfl())
    slow = tm.times(**_dtfl("mbps", 15.0))                    # client 1's link: 30 -> 15 Mbit/s
    assert base["T_com"].tolist() == pytest.approx([_com(tm, 3, 200, 30), _com(tm, 5, 150, 30), _com(tm, 2, 100, 10)],
                                                   rel=1e-12)
    assert slow["T_com"][1] == pytest.approx(_com(tm, 5, 150, 15), rel=1e-12)
    assert slow["T_com"][1] == pytest.approx(2 * base["T_com"][1], rel=1e-12) and slow["T"][1] > base["T"][1]
    assert np.array_equal(slow["T_c"], base["T_c"]) and np.array_equal(slow["T_s"], base["T_s"])
    _others_equal(base, slow)


def test_dtfl_tier_moves_that_clients_split_of_the_work(tm):
    base = tm.times(**_dtfl())
    low = tm.times(**_dtfl("tiers", 2))                       # client 1: tier 5 -> 2 (offloads more to the server)
    c = tm.costs
    assert low["T_c"][1] == pytest.approx(150 * c.client_flops[1] / 3e9, rel=1e-12)
    assert low["T_s"][1] == pytest.approx(150 * c.server_flops[1] / 5e9, rel=1e-12)
    assert low["T_com"][1] == pytest.approx(_com(tm, 2, 150, 30), rel=1e-12)
    assert low["T_c"][1] < base["T_c"][1] and low["T_s"][1] > base["T_s"][1] and low["T_com"][1] != base["T_com"][1]
    _others_equal(base, low)


def test_dtfl_sample_count_moves_that_clients_times(tm):
    base = tm.times(**_dtfl())
    more = tm.times(**_dtfl("samples", 300))                  # client 1: N_k 150 -> 300
    assert more["T_c"][1] == pytest.approx(2 * base["T_c"][1], rel=1e-12)       # T_c and T_s linear in N_k
    assert more["T_s"][1] == pytest.approx(2 * base["T_s"][1], rel=1e-12)
    # T_com: the smashed data and labels double, the model's download + upload does not
    assert more["T_com"][1] == pytest.approx(_com(tm, 5, 300, 30), rel=1e-12)
    assert base["T_com"][1] < more["T_com"][1] < 2 * base["T_com"][1]
    _others_equal(base, more)


def test_dtfl_profiles_of_the_cases_set_the_times(tm):
    # case1 = 2 CPU/30, 1 CPU/30, 0.2 CPU/30 (Table 1); case2 = 4 CPU/100, 1 CPU/10 (Fig. 3)
    idx = np.array([[0, 1, 1]])
    one = simulate(tm, case_profiles("case1"), idx, [200, 150, 100], np.random.default_rng(3), fixed_tier=4, noise=0)
    two = simulate(tm, case_profiles("case2"), idx, [200, 150, 100], np.random.default_rng(3), fixed_tier=4, noise=0)
    want = tm.times(np.full(3, 4), [2, 1, 1], [30, 30, 30], [200, 150, 100])["T"]
    np.testing.assert_allclose(one["T"][0], want, rtol=1e-12)
    assert two["T"][0][0] < one["T"][0][0] and two["T"][0][1] > one["T"][0][1]   # faster / slower link and CPUs
    assert two["T_s"] == one["T_s"]                                                 # the server does not move


# --- DTFL: the scheduler, participation and profile changes ------------------------------------------------------
# planted, each red: sample_participants ignoring ``fraction`` (always 10 %) -> the participation test;
# profile_schedule ignoring ``change_frac`` (always 30 %) -> the profile-change test; the scheduler's estimate at
# 30 Mbit/s whatever the link -> the slow-down test

def _five(who=None, to=None, since=2):
    """Five clients in Sec. 4.1's five profiles (4 CPU/100 .. 0.1 CPU/10) for 5 rounds; client ``who`` moves to
    profile ``to`` from round ``since + 1`` on."""
    idx = np.tile(np.arange(5), (5, 1))
    if who is not None:
        idx[since:, who] = to
    return idx


def test_dtfl_scheduler_offloads_a_client_that_slows_down(tm):
    n = [300] * 5
    base = simulate(tm, PROFILES, _five(), n, np.random.default_rng(7), noise=0.0)
    slow = simulate(tm, PROFILES, _five(who=1, to=3), n, np.random.default_rng(7), noise=0.0)   # 2 CPU -> 0.2 CPU
    # every client starts in tier M = 7; after round 1 the two slowest (0.2 and 0.1 CPU) offload to tier 1
    assert base["tiers"] == [[7] * 5] + [[7, 7, 7, 1, 1]] * 4
    assert slow["tiers"][:3] == base["tiers"][:3]                   # the change in round 3 is seen from round 4 on
    assert slow["tiers"][3:] == [[7, 1, 7, 1, 1]] * 2               # client 1 offloads, the others stay
    assert slow["T"][2][1] > base["T"][2][1] and slow["T"][3][1] < slow["T"][2][1]   # slower, then offloaded
    for r in range(5):                                               # the others' times do not move
        assert np.delete(slow["T"][r], 1).tolist() == np.delete(base["T"][r], 1).tolist()


def test_dtfl_noise_seed_moves_the_times_only_when_there_is_noise(tm):
    n, idx = [300] * 5, _five()
    a = simulate(tm, PROFILES, idx, n, np.random.default_rng(7), noise=0.0)
    assert simulate(tm, PROFILES, idx, n, np.random.default_rng(8), noise=0.0) == a     # unrelated: no noise
    noisy = [simulate(tm, PROFILES, idx, n, np.random.default_rng(s), noise=0.2)["T_c"] for s in (7, 8)]
    assert noisy[0] != noisy[1] and noisy[0] != a["T_c"]


def test_dtfl_participation_fraction_sets_the_clients_per_round_and_the_straggler(tm):
    # max(1, round(fraction · K)) clients per round, K = 20: 0.1 -> 2, 0.25 -> 5, 0.01 -> 1
    for frac, per_round in ((0.1, 2), (0.25, 5), (0.01, 1), (1.0, 20)):
        part = sample_participants(20, 6, frac, np.random.default_rng(5))
        assert part.sum(1).tolist() == [per_round] * 6, frac
    part = sample_participants(5, 5, 0.4, np.random.default_rng(5))           # 2 of 5 clients per round
    n, idx = [300] * 5, _five()
    every = simulate(tm, PROFILES, idx, n, np.random.default_rng(7), fixed_tier=4, noise=0.0)
    some = simulate(tm, PROFILES, idx, n, np.random.default_rng(7), fixed_tier=4, noise=0.0, participants=part)
    assert some["T"] == every["T"]                                  # a fixed tier: each client's time is its own
    t = np.array(every["T"])
    assert some["round_s"] == [float(t[r][part[r]].max()) for r in range(5)]       # the slowest participant
    assert every["round_s"] == t.max(1).tolist() and some["round_s"] != every["round_s"]
    # the scheduler: a client that sits a round out keeps its tier
    sched = simulate(tm, PROFILES, idx, n, np.random.default_rng(7), noise=0.0, participants=part)
    for r in range(1, 5):
        away = ~part[r]
        assert np.array(sched["tiers"][r])[away].tolist() == np.array(sched["tiers"][r - 1])[away].tolist()


def test_dtfl_profile_changes_over_time(tm):
    # K = 10 clients over P = 5 profiles, 9 rounds; every 3 rounds 40 % (4 clients) move to another profile
    idx = profile_schedule(10, 9, 5, 3, 0.4, np.random.default_rng(11))
    changed = [int((idx[r] != idx[r - 1]).sum()) for r in range(1, 9)]
    assert changed == [0, 0, 4, 0, 0, 4, 0, 0]                      # before rounds 4 and 7 (t = 3, 6)
    more = profile_schedule(10, 9, 5, 3, 0.8, np.random.default_rng(11))
    assert [int((more[r] != more[r - 1]).sum()) for r in range(1, 9)] == [0, 0, 8, 0, 0, 8, 0, 0]
    assert np.array_equal(more[:3], idx[:3])                         # the start does not depend on change_frac
    later = profile_schedule(10, 9, 5, 4, 0.4, np.random.default_rng(11))
    assert [int((later[r] != later[r - 1]).sum()) for r in range(1, 9)] == [0, 0, 0, 4, 0, 0, 0, 4]
    never = profile_schedule(10, 9, 5, 0, 0.4, np.random.default_rng(11))
    assert (never == never[0]).all() and np.array_equal(never[0], idx[0])
    # the simulated times follow: the clients that moved change time, the others keep theirs
    n = [200] * 10
    moving = simulate(tm, PROFILES, idx, n, np.random.default_rng(2), fixed_tier=3, noise=0.0)
    static = simulate(tm, PROFILES, never, n, np.random.default_rng(2), fixed_tier=3, noise=0.0)
    t, s = np.array(moving["T"]), np.array(static["T"])
    assert np.array_equal(t[:3], s[:3])
    moved = idx[3] != idx[0]
    assert np.all(t[3][moved] != s[3][moved]) and np.array_equal(t[3][~moved], s[3][~moved])


# --- HASFL: the latency model (eqs. 28-40) -----------------------------------------------------------------------
# planted: device_terms' uplink at the first device's rate for every device (``devices.rate_up[0]``) -> red
# (the uplink and slow-uplink decision tests, and DTFL's link tests, which share device_terms)

@pytest.fixture(scope="module")
def vgg():
    return model_profile("vgg16")


HASFL = dict(flops=[1.5e12, 1e12, 1.2e12], rate_up=[78e6, 76e6, 79e6], rate_down=[372e6, 375e6, 371e6],
             rate_up_fed=[79.7e6, 79.1e6, 75e6], rate_down_fed=[377e6, 361e6, 375e6], memory_bits=[8e9] * 3)
SERVERS = Servers(20e12, 366e6, 368e6)
B, CUTS = [16, 8, 32], [2, 4, 1]
PER_DEVICE = ("T_F", "T_aU", "T_gD", "T_B", "T_cU", "T_cD")


def _devices(key=None, value=None, who=1) -> EdgeDevices:
    fields = {k: list(v) for k, v in HASFL.items()}
    if key is not None:
        fields[key][who] = value
    return EdgeDevices(**fields)


def _lat(vgg, devices, b=B, cuts=CUTS):
    return round_latency(vgg, np.array(b), np.array(cuts), devices, SERVERS)


def _moved(base, new, keys, who=1):
    """Device ``who``'s terms in ``keys`` moved, its other per-device terms and every other device's are equal."""
    for key in PER_DEVICE:
        assert np.array_equal(np.delete(base[key], who), np.delete(new[key], who)), key
        assert (new[key][who] != base[key][who]) == (key in keys), key


def test_hasfl_device_compute_moves_only_that_devices_compute(vgg):
    base, slow = _lat(vgg, _devices()), _lat(vgg, _devices("flops", 0.5e12))    # device 1 (cut 4, b 8): 1 -> 0.5 TFLOP/s
    assert slow["T_F"][1] == pytest.approx(8 * vgg.fwd_flops[3] / 0.5e12, rel=1e-12)     # (28)
    assert slow["T_B"][1] == pytest.approx(8 * vgg.bwd_flops[3] / 0.5e12, rel=1e-12)     # (33)
    assert slow["T_F"][1] == pytest.approx(2 * base["T_F"][1], rel=1e-12)
    _moved(base, slow, ("T_F", "T_B"))
    assert slow["T_sF"] == base["T_sF"] and slow["T_A"] == base["T_A"] and slow["T_S"] >= base["T_S"]


def test_hasfl_uplink_rate_moves_only_that_devices_upload(vgg):
    base, slow = _lat(vgg, _devices()), _lat(vgg, _devices("rate_up", 1e6))      # device 1: 76 -> 1 Mbit/s
    # (29): b · ψ_4 / r^U = 8 · 262,144 bits / 1 Mbit/s = 2.1 s, above device 2's 32 · 2,097,152 / 79e6 = 0.85 s
    assert vgg.act_bits[3] == 262_144 and slow["T_aU"][1] == pytest.approx(8 * 262_144 / 1e6, rel=1e-12)
    _moved(base, slow, ("T_aU",))
    assert slow["T_S"] > base["T_S"] and slow["T_A"] == base["T_A"]     # device 1 is now the upload straggler


def test_hasfl_downlink_and_fed_server_rates_move_only_their_terms(vgg):
    base = _lat(vgg, _devices())
    down = _lat(vgg, _devices("rate_down", 10e6))
    assert down["T_gD"][1] == pytest.approx(8 * vgg.grad_bits[3] / 10e6, rel=1e-12)        # (32)
    _moved(base, down, ("T_gD",))
    up_fed = _lat(vgg, _devices("rate_up_fed", 1e6))
    assert up_fed["T_cU"][1] == pytest.approx(vgg.param_bits[3] / 1e6, rel=1e-12)          # (34)
    _moved(base, up_fed, ("T_cU",))
    assert up_fed["T_S"] == base["T_S"] and up_fed["T_A"] > base["T_A"]
    down_fed = _lat(vgg, _devices("rate_down_fed", 1e6))
    assert down_fed["T_cD"][1] == pytest.approx(vgg.param_bits[3] / 1e6, rel=1e-12)        # (36)
    _moved(base, down_fed, ("T_cD",))


def test_hasfl_memory_moves_no_latency(vgg):
    base, small = _lat(vgg, _devices()), _lat(vgg, _devices("memory_bits", 1e6))
    for key in base:
        assert np.array_equal(base[key], small[key]), key


def test_hasfl_cut_layer_moves_that_devices_terms_and_the_servers_share(vgg):
    base, deep = _lat(vgg, _devices()), _lat(vgg, _devices(), cuts=[2, 7, 1])      # device 1: cut 4 -> 7
    assert deep["T_F"][1] == pytest.approx(8 * vgg.fwd_flops[6] / 1e12, rel=1e-12)
    _moved(base, deep, PER_DEVICE)
    # (30): T_sF = Σ_i b_i (ρ_L − ρ_{L_i}) / f_s, over cuts 2, 7, 1
    f = vgg.fwd_flops
    assert deep["T_sF"] == pytest.approx((16 * (f[-1] - f[1]) + 8 * (f[-1] - f[6]) + 32 * (f[-1] - f[0])) / 20e12,
                                         rel=1e-12)
    assert deep["T_sF"] < base["T_sF"]
    mem = memory_bits(vgg, np.array(B), np.array([2, 7, 1]))
    assert mem[1] > memory_bits(vgg, np.array(B), np.array(CUTS))[1]


def test_hasfl_batch_size_moves_that_devices_per_sample_terms(vgg):
    base, big = _lat(vgg, _devices()), _lat(vgg, _devices(), b=[16, 16, 32])          # device 1: b 8 -> 16
    for key in ("T_F", "T_aU", "T_gD", "T_B"):                                       # (28), (29), (32), (33)
        assert big[key][1] == pytest.approx(2 * base[key][1], rel=1e-12), key
    _moved(base, big, ("T_F", "T_aU", "T_gD", "T_B"))                             # model up/download (34, 36) stay
    # C4's memory: b·(ψ̃ + χ̃) + ϑ̃ + δ at cut 4
    k = 3
    want = 16 * (vgg.act_bits_cum[k] + vgg.grad_bits_cum[k]) + vgg.opt_state_bits[k] + vgg.param_bits[k]
    assert memory_bits(vgg, np.array([16, 16, 32]), np.array(CUTS))[1] == pytest.approx(want, rel=1e-12)


def test_hasfl_aggregation_interval_moves_the_total_latency():
    # eq. 40: T = R·T_S + floor(R/I)·T_A; R = 31, T_S = 2 s, T_A = 5 s
    assert total_latency(31, 15, 2.0, 5.0) == pytest.approx(31 * 2 + 2 * 5)      # 72 s
    assert total_latency(31, 5, 2.0, 5.0) == pytest.approx(31 * 2 + 6 * 5)       # 92 s


def test_hasfl_system_draw_moves_only_the_drawn_quantity():
    rng = lambda: np.random.default_rng(13)       # noqa: E731
    spec = dataclasses.replace(TABLE_I, num_devices=4)
    dev, srv = sample_system(spec, rng())
    small, _ = sample_system(dataclasses.replace(spec, memory_bytes=(0.1e9, 0.2e9)), rng())
    assert np.all(small.memory_bits <= 8 * 0.2e9) and np.all(small.memory_bits < dev.memory_bits)
    for key in ("flops", "rate_up", "rate_down", "rate_up_fed", "rate_down_fed"):
        assert np.array_equal(getattr(small, key), getattr(dev, key)), key
    fast, fast_srv = sample_system(table_i(4, {"device_flops": 2.0}), rng())
    np.testing.assert_allclose(fast.flops, 2 * dev.flops, rtol=1e-12)
    for key in ("rate_up", "rate_down", "memory_bits"):
        assert np.array_equal(getattr(fast, key), getattr(dev, key)), key
    assert fast_srv == srv
    up, _ = sample_system(table_i(4, {"rate_up": 0.5}), rng())
    np.testing.assert_allclose(up.rate_up, dev.rate_up / 2, rtol=1e-12)
    assert np.array_equal(up.flops, dev.flops) and np.array_equal(up.rate_down, dev.rate_down)


# --- HASFL: memory (C4) and the decision -------------------------------------------------------------------------
# planted: batch_caps reading the largest device memory for every device (``p.devices.memory_bits.max()``) -> red
# (test_hasfl_memory_sets_the_batch_cap, test_hasfl_decision_respects_a_devices_memory)

SIG = np.array([22.3, 750, 430, 552, 397, 544, 383, 307, 414, 301, 255, 176, 124, 24, 25.4, 28.7])


def _problem(vgg, devices, cuts=(1,)):
    c = HasflConstants(326.0, SIG, SIG * 1e-6, 2.31)
    return ho.Problem(vgg, devices, SERVERS, c, 5e-4, ho.eps_with_slack(c, 5e-4, 5, 3, 20.0), 5, cuts, max_batch=64)


def _fit(vgg, samples: float, cut: int = 1) -> float:
    """Memory (bits) that holds ``samples`` samples at ``cut`` (C4): fixed ϑ̃ + δ plus samples · (ψ̃ + χ̃)."""
    k = cut - 1
    return vgg.opt_state_bits[k] + vgg.param_bits[k] + samples * (vgg.act_bits_cum[k] + vgg.grad_bits_cum[k])


def test_hasfl_memory_sets_the_batch_cap(vgg):
    # cut 1 of VGG-16 (32x32x3): ψ̃ + χ̃ = 2 x 64·32·32 floats = 4,194,304 bits per sample, ϑ̃ + δ = 61,440 bits
    assert _fit(vgg, 1) - _fit(vgg, 0) == 4_194_304 and _fit(vgg, 0) == 61_440
    full = _fit(vgg, 40.5)
    p = _problem(vgg, EdgeDevices(**{**HASFL, "memory_bits": [full] * 3}))
    assert ho.batch_caps(p, [1, 1, 1]).tolist() == [40, 40, 40]        # 40 samples fit, 41 do not (strict C4)
    # device 1's memory halved: (40.5 · 4,194,304 + 61,440) / 2 − 61,440 = 20.25 · 4,194,304 − 30,720 -> 20
    half = _problem(vgg, EdgeDevices(**{**HASFL, "memory_bits": [full, full / 2, full]}))
    assert ho.batch_caps(half, [1, 1, 1]).tolist() == [40, 20, 40]
    assert ho.batch_caps(half, [4, 4, 4])[1] < ho.batch_caps(p, [4, 4, 4])[1]
    assert ho.batch_caps(half, [4, 4, 4])[[0, 2]].tolist() == ho.batch_caps(p, [4, 4, 4])[[0, 2]].tolist()
    # Θ charges the cap exactly: b = 20 on device 1 is feasible, 21 is not (C4)
    assert np.isfinite(ho.theta(half, [8, 20, 8], [1, 1, 1])) and ho.theta(half, [8, 21, 8], [1, 1, 1]) == np.inf
    assert np.isfinite(ho.theta(p, [8, 21, 8], [1, 1, 1]))


def test_hasfl_decision_respects_a_devices_memory(vgg):
    roomy = _problem(vgg, EdgeDevices(**{**HASFL, "memory_bits": [_fit(vgg, 40.5)] * 3}))
    tight = _problem(vgg, EdgeDevices(**{**HASFL, "memory_bits": [_fit(vgg, 40.5), _fit(vgg, 4.5), _fit(vgg, 40.5)]}))
    rng = np.random.default_rng(3)
    a, b = ho.strategy(roomy, "HASFL", rng), ho.strategy(tight, "HASFL", rng)
    assert a.b.tolist() == [6, 6, 6] and a.cuts.tolist() == [1, 1, 1]
    assert b.b.tolist() == [6, 4, 6] and b.cuts.tolist() == [1, 1, 1]   # device 1 fits 4 samples: its cap binds
    assert b.theta > a.theta
    assert np.all(memory_bits(vgg, b.b, b.cuts) < tight.devices.memory_bits)


def test_hasfl_decision_gives_a_slow_uplink_a_smaller_batch(vgg):
    mem = [_fit(vgg, 40.5)] * 3
    fast = _problem(vgg, EdgeDevices(**{**HASFL, "memory_bits": mem}))
    slow = _problem(vgg, EdgeDevices(**{**HASFL, "memory_bits": mem, "rate_up": [78e6, 5e6, 79e6]}))
    a = ho.strategy(fast, "HASFL", np.random.default_rng(3))
    b = ho.strategy(slow, "HASFL", np.random.default_rng(3))
    assert b.b[1] < a.b[1] and b.theta > a.theta


# --- Partitions -------------------------------------------------------------------------------------------------
# planted, each red: dirichlet drawing Dir(1·1_K) whatever alpha -> the alpha and config tests; DTFL's client_data
# at alpha 0.5 whatever the config, the split engine's client_partition at 2 shards whatever the config -> the
# config test

#: 10 classes x 60 samples, shuffled
LABELS = np.random.default_rng(17).permutation(np.repeat(np.arange(10), 60))


def _skew(parts, labels=LABELS) -> float:
    """Mean total-variation distance between each client's label histogram and the global one (0 = i.i.d.)."""
    counts = partition.label_counts(labels, parts, 10).astype(float)
    local = counts / counts.sum(1, keepdims=True)
    return float(0.5 * np.abs(local - 0.1).sum(1).mean())


def test_partition_scheme_sets_each_clients_labels():
    rng = lambda: numpy_rng(5, "data")    # noqa: E731
    iid = partition.split(LABELS, 5, "iid", rng())
    shards = partition.split(LABELS, 5, "shards", rng(), shards_per_client=2)
    one = partition.split(LABELS, 10, "shards", rng(), shards_per_client=1)
    # 600 / (5 clients · 2 shards) = 60 samples per shard = one class: each client holds exactly 2 classes, 60 each
    for counts in partition.label_counts(LABELS, shards, 10):
        assert sorted(counts[counts > 0].tolist()) == [60, 60]
    assert [int((c > 0).sum()) for c in partition.label_counts(LABELS, one, 10)] == [1] * 10
    # skew of 2 classes at 1/2 each: (2 · |0.5 − 0.1| + 8 · 0.1) / 2 = 0.8
    assert _skew(shards) == pytest.approx(0.8) and [len(p) for p in iid] == [120] * 5 and _skew(iid) < 0.2
    # an unrelated keyword (alpha for the iid scheme) does not move the draw
    assert all(np.array_equal(a, b) for a, b in zip(iid, partition.split(LABELS, 5, "iid", rng(), alpha=0.01)))


def test_partition_dirichlet_alpha_sets_the_skew():
    skews = [_skew(partition.split(LABELS, 6, "dirichlet", numpy_rng(5, "data"), alpha=a)) for a in (0.1, 1.0, 100.0)]
    assert skews[0] > skews[1] > skews[2] and skews[0] > 0.5 and skews[2] < 0.1


def test_partition_seed_changes_the_draw_and_only_the_seed():
    for scheme, kw in (("iid", {}), ("shards", {"shards_per_client": 2}), ("dirichlet", {"alpha": 0.5})):
        a = partition.split(LABELS, 5, scheme, numpy_rng(5, "data"), **kw)
        again = partition.split(LABELS, 5, scheme, numpy_rng(5, "data"), **kw)
        other = partition.split(LABELS, 5, scheme, numpy_rng(6, "data"), **kw)
        assert all(np.array_equal(x, y) for x, y in zip(a, again)), scheme
        assert not all(np.array_equal(x, y) for x, y in zip(a, other)), scheme


def _same(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_partition_knobs_of_the_configs():
    # DTFL: partition, alpha and seed move the clients' data; lr does not, nor alpha under iid
    d = DtflConfig(num_clients=6, partition="dirichlet", alpha=0.3, seed=4)
    parts = client_data(d, LABELS)
    assert _same(parts, client_data(dataclasses.replace(d, lr=0.01), LABELS))
    for change in ({"alpha": 3.0}, {"seed": 5}, {"partition": "iid"}):
        assert not _same(parts, client_data(dataclasses.replace(d, **change), LABELS)), change
    iid = dataclasses.replace(d, partition="iid")
    assert _same(client_data(iid, LABELS), client_data(dataclasses.replace(iid, alpha=3.0), LABELS))
    # HASFL's split engine: shards_per_client moves a shards partition; lr and the batch sizes do not
    s = SplitConfig(num_devices=5, batch_sizes=(4,) * 5, cuts=(2,) * 5, partition="shards", shards_per_client=2,
                    seed=3)
    parts = split_partition(s, LABELS)
    assert _same(parts, split_partition(dataclasses.replace(s, lr=0.1, batch_sizes=(8,) * 5), LABELS))
    assert not _same(parts, split_partition(dataclasses.replace(s, shards_per_client=4), LABELS))
    # HIST: the cell count N moves the cell-i.i.d. partition, not the fully non-i.i.d. one; lr moves neither
    h = HistConfig(setting="cell_iid", num_cells=2, num_clients=6, hidden=12, shards_per_client=2, seed=5)
    parts = hist_partition(h, LABELS)
    assert not _same(parts, hist_partition(dataclasses.replace(h, num_cells=3), LABELS))
    assert _same(parts, hist_partition(dataclasses.replace(h, lr=0.05), LABELS))
    nn = dataclasses.replace(h, setting="noniid")
    assert _same(hist_partition(nn, LABELS), hist_partition(dataclasses.replace(nn, num_cells=3), LABELS))


# --- HIST: cells and aggregation intervals -----------------------------------------------------------------------
# planted, each red: comm_per_round charging E // 40 edge aggregations whatever H -> both communication tests; the
# record's communication at N = 3 whatever num_cells (run._record) -> test_hist_record_moves_with_cells_and_intervals

def test_hist_communication_follows_cells_and_intervals():
    # a HIST client sends (E/H)/N · L0 per global round, an HFedAvg client (E/H) · L0 (Sec. III-B);
    # an edge server receives n_j = U/N times that; the cloud L0 (HIST) or N · L0 (HFedAvg)
    assert comm_per_round("hist", 4, 8, 5, 20) == pytest.approx({"client": 1.0, "edge_server": 2.0, "cloud": 1.0})
    assert comm_per_round("hist", 2, 8, 5, 20) == pytest.approx({"client": 2.0, "edge_server": 8.0, "cloud": 1.0})
    assert comm_per_round("hist", 4, 8, 10, 20) == pytest.approx({"client": 0.5, "edge_server": 1.0, "cloud": 1.0})
    assert comm_per_round("hist", 4, 8, 5, 40) == pytest.approx({"client": 2.0, "edge_server": 4.0, "cloud": 1.0})
    assert comm_per_round("hfedavg", 4, 8, 5, 20) == pytest.approx({"client": 4.0, "edge_server": 8.0, "cloud": 4.0})
    # U moves the edge server's load only
    assert comm_per_round("hist", 4, 16, 5, 20) == pytest.approx({"client": 1.0, "edge_server": 4.0, "cloud": 1.0})
    # rounds for a budget of 12 L0 per client: ceil(12 / per round)
    assert rounds_for_budget("hist", 4, 5, 20, 12.0) == 12          # 12 / 1
    assert rounds_for_budget("hist", 2, 5, 20, 12.0) == 6           # 12 / 2
    assert rounds_for_budget("hist", 4, 10, 20, 12.0) == 24         # 12 / 0.5
    assert rounds_for_budget("hist", 3, 5, 20, 12.0) == 9           # 12 / (4/3)
    assert rounds_for_budget("hfedavg", 4, 5, 20, 12.0) == 3        # 12 / 4


@pytest.fixture(scope="module")
def tiny_fmnist():
    """Fashion-MNIST's first 1,200 training and 500 test images."""
    from fedlib.data import load_fashion_mnist
    fm = load_fashion_mnist()
    return dataclasses.replace(fm, x_train=fm.x_train[:1200], y_train=fm.y_train[:1200], x_test=fm.x_test[:500],
                               y_test=fm.y_test[:500])


#: N = 2 cells of 3 clients, 12 hidden neurons, E/H = 2 edge aggregations per global round, seed 5
HIST = HistConfig(num_cells=2, num_clients=6, hidden=12, H=3, E=6, global_rounds=2, batch_size=8, seed=5)


def _hist(data, **change) -> dict:
    return run.run_hist(dataclasses.replace(HIST, **change), data, "cpu", progress=False)


def test_hist_record_moves_with_cells_and_intervals(tiny_fmnist):
    base = _hist(tiny_fmnist)
    # per round: client (6/3)/2 = 1 L0, edge server 3 clients · 1 = 3 L0, cloud 1 L0
    assert base["comm_client_L0"] == [0, 1, 2] and base["comm_edge_server_L0"] == [0, 3, 6]
    cells = _hist(tiny_fmnist, num_cells=3)              # (6/3)/3 = 2/3 per round; edge 2 · 2/3
    assert cells["comm_client_L0"] == pytest.approx([0, 2 / 3, 4 / 3])
    assert cells["comm_edge_server_L0"] == pytest.approx([0, 4 / 3, 8 / 3])
    edge = _hist(tiny_fmnist, H=6)                       # (6/6)/2 = 0.5 per round; edge 3 · 0.5
    assert edge["comm_client_L0"] == [0, 0.5, 1] and edge["comm_edge_server_L0"] == [0, 1.5, 3]
    cloud = _hist(tiny_fmnist, H=3, E=3)                 # E/H = 1: (3/3)/2 = 0.5 per round, half the steps
    assert cloud["comm_client_L0"] == [0, 0.5, 1] and cloud["step"] == [0, 3, 6]
    full = _hist(tiny_fmnist, method="hfedavg")          # HFedAvg: 6/3 = 2 per round, cloud N = 2
    assert full["comm_client_L0"] == [0, 2, 4] and full["comm_cloud_L0"] == [0, 2, 4]
    for other in (cells, edge, cloud, full):             # the training moved too
        assert other["train_loss"][1:] != base["train_loss"][1:]
        assert other["global_sq_norm"][1:] != base["global_sq_norm"][1:]
        assert other["global_sq_norm"][0] == base["global_sq_norm"][0]        # same initial model (seed 5)


def test_hist_record_stays_bit_identical_under_unrelated_settings(tiny_fmnist):
    base = _hist(tiny_fmnist)
    lr = _hist(tiny_fmnist, lr=0.05)                     # training moves, communication does not
    assert lr["train_loss"][1:] != base["train_loss"][1:]
    for key in ("comm_client_L0", "comm_edge_server_L0", "comm_cloud_L0", "step"):
        assert lr[key] == base[key], key
    # another test set (the evaluation) moves the accuracy, not the training
    other = dataclasses.replace(tiny_fmnist, x_test=tiny_fmnist.x_test[:300], y_test=tiny_fmnist.y_test[:300])
    ev = run.run_hist(HIST, other, "cpu", progress=False)
    assert ev["test_acc"] != base["test_acc"]
    for key in ("train_loss", "global_sq_norm", "comm_client_L0"):
        assert ev[key] == base[key], key
    # the progress bar and the cache blocking of the clients: the models are bit-identical
    shown = run.run_hist(HIST, tiny_fmnist, "cpu", progress=True)
    assert {k: v for k, v in shown.items() if k != "elapsed_s"} == {k: v for k, v in base.items() if k != "elapsed_s"}
    p = run.prepare(HIST, tiny_fmnist, "cpu")
    one = [g.clone() for _, g, _ in run.iterate_hist(p, block_bytes=None)]
    blocks = [g.clone() for _, g, _ in run.iterate_hist(p, block_bytes=200)]   # one client per block
    for a, b in zip(one, blocks):
        for key in ("w1", "b1", "w2", "b2"):
            assert torch.equal(getattr(a, key), getattr(b, key)), key
