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


def _state(backend, mode="copies"):
    from fedlib.split.backends import split_backend
    fns = split_backend(backend)
    cfg = _cfg((4, 4, 4), mode=mode)
    torch.manual_seed(0)
    return fns, fns.init_state(cfg, build_model(cfg, 1, 28, 10), SHAPE)


BACKENDS = ("loop", "stacked")


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_device_absent_is_named_before_torch_sees_the_round(backend):
    """A round where every device sits out gets the engine's own message on both backends (it once reached
    torch.cat's 'expected a non-empty list')."""
    fns, st = _state(backend)
    with pytest.raises(ValueError, match="at least one device must train"):
        fns.train_round(st, [None] * 3, [None] * 3)
    assert st.round == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_inputs_of_another_dtype_are_refused_naming_the_dtypes(backend):
    """float64 inputs to a float32 model are named (they once reached torch's 'Input type (double) and bias type
    (float) should be the same')."""
    from fedlib.core.validate import ParameterTypeError
    fns, st = _state(backend)
    xs, ys = _batches((4, 4, 4))
    with pytest.raises(ParameterTypeError, match=r"xs\[0\] must have the model's dtype torch.float32, got torch.float64"):
        fns.train_round(st, [x.double() for x in xs], ys)
    assert st.round == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_inputs_on_another_device_are_refused(backend):
    fns, st = _state(backend)
    xs, ys = _batches((4, 4, 4))
    with pytest.raises(ValueError, match=r"on the model's device cpu, got meta and cpu"):
        fns.train_round(st, [xs[0].to("meta"), *xs[1:]], ys)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["common", "copies"])
@pytest.mark.parametrize("weights", [[0.5, float("nan"), 0.5], [1.5, -0.5, 0.0], [0.2, 0.2]])
def test_bad_weights_are_refused_in_every_mode(backend, mode, weights):
    """Aggregation weights that are NaN, negative or of the wrong length are refused in every mode, before the
    round (outside ``copies`` mode the round does not use them, so they once passed unseen)."""
    fns, st = _state(backend, mode)
    with pytest.raises(ValueError, match="weights"):
        fns.train_round(st, *_batches((4, 4, 4)), weights=weights)
    assert st.round == 0


@pytest.mark.parametrize("cuts, needle", [
    ([[1, 2, 3], [1, 2]], "cuts must be [rounds, K = 3]"),
    ([[1, 2, 3], "abc"], "cuts must be [rounds, K = 3]"),
    ([[1, 2, 3.5]], "cuts must be integers in 1..7"),
    ([[1, 2, float("nan")]], "cuts must be integers in 1..7"),
])
def test_a_cuts_schedule_is_checked_for_shape_before_numpy(cuts, needle):
    from fedlib.dtfl.training import check_cuts
    with pytest.raises(ValueError) as err:
        check_cuts(cuts, 3)
    assert needle in str(err.value)


@pytest.mark.parametrize("cuts", [[1, [2], 3], [[1, 2, 3]]])
def test_a_ragged_decision_is_named(cuts):
    from fedlib.split.config import validate_decision
    with pytest.raises(ValueError, match="cuts must have length N = 3"):
        validate_decision([4, 4, 4], cuts, 3, 10, names=("b", "cuts"))
