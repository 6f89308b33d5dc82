"""A split model of your own by import path (issue 71, item 7): a factory ``"module:function"`` taking
``(in_channels, image_size, num_classes, width)`` and returning an ``nn.Sequential`` of cuttable units, accepted
where DTFL's and HASFL's training take a model name (:func:`fedlib.split.models.make_model`); its layer profile
measured like ours (:func:`fedlib.split.model_profile`); bad input refused in one line naming the path; DTFL's
model checked to be 8 units of image-shaped smashed data; the same record in this process and in a worker.

Planted once each and seen red: the factory called without ``width``; the L check of ``build_model`` dropped;
DTFL's 8-unit check dropped; the rank check dropped; the path cut from the messages."""
import concurrent.futures
import multiprocessing

import numpy as np
import pytest
import torch

from fedlib.core.components import ComponentError
from fedlib.core.validate import ParameterTypeError
from fedlib.split import SplitConfig, build_model, model_profile
from fedlib.split.models import make_model

pytestmark = pytest.mark.usefixtures("one_thread")


def test_a_factory_of_your_own_is_built_with_the_four_arguments_and_profiled_like_ours():
    net = make_model("own_models:small_cnn", 1, 28, 10, 0.5)
    assert len(net) == 8 and net[0][0].out_channels == 4 and net[7][2].out_features == 10
    prof = model_profile("own_models:small_cnn", 1, 28, 10, width=0.5)
    # unit 1 by hand: conv 1 -> 4 channels, 3x3, stride 1, no bias on 28x28, then BN(4):
    # 2 * 9 * 1 * 4 * 784 FLOPs, 36 + 8 parameters, 4 * 28 * 28 fp32 activations
    assert prof.fwd_flops[0] == 2 * 9 * 4 * 784
    assert prof.params_per_unit[0] == 36 + 8
    assert prof.act_bits[0] == 32 * 4 * 28 * 28
    # unit 3 (4 -> 8 channels, stride 2: 14x14 out) adds 2 * 9 * 4 * 8 * 196 forward FLOPs
    assert prof.fwd_flops[2] - prof.fwd_flops[1] == 2 * 9 * 4 * 8 * 196
    assert prof.act_bits[2] == 32 * 8 * 14 * 14
    assert prof.name == "own_models:small_cnn@w0.5" and prof.num_layers == 8
    assert prof.params_per_unit[7] == 16 * 10 + 10      # the head: linear 16 -> 10


@pytest.mark.parametrize("path, error, message", [
    ("own_models:not_sequential", ParameterTypeError,
     r"^model 'own_models:not_sequential' must return an nn\.Sequential of at least 2 cuttable units .*got Linear$"),
    ("own_models:one_unit", ParameterTypeError, r"^model 'own_models:one_unit' must return .*got an nn\.Sequential "
                                                r"of 1 units$"),
    ("own_models:no_width", ParameterTypeError, r"^model 'own_models:no_width' must take \(in_channels, image_size, "
                                                r"num_classes, width\); its signature is"),
    ("own_models:raises", ComponentError, r"^model 'own_models:raises' raised IndexError: list index out of range$"),
    ("own_models:missing", ValueError, r"^model = 'own_models:missing': module 'own_models' has no 'missing'$"),
    ("own_models:NOT_CALLABLE", ParameterTypeError, r"^model = 'own_models:NOT_CALLABLE' must name a function"),
    ("no_such_module_xyz:f", ValueError, r"^model = 'no_such_module_xyz:f': cannot import module"),
])
def test_a_bad_factory_is_refused_in_one_line_naming_its_path(path, error, message):
    with pytest.raises(error, match=message) as info:
        make_model(path, 1, 28, 10, 1.0)
    assert "\n" not in str(info.value)


def test_an_unknown_name_says_a_path_of_your_own_is_taken_too():
    with pytest.raises(ValueError, match=r"^model must be one of \(.*'vgg16'.*\) or an import path "
                                         r"'package\.module:function' of a cuttable model of your own, got 'vgg17'$"):
        SplitConfig(model="vgg17")


