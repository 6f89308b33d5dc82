"""DTFL's baselines (FedAvg, FedYogi, SplitFed, FedGKT) in DTFL's time model (:mod:`fedlib.dtfl.timing`, eq. 5):
the same units (FLOPs counted by :func:`fedlib.split.profile_model`, bytes of the real tensors, Mbit/s, seconds),
the same speeds (``core_flops`` per client CPU, ``server_flops`` per client on the server) and the same noise model
as :func:`fedlib.dtfl.simulate`, so that the methods' simulated times compare with DTFL's.

Per round (one local epoch of N_k samples) client k spends T_c = N_k·f_c / (CPUs_k·core_flops),
T_s = N_k·f_s / server_flops (f_c, f_s: the per-sample FLOPs ``MethodCosts.client_flops`` / ``.server_flops``; the
speeds ``core_flops`` / ``server_flops`` in FLOP/s) and T_com = 8·(2·model_bytes + N_k·(up_bytes + down_bytes)) / (ν_k·10⁶);
T = T_c + T_com + T_s for the methods whose server compute lies on the client's critical path (SplitFed: every
batch waits for ∂z; FedGKT: the server trains on the uploaded features, then returns its logits) and
T = T_c + T_com otherwise (FedAvg, FedYogi: no server compute; the server's averaging / Yogi step is not counted).

**Choices**: FedGKT's client also runs one forward pass over its N_k samples to extract features and logits and
the server one forward pass to compute the returned logits; both are counted (client_flops = fwd + bwd + fwd of
the client model; server_flops = ``server_epochs``·(fwd + bwd) + fwd of the server model). FedGKT's server trains
one model on all clients' features one after another; at ``server_flops`` per client that takes Σ_k N_k·f /
(K·server_flops), which equals the per-client N_k·f / server_flops used here when the N_k are equal; under a
Dirichlet partition the straggler's larger N_k makes this charge FedGKT's server more than the shared model's
average (a bias against FedGKT in non-IID settings, stated in ``notebooks/dtfl/README.md``).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..core.validate import ParameterTypeError, check_bool, check_choice, check_float, check_int
from ..split import profile_model
from .scheduler import check_system
from .timing import CORE_FLOPS, SERVER_FLOPS, _state_bytes, check_resources

METHODS = ("fedavg", "fedyogi", "splitfed", "fedgkt")
LABEL_BYTES = 8   # one int64 label


@dataclass(frozen=True)
class MethodCosts:
    """Per-sample and per-round costs of one method (module docstring).

    Attributes:
        method: one of :data:`METHODS`. client_flops / server_flops: training FLOPs per sample on the client /
        the server. up_bytes / down_bytes: bytes per sample client -> server (SplitFed: z + label; FedGKT:
        features + client logits + label) / server -> client (SplitFed: ∂z; FedGKT: server logits).
        model_bytes: state-dict bytes of the model exchanged per direction per round (FedAvg / FedYogi: the
        whole model; SplitFed: md1..md_cut; FedGKT: 0). serial: the server's compute lies on the critical path.
    """

    method: str
    client_flops: float
    server_flops: float
    up_bytes: float
    down_bytes: float
    model_bytes: float
    serial: bool

    def __post_init__(self):
        check_choice("method", self.method, METHODS)
        for name in ("client_flops", "server_flops", "up_bytes", "down_bytes", "model_bytes"):
            object.__setattr__(self, name, check_float(name, getattr(self, name), 0))
        check_bool("serial", self.serial)


def _sequential(name: str, model, units: int | None = None) -> nn.Sequential:
    if not isinstance(model, nn.Sequential) or (units is not None and len(model) != units):
        raise ParameterTypeError(f"{name} must be an nn.Sequential" + (f" of {units} units" if units else "")
                                 + f", got {type(model).__name__}"
                                 + (f" of {len(model)} units" if isinstance(model, nn.Sequential) else ""))
    return copy.deepcopy(model)


def _total(net: nn.Sequential, shape: tuple) -> tuple[float, float]:
    prof = profile_model(net, shape, "adam")
    return float(prof.fwd_flops[-1]), float(prof.bwd_flops[-1])


def _bytes(t: torch.Tensor) -> int:
    return t[0].numel() * t.element_size()


def method_costs(method: str, model: nn.Sequential, input_shape: tuple, num_classes: int, splitfed_cut: int = 2,
                 gkt_client: nn.Sequential | None = None, gkt_server: nn.Sequential | None = None,
                 server_epochs: int = 1) -> MethodCosts:
    """Measure :class:`MethodCosts` of ``method`` on the global ``model`` (8 modules md1..md8) for samples of
    ``input_shape`` (C, H, W): FLOPs from :func:`fedlib.split.profile_model` (fwd + bwd, as
    :func:`fedlib.dtfl.tier_costs` counts them), bytes from a forward of 2 real samples.

    Args:
        splitfed_cut: SplitFed's modules on the client, 1..7 (Sec. 4.1: 2). gkt_client / gkt_server: FedGKT's
            models (:func:`fedlib.dtfl.fedgkt.gkt_client_model` / ``gkt_server_model``), needed for ``fedgkt``
            only (ignored otherwise); the server's input shape is the client features'. server_epochs: FedGKT's
            server epochs per round (>= 1).

    Raises:
        ValueError / ParameterTypeError: unknown method, a model that is not an ``nn.Sequential`` (8 units for
            ``model``), a missing FedGKT model, bad shape, num_classes, cut or server_epochs (naming them).
    """
    check_choice("method", method, METHODS)
    model = _sequential("model", model, 8)
    shape = tuple(check_int(f"input_shape[{i}]", v, 1) for i, v in enumerate(tuple(input_shape)))
    if len(shape) != 3:
        raise ValueError(f"input_shape must be (C, H, W), got {input_shape!r}")
    check_int("num_classes", num_classes, 2)
    cut = check_int("splitfed_cut", splitfed_cut, 1, 7)
    epochs = check_int("server_epochs", server_epochs, 1)
    x = torch.zeros(2, *shape)
    if method == "fedgkt":
        client = _sequential("gkt_client", gkt_client)
        server = _sequential("gkt_server", gkt_server)
        with torch.no_grad():
            feats = client.eval()[:-1](x)
            c_logits, s_logits = client[-1](feats), server.eval()(feats)
        for name, out in (("gkt_client", c_logits), ("gkt_server", s_logits)):
            if tuple(out.shape) != (2, num_classes):
                raise ValueError(f"{name} must output [batch, num_classes = {num_classes}], got {tuple(out.shape)}")
        cf, cb = _total(client, shape)
        sf, sb = _total(server, tuple(feats.shape[1:]))
        return MethodCosts(method, cf + cb + cf, epochs * (sf + sb) + sf,
                           float(_bytes(feats) + _bytes(c_logits) + LABEL_BYTES), float(_bytes(s_logits)), 0.0, True)
    prof = profile_model(model, shape, "adam")
    fb = prof.fwd_flops + prof.bwd_flops
    if method in ("fedavg", "fedyogi"):
        return MethodCosts(method, float(fb[-1]), 0.0, 0.0, 0.0, float(_state_bytes(model)), False)
    with torch.no_grad():
        z = model.eval()[:cut](x)
    return MethodCosts(method, float(fb[cut - 1]), float(fb[-1] - fb[cut - 1]), float(_bytes(z) + LABEL_BYTES),
                       float(_bytes(z)), float(_state_bytes(*model[:cut])), True)


def _check_costs(costs) -> MethodCosts:
    if not isinstance(costs, MethodCosts):
        raise ParameterTypeError(f"costs must be MethodCosts, got {type(costs).__name__}")
    return costs


def method_times(costs: MethodCosts, cpus, mbps, samples, core_flops: float = CORE_FLOPS,
                 server_flops: float = SERVER_FLOPS) -> dict:
    """Per-client times of one round (seconds; module docstring), arrays broadcast to ``[..., K]``.

    Args:
        costs: :func:`method_costs`. cpus: CPUs per client (> 0). mbps: link speed per client (Mbit/s, > 0).
        samples: N_k >= 1. core_flops / server_flops: FLOP/s of one client CPU / of the server per client (> 0).

    Returns:
        ``{"T_c", "T_s", "T_com", "T"}``; T = T_c + T_com (+ T_s when ``costs.serial``).

    Raises:
        ValueError / ParameterTypeError: cpus / mbps not finite > 0, samples < 1, bad speeds (naming them).
    """
    c = _check_costs(costs)
    core = check_float("core_flops", core_flops, 0, low_open=True)
    server = check_float("server_flops", server_flops, 0, low_open=True)
    cpus, mbps, n = np.broadcast_arrays(*check_resources(cpus, mbps, samples))
    t_c = n * c.client_flops / (cpus * core)
    t_s = n * c.server_flops / server
    t_com = 8 * (2 * c.model_bytes + n * (c.up_bytes + c.down_bytes)) / (mbps * 1e6)
    return {"T_c": t_c, "T_s": t_s, "T_com": t_com, "T": t_c + t_com + (t_s if c.serial else 0)}


def simulate_method(costs: MethodCosts, profiles: tuple, profile_idx, samples, rng: np.random.Generator,
                    noise: float = 0.05, participants=None, core_flops: float = CORE_FLOPS,
                    server_flops: float = SERVER_FLOPS) -> dict:
    """Run ``costs.method``'s system for ``R`` rounds (no training): each client's times and the straggler.

    Args:
        costs: :func:`method_costs`. profiles: the :class:`fedlib.dtfl.ResourceProfile` set. profile_idx:
            ``[R, K]`` indices into ``profiles``. samples: ``[K]`` N_k. rng: the ``system`` stream. noise: σ >= 0;
            T_c carries DTFL's noise model, exp(σ·ε), ε ~ N(0, 1) per client and round, drawn for every client
            (participant or not) so that the stream is consumed as :func:`fedlib.dtfl.simulate` consumes it.
            participants: ``[R, K]`` bools (None = all). core_flops, server_flops: :func:`method_times`.

    Returns:
        ``T_c`` (with noise), ``T_s``, ``T_com``, ``T`` (``[R, K]``), ``round_s`` ``[R]`` (the largest T among
        the round's participants), ``straggler`` ``[R]``, ``comp_s`` / ``comm_s`` ``[R]`` (the straggler's
        T − T_com and T_com; they add up to ``round_s``). Lists, JSON-ready.

    Raises:
        ValueError / ParameterTypeError: bad shapes, indices, noise, participants (naming them).
    """
    c = _check_costs(costs)
    sys = check_system(profiles, profile_idx, samples, rng, noise, participants)
    idx, n, noise, part, cpus, mbps = (sys[key] for key in ("profile_idx", "samples", "noise", "participants",
                                                             "cpus", "mbps"))
    rounds, k = idx.shape
    t = method_times(c, cpus, mbps, np.broadcast_to(n, (rounds, k)), core_flops, server_flops)
    t_c = np.stack([t["T_c"][r] * np.exp(noise * rng.standard_normal(k)) for r in range(rounds)])
    total = t_c + t["T_com"] + (t["T_s"] if c.serial else 0)
    strag = np.where(part, total, -np.inf).argmax(1)
    rows = np.arange(rounds)
    return {"T_c": t_c.tolist(), "T_s": t["T_s"].tolist(), "T_com": t["T_com"].tolist(), "T": total.tolist(),
            "round_s": total[rows, strag].tolist(), "straggler": strag.tolist(),
            "comp_s": (total - t["T_com"])[rows, strag].tolist(), "comm_s": t["T_com"][rows, strag].tolist()}
