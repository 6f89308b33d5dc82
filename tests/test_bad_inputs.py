"""Bad input at the public entry points: each call raises the documented error type, and the message names the
parameter (issue #7, item 4). Plus the notebook parameter validator (fedlib.core.validate_parameters)."""
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from fedlib import hasfl, hist
from fedlib.core import (ParameterTypeError, check_choice, check_float, check_int, check_list, estimators, seeding,
                         validate_parameters)
from fedlib.data import datasets, partition
from fedlib.hasfl import HasflConstants, bound_floor, rounds_needed, theorem1_bound, total_latency
from fedlib.hasfl import estimate as hasfl_estimate
from fedlib.hist import HistConfig, comm_per_round, rounds_for_budget
from fedlib.hist import estimate as hist_estimate
from fedlib.hist import sampling
from fedlib.hist import theory as hist_theory
from fedlib.plotting import write_metrics
from fedlib.split import EdgeDevices, LayerProfile, Servers, SystemSpec, memory_bits, resnet18, sample_system, vgg16
from fedlib.split.latency import device_terms

ROOT = Path(__file__).resolve().parents[1]
NAN, INF = float("nan"), float("inf")
LABELS = np.repeat(np.arange(10), 60)          # 600 samples, 10 classes
RNG = np.random.default_rng(0)
CPC = [4, 4]
CONSTS = HasflConstants(beta=2.0, sigma2=np.array([1.0, 3.0]), G2=np.array([0.5, 1.5]), vartheta=2.0)
HIST_CONSTS = {"L": 2.0, "sigma2": 1.0, "f_gap": 2.3, "delta1_sq": {"2": 0.1}, "delta2_sq": {"2": 0.2}}
BOUND_ARGS = dict(constants=HIST_CONSTS, num_cells=[2], num_clients=8, H=2, E=4, T=100, gamma=0.01,
                  mean_sq_norm=1.0, H_grid=[1, 2], E_over_H_grid=[1, 2], T_grid=[100])


def _profile():
    arr = np.asarray
    return LayerProfile("toy", (1, 1, 1), "sgd", arr([10.0, 30.0]), arr([20.0, 60.0]), arr([8.0, 4.0]),
                        arr([8.0, 4.0]), arr([100.0, 300.0]), arr([0.0, 0.0]), arr([8.0, 12.0]), arr([8.0, 12.0]),
                        arr([3, 6]))


def _devices(**over):
    kw = dict(flops=[10.0, 5.0], rate_up=[2.0, 4.0], rate_down=[8.0, 8.0], rate_up_fed=[50.0, 100.0],
              rate_down_fed=[100.0, 100.0], memory_bits=[1000.0, 1000.0])
    return EdgeDevices(**{**kw, **over})


def _spec(**over):
    kw = dict(num_devices=2, server_flops=1e12, device_flops=(1e9, 2e9), rate_up=(1e6, 2e6), rate_down=(1e6, 2e6),
              rate_servers=(1e6, 2e6), memory_bytes=(1e6, 2e6))
    return SystemSpec(**{**kw, **over})


def _tiny_model():
    return nn.Sequential(nn.Sequential(nn.Linear(4, 3), nn.ReLU()), nn.Sequential(nn.Linear(3, 2)))


def _problem(**over):
    kw = dict(profile=_profile(), devices=_devices(), servers=SERVERS, constants=CONSTS, gamma=0.1, eps=10.0,
              interval=2)
    return hasfl.Problem(**{**kw, **over})


X, Y = torch.randn(8, 4), torch.randint(0, 2, (8,))
SERVERS = Servers(flops=100.0, rate_to_fed=200.0, rate_from_fed=400.0)

