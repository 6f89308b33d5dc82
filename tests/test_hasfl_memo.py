"""The memo of HASFL's P1 and P2 solvers (fedlib.hasfl.optimiser.memo): a call is read from it only when every value
the solve reads is equal, and Algorithm 2 (bcd) decides as if every P1 and P2 were solved again."""
import copy
import dataclasses
from dataclasses import replace

import numpy as np
import pytest

import fedlib.hasfl.optimiser.p1 as p1_module
import fedlib.hasfl.optimiser.p2 as p2_module
from fedlib.hasfl import aux_variables, bcd, solve_p1, solve_p2, start_batches
from fedlib.hasfl.optimiser.memo import SolverCall, fingerprint
from tests.hasfl_instances import random_instance


def _leaves(obj, path=()):
    """(path, value) of every field of ``obj`` and of the dataclasses it holds."""
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        if dataclasses.is_dataclass(value):
            yield from _leaves(value, path + (field.name,))
        else:
            yield path + (field.name,), value


def _with(obj, path, value):
    """A copy of ``obj`` with the field at ``path`` set to ``value`` (no validation: only the key is read)."""
    new = copy.copy(obj)
    object.__setattr__(new, path[0], value if len(path) == 1 else _with(getattr(obj, path[0]), path[1:], value))
    return new


def _other(value):
    """A value of the same kind that differs from ``value``."""
    if isinstance(value, np.ndarray):
        out = value.copy()
        out.flat[0] = out.flat[0] * 2 + 1
        return out
    if isinstance(value, tuple):
        return value[:-1]
    if value is None:
        return 7
    return value + ("x" if isinstance(value, str) else 1)


def test_the_key_covers_every_field_of_the_problem():
    p = random_instance(0, num_devices=(4, 4))
    leaves = list(_leaves(p))
    # profile 12 fields, devices 6, servers 3, constants 4, and gamma, eps, interval, allowed_cuts, max_batch
    assert len(leaves) == 30
    key = fingerprint(p)
    same = [".".join(path) for path, value in leaves if fingerprint(_with(p, path, _other(value))) == key]
    assert same == []
    assert fingerprint(copy.deepcopy(p)) == key                     # equal values, another object: one key


def test_the_key_tells_types_and_values_apart():
    assert len({fingerprint(1), fingerprint(1.0), fingerprint(True), fingerprint(np.int64(1))}) == 4
    assert fingerprint(np.array([1, 2])) != fingerprint(np.array([1.0, 2.0])) != fingerprint(np.array([[1, 2]]))
    assert fingerprint({"T1": 1.0}) != fingerprint({"T1": 1.0 + 2 ** -52})
    assert fingerprint(("ab", "c")) != fingerprint(("a", "bc"))
    assert SolverCall(np.arange(3), 0.5) == SolverCall(np.arange(3), 0.5) != SolverCall(np.arange(3), 0.25)
    with pytest.raises(TypeError, match="object"):
        fingerprint(np.array([None]))


def _p2_fresh(problem, b):
    return p2_module._dinkelbach.__wrapped__(SolverCall(problem, np.asarray(b, dtype=np.int64), 1e-9, 50))


@pytest.mark.parametrize("seed, change", [(1, "eps"), (0, "server flops")])
def test_p2_of_a_changed_problem_is_solved_again(seed, change):
    p = random_instance(seed, num_devices=(4, 6), num_cuts=(6, 8), links="mixed")
    q = (replace(p, eps=p.eps * 3) if change == "eps"
         else replace(p, servers=replace(p.servers, flops=p.servers.flops / 1000)))
    b = start_batches(p, 4.0)
    first = solve_p2(p, b)[0]
    again = solve_p2(q, b)
    want = _p2_fresh(q, b)
    assert again[0].tolist() != first.tolist()                      # the change moves the cuts: the test can fail
    assert again[0].tolist() == want[0].tolist() and again[1] == want[1] and again[2] == want[2]


def test_p1_of_a_changed_problem_or_setting_is_solved_again():
    p = random_instance(0, num_devices=(4, 6), num_cuts=(6, 8), links="mixed")
    b = start_batches(p, 4.0)
    cuts = solve_p2(p, b)[0]
    T = aux_variables(p, b, cuts)
    q = replace(p, eps=p.eps * 3)
    results = [solve_p1(p, cuts, T).tolist(), solve_p1(p, cuts, T, budget_search=False).tolist(),
               solve_p1(q, cuts, T).tolist()]
    fresh = [p1_module._proposition1.__wrapped__(SolverCall(problem, cuts, T, search)).tolist()
             for problem, search in ((p, True), (p, False), (q, True))]
    assert results == fresh
    assert results[0] != results[1] and results[0] != results[2]   # each change moves b: the test can fail


def test_a_memoised_result_is_a_copy():
    p = random_instance(0, num_devices=(4, 6), num_cuts=(6, 8), links="mixed")
    b = start_batches(p, 4.0)
    cuts, T, info = solve_p2(p, b)
    want = (cuts.tolist(), dict(T), dict(info))
    cuts[:] = 99
    T["T1"] = -1.0
    info.clear()
    cuts2, T2, info2 = solve_p2(p, b)
    assert (cuts2.tolist(), T2, info2) == want
    b1 = solve_p1(p, cuts2, T2)
    b1[:] = 0
    assert (solve_p1(p, cuts2, T2) > 0).all()


@pytest.mark.parametrize("seed", range(3))
def test_bcd_reads_revisited_solves_from_the_memo_and_decides_as_without_it(seed, monkeypatch):
    # the restarts revisit batch vectors: P2 (a MILP) of a b already solved is read from the memo, and the decision
    # is the one that solving every P1 and P2 again gives
    p = random_instance(seed, num_devices=(6, 8), num_cuts=(6, 8), links="mixed")
    p1_module._proposition1.cache_clear()
    p2_module._dinkelbach.cache_clear()
    memo = bcd(p)
    assert p2_module._dinkelbach.cache_info().hits > 0, "expected the restarts to revisit some b"
    monkeypatch.setattr(p2_module, "_dinkelbach", p2_module._dinkelbach.__wrapped__)
    monkeypatch.setattr(p1_module, "_proposition1", p1_module._proposition1.__wrapped__)
    fresh = bcd(p)
    assert (memo.b.tolist(), memo.cuts.tolist(), memo.theta) == (fresh.b.tolist(), fresh.cuts.tolist(), fresh.theta)
    assert memo.info["history"] == fresh.info["history"] and memo.info["bcd_iters"] == fresh.info["bcd_iters"]
