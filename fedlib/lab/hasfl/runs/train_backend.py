"""HASFL training runs on either split-engine backend, one store for both (:func:`train_record_backend`).

Today's committed training records were computed by the loop backend (:mod:`fedlib.split.engine`) and are keyed
without a backend (:func:`fedlib.lab.hasfl.runs.train_run.train_record`). On a GPU the stacked backend
(:mod:`fedlib.split.stacked`) trains the same run several times faster (``python -m fedlib.lab.bench sfl``). Rules
(ours; the paper has no cache):

- **a stored record of the same run config is read, whichever backend computed it**: the asked backend's first,
  then the loop backend's, then any stacked variant's. A converged redraw on a GPU therefore retrains nothing the
  committed store holds, and a CPU redraw reads a record a GPU trained. Each record says which backend computed
  it (``"backend"`` in the record; a loop record has none);
- only a run no backend has stored is trained, by the asked backend (``"auto"``: stacked on CUDA, the loop
  elsewhere), and stored under its own key: the loop backend's as before (:func:`train_record`), a stacked
  variant's under the run config plus ``"backend"``, hashed with the stacked modules' source as well
  (:data:`BACKEND_CODE`).

The backends are float-close, not bit-identical (tests: both against the literal per-device loop in float64), so
which backend trained a record can change its numbers in the last digits, and a long run's trajectory by more.
"""
from __future__ import annotations

import functools

import warnings

from fedlib.lab.store import ResultStore
from fedlib.lab.store import CorruptRecordError
from fedlib.core.seeding import resolve_device
from fedlib.data import TensorDataset
from fedlib.split.backends import STACKED_CODE, STACKED_VARIANTS, resolve_backend
from fedlib.hasfl.training import train_run
from fedlib.lab.hasfl.runs.train_run import TRAIN_CODE, train_record, train_store

#: the source a stacked-backend training record depends on beyond :data:`fedlib.lab.hasfl.runs.train_run.TRAIN_CODE`
BACKEND_CODE = ("fedlib.split.records_backend", *STACKED_CODE)


def keyed(store: ResultStore, config: dict, backend: str) -> tuple[ResultStore, dict]:
    """``(store, config)`` under which a training record of ``backend`` (resolved: ``"loop"`` or a stacked
    variant) is stored: the loop's as :func:`fedlib.lab.hasfl.runs.train_run.train_store`, a stacked one's with
    ``"backend"`` in the config and :data:`BACKEND_CODE` in the hash.

    Raises:
        TypeError: ``store`` is not a ResultStore. ValueError: an unknown backend.
    """
    base = train_store(store)
    resolve_backend(backend, "cpu")                      # refuses unknown names
    if backend == "loop":
        return base, config
    return base.with_code(TRAIN_CODE + BACKEND_CODE), {**config, "backend": backend}


def stored_record(store: ResultStore, config: dict, backend: str) -> dict | None:
    """The stored training record of ``config`` from any backend (``backend``'s first, then the loop's, then the
    stacked variants'), or None; a stacked record carries ``"backend"``. A corrupt file is reported
    (``warnings.warn`` naming it) and passed over."""
    order = [backend] + [b for b in ("loop", *STACKED_VARIANTS) if b != backend]
    for b in order:
        s, c = keyed(store, config, b)
        if s.has(c):
            try:
                return s.load(c)
            except CorruptRecordError as exc:           # reported; the asked backend recomputes it if none is left
                warnings.warn(f"{exc}; looking for the run's record of another backend", stacklevel=2)
    return None


class AnyBackendRecords:
    """Read-only view of HASFL's training records whatever backend computed them (module docstring): ``key(config)``
    (the loop backend's key, one per run config), ``has(config)`` and ``load(config)`` (the loop's record first,
    then a stacked variant's; KeyError if none)."""

    def __init__(self, store: ResultStore):
        self.store, self.base = store, train_store(store)

    def key(self, config: dict) -> str:
        return self.base.key(config)

    def has(self, config: dict) -> bool:
        return any(s.has(c) for s, c in (keyed(self.store, config, b) for b in ("loop", *STACKED_VARIANTS)))

    def load(self, config: dict) -> dict:
        rec = stored_record(self.store, config, "loop")
        if rec is None:
            raise KeyError(f"no stored training record of any backend for config {config}")
        return rec


def train_record_backend(store: ResultStore, config: dict, data: TensorDataset, device: str = "auto",
                         backend: str = "auto") -> dict:
    """One HASFL training run (:func:`fedlib.lab.hasfl.runs.train_run.train_record`'s record) from the store if any
    backend has it (module docstring), else trained by ``backend`` on ``device`` and stored.

    Args:
        store: HASFL's result store (:func:`fedlib.lab.hasfl.runs.experiments.result_store`). config: a
            :func:`fedlib.lab.hasfl.runs.training.run_config`. data: the loaded dataset. device: ``"auto"`` (CUDA when
            present), ``"cpu"``, ``"cuda"``. backend: ``"auto"``, ``"loop"`` or a stacked variant
            (:data:`fedlib.split.backends.BACKENDS`).

    Returns:
        the record (per evaluation: round, epoch, test_acc, test_loss, train_loss, elapsed_s; ``converged_index``,
        ``converged_acc``, ``test_samples``, ``elapsed_s`` in s), plus ``"backend"`` when a stacked backend
        computed it.

    Raises:
        ValueError: an unknown backend or device (CUDA asked for but absent).
    """
    used = resolve_backend(backend, resolve_device(device))
    found = stored_record(store, config, used)
    if found is not None:
        return found
    if used == "loop":
        return train_record(store, config, data, device)

    s, c = keyed(store, config, used)
    return s.get_or_run(c, functools.partial(train_run, config, data, device, used))
