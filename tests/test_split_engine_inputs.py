"""The split engine's inputs: init_state leaves the caller's model alone; train_round takes the per-device BN
segments from the batches it is given (not from the decision's batch sizes) and names a malformed batch."""
import pytest
import torch

from fedlib.split import SplitConfig, build_model, global_units, init_state, train_round

pytestmark = pytest.mark.usefixtures("one_thread")
SHAPE = (1, 28, 28)


def _cfg(batch_sizes, **kw) -> SplitConfig:
    # ResNet-18 (BN in every unit), cuts 2/3/3: units 4..10 are shared, with per-device BN segments
    base = dict(model="resnet18", width=0.0625, num_devices=3, batch_sizes=batch_sizes, cuts=(2, 3, 3), interval=1,
                lr=0.05, seed=2)
    return SplitConfig(**{**base, **kw})


def _batches(sizes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return ([torch.randn(b, *SHAPE, generator=g) for b in sizes],
            [torch.randint(0, 10, (b,), generator=g) for b in sizes])


@pytest.mark.parametrize("mode", ["common", "copies"])
def test_init_state_does_not_change_the_callers_model(mode):
    cfg = _cfg((4, 4, 4), mode=mode)
    torch.manual_seed(0)
    model = build_model(cfg, 1, 28, 10).train()
    before = {k: (v, v.clone()) for k, v in model.state_dict().items()}
    st = init_state(cfg, model, SHAPE)
    train_round(st, *_batches((4, 4, 4)))
    assert st.model is not model
    assert all(m.training for m in model.modules()), "init_state left the caller's model in eval mode"
    after = model.state_dict()
    for k, (tensor, value) in before.items():
        assert after[k] is tensor or after[k].data_ptr() == tensor.data_ptr(), f"{k} was replaced"
        assert torch.equal(after[k], value), f"{k} changed"
        assert after[k].device == value.device


def test_bn_segments_come_from_the_given_batches():
    # a round on batches of sizes (3, 5, 4) is the same whatever the decision's b says (here (4, 4, 4), equal
    # total, so a segmentation from st.b would run silently with the wrong per-device BN statistics)
    xs, ys = _batches((3, 5, 4))
    out = []
    for b in ((4, 4, 4), (3, 5, 4)):
        torch.manual_seed(0)
        cfg = _cfg(b)
        st = init_state(cfg, build_model(cfg, 1, 28, 10), SHAPE)
        loss = train_round(st, xs, ys)
        out.append((loss, global_units(st), st.samples))
    (l1, u1, s1), (l2, u2, s2) = out
    assert l1 == l2 and s1 == s2 == 12
    for a, b in zip(u1, u2):
        assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("xs_sizes, ys_sizes, needle", [
    ((4, 4), (4, 4), "one entry per device (N = 3), got 2 and 2"),
    ((4, 4, 4), (4, 3, 4), "device 1: xs[1] and ys[1] must be equally long non-empty batches (or both None), got 4 and 3"),
    ((4, 4, 0), (4, 4, 0), "device 2: xs[2] and ys[2] must be equally long non-empty batches"),
    ((4, None, 4), (4, 4, 4), "device 1: xs[1] and ys[1]"),
])
def test_train_round_names_a_malformed_batch(xs_sizes, ys_sizes, needle):
    cfg = _cfg((4, 4, 4), mode="copies")
    st = init_state(cfg, build_model(cfg, 1, 28, 10), SHAPE)
    xs = [None if b is None else torch.randn(b, *SHAPE) for b in xs_sizes]
    ys = [None if b is None else torch.zeros(b, dtype=torch.long) for b in ys_sizes]
    with pytest.raises(ValueError) as err:
        train_round(st, xs, ys)
    assert needle in str(err.value)
    assert st.round == 0