# (id, call, error type, the parameter the message must name)
CASES = [
    # ---- core: seeding, estimators, validate helpers
    ("seed-negative", lambda: seeding.seed_sequence(-1, "data"), ValueError, "seed"),
    ("seed-bool", lambda: seeding.numpy_rng(True, "data"), TypeError, "seed"),
    ("seed-float", lambda: seeding.numpy_rng(2.5, "data"), TypeError, "seed"),
    ("seed-float-integral", lambda: seeding.torch_generator(2.0, "model"), TypeError, "seed"),
    ("seed-string", lambda: seeding.numpy_rng("0", "data"), TypeError, "seed"),
    ("stream-unknown", lambda: seeding.numpy_rng(0, "dta"), ValueError, "stream"),
    ("stream-not-str", lambda: seeding.numpy_rng(0, 3), TypeError, "stream"),
    ("device-unknown", lambda: seeding.resolve_device("gpu"), ValueError, "device"),
    ("device-int", lambda: seeding.resolve_device(0.5), TypeError, "device"),
    ("hessian-iters-0", lambda: estimators.hessian_top_eigenvalue(lambda: X.sum(), [X], 0, torch.Generator()),
     ValueError, "iters"),
    ("hessian-iters-float", lambda: estimators.hessian_top_eigenvalue(lambda: X.sum(), [X], 2.5, torch.Generator()),
     TypeError, "iters"),
    ("hessian-generator", lambda: estimators.hessian_top_eigenvalue(lambda: X.sum(), [X], 2, 0), TypeError,
     "generator"),
    ("check_int-nan", lambda: check_int("k", NAN), TypeError, "k"),
    ("check_float-inf", lambda: check_float("x", INF), ValueError, "x"),
    ("check_choice", lambda: check_choice("mode", "c", ("a", "b")), ValueError, "mode"),
    ("check_list-empty", lambda: check_list("xs", []), ValueError, "xs"),
    # ---- data
    ("load_dataset-unknown", lambda: datasets.load_dataset("mnist"), ValueError, "dataset"),
    ("load_dataset-not-str", lambda: datasets.load_dataset(3), TypeError, "dataset"),
    ("load_dataset-bad-kw", lambda: datasets.load_dataset("fashion-mnist", download=True), TypeError, "download"),
    ("load_cifar-unknown", lambda: datasets.load_cifar("cifar1000"), ValueError, "name"),
    ("cifar_available-unknown", lambda: datasets.cifar_available("svhn"), ValueError, "name"),
    ("load_cifar-download-str", lambda: datasets.load_cifar("cifar10", allow_download="no"), TypeError,
     "allow_download"),
    ("prepare-root-int", lambda: datasets.prepare_fashion_mnist(root=5), TypeError, "root"),
    ("iid-clients-bool", lambda: partition.iid(10, True, RNG), TypeError, "num_clients"),
    ("iid-samples-float", lambda: partition.iid(10.5, 2, RNG), TypeError, "num_samples"),
    ("iid-rng", lambda: partition.iid(10, 2, 0), TypeError, "rng"),
    ("shards-clients-float", lambda: partition.shards(LABELS, 2.5, 2, RNG), TypeError, "num_clients"),
    ("shards-spc-0", lambda: partition.shards(LABELS, 3, 0, RNG), ValueError, "shards_per_client"),
    ("shards-labels-float", lambda: partition.shards(LABELS + 0.5, 3, 2, RNG), TypeError, "labels"),
    ("shards-labels-2d", lambda: partition.shards(LABELS.reshape(60, 10), 3, 2, RNG), ValueError, "labels"),
    ("cell-iid-cells-0", lambda: partition.cell_iid_client_shards(LABELS, 0, 2, 2, RNG), ValueError, "num_cells"),
    ("dirichlet-alpha-nan", lambda: partition.dirichlet(LABELS, 3, NAN, RNG), ValueError, "alpha"),
    ("dirichlet-alpha-inf", lambda: partition.dirichlet(LABELS, 3, INF, RNG), ValueError, "alpha"),
    ("dirichlet-alpha-str", lambda: partition.dirichlet(LABELS, 3, "0.5", RNG), TypeError, "alpha"),
    ("dirichlet-min_size-float", lambda: partition.dirichlet(LABELS, 3, 0.5, RNG, min_size=2.5), TypeError,
     "min_size"),
    ("label_counts-num_classes", lambda: partition.label_counts(LABELS, [np.arange(5)], 3), ValueError,
     "num_classes"),
    ("label_counts-index", lambda: partition.label_counts(LABELS, [np.array([0, 600])]), ValueError, "parts"),
    # ---- split
    ("devices-nan-rate", lambda: _devices(rate_up=[NAN, 1.0]), ValueError, "rate_up"),
    ("devices-str-flops", lambda: _devices(flops=["1e9", "2e9"]), TypeError, "flops"),
    ("devices-bool-memory", lambda: _devices(memory_bits=[True, True]), TypeError, "memory_bits"),
    ("devices-length", lambda: _devices(rate_down=[1.0, 2.0, 3.0]), ValueError, "rate_down"),
    ("servers-inf", lambda: Servers(flops=INF, rate_to_fed=1.0, rate_from_fed=1.0), ValueError, "flops"),
    ("servers-list", lambda: Servers(flops=1.0, rate_to_fed=[1.0, 2.0], rate_from_fed=1.0), TypeError,
     "rate_to_fed"),
    ("spec-devices-float", lambda: _spec(num_devices=2.5), TypeError, "num_devices"),
    ("spec-devices-bool", lambda: _spec(num_devices=True), TypeError, "num_devices"),
    ("spec-range-nan", lambda: _spec(rate_up=(NAN, 1e6)), ValueError, "rate_up"),
    ("spec-range-scalar", lambda: _spec(memory_bytes=1e6), TypeError, "memory_bytes"),
    ("spec-server-neg", lambda: _spec(server_flops=-1.0), ValueError, "server_flops"),
    ("sample_system-spec", lambda: sample_system({"num_devices": 2}, RNG), TypeError, "spec"),
    ("latency-cut-0", lambda: device_terms(_profile(), [1, 1], [0, 1], _devices()), ValueError, "cuts"),
    ("latency-cut-float", lambda: device_terms(_profile(), [1, 1], [1.5, 1], _devices()), ValueError, "cuts"),
    ("latency-b-nan", lambda: device_terms(_profile(), [NAN, 1], [1, 1], _devices()), ValueError, "b"),
    ("latency-devices", lambda: device_terms(_profile(), [1, 1], [1, 1], "devices"), TypeError, "devices"),
    ("memory-cut-0", lambda: memory_bits(_profile(), [1, 1], [0, 1]), ValueError, "cuts"),
    ("round_latency-servers", lambda: hasfl.round_latency(_profile(), [1, 1], [1, 1], _devices(), None), TypeError,
     "servers"),
    # ---- hist
    ("config-num_cells-bool", lambda: HistConfig(num_cells=True), TypeError, "num_cells"),
    ("config-H-float", lambda: HistConfig(H=2.5), TypeError, "H"),
    ("config-E-not-multiple", lambda: HistConfig(H=40, E=100), ValueError, "E"),
    ("config-global_rounds-0", lambda: HistConfig(global_rounds=0), ValueError, "global_rounds"),
    ("config-lr-nan", lambda: HistConfig(lr=NAN), ValueError, "lr"),
    ("config-lr-inf", lambda: HistConfig(lr=INF), ValueError, "lr"),
    ("config-lr-str", lambda: HistConfig(lr="0.01"), TypeError, "lr"),
    ("config-batch-float", lambda: HistConfig(batch_size=32.0), TypeError, "batch_size"),
    ("config-seed-neg", lambda: HistConfig(seed=-3), ValueError, "seed"),
    ("config-method", lambda: HistConfig(method="fedavg"), ValueError, "method"),
    ("config-setting-int", lambda: HistConfig(setting=1), TypeError, "setting"),
    ("config-num_cells-divides", lambda: HistConfig(num_cells=7, num_clients=63), ValueError, "num_cells"),
    ("budget-nan", lambda: rounds_for_budget("hist", 3, 40, 200, NAN), ValueError, "comm_budget_L0"),
    ("budget-H-float", lambda: rounds_for_budget("hist", 3, 2.5, 200, 30.0), TypeError, "H"),
    ("comm-num_cells-0", lambda: comm_per_round("hist", 0, 60, 40, 200), ValueError, "num_cells"),
    ("draw_groups-cells", lambda: sampling.draw_groups("hist", 300, 0, RNG), ValueError, "num_cells"),
    ("draw_groups-method", lambda: sampling.draw_groups("fedavg", 300, 3, RNG), ValueError, "method"),
    ("masks-groups", lambda: sampling.masks_from_groups(np.array([[0, 400]]), 300), ValueError, "groups"),
    ("batch-indices-bs", lambda: sampling.sample_batch_indices(torch.zeros(2, 3, dtype=torch.long),
                                                               torch.ones(2, dtype=torch.long), 0,
                                                               torch.Generator()), ValueError, "batch_size"),
    ("pad_partition-empty", lambda: sampling.pad_partition([], torch.device("cpu")), ValueError, "parts"),
    ("prepare-cfg", lambda: hist.prepare({"num_cells": 3}), TypeError, "cfg"),
    ("iterate-p", lambda: next(hist.iterate_hist("prepared")), TypeError, "p"),
    ("n_tilde-float", lambda: hist_theory.n_tilde([2.5, 3]), TypeError, "clients_per_cell"),
    ("n_tilde-zero", lambda: hist_theory.n_tilde([3, 0]), ValueError, "clients_per_cell"),
    ("step-size-L-nan", lambda: hist_theory.step_size_terms(NAN, CPC, 2, 4), ValueError, "L"),
    ("step-size-H-float", lambda: hist_theory.step_size_terms(2.0, CPC, 2.5, 4), TypeError, "H"),
    ("theorem1-sigma2-inf", lambda: hist_theory.theorem1_bound(0.1, 2.0, INF, 1, 1, 1, CPC, 4, 100, 1), ValueError,
     "sigma2"),
    ("theorem1-T-float", lambda: hist_theory.theorem1_bound(0.1, 2.0, 1, 1, 1, 1, CPC, 4, 100.5, 1), TypeError,
     "T"),
    ("theorem1-form", lambda: hist_theory.theorem1_bound(0.1, 2.0, 1, 1, 1, 1, CPC, 4, 100, 1, form="x"), ValueError,
     "form"),
    ("corollary-T-0", lambda: hist_theory.corollary1_step_size(0, CPC), ValueError, "T"),
    ("max-E-order-T", lambda: hist_theory.max_E_order(CPC, -5), ValueError, "T"),
    ("dissimilarities-cells", lambda: hist_estimate.dissimilarities(torch.zeros(4, 3), 0), ValueError, "num_cells"),
    ("variance-draws", lambda: hist_estimate.gradient_variance(None, X, Y, [np.arange(4)], 2, 0, RNG), ValueError,
     "num_draws"),
    ("bound_sweeps-gamma", lambda: hist_estimate.bound_sweeps(**{**BOUND_ARGS, "gamma": NAN}), ValueError, "gamma"),
    ("bound_sweeps-cells", lambda: hist_estimate.bound_sweeps(**{**BOUND_ARGS, "num_cells": [3]}), ValueError,
     "num_cells"),
    ("bound_sweeps-T_grid", lambda: hist_estimate.bound_sweeps(**{**BOUND_ARGS, "T_grid": []}), ValueError,
     "T_grid"),
    ("hist-pilot-setting", lambda: hist_estimate.pilot_constants("iid", [2], 2, 4, 1, 8, 0.01, 4, 0, 1, 1, 1),
     ValueError, "setting"),
    ("hist-pilot-rounds", lambda: hist_estimate.pilot_constants("noniid", [2], 2, 4, 1.5, 8, 0.01, 4, 0, 1, 1, 1),
     TypeError, "pilot_rounds"),
    # ---- hasfl
    ("consts-beta-nan", lambda: HasflConstants(NAN, [1.0], [1.0], 1.0), ValueError, "beta"),
    ("consts-vartheta-neg", lambda: HasflConstants(1.0, [1.0], [1.0], -1.0), ValueError, "vartheta"),
    ("consts-sigma2-inf", lambda: HasflConstants(1.0, [INF], [1.0], 1.0), ValueError, "sigma2"),
    ("consts-G2-neg", lambda: HasflConstants(1.0, [1.0], [-1.0], 1.0), ValueError, "G2"),
    ("consts-beta-str", lambda: HasflConstants("2", [1.0], [1.0], 1.0), TypeError, "beta"),
    ("consts-from_dict", lambda: HasflConstants.from_dict({"beta": 1.0}), ValueError, "sigma2"),
    ("floor-interval-float", lambda: bound_floor(CONSTS, 0.1, [2, 4], 1, 2.5), TypeError, "interval"),
    ("floor-interval-neg", lambda: bound_floor(CONSTS, 0.1, [2, 4], 1, -3), ValueError, "interval"),
    ("floor-cut-0", lambda: bound_floor(CONSTS, 0.1, [2, 4], 0, 3), ValueError, "cut_max"),
    ("floor-b-nan", lambda: bound_floor(CONSTS, 0.1, [NAN, 4], 1, 3), ValueError, "b"),
    ("floor-gamma-nan", lambda: bound_floor(CONSTS, NAN, [2, 4], 1, 3), ValueError, "gamma"),
    ("theorem1-rounds-float", lambda: theorem1_bound(CONSTS, 0.1, [2, 4], [1, 2], 3, 10.5), TypeError, "rounds"),
    ("theorem1-cuts-3", lambda: theorem1_bound(CONSTS, 0.1, [2, 4], [1, 3], 3, 10), ValueError, "cuts"),
    ("rounds_needed-eps-nan", lambda: rounds_needed(CONSTS, 0.1, [2, 4], [1, 2], 3, NAN), ValueError, "eps"),
    ("rounds_needed-interval", lambda: rounds_needed(CONSTS, 0.1, [2, 4], [1, 2], 2.5, 5.0), TypeError,
     "interval"),
    ("total_latency-interval", lambda: total_latency(10, 2.5, 1.0, 1.0), TypeError, "interval"),
    ("total_latency-rounds", lambda: total_latency(-1, 2, 1.0, 1.0), ValueError, "rounds"),
    ("total_latency-nan", lambda: total_latency(10, 2, NAN, 1.0), ValueError, "t_split"),
    ("estimate_at-batches", lambda: hasfl_estimate.estimate_at(_tiny_model(), X, Y, 2, 1, 2, RNG), ValueError,
     "num_batches"),
    ("estimate_at-too-many", lambda: hasfl_estimate.estimate_at(_tiny_model(), X, Y, 4, 4, 2, RNG), ValueError,
     "batch_size"),
    ("hasfl-pilot-lr", lambda: hasfl_estimate.pilot_constants(_tiny_model(), X, Y, 1, NAN, 2, 2, 2, 0), ValueError,
     "lr"),
    ("hasfl-pilot-steps", lambda: hasfl_estimate.pilot_constants(_tiny_model(), X, Y, -1, 0.1, 2, 2, 2, 0),
     ValueError, "pilot_steps"),
    # ---- leftovers of issue #7: Problem, eps_with_slack, model shapes, comm_to_target
    ("problem-interval-float", lambda: _problem(interval=2.5), TypeError, "interval"),
    ("problem-eps-nan", lambda: _problem(eps=NAN), ValueError, "eps"),
    ("problem-max-batch-float", lambda: _problem(max_batch=2.5), TypeError, "max_batch"),
    ("problem-cut-float", lambda: _problem(allowed_cuts=(1.5,)), TypeError, "allowed_cuts"),
    ("problem-cut-range", lambda: _problem(allowed_cuts=(3,)), ValueError, "allowed_cuts"),
    ("eps-slack-nan", lambda: hasfl.eps_with_slack(CONSTS, 0.1, 2, 2, NAN), ValueError, "slack"),
    ("vgg16-in-channels-bool", lambda: vgg16(in_channels=True), TypeError, "in_channels"),
    ("vgg16-image-size-float", lambda: vgg16(image_size=32.0), TypeError, "image_size"),
    ("resnet18-classes-one", lambda: resnet18(num_classes=1), ValueError, "num_classes"),
    ("comm-to-target-nan", lambda: hist.experiments.comm_to_target({"test_acc": [0.5], "comm_client_L0": [1.0]},
                                                                  NAN), ValueError, "target_acc"),
    ("comm-to-target-range", lambda: hist.experiments.comm_to_target({"test_acc": [0.5], "comm_client_L0": [1.0]},
                                                                    75), ValueError, "target_acc"),
    # ---- plotting
    ("metrics-nan", lambda: write_metrics("m", {"runs": [{"acc": NAN}]}), ValueError, "acc"),
    ("metrics-inf-array", lambda: write_metrics("m", {"curve": np.array([1.0, INF])}), ValueError, "curve"),
    ("metrics-empty-runs", lambda: write_metrics("m", {"runs": []}, require_runs=True), ValueError, "runs"),
    ("metrics-payload", lambda: write_metrics("m", [1, 2]), TypeError, "payload"),
]


