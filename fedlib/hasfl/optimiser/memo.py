"""The key of the P1 and P2 solvers' memo (ours; the paper has no cache).

A solve of P1 (:func:`fedlib.hasfl.optimiser.p1.solve_p1`) or P2 (:func:`fedlib.hasfl.optimiser.p2.solve_p2`) is a
pure function of its arguments: the problem and the block held fixed (the cuts and T, or b) and the solver's settings.
Algorithm 2's restarts in :func:`fedlib.hasfl.optimiser.bcd.bcd` revisit points (P2 is a sequence of MILPs), so
each solver is memoised where it is defined (``functools.lru_cache``) on a :class:`SolverCall`: its arguments,
compared by :func:`fingerprint`, a digest of every value they hold. The problem enters with every field of
:class:`fedlib.hasfl.Problem` and of the dataclasses it holds (profile, devices, servers, constants), by name, so a
field added later is keyed without an edit here, and two problems equal in every value share their solves.
"""
from __future__ import annotations

import dataclasses
import hashlib

import numpy as np


def _put(h, tag: bytes, payload: bytes) -> None:
    h.update(tag + len(payload).to_bytes(8, "little") + payload)     # length-prefixed: no two values read alike


def _feed(h, value) -> None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        _put(h, b"D", type(value).__qualname__.encode())
        for field in dataclasses.fields(value):
            _put(h, b"F", field.name.encode())
            _feed(h, getattr(value, field.name))
    elif isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise TypeError("fingerprint takes numeric arrays, got an array of Python objects")
        _put(h, b"A", f"{value.dtype.str} {value.shape}".encode())
        _put(h, b"B", np.ascontiguousarray(value).tobytes())
    elif isinstance(value, dict):
        _put(h, b"M", str(len(value)).encode())
        for key in sorted(value):
            _feed(h, key)
            _feed(h, value[key])
    elif isinstance(value, (tuple, list)):
        _put(h, b"S", f"{type(value).__name__} {len(value)}".encode())
        for item in value:
            _feed(h, item)
    elif value is None or isinstance(value, (bool, int, float, str, np.generic)):
        _put(h, b"V", f"{type(value).__name__} {value!r}".encode())
    else:
        raise TypeError(f"fingerprint takes dataclasses, arrays, dicts, sequences and scalars, got "
                        f"{type(value).__name__}")


def fingerprint(*values) -> bytes:
    """A 32-byte BLAKE2b digest of ``values``: dataclasses field by field (with the class name), numeric arrays by
    dtype, shape and bytes, dicts by sorted key, sequences item by item, scalars by type and ``repr`` (exact for
    floats). Equal digests mean equal values, of equal types.

    Raises:
        TypeError: a value of another kind (an object array, a callable, ...).
    """
    h = hashlib.blake2b(digest_size=32)
    _feed(h, values)
    return h.digest()


class SolverCall:
    """The arguments ``args`` of one solver call, hashable and compared by their :func:`fingerprint`: the key
    under which ``functools.lru_cache`` keeps the call's result."""

    __slots__ = ("args", "key")

    def __init__(self, *args):
        self.args = args
        self.key = fingerprint(*args)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return isinstance(other, SolverCall) and other.key == self.key
