"""A DTFL tier scheduler of your own (fedlib.dtfl.simulate(scheduler=...), the lab's system_run / run_entry with an
import path): it decides the tiers, reaches every worker process by its path, and bad ones are refused by name."""
import sys

import numpy as np
import pytest

from fedlib.core.components import resolve
from fedlib.dtfl import TimeModel, simulate, tier_costs
from fedlib.dtfl.timing import PROFILES
from fedlib.lab.dtfl import experiments as dx
from fedlib.lab.parallel import map_jobs
from fedlib.split import resnet20

import own_components

pytestmark = pytest.mark.usefixtures("one_thread")


def _sim(scheduler=None, **kw):
    tm = TimeModel(tier_costs(resnet20(1, 28, 10, width=0.25), (1, 28, 28), 7, 10), 5e9, 8e9)
    k, rounds = 5, 4
    idx = np.tile(np.arange(k) % len(PROFILES), (rounds, 1))
    return tm, simulate(tm, PROFILES, idx, np.full(k, 50), np.random.default_rng(1), scheduler=scheduler, **kw)


def test_a_scheduler_of_your_own_decides_the_tiers():
    tm, sim = _sim("own_components:ConstantTier")
    assert sim["tiers"] == [[3] * 5] * 4                                       # hand-checked: tier 3 always
    assert sim["cuts"] == [[int(tm.costs.cuts[2])] * 5] * 4
    by_class, by_path = _sim(own_components.FastestTier)[1], _sim("own_components:FastestTier")[1]
    assert by_class == by_path
    ours = _sim()[1]
    assert ours["tiers"][0] == by_path["tiers"][0] == [7] * 5                  # both start at M before observing
    assert ours["tiers"] != by_path["tiers"]                                    # then they decide differently
    # FastestTier's rule, by hand on round 2: each client's own smallest estimate after round 1's observation
    from fedlib.dtfl import TierScheduler
    ref = TierScheduler(tm, 5)
    ref.observe(np.asarray(by_path["tiers"][0]), np.asarray(by_path["T_c"][0]))
    mbps = np.array([p.mbps for p in (PROFILES[i % len(PROFILES)] for i in range(5))])
    assert by_path["tiers"][1] == (1 + np.argmin(ref.estimate(mbps, 50), axis=1)).tolist()


@pytest.mark.parametrize("scheduler, error, words", [
    ("no_such_module_here:Foo", ValueError, "cannot import module 'no_such_module_here'"),
    ("own_components:Missing", ValueError, "has no 'Missing'"),
    ("own_components:NOT_CALLABLE", TypeError, "must name a function or class"),
    ("own_components:NotAScheduler", TypeError, "lacks \\[.observe., .assign."),
    ("own_components:WrongShape", ValueError, "assign\\(\\) in round 1 must give tiers as 5 integers in 1..7"),
    ("own_components", ValueError, "import path 'package.module:name'"),
    (3.5, TypeError, "scheduler must be a name, an import path"),
], ids=["unimportable", "missing", "not-callable", "no-interface", "wrong-shape", "no-colon", "number"])
def test_a_bad_scheduler_is_refused_naming_it(scheduler, error, words):
    with pytest.raises(error, match=words):
        _sim(scheduler)


def test_the_notebook_check_refuses_a_class_that_is_no_scheduler():
    from fedlib.lab.dtfl.checks import check_scheduler
    assert check_scheduler("own_components:ConstantTier") == "own_components:ConstantTier"
    with pytest.raises(TypeError, match="^scheduler 'own_components:NotAScheduler' must name a subclass of "
                                        "fedlib.dtfl.TierScheduler, got type"):
        check_scheduler("own_components:NotAScheduler")
    with pytest.raises(ValueError, match="^scheduler must be an import path 'module:Class' of your own .*runs "
                                         "anyway\\), got 'ours'"):
        check_scheduler("ours")


def test_resolve_names_the_parameter():
    with pytest.raises(ValueError, match="^strategy must be one of \\['a'\\] or an import path"):
        resolve("b", "strategy", ("a",))
    with pytest.raises(TypeError, match="^strategy must be a name, an import path"):
        resolve(None, "strategy")
    # the module as Python holds it now (the lab imports a component's module again after an edit, and on its
    # first use when something else imported it: issue 70)
    assert resolve("own_components:FastestTier", "x") is sys.modules["own_components"].FastestTier


def _jobs(store, scheduler):
    s = dx.Setup(model="resnet20", width=0.125, num_clients=4, batch_size=8, train_subset=64, test_subset=50,
                 rounds=3)
    return [dict(store=store, s=s, num_tiers=7, case="all", setting="iid", seed=seed, target_acc=0.5,
                 scheduler=scheduler) for seed in (0, 1)]


def test_your_scheduler_reaches_the_worker_processes(tmp_path):
    path = "own_components:ConstantTier"
    one = map_jobs(dx.run_entry, _jobs(dx.result_store(tmp_path / "one"), path), workers=1)
    pool = map_jobs(dx.run_entry, _jobs(dx.result_store(tmp_path / "pool"), path), workers=2)
    for a, b in zip(one, pool):
        assert a["sim"]["tiers"] == b["sim"]["tiers"] == [[3] * 4] * 3          # the workers ran yours, not ours
        assert a["row"]["method"] == b["row"]["method"] == path
        assert a["row"]["scheduler_code"] == b["row"]["scheduler_code"]
        assert {k: v for k, v in a["record"].items() if k != "elapsed_s"} == \
            {k: v for k, v in b["record"].items() if k != "elapsed_s"}
    ours = map_jobs(dx.run_entry, _jobs(dx.result_store(tmp_path / "one"), "ours"), workers=1)
    assert ours[0]["sim"]["tiers"] != one[0]["sim"]["tiers"] and ours[0]["row"]["method"] == "dtfl"
    strip = lambda r: {k: v for k, v in r.items() if k not in ("elapsed_s", "store_key")}
    assert strip(ours[0]["record"]) != strip(one[0]["record"])                  # other tiers: another record


