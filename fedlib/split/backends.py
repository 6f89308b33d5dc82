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

import torch

from ..core.validate import check_choice

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


def backend_functions(backend: str) -> dict:
    """The round's functions of ``backend`` (``"loop"``: :mod:`.engine`; ``"stacked"``: :mod:`.stacked`), by the
    engine's names: ``init_state``, ``train_round``, ``aggregate``, ``set_decision``, ``global_units``,
    ``global_model`` (a stacked variant's ``init_state`` with its options); and ``train_round_nosync``: a round without the host syncs its backend can skip (stacked:
    the loss comes back as a 0-d device tensor and the label range is not checked, so the caller checks the
    labels once beforehand; loop: ``train_round`` itself).

    Raises:
        ValueError: an unknown backend (one of :data:`ALL_BACKENDS`; ``"auto"`` must be resolved first, :func:`resolve_backend`).
    """
    check_choice("backend", backend, ALL_BACKENDS)
    names = ("init_state", "train_round", "aggregate", "set_decision", "global_units", "global_model")
    if backend == "loop":
        from . import engine
        out = {k: getattr(engine, k) for k in names}
        out["train_round_nosync"] = engine.train_round
        return out
    from . import stacked
    out = {k: getattr(stacked, f"{k.replace('_state', '')}_stacked") for k in names}
    options = {**STACKED_VARIANTS, **COMPILED_VARIANTS}[backend]
    if options:
        def init_state(*args, **kwargs):
            return stacked.init_stacked(*args, **kwargs, **options)
        out["init_state"] = init_state

    def train_round_nosync(*args, **kwargs):
        return stacked.train_round_stacked(*args, sync=False, check_labels=False, **kwargs)
    out["train_round_nosync"] = train_round_nosync
    return out


def device_aux(st, i: int) -> dict | None:
    """Device i's auxiliary head as a dict of tensors (None without one), for either backend's state."""
    return st.device_aux(i) if hasattr(st, "device_aux") else st.aux[i]


def set_device_aux(st, i: int, head: dict) -> None:
    """Give device i the auxiliary head ``head`` (values copied), for either backend's state."""
    if hasattr(st, "device_aux"):
        from .stacked_ops import assign_rows
        assign_rows(st.aux[int(st.cuts[i])], [i], head)
    else:
        st.aux[i] = {k: v.clone() for k, v in head.items()}