def test_the_cuts_of_a_model_of_your_own_are_checked_against_its_units_when_built():
    cfg = SplitConfig(model="own_models:four_units", width=0.5, num_devices=2, batch_sizes=(4, 4), cuts=(2, 5),
                      rounds=1)
    with pytest.raises(ValueError, match=r"^cuts must be in 1\.\.L = 1\.\.4 \(model 'own_models:four_units' has 4 "
                                         r"units\), got \[2, 5\]$"):
        build_model(cfg, 1, 28, 10)
    ok = SplitConfig(model="own_models:four_units", width=0.5, num_devices=2, batch_sizes=(4, 4), cuts=(2, 4))
    assert len(build_model(ok, 1, 28, 10)) == 4
    with pytest.raises(ValueError, match=r"cuts\[1\] must be .*1\.\.L, L the units of the model"):
        SplitConfig(model="own_models:four_units", num_devices=2, batch_sizes=(4, 4), cuts=(2, 0))


def _seeded_weights(seed):
    cfg = SplitConfig(model="own_models:small_cnn", width=0.5, num_devices=1, batch_sizes=(4,), cuts=(3,), seed=seed)
    return torch.cat([p.detach().flatten() for p in build_model(cfg, 1, 28, 10).parameters()])


def test_a_model_of_your_own_is_initialised_from_the_runs_model_stream():
    assert torch.equal(_seeded_weights(3), _seeded_weights(3))
    assert not torch.equal(_seeded_weights(3), _seeded_weights(4))


@pytest.fixture(scope="module")
def tiny():
    from fedlib.data import load_fashion_mnist
    from fedlib.dtfl.training import subset
    return subset(load_fashion_mnist(), 200, 100)


def _dtfl(model, data, rounds=2):
    from fedlib.dtfl import DtflConfig
    from fedlib.dtfl.run import run_dtfl
    cfg = DtflConfig(model=model, width=0.5, num_clients=2, batch_size=50, seed=3)
    cuts = np.array([[2, 5], [5, 7]])[:rounds]
    return run_dtfl(cfg, data, cuts, backend="loop")


@pytest.mark.parametrize("path, message", [
    ("own_models:four_units", r"^model 'own_models:four_units' must give DTFL's 8 units md1\.\.md8 .*got 4 units$"),
    ("own_models:flat_mlp", r"^model 'own_models:flat_mlp' must give \[B, C, H, W\] smashed data after md1\.\.md7 "
                            r".*got shape \[2, 16\] after md1$"),
])
def test_dtfl_refuses_a_model_that_is_not_8_units_of_image_smashed_data(tiny, path, message):
    with pytest.raises(ValueError, match=message) as info:
        _dtfl(path, tiny)
    assert "\n" not in str(info.value)


def _worker(model):
    from fedlib.data import load_fashion_mnist
    from fedlib.dtfl.training import subset
    torch.set_num_threads(1)
    return _dtfl(model, subset(load_fashion_mnist(), 200, 100))


def test_dtfl_trains_a_model_of_your_own_the_same_in_this_process_and_in_a_worker(tiny):
    here = _dtfl("own_models:small_cnn", tiny)
    assert here["round"] == [0, 1, 2] and len(here["test_acc_aux"]) == 3
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        there = pool.submit(_worker, "own_models:small_cnn").result()
    for key in ("test_acc", "test_loss", "train_loss", "test_acc_aux", "test_loss_aux"):
        assert here[key] == there[key], key
    assert here["config"]["model"] == "own_models:small_cnn"


def test_hasfl_trains_a_model_of_your_own_the_same_in_this_process_and_in_a_worker(tiny):
    config = dict(model="own_models:four_units", width=0.5, num_devices=2, b=[8, 16], cuts=[1, 3], interval=2,
                  lr=0.05, optimizer="sgd", momentum=0.0, rounds=4, eval_every=2, setting="iid", shards_per_client=2,
                  dataset="fashion-mnist", seed=5, test_subset=0)
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        there = pool.submit(_hasfl_worker, config).result()
    here = _hasfl_worker(config)
    assert here["round"] == [0, 2, 4]
    assert here["test_acc"] == there["test_acc"] and here["train_loss"] == there["train_loss"]


def _hasfl_worker(config):
    from fedlib.data import load_fashion_mnist
    from fedlib.dtfl.training import subset
    from fedlib.hasfl.training import train_run
    torch.set_num_threads(1)
    return train_run(config, subset(load_fashion_mnist(), 200, 100), "cpu")


