"""[24]'s β estimator (fedlib.hasfl.bound.beta24) against a literal loop and hand-computed cases, its store record
(fedlib.lab.hasfl.runs.experiments.beta24_config / estimated_beta24). HASFL decided under it is
``hasfl_5_train_figures``' own cells."""
import copy
import inspect
import math
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fedlib.lab.store import ResultStore
from fedlib.core import numpy_rng
from fedlib.core.validate import ParameterTypeError
from fedlib.hasfl.bound.beta24 import (BETA_FLOOR, beta24_pilot, federated_beta24, moving_average, node_beta,
                                       weighted_beta)
from fedlib.lab.hasfl.runs.training import TrainSettings


# --- the estimator against a literal loop ------------------------------------------------------------------------

def _literal(model0, x, y, parts, rounds, interval, lr, b, holding, seed):
    """[24]'s estimator written out: per-node model copies, torch's SGD, [24]'s minibatch reuse, β_i, the D_i
    average and the moving average, in plain loops."""
    n, sizes = len(parts), [len(p) for p in parts]
    rngs = [numpy_rng(seed, f"data/beta24/{i}") for i in range(n)]
    perms, starts = [r.permutation(d) for r, d in zip(rngs, sizes)], [0] * n

    def draw(i):
        if starts[i] + b > sizes[i]:
            perms[i], starts[i] = rngs[i].permutation(sizes[i]), 0
        starts[i] += b
        return perms[i][starts[i] - b:starts[i]]

    def grads(m, i, batch):
        rows = torch.as_tensor(parts[i][batch])
        m.zero_grad()
        F.cross_entropy(m(x[rows]), y[rows]).backward()
        return [p.grad.clone() for p in m.parameters()]

    def norm(ts):
        return math.sqrt(sum(float((t.double() ** 2).sum()) for t in ts))

    glob, prev = copy.deepcopy(model0), [None] * n
    per_round, smoothed, per_node, avg = [], [], [], None
    for t in range(1, rounds + 2):
        node = []
        for i in range(n):
            if prev[i] is not None:
                m_prev, g_prev, xi = prev[i]
                g_glob = grads(glob, i, xi)
                num = norm([a - c for a, c in zip(g_prev, g_glob)])
                den = norm([a.detach() - c.detach() for a, c in zip(m_prev.parameters(), glob.parameters())])
                node.append(max(num / den if den > 1e-10 else 0.0, 1e-5))
        if node:
            beta = sum(d * v for d, v in zip(sizes, node)) / sum(sizes)
            avg = beta if avg is None else holding * avg + (1 - holding) * beta
            per_round.append(beta)
            smoothed.append(avg)
            per_node.append(node)
        if t == rounds + 1:
            break
        locals_ = []
        for i in range(n):
            m = copy.deepcopy(glob)
            opt = torch.optim.SGD(m.parameters(), lr=lr)
            for k in range(interval):
                xi = prev[i][2] if (k == 0 and prev[i] is not None and interval > 1) else draw(i)
                opt.zero_grad()
                rows = torch.as_tensor(parts[i][xi])
                F.cross_entropy(m(x[rows]), y[rows]).backward()
                opt.step()
            prev[i] = (m, grads(m, i, xi), xi)
            locals_.append(m)
        with torch.no_grad():
            for j, p in enumerate(glob.parameters()):
                p.copy_(sum(d * list(m.parameters())[j] for d, m in zip(sizes, locals_)) / sum(sizes))
    return per_round, smoothed, per_node, glob


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Sequential(nn.Flatten(), nn.Linear(784, 16), nn.ReLU()), nn.Sequential(nn.Linear(16, 10)))


