"""The grouped layout of the stacked backend (fedlib.split.stacked_layers): one call for G devices equals G
separate calls of the unit with each device's parameters and buffers (float64), for the layers with a grouped
form and for a unit that falls back to vmap."""
import copy

import pytest
import torch
from torch import nn
from torch.func import functional_call
from torchvision.models.resnet import Bottleneck, conv1x1

from fedlib.split.ops import engine_template
from fedlib.split.stacked_layers import _GConv, _Vmapped, call, grouped, per_device, to_grouped

pytestmark = pytest.mark.usefixtures("one_thread")

G, B = 3, 4


def _units():
    torch.manual_seed(0)
    block = Bottleneck(8, 4, 2, nn.Sequential(conv1x1(8, 16, 2), nn.BatchNorm2d(16)))
    vgg_like = nn.Sequential(nn.Conv2d(8, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(inplace=True),
                             nn.MaxPool2d(2, 2, ceil_mode=True), nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(),
                             nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3, bias=False))
    other = nn.Sequential(nn.Conv2d(8, 6, 3), nn.GroupNorm(2, 6), nn.ReLU())      # no grouped form: vmap
    mixing = nn.Sequential(nn.Conv2d(8, 6, 3), nn.Softmax(dim=1))                 # no parameters, mixes channels
    return {"bottleneck": block, "vgg_like": vgg_like, "fallback": other, "channel_mixing": mixing}


@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels-last"])
@pytest.mark.parametrize("name", ["bottleneck", "vgg_like", "fallback", "channel_mixing"])
def test_grouped_call_equals_one_call_per_device(float64, name, channels_last):
    unit = engine_template(_units()[name]).double()
    gen = torch.Generator().manual_seed(1)
    # each device its own parameters and running statistics
    states = []
    for _ in range(G):
        s = {k: v.detach().clone() for k, v in unit.state_dict().items()}
        for k, v in s.items():
            if v.is_floating_point():
                s[k] = v + 0.3 * torch.randn(v.shape, generator=gen, dtype=v.dtype).abs()
        states.append(s)
    x = torch.randn(G, B, 8, 9, 9, generator=gen, dtype=torch.float64)
    stacked = {k: torch.stack([s[k] for s in states]).requires_grad_(states[0][k].is_floating_point()
                                                                     and "running" not in k)
               for k in states[0]}
    params = {k: v for k, v in stacked.items()}
    g_unit = grouped(unit, channels_last=channels_last)
    assert isinstance(g_unit, _Vmapped) == (name in ("fallback", "channel_mixing"))
    convs = [m for m in g_unit.modules() if isinstance(m, _GConv)]
    assert all(m.channels_last == channels_last for m in convs) and (convs or isinstance(g_unit, _Vmapped))
    out = per_device(call(g_unit, params, to_grouped(x), G), G)
    for i in range(G):
        ref_state = {k: v.clone().requires_grad_(v.is_floating_point() and "running" not in k)
                     for k, v in states[i].items()}
        ref = functional_call(copy.deepcopy(unit), ref_state, (x[i],))
        torch.testing.assert_close(out[i], ref, atol=1e-12, rtol=0)
        # buffers: the device's running statistics and batch count updated as its own layer would
        for k, v in ref_state.items():
            if "running" in k or "num_batches" in k:
                torch.testing.assert_close(stacked[k][i], v, atol=1e-12, rtol=0, msg=k)
        # gradients of the device's parameters
        names = [k for k, v in ref_state.items() if v.requires_grad]
        gi = torch.autograd.grad(ref.square().sum(), [ref_state[k] for k in names])
        gg = torch.autograd.grad(out[i].square().sum(), [stacked[k] for k in names], retain_graph=True)
        for k, a, b in zip(names, gg, gi):
            torch.testing.assert_close(a[i], b, atol=1e-10, rtol=0, msg=k)
            others = [r for r in range(G) if r != i]
            assert a[others].abs().max() == 0, k                                 # devices do not mix


def test_layout_round_trip():
    x = torch.arange(G * B * 2 * 3 * 3, dtype=torch.float64).view(G, B, 2, 3, 3)
    g = to_grouped(x)
    assert g.shape == (B, G * 2, 3, 3)
    torch.testing.assert_close(g[:, 2:4], x[1])                                 # device 1's channels 2..3
    torch.testing.assert_close(per_device(g, G), x)


def test_channels_last_convolution_keeps_nhwc_storage():
    """A channels-last grouped convolution returns NHWC storage (what the variant is for), and the stacked_cl
    backend builds its units that way."""
    from fedlib.split.backends import split_backend
    from fedlib.split import SplitConfig, build_model
    conv = grouped(nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU()), channels_last=True)
    params = {k: torch.stack([v.detach()] * G) for k, v in nn.Sequential(nn.Conv2d(3, 4, 3, padding=1),
                                                                         nn.BatchNorm2d(4), nn.ReLU()).state_dict().items()}
    out = call(conv, params, torch.randn(B, G * 3, 6, 6), G)
    assert out.is_contiguous(memory_format=torch.channels_last) and not out.is_contiguous()
    cfg = SplitConfig(model="vgg16", width=0.0625, num_devices=2, batch_sizes=(2, 2), cuts=(3, 3), seed=0)
    for backend, want in (("stacked", False), ("stacked_cl", True)):
        st = split_backend(backend).init_state(cfg, build_model(cfg, 1, 28, 10), (1, 28, 28))
        assert st.layout["channels_last"] is want
