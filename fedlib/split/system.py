"""Devices, links and servers of a simulated split-learning system, in SI units, and their samplers.

Units: FLOP/s for compute, bit/s for links, bits for memory. :class:`SystemSpec` holds the ranges a heterogeneous
system is drawn from (:func:`sample_system`, ``system`` seed stream); a paper's table is a ``SystemSpec`` in that
paper's package (HASFL's Table I: :data:`fedlib.hasfl.TABLE_I`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.validate import ParameterTypeError, check_float, check_int


def _positive(name: str, value) -> np.ndarray:
    """``value`` as a float array of finite numbers > 0 (numbers only: strings and bools are refused)."""
    arr = np.asarray(value)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ParameterTypeError(f"{name} must be finite and > 0 (numbers), got {value!r}")
    arr = arr.astype(float)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return arr


def _range(name: str, value) -> tuple:
    """A ``(low, high)`` range of finite numbers with 0 < low <= high."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ParameterTypeError(f"{name} must be a range (low, high) with 0 < low <= high, got {value!r}")
    lo, hi = (check_float(f"{name} (low, high)", v) for v in value)
    if not 0 < lo <= hi:
        raise ValueError(f"{name} must be a range (low, high) with 0 < low <= high, got {(lo, hi)!r}")
    return value


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
            arr = _positive(name, getattr(self, name))   # ValueError / ParameterTypeError naming the field
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
            check_float(name, getattr(self, name), 0, low_open=True)


@dataclass(frozen=True)
class SystemSpec:
    """Ranges of a heterogeneous system; each device value is drawn uniformly in its range.

    Attributes:
        num_devices: N. server_flops: f_s (FLOP/s). device_flops: range of f_i (FLOP/s). rate_up / rate_down:
        ranges of the device ↔ server links (bit/s). rate_servers: range of the edge ↔ fed server links (bit/s).
        memory_bytes: range of the device memory available for training (bytes).
    """

    num_devices: int
    server_flops: float
    device_flops: tuple
    rate_up: tuple
    rate_down: tuple
    rate_servers: tuple
    memory_bytes: tuple

    def __post_init__(self):
        check_int("num_devices", self.num_devices, 1)
        for name in ("device_flops", "rate_up", "rate_down", "rate_servers", "memory_bytes"):
            _range(name, getattr(self, name))
        check_float("server_flops", self.server_flops, 0, low_open=True)




def sample_system(spec: SystemSpec, rng: np.random.Generator) -> tuple[EdgeDevices, Servers]:
    """Draw devices and servers from ``spec`` (``system`` seed stream). The up/down rates to the fed server are
    drawn from the same ranges as those to the edge server (Table I lists them together)."""
    if not isinstance(spec, SystemSpec):
        raise ParameterTypeError(f"spec must be a SystemSpec, got {type(spec).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    n = spec.num_devices

    def u(rng_range, size=n):
        return rng.uniform(*rng_range, size=size)

    devices = EdgeDevices(u(spec.device_flops), u(spec.rate_up), u(spec.rate_down), u(spec.rate_up),
                          u(spec.rate_down), 8 * u(spec.memory_bytes))
    servers = Servers(spec.server_flops, float(u(spec.rate_servers, None)), float(u(spec.rate_servers, None)))
    return devices, servers
