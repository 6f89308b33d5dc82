"""Split-training engine (fedlib.split.engine) against the literal per-device reference (Algorithm 1), BN
handling, decisions, records and convergence helpers."""
import dataclasses
import math

import numpy as np
import pytest
import torch
from torch import nn

from fedlib.core.seeding import torch_generator
from fedlib.data import TensorDataset, load_fashion_mnist
from fedlib.split import model_profile, resnet18, vgg16
from fedlib.split import ops
from fedlib.split import (SplitConfig, aggregate, build_model, global_model, global_units,
                          set_decision, train_round)
from fedlib.split.records import client_partition, converged_at, draw_batches, run_split, time_to_target
from tests.reference_split import Reference
from fedlib.dtfl.local_loss import local_loss_step
from fedlib.split.backends import BACKENDS, device_aux, split_backend
from fedlib.split.stacked import StackedState


@pytest.fixture(scope="module")
def fmnist():
    return load_fashion_mnist()


pytestmark = pytest.mark.usefixtures("one_thread")


def aux_head(cut, shape):
    return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(shape[0], 10))


def run_both(ds, rounds=4, tol=1e-5, backend="loop", absent=(), **kw):
    """Engine (``backend``) and literal reference side by side for ``rounds`` rounds, in torch's default dtype
    (the inputs are cast to it); each round's loss must agree to ``tol``. ``absent``: per round, the devices that
    sit it out (copies mode; round r uses ``absent[(r - 1) % len(absent)]``)."""
    base = dict(model="vgg16", width=0.0625, num_devices=4, batch_sizes=(4, 6, 5, 8), cuts=(2, 5, 5, 9),
                interval=1, lr=0.05, seed=1)
    base.update(kw)
    cfg = SplitConfig(**base)
    f = split_backend(backend)
    shape = tuple(ds.x_train.shape[1:])
    model = build_model(cfg, shape[0], shape[1], 10)
    head = aux_head if cfg.local_loss else None
    st = f.init_state(cfg, model, shape, aux_head=head)
    step = local_loss_step(backend) if cfg.local_loss else None
    ref = Reference(cfg, model, [None if c == len(model) else _aux_like(st, i) for i, c in enumerate(cfg.cuts)]
                    if cfg.local_loss else None)
    parts = [torch.from_numpy(p) for p in client_partition(cfg, ds.y_train)]
    gen = torch_generator(cfg.seed, "data")
    for r in range(1, rounds + 1):
        idx = draw_batches(parts, st.b, gen)
        xs, ys = [ds.x_train[i].to(torch.get_default_dtype()) for i in idx], [ds.y_train[i] for i in idx]
        for i in (absent[(r - 1) % len(absent)] if absent else ()):
            xs[i] = ys[i] = None
        assert f.train_round(st, xs, ys, local_step=step) == pytest.approx(ref.round(xs, ys), abs=tol)
        if r % cfg.interval == 0:
            f.aggregate(st)
            ref.aggregate()
    return st, ref


def _aux_of(st, i):
    """Device i's auxiliary head (a dict of tensors), whatever the backend."""
    return device_aux(st, i)


def _aux_like(st, i):
    head = aux_head(int(st.cuts[i]), st.smashed_shapes[int(st.cuts[i]) - 1])
    head.load_state_dict(_aux_of(st, i))
    return head


def assert_same(st, ref, atol=1e-5):
    gm = split_backend("stacked" if isinstance(st, StackedState) else "loop").global_model
    g1, g2 = gm(st).state_dict(), ref.global_model().state_dict()
    assert g1.keys() == g2.keys()
    for k in g1:
        torch.testing.assert_close(g1[k], g2[k], atol=atol, rtol=0, msg=k)
    for i in range(st.num_devices):      # per-device client-specific models, BN statistics included
        for j in range(st.per_device):
            for k, v in ref._unit_sd(i, j).items():
                torch.testing.assert_close(st.units[j][i][k], v, atol=atol, rtol=0, msg=f"device {i} unit {j} {k}")


