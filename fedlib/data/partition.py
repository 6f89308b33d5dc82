"""Seeded partitioners: a label array -> one index array per client.

All functions are pure: the same labels and the same ``numpy.random.Generator`` state give the same
partition. They return ``list[np.ndarray]`` (int64 indices into the label array), one array per client.

- :func:`iid`: uniform random split (sizes differ by at most one).
- :func:`shards`: McMahan et al. (AISTATS 2017) pathological non-i.i.d.: sort by label, cut into equal
  shards, give each client ``shards_per_client`` random shards. HIST's "fully non-i.i.d." setting
  (HIST Sec. V: 120 shards of 500, 2 per client).
- :func:`cell_iid_client_shards`: HIST's "cell i.i.d., client non-i.i.d." setting: an i.i.d. split into
  cells, then :func:`shards` inside each cell.
- :func:`dirichlet`: per-class Dirichlet(α) proportions over clients (Hsu et al. 2019), used by DTFL
  (α = 0.5).
- :func:`split`: the one dispatch by scheme name that HIST, the split engine (HASFL) and DTFL call.

Checks (**choice**, issue 68: a value is checked once, where it enters): the four partitioners check every argument,
since a user calls them directly; :func:`split` is called with the fields of a config that checked them when it
was built (:class:`fedlib.hist.HistConfig`, :class:`fedlib.dtfl.DtflConfig`, :class:`fedlib.split.SplitConfig`), so
it checks only what no config holds (the labels, the generator, the scheme's keywords, the sizes against the data)
and runs the same computations (``_iid``, ``_shards``, ``_cell_shards``, ``_dirichlet``) without checking the
counts again.
"""
from __future__ import annotations

import numpy as np


from ..core.validate import ParameterTypeError, check_array, check_float, check_int


def _check_labels(labels) -> np.ndarray:
    labels = check_array("labels", labels, low=0, integer=True)
    if labels.ndim != 1:
        raise ValueError(f"labels must be a 1-D array, got shape {labels.shape}")
    return labels


def _check_positive(name: str, value: int) -> None:
    check_int(name, value, 1)


def _check_rng(rng) -> None:
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(f"rng must be a numpy.random.Generator (e.g. fedlib.core.numpy_rng(seed, 'data')), "
                                 f"got {type(rng).__name__}")


