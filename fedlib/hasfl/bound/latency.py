"""HASFL's round composition (eqs. 38-40) over the shared per-device latency terms, and Table I.

Source: HASFL Sec. V-A and VII-A. Units: seconds, bits.
Choice: Table I gives no device memory υ_{c,i}; we draw it from U[0.25, 1] GB (``memory_bytes``).
"""
from __future__ import annotations

import numpy as np

from dataclasses import replace

from ...core.validate import ParameterTypeError, check_array, check_choice, check_float, check_int
from ...split import EdgeDevices, LayerProfile, Servers, SystemSpec, device_terms, server_compute

TABLE_I = SystemSpec(num_devices=20, server_flops=20e12, device_flops=(1e12, 2e12), rate_up=(75e6, 80e6),
                     rate_down=(360e6, 380e6), rate_servers=(360e6, 380e6), memory_bytes=(0.25e9, 1e9))
"""HASFL Table I: 20 devices, f_s = 20 TFLOP/s, f_i ∈ [1, 2] TFLOP/s, uplinks 75-80 Mbit/s, downlinks and
server links 360-380 Mbit/s; device memory 0.25-1 GB (our choice: Table I has none)."""

SCALE_KEYS = ("device_flops", "server_flops", "rate_up", "rate_servers")
"""The Table I quantities Figs. 7-8 sweep: device compute f_i, server compute f_s (Fig. 7), device uplink rates
r_i^U and the inter-server rate (Fig. 8)."""


def table_i(num_devices: int, scale: dict | None = None) -> SystemSpec:
    """Table I (:data:`TABLE_I`) with ``num_devices`` devices, each range of ``scale``'s keys
    (:data:`SCALE_KEYS`) multiplied by its factor (Figs. 7-8's x-axes; the draw of the system is unchanged).

    Raises:
        ValueError: ``num_devices`` < 1 (checked once, by :class:`fedlib.split.SystemSpec` as it is built), an
            unknown key, a factor not finite and > 0.
        ParameterTypeError: ``scale`` not a dict; ``num_devices`` not an int.
    """
    if scale is not None and not isinstance(scale, dict):
        raise ParameterTypeError(f"scale must be a dict of factors keyed by {SCALE_KEYS}, got {scale!r}")
    spec = replace(TABLE_I, num_devices=num_devices)
    for key, k in (scale or {}).items():
        check_choice("scale key", key, SCALE_KEYS)
        k = check_float(f"scale[{key!r}]", k, 0, low_open=True)
        value = getattr(spec, key)
        spec = replace(spec, **{key: value * k if np.isscalar(value) else tuple(v * k for v in value)})
    return spec


def round_latency(profile: LayerProfile, b, cuts, devices: EdgeDevices, servers: Servers) -> dict:
    """Per-round latencies of split training (eqs. 28-39) for batch sizes ``b`` and cut layers ``cuts``.

    Args:
        profile: per-sample model profile. b: ``[..., N]`` batch sizes (>= 1). cuts: ``[..., N]`` cut layers L_i
            in 1..L. devices, servers: the system.

    Returns:
        Arrays (seconds): per device ``T_F`` (28), ``T_aU`` (29), ``T_gD`` (32), ``T_B`` (33), ``T_cU`` (34),
        ``T_cD`` (36) ``[..., N]``; per round ``T_sF`` (30), ``T_sB`` (31), ``T_sU`` (35), ``T_sD`` (37),
        ``T_S`` (38), ``T_A`` (39) ``[...]``; and ``Lambda_s`` (bits of all non-common parts).

    Raises:
        ValueError: shapes, b < 1, cuts outside 1..L.
    """
    out = device_terms(profile, b, cuts, devices)                           # (28), (29), (32)-(34), (36)
    out.update(server_compute(profile, b, cuts, servers))                   # (30), (31)
    delta = profile.param_bits[np.asarray(cuts) - 1]
    n = devices.num_devices
    out["Lambda_s"] = n * delta.max(-1) - delta.sum(-1)
    out["T_sU"] = out["Lambda_s"] / servers.rate_to_fed                     # (35)
    out["T_sD"] = out["Lambda_s"] / servers.rate_from_fed                   # (37)
    out["T_S"] = ((out["T_F"] + out["T_aU"]).max(-1) + out["T_sF"] + out["T_sB"]
                  + (out["T_gD"] + out["T_B"]).max(-1))                     # (38)
    out["T_A"] = (np.maximum(out["T_cU"].max(-1), out["T_sU"])
                  + np.maximum(out["T_cD"].max(-1), out["T_sD"]))           # (39)
    return out


def total_latency(rounds: int, interval: int, t_split, t_agg):
    """Eq. (40): T = R·T_S + ⌊R/I⌋·T_A (seconds).

    Raises:
        ValueError: R < 0, I < 1, latencies negative or NaN (+inf, an infeasible decision, is kept).
        ParameterTypeError: R or I not an integer (I = 2.5 is refused, not floored).
    """
    check_int("rounds", rounds, 0)
    check_int("interval", interval, 1)
    t_split = check_array("t_split", t_split, low=0, allow_inf=True)
    t_agg = check_array("t_agg", t_agg, low=0, allow_inf=True)
    return rounds * t_split + (rounds // interval) * t_agg
