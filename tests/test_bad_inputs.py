"""Bad input at the public entry points: each call raises the documented error type, and the message names the
parameter (issue #7, item 4). Plus the notebook parameter validator (fedlib.lab.validate_parameters)."""
import functools
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from fedlib import dtfl, hasfl, hist, split
from fedlib.lab.hasfl.runs.train_plan import TrainPlan
from fedlib.core import ParameterTypeError, check_choice, check_float, check_int, check_list
from fedlib.lab.store import ResultStore, config_key
from fedlib.core import estimators, seeding
from fedlib.lab.parallel import map_jobs
from fedlib.lab.params import validate_parameters
from fedlib.data import TensorDataset
from fedlib.data import datasets, partition
from fedlib.lab.dtfl import compare as dtfl_compare
from tests.hasfl_instances import random_instance
from fedlib.hasfl import HasflConstants, bound_floor, rounds_needed, theorem1_bound, total_latency
from fedlib.hasfl.bound import calibrate as hasfl_calibrate
from fedlib.hasfl.bound import estimate as hasfl_estimate
from fedlib.hist import HistConfig, comm_per_round, rounds_for_budget
from fedlib.hist import estimate as hist_estimate
from fedlib.hist import sampling
from fedlib.hist import theory as hist_theory
from fedlib.lab.plotting import write_metrics
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
SCRATCH = Path(tempfile.gettempdir()) / "fedlib-bad-inputs"
# issue #19 sweep fixtures: tiny, built lazily where they cost more than a few milliseconds
DATA = TensorDataset("fashion-mnist", torch.zeros(64, 1, 28, 28), torch.arange(64) % 10, torch.zeros(20, 1, 28, 28),
                     torch.arange(20) % 10, tuple("0123456789"), "test")
REC = {"test_acc": [0.1, 0.5], "round": [0, 1], "sim_s": [0.0, 1.0]}
FIG = dict(settings=["noniid"], num_cells=[2], H=1, E=1, comm_budget_L0=1.0, fig4_num_cells=2, fig4_E_over_H=[1],
           fig4_H=[1], fig4_global_rounds=1, num_clients=4, seeds=[0], target_acc=0.5, lr=0.01, batch_size=32,
           dataset="fashion-mnist")
DTFL_CFG = dtfl.DtflConfig(num_clients=2, batch_size=32, width=0.25)


def _fig(**over):
    """The parameters of HIST's Figs. 2-4 runs, checked where they enter (``hist_2_figures``' checks)."""
    from fedlib.lab.hist.checks import check_hist_2_figures
    return check_hist_2_figures({**FIG, **over})


def _split_cfg(**over):
    kw = dict(model="vgg16", width=0.0625, num_devices=2, batch_sizes=(2, 2), cuts=(1, 1))
    return split.SplitConfig(**{**kw, **over})


def _split_model():
    return split.build_model(_split_cfg(), 1, 28, 10)


@functools.lru_cache(maxsize=1)
def _state():
    return split.init_state(_split_cfg(), _split_model(), (1, 28, 28))


def _T():
    return hasfl.aux_variables(_problem(), [1, 1], [1, 1])


def _resnet20():
    return split.resnet20(1, 28, 10, width=0.25)


