"""Parameters taken as a whole, per-client arrays and model inputs: each refused where it enters, with a message
naming the parameters, the expected length or shape and what came (no clamping, no zip that drops an entry)."""
import numpy as np
import pytest
import torch

from fedlib.core.validate import ParameterTypeError, check_mask, check_per_client
from fedlib.dtfl import TierScheduler, TimeModel, aux_head_factory, tier_costs
from fedlib.dtfl.local_loss import LoopLocalLoss
from fedlib.lab.dtfl import experiments as dx
from fedlib.split import MODELS, SplitConfig, init_state, model_profiles, train_round


def test_per_client_helpers_by_hand():
    assert check_per_client("mbps", [1, 2, 3], 3).tolist() == [1.0, 2.0, 3.0]
    assert check_per_client("mbps", 5, 3, allow_scalar=True).tolist() == [5.0, 5.0, 5.0]
    with pytest.raises(ValueError, match=r"mbps must hold one entry per client: K = 3 entries, got shape \(2,\)"):
        check_per_client("mbps", [1, 2], 3)
    with pytest.raises(ValueError, match="K = 3"):
        check_per_client("mbps", 5, 3)                       # a scalar only where allowed
    assert check_mask("mask", [True, False], 2).tolist() == [True, False]
    with pytest.raises(ParameterTypeError, match="mask must be K = 3 bools"):
        check_mask("mask", [0, 1, 2], 3)                     # an index list is not a mask
    with pytest.raises(ValueError, match=r"N = 2 bools .* got shape \(3,\)"):
        check_mask("mask", [True] * 3, 2, what="N")


def test_model_profiles_takes_models_and_classes_together():
    with pytest.raises(ValueError, match=r"models and classes must have one entry per model, got models 2 .* classes 1"):
        model_profiles(["vgg16", "resnet18"], [10])
    with pytest.raises(ValueError, match="each model once"):
        model_profiles(["vgg16", "vgg16"], [10, 100])
    with pytest.raises(ValueError, match="models"):
        model_profiles(["vgg61"], [10])
    profiles = model_profiles(["vgg16"], [10], widths=[0.25])
    assert list(profiles) == ["vgg16"] and profiles["vgg16"].num_layers == 16


def test_hist_smoothness_clients_above_the_clients_is_refused_before_any_work():
    from fedlib.hist.estimate import pilot_constants
    with pytest.raises(ValueError, match=r"smoothness_clients must be an integer in \[1, 60\] \(num_clients = 60\), got 61"):
        pilot_constants("noniid", [2, 3], 40, 200, 1, 60, 0.01, 32, 0, 8, 61, 15, dataset=None)


def test_dtfl_profile_parameters_name_the_unknown_model():
    from fedlib.lab.dtfl.checks import check_dtfl_1_profiles
    p = dict(models=["resnet20"], train_model="resnet20", width=0.5, dataset="fashion-mnist", table2_tiers=6, threads=1)
    with pytest.raises(ValueError, match="train_model must be one of .*resnet20.*got 'resnet21'"):
        check_dtfl_1_profiles(dict(p, train_model="resnet21"))
    with pytest.raises(ValueError, match="models"):
        check_dtfl_1_profiles(dict(p, models=["resnet20", "vgg16"]))
    with pytest.raises(ValueError, match="table2_tiers"):
        check_dtfl_1_profiles(dict(p, table2_tiers=8))
    check_dtfl_1_profiles(p)


@pytest.fixture(scope="module")
def tm():
    torch.manual_seed(0)
    return TimeModel(tier_costs(MODELS["resnet20"](1, 28, 10, width=0.25), (1, 28, 28), 3, 10))


def test_tier_costs_refuses_an_input_or_classes_the_model_does_not_take():
    net = MODELS["resnet20"](1, 28, 10, width=0.25)
    with pytest.raises(ValueError, match=r"input_shape \(3, 32, 32\) .* does not fit the model: .*channels"):
        tier_costs(net, (3, 32, 32), 3, 10)
    with pytest.raises(ValueError, match=r"num_classes = 100 does not match the model's output, \(10,\)"):
        tier_costs(net, (1, 28, 28), 3, 100)


