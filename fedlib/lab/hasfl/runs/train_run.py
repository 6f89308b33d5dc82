"""One HASFL training run on the shared split engine, on either backend, cached under its own code hash
(:func:`train_record`).

A training run is fixed by its :func:`fedlib.lab.hasfl.runs.training.run_config`: the model, data, optimiser, every
device's batch size and cut layer, the rounds and the seed. How that decision was reached (the bound, its
constants, the optimiser: ``bcd``, ``p1``, ``p2``, ...) is not part of the run, and neither is the latency model
that charges it (the clock is applied afterwards, :func:`fedlib.lab.hasfl.runs.training.train`). So the run's record is
stored by a store that hashes only the code that trains it (:data:`TRAIN_CODE`): an edit of the optimiser or the
bound recomputes the decisions, and a run whose b and cuts come out unchanged is a cache hit, while an edit of the
engine, the models, the data or :mod:`fedlib.hasfl.training` retrains everything. Choice (ours): the paper has no
cache; this keeps the hours of converged training valid across edits that cannot change them.

Backends (ours; the paper has no cache). The committed training records were computed by the loop backend
(:mod:`fedlib.split.engine`) and are keyed without a backend. On a GPU the stacked backend (:mod:`fedlib.split.stacked`)
trains the same run several times faster (``python -m fedlib.lab.bench sfl``). Rules:

- **a stored record of the same run config is read, whichever backend computed it**: the asked backend's first,
  then the loop backend's, then any stacked variant's. A converged redraw on a GPU therefore retrains nothing the
  committed store holds, and a CPU redraw reads a record a GPU trained. Each record says which backend computed
  it (``"backend"`` in the record; a loop record has none);
- only a run no backend has stored is trained, by the asked backend (``"auto"``: stacked on CUDA, the loop
  elsewhere), and stored under its own key (:func:`keyed`): the loop backend's under the run config, a stacked
  variant's under the run config plus ``"backend"``, hashed with the stacked modules' source as well
  (:data:`BACKEND_CODE`).

The backends are float-close, not bit-identical (tests: both against the literal per-device loop in float64), so
which backend trained a record can change its numbers in the last digits, and a long run's trajectory by more.
"""
from __future__ import annotations

import functools
import warnings

from fedlib.lab.datasets import dataset_key
from fedlib.lab.store import RECORD_CODE, CorruptRecordError, ResultStore
from fedlib.core.seeding import resolve_device
from fedlib.data import TensorDataset
from fedlib.split.backends import STACKED_CODE, STACKED_VARIANTS, resolve_backend
from fedlib.hasfl.training import converged_index, split_config, train_run  # noqa: F401  (re-exported)

TRAIN_CODE = ("fedlib.hasfl.training", *RECORD_CODE, "fedlib.core.components", "fedlib.data", "fedlib.split.backends", "fedlib.split.blocks",
              "fedlib.split.config", "fedlib.split.engine", "fedlib.split.models", "fedlib.split.ops",
              "fedlib.split.records")
"""The source a HASFL training record depends on: :mod:`fedlib.hasfl.training`, core's
:data:`fedlib.lab.store.RECORD_CODE`, data and the modules of ``fedlib.split`` that train on the loop backend (not
the latency model, the profiles or the system draw: they enter through the clock, applied after the cached run)."""

#: the source a stacked-backend training record depends on beyond :data:`TRAIN_CODE`
BACKEND_CODE = STACKED_CODE


def train_store(store: ResultStore) -> ResultStore:
    """The store of training records beside ``store`` (same folder, code :data:`TRAIN_CODE`).

    Raises:
        TypeError: ``store`` is not a :class:`fedlib.lab.ResultStore`.
    """
    if not isinstance(store, ResultStore):
        raise TypeError(f"store must be a fedlib.lab.ResultStore, got {type(store).__name__}")
    return store.with_code(TRAIN_CODE)