@pytest.mark.parametrize("kw", [
    dict(interval=1),
    dict(interval=3),
    dict(interval=3, momentum=0.9, weight_decay=1e-3),          # eq. 4 with per-device momentum = shared momentum
    dict(interval=3, optimizer="adam", lr=1e-3, eps=1e-4),      # eps >> the ~1e-9 noise gradient of pre-BN biases
    dict(interval=2, batch_sizes=(5, 5, 5, 5)),                  # equal b: one batch-norm call over [b, G·C]
    dict(interval=2, mode="copies", cuts=(2, 5, 9, 16)),         # per-device server copies averaged every round
    dict(interval=2, local_loss=True, cuts=(2, 5, 5, 16)),       # aux-head loss, no gradient returned
    dict(interval=2, mode="copies", cuts=(2, 5, 9, 16), absent=((1,), (0, 3), ())),   # devices sitting out
    dict(interval=2, mode="copies", local_loss=True, cuts=(2, 5, 5, 16), optimizer="adam", lr=1e-3, eps=1e-4,
         absent=((2,), (), (0, 1))),                              # DTFL-like: tiers, aux heads, Adam, absences
], ids=["I1", "I3", "I3-momentum", "I3-adam", "equal-b", "copies", "local-loss", "copies-absent",
        "copies-local-adam-absent"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_engine_equals_literal_reference(fmnist, float64, kw, backend):
    """float64: in float32 BN over 5 samples amplifies the two paths' rounding differences (measured on the
    equal-b case: 1e-7 for three rounds, then 2e-4 in round 4); in float64 they agree to ~1e-15."""
    st, ref = run_both(fmnist, tol=1e-9, backend=backend, **kw)
    assert_same(st, ref, atol=1e-9)
    absent = kw.get("absent", ())
    assert st.samples == 4 * sum(st.b) - sum(int(st.b[i]) for r in range(4) for i in
                                             (absent[r % len(absent)] if absent else ()))


@pytest.mark.parametrize("backend", BACKENDS)
def test_engine_equals_reference_resnet(fmnist, float64, backend):
    st, ref = run_both(fmnist, rounds=2, tol=1e-9, backend=backend, model="resnet18", width=0.0625,
                       cuts=(1, 3, 3, 6), interval=2)
    assert_same(st, ref, atol=1e-9)


def test_group_batchnorm_is_per_device_batchnorm():
    torch.manual_seed(0)
    bn = nn.BatchNorm2d(3)
    bn.running_mean.uniform_()
    for sizes in ((4, 4, 4), (2, 5, 3)):
        x = torch.randn(sum(sizes), 3, 5, 5)
        gbn = ops.GroupBatchNorm(bn).train()
        with ops.segmented([gbn], sizes):
            out = gbn(x)
        assert gbn.segments is None                      # reset after the block
        copies = [nn.BatchNorm2d(3).train() for _ in sizes]
        outs = []
        for c, part in zip(copies, x.split(sizes)):
            c.load_state_dict(bn.state_dict())
            outs.append(c(part))
        torch.testing.assert_close(out, torch.cat(outs), atol=1e-6, rtol=0)
        # running statistics: the mean of the per-device EMA updates from the same start (eq. 4 on statistics)
        torch.testing.assert_close(gbn.running_mean, torch.stack([c.running_mean for c in copies]).mean(0))
        torch.testing.assert_close(gbn.running_var, torch.stack([c.running_var for c in copies]).mean(0))
        assert int(gbn.num_batches_tracked) == 1


def test_bn_running_stats_averaged_like_weights_eq7(fmnist):
    st, _ = run_both(fmnist, rounds=1, interval=5)
    w = np.array([0.1, 0.2, 0.3, 0.4])
    before = [st.units[1][i]["1.running_var"].clone() for i in range(4)]
    expect = sum(wi * b for wi, b in zip(w, before))
    torch.testing.assert_close(global_units(st, w)[1]["1.running_var"], expect)
    aggregate(st, w)
    for i in range(4):
        torch.testing.assert_close(st.units[1][i]["1.running_var"], expect)
    torch.testing.assert_close(global_model(st, w)[1][1].running_var, expect)


def _snapshot(st):
    return [[{k: v.detach().clone() for k, v in d.items()} for d in copies] for copies in st.units], \
        [[{name: {k: v.clone() for k, v in s.items()} for name, s in o.items()} for o in copies] for copies in st.opt]


def _mean(copies):
    """The plain mean of per-device unit dicts written out (floating tensors; integer buffers: the first)."""
    return {k: sum(d[k] for d in copies) / len(copies) if v.is_floating_point() else v for k, v in copies[0].items()}


def _assert_unit(got, want, msg):
    assert got.keys() == want.keys(), msg
    for k in want:
        torch.testing.assert_close(got[k], want[k], atol=1e-6, rtol=1e-6, msg=f"{msg} {k}")


def _assert_opt(got, want, msg):
    assert got.keys() == want.keys(), msg
    for name in want:
        assert got[name].keys() == want[name].keys(), (msg, name)
        for k in want[name]:
            assert torch.equal(got[name][k], want[name][k]), (msg, name, k)


def test_set_decision_rebuilds_from_global(fmnist):
    """The exact state after L_c grows (9 -> 12) and after it shrinks (12 -> 5): which units are per device and
    which shared, the value of every copy (own, rebuilt from the global model, or moved between the two sides)
    and which optimizer states survive."""
    st, _ = run_both(fmnist, rounds=2, interval=5, momentum=0.9)   # no aggregation yet: device copies differ
    assert st.per_device == 9 and st.cuts.tolist() == [2, 5, 5, 9]
    units, opt = _snapshot(st)
    assert all(opt[j][i] for j in range(9) for i in range(4))       # momentum buffers exist: their fate is tested
    assert not torch.equal(units[0][0]["0.weight"], units[0][1]["0.weight"])
    glob = [_mean(units[j]) for j in range(9)] + [units[j][0] for j in range(9, 16)]
    # grow: devices 1 (5 -> 3) and 3 (9 -> 12) change, L_c 9 -> 12
    set_decision(st, (4, 6, 5, 8), (2, 3, 5, 12))
    assert st.per_device == 12 and st.cuts.tolist() == [2, 3, 5, 12] and st.b.tolist() == [4, 6, 5, 8]
    assert [len(c) for c in st.units] == [4] * 12 + [1] * 4 and [len(c) for c in st.opt] == [4] * 12 + [1] * 4
    for j in range(12):
        for i in range(4):
            keep = j < 9 and i in (0, 2)                      # unchanged devices keep their own units and moments
            _assert_unit(st.units[j][i], units[j][i] if keep else glob[j], f"grow unit {j + 1} device {i}")
            if keep:
                _assert_opt(st.opt[j][i], opt[j][i], f"grow unit {j + 1} device {i}")
            else:
                assert st.opt[j][i] == {}, (j, i)
    for j in range(12, 16):                                   # the common part is untouched
        _assert_unit(st.units[j][0], units[j][0], f"grow unit {j + 1}")
        _assert_opt(st.opt[j][0], opt[j][0], f"grow unit {j + 1}")
    assert torch.equal(st.units[9][2]["0.weight"], units[9][0]["0.weight"])   # shared unit 10 copied to devices

    # train one round so that the per-device copies of units 10..12 differ, then shrink
    xs = [fmnist.x_train[:b] for b in (4, 6, 5, 8)]
    assert math.isfinite(train_round(st, xs, [fmnist.y_train[:b] for b in (4, 6, 5, 8)]))
    units, opt = _snapshot(st)
    assert not torch.equal(units[10][0]["0.weight"], units[10][1]["0.weight"])
    glob = [_mean(units[j]) for j in range(12)] + [units[j][0] for j in range(12, 16)]
    set_decision(st, (1, 2, 3, 4), (2, 3, 5, 4))              # device 3: 12 -> 4; L_c 12 -> 5
    assert st.per_device == 5 and st.cuts.tolist() == [2, 3, 5, 4] and st.b.tolist() == [1, 2, 3, 4]
    assert [len(c) for c in st.units] == [4] * 5 + [1] * 11 and [len(c) for c in st.opt] == [4] * 5 + [1] * 11
    for j in range(5):                                        # still per device
        for i in range(4):
            keep = i != 3
            _assert_unit(st.units[j][i], units[j][i] if keep else glob[j], f"shrink unit {j + 1} device {i}")
            if keep:
                _assert_opt(st.opt[j][i], opt[j][i], f"shrink unit {j + 1} device {i}")
            else:
                assert st.opt[j][i] == {}, (j, i)
    for j in range(5, 12):                                    # units 6..12 become common: the devices' mean
        _assert_unit(st.units[j][0], glob[j], f"shrink unit {j + 1}")
        assert st.opt[j] == [{}]
    for j in range(12, 16):                                   # units 13..16 were common and stay as they were
        _assert_unit(st.units[j][0], units[j][0], f"shrink unit {j + 1}")
        _assert_opt(st.opt[j][0], opt[j][0], f"shrink unit {j + 1}")
    # and the shrunk state trains
    set_decision(st, (2, 2, 3, 4), (2, 3, 5, 4))
    assert math.isfinite(train_round(st, [fmnist.x_train[:b] for b in (2, 2, 3, 4)],
                                     [fmnist.y_train[:b] for b in (2, 2, 3, 4)]))


@pytest.mark.parametrize("kw, word", [
    (dict(cuts=(0, 2, 3, 4)), "cuts"), (dict(cuts=(1, 2, 3, 17)), "cuts"), (dict(batch_sizes=(0, 1, 1, 1)), "batch_sizes"),
    (dict(interval=0), "interval"), (dict(cuts=(1, 2, 3)), "cuts"), (dict(batch_sizes=(1,) * 5), "batch_sizes"),
    (dict(width=0.0), "width"), (dict(width=-1.0), "width"), (dict(lr=float("nan")), "lr"), (dict(lr=float("inf")), "lr"),
])
def test_clear_errors(kw, word):
    base = dict(num_devices=4, batch_sizes=(1, 1, 1, 1), cuts=(1, 2, 3, 4))
    with pytest.raises(ValueError, match=word):
        SplitConfig(**(base | kw))


def test_decision_length_error(fmnist):
    st, _ = run_both(fmnist, rounds=1)
    with pytest.raises(ValueError, match="cuts"):
        set_decision(st, (1, 1, 1, 1), (1, 2, 3))
    with pytest.raises(ValueError, match="1..16"):
        set_decision(st, (1, 1, 1, 1), (1, 2, 3, 17))


def test_width_multiplier_keeps_defaults():
    count = lambda m: sum(p.numel() for p in m.parameters())
    assert count(vgg16(1, 28, 10)) == count(vgg16(1, 28, 10, width=1.0))
    assert count(resnet18()) == 11_220_132 == count(resnet18(width=1.0))
    small = vgg16(1, 28, 10, width=0.25)
    assert small[0][0].out_channels == 16 and small[-1][0].in_features == 128
    assert resnet18(width=0.5)[0][0].out_channels == 32
    p1, p4 = model_profile("vgg16", 1, 28, 10), model_profile("vgg16", 1, 28, 10, width=0.25)
    assert p4.fwd_flops[-1] < p1.fwd_flops[-1] / 10 and p4.num_layers == 16
    with pytest.raises(ValueError, match="width"):
        vgg16(width=0)


def test_converged_at_and_time_to_target():
    accs = [0.10, 0.30, 0.50, 0.60, 0.650, 0.6505, 0.6504, 0.6503, 0.6506, 0.6501, 0.6502]
    # k = 9: best of evaluations 5..9 (0.6506) beats the best before (0.650) by 0.0006 -> not yet;
    # k = 10: best of 6..10 (0.6506) beats the best before (0.6505) by 0.0001 < 0.02 % -> converged
    assert converged_at(accs[:10]) is None
    assert converged_at(accs) == 10
    assert converged_at([0.5] * 6) == 5
    assert converged_at([0.1, 0.2, 0.3]) is None
    plateau = [0.1] * 6 + [0.3, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
    assert converged_at(plateau) == 5                      # the initial plateau looks converged
    assert converged_at(plateau, start=6) == 13            # from the first rise: best of 9..13 = best of 0..8
    with pytest.raises(ValueError, match="start"):
        converged_at(plateau, start=-1)
    rec = {"test_acc": [0.1, 0.5, 0.7, 0.8], "sim_s": [0.0, 2.0, 4.0, 6.0]}
    assert time_to_target(rec, 0.7) == 4.0 and time_to_target(rec, 0.9) is None


def test_run_split_records_and_hasfl_clock(fmnist):
    from fedlib.hasfl import TABLE_I, round_latency
    from fedlib.hasfl.bound.latency import total_latency
    from fedlib.split import sample_system
    ds = TensorDataset("fashion-mnist", fmnist.x_train[:2000], fmnist.y_train[:2000], fmnist.x_test[:300],
                       fmnist.y_test[:300], fmnist.classes, fmnist.source)
    cfg = SplitConfig(width=0.0625, num_devices=4, batch_sizes=(4, 6, 5, 8), cuts=(2, 5, 5, 9), interval=3,
                      lr=0.05, rounds=7, eval_every=3, partition="shards")
    profile = model_profile("vgg16", 1, 28, 10, width=cfg.width)  # the profile of the model actually trained
    spec = dataclasses.replace(TABLE_I, num_devices=4)
    devices, servers = sample_system(spec, np.random.default_rng(0))
    calls = []

    def clock(r, b, cuts, aggregated):
        calls.append((r, aggregated))
        lat = round_latency(profile, b, cuts, devices, servers)
        return float(lat["T_S"] + (lat["T_A"] if aggregated else 0.0))

    rec = run_split(cfg, ds, device="cpu", clock=clock)
    assert rec["round"] == [0, 3, 6, 7] and rec["device"] == "cpu"
    assert rec["epoch"] == pytest.approx([r * 23 / 2000 for r in rec["round"]])
    lat = round_latency(profile, cfg.batch_sizes, cfg.cuts, devices, servers)
    assert rec["sim_s"][-1] == pytest.approx(float(total_latency(7, 3, lat["T_S"], lat["T_A"])))   # eq. 40
    assert [a for _, a in calls] == [r % 3 == 0 for r in range(1, 8)]
    assert all(0 <= a <= 1 for a in rec["test_acc"]) and rec["elapsed_s"] == sorted(rec["elapsed_s"])
    assert rec == run_split(cfg, ds, device="cpu", clock=clock) | {"elapsed_s": rec["elapsed_s"]}


def test_run_split_stop_hook_ends_the_run_at_that_evaluation(fmnist):
    ds = TensorDataset("fashion-mnist", fmnist.x_train[:2000], fmnist.y_train[:2000], fmnist.x_test[:300],
                       fmnist.y_test[:300], fmnist.classes, fmnist.source)
    cfg = SplitConfig(width=0.0625, num_devices=3, batch_sizes=(4, 6, 5), cuts=(2, 5, 9), interval=2, lr=0.05,
                      rounds=8, eval_every=2)
    seen = []

    def stop(rec):
        seen.append(list(rec["round"]))
        return rec["round"][-1] == 4

    short = run_split(cfg, ds, device="cpu", stop=stop)
    full = run_split(cfg, ds, device="cpu")
    assert seen == [[0, 2], [0, 2, 4]]                     # asked after every evaluation but round 0, then stopped
    assert short["round"] == [0, 2, 4] and full["round"] == [0, 2, 4, 6, 8]
    for k in ("epoch", "test_acc", "test_loss", "train_loss"):    # the same run up to the stop
        assert short[k] == full[k][:3]


def test_compiled_stacked_equals_literal_reference(fmnist, float64, tmp_path, monkeypatch):
    """The compiled variants (``torch.compile`` of each grouped unit, :data:`fedlib.split.backends.COMPILED_VARIANTS`;
    here both options, channels-last and compiled) compute the same DTFL-like round as the literal reference in
    float64 (equal batch sizes: one compiled graph per unit). Inductor's on-disk cache is the test's own: a kernel
    cached under another ATEN_CPU_CAPABILITY setting failed to load in this one (torch 2.14, seen here)."""
    pytest.importorskip("torch._inductor")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    backend = "stacked_cl_compile"
    st, ref = run_both(fmnist, rounds=2, tol=1e-9, backend=backend, interval=2, mode="copies", local_loss=True,
                       cuts=(2, 5, 5, 16), batch_sizes=(5, 5, 5, 5), optimizer="adam", lr=1e-3, eps=1e-4)
    assert_same(st, ref, atol=1e-9)
    assert any(u.__dict__.get("_compiled") is not None for u in st.grouped.values())
