"""HASFL's exact batch sizes at fixed cuts (fedlib.hasfl.optimiser.batch_search) against a literal enumeration of every
batch vector, the coefficients against Θ, the refinement steps (fedlib.hasfl.optimiser.refinement) and the widened instance
generator (tests/hasfl_instances.py)."""
import itertools

import numpy as np
import pytest

from fedlib.hasfl import batch_caps, batch_coefficients, cut_moves, exact_batches, refine, theta
from tests.hasfl_instances import random_instance


def _all_batches(p, cuts):
    """Θ of every batch vector b ∈ Π_i {1..cap_i} at ``cuts`` (literal enumeration): (values, vectors)."""
    caps = batch_caps(p, cuts)
    grid = np.array(list(itertools.product(*[range(1, c + 1) for c in caps])), dtype=np.int64)
    return theta(p, grid, np.broadcast_to(cuts, grid.shape)), grid


def _mixed_cuts(p, seed):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.choice(p.allowed_cuts, p.num_devices), dtype=np.int64)


@pytest.mark.parametrize("seed", range(12))
def test_exact_batches_equal_the_enumeration_of_every_batch_vector(seed):
    kw = [dict(), dict(links="mixed"), dict(memory="tight"), dict(eps_slack=(0.001, 0.05))][seed % 4]
    p = random_instance(seed, num_devices=(2, 3), num_cuts=(4, 6), b_max=(8, 14), **kw)
    cuts = _mixed_cuts(p, seed)
    if (batch_caps(p, cuts) < 1).any():
        assert exact_batches(p, cuts) is None
        return
    vals, grid = _all_batches(p, cuts)
    b = exact_batches(p, cuts)
    if not np.isfinite(vals.min()):
        assert b is None                                      # ε unreachable at these cuts for every b
        return
    assert theta(p, b, cuts) == pytest.approx(vals.min(), rel=1e-12), (seed, b, grid[np.argmin(vals)])


