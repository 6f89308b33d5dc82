"""Latency model of split federated learning: devices, links and servers in SI units, vectorised over devices.

Source: HASFL Sec. V-A, eqs. (28)-(40) (spec ``shared/spec/hasfl.md``, "Latency model"). Units: FLOP/s for
compute, bit/s for links, bits for data, seconds for time. Per-sample model quantities come from a
:class:`fedlib.split_models.LayerProfile`. Every function broadcasts over leading dimensions: ``b`` and
``cuts`` may be ``[..., N]`` (e.g. many candidate decisions at once); reductions over devices use the last axis.

Table I (HASFL Sec. VII-A) is :data:`TABLE_I`; :func:`sample_system` draws a heterogeneous system from it.
Choice: Table I gives no device memory υ_{c,i}; we draw it from U[0.25, 1] GB (``memory_bytes``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .split_models import LayerProfile


def _positive(name: str, value) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return arr


@dataclass(frozen=True)
class EdgeDevices:
    """N edge devices (vectors of length N).

    Attributes:
        flops: f_i, compute speed (FLOP/s).
        rate_up / rate_down: r_i^U / r_i^D, device ↔ edge-server link (bit/s).
        rate_up_fed / rate_down_fed: r_{i,f}^U / r_{i,f}^D, device ↔ fed-server link (bit/s).
        memory_bits: υ_{c,i}, memory available for training (bits).
    """

    flops: np.ndarray
    rate_up: np.ndarray
    rate_down: np.ndarray
    rate_up_fed: np.ndarray
    rate_down_fed: np.ndarray
    memory_bits: np.ndarray

    def __post_init__(self):
        n = None
        for name in self.__dataclass_fields__:
            arr = _positive(name, getattr(self, name))
            if arr.ndim != 1 or (n is not None and len(arr) != n):
                raise ValueError(f"{name} must be a 1-D array of length N (= {n}), got shape {arr.shape}")
            n = len(arr)
            object.__setattr__(self, name, arr)

    @property
    def num_devices(self) -> int:
        return len(self.flops)


@dataclass(frozen=True)
class Servers:
    """Edge server (trains the server-side parts) and fed server (aggregates client-side parts).

    Attributes:
        flops: f_s, edge-server compute speed (FLOP/s).
        rate_to_fed: r_{s,f}, edge server → fed server (bit/s). rate_from_fed: r_{f,s} (bit/s).
    """

    flops: float
    rate_to_fed: float
    rate_from_fed: float

    def __post_init__(self):
        for name in self.__dataclass_fields__:
            _positive(name, getattr(self, name))


@dataclass(frozen=True)
class SystemSpec:
    """Ranges of a heterogeneous system; each device value is drawn uniformly in its range. Defaults: Table I."""

    num_devices: int = 20
    server_flops: float = 20e12
    device_flops: tuple = (1e12, 2e12)
    rate_up: tuple = (75e6, 80e6)
    rate_down: tuple = (360e6, 380e6)
    rate_servers: tuple = (360e6, 380e6)
    memory_bytes: tuple = (0.25e9, 1e9)

    def __post_init__(self):
        if not isinstance(self.num_devices, (int, np.integer)) or self.num_devices < 1:
            raise ValueError(f"num_devices must be a positive integer, got {self.num_devices!r}")
        for name in ("device_flops", "rate_up", "rate_down", "rate_servers", "memory_bytes"):
            lo, hi = getattr(self, name)
            if not 0 < lo <= hi:
                raise ValueError(f"{name} must be a range (low, high) with 0 < low <= high, got {(lo, hi)!r}")
        _positive("server_flops", self.server_flops)


TABLE_I = SystemSpec()


def sample_system(spec: SystemSpec, rng: np.random.Generator) -> tuple[EdgeDevices, Servers]:
    """Draw devices and servers from ``spec`` (``system`` seed stream). The up/down rates to the fed server are
    drawn from the same ranges as those to the edge server (Table I lists them together)."""
    n = spec.num_devices

    def u(rng_range, size=n):
        return rng.uniform(*rng_range, size=size)

    devices = EdgeDevices(u(spec.device_flops), u(spec.rate_up), u(spec.rate_down), u(spec.rate_up),
                          u(spec.rate_down), 8 * u(spec.memory_bytes))
    servers = Servers(spec.server_flops, float(u(spec.rate_servers, None)), float(u(spec.rate_servers, None)))
    return devices, servers


def _check_decision(profile: LayerProfile, b, cuts, n: int) -> tuple[np.ndarray, np.ndarray]:
    b = np.asarray(b, dtype=float)
    cuts = np.asarray(cuts)
    if b.shape[-1:] != (n,) or cuts.shape[-1:] != (n,):
        raise ValueError(f"b and cuts must end with the device axis of length N = {n}, got {b.shape}, {cuts.shape}")
    if np.any(b < 1):
        raise ValueError("batch sizes b must be >= 1 (constraint C5)")
    if not np.issubdtype(cuts.dtype, np.integer) or np.any(cuts < 1) or np.any(cuts > profile.num_layers):
        raise ValueError(f"cuts must be integers in 1..L = 1..{profile.num_layers} (constraint C3)")
    return b, cuts


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
    b, cuts = _check_decision(profile, b, cuts, devices.num_devices)
    k = cuts - 1
    rho, varpi = profile.fwd_flops[k], profile.bwd_flops[k]
    rho_l, varpi_l = profile.fwd_flops[-1], profile.bwd_flops[-1]
    delta = profile.param_bits[k]
    out = {"T_F": b * rho / devices.flops,                                  # (28)
           "T_aU": b * profile.act_bits[k] / devices.rate_up,               # (29)
           "T_gD": b * profile.grad_bits[k] / devices.rate_down,            # (32)
           "T_B": b * varpi / devices.flops,                                # (33)
           "T_cU": delta / devices.rate_up_fed,                             # (34)
           "T_cD": delta / devices.rate_down_fed}                           # (36)
    out["T_sF"] = (b * (rho_l - rho)).sum(-1) / servers.flops               # (30)
    out["T_sB"] = (b * (varpi_l - varpi)).sum(-1) / servers.flops           # (31)
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
    """Eq. (40): T = R·T_S + ⌊R/I⌋·T_A (seconds). Raises ``ValueError`` for R < 0 or I < 1."""
    if rounds < 0 or interval < 1:
        raise ValueError(f"rounds must be >= 0 and interval I >= 1, got R={rounds}, I={interval}")
    return rounds * np.asarray(t_split) + (rounds // interval) * np.asarray(t_agg)


def memory_bits(profile: LayerProfile, b, cuts) -> np.ndarray:
    """Device memory of constraint C4, b_i ψ̃_j + b_i χ̃_j + ϑ̃_j + δ_j at j = L_i (bits), ``[..., N]``."""
    k = np.asarray(cuts) - 1
    b = np.asarray(b, dtype=float)
    return b * (profile.act_bits_cum[k] + profile.grad_bits_cum[k]) + profile.opt_state_bits[k] + profile.param_bits[k]