def test_time_model_names_the_four_shapes(tm):
    with pytest.raises(ValueError, match=r"tiers, cpus, mbps and samples .* got shapes \(3,\), \(2,\), \(3,\) and \(3,\)"):
        tm.times([1, 2, 3], [1, 1], [10, 10, 10], [5, 5, 5])
    t = tm.times([1, 2], 1, [10, 20], 5)                         # one number for all clients broadcasts
    assert t["T"].shape == (2,)


def test_tier_scheduler_checks_per_client_arrays(tm):
    s = TierScheduler(tm, 3)
    with pytest.raises(ValueError, match=r"mbps must hold one entry per client: K = 3 entries .* got shape \(2,\)"):
        s.assign([1.0, 1.0], [5, 5, 5])
    with pytest.raises(ValueError, match=r"samples must hold one entry per client: K = 3"):
        s.estimate([1.0, 1.0, 1.0], [5, 5])
    with pytest.raises(ParameterTypeError, match="mask must be K = 3 bools"):
        s.assign(1.0, 5, [0, 1, 1])
    with pytest.raises(ValueError, match=r"tiers must hold one entry per client: K = 3 entries, got shape \(2,\)"):
        s.observe([1, 1], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"mask must be K = 3 bools \(one per client\), got shape \(2,\)"):
        s.observe([1, 1, 1], [1.0, 1.0, 1.0], [True, False])
    s.observe([1, 1, 1], [1.0, float("nan"), 1.0], np.array([True, False, True]))   # masked-out entries unread
    assert s.assign(10.0, 5).shape == (3,)


@pytest.fixture(scope="module")
def split_state():
    torch.manual_seed(0)
    model = MODELS["resnet20"](1, 28, 10, width=0.25)
    cfg = SplitConfig(num_devices=2, batch_sizes=(4, 4), cuts=(2, 2), mode="copies", local_loss=True, seed=0)
    return init_state(cfg, model, (1, 28, 28), aux_head=aux_head_factory(10))


@pytest.mark.parametrize("x_shape, labels, match", [
    ((4, 1, 28, 28), [0, 1, 2, 10], r"labels must be classes 0..9 of the model's 10 outputs; device 1 has \[10\]"),
    ((4, 1, 28, 28), [0, 1, 2, -1], r"device 1 has \[-1\]"),
    ((4, 3, 32, 32), [0, 1, 2, 3], r"xs\[1\] must be a \[b, C, H, W\] batch of the model's input, \(1, 28, 28\)"),
])
def test_train_round_checks_inputs_and_labels(split_state, x_shape, labels, match):
    xs = [torch.zeros(4, 1, 28, 28), torch.zeros(x_shape)]
    ys = [torch.zeros(4, dtype=torch.int64), torch.tensor(labels)]
    before = {k: v.clone() for k, v in split_state.units[0][1].items()}
    with pytest.raises(ValueError, match=match):
        train_round(split_state, xs, ys, local_step=LoopLocalLoss())
    assert all(torch.equal(before[k], v) for k, v in split_state.units[0][1].items())   # nothing trained


def test_train_round_refuses_float_labels(split_state):
    with pytest.raises(ValueError, match=r"ys\[0\] must be a 1-D int64 tensor of class labels, got torch.float32"):
        train_round(split_state, [torch.zeros(4, 1, 28, 28)] * 2, [torch.zeros(4)] * 2, local_step=LoopLocalLoss())


def _tiny(name="fashion-mnist", n=40, labels=None):
    from fedlib.data import TensorDataset
    y = torch.arange(n) % 10 if labels is None else torch.tensor(labels)
    return TensorDataset(name, torch.zeros(n, 1, 28, 28), y, torch.zeros(20, 1, 28, 28), torch.arange(20) % 10,
                         tuple(str(i) for i in range(10)), "test")


def test_dataset_refuses_labels_outside_its_classes():
    with pytest.raises(ValueError, match=r"y_train must hold class labels 0..9 of the 10 classes, got \[12\]"):
        _tiny(n=3, labels=[0, 12, 3])
    with pytest.raises(ValueError, match=r"y_train must be \[n\] int64 labels of the n = 40 inputs"):
        _tiny(labels=[0, 1])