@pytest.mark.parametrize("call, error, name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_the_parameter(call, error, name):
    with pytest.raises(error, match=rf"\b{name}\b") as err:
        call()
    if error is TypeError:
        assert isinstance(err.value, ParameterTypeError), "type errors are fedlib's, not a bare TypeError"


def test_enough_bad_inputs_across_packages():
    assert len(CASES) >= 60


def test_type_errors_stay_value_errors_for_old_callers():
    with pytest.raises(ValueError, match="seed"):
        seeding.numpy_rng(2.5, "data")


def test_valid_inputs_still_pass():
    assert seeding.numpy_rng(np.int64(3), "system/rbs") is not None
    assert check_float("x", 2) == 2.0 and check_int("k", np.int32(4), 1) == 4
    assert bound_floor(CONSTS, 0.1, np.full(2, np.inf), 2, 1) == pytest.approx(0.0)   # b = inf: no variance term
    assert HistConfig(num_cells=np.int64(3), lr=1).num_cells == 3
    assert math.isfinite(hist_theory.n_tilde(np.array([2, 4, 4])))


# ---- the notebook validator -----------------------------------------------------------------------------------

PARAMS_CELL = ('profile: str = "quick"  # run profile\n'
               'num_cells: list = [2, 3]  # N values\n'
               'factors: list = [0.5, 1.0]  # multipliers\n'
               'lr: float = 0.01  # step size\n'
               'H: int = 40  # interval\n'
               'force: bool = False  # recompute\n')


def _namespace(injected: str = "", **values) -> dict:
    ns: dict = {}
    exec(PARAMS_CELL, ns)                        # fills __annotations__ as IPython does for a cell
    history = ["", PARAMS_CELL]
    if injected:
        exec(injected, ns)
        history.append(injected)
    ns.update(values)
    ns["In"] = history + ["from fedlib.core import validate_parameters\nvalidate_parameters(globals())"]
    return ns


def test_validator_accepts_the_defaults_and_ints_for_floats():
    ns = _namespace("# Parameters\nlr = 1\nfactors = [1, 2.5]\n")
    assert validate_parameters(ns) == {"profile": "quick", "num_cells": [2, 3], "factors": [1, 2.5], "lr": 1,
                                       "H": 40, "force": False}


def test_validator_parses_a_list_given_as_a_string():
    ns = _namespace('# Parameters\nnum_cells = "[4, 5]"\n')   # what `papermill -p num_cells "[4, 5]"` injects
    validate_parameters(ns)
    assert ns["num_cells"] == [4, 5]


@pytest.mark.parametrize("injected, name, error", [
    ('# Parameters\nnum_cells = "4"\n', "num_cells", TypeError),          # YAML scalar, not a list
    ('# Parameters\nnum_cells = "[4, 5"\n', "num_cells", TypeError),      # not YAML
    ("# Parameters\nnum_cells = 4\n", "num_cells", TypeError),
    ("# Parameters\nnum_cells = []\n", "num_cells", ValueError),          # an empty sweep
    ('# Parameters\nnum_cells = [2, "x"]\n', r"num_cells\[1\]", TypeError),   # items typed by the default
    ("# Parameters\nH = 2.5\n", "H", TypeError),
    ("# Parameters\nH = True\n", "H", TypeError),
    ('# Parameters\nlr = "0.1"\n', "lr", TypeError),
    ('# Parameters\nlr = float("nan")\n', "lr", ValueError),
    ("# Parameters\nforce = 1\n", "force", TypeError),
    ("# Parameters\nprofile = None\n", "profile", TypeError),
    ("# Parameters\nnum_cels = [2]\n", "num_cels", ValueError),           # unknown parameter
])
def test_validator_refuses_naming_the_parameter(injected, name, error):
    with pytest.raises(error, match=name) as err:
        validate_parameters(_namespace(injected))
    if "num_cels" in injected:
        assert "num_cells" in str(err.value), "the message lists the declared parameters"


def test_unknown_papermill_parameter_fails_a_real_notebook(tmp_path, monkeypatch):
    import nbformat
    import papermill as pm

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('H: int = 40  # interval\nseeds: list = [0]  # seeds')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("from fedlib.core import validate_parameters\n\n"
                                                  "validate_parameters(globals())\nassert seeds == [1, 2]")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "t.ipynb")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    with pytest.raises(pm.PapermillExecutionError, match="num_cels"):
        pm.execute_notebook(str(tmp_path / "t.ipynb"), str(tmp_path / "out.ipynb"), kernel_name="python3",
                            parameters={"seeds": "[1, 2]", "num_cels": 3}, progress_bar=False, cwd=str(tmp_path))
