"""The split engine's hooks against the literal per-device reference (tests/reference_split.py: Reference), float64:
DTFL's local-loss step with its privacy hooks (``fedlib.dtfl.local_loss``, Sec. 4.4: ``client_loss``,
``smashed_transform``), non-uniform weights (eq. 7, server copies,
auxiliary heads, global model) and ``set_decision`` changing cuts and batch sizes between rounds (HASFL's
reassignments, DTFL's tier changes), in both modes. Engine == reference on every parameter and buffer to 1e-10."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fedlib.core.seeding import torch_generator
from fedlib.dtfl.local_loss import local_loss_step
from fedlib.dtfl.privacy import distance_correlation, patch_shuffle
from fedlib.split import SplitConfig, build_model
from fedlib.split.records import client_partition, draw_batches
from tests.reference_split import Reference
from fedlib.split.backends import BACKENDS, device_aux, split_backend
from fedlib.split.stacked import StackedState

pytestmark = pytest.mark.usefixtures("one_thread", "float64")

ATOL = 1e-10
W4 = (0.4, 0.3, 0.2, 0.1)


def aux_head(cut, shape):
    return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(shape[0], 10))


def client_loss(out, y, x, z):
    """An extra term on the smashed data: CE + 0.5·dCor(x, z) (DTFL's NoPeek term) + 0.01·mean(z²)."""
    return F.cross_entropy(out, y) + 0.5 * distance_correlation(x, z) + 0.01 * z.square().mean()


class ShuffleNoise:
    """Deterministic transform with its own CPU generator: patch shuffling (7×7 blocks on 7×7 maps, 2×2
    otherwise) then additive N(0, 0.1²) noise, drawn per call in the caller's device order."""

    def __init__(self, seed):
        self.gen = torch.Generator().manual_seed(seed)

    def __call__(self, z):
        z = patch_shuffle(z, 7 if z.shape[-1] % 7 == 0 else 2, self.gen)
        return z + 0.1 * torch.randn(z.shape, generator=self.gen, dtype=z.dtype)


def flip_scale(z):
    """A transform without randomness: its result does not depend on the order the devices are called in."""
    return 0.9 * torch.flip(z, dims=[-1]) + 0.01


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Every test here runs against each backend of the engine."""
    return request.param


def run_both(ds, rounds=4, weights=None, decisions=None, hooks=False, sit_out=None, backend="loop", **kw):
    base = dict(model="vgg16", width=0.0625, num_devices=4, batch_sizes=(4, 6, 5, 8), cuts=(2, 5, 5, 9),
                interval=1, lr=0.05, seed=1)
    cfg = SplitConfig(**(base | kw))
    shape = tuple(ds.x_train.shape[1:])
    model = build_model(cfg, shape[0], shape[1], 10)
    head = aux_head if cfg.local_loss else None
    ref = Reference(cfg, model, aux_head=head, input_shape=shape)       # heads built by the reference itself
    f = split_backend(backend)
    st = f.init_state(cfg, model, shape, aux_head=head)
    loss_fn = client_loss if hooks else None
    t_eng, t_ref = ((ShuffleNoise(7), ShuffleNoise(7)) if hooks is True else
                    (flip_scale, flip_scale) if hooks == "deterministic" else (None, None))
    step = local_loss_step(backend, loss_fn, t_eng) if cfg.local_loss else None
    parts = [torch.from_numpy(p) for p in client_partition(cfg, ds.y_train)]
    gen = torch_generator(cfg.seed, "data")
    for r in range(1, rounds + 1):
        if r in (decisions or {}):
            b, cuts = decisions[r]
            f.set_decision(st, b, cuts, weights, seed=cfg.seed)
            ref.set_decision(b, cuts, weights, seed=cfg.seed)
        idx = draw_batches(parts, st.b, gen)
        xs, ys = [ds.x_train[i].to(torch.get_default_dtype()) for i in idx], [ds.y_train[i] for i in idx]
        for i in (sit_out or {}).get(r, ()):           # copies mode: device i sits this round out
            xs[i] = ys[i] = None
        eng = f.train_round(st, xs, ys, weights, local_step=step)
        assert eng == pytest.approx(ref.round(xs, ys, weights, loss_fn, t_ref), abs=ATOL)
        if r % cfg.interval == 0:
            f.aggregate(st, weights)
            ref.aggregate(weights)
    return st, ref, weights


def assert_same(st, ref, weights):
    assert list(st.cuts) == ref.cuts and st.per_device == ref.lc
    stacked = isinstance(st, StackedState)
    gm = split_backend("stacked" if stacked else "loop").global_model
    g1, g2 = gm(st, weights).state_dict(), ref.global_model(weights).state_dict()
    assert g1.keys() == g2.keys()
    for k in g1:
        assert g1[k].dtype == g2[k].dtype
        torch.testing.assert_close(g1[k], g2[k], atol=ATOL, rtol=0, msg=k)
    for i in range(st.num_devices):      # per-device client-specific models, BN statistics, auxiliary heads
        for j in range(st.per_device):
            for k, v in ref._unit_sd(i, j).items():
                torch.testing.assert_close(st.units[j][i][k], v, atol=ATOL, rtol=0, msg=f"device {i} unit {j} {k}")
        head = device_aux(st, i)
        assert (head is None) == (ref.aux[i] is None) if st.local_loss else True
        if st.local_loss and ref.aux[i] is not None:
            for k, v in ref.aux[i].state_dict().items():
                torch.testing.assert_close(head[k], v, atol=ATOL, rtol=0, msg=f"device {i} head {k}")
    for j in range(st.per_device, st.num_units):
        for k, v in ref.common[j - ref.lc].state_dict().items():
            torch.testing.assert_close(st.units[j][0][k], v, atol=ATOL, rtol=0, msg=f"common unit {j} {k}")


@pytest.mark.parametrize("kw", [
    dict(mode="copies", cuts=(2, 5, 5, 16)),           # DTFL's setting: server copies per device, one at cut L
    dict(cuts=(2, 4, 5, 9), interval=2),                # common part after L_c = 9 sees the transformed data
], ids=["copies", "common"])
def test_client_loss_and_smashed_transform_hooks(fmnist, kw, backend):
    st, ref, w = run_both(fmnist, local_loss=True, hooks=True, backend=backend, **kw)
    assert_same(st, ref, w)


@pytest.mark.parametrize("kw", [
    dict(interval=2, momentum=0.9),                     # eq. 7 weighted; the common part keeps the plain mean
    dict(interval=2, batch_sizes=(5, 5, 5, 5)),         # equal b: one native batch norm over [b, G·C] in common
    dict(mode="copies", cuts=(2, 5, 9, 16), interval=3,     # server copies averaged every round with the weights
         sit_out={2: [1], 3: [0, 3]}),                       # (also those of devices sitting the round out)
    dict(mode="copies", cuts=(2, 5, 5, 9), local_loss=True, interval=2),   # heads of one cut: weights renormalised
    dict(mode="copies", cuts=(2, 5, 9, 16), interval=2, momentum=0.9,      # momentum of devices sitting rounds
         sit_out={2: [1], 3: [0, 3]}),                                      # out (their buffers kept)
], ids=["common", "common-equal-b", "copies", "copies-local", "copies-momentum"])
def test_non_uniform_weights(fmnist, kw, backend):
    st, ref, w = run_both(fmnist, weights=W4, backend=backend, **kw)
    assert_same(st, ref, w)


# round 3: devices 1 and 3 change cut (L_c 9 -> 12) and every b changes; round 4: only b changes;
# round 5: device 3 changes again (L_c 12 -> 5: units 6..12 become common, their state restarts)
COMMON_DECISIONS = {3: ((3, 6, 7, 5), (2, 3, 5, 12)), 4: ((2, 2, 9, 4), (2, 3, 5, 12)),
                    5: ((5, 4, 6, 3), (2, 3, 5, 4))}
# DTFL-like: device 0 joins cut 5 (head: average of the devices staying there), device 2 takes cut 2 and device 3
# cut 7 (nobody there: new seeded heads); round 5: device 1 to cut L (no head), device 3 back to 9
LOCAL_DECISIONS = {3: ((3, 6, 7, 5), (5, 5, 2, 7)), 4: ((2, 2, 9, 4), (5, 5, 2, 7)),
                   5: ((5, 4, 6, 3), (5, 16, 2, 9))}


@pytest.mark.parametrize("kw", [
    dict(interval=3, momentum=0.9, weight_decay=1e-3, decisions=COMMON_DECISIONS),
    dict(interval=3, optimizer="adam", lr=1e-3, eps=1e-4, decisions=COMMON_DECISIONS),
    dict(interval=2, local_loss=True, decisions=LOCAL_DECISIONS | {5: ((5, 4, 6, 3), (5, 9, 2, 9))}),
    dict(mode="copies", cuts=(2, 5, 5, 16), interval=2, local_loss=True, optimizer="adam", lr=1e-3, eps=1e-4,
         decisions=LOCAL_DECISIONS),
], ids=["common-sgd", "common-adam", "common-local", "copies-local-adam"])
def test_set_decision_mid_run(fmnist, kw, backend):
    st, ref, w = run_both(fmnist, rounds=6, weights=W4, backend=backend, **kw)
    assert_same(st, ref, w)
    assert st.samples == sum(sum(b) for b in ((4, 6, 5, 8),) * 2 + ((3, 6, 7, 5), (2, 2, 9, 4))
                             + ((5, 4, 6, 3),) * 2)


def test_everything_at_once_dtfl_style(fmnist, backend):
    """copies mode + local loss + both hooks + weights + tier changes + devices sitting steps out (DTFL's
    clients with fewer batches); the transform's draws follow the active devices."""
    st, ref, w = run_both(fmnist, rounds=5, weights=W4, hooks=True, backend=backend, mode="copies", cuts=(2, 5, 5, 16),
                          local_loss=True, interval=2, optimizer="adam", lr=1e-3, eps=1e-4, sit_out={2: [2], 4: [0, 1]},
                          decisions={3: ((3, 6, 7, 5), (5, 5, 2, 7)), 5: ((5, 4, 6, 3), (5, 2, 2, 9))})
    assert_same(st, ref, w)


@pytest.mark.parametrize("kw", [
    # DTFL's privacy runs: every client at one tier with one batch size, so the stacked backend trains all four in
    # one batched call per unit; the random transform's draws then follow device order on both backends
    dict(mode="copies", cuts=(5, 5, 5, 5), batch_sizes=(5, 5, 5, 5), hooks=True),
    # several clients per batched call at two cuts (devices 0-1 at cut 2, 2-3 at cut 5) with an order-free
    # transform, in both modes
    dict(mode="copies", cuts=(2, 2, 5, 5), batch_sizes=(6, 6, 6, 6), hooks="deterministic"),
    dict(cuts=(2, 2, 5, 5), batch_sizes=(6, 6, 6, 6), hooks="deterministic"),
], ids=["one-tier-random", "copies-two-cuts", "common-two-cuts"])
def test_hooks_with_several_clients_in_one_batched_call(fmnist, kw, backend):
    """The distance-correlation loss and a smashed-data transform with several clients sharing one batched call
    of the stacked backend (equal batch sizes), against the literal per-device reference in float64."""
    st, ref, w = run_both(fmnist, rounds=4, weights=W4, local_loss=True, interval=2, **kw, backend=backend)
    assert_same(st, ref, w)


def test_reference_refuses_what_the_engine_refuses(fmnist):
    cfg = SplitConfig(model="vgg16", width=0.0625, num_devices=2, batch_sizes=(2, 2), cuts=(2, 5))
    ref = Reference(cfg, build_model(cfg, 1, 28, 10))
    xs, ys = [fmnist.x_train[:2].double()] * 2, [fmnist.y_train[:2]] * 2
    with pytest.raises(ValueError, match="local_loss"):
        ref.round(xs, ys, client_loss=client_loss)
    with pytest.raises(ValueError, match="copies"):
        ref.round([xs[0], None], ys)
    local = SplitConfig(model="vgg16", width=0.0625, num_devices=2, batch_sizes=(2, 2), cuts=(2, 5), local_loss=True)
    with pytest.raises(ValueError, match="aux_head"):
        Reference(local, build_model(local, 1, 28, 10), [aux_head(2, (4, 14, 14)), aux_head(5, (16, 7, 7))]
                  ).set_decision((2, 2), (3, 5))