def _costs():
    return dtfl.MethodCosts("fedavg", 1.0, 1.0, 1.0, 1.0, 1.0, False)


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
    # ---- plotting
    ("metrics-nan", lambda: write_metrics("m", {"runs": [{"acc": NAN}]}), ValueError, "acc"),
    ("metrics-inf-array", lambda: write_metrics("m", {"curve": np.array([1.0, INF])}), ValueError, "curve"),
    ("metrics-empty-runs", lambda: write_metrics("m", {"runs": []}, require_runs=True), ValueError, "runs"),
    ("metrics-payload", lambda: write_metrics("m", [1, 2]), TypeError, "payload"),
    # ---- issue #19 sweep: every public entry point probed for unknown names, empty lists, wrong containers,
    # ---- out-of-range items, bools for ints and NaN / inf (each case was silent or confusing before)
    # core
    ("map_jobs-empty", lambda: map_jobs(dict, []), ValueError, "jobs"),
    ("map_jobs-str", lambda: map_jobs(dict, "ab"), TypeError, "jobs"),
    ("map_jobs-dict", lambda: map_jobs(dict, {"a": 1}), TypeError, "jobs"),
    ("map_jobs-items", lambda: map_jobs(dict, [1, 2]), TypeError, "jobs"),
    ("map_jobs-fn", lambda: map_jobs(None, [{"a": 1}]), TypeError, "fn"),
    ("store-code-str", lambda: ResultStore(SCRATCH, code="fedlib.core"), TypeError, "code"),
    ("store-root-int", lambda: ResultStore(5), TypeError, "root"),
    ("config_key-str", lambda: config_key("x"), TypeError, "config"),
    ("check_list-set", lambda: check_list("xs", {1, 2}), TypeError, "xs"),
    ("check_list-distinct", lambda: check_list("xs", [1, 1], distinct=True), ValueError, "xs"),
    # data
    ("label_counts-parts-empty", lambda: partition.label_counts(LABELS, []), ValueError, "parts"),
    ("split-labels-empty", lambda: partition.split([], 2, "iid", RNG), ValueError, "labels"),
    # split: SplitConfig
    ("splitcfg-width-bool", lambda: _split_cfg(width=True), TypeError, "width"),
    ("splitcfg-devices-bool", lambda: _split_cfg(num_devices=True, batch_sizes=(2,), cuts=(1,)), TypeError,
     "num_devices"),
    ("splitcfg-batch-fraction", lambda: _split_cfg(batch_sizes=(2.5, 2.5)), TypeError, "batch_sizes"),
    ("splitcfg-batch-bool", lambda: _split_cfg(batch_sizes=(True, True)), TypeError, "batch_sizes"),
    ("splitcfg-batch-str", lambda: _split_cfg(batch_sizes="22"), TypeError, "batch_sizes"),
    ("splitcfg-batch-nan", lambda: _split_cfg(batch_sizes=(NAN, 2)), TypeError, "batch_sizes"),
    ("splitcfg-batch-int", lambda: _split_cfg(batch_sizes=5), TypeError, "batch_sizes"),
    ("splitcfg-cuts-fraction", lambda: _split_cfg(cuts=(1.5, 1)), TypeError, "cuts"),
    ("splitcfg-cuts-set", lambda: _split_cfg(cuts={1, 2}), TypeError, "cuts"),
    ("splitcfg-lr-bool", lambda: _split_cfg(lr=True), TypeError, "lr"),
    ("splitcfg-dataset", lambda: _split_cfg(dataset="mnist"), ValueError, "dataset"),
    ("splitcfg-seed-neg", lambda: _split_cfg(seed=-1), ValueError, "seed"),
    ("splitcfg-seed-bool", lambda: _split_cfg(seed=True), TypeError, "seed"),
    ("splitcfg-alpha-nan", lambda: _split_cfg(alpha=NAN), ValueError, "alpha"),
    ("splitcfg-momentum-nan", lambda: _split_cfg(momentum=NAN), ValueError, "momentum"),
    ("splitcfg-momentum-neg", lambda: _split_cfg(momentum=-1.0), ValueError, "momentum"),
    ("splitcfg-weight_decay-nan", lambda: _split_cfg(weight_decay=NAN), ValueError, "weight_decay"),
    ("splitcfg-betas-nan", lambda: _split_cfg(betas=(NAN, 0.9)), ValueError, "betas"),
    ("splitcfg-betas-one", lambda: _split_cfg(betas=(0.9,)), ValueError, "betas"),
    ("splitcfg-eps-nan", lambda: _split_cfg(eps=NAN), ValueError, "eps"),
    ("splitcfg-local_loss-str", lambda: _split_cfg(local_loss="yes"), TypeError, "local_loss"),
    ("splitcfg-shards-0", lambda: _split_cfg(shards_per_client=0), ValueError, "shards_per_client"),
    ("splitcfg-interval-bool", lambda: _split_cfg(interval=True), TypeError, "interval"),
    # split: models, profiles, latency, records, engine
    ("build_model-cfg", lambda: split.build_model("x", 1, 28, 10), TypeError, "cfg"),
    ("vgg16-fc_width-0", lambda: vgg16(fc_width=0), ValueError, "fc_width"),
    ("profile_model-shape-empty", lambda: split.profile_model(nn.Sequential(nn.Flatten()), ()), ValueError,
     "input_shape"),
    ("profile_model-batch-0", lambda: split.profile_model(nn.Sequential(nn.Flatten()), (1, 2, 2), batch=0),
     ValueError, "batch"),
    ("profile_model-model", lambda: split.profile_model(nn.Linear(2, 2), (1, 2, 2)), TypeError, "model"),
    ("model_profile-name", lambda: split.model_profile("vgg19"), ValueError, "name"),
    ("check_decision-n-other", lambda: split.check_decision(_profile(), [1, 1], [1, 1], 3), ValueError, "N = 3"),
    ("table_i-devices-0", lambda: hasfl.table_i(0), ValueError, "num_devices"),     # refused by SystemSpec, once
    ("memory-b-empty", lambda: memory_bits(_profile(), [], []), ValueError, "b"),
    ("server_compute-cuts-empty", lambda: split.server_compute(_profile(), [], [], SERVERS), ValueError, "cuts"),
    ("converged-accs-empty", lambda: split.converged_at([]), ValueError, "accs"),
    ("converged-accs-nan", lambda: split.converged_at([NAN] * 8), ValueError, "accs"),
    ("converged-accs-str", lambda: split.converged_at("abcdefgh"), TypeError, "accs"),
    ("converged-window-float", lambda: split.converged_at([0.1] * 8, window=2.5), TypeError, "window"),
    ("converged-window-bool", lambda: split.converged_at([0.1] * 8, window=True), TypeError, "window"),
    ("converged-min_gain-nan", lambda: split.converged_at([0.1] * 8, min_gain=NAN), ValueError, "min_gain"),
    ("converged-start-float", lambda: split.converged_at([0.1] * 8, start=1.5), TypeError, "start"),
    ("split-ttt-target-nan", lambda: split.time_to_target(REC, NAN), ValueError, "target"),
    ("split-ttt-target-percent", lambda: split.time_to_target(REC, 75), ValueError, "target"),
    ("split-ttt-key", lambda: split.time_to_target(REC, 0.5, key="foo"), ValueError, "key"),
    ("split-ttt-record", lambda: split.time_to_target({}, 0.5), ValueError, "record"),
    ("draw_batches-b-0", lambda: split.draw_batches([torch.arange(3)] * 2, [0, 2], torch.Generator()), ValueError,
     "b"),
    ("draw_batches-b-fraction", lambda: split.draw_batches([torch.arange(3)] * 2, [2.7, 2], torch.Generator()),
     TypeError, "b"),
    ("draw_batches-parts-empty", lambda: split.draw_batches([], [2], torch.Generator()), ValueError, "parts"),
    ("draw_batches-generator", lambda: split.draw_batches([torch.arange(3)], [2], 0), TypeError, "generator"),
    ("split-evaluate-batch-0", lambda: split.evaluate(nn.Flatten(), X, Y, batch=0), ValueError, "batch"),
    ("split-client_partition-cfg", lambda: split.client_partition("x", LABELS), TypeError, "cfg"),
    ("init_state-cfg", lambda: split.init_state("x", nn.Sequential(), (1, 28, 28)), TypeError, "cfg"),
    ("init_state-shape-empty", lambda: split.init_state(_split_cfg(), _split_model(), ()), ValueError,
     "input_shape"),
    ("init_state-device", lambda: split.init_state(_split_cfg(), _split_model(), (1, 28, 28), "gpu"), ValueError,
     "device"),
    ("set_decision-b-0", lambda: split.set_decision(_state(), [0, 2], [1, 1]), ValueError, "b"),
    ("set_decision-seed-neg", lambda: split.set_decision(_state(), [2, 2], [1, 2], seed=-1), ValueError, "seed"),
    ("aggregate-weights-str", lambda: split.aggregate(_state(), "ab"), TypeError, "weights"),
    ("train_round-xs-empty", lambda: split.train_round(_state(), [], []), ValueError, "xs"),
    ("train_round-st", lambda: split.train_round("x", [], []), TypeError, "st"),
    ("run_split-clock", lambda: split.run_split(_split_cfg(rounds=1), DATA, "cpu", clock=5), TypeError, "clock"),
    ("run_split-schedule", lambda: split.run_split(_split_cfg(rounds=1), DATA, "cpu", schedule=5), TypeError,
     "schedule"),
    ("run_split-dataset", lambda: split.run_split(_split_cfg(rounds=1), "x", "cpu"), TypeError, "dataset"),
    # hist
    ("histcfg-dataset", lambda: HistConfig(dataset="mnist"), ValueError, "dataset"),
    ("figs-settings-empty", lambda: _fig(settings=[]), ValueError, "settings"),
    ("figs-settings-str", lambda: _fig(settings="noniid"), TypeError, "settings"),
    ("figs-settings-unknown", lambda: _fig(settings=["iid"]), ValueError, "settings"),
    ("figs-settings-repeat", lambda: _fig(settings=["noniid", "noniid"]), ValueError, "settings"),
    ("figs-num_cells-empty", lambda: _fig(num_cells=[]), ValueError, "num_cells"),
    ("figs-num_cells-int", lambda: _fig(num_cells=2), TypeError, "num_cells"),
    ("figs-E_over_H-empty", lambda: _fig(fig4_E_over_H=[]), ValueError, "fig4_E_over_H"),
    ("figs-E_over_H-0", lambda: _fig(fig4_E_over_H=[0]), ValueError, "fig4_E_over_H"),
    ("figs-H-empty", lambda: _fig(fig4_H=[]), ValueError, "fig4_H"),
    ("figs-H-bool", lambda: _fig(fig4_H=[True]), TypeError, "fig4_H"),
    ("figs-seeds-str", lambda: _fig(seeds="0,1"), TypeError, "seeds"),
    ("figs-seeds-neg", lambda: _fig(seeds=[-1]), ValueError, "seeds"),
    ("figs-seeds-bool", lambda: _fig(seeds=[True]), TypeError, "seeds"),
    ("figs-seeds-float", lambda: _fig(seeds=[0.5]), TypeError, "seeds"),
    ("figs-global_rounds-0", lambda: _fig(fig4_global_rounds=0), ValueError, "fig4_global_rounds"),
    ("figs-fig4_num_cells-0", lambda: _fig(fig4_num_cells=0), ValueError, "fig4_num_cells"),
    ("step_flops-batch-0", lambda: hist.step_flops(0, 784, 300, 10), ValueError, "batch_size"),
    ("step_flops-hidden-float", lambda: hist.step_flops(1, 784, 2.5, 10), TypeError, "hidden"),
    ("bound_sweeps-L-nan", lambda: hist_estimate.bound_sweeps(**{**BOUND_ARGS, "constants": {**HIST_CONSTS,
                                                                                              "L": NAN}}),
     ValueError, "constants"),
    # hasfl: Problem and the optimiser
    ("problem-profile", lambda: _problem(profile="x"), TypeError, "profile"),
    ("problem-devices", lambda: _problem(devices="x"), TypeError, "devices"),
    ("problem-servers", lambda: _problem(servers="x"), TypeError, "servers"),
    ("problem-constants", lambda: _problem(constants={}), TypeError, "constants"),
    ("problem-cuts-int", lambda: _problem(allowed_cuts=5), TypeError, "allowed_cuts"),
    ("theta-problem", lambda: hasfl.theta("x", [1, 1], [1, 1]), TypeError, "problem"),
    ("feasible_cuts-b-length", lambda: hasfl.feasible_cuts(_problem(), [1, 1, 1]), ValueError, "b"),
    ("eps-slack-devices-0", lambda: hasfl.eps_with_slack(CONSTS, 0.1, 2, 0, 0.5), ValueError, "num_devices"),
    ("eps-slack-devices-float", lambda: hasfl.eps_with_slack(CONSTS, 0.1, 2, 2.5, 0.5), TypeError, "num_devices"),
    ("p1_coefficients-T", lambda: hasfl.p1_coefficients(_problem(), [1, 1], {}), ValueError, "T"),
    ("p1_coefficients-cuts-0", lambda: hasfl.p1_coefficients(_problem(), [0, 1], _T()), ValueError, "cuts"),
    ("newton_jacobi-A-nan", lambda: hasfl.newton_jacobi(NAN, 1.0, [1.0, 1.0], 1.0), ValueError, "A"),
    ("newton_jacobi-C-empty", lambda: hasfl.newton_jacobi(1.0, 1.0, [], 1.0), ValueError, "C"),
    ("newton_jacobi-tol-nan", lambda: hasfl.newton_jacobi(1.0, 1.0, [1.0, 1.0], 1.0, tol=NAN), ValueError, "tol"),
    ("newton_jacobi-max_iter-0", lambda: hasfl.newton_jacobi(1.0, 1.0, [1.0, 1.0], 1.0, max_iter=0), ValueError,
     "max_iter"),
    ("p1_closed_form-A-nan", lambda: hasfl.p1_closed_form(NAN, 1.0, [1.0, 1.0], 1.0), ValueError, "A"),
    ("p1_closed_form-C-empty", lambda: hasfl.p1_closed_form(1.0, 1.0, [], 1.0), ValueError, "C"),
    ("kappa-cuts-range", lambda: hasfl.kappa(_problem(), [3, 1], _T()), ValueError, "cuts"),
    ("solve_p1-cuts-0", lambda: hasfl.solve_p1(_problem(), [0, 1], _T()), ValueError, "cuts"),
    ("solve_p1-budget-str", lambda: hasfl.solve_p1(_problem(), [1, 1], _T(), budget_search="no"), TypeError,
     "budget_search"),
    ("solve_p2-tol-nan", lambda: hasfl.solve_p2(_problem(), [1, 1], tol=NAN), ValueError, "tol"),
    ("solve_p2-max_iter-0", lambda: hasfl.solve_p2(_problem(), [1, 1], max_iter=0), ValueError, "max_iter"),
    ("solve_p2-b-fraction", lambda: hasfl.solve_p2(_problem(), [1.5, 1]), TypeError, "b"),
    ("initial_cuts-problem", lambda: hasfl.initial_cuts("x", [1, 1]), TypeError, "problem"),
    ("polish-max_moves-float", lambda: hasfl.polish(_problem(), [1, 1], [1, 1], max_moves=2.5), TypeError,
     "max_moves"),
    ("polish-max_moves-neg", lambda: hasfl.polish(_problem(), [1, 1], [1, 1], max_moves=-1), ValueError,
     "max_moves"),
    ("polish-cuts-0", lambda: hasfl.polish(_problem(), [1, 1], [0, 1]), ValueError, "cuts"),
    ("bcd-starts-empty", lambda: hasfl.bcd(_problem(), starts=()), ValueError, "starts"),
    ("bcd-starts-nan", lambda: hasfl.bcd(_problem(), starts=(NAN,)), ValueError, "starts"),
    ("bcd-starts-neg", lambda: hasfl.bcd(_problem(), starts=(-1.0,)), ValueError, "starts"),
    ("bcd-starts-str", lambda: hasfl.bcd(_problem(), starts="4"), TypeError, "starts"),
    ("bcd-starts-float", lambda: hasfl.bcd(_problem(), starts=4.0), TypeError, "starts"),
    ("bcd-tol-nan", lambda: hasfl.bcd(_problem(), tol=NAN), ValueError, "tol"),
    ("bcd-tol-neg", lambda: hasfl.bcd(_problem(), tol=-1.0), ValueError, "tol"),
    ("bcd-max_iter-0", lambda: hasfl.bcd(_problem(), max_iter=0), ValueError, "max_iter"),
    ("bcd-max_iter-float", lambda: hasfl.bcd(_problem(), max_iter=2.5), TypeError, "max_iter"),
    ("bcd-polish-str", lambda: hasfl.bcd(_problem(), polish_result="no"), TypeError, "polish_result"),
    ("bcd-group_moves-int", lambda: hasfl.bcd(_problem(), group_moves=1), TypeError, "group_moves"),
    ("bcd-problem", lambda: hasfl.bcd("x"), TypeError, "problem"),
    ("exhaustive-b_max-0", lambda: hasfl.exhaustive(_problem(), b_max=0), ValueError, "b_max"),
    ("exhaustive-b_max-float", lambda: hasfl.exhaustive(_problem(), b_max=2.5), TypeError, "b_max"),
    ("exhaustive-b_max-bool", lambda: hasfl.exhaustive(_problem(), b_max=True), TypeError, "b_max"),
    ("exhaustive-chunk-0", lambda: hasfl.exhaustive(_problem(), b_max=2, chunk=0), ValueError, "chunk"),
    ("strategy-name", lambda: hasfl.strategy(_problem(), "foo", RNG), ValueError, "name"),
    ("strategy-rng", lambda: hasfl.strategy(_problem(), "RBS+RMS", 0), TypeError, "rng"),
    ("batch_caps-cut-0", lambda: hasfl.batch_caps(_problem(), [0, 0]), ValueError, "cuts"),
    ("batch_caps-cut-range", lambda: hasfl.batch_caps(_problem(), [9, 1]), ValueError, "cuts"),
    ("batch_caps-cut-fraction", lambda: hasfl.batch_caps(_problem(), [1.5, 1]), TypeError, "cuts"),
    ("common_cut_floors-problem", lambda: hasfl.common_cut_floors("x"), TypeError, "problem"),
    ("start_batches-nan", lambda: hasfl.start_batches(_problem(), NAN), ValueError, "scale"),
    ("start_batches-neg", lambda: hasfl.start_batches(_problem(), -1.0), ValueError, "scale"),
    ("start_batches-str", lambda: hasfl.start_batches(_problem(), "4"), TypeError, "scale"),
    ("line_search-candidates-0", lambda: hasfl.line_search_batches(_problem(), [1, 1], [1, 1], max_candidates=0),
     ValueError, "max_candidates"),
    ("line_search-sweeps-float", lambda: hasfl.line_search_batches(_problem(), [1, 1], [1, 1], sweeps=2.5),
     TypeError, "sweeps"),
    ("uniform_cuts-line_search-str", lambda: hasfl.uniform_cut_candidates(_problem(), "no"), TypeError,
     "line_search"),
    ("uniform_cuts-floors-str", lambda: hasfl.uniform_cut_candidates(_problem(), False, "x"), TypeError, "floors"),
    ("random_instance-range-short", lambda: random_instance(0, num_devices=(2,)), ValueError, "num_devices"),
    ("random_instance-range-int", lambda: random_instance(0, num_devices=5), TypeError, "num_devices"),
    ("random_instance-range-float", lambda: random_instance(0, num_devices=(2.5, 4)), TypeError,
     "num_devices"),
    ("random_instance-range-bool", lambda: random_instance(0, num_devices=(True, 2)), TypeError,
     "num_devices"),
    ("random_instance-cuts-above-L", lambda: random_instance(0, num_cuts=(4, 100)), ValueError, "num_cuts"),
    ("random_instance-cuts-low-above-L", lambda: random_instance(0, num_cuts=(20, 30)), ValueError,
     "num_cuts"),
    # hasfl: training decisions, TrainPlan, run_plan, calibration
    ("plan-settings-str", lambda: TrainPlan(settings="iid"), TypeError, "settings"),
    ("plan-settings-unknown", lambda: TrainPlan(settings=("iid", "foo")), ValueError, "settings"),
    ("plan-settings-repeat", lambda: TrainPlan(settings=("iid", "iid")), ValueError, "settings"),
    ("plan-settings-set", lambda: TrainPlan(settings={"iid"}), TypeError, "settings"),
    ("plan-models-unknown", lambda: TrainPlan(models=("vgg19",), widths=(0.25,)), ValueError, "models"),
    ("plan-cut_grid-0", lambda: TrainPlan(cut_grid=(0,)), ValueError, "cut_grid"),
    ("plan-cut_grid-nan", lambda: TrainPlan(cut_grid=(NAN,)), TypeError, "cut_grid"),
    ("plan-cut_grid-above-L", lambda: TrainPlan(cut_grid=(99,)), ValueError, "cut_grid"),
    ("plan-cut_grid-bool", lambda: TrainPlan(cut_grid=(True,)), TypeError, "cut_grid"),
    ("plan-fixed_cut-0", lambda: TrainPlan(fixed_cut=0), ValueError, "fixed_cut"),
    ("plan-fixed_cut-above-L", lambda: TrainPlan(fixed_cut=99), ValueError, "fixed_cut"),
    ("plan-n_methods-unknown", lambda: TrainPlan(n_methods=("foo",)), ValueError, "n_methods"),
    ("fit_calibration-target-nan", lambda: hasfl_calibrate.fit_calibration(CONSTS, 0.1, 2, 2, 2, [1, 2], [10, 20], NAN),
     ValueError, "target_acc"),
    ("fitted_rounds-cut-0", lambda: hasfl_calibrate.fitted_rounds(CONSTS, 0.1, [2, 2], 0, 2, 1.0), ValueError, "cut"),
    # dtfl
    ("tier_costs-shape-empty", lambda: dtfl.tier_costs(_resnet20(), (), 2, 10), ValueError, "input_shape"),
    ("tier_costs-shape-str", lambda: dtfl.tier_costs(_resnet20(), "abc", 2, 10), TypeError, "input_shape"),
    ("method_times-samples-bool", lambda: dtfl.method_times(_costs(), [1.0], [1.0], [True]), TypeError,
     "samples"),
    ("dtflcfg-dataset", lambda: dtfl.DtflConfig(dataset="mnist"), ValueError, "dataset"),
    ("client_data-cfg", lambda: dtfl.client_data("x", LABELS), TypeError, "cfg"),
    ("client_data-labels-empty", lambda: dtfl.client_data(DTFL_CFG, []), ValueError, "labels"),
    ("run_dtfl-data", lambda: dtfl.run_dtfl(DTFL_CFG, None, [[1, 1]]), TypeError, "data"),
    ("run_dtfl-progress", lambda: dtfl.run_dtfl(DTFL_CFG, DATA, [[1, 1]], progress=5), TypeError, "progress"),
    ("run_dtfl-keep_model", lambda: dtfl.run_dtfl(DTFL_CFG, DATA, [[1, 1]], keep_model="no"), TypeError,
     "keep_model"),
    ("run_dtfl-client_loss", lambda: dtfl.run_dtfl(DTFL_CFG, DATA, [[1, 1]], client_loss=5), TypeError,
     "client_loss"),
    ("run_engine-cfg", lambda: dtfl.run_engine("x", DATA, [[1, 1]]), TypeError, "cfg"),
    ("yogi_update-cfg", lambda: dtfl.yogi_update({"a": torch.zeros(1)}, {"a": torch.zeros(1)}, {}, {}, "x"),
     TypeError, "cfg"),
    ("run_baseline-data", lambda: dtfl.run_baseline(DTFL_CFG, None, "fedavg", 1), TypeError, "data"),
    ("run_baseline-progress", lambda: dtfl.run_baseline(DTFL_CFG, DATA, "fedavg", 1, progress=5), TypeError,
     "progress"),
    ("method_costs-method", lambda: dtfl.MethodCosts("x", 1.0, 1.0, 1.0, 1.0, 1.0, False), ValueError, "method"),
    ("method_costs-flops-nan", lambda: dtfl.MethodCosts("fedavg", NAN, 1.0, 1.0, 1.0, 1.0, False), ValueError,
     "client_flops"),
    ("run_fedgkt-data", lambda: dtfl.run_fedgkt(DTFL_CFG, None, 1), TypeError, "data"),
    ("run_fedgkt-progress", lambda: dtfl.run_fedgkt(DTFL_CFG, DATA, 1, progress=5), TypeError, "progress"),
    ("parse_runs-empty", lambda: dtfl_compare.parse_runs([]), ValueError, "runs"),
    ("parse_runs-str", lambda: dtfl_compare.parse_runs("resnet20/iid"), TypeError, "runs"),
]