def test_an_unimportable_scheduler_is_refused_before_any_run(tmp_path):
    with pytest.raises(ValueError, match="scheduler = 'nope_module:X': cannot import"):
        map_jobs(dx.run_entry, _jobs(dx.result_store(tmp_path), "nope_module:X"), workers=1)
    assert not list(tmp_path.glob("*.json"))


@pytest.mark.filterwarnings("ignore:Data has no positive values")       # no run reaches the target in 3 rounds
def test_the_figures_draw_a_method_of_your_own_by_its_name(tmp_path):
    from fedlib.lab.dtfl.compare_plots import fig2_accuracy_vs_time, method_colour, method_label, methods_of
    path = "own_components:ConstantTier"
    entries = [map_jobs(dx.run_entry, _jobs(dx.result_store(tmp_path), m)[:1], workers=1)[0] for m in ("ours", path)]
    fig = fig2_accuracy_vs_time(entries, "iid", "resnet20")
    labels = [line.get_label() for line in fig.axes[1].get_lines()]
    assert "DTFL" in labels and path in labels                                   # drawn, by its name
    assert method_label(path) == path and method_colour(path) != method_colour("dtfl")
    assert methods_of([e["row"] for e in entries]) == ["dtfl", path]   # Table 3: a bar of its own, never dropped


def test_dtfl_on_clients_you_type(fmnist):
    from fedlib.dtfl import ResourceProfile
    from fedlib.lab.dtfl.experiments import time_model
    s = dx.Setup(model="resnet20", width=0.125, num_clients=3, batch_size=8, train_subset=60, test_subset=50,
                 rounds=2, noise=0.0)
    clients = [ResourceProfile(4, 100), ResourceProfile(0.5, 20), ResourceProfile(1, 5)]
    sim = dx.system_run(s, fmnist, 7, clients, "iid", 0, fixed_tier=3)
    assert sim["profile_idx"] == [[0, 1, 2]] * 2 and sim["profiles"] == [c.name for c in clients]
    tm = time_model("resnet20", 0.125, "fashion-mnist", 7, s.core_gflops, s.server_gflops)
    t = tm.times(np.full(3, 3), np.array([4, 0.5, 1.0]), np.array([100, 20, 5.0]), np.array(sim["samples"]))
    assert sim["T_c"][1] == pytest.approx(t["T_c"].tolist()) and sim["T_com"][0] == pytest.approx(t["T_com"].tolist())
    assert sim["straggler"] == [np.argmax(t["T"])] * 2                             # eq. 5: the slowest client
    with pytest.raises(ValueError, match="one ResourceProfile per client: K = 3, got 2"):
        dx.system_run(s, fmnist, 7, clients[:2], "iid", 0)
    with pytest.raises(ValueError, match="change_every must be 0"):
        dx.system_run(s, fmnist, 7, clients, "iid", 0, change_every=2)
    with pytest.raises(TypeError, match=r"case\[1\] must be a fedlib.dtfl.ResourceProfile"):
        dx.system_run(s, fmnist, 7, [clients[0], (1, 2), clients[2]], "iid", 0)


def test_your_scheduler_decides_on_the_system_of_the_seed_asked(fmnist):
    """Issue 70 item 6: a scheduler of your own sees the system of the seed asked (seed 3, not 0): the profiles
    and round 1's noisy client times drawn by hand from seed 3's ``system`` stream, and FastestTier's round 2 from
    them. Planted: system_run drawing the system of seed 0 -> red."""
    from fedlib.core import numpy_rng
    from fedlib.dtfl import TierScheduler, profile_schedule
    from fedlib.dtfl.timing import case_profiles
    s = dx.Setup(model="resnet20", width=0.125, num_clients=5, batch_size=8, train_subset=60, test_subset=50,
                 rounds=2)
    tm = dx.time_model("resnet20", 0.125, "fashion-mnist", 7, s.core_gflops, s.server_gflops)
    profiles = case_profiles("all")
    got = {seed: dx.system_run(s, fmnist, 7, "all", "iid", seed, scheduler="own_components:FastestTier")
           for seed in (0, 3)}
    for seed, sim in got.items():
        rng = numpy_rng(seed, "system")
        idx = profile_schedule(5, 2, len(profiles), 0, 0.3, rng)
        assert sim["profile_idx"] == idx.tolist()
        cpus = np.array([profiles[i].cpus for i in idx[0]])
        mbps = np.array([profiles[i].mbps for i in idx[0]])
        t_c = tm.times(np.full(5, 7), cpus, mbps, np.array(sim["samples"]))["T_c"] * \
            np.exp(s.noise * rng.standard_normal(5))
        assert sim["T_c"][0] == pytest.approx(t_c.tolist(), rel=1e-12)
        ref = TierScheduler(tm, 5)
        ref.observe(np.full(5, 7), t_c)
        assert sim["tiers"][1] == (1 + np.argmin(ref.estimate(mbps, np.array(sim["samples"])), axis=1)).tolist()
    assert got[3]["T_c"][0] != got[0]["T_c"][0]
