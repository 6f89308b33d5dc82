"""The split engine's backends and the default on each device.

- ``"loop"``: :mod:`.engine`, one dict of tensors per device and unit, the per-device units run device after
  device (its shared common part batched); fastest on the CPU.
- ``"stacked"``: :mod:`.stacked`, per-device state stacked ``[N, ...]``, one batched call per unit for all
  devices of one batch size, optimizer steps over all tensors at once, no host sync inside a round; fastest on a
  GPU.
- ``"stacked_cl"`` and the compiled variants (:data:`STACKED_VARIANTS`, :data:`COMPILED_VARIANTS`): the stacked
  backend with options of its grouped layout (channels-last convolutions; ``torch.compile``), keyed apart like it.
- ``"auto"`` (:func:`resolve_backend`): ``"stacked"`` on CUDA, ``"loop"`` elsewhere: the faster one on each,
  measured with ``python -m fedlib.lab.bench dtfl|sfl`` (the numbers, with their machines, are in the README).

Both compute the same rounds (the tests check each against the literal per-device reference in float64); they
are float-close, not bit-identical, so a result store keys a record computed with ``stacked`` by its backend and
the stacked modules' source (:data:`STACKED_CODE`), and the loop backend's records by neither.
"""
from __future__ import annotations

from typing import Callable, Protocol

import torch
from torch import nn

from ..core.validate import check_choice
from . import engine, stacked
from .config import SplitConfig
from .engine import LocalLossStep
from .stacked_ops import assign_rows

#: the stacked backend's variants: backend name -> options of :func:`.stacked.init_stacked` (the grouped layout's,
#: :mod:`.stacked_layers`). ``stacked_cl``: channels-last (NHWC) grouped convolutions.
STACKED_VARIANTS = {"stacked": {}, "stacked_cl": {"grouped_channels_last": True}}
#: variants that compile each grouped unit with ``torch.compile`` (``stacked_graphs``: its ``"reduce-overhead"``
#: mode, CUDA graphs where the graph allows): accepted by every function that takes a backend, measured by
#: ``python -m fedlib.lab.bench dtfl --variants``, but not in :data:`BACKENDS` (the tests run each backend of that list
#: through the float64 reference checks; compiling every unit there would take minutes on the CPU: one test checks
#: the compiled variants against the loop backend instead)
COMPILED_VARIANTS = {"stacked_compile": {"compile_mode": "default"},
                     "stacked_cl_compile": {"grouped_channels_last": True, "compile_mode": "default"},
                     "stacked_graphs": {"compile_mode": "reduce-overhead"}}
#: the split engine's backends
BACKENDS = ("loop", *STACKED_VARIANTS)
#: every backend name a run accepts (:data:`BACKENDS` and the compiled variants)
ALL_BACKENDS = BACKENDS + tuple(COMPILED_VARIANTS)
#: the modules a record computed with the stacked backend depends on, beyond the engine's
STACKED_CODE = ("fedlib.split.backends", "fedlib.split.stacked", "fedlib.split.stacked_layers", "fedlib.split.stacked_ops")


def resolve_backend(backend: str, device: torch.device | str) -> str:
    """``backend`` (``"auto"``, ``"loop"`` or ``"stacked"``) for a run on ``device``: ``"auto"`` is ``"stacked"``
    on CUDA and ``"loop"`` on any other device (the faster one there, measured: module docstring).

    Raises:
        ValueError: an unknown backend.
    """
    check_choice("backend", backend, ALL_BACKENDS + ("auto",))
    if backend != "auto":
        return backend
    return "stacked" if torch.device(device).type == "cuda" else "loop"