def keyed(store: ResultStore, config: dict, backend: str) -> tuple[ResultStore, dict]:
    """``(store, config)`` under which a training record of ``backend`` (resolved: ``"loop"`` or a stacked
    variant) is stored: the loop's as :func:`train_store`, a stacked one's with ``"backend"`` in the config and
    :data:`BACKEND_CODE` in the hash. A run on a dataset of your own adds its path and source
    (:func:`fedlib.lab.datasets.dataset_key`; nothing for the built-in datasets).

    Raises:
        TypeError: ``store`` is not a ResultStore. ValueError: an unknown backend.
    """
    base = train_store(store)
    resolve_backend(backend, "cpu")                      # refuses unknown names
    config = {**config, **dataset_key(config.get("dataset"))}
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
        try:
            return s.load(c)
        except KeyError:                                # none of this backend
            pass
        except CorruptRecordError as exc:               # reported; the asked backend recomputes it if none is left
            warnings.warn(f"{exc}; looking for the run's record of another backend", stacklevel=2)
    return None


class AnyBackendRecords:
    """Read-only view of HASFL's training records whatever backend computed them (module docstring): ``key(config)``
    (the loop backend's key, one per run config), ``has(config)`` and ``load(config)`` (the loop's record first,
    then a stacked variant's; KeyError if none)."""

    def __init__(self, store: ResultStore):
        self.store, self.base = store, train_store(store)

    def key(self, config: dict) -> str:
        return self.base.key(keyed(self.store, config, "loop")[1])

    def has(self, config: dict) -> bool:
        return any(s.has(c) for s, c in (keyed(self.store, config, b) for b in ("loop", *STACKED_VARIANTS)))

    def load(self, config: dict) -> dict:
        rec = stored_record(self.store, config, "loop")
        if rec is None:
            raise KeyError(f"no stored training record of any backend for config {config}")
        return rec


def train_record(store: ResultStore, config: dict, data: TensorDataset, device: str = "auto",
                 backend: str = "auto") -> dict:
    """One HASFL training run without a clock, from the store if any backend has it (module docstring), else
    trained by ``backend`` on ``device`` (:func:`fedlib.hasfl.training.train_run`) and stored (a rerun is a cache
    hit).

    Args:
        store: HASFL's result store (:func:`fedlib.lab.hasfl.runs.experiments.result_store`). config: a
            :func:`fedlib.lab.hasfl.runs.training.run_config`. data: the loaded dataset. device: ``"auto"`` (CUDA when
            present), ``"cpu"``, ``"cuda"``. backend: ``"auto"``, ``"loop"`` or a stacked variant
            (:data:`fedlib.split.backends.BACKENDS`).

    Returns:
        :func:`fedlib.split.run_split`'s record without ``sim_s`` (per evaluation: round, epoch, test_acc,
        test_loss, train_loss, elapsed_s) plus ``converged_index`` and ``converged_acc`` (None when the rule never
        fires), ``test_samples`` and ``elapsed_s`` (the whole run, s); ``"backend"`` when a stacked backend
        computed it.

    Raises:
        TypeError: ``store`` is not a ResultStore. ValueError: an unknown backend or device (CUDA asked for but
        absent).
    """
    used = resolve_backend(backend, resolve_device(device))
    return get_or_run(store, config, functools.partial(train_run, config, data, device, used), used)


def get_or_run(store: ResultStore, config: dict, compute, backend: str = "loop") -> dict:
    """The training record of ``config`` from ``store`` if any backend stored it (:func:`stored_record`: ``backend``'s
    first), else ``compute()`` (e.g. ``functools.partial(fedlib.hasfl.training.train_run, config, data, device,
    backend)``) stored under ``backend``'s key (:func:`keyed`). ``backend``: resolved, ``"loop"`` or a stacked
    variant (:func:`fedlib.split.backends.resolve_backend`).

    Raises:
        TypeError: ``store`` is not a ResultStore. ValueError: an unknown backend.
    """
    found = stored_record(store, config, backend)
    if found is not None:
        return found
    s, c = keyed(store, config, backend)
    return s.get_or_run(c, compute)
