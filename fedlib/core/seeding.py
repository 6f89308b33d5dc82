"""One seed -> independent random streams (``numpy.random.SeedSequence``).

Every run is seeded from a single integer. :func:`streams` spawns named child sequences so that changing,
say, the model initialisation never changes the data partition. Stream names used across fedlib:

- ``data``   : partition of the training set and per-step minibatch sampling
- ``model``  : model initialisation
- ``system`` : everything the simulated system draws (HIST masks, device profiles, ...)
"""
from __future__ import annotations

import hashlib

import numpy as np
import torch

from .validate import ParameterTypeError, check_int, check_str

STREAMS = ("data", "model", "system")


def _check_stream(stream) -> str:
    """A stream name: one of :data:`STREAMS`, optionally with a ``/sub-stream`` suffix (``"system/rbs"``)."""
    check_str("stream", stream)
    if stream.split("/", 1)[0] not in STREAMS:
        raise ValueError(f"stream must be one of {STREAMS}, optionally followed by '/<name>', got {stream!r}")
    return stream


def seed_sequence(seed: int, stream: str) -> np.random.SeedSequence:
    """The child ``SeedSequence`` of ``seed`` for the named ``stream``.

    The child's spawn key is derived from the stream name (SHA-256), so streams are independent of each other
    and of the order in which they are requested.

    Raises:
        ParameterTypeError: ``seed`` is not an integer (bool and floats such as 2.0 are not), ``stream`` not a string.
        ValueError: ``seed`` is negative; ``stream`` is not one of :data:`STREAMS` (optionally ``"<stream>/<sub>"``).
    """
    check_int("seed", seed, 0)
    _check_stream(stream)
    key = int.from_bytes(hashlib.sha256(stream.encode()).digest()[:4], "little")
    return np.random.SeedSequence(int(seed), spawn_key=(key,))


def numpy_rng(seed: int, stream: str) -> np.random.Generator:
    """A ``numpy.random.Generator`` for ``stream`` of ``seed`` (see :func:`seed_sequence`)."""
    return np.random.default_rng(seed_sequence(seed, stream))


def torch_generator(seed: int, stream: str) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded from ``stream`` of ``seed``.

    Always on the CPU: fedlib draws every random tensor (minibatch indices, masks, start vectors) on the CPU and
    moves it to the run's device, so a CUDA run follows the sample path of the CPU run (CPU and CUDA generators
    produce different numbers from the same seed).
    """
    state = seed_sequence(seed, stream).generate_state(2, dtype=np.uint32)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(int(state[0]) << 32 | int(state[1]))
    return gen


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; any other value is passed to ``torch.device``.

    Raises:
        ParameterTypeError: ``device`` is not a string or ``torch.device``.
        ValueError: ``device`` is no device name, or names CUDA but no CUDA device is available.
    """
    if not isinstance(device, (str, torch.device)):
        raise ParameterTypeError(f"device must be 'auto', 'cpu', 'cuda' or a torch.device, got {device!r}")
    if str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as exc:
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda', 'cuda:<index>' or another torch device, got "
                         f"{device!r}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} but CUDA is not available; use device='auto' or 'cpu'")
    return dev