#: the exact number of CASES: 130 before the issue #19 sweep
N_CASES = 317


@pytest.mark.parametrize("call, error, name", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_names_the_parameter(call, error, name):
    with pytest.raises(error, match=rf"\b{name}\b") as err:
        call()
    if error is TypeError:
        assert isinstance(err.value, ParameterTypeError), "type errors are fedlib's, not a bare TypeError"


def test_every_bad_input_case_is_counted_and_named_once():
    """An exact count, so that a dropped case is noticed (update it when adding cases); ids are unique."""
    assert len(CASES) == N_CASES
    names = [c[0] for c in CASES]
    assert len(set(names)) == len(names), sorted({n for n in names if names.count(n) > 1})


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
    ns["In"] = history + ["from fedlib.lab import validate_parameters\nvalidate_parameters(globals())"]
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


def test_an_empty_list_is_accepted_only_where_the_default_is_empty():
    """``out_of_sample_seeds: list = []`` (none by default) takes [] and a list; a list whose default holds items
    still refuses [] (an empty sweep)."""
    cell = PARAMS_CELL + "extra_seeds: list = []  # none by default\n"
    for injected, expected in (("", []), ('# Parameters\nextra_seeds = "[1, 2]"\n', [1, 2])):
        ns: dict = {}
        exec(cell, ns)
        history = ["", cell] + ([injected] if injected else [])
        if injected:
            exec(injected, ns)
        ns["In"] = history + ["validate_parameters(globals())"]
        assert validate_parameters(ns)["extra_seeds"] == expected
    with pytest.raises(ValueError, match="num_cells must be a non-empty list"):
        validate_parameters(_namespace("# Parameters\nnum_cells = []\n"))
    # a cell that shows the committed profile's non-empty list and says "[]: none" in its comment takes [] too
    cell = PARAMS_CELL + "extra_seeds: list = [1, 2]  # []: none; else these seeds\n"
    ns = {}
    exec(cell, ns)
    exec("extra_seeds = []\n", ns)
    ns["In"] = ["", cell, "# Parameters\nextra_seeds = []\n", "validate_parameters(globals())"]
    assert validate_parameters(ns)["extra_seeds"] == []


def test_unknown_papermill_parameter_fails_a_real_notebook(tmp_path, monkeypatch):
    import nbformat
    import papermill as pm

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('H: int = 40  # interval\nseeds: list = [0]  # seeds')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("from fedlib.lab import validate_parameters\n\n"
                                                  "validate_parameters(globals())\nassert seeds == [1, 2]")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "t.ipynb")
    with pytest.raises(pm.PapermillExecutionError, match="num_cels"):
        pm.execute_notebook(str(tmp_path / "t.ipynb"), str(tmp_path / "out.ipynb"), kernel_name="python3",
                            parameters={"seeds": "[1, 2]", "num_cels": 3}, progress_bar=False, cwd=str(tmp_path))
