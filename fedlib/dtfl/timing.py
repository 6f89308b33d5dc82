"""DTFL's time model (Sec. 3.3, eq. 5): per-tier costs of the real model and tensors (:class:`TierCosts`), the
clients' resource profiles (Sec. 4.1) and the per-client round time T_k(m) = max{T_c + T_com, T_s + T_com}
(:class:`TimeModel`).

Units: FLOPs (multiply-add = 2, counted by :func:`fedlib.split.profile_model`), bytes for tensors, bit/s for
links (1 Mbps = 10^6 bit/s), seconds. Per round (one local epoch of N_k samples) client k in tier m (cut c =
modules on the client) spends:

- T_c = N_k · (fwd + bwd FLOPs of md1..md_c + auxiliary head) / (CPUs_k · ``core_flops``) -- the shared
  terms T_F + T_B of :func:`fedlib.split.device_terms` plus the auxiliary head;
- T_com = (model download + upload: the bytes of the client-side model's and the auxiliary head's state
  tensors, parameters and BN buffers) · 8 / ν_k + N_k · (smashed data z + int64 label bytes per sample) · 8 / ν_k
  -- z through the shared T_aU term; no gradient comes back (local loss); up- and downlink both at ν_k;
- T_s = N_k · (fwd + bwd FLOPs of md_{c+1}..md8) / ``server_flops`` (the server trains every client's copy in
  parallel, each at ``server_flops``; eq. 5 takes T_s per client).

Speeds (choices; the paper gives CPU counts, not FLOP/s): ``core_flops`` = 30 GFLOP/s per CPU, measured on this
project's machines (spec: ResNet-56 bottleneck trains 150 samples/s on 2 threads at 0.40 counted GFLOP per
sample -> 60 GFLOP/s for 2 cores); ``server_flops`` = 50 GFLOP/s per client copy (spec: an H100 trains
ResNet-56 at 1,300 samples/s in a per-client loop -> 0.52 TFLOP/s, shared by 10 client copies). These are the
defaults and the ``paper`` profile's values; the ``quick`` (and ``smoke``) notebooks run at their parameters'
defaults, 3 GFLOP/s per CPU and 5 GFLOP/s per client copy: ResNet-20 at width 0.5 on 28×28 costs 38.5 MFLOP
(fwd + bwd) per sample, 0.038 of ResNet-110 on 32×32 (1,004 MFLOP), while its largest smashed data are 0.38 of
ResNet-110's, so both speeds are scaled by 0.038 / 0.38 = 0.1 to keep the paper model's compute / communication
balance (``notebooks/dtfl/README.md``).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..core.validate import ParameterTypeError, check_array, check_choice, check_float, check_int, check_list
from ..split import EdgeDevices, LayerProfile, device_terms, profile_model
from .tiers import aux_head_factory, tier_cuts

CORE_FLOPS = 30e9     # per client CPU, measured here (module docstring)
SERVER_FLOPS = 50e9   # per client copy on the server (module docstring)


@dataclass(frozen=True)
class ResourceProfile:
    """A client's resources: ``cpus`` (> 0; fractions are CPU quotas) and link speed ``mbps`` (> 0, Mbit/s, up
    and down).

    Raises:
        ValueError / ParameterTypeError: cpus or mbps not a finite number > 0 (naming it).
    """

    cpus: float
    mbps: float

    def __post_init__(self):
        for name in ("cpus", "mbps"):
            object.__setattr__(self, name, check_float(name, getattr(self, name), 0, low_open=True))

    @property
    def name(self) -> str:
        return f"{self.cpus:g} CPU / {self.mbps:g} Mbps"


#: Sec. 4.1's five profiles (20 % of the clients each at the start)
PROFILES = (ResourceProfile(4, 100), ResourceProfile(2, 30), ResourceProfile(1, 30), ResourceProfile(0.2, 30),
            ResourceProfile(0.1, 10))
#: profile sets: ``all`` (Sec. 4.1), Table 1's / Fig. 3's ``case1`` and ``case2``
CASES = {"all": PROFILES,
         "case1": (ResourceProfile(2, 30), ResourceProfile(1, 30), ResourceProfile(0.2, 30)),
         "case2": (ResourceProfile(4, 100), ResourceProfile(1, 10))}


def case_profiles(case: str) -> tuple:
    """The profiles of ``case`` (``all``, ``case1``, ``case2``). Raises ``ValueError`` for an unknown name."""
    return CASES[check_choice("case", case, tuple(CASES))]


def check_resources(cpus, mbps, samples) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-client CPUs, link speeds (Mbit/s) and sample counts as float arrays (shapes unchanged).

    Raises:
        ValueError: cpus or mbps not finite numbers > 0, samples not finite numbers >= 1 (naming them).
    """
    arrays = {}
    for name, v in (("cpus", cpus), ("mbps", mbps), ("samples", samples)):
        arrays[name] = check_array(name, v, allow_inf=True, nonempty=True)
    cpus, mbps, n = arrays["cpus"], arrays["mbps"], arrays["samples"]
    for name, v in (("cpus", cpus), ("mbps", mbps)):
        if not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise ValueError(f"{name} must be finite numbers > 0, got {v.tolist()}")
    if not np.all(np.isfinite(n)) or np.any(n < 1):
        raise ValueError(f"samples must be >= 1 per client, got {n.tolist()}")
    return cpus, mbps, n