class SplitBackend(Protocol):
    """A backend of the split engine: the round's functions over its own state, each as the engine's function of
    the same name (:mod:`.engine`: arguments, shapes, errors). Implementations: :class:`LoopBackend` and
    :class:`StackedBackend`, returned by :func:`split_backend`."""

    name: str

    def init_state(self, cfg: SplitConfig, model: nn.Sequential, input_shape: tuple, device="cpu",
                   aux_head: Callable | None = None, channels_last: bool = False): ...

    def train_round(self, st, xs: list, ys: list, weights=None, sync_copies: bool = True,
                    local_step: LocalLossStep | None = None) -> float: ...

    def train_round_nosync(self, st, xs: list, ys: list, weights=None, sync_copies: bool = True,
                           local_step: LocalLossStep | None = None, **options) -> float | torch.Tensor: ...

    def aggregate(self, st, weights=None) -> None: ...

    def set_decision(self, st, b, cuts, weights=None, seed: int = 0) -> None: ...

    def global_units(self, st, weights=None) -> list[dict]: ...

    def global_model(self, st, weights=None) -> nn.Sequential: ...


class LoopBackend:
    """The ``"loop"`` backend (:mod:`.engine`): one dict of tensors per device and unit. Its
    ``train_round_nosync`` is ``train_round`` (the loop syncs once per round either way)."""

    name = "loop"
    init_state = staticmethod(engine.init_state)
    train_round = staticmethod(engine.train_round)
    train_round_nosync = staticmethod(engine.train_round)
    aggregate = staticmethod(engine.aggregate)
    set_decision = staticmethod(engine.set_decision)
    global_units = staticmethod(engine.global_units)
    global_model = staticmethod(engine.global_model)


class StackedBackend:
    """A stacked backend (:mod:`.stacked`): per-device state stacked ``[N, ...]``; ``name`` one of
    :data:`STACKED_VARIANTS` or :data:`COMPILED_VARIANTS`, whose options its ``init_state`` passes on.
    ``train_round_nosync``: a round without host syncs (the loss comes back as a 0-d device tensor and the label
    range is not checked, so the caller checks the labels once beforehand); further keywords go to
    :func:`.stacked.train_round_stacked` (``per_device_loss``)."""

    train_round = staticmethod(stacked.train_round_stacked)
    aggregate = staticmethod(stacked.aggregate_stacked)
    set_decision = staticmethod(stacked.set_decision_stacked)
    global_units = staticmethod(stacked.global_units_stacked)
    global_model = staticmethod(stacked.global_model_stacked)

    def __init__(self, name: str = "stacked"):
        self.name = name
        self.options = {**STACKED_VARIANTS, **COMPILED_VARIANTS}[name]

    def init_state(self, cfg: SplitConfig, model: nn.Sequential, input_shape: tuple, device="cpu",
                   aux_head: Callable | None = None, channels_last: bool = False):
        return stacked.init_stacked(cfg, model, input_shape, device, aux_head, channels_last, **self.options)

    def train_round_nosync(self, st, xs: list, ys: list, weights=None, sync_copies: bool = True,
                           local_step: LocalLossStep | None = None, **options) -> torch.Tensor:
        return stacked.train_round_stacked(st, xs, ys, weights, sync_copies, local_step, sync=False,
                                           check_labels=False, **options)


def split_backend(backend: str) -> SplitBackend:
    """The backend named ``backend`` (one of :data:`ALL_BACKENDS`): :class:`LoopBackend` for ``"loop"``, else a
    :class:`StackedBackend` of that variant.

    Raises:
        ValueError: an unknown backend (``"auto"`` must be resolved first, :func:`resolve_backend`).
    """
    check_choice("backend", backend, ALL_BACKENDS)
    return LoopBackend() if backend == "loop" else StackedBackend(backend)


def device_aux(st, i: int) -> dict | None:
    """Device i's auxiliary head as a dict of tensors (None without one), for either backend's state."""
    return st.device_aux(i) if hasattr(st, "device_aux") else st.aux[i]


def set_device_aux(st, i: int, head: dict) -> None:
    """Give device i the auxiliary head ``head`` (values copied), for either backend's state."""
    if hasattr(st, "device_aux"):
        assign_rows(st.aux[int(st.cuts[i])], [i], head)
    else:
        st.aux[i] = {k: v.clone() for k, v in head.items()}