def test_dtfl_refuses_data_other_than_the_config_names_and_subsets_beyond_the_data():
    from fedlib.dtfl.run import run_dtfl
    from fedlib.dtfl.training import DtflConfig, subset
    cfg = DtflConfig(model="resnet20", width=0.25, dataset="fashion-mnist", num_clients=2, batch_size=10)
    with pytest.raises(ValueError, match="data is 'cifar10', but the config says dataset='fashion-mnist'"):
        run_dtfl(cfg, _tiny("cifar10"), np.full((1, 2), 2))
    with pytest.raises(ValueError, match=r"train_subset must be an integer in \[0, 40\] \(0: all; fashion-mnist has 40"):
        subset(_tiny(), 100, 0)
    assert len(subset(_tiny(), 30, 0).y_train) == 30


def test_dtfl_notebook_lists_are_checked_before_any_run():
    from fedlib.lab.dtfl import compare as dc
    with pytest.raises(ValueError, match=r"tiers_list\[1\] must be an integer in \[1, 7\]"):
        dx.check_lists(tiers_list=[1, 8])
    with pytest.raises(ValueError, match=r"cases\[1\] must be one of"):
        dx.check_lists(cases=["case1", "case3"])
    with pytest.raises(ValueError, match=r"methods\[1\] must be one of \('dtfl', 'fedavg'"):
        dc.check_methods(["dtfl", "fedprox"])
    with pytest.raises(ValueError, match=r"samples_per_client x K = 20000 x 4 = 80000 .* data holds 60000"):
        dc.scaling_rounds([4], 0, 4, 0.5, 20000, 60000)
    rounds, note = dc.scaling_rounds([4, 8], 2, 99, 0.5, 10, 100)
    assert rounds == {4: 2, 8: 2} and "client_rounds = 99 is not used" in note
    rounds, note = dc.scaling_rounds([4, 8], 0, 8, 0.5, 10, 100)
    assert rounds == {4: 4, 8: 2} and "from client_rounds" in note


def test_dtfl_privacy_attack_sizes_are_checked_against_the_data():
    from fedlib.lab.dtfl.checks import check_attack_data
    for bad in (1, 21):
        with pytest.raises(ValueError, match=r"attack_eval must be an integer in \[2, 20\] \(the data's 20 test images\)"):
            check_attack_data(_tiny(), 10, 5, bad)
    with pytest.raises(ValueError, match=r"attack_fit = 31 held-out images need train_subset \+ attack_fit <= 40; "
                                         r"train_subset is 10"):
        check_attack_data(_tiny(), 10, 31, 20)
    with pytest.raises(ValueError, match=r"train_subset is 40"):       # 0: the clients use all 40 images
        check_attack_data(_tiny(), 0, 1, 2)
    assert check_attack_data(_tiny(), 10, 30, 20) == 10                # the attacker's 30 images: 10..39


def test_hasfl_bound_takes_b_and_cuts_of_one_device_count():
    from fedlib.hasfl import HasflConstants, bound_floor, rounds_needed, theorem1_bound
    c = HasflConstants(1.0, np.ones(4), np.ones(4), 10.0)
    with pytest.raises(ValueError, match=r"b and cuts must hold one entry per device, .* got shapes \(5,\) and \(3,\)"):
        theorem1_bound(c, 0.01, [16] * 5, [1] * 3, 2, 100)
    with pytest.raises(ValueError, match=r"b and cuts .* got shapes \(7,\) and \(2,\)"):
        rounds_needed(c, 0.01, [16] * 7, [1] * 2, 2, 5.0)
    with pytest.raises(ValueError, match=r"cut_max one L_c per row of b .* got shapes \(3,\) and \(3,\)"):
        bound_floor(c, 0.01, [16] * 3, [1] * 3, 2)
    assert theorem1_bound(c, 0.01, [16] * 3, [1, 2, 1], 2, 100)["total"] > 0