@pytest.mark.parametrize("interval", [1, 3])
def test_estimator_equals_a_literal_loop_on_an_mlp(fmnist, float64, one_thread, interval):
    x, y = fmnist.x_train[:8].double(), fmnist.y_train[:8]
    parts = [np.array([0, 1, 2]), np.array([3, 4, 5, 6, 7])]    # unequal D_i: the weights matter
    model = _mlp().double()
    want_rounds, want_smoothed, want_nodes, want_model = _literal(model, x, y, parts, 3, interval, 0.1, 2, 0.5, 0)
    got = beta24_pilot(model, x, y, parts, 3, interval, 0.1, 2, 0.5, 0)
    assert len(got["beta_rounds"]) == 3 and got["sizes"] == [3, 5] and got["weights"] == [3 / 8, 5 / 8]
    assert got["beta_rounds"] == pytest.approx(want_rounds, rel=1e-10)
    assert got["beta_smoothed"] == pytest.approx(want_smoothed, rel=1e-10)
    assert [b for r in got["beta_nodes"] for b in r] == pytest.approx([b for r in want_nodes for b in r], rel=1e-10)
    assert got["beta"] == got["beta_smoothed"][-1]
    for p, q in zip(model.parameters(), want_model.parameters()):    # left at the pilot's final global model
        assert torch.allclose(p, q, rtol=0, atol=1e-12)
    assert min(got["beta_rounds"]) > BETA_FLOOR                    # a real curvature, not the floor


# --- hand-computed cases: quadratic losses F_i(w) = ½ wᵀ A_i w, ∇F_i = A_i w ----------------------------------

def _quadratic(A, sizes, rounds, interval, lr, holding, w0):
    return federated_beta24(torch.tensor(w0, dtype=torch.float64), lambda i, w, batch: A[i] @ w, sizes, rounds,
                            interval, lr, 1, holding, [np.random.default_rng(i) for i in range(len(A))])


def test_quadratic_beta_is_the_curvature_along_the_pairs_direction_by_hand():
    # w0 = (1, 1), one local step at lr 0.1: w_1 = (0.9, 0.7) under A_1 = diag(1, 3), w_2 = (0.8, 0.9) under
    # A_2 = diag(2, 1); D = (1, 3): w = (0.825, 0.85); Δ_1 = (0.075, -0.15), Δ_2 = (-0.025, 0.05);
    # β_i = ‖A_i Δ_i‖ / ‖Δ_i‖: β_1 = ‖(0.075, -0.45)‖ / ‖(0.075, -0.15)‖ = sqrt(0.208125 / 0.028125) = sqrt(7.4),
    # β_2 = ‖(-0.05, 0.05)‖ / ‖(-0.025, 0.05)‖ = sqrt(0.005 / 0.003125) = sqrt(1.6); β = (β_1 + 3 β_2) / 4
    A = [torch.diag(torch.tensor([1.0, 3.0], dtype=torch.float64)), torch.diag(torch.tensor([2.0, 1.0], dtype=torch.float64))]
    got = _quadratic(A, [1, 3], 1, 1, 0.1, 0.0, [1.0, 1.0])
    assert got["beta_nodes"][0] == pytest.approx([math.sqrt(7.4), math.sqrt(1.6)], rel=1e-12)
    assert got["beta"] == pytest.approx((math.sqrt(7.4) + 3 * math.sqrt(1.6)) / 4, rel=1e-12)


def test_averaging_weights_are_the_local_data_sizes():
    # A_i = a_i · Id: β_i = a_i exactly at every round, so β = Σ D_i a_i / D = (1·2 + 3·5) / 4, not (2 + 5) / 2
    A = [2.0 * torch.eye(3, dtype=torch.float64), 5.0 * torch.eye(3, dtype=torch.float64)]
    got = _quadratic(A, [1, 3], 4, 3, 0.05, 0.0, [1.0, -2.0, 0.5])
    assert got["beta_nodes"] == [pytest.approx([2.0, 5.0], rel=1e-12)] * 4
    assert got["beta_rounds"] == pytest.approx([4.25] * 4, rel=1e-12)
    assert got["weights"] == [0.25, 0.75]
    assert weighted_beta([1.0, 4.0], [1, 3]) == 3.25
    assert weighted_beta([1.0, 4.0], [2, 2]) == 2.5


