"""Per-device latency terms of split training shared by the papers: compute and transfer times of each device's
part of a cut model, the server's compute for the rest, and the device memory at a cut.

Source: HASFL Sec. V-A, eqs. (28)-(37). Units: FLOP/s, bit/s,
bits, seconds. Per-sample model quantities come from a :class:`fedlib.split.LayerProfile`. Every function
broadcasts over leading dimensions: ``b`` and ``cuts`` may be ``[..., N]`` (e.g. many candidate decisions at
once); reductions over devices use the last axis. How a round composes these terms is each paper's own
(HASFL: :func:`fedlib.hasfl.round_latency`, eqs. 38-40).
"""
from __future__ import annotations

import numpy as np

from ..core.validate import ParameterTypeError
from .profile import LayerProfile
from .system import EdgeDevices, Servers


def _check_b_cuts(profile: LayerProfile, b, cuts) -> tuple[np.ndarray, np.ndarray]:
    """b: numbers >= 1 (C5; +inf allowed, the large-batch limit), never NaN; cuts: integers in 1..L (C3)."""
    if not isinstance(profile, LayerProfile):
        raise ParameterTypeError(f"profile must be a LayerProfile, got {type(profile).__name__}")
    b_arr = np.asarray(b)
    if b_arr.dtype == bool or not (np.issubdtype(b_arr.dtype, np.integer) or np.issubdtype(b_arr.dtype, np.floating)):
        raise ParameterTypeError(f"batch sizes b must be numbers >= 1 (constraint C5), got {b!r}")
    if b_arr.size == 0:
        raise ValueError(f"batch sizes b must not be empty (one per device), got {b!r}")
    b_arr = b_arr.astype(float)
    if np.isnan(b_arr).any() or np.any(b_arr < 1):
        raise ValueError(f"batch sizes b must be >= 1 (constraint C5), not NaN, got {b!r}")
    cuts_arr = np.asarray(cuts)
    if not np.issubdtype(cuts_arr.dtype, np.integer) or np.any(cuts_arr < 1) or np.any(cuts_arr > profile.num_layers):
        raise ValueError(f"cuts must be integers in 1..L = 1..{profile.num_layers} (constraint C3; cut 0 does not "
                         f"exist), got {cuts!r}")
    return b_arr, cuts_arr


def check_decision(profile: LayerProfile, b, cuts, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate a decision: ``b`` and ``cuts`` end with the device axis of length ``n``, b >= 1 (C5), integer
    cuts in 1..L (C3). Returns them as arrays (b as float). Raises ``ValueError`` naming the parameter
    (``ParameterTypeError``, a ``TypeError``, for a profile that is no :class:`LayerProfile` or non-numeric b).
    ``n`` (N >= 1) is not checked again: the callers take it from a checked :class:`EdgeDevices` or the cuts' own
    device axis."""
    b, cuts = _check_b_cuts(profile, b, cuts)
    if b.shape[-1:] != (n,) or cuts.shape[-1:] != (n,):
        raise ValueError(f"b and cuts must end with the device axis of length N = {n}, got {b.shape}, {cuts.shape}")
    return b, cuts


def device_terms(profile: LayerProfile, b, cuts, devices: EdgeDevices) -> dict:
    """Per-device times of one round of split training (seconds, ``[..., N]``).

    ``T_F`` (28) device forward, ``T_aU`` (29) smashed-data upload, ``T_gD`` (32) activation-gradient download,
    ``T_B`` (33) device backward, ``T_cU`` (34) / ``T_cD`` (36) client-side model upload to / download from the
    fed server.

    Raises:
        ValueError: shapes, b < 1, cuts outside 1..L.
    """
    if not isinstance(devices, EdgeDevices):
        raise ParameterTypeError(f"devices must be EdgeDevices, got {type(devices).__name__}")
    b, cuts = check_decision(profile, b, cuts, devices.num_devices)
    k = cuts - 1
    delta = profile.param_bits[k]
    return {"T_F": b * profile.fwd_flops[k] / devices.flops,                # (28)
            "T_aU": b * profile.act_bits[k] / devices.rate_up,              # (29)
            "T_gD": b * profile.grad_bits[k] / devices.rate_down,           # (32)
            "T_B": b * profile.bwd_flops[k] / devices.flops,                # (33)
            "T_cU": delta / devices.rate_up_fed,                            # (34)
            "T_cD": delta / devices.rate_down_fed}                          # (36)


def server_compute(profile: LayerProfile, b, cuts, servers: Servers) -> dict:
    """Edge-server forward ``T_sF`` (30) and backward ``T_sB`` (31) time (seconds, ``[...]``) for the server-side
    parts of all devices (layers L_i+1..L on b_i samples each), processed one after another.

    Raises:
        ValueError: b < 1, cuts outside 1..L.
    """
    if not isinstance(servers, Servers):
        raise ParameterTypeError(f"servers must be Servers, got {type(servers).__name__}")
    n = np.shape(cuts)[-1] if np.ndim(cuts) else 0
    if n == 0:
        raise ValueError(f"cuts must hold one cut layer per device ([..., N] with N >= 1), got {cuts!r}")
    b, cuts = check_decision(profile, b, cuts, n)
    k = cuts - 1
    return {"T_sF": (b * (profile.fwd_flops[-1] - profile.fwd_flops[k])).sum(-1) / servers.flops,   # (30)
            "T_sB": (b * (profile.bwd_flops[-1] - profile.bwd_flops[k])).sum(-1) / servers.flops}   # (31)


def memory_bits(profile: LayerProfile, b, cuts) -> np.ndarray:
    """Device memory of constraint C4, b_i ψ̃_j + b_i χ̃_j + ϑ̃_j + δ_j at j = L_i (bits), ``[..., N]`` (``b`` and
    ``cuts`` broadcast against each other).

    Raises:
        ValueError: b < 1 or NaN, cuts not integers in 1..L (cut 0 does not wrap to the last layer), shapes that do
            not broadcast.
    """
    b, cuts = _check_b_cuts(profile, b, cuts)
    try:
        np.broadcast_shapes(b.shape, cuts.shape)
    except ValueError as exc:
        raise ValueError(f"b {b.shape} and cuts {cuts.shape} must broadcast against each other") from exc
    k = cuts - 1
    return b * (profile.act_bits_cum[k] + profile.grad_bits_cum[k]) + profile.opt_state_bits[k] + profile.param_bits[k]