def iid(num_samples: int, num_clients: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Uniform random split of ``range(num_samples)`` into ``num_clients`` parts (sizes differ by <= 1).

    Raises:
        ValueError: ``num_clients`` < 1 or more clients than samples.
    """
    check_int("num_samples", num_samples, 1)
    _check_positive("num_clients", num_clients)
    _check_rng(rng)
    return _iid(num_samples, num_clients, rng)


def _iid(num_samples: int, num_clients: int, rng: np.random.Generator) -> list[np.ndarray]:
    """:func:`iid` with its counts already checked (>= 1) by the caller or a config."""
    if num_clients > num_samples:
        raise ValueError(f"num_clients ({num_clients}) must be <= the number of samples ({num_samples})")
    return [np.sort(part) for part in np.array_split(rng.permutation(num_samples), num_clients)]


def shards(labels, num_clients: int, shards_per_client: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Sort-and-shard non-i.i.d. partition (McMahan et al. 2017; HIST Sec. V).

    The indices are sorted by label (ties in random order), cut into ``num_clients * shards_per_client``
    equal contiguous shards, and each client receives ``shards_per_client`` shards drawn at random without
    replacement. Every client gets ``len(labels) / (num_clients * shards_per_client) * shards_per_client``
    samples.

    Args:
        labels: ``[n]`` integer labels.
        num_clients: number of clients (>= 1).
        shards_per_client: shards per client (>= 1).
        rng: numpy Generator (stream ``data``).

    Raises:
        ValueError: non-positive counts, more clients than samples, or a shard count that does not divide
        ``len(labels)`` (shards must be equal).
    """
    labels = _check_labels(labels)
    _check_positive("num_clients", num_clients)
    _check_positive("shards_per_client", shards_per_client)
    _check_rng(rng)
    return _shards(labels, num_clients, shards_per_client, rng)


def _shards(labels: np.ndarray, num_clients: int, shards_per_client: int, rng: np.random.Generator) -> list[np.ndarray]:
    """:func:`shards` of checked ``labels`` with its counts already checked (>= 1) by the caller or a config."""
    n = len(labels)
    if num_clients > n:
        raise ValueError(f"num_clients ({num_clients}) must be <= the number of samples ({n})")
    num_shards = num_clients * shards_per_client
    if n % num_shards:
        raise ValueError(f"num_clients * shards_per_client = {num_shards} shards must divide the {n} samples "
                         f"into equal shards (choose shards_per_client so that {n} % shards == 0)")
    shard_size = n // num_shards
    # lexsort: primary key label, secondary a random key, so the order inside a class is random.
    order = np.lexsort((rng.random(n), labels))
    shard_ids = rng.permutation(num_shards).reshape(num_clients, shards_per_client)
    return [np.sort(np.concatenate([order[s * shard_size:(s + 1) * shard_size] for s in row]))
            for row in shard_ids]


def cell_iid_client_shards(labels, num_cells: int, clients_per_cell: int, shards_per_client: int,
                           rng: np.random.Generator) -> list[np.ndarray]:
    """HIST's "cell i.i.d., client non-i.i.d." partition (HIST Sec. V).

    The training set is split uniformly at random into ``num_cells`` equal parts, one per cell; inside each
    part, :func:`shards` gives each of the cell's clients ``shards_per_client`` label-sorted shards. Clients
    are returned cell by cell: client ``u`` belongs to cell ``u // clients_per_cell``.

    Raises:
        ValueError: ``num_cells`` does not divide the samples, or :func:`shards` rejects a cell.
    """
    labels = _check_labels(labels)
    _check_positive("num_cells", num_cells)
    _check_positive("clients_per_cell", clients_per_cell)
    _check_positive("shards_per_client", shards_per_client)
    _check_rng(rng)
    return _cell_shards(labels, num_cells, clients_per_cell, shards_per_client, rng)


def _cell_shards(labels: np.ndarray, num_cells: int, clients_per_cell: int, shards_per_client: int,
                 rng: np.random.Generator) -> list[np.ndarray]:
    """:func:`cell_iid_client_shards` of checked ``labels`` with its counts already checked (>= 1)."""
    n = len(labels)
    if n % num_cells:
        raise ValueError(f"num_cells ({num_cells}) must divide the {n} samples into equal cells")
    cells = rng.permutation(n).reshape(num_cells, n // num_cells)
    out: list[np.ndarray] = []
    for cell in cells:
        for part in _shards(labels[cell], clients_per_cell, shards_per_client, rng):
            out.append(np.sort(cell[part]))
    return out


def dirichlet(labels, num_clients: int, alpha: float, rng: np.random.Generator, min_size: int = 10,
              max_retries: int = 1000) -> list[np.ndarray]:
    """Label-Dirichlet non-i.i.d. partition (Hsu et al. 2019; DTFL App. A.3 uses α = 0.5).

    For every class c, proportions p_c ~ Dir(α·1_K) over the K clients split that class's (shuffled)
    samples. The draw is repeated until every client has at least ``min_size`` samples.

    Raises:
        ValueError: ``alpha`` <= 0, ``min_size`` < 0, more clients than samples, or
        ``num_clients * min_size`` > samples.
        RuntimeError: no draw met ``min_size`` in ``max_retries`` tries (lower ``min_size`` or raise α).
    """
    labels = _check_labels(labels)
    _check_positive("num_clients", num_clients)
    _check_positive("max_retries", max_retries)
    check_float("alpha", alpha, 0, low_open=True)
    check_int("min_size", min_size, 0)
    _check_rng(rng)
    return _dirichlet(labels, num_clients, alpha, rng, min_size, max_retries)


def _dirichlet(labels: np.ndarray, num_clients: int, alpha: float, rng: np.random.Generator, min_size: int = 10,
               max_retries: int = 1000) -> list[np.ndarray]:
    """:func:`dirichlet` of checked ``labels`` with its counts and α already checked by the caller or a config."""
    n = len(labels)
    if num_clients > n:
        raise ValueError(f"num_clients ({num_clients}) must be <= the number of samples ({n})")
    if num_clients * min_size > n:
        raise ValueError(f"num_clients = {num_clients} clients of at least min_size = {min_size} samples each need "
                         f"{num_clients * min_size} samples, but the training data holds {n} (raise train_subset or "
                         "lower num_clients)")
    classes = np.unique(labels)
    for _ in range(max_retries):
        parts: list[list[np.ndarray]] = [[] for _ in range(num_clients)]
        for c in classes:
            idx = rng.permutation(np.flatnonzero(labels == c))
            cuts = (np.cumsum(rng.dirichlet(np.full(num_clients, alpha)))[:-1] * len(idx)).astype(int)
            for k, chunk in enumerate(np.split(idx, cuts)):
                parts[k].append(chunk)
        out = [np.sort(np.concatenate(p)) for p in parts]
        if min(len(p) for p in out) >= min_size:
            return out
    raise RuntimeError(f"dirichlet: no draw gave every client >= min_size={min_size} samples in "
                       f"max_retries={max_retries} tries; lower min_size or raise alpha (={alpha})")


#: the partition schemes of :func:`split` and the keyword arguments each one needs
SCHEMES = {"iid": (), "shards": ("shards_per_client",), "cell_shards": ("num_cells", "shards_per_client"),
           "dirichlet": ("alpha",)}


def split(labels, num_clients: int, scheme: str, rng: np.random.Generator, *, shards_per_client: int | None = None,
          num_cells: int | None = None, alpha: float | None = None) -> list[np.ndarray]:
    """One dispatch for every paper's client partition: ``labels`` -> ``num_clients`` index arrays by ``scheme``.

    - ``"iid"``: :func:`iid` over ``len(labels)`` samples (DTFL, HASFL's IID runs).
    - ``"shards"``: :func:`shards` with ``shards_per_client`` (HIST's fully non-i.i.d. setting, HASFL's non-IID).
    - ``"cell_shards"``: :func:`cell_iid_client_shards` with ``num_cells`` cells of ``num_clients / num_cells``
      clients and ``shards_per_client`` (HIST's cell-i.i.d., client-non-i.i.d. setting); clients cell by cell.
    - ``"dirichlet"``: :func:`dirichlet` with ``alpha`` (DTFL App. A.3, α = 0.5) and its default ``min_size``.

    The scheme's computation is run with ``rng`` as it is, so the result (and the draws taken from ``rng``) are
    those of calling its function directly. Keyword arguments the scheme does not use are ignored, so a config's
    fields can be passed whatever its scheme. The counts and α are a config's (module docstring, "Checks"): they are
    not checked again here; the labels, ``rng``, the scheme and the sizes against the data are.

    Args:
        labels: ``[n]`` integer labels. num_clients: clients (>= 1, as the caller's config checked).
        scheme: a key of :data:`SCHEMES`. rng: numpy Generator (stream ``data``). shards_per_client, num_cells,
            alpha: the scheme's (>= 1, >= 1, > 0: the config's).

    Returns:
        ``num_clients`` sorted int64 index arrays into ``labels``.

    Raises:
        ValueError: unknown ``scheme``, a keyword the scheme needs is missing, ``labels`` not 1-D,
            ``num_cells`` does not divide ``num_clients``, or the scheme's function rejects its arguments.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {tuple(SCHEMES)}, got {scheme!r}")
    given = {"shards_per_client": shards_per_client, "num_cells": num_cells, "alpha": alpha}
    missing = [k for k in SCHEMES[scheme] if given[k] is None]
    if missing:
        raise ValueError(f"partition scheme {scheme!r} needs {', '.join(missing)}")
    _check_rng(rng)
    if scheme == "iid":
        labels = np.asarray(labels)
        if labels.ndim != 1 or len(labels) == 0:
            raise ValueError(f"labels must be a non-empty 1-D array, got shape {labels.shape}")
        return _iid(len(labels), num_clients, rng)
    labels = _check_labels(labels)
    if scheme == "shards":
        return _shards(labels, num_clients, shards_per_client, rng)
    if scheme == "dirichlet":
        return _dirichlet(labels, num_clients, alpha, rng)
    if num_clients % num_cells:
        raise ValueError(f"num_cells ({num_cells}) must divide num_clients ({num_clients}): equal cells")
    return _cell_shards(labels, num_cells, num_clients // num_cells, shards_per_client, rng)


def label_counts(labels, parts: list[np.ndarray], num_classes: int | None = None) -> np.ndarray:
    """``[num_clients, num_classes]`` matrix of per-client label counts.

    Raises:
        ValueError: an index outside the labels, ``num_classes`` <= the largest label. ParameterTypeError: types.
    """
    labels = _check_labels(labels)
    if not isinstance(parts, (list, tuple)):
        raise ParameterTypeError(f"parts must be a list of index arrays, got {type(parts).__name__}")
    if not parts:
        raise ValueError("parts must hold at least one client's index array, got an empty list")
    parts = [check_array(f"parts[{i}]", p, low=0, high=len(labels) - 1, integer=True, nonempty=False)
             for i, p in enumerate(parts)]
    k = int(labels.max() + 1)
    if num_classes is not None:
        k = check_int("num_classes", num_classes, k, extra=" (more than the largest label)")
    return np.stack([np.bincount(labels[p], minlength=k) for p in parts])