def test_smoothing_is_the_moving_average_of_the_round_estimates():
    assert moving_average(None, 3.0, 0.9) == 3.0                    # the first estimate is taken as it is
    assert moving_average(float("nan"), 3.0, 0.9) == 3.0
    assert moving_average(2.0, float("nan"), 0.5) == 2.0            # a NaN estimate is skipped
    assert moving_average(2.0, 6.0, 0.25) == pytest.approx(0.25 * 2.0 + 0.75 * 6.0)
    assert moving_average(2.0, 6.0, 0.0) == 6.0                     # [24]'s default: no smoothing
    # per round the aggregator's value changes (a_i changes the direction's curvature): the smoothed trace is
    # the recursion over the round values, and the decisive value its last entry
    A = [torch.diag(torch.tensor([1.0, 9.0], dtype=torch.float64)), torch.diag(torch.tensor([4.0, 2.0], dtype=torch.float64))]
    got = _quadratic(A, [2, 1], 5, 2, 0.05, 0.6, [1.0, 1.0])
    assert len(set(got["beta_rounds"])) == 5
    avg, want = None, []
    for b in got["beta_rounds"]:
        avg = b if avg is None else 0.6 * avg + 0.4 * b
        want.append(avg)
    assert got["beta_smoothed"] == pytest.approx(want, rel=1e-12) and got["beta"] == got["beta_smoothed"][-1]
    unsmoothed = _quadratic(A, [2, 1], 5, 2, 0.05, 0.0, [1.0, 1.0])
    assert unsmoothed["beta"] == unsmoothed["beta_rounds"][-1] != got["beta"]


def test_a_node_without_a_direction_or_curvature_is_floored_at_1e_5():
    w, g = torch.ones(3, dtype=torch.float64), torch.arange(3.0, dtype=torch.float64)
    assert node_beta(w, g, w.clone(), g + 1) == BETA_FLOOR == 1e-5                       # ‖Δw‖ = 0
    assert node_beta(w, g, w + 1e-12, g + 1) == BETA_FLOOR                                # ‖Δw‖ <= 1e-10
    assert node_beta(w, g, w + 1.0, g + 1e-9) == BETA_FLOOR                               # β_i = 5.8e-10 < 1e-5
    assert node_beta(w, g * float("nan"), w + 1.0, g) == BETA_FLOOR                       # NaN
    assert node_beta(w, g, w + 1.0, g + 2e-5) == pytest.approx(2e-5)                      # just above: kept
    # one node: its local model is the global one, so every estimate is the floor
    got = _quadratic([3.0 * torch.eye(2, dtype=torch.float64)], [5], 3, 2, 0.1, 0.0, [1.0, 1.0])
    assert got["beta_rounds"] == [BETA_FLOOR] * 3 and got["floored"] == [1] * 3


def test_bad_input_is_refused_naming_the_parameter():
    A = [torch.eye(2, dtype=torch.float64)] * 2
    w0 = torch.ones(2, dtype=torch.float64)
    good = dict(w0=w0, grad=lambda i, w, b: A[i] @ w, sizes=[2, 3], rounds=2, interval=2, lr=0.1, batch_size=2,
                holding=0.0, rngs=[np.random.default_rng(0), np.random.default_rng(1)])
    assert federated_beta24(**good)["rounds"] == 2
    for name, bad in (("w0", [1.0, 1.0]), ("grad", None), ("sizes", [0, 3]), ("sizes", []), ("rounds", 0),
                      ("interval", 0), ("lr", 0.0), ("lr", float("nan")), ("batch_size", 3), ("batch_size", 0),
                      ("holding", 1.0), ("holding", -0.1), ("rngs", [np.random.default_rng(0)]), ("rngs", [0, 1])):
        with pytest.raises(ValueError, match=rf"\b{name}\b"):          # ParameterTypeError is a ValueError
            federated_beta24(**{**good, name: bad})
    with pytest.raises(ValueError, match="node_betas"):
        weighted_beta([-1.0], [1])
    with pytest.raises(ValueError, match="sizes"):
        weighted_beta([1.0, 2.0], [1])
    with pytest.raises(ValueError, match="holding"):
        moving_average(1.0, 2.0, 1.0)
    with pytest.raises(ValueError, match="node_beta"):
        node_beta(w0, w0, torch.ones(3), w0)
    with pytest.raises(ValueError, match="diverged"):
        federated_beta24(**{**good, "lr": 1e300, "grad": lambda i, w, b: 1e300 * w})
    x, y, model = torch.zeros(6, 1, 4, 4), torch.zeros(6, dtype=torch.long), nn.Sequential(nn.Flatten(), nn.Linear(16, 2))
    with pytest.raises(ValueError, match=r"parts\[1\]"):
        beta24_pilot(model, x, y, [np.array([0, 1]), np.array([5, 6])], 1, 1, 0.1, 1, 0.0, 0)
    with pytest.raises(ParameterTypeError, match="parts"):
        beta24_pilot(model, x, y, np.array([0, 1]), 1, 1, 0.1, 1, 0.0, 0)
    with pytest.raises(ValueError, match="seed"):
        beta24_pilot(model, x, y, [np.array([0, 1])], 1, 1, 0.1, 1, 0.0, -1)