def test_coefficients_reproduce_theta():
    p = random_instance(4, num_devices=(3, 3), links="mixed")
    # a mixed cut vector at which ε is reachable (Θ finite with every device at its memory cap)
    cuts = next(c for c in (_mixed_cuts(p, s) for s in range(200))
                if (batch_caps(p, c) >= 1).all() and np.isfinite(theta(p, batch_caps(p, c), c)) and len(set(c)) > 1)
    co = batch_coefficients(p, cuts)
    caps = batch_caps(p, cuts)
    rng = np.random.default_rng(0)
    compared = 0
    for _ in range(40):
        b = rng.integers(np.maximum(caps // 2, 1), caps + 1).astype(float)     # large b: ε mostly reachable
        num = (co["a"] * b).max() + (co["c"] * b).sum() + (co["d"] * b).max() + co["E"]
        den = co["A"] - co["B"] * (1 / b).sum()
        want = float(theta(p, b, cuts))
        if den > 0:
            assert co["K"] * num / den == pytest.approx(want, rel=1e-12)
            compared += 1
        else:
            assert want == np.inf                             # ε unreachable at these batch sizes
    assert compared >= 10 and co["E"] > 0 and (co["c"] >= 0).all()


def test_the_line_search_stops_above_the_optimum_where_the_exact_search_does_not():
    # at fixed cuts the two straggler maxima couple the devices: moving one b_i alone cannot lower a max that
    # another device also attains, so the per-device line search (from b = 1) can stop above the optimum
    from fedlib.hasfl import line_search_batches
    above = 0
    for seed in range(30):
        p = random_instance(seed, num_devices=(3, 3), num_cuts=(4, 5), b_max=(8, 12), links="mixed")
        cuts = _mixed_cuts(p, seed)
        if (batch_caps(p, cuts) < 1).any():
            continue
        vals, _ = _all_batches(p, cuts)
        if not np.isfinite(vals.min()):
            continue
        assert theta(p, exact_batches(p, cuts), cuts) == pytest.approx(vals.min(), rel=1e-12), seed
        ls = line_search_batches(p, np.ones(p.num_devices, dtype=np.int64), cuts)
        above += bool(theta(p, ls, cuts) > vals.min() * 1.01)
    assert above >= 1, "expected an instance where the line search from b = 1 stops > 1 % above the optimum"


def test_work_limit_returns_none_and_bad_inputs_name_the_parameter():
    p = random_instance(1, num_devices=(3, 3))
    cuts = np.full(3, p.allowed_cuts[0])
    assert exact_batches(p, cuts, work_limit=1) is None
    with pytest.raises(ValueError, match="work_limit"):
        exact_batches(p, cuts, work_limit=0)
    with pytest.raises(TypeError, match="max_steps"):
        exact_batches(p, cuts, max_steps=2.5)
    with pytest.raises(ValueError, match="cuts"):
        exact_batches(p, cuts[:2])
    with pytest.raises(ValueError, match="cuts"):
        exact_batches(p, np.full(3, p.profile.num_layers + 1))


def test_refine_reaches_the_enumerated_optimum_from_a_feasible_start():
    from fedlib.hasfl import exhaustive
    p = random_instance(7, num_devices=(2, 2), num_cuts=(4, 4), b_max=(10, 10), links="mixed")
    ref = exhaustive(p, b_max=p.max_batch)
    start_cuts = np.full(2, p.allowed_cuts[0], dtype=np.int64)
    start_b = batch_caps(p, start_cuts)                    # the least variance at the shallowest cut: feasible
    t0 = float(theta(p, start_b, start_cuts))
    assert np.isfinite(t0)
    b, cuts = refine(p, start_b, start_cuts)
    assert theta(p, b, cuts) <= t0
    b, cuts = cut_moves(p, b, cuts)
    assert theta(p, b, cuts) == pytest.approx(ref.theta, rel=1e-9)


def test_cut_enumeration_finds_a_pair_move_that_single_cut_moves_miss():
    # a tight-memory instance (3 devices, cuts 3, 4, 11, 15, I = 1): the alternation, group moves and single-device
    # cut moves end at cuts [3, 3, 3], 9.3 % above the optimum [4, 3, 4] (two devices must move together)
    from fedlib.hasfl import enumerate_cuts
    from fedlib.hasfl import bcd, exhaustive
    p = random_instance(36, num_devices=(3, 4), num_cuts=(4, 5), b_max=(16, 64), memory="tight")
    ref = exhaustive(p, b_max=p.max_batch)
    assert ref.cuts.tolist() == [4, 3, 4] and p.allowed_cuts == (3, 4, 11, 15)
    b, cuts = cut_moves(p, batch_caps(p, np.full(3, 3)), np.full(3, 3))
    assert theta(p, b, cuts) > ref.theta * 1.05                     # stuck: no single-device move pays
    b, cuts = enumerate_cuts(p)
    assert cuts.tolist() == [4, 3, 4] and theta(p, b, cuts) == pytest.approx(ref.theta, rel=1e-12)
    dec = bcd(p)
    assert dec.theta == pytest.approx(ref.theta, rel=1e-12) and dec.info.get("enumerated")
    assert enumerate_cuts(p, limit=1) is None                      # more than one feasible cut vector
    with pytest.raises(ValueError, match="limit"):
        enumerate_cuts(p, limit=0)


def test_widened_generator_options():
    # the default instances are unchanged by the new options (values recorded before they existed)
    assert random_instance(0).eps == pytest.approx(11.255064210158924, rel=1e-15)
    assert random_instance(5).allowed_cuts == (2, 10, 13, 14) and random_instance(5).max_batch == 36
    tight = random_instance(3, num_devices=(4, 4), memory="tight")
    caps = batch_caps(tight, np.full(4, tight.allowed_cuts[0]))
    assert ((1 <= caps) & (caps <= 19)).all(), caps
    mixed = random_instance(3, num_devices=(6, 6), links="mixed")
    assert (2e6 <= mixed.devices.rate_up).all() and (mixed.devices.rate_up <= 200e6).all()
    assert mixed.devices.rate_up.max() / mixed.devices.rate_up.min() > 3
    near = random_instance(3, eps_slack=(0.001, 0.002))
    from fedlib.hasfl import bound_floor
    floor = bound_floor(near.constants, near.gamma, np.full(near.num_devices, float(near.max_batch)),
                        near.allowed_cuts[0], near.interval)
    assert 1.001 <= near.eps / floor <= 1.002
    with pytest.raises(ValueError, match="memory"):
        random_instance(0, memory="loose")
    with pytest.raises(ValueError, match="links"):
        random_instance(0, links="fast")
    with pytest.raises(ValueError, match="eps_slack"):
        random_instance(0, eps_slack=(0.5, 0.1))
    with pytest.raises(ValueError, match="eps_slack"):
        random_instance(0, eps_slack=(0.0, 0.1))


def _reference_line_search(p, b, cuts, max_candidates=4096, sweeps=8):
    """The per-device line search as the paper-faithful literal loop: every candidate of device i scored in one
    call on the full ``[cap, N]`` broadcast of the cuts (no blocks)."""
    b, cuts = np.asarray(b, dtype=np.int64).copy(), np.asarray(cuts, dtype=np.int64)
    caps = np.minimum(batch_caps(p, cuts), max_candidates)
    cur = float(theta(p, b, cuts))
    for _ in range(sweeps):
        changed = False
        for i in range(p.num_devices):
            cand = np.repeat(b[None], caps[i], 0)
            cand[:, i] = np.arange(1, caps[i] + 1)
            vals = theta(p, cand, np.broadcast_to(cuts, cand.shape))
            k = int(np.argmin(vals))
            if vals[k] < cur * (1 - 1e-12):
                b, cur, changed = cand[k].copy(), float(vals[k]), True
        if not changed:
            break
    return b


@pytest.mark.parametrize("seed", range(4))
def test_the_line_search_in_blocks_equals_the_literal_loop_bit_for_bit(seed):
    # N = 40 with caps in the thousands: a device's candidates span two or three blocks of 2^16 // N = 1638 rows,
    # and the blocks must give every row the same Θ as one call on all of them
    from dataclasses import replace
    p = random_instance(seed, num_devices=(40, 40), num_cuts=(4, 6), b_max=(3000, 4000))
    p = replace(p, devices=replace(p.devices, memory_bits=p.devices.memory_bits * 100))   # caps up to b_max
    cuts = _mixed_cuts(p, seed)
    if (batch_caps(p, cuts) < 1).any():
        pytest.skip("an instance where some device fits no batch")
    assert batch_caps(p, cuts).max() > 2 ** 16 // p.num_devices      # more than one block for some device
    from fedlib.hasfl import line_search_batches
    start = np.ones(p.num_devices, dtype=np.int64)
    got, want = line_search_batches(p, start, cuts), _reference_line_search(p, start, cuts)
    assert got.tolist() == want.tolist()
    assert float(theta(p, got, cuts)) == float(theta(p, want, cuts))


def test_theta_in_blocks_is_bit_identical_to_one_call():
    from dataclasses import replace

    from fedlib.hasfl.optimiser.refinement import theta_rows
    p = random_instance(0, num_devices=(40, 40), num_cuts=(4, 6), b_max=(3000, 4000))
    p = replace(p, devices=replace(p.devices, memory_bits=p.devices.memory_bits * 100))
    cuts = _mixed_cuts(p, 0)
    rng = np.random.default_rng(0)
    cand = rng.integers(500, batch_caps(p, cuts) + 1, size=(5000, p.num_devices))    # 4 blocks of 1638 rows
    want = theta(p, cand, np.broadcast_to(cuts, cand.shape))
    got = theta_rows(p, cand, cuts)
    assert got.shape == (5000,) and np.isfinite(want).sum() > 1000
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()