def test_hist_budget_below_one_round_is_refused():
    from fedlib.lab.hist.checks import check_hist_2_figures
    params = dict(settings=["noniid"], num_cells=[2], H=40, E=200, comm_budget_L0=0.5, target_acc=0.75,
                  fig4_num_cells=2, fig4_E_over_H=[1], fig4_H=[40], fig4_global_rounds=1, seeds=[0], num_clients=60,
                  lr=0.01, batch_size=32, dataset="fashion-mnist", hidden=300)
    with pytest.raises(ValueError, match=r"comm_budget_L0 = 0.5 is below one global round of HFedAvg \(5 L0"):
        check_hist_2_figures(params)
    check_hist_2_figures({**params, "comm_budget_L0": 5.0})    # one round exactly: accepted


def test_hasfl_figure_and_sweep_lists_are_checked_up_front():
    from fedlib.lab.hasfl import checks
    from fedlib.lab.hasfl.runs import experiments as hx
    fig2b = {"models": ["vgg16"], "batch_sizes": [1, 2], "cuts": [1, 40], "num_devices": 20, "seed": 0,
             "classes": [10], "in_channels": 3, "image_size": 32, "interval": 15}
    with pytest.raises(ValueError, match=r"cuts\[1\] must be an integer in \[1, 16\] \(cut layers of vgg16: 1..16\)"):
        checks.check_hasfl_1_latency(fig2b)
    checks.check_hasfl_1_latency(dict(fig2b, cuts=[1, 16]))
    with pytest.raises(ValueError, match=r"factors\[0\] must be"):
        hx.check_sensitivity([0.0], [5])


def test_notebook_parameters_takes_a_string_path():
    from fedlib.lab.notebooks import notebook_parameters
    from fedlib.lab.paths import REPO_ROOT
    nb = str(REPO_ROOT / "notebooks" / "dtfl" / "dtfl_6_scaling.ipynb")
    assert notebook_parameters(nb, "paper")["rounds"] == 0        # Table 4 from client_rounds at the paper profile
    with pytest.raises(FileNotFoundError, match="does not exist"):
        notebook_parameters(nb.replace("dtfl_6_scaling", "nope"), "paper")


def test_a_committed_calibration_is_refused_for_another_model():
    from fedlib.lab.hasfl.runs.train_plan import committed_fit
    with pytest.raises(ValueError, match=r"transfer_fit_from = 'quick' calibrated vgg16 at width 0.25, but this run's "
                                         r"first model is resnet18 at width 0.125"):
        committed_fit("quick", "resnet18", 0.125)
    fit, target = committed_fit("quick", "vgg16", 0.25)
    assert fit["kappa"] > 0 and 0 < target < 1
    with pytest.raises(ValueError, match="transfer_fit_from must be one of"):
        committed_fit("quik", "vgg16", 0.25)


def test_time_model_refuses_a_column_of_per_client_values(tm):
    with pytest.raises(ValueError, match=r"cpus must be one number or hold one entry per client on its last axis "
                                         r"\(K = 3\), got shape \(3, 1\)"):
        tm.times([1, 2, 3], np.array([[1.0], [2.0], [4.0]]), 10.0, 100)
    assert tm.times(np.array([[1, 2, 3], [3, 2, 1]]), [1.0, 2.0, 4.0], 10.0, 100)["T"].shape == (2, 3)


def test_hasfl_bound_figure_parameters_before_the_pilot():
    from fedlib.lab.hasfl import checks
    bound = {"model": "vgg16", "dataset": "fashion-mnist", "pilot_steps": 10, "gamma": 5e-4, "pilot_batch": 16,
             "num_batches": 8, "power_iters": 10, "interval": 15, "seed": 0, "rounds": 1000, "batch_sizes": [1, 2],
             "interval_grid": [1, 15], "eps_grid": [10.0], "batch_for_eps": 16, "cut_for_eps": 20, "num_devices": 20}
    with pytest.raises(ValueError, match=r"cut_for_eps must be an integer in \[1, 16\] \(cut layers of vgg16: 1..16\)"):
        checks.check_hasfl_2_bound(bound)
    checks.check_hasfl_2_bound(dict(bound, cut_for_eps=1))