# --- the store record ----------------------------------------------------------------------------------------

BASE = dict(model="vgg16", dataset="fashion-mnist", setting="iid", num_devices=20, shards_per_client=2, interval=15,
            rounds=14, lr=0.01, batch_size=16, holding=0.0, seed=0, width=0.25)


def test_every_argument_of_the_beta24_key_changes_it():
    from fedlib.lab.store import config_key
    from fedlib.lab.hasfl.runs.experiments import beta24_config, constants_config
    assert set(BASE) == set(inspect.signature(beta24_config).parameters)
    key = config_key(beta24_config(**BASE))
    others = {"model": "resnet18", "dataset": "cifar10", "setting": "noniid", "holding": 0.5}
    for name, value in BASE.items():
        other = others.get(name) or (value + 1 if isinstance(value, int) else value * 1.5)
        assert config_key(beta24_config(**{**BASE, name: other})) != key, f"{name} is not in the key"
    pilot = constants_config("vgg16", "fashion-mnist", 200, 0.01, 16, 8, 10, 0, 0.25, 15)
    assert beta24_config(**BASE)["kind"] == "hasfl_beta24" != pilot["kind"]


@pytest.mark.parametrize("setting", ["iid", "noniid"])
def test_the_record_trains_on_the_training_runs_device_partition(fmnist, tmp_path, one_thread, monkeypatch, setting):
    from fedlib.lab.hasfl.runs import experiments
    from fedlib.lab.hasfl.runs.train_config import run_config
    from fedlib.lab.hasfl.runs.train_run import split_config
    from fedlib.split.records import client_partition
    data = replace(fmnist, x_train=fmnist.x_train[:240], y_train=fmnist.y_train[:240])
    seen = {}
    from fedlib.hasfl.bound import beta24 as b24
    real = b24.beta24_pilot

    def spy(model, x, y, parts, *args):
        seen["parts"] = parts
        return real(model, x, y, parts, *args)
    monkeypatch.setattr(b24, "beta24_pilot", spy)
    store = ResultStore(tmp_path, code=experiments.STORE_CODE)
    cfg = experiments.beta24_config("vgg16", "fashion-mnist", setting, 4, 2, 2, 1, 0.01, 4, 0.0, 3, 0.0625)
    rec = experiments.estimated_beta24(store, cfg, data)
    s = TrainSettings(width=0.0625, interval=2)
    train_parts = client_partition(split_config(run_config(s, setting, {"b": [4] * 4, "cuts": [1] * 4}, 3, 240)),
                                   data.y_train)
    assert all(np.array_equal(a, b) for a, b in zip(seen["parts"], train_parts))
    assert rec["sizes"] == [60] * 4 and rec["config"] == cfg and len(rec["beta_rounds"]) == 1 and rec["beta"] > 0
    del seen["parts"]
    assert experiments.estimated_beta24(store, cfg, data)["beta"] == rec["beta"] and not seen   # a cache hit


def test_the_beta24_key_covers_its_code(tmp_path, monkeypatch, fmnist, one_thread):
    """The record's store code covers every fedlib module its computation runs (tests/test_store_coverage.py's
    profiler)."""
    from test_store_coverage import _assert_covered, _Tracer

    from fedlib.data import TensorDataset
    from fedlib.lab.hasfl.runs import experiments
    tracer = _Tracer().install(monkeypatch)
    tiny = TensorDataset("fashion-mnist", fmnist.x_train[:120], fmnist.y_train[:120], fmnist.x_test[:40],
                         fmnist.y_test[:40], fmnist.classes, fmnist.source)
    store = experiments.result_store(str(tmp_path))
    experiments.estimated_beta24(store, experiments.beta24_config("vgg16", "fashion-mnist", "noniid", 2, 2, 2, 2, 0.01,
                                                                  4, 0.5, 0, 0.125), tiny)
    _assert_covered(tracer, ["hasfl_beta24"])