@dataclass(frozen=True)
class TierCosts:
    """Per-sample costs of each tier of one model (arrays of length M, index m-1 = tier m).

    Attributes:
        num_tiers: M. cuts: modules on the client per tier. profile: the model's
        :class:`fedlib.split.LayerProfile` (FLOPs per module). aux_flops: fwd + bwd FLOPs of the auxiliary head.
        client_flops: fwd + bwd FLOPs of md1..md_c + auxiliary head. server_flops: fwd + bwd of md_{c+1}..md8.
        smashed_bytes: z per sample. label_bytes: one int64 label. model_bytes: client-side model + auxiliary
        head state (parameters and buffers), one direction.
    """

    num_tiers: int
    cuts: np.ndarray
    profile: LayerProfile
    aux_flops: np.ndarray
    client_flops: np.ndarray
    server_flops: np.ndarray
    smashed_bytes: np.ndarray
    label_bytes: int
    model_bytes: np.ndarray


def _state_bytes(*modules: nn.Module) -> int:
    return sum(t.numel() * t.element_size() for m in modules for t in m.state_dict().values())


def tier_costs(model: nn.Sequential, input_shape: tuple, num_tiers: int, num_classes: int) -> TierCosts:
    """Measure :class:`TierCosts` of ``model`` (8 modules) for M = ``num_tiers``: FLOPs from
    :func:`fedlib.split.profile_model`, bytes from the real tensors (a forward of 2 samples; z's dtype and
    shape, the state dicts of the client-side modules and of the auxiliary head).

    Raises:
        ValueError: M outside 1..7, a model without 8 modules, fewer than 2 classes, an ``input_shape`` the model
            does not take (torch's reason quoted), ``num_classes`` other than the model's output width.
    """
    if not isinstance(model, nn.Sequential) or len(model) != 8:
        raise ValueError(f"model must be an nn.Sequential of the 8 modules md1..md8, got {type(model).__name__} "
                         f"of {len(model) if isinstance(model, nn.Sequential) else '?'} units")
    shape = check_list("input_shape", input_shape, lambda k, v: check_int(k, v, 1))
    if len(shape) != 3:
        raise ValueError(f"input_shape must be (C, H, W) of one sample, got {input_shape!r}")
    cuts = np.asarray(tier_cuts(num_tiers))
    head = aux_head_factory(num_classes)
    model = copy.deepcopy(model)
    try:
        prof = profile_model(model, tuple(input_shape), "adam")
    except RuntimeError as exc:   # a conv's channel count or a linear layer's width that the input does not give
        raise ValueError(f"input_shape {tuple(input_shape)} (C, H, W) does not fit the model: {exc}") from None
    with torch.no_grad():
        h, smashed, heads = torch.zeros(2, *input_shape), [], []
        for unit in model.eval():
            h = unit(h)
            smashed.append(h[0].numel() * h.element_size())
            heads.append(head(0, tuple(h.shape[1:])) if h.dim() == 4 else None)
    if h.shape[1:] != (num_classes,):
        raise ValueError(f"num_classes = {num_classes} does not match the model's output, {tuple(h.shape[1:])} "
                         "per sample")
    # auxiliary head Linear(C, K): forward 2CK, backward 4CK (weight and input gradients); the pool is not counted
    aux = np.array([6 * heads[c - 1][-1].in_features * num_classes for c in cuts], float)
    fb = prof.fwd_flops + prof.bwd_flops
    client = fb[cuts - 1] + aux
    server = fb[-1] - fb[cuts - 1]
    label = torch.zeros(1, dtype=torch.int64).element_size()
    model_bytes = np.array([_state_bytes(*model[:c], heads[c - 1]) for c in cuts], float)
    return TierCosts(int(len(cuts)), cuts, prof, aux, client, server, np.array([smashed[c - 1] for c in cuts], float),
                     label, model_bytes)