MODEL_SOURCE = '''
from torch import nn


def net(in_channels, image_size, num_classes, width):
    c = max(1, round(4 * width))
    return nn.Sequential(nn.Sequential(nn.Conv2d(in_channels, c, 3, padding=1), nn.ReLU()),
                         nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, num_classes)))
'''


def test_a_record_of_your_own_model_is_keyed_by_its_path_and_source_and_an_edit_rekeys_only_its_records(
        tmp_path, monkeypatch):
    import sys

    from fedlib.lab.code_hash import source_hash
    from fedlib.lab.store import ResultStore, with_own

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "keyed_net_a.py").write_text(MODEL_SOURCE)
    (tmp_path / "keyed_net_b.py").write_text(MODEL_SOURCE)
    store = ResultStore(tmp_path / "store", code=("fedlib.split.models",))
    base = dict(kind="t", model="vgg16", width=0.5, seed=2)
    configs = {m: {**base, "model": m} for m in ("vgg16", "keyed_net_a:net", "keyed_net_b:net")}
    try:
        before = {m: store.key(c) for m, c in configs.items()}
        assert with_own(configs["vgg16"]) == configs["vgg16"]                 # a built-in's key as before
        assert with_own(configs["keyed_net_a:net"])["own_model"] == {
            "path": "keyed_net_a:net", "code": source_hash(["keyed_net_a"])}
        assert len(set(before.values())) == 3                                  # two paths never share a record
        (tmp_path / "keyed_net_a.py").write_text(MODEL_SOURCE + "\n# a comment only\n")
        assert store.key(configs["keyed_net_a:net"]) == before["keyed_net_a:net"]      # layout: same source
        (tmp_path / "keyed_net_a.py").write_text(MODEL_SOURCE.replace("4 * width", "6 * width"))
        after = {m: store.key(c) for m, c in configs.items()}
        assert after["keyed_net_a:net"] != before["keyed_net_a:net"]
        assert after["vgg16"] == before["vgg16"] and after["keyed_net_b:net"] == before["keyed_net_b:net"]
        # what runs after the edit is the edited source: 6 channels at width 1
        rec = store.get_or_run(configs["keyed_net_a:net"],
                               lambda: {"channels": sys.modules["keyed_net_a"].net(1, 28, 10, 1.0)[0][0].out_channels})
        assert rec["channels"] == 6
    finally:
        for name in ("keyed_net_a", "keyed_net_b"):
            sys.modules.pop(name, None)


def test_a_dtfl_run_of_your_own_model_through_the_store_is_the_same_in_this_process_and_in_workers(tmp_path):
    from fedlib.lab.dtfl.experiments import Setup, run_entry
    from fedlib.lab.parallel import map_jobs
    from fedlib.lab.store import ResultStore

    s = Setup(model="own_models:small_cnn", width=0.5, num_clients=2, batch_size=50, train_subset=200,
              test_subset=100, rounds=2)
    here, there = ResultStore(tmp_path / "here"), ResultStore(tmp_path / "there")
    job = dict(s=s, num_tiers=3, case="all", setting="iid", seed=1, target_acc=0.2)
    a = map_jobs(run_entry, [dict(job, store=here)], workers=1)[0]
    b = map_jobs(run_entry, [dict(job, store=there), dict(job, seed=2, store=there)], workers=2)[0]
    for key in ("test_acc", "test_loss", "train_loss", "test_acc_aux"):
        assert a["record"][key] == b["record"][key], key
    assert a["sim"]["tiers"] == b["sim"]["tiers"] and a["row"]["model"] == "own_models:small_cnn"
    (name,) = [p.name for p in (tmp_path / "here").glob("*.json")]
    assert (tmp_path / "there" / name).exists()                          # the same key in the workers' store
    assert a["record"]["config"]["model"] == "own_models:small_cnn"


def test_hasfls_pilot_constants_take_a_model_of_your_own_one_value_per_unit(tiny):
    from fedlib.hasfl.bound.estimate import constants_record

    config = dict(model="own_models:four_units", width=0.5, dataset="fashion-mnist", seed=4, pilot_steps=2, lr=0.01,
                  batch_size=8, num_batches=2, power_iters=2, interval=1)
    rec = constants_record(config, tiny)
    assert len(rec["constants"]["sigma2"]) == 4 and len(rec["constants"]["G2"]) == 4   # L = 4 units
    assert rec["constants"] == constants_record(config, tiny)["constants"]            # seeded: the same again
