"""Errors about components of your own name them (issue 70, item 2): a HIST client partition, a DTFL tier scheduler
(its construction, ``assign()`` and ``observe()``) and a HASFL benchmark strategy are bound to the arguments the
method passes before they run (a wrong signature is refused naming the component and the parameters it must take),
what they raise is wrapped as "<role> '<path>' raised <Error>: ..." with the original as the cause, and a partition
that is not deterministic given its rng is refused. A HASFL decision beyond a device's memory says C4, not C1.

Planted once each and seen red: the partition called bare, the scheduler built bare, ``assign()`` called bare, the
strategy called bare, the determinism check dropped, the C4 reason dropped."""
import sys
import textwrap

import numpy as np
import pytest

from fedlib.core.components import ComponentError
from fedlib.core.validate import ParameterTypeError


@pytest.fixture
def module_dir(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("errs_")]:
        sys.modules.pop(name)


def _write(folder, name: str, source: str) -> str:
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    return name


PARTITIONS = """
    import numpy as np

    def one_arg(labels):
        return [np.arange(3)]

    def raises(labels, num_clients, num_cells, rng):
        return [np.arange(3)[5] for _ in range(num_clients)]

    def global_random(labels, num_clients, num_cells, rng):
        return [np.random.default_rng().choice(len(labels), 5, replace=False) for _ in range(num_clients)]

    def seeded(labels, num_clients, num_cells, rng):
        return [rng.choice(len(labels), 5, replace=False) for _ in range(num_clients)]
"""


def _partition(path):
    from fedlib.hist import HistConfig
    from fedlib.hist.sampling import client_partition

    cfg = HistConfig(setting=path, num_cells=2, num_clients=4, hidden=8, H=2, E=4, global_rounds=1, seed=3)
    return client_partition(cfg, np.repeat(np.arange(10), 6))


def test_a_hist_partition_of_your_own_is_bound_wrapped_and_checked_for_determinism(module_dir):
    mod = _write(module_dir, "errs_parts", PARTITIONS)
    with pytest.raises(ParameterTypeError, match=r"partition 'errs_parts:one_arg' must take \(labels, num_clients, "
                                                 r"num_cells, rng\); its signature is \(labels\)"):
        _partition(f"{mod}:one_arg")
    with pytest.raises(ComponentError, match="partition 'errs_parts:raises' raised IndexError: index 5") as err:
        _partition(f"{mod}:raises")
    assert isinstance(err.value.__cause__, IndexError)
    with pytest.raises(ValueError, match="partition 'errs_parts:global_random' is not deterministic: two calls with "
                                         "the same seed \\(3\\)"):
        _partition(f"{mod}:global_random")
    parts = _partition(f"{mod}:seeded")                          # drawn from the rng it is given: accepted
    from fedlib.core.seeding import numpy_rng
    rng = numpy_rng(3, "data")
    assert [p.tolist() for p in parts] == [sorted(rng.choice(60, 5, replace=False).tolist()) for _ in range(4)]


SCHEDULERS = """
    import numpy as np
    from fedlib.dtfl import TierScheduler

    class TwoArgs(TierScheduler):
        def __init__(self, time_model, num_clients):
            super().__init__(time_model, num_clients)

    class AssignRaises(TierScheduler):
        def assign(self, mbps, samples, mask=None):
            raise KeyError("tier table")

    class AssignNoMask(TierScheduler):
        def assign(self, mbps, samples):
            return np.full(self.k, 2)

    class ObserveRaises(TierScheduler):
        def observe(self, tiers, client_s, mask=None):
            raise ZeroDivisionError("ema")
"""


def _simulate(path):
    from fedlib.dtfl.scheduler import simulate
    from fedlib.dtfl.timing import ResourceProfile
    from test_dtfl import toy_scheduler_model

    profiles = (ResourceProfile(1, 8), ResourceProfile(0.5, 2))
    return simulate(toy_scheduler_model(), profiles, np.array([[0, 1], [1, 0]]), [10, 10], np.random.default_rng(0),
                    scheduler=path)


@pytest.mark.parametrize("name, error, words", [
    ("TwoArgs", ParameterTypeError, r"scheduler 'errs_sched:TwoArgs' must take \(time_model, num_clients, alpha, "
                                    r"initial_tier, min_tier\); its signature is \(time_model, num_clients\)"),
    ("AssignRaises", ComponentError, r"scheduler 'errs_sched:AssignRaises''s assign\(\) in round 1 raised KeyError: "
                                     r"'tier table'"),
    ("AssignNoMask", ParameterTypeError, r"assign\(\) in round 1 must take \(mbps, samples, mask\); its signature is "
                                         r"\(mbps, samples\)"),
    ("ObserveRaises", ComponentError, r"observe\(\) in round 1 raised ZeroDivisionError: ema"),
])
def test_a_dtfl_scheduler_of_your_own_is_bound_and_its_errors_named(module_dir, name, error, words):
    mod = _write(module_dir, "errs_sched", SCHEDULERS)
    with pytest.raises(error, match=words):
        _simulate(f"{mod}:{name}")


STRATEGIES = """
    import numpy as np

    def no_rng(problem):
        return np.ones(problem.num_devices), np.ones(problem.num_devices)

    def raises(problem, rng):
        raise RuntimeError("solver failed")

    def huge_batches(problem, rng):
        return np.full(problem.num_devices, 10 ** 9), np.full(problem.num_devices, 2)
"""


def _strategy(path):
    from fedlib.hasfl import HasflConstants
    from fedlib.hasfl.optimiser.strategies import own_strategy
    from fedlib.lab.hasfl.runs.training import TrainSettings, training_problem

    consts = HasflConstants(10.0, np.full(16, 0.01), np.ones(16), 2.3)
    problem = training_problem(TrainSettings(width=0.0625), consts, 50.0, 3, 0)
    return own_strategy(problem, path, np.random.default_rng(1))


def test_a_hasfl_strategy_of_your_own_is_bound_wrapped_and_its_memory_checked(module_dir):
    mod = _write(module_dir, "errs_strat", STRATEGIES)
    with pytest.raises(ParameterTypeError, match=r"strategy 'errs_strat:no_rng' must take \(problem, rng\); its "
                                                 r"signature is \(problem\)"):
        _strategy(f"{mod}:no_rng")
    with pytest.raises(ComponentError, match="strategy 'errs_strat:raises' raised RuntimeError: solver failed") as err:
        _strategy(f"{mod}:raises")
    assert isinstance(err.value.__cause__, RuntimeError)
    d = _strategy(f"{mod}:huge_batches")
    assert d.theta == np.inf
    assert d.info["infeasible"].startswith("memory constraint C4: 3 device(s) exceed their memory, e.g. device 0 "
                                           "needs ")
    assert "at b = 1000000000, cut 2" in d.info["infeasible"]