@dataclass(frozen=True)
class TimeModel:
    """Eq. 5 on :class:`TierCosts` with the speeds of the module docstring.

    Attributes:
        costs: the tiers' costs. core_flops: FLOP/s of one client CPU (> 0). server_flops: FLOP/s of the server
        for one client's copy (> 0).
    """

    costs: TierCosts
    core_flops: float = CORE_FLOPS
    server_flops: float = SERVER_FLOPS

    def __post_init__(self):
        if not isinstance(self.costs, TierCosts):
            raise ParameterTypeError(f"costs must be TierCosts, got {type(self.costs).__name__}")
        for name in ("core_flops", "server_flops"):
            check_float(name, getattr(self, name), 0, low_open=True)

    def times(self, tiers, cpus, mbps, samples) -> dict:
        """Per-client times of one round (seconds), arrays broadcast to ``[..., K]``.

        Args:
            tiers: tier m in 1..M per client (``[..., K]``; ``[M, K]`` gives every tier at once).
            cpus: CPUs per client (> 0). mbps: link speed per client (Mbit/s, > 0). samples: N_k >= 1.

        Returns:
            ``{"T_c", "T_s", "T_com", "T"}`` with T = max(T_c + T_com, T_s + T_com) (eq. 5).

        Raises:
            ValueError: a tier outside 1..M, cpus / mbps not > 0, samples < 1, shapes that do not broadcast to one
                ``[..., K]`` (naming the four shapes).
        """
        c = self.costs
        tiers = np.asarray(tiers)
        if not np.issubdtype(tiers.dtype, np.integer) or np.any(tiers < 1) or np.any(tiers > c.num_tiers):
            raise ValueError(f"tiers must be integers in 1..M = 1..{c.num_tiers}, got {tiers.tolist()}")
        cpus, mbps, n = check_resources(cpus, mbps, samples)
        try:
            shape = np.broadcast_shapes(tiers.shape, cpus.shape, mbps.shape, n.shape)
        except ValueError:
            raise ValueError("tiers, cpus, mbps and samples must hold one entry per client (K each, or one number "
                             f"for all), got shapes {tiers.shape}, {cpus.shape}, {mbps.shape} and {n.shape}") from None
        if not shape:
            raise ValueError("tiers, cpus, mbps and samples: at least one must be a [K] array (one entry per client), "
                             "got only single numbers")
        for name, v in (("cpus", cpus), ("mbps", mbps), ("samples", n)):
            if v.ndim and v.shape[-1] != shape[-1]:   # a [K, 1] column would broadcast into K scenarios x K clients
                raise ValueError(f"{name} must be one number or hold one entry per client on its last axis (K = "
                                 f"{shape[-1]}), got shape {v.shape}")
        tiers, cpus, mbps, n = (np.broadcast_to(v, shape) for v in (tiers, cpus, mbps, n))
        k, rate = tiers - 1, mbps * 1e6
        flat = lambda v: np.ascontiguousarray(v).reshape(-1, shape[-1])
        dev = [EdgeDevices(f, r, r, r, r, np.ones(shape[-1])) for f, r in
               zip(flat(cpus * self.core_flops), flat(rate))]
        terms = [device_terms(c.profile, b, cut, d) for b, cut, d in zip(flat(n), flat(c.cuts[k]), dev)]
        shared = {key: np.stack([t[key] for t in terms]).reshape(shape) for key in ("T_F", "T_B", "T_aU")}
        t_c = shared["T_F"] + shared["T_B"] + n * c.aux_flops[k] / (cpus * self.core_flops)
        t_com = shared["T_aU"] + 8 * (n * c.label_bytes + 2 * c.model_bytes[k]) / rate
        t_s = n * c.server_flops[k] / self.server_flops
        return {"T_c": t_c, "T_s": t_s, "T_com": t_com, "T": np.maximum(t_c + t_com, t_s + t_com)}

    def ratios(self) -> dict:
        """Table 2's normalised per-sample client- and server-side training cost of each tier relative to tier 1
        (from the profiled FLOPs; independent of the speeds): ``{"client": [M], "server": [M]}``."""
        c = self.costs
        return {"client": c.client_flops / c.client_flops[0], "server": c.server_flops / c.server_flops[0]}
