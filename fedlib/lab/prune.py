"""Stale records in a result store: ``python -m fedlib.lab.prune [--dir DIR] [--delete]``.

A record is keyed by its config and the hash of the source that computes it (:mod:`fedlib.lab.store`), so an edit
of that source leaves the old records in place, never read again. In a committed store
(``figures/<profile>/store/``, see ``run_all.sh``) they would accumulate in git. This command sorts every
``<key>.json`` of a store folder by its envelope's ``code_hash``:

- **current**: the hash of one of the six stores this checkout opens (HIST's and DTFL's ``STORE_CODE``, DTFL's
  with the stacked backend's ``STACKED_CODE`` for records trained on it, HASFL's ``STORE_CODE`` for decisions and
  pilots, HASFL's ``TRAIN_CODE`` for training runs, with ``BACKEND_CODE`` for those a stacked backend trained);
- **stale**: any other hash (a record of older code);
- **newer**: a record of a newer fedlib (a higher envelope schema: a store shared with a newer checkout), left
  alone, never re-keyed nor deleted;
- **unreadable**: not JSON or not a store envelope (left alone and named in ``unreadable_files``;
  :class:`fedlib.lab.store.ResultStore` reports such a file by name when a run asks for it). A folder whose JSON
  files are none of them records is not a store: refused, nothing changed.

Without ``--delete`` it only reports. With ``--delete`` it removes the stale records, nothing else (locks and
temporary files are the store's own business). Prints one JSON line: ``dir``, ``current``, ``stale``,
``newer``, ``unreadable`` (counts), ``unreadable_files`` (names), ``stale_by_hash`` (hash -> count), ``deleted``.

``--rekey`` first moves the records of :data:`REKEYED` hashes to the current hash of their store (new key, same
config and record), then reports. Those are hashes of earlier code whose records the current code reproduces bit for
bit: 0.2.0 (the store then hashed infrastructure: ``fedlib.core``'s store, paths, runner), 0.3.0 (before input
checks that only refuse bad input, and before HASFL's modules moved into sub-packages), and the keys of files' bytes
and paths (before :func:`fedlib.lab.code_hash.source_hash` hashed syntax trees without docstrings).
"""
from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

from fedlib.lab import paths
from fedlib.lab.cli import ArgumentParser, not_a_store
from fedlib.lab.code_hash import source_hash
from fedlib.lab.store import SCHEMA, is_record
from fedlib.core.validate import check_bool


def current_hashes() -> dict[str, str]:
    """The code hash of every store this checkout opens, ``{hash: store name}`` (store names ``hist``, ``dtfl``,
    ``dtfl_stacked``, ``hasfl``, ``hasfl_train``)."""
    return {source_hash(code): name for name, code in store_codes().items()}


REKEYED = {
    # fedlib 0.2.0 hashed all of fedlib.core; 0.3.0 hashes only fedlib.lab.RECORD_CODE. The computing modules
    # are the same (a sample of records retrained bit-identically: notebooks' run log), so the records move.
    "dc988b7f6228d452": "hist", "42ade3401c196ac3": "dtfl", "5e5c5f26b6a975e7": "hasfl", "2f39a7b8a91f5fd0": "hasfl_train",
    # fedlib 0.4.0 added input checks (refusals only) and moved HASFL's modules into sub-packages; a sample of
    # records retrained with 0.3.0 and 0.4.0 code came out bit-identical (notebooks' run log), so the records move.
    "677d2c711f61a00e": "hist", "a9c2bf08e3b6b6c3": "dtfl", "5b347fc5eea42391": "hasfl", "2d31a37c5f245d3a": "hasfl_train",
    # 0.4.0 before a change of fedlib.data's command line only (python -m fedlib.lab.data --debian-dir), which computes
    # no record; a sample retrained after it is bit-identical (run log)
    "cb6c7374e02d5dce": "hist", "bd97686a97f61b0c": "dtfl", "a859c978d6bc0623": "hasfl", "542076dc687cdec7": "hasfl_train",
    # DTFL's store before it named the split modules it uses (it hashed the whole fedlib.split package) and before
    # run_engine took a backend (the default, loop, calls the same engine functions); a sample of records
    # retrained after the change is bit-identical (run log)
    "4a4334db4b097f92": "dtfl",
    # DTFL's store before run_engine's backend default became "auto" (the loop on the CPU, as before: loop records
    # keep their config, and stacked ones are keyed apart) and before it hashed fedlib.split.backends; the loop
    # backend calls the same engine functions; a sample of records retrained after the change is bit-identical
    # (run log)
    "a16045428da459fe": "dtfl",
    # before the engine's entry checks (dtype, device, an all-absent round, weights in every mode: refusals before
    # the round, in both backends), the stacked backend's key naming fedlib.split.stacked_layers, check_cuts and
    # validate_decision naming ragged input, and fedlib.data's command line on fedlib.lab.cli (no record calls it);
    # a sample retrained with the old and the new code on one machine is bit-identical (run log, 2026-11-27)
    "d5cd56b3be1d4564": "hist", "1183bb6ea6237888": "dtfl", "4152b87ad3173411": "hasfl",
    "92fd293b52cdcae7": "hasfl_train",
    # HASFL's store between the entry checks and [24]'s beta estimator (a new record kind and decisions; the pilot's
    # computation unchanged): the VGG-16 pilot retrained with both is bit-identical (run log, 2026-11-27)
    "ef2751920db619e7": "hasfl",
    # before the stacked backend's variants (channels-last, compiled: fedlib.split.backends, which DTFL's store
    # hashes; run_engine's backend check) and HASFL's training on either backend (train_config, train_jobs,
    # train_backend; the hasfl store now hashes fedlib.split.backends and records_backend): the loop backend and the
    # pilots compute as before; a DTFL run, FedAvg, FedYogi and the VGG-16 pilot retrained with the old and the new
    # code on one machine are bit-identical (run logs, 2026-11-27)
    "218c59aa921c0ceb": "dtfl", "252c69c4beefc7d8": "hasfl",
    # the keys before they hashed syntax trees without docstrings and file names (fedlib.lab.code_hash.source_hash);
    # no hashed module changed, and a sample per store retrained with the new code is bit-identical (run logs,
    # 2026-12-02)
    "063bebc0d0775083": "hist", "15ec4b072436c5fd": "dtfl", "e8829110476457a8": "dtfl_stacked",
    "7b18755eaac4764c": "hasfl", "6df9d4ddc2ed25a2": "hasfl_train", "a4c248b1a15eecf5": "hasfl_train_stacked",
    # before DTFL's Algorithm 1 became one loop of named steps (fedlib.dtfl.run: the round loop moved out of
    # fedlib.dtfl.training, the tier scheduler a round at a time) and fedlib.data's missing-dataset messages named
    # python -m fedlib.lab.data; a DTFL run (scheduled tiers, sampled clients), FedAvg, FedYogi, SplitFed, the
    # privacy runs, a HIST run, the VGG-16 pilot and a HASFL training run retrained with the old and the new code on
    # one machine are bit-identical (run logs, 2026-12-02)
    "063d899f781a93a6": "hist", "d5379fbb5b041b51": "dtfl", "8b018e75c2f8ce85": "dtfl_stacked",
    "4d0e840ab16548b6": "hasfl", "00b476bb80d82e5e": "hasfl_train", "fd1d4e487536854b": "hasfl_train_stacked",
    # before the split engine's one record loop for every backend (fedlib.split.run_split's backend argument;
    # fedlib.split.records_backend's copy removed): a DTFL run (scheduled tiers, sampled clients, and on the stacked
    # backend), FedAvg, FedYogi, HASFL training runs on the loop and the stacked backend, and two committed
    # converged records (a VGG-16 HASFL run, a ResNet-20 DTFL run) retrained with the old and the new code on one
    # machine are bit-identical (run logs, 2026-12-03)
    "fc9910724df6b5f3": "dtfl", "0dddb1ecdf87d4fc": "dtfl_stacked", "285e4e5f47311a9a": "hasfl_train",
    "5255c7ea8b9baab8": "hasfl_train_stacked",
    # HIST before a client partition of your own could be named by import path (HistConfig.setting,
    # fedlib.hist.sampling.client_partition; the built-in settings partition as before): two HIST runs, an HFedAvg
    # run and a pilot of the bound's constants retrained with the old and the new code are bit-identical, and
    # equal to their committed records (run logs, 2026-12-03)
    "4e61286ef8e17445": "hist",
    # HIST's store before it hashed fedlib.core.components (which its partition code imports): no code changed
    "636e740f798c5863": "hist",
    # before fedlib had no import cycle (fedlib.split.blocks, fedlib.data.tensors, HIST's Prepared in
    # fedlib.hist.engine), DTFL's local-loss step became its own module behind the engine's LocalLossStep
    # (fedlib.dtfl.local_loss; the engine's backends typed classes, fedlib.split.backends.split_backend), and
    # components of your own were called through fedlib.core.components.call (HIST's partition checked for
    # determinism): a HIST run, an HFedAvg run, HIST's pilot constants, DTFL runs (changing tiers, sampled clients,
    # and on the stacked backend), FedAvg, FedYogi (loop and stacked), FedGKT, SplitFed, three privacy runs, HASFL's
    # VGG-16 pilot and [24]'s beta, HASFL training runs (loop and stacked) and three committed records (HIST quick,
    # DTFL and HASFL converged) retrained with the old and the new code on one machine are bit-identical (run log,
    # 2026-12-07)
    "4cca463d8800f8d6": "hist", "6c305b175bf91b44": "dtfl", "5e20949efa45b762": "dtfl_stacked",
    "0691d55457b42679": "hasfl", "03b214754bf1d03b": "hasfl_train", "5c19913e237e8391": "hasfl_train_stacked",
    # before a config's values were checked once (fedlib.data.partition.split runs the partitions without checking
    # again the counts a config checked; fedlib.split.latency.check_decision takes N as given), CIFAR-10 copies said
    # what they are (fedlib.data.copy_label in load_cifar's source) and a split model of your own could be named by
    # import path (fedlib.split.models.make_model / check_model in SplitConfig and DtflConfig, the DTFL and HASFL
    # stores hashing fedlib.core.components; the built-in models build as before): a HIST run, an HFedAvg run,
    # HIST's pilot constants, DTFL runs (scheduled tiers with sampled clients on the loop and the stacked backend,
    # all clients), FedAvg (sampled), FedYogi (loop and stacked), FedGKT, two privacy runs (distance correlation
    # with patch shuffling; stacked), HASFL's VGG-16 pilot constants and [24]'s beta, HASFL training (loop and
    # stacked) and two committed records (HIST quick, HASFL converged pilot constants) retrained with the old and
    # the new code on one machine are bit-identical (run log, 2026-12-07)
    "7249c4d139b65520": "hist", "945a34d12d9fc3f9": "dtfl", "d769b754d62aa716": "dtfl_stacked",
    "39119278dd82040f": "hasfl", "368e4d1b125738b7": "hasfl_train", "d37b1437d78cdf97": "hasfl_train_stacked",
}
"""Code hashes of earlier fedlib whose records are valid under the current code: ``{old hash: store name}``."""


def rekey(folder: Path, mapping: dict[str, str] | None = None, keep_old: bool = False) -> dict[str, int]:
    """Move every record of ``folder`` whose ``code_hash`` is a key of ``mapping`` (default :data:`REKEYED`) to
    the current hash of the named store: the envelope gets the new ``code_hash`` and ``key``, the file the new
    name (written atomically; the old file is removed after). A record already present under its new key is
    left as it is and the old file removed. With ``keep_old`` the old file stays (a copy, for a run of the older
    code that still reads the store; :func:`prune` with ``delete`` removes it later). Returns ``{store name:
    records moved}``.

    Raises:
        FileNotFoundError: ``folder`` is not a folder. ValueError: ``mapping`` names an unknown store.
    """
    from fedlib.lab.store import ResultStore

    check_bool("keep_old", keep_old)
    mapping = REKEYED if mapping is None else mapping
    current = {name: h for h, name in current_hashes().items()}
    unknown = sorted(set(mapping.values()) - set(current))
    if unknown:
        raise ValueError(f"mapping names unknown stores {unknown}; stores: {sorted(current)}")
    moved: dict[str, int] = {}
    stores = {name: ResultStore(folder, code=code, read_only=()) for name, code in store_codes().items()
              if name in mapping.values()}
    for path in classify(Path(folder), set(current.values()))["stale"]:
        env = json.loads(path.read_text())
        name = mapping.get(env["code_hash"])
        if name is None:
            continue
        if not stores[name].path(env["config"]).is_file():
            stores[name].save(env["config"], env["record"])
        if not keep_old:
            path.unlink()
        moved[name] = moved.get(name, 0) + 1
    return moved


def store_codes() -> dict[str, tuple]:
    """The code (modules hashed) of every store this checkout opens, ``{store name: modules}``: DTFL's records
    trained on the split engine's stacked backend (on CUDA) are keyed by DTFL's code and
    :data:`fedlib.split.backends.STACKED_CODE` (``dtfl_stacked``, :func:`fedlib.dtfl.training.keyed_by_backend`);
    HASFL's training records of a stacked backend by its training code and
    :data:`fedlib.lab.hasfl.runs.train_run.BACKEND_CODE` (``hasfl_train_stacked``)."""
    from fedlib.lab.dtfl.experiments import STORE_CODE as DTFL_CODE
    from fedlib.lab.hasfl.runs.experiments import STORE_CODE as HASFL_CODE
    from fedlib.lab.hasfl.runs.train_run import BACKEND_CODE
    from fedlib.lab.hasfl.runs.train_run import TRAIN_CODE
    from fedlib.lab.hist.experiments import STORE_CODE as HIST_CODE
    from fedlib.split.backends import STACKED_CODE
    return {"hist": HIST_CODE, "dtfl": DTFL_CODE, "dtfl_stacked": tuple(DTFL_CODE) + STACKED_CODE,
            "hasfl": HASFL_CODE, "hasfl_train": TRAIN_CODE, "hasfl_train_stacked": tuple(TRAIN_CODE) + BACKEND_CODE}


def classify(folder: Path, current: set[str]) -> dict[str, list[Path]]:
    """Every ``*.json`` directly in ``folder`` as ``{"current": [...], "stale": [...], "newer": [...],
    "unreadable": [...]}`` (sorted paths), by whether its envelope's ``code_hash`` is in ``current``; ``newer``: a
    record of a newer fedlib (a higher schema: never touched here), ``unreadable``: not JSON or not an envelope.

    Raises:
        FileNotFoundError: ``folder`` is not a folder.
    """
    if not folder.is_dir():
        raise FileNotFoundError(f"dir: no store folder at {folder}")
    out: dict[str, list[Path]] = {"current": [], "stale": [], "newer": [], "unreadable": []}
    for path in sorted(folder.glob("*.json")):
        try:
            env = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            env = None
        if not is_record(env) or not isinstance(env["code_hash"], str):
            out["unreadable"].append(path)
        elif env["schema"] > SCHEMA:
            out["newer"].append(path)
        elif env["schema"] < SCHEMA:
            out["unreadable"].append(path)
        else:
            out["current" if env["code_hash"] in current else "stale"].append(path)
    return out


def prune(folder: Path, delete: bool = False, current: set[str] | None = None) -> dict:
    """Report (and with ``delete``, remove) the stale records of the store in ``folder``; ``current``: the code
    hashes to keep (default :func:`current_hashes`). Returns the summary printed by the command.

    Raises:
        ValueError: none of the folder's JSON files is a record (not a store; nothing changed).
        FileNotFoundError: ``folder`` is not a folder, or holds no ``*.json`` file (the message names the store
            folders below it, e.g. ``figures/converged/store`` for ``figures/converged``).
        ParameterTypeError: ``delete`` is not a bool.
    """
    check_bool("delete", delete)
    keep = set(current_hashes()) if current is None else set(current)
    groups = classify(Path(folder), keep)
    if groups["unreadable"] and not (groups["current"] or groups["stale"] or groups["newer"]):
        names = ", ".join(p.name for p in groups["unreadable"][:3])
        raise ValueError(f"dir: {folder} is not a result store: none of its {len(groups['unreadable'])} JSON files is "
                         f"a fedlib record (e.g. {names}); nothing was changed")
    if not any(groups.values()):
        stores = sorted(str(p) for p in Path(folder).glob("**/store") if p.is_dir() and any(p.glob("*.json")))
        raise FileNotFoundError(f"dir: {folder} holds no records (no <key>.json files)"
                                + (f"; did you mean {' or '.join(stores)}?" if stores else ""))
    by_hash: dict[str, int] = {}
    for path in groups["stale"]:
        h = json.loads(path.read_text())["code_hash"]
        by_hash[h] = by_hash.get(h, 0) + 1
    if delete:
        for path in groups["stale"]:
            path.unlink()
    return {"dir": str(folder), "current": len(groups["current"]), "stale": len(groups["stale"]),
            "newer": len(groups["newer"]), "unreadable": len(groups["unreadable"]),
            "unreadable_files": [p.name for p in groups["unreadable"]], "stale_by_hash": by_hash,
            "deleted": len(groups["stale"]) if delete else 0}


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m fedlib.lab.prune", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=None,
                        help="store folder (default: FEDLIB_CACHE_DIR or .cache/results)")
    parser.add_argument("--delete", action="store_true", help="remove the stale records (default: report only)")
    parser.add_argument("--rekey", action="store_true",
                        help="first move records of earlier code that is still valid (REKEYED) to the current keys")
    args = parser.parse_args(argv)
    if args.dir is not None and not args.dir.is_dir():      # before any work: a misspelt folder is never created
        print(f"error: --dir: no store folder at {args.dir}", file=sys.stderr)
        return 2
    if args.dir is not None and not_a_store(args.dir):        # a metrics or figures folder is no store
        print(f"error: --dir: {not_a_store(args.dir)}", file=sys.stderr)
        return 2
    folder = args.dir if args.dir is not None else paths.cache_dir()
    from fedlib.lab.runlock import Busy, exclusive
    try:
        with exclusive(folder, "python -m fedlib.lab.prune") if args.delete or args.rekey else contextlib.nullcontext():
            moved = rekey(Path(folder)) if args.rekey else {}
            summary = prune(folder, args.delete)
        if args.rekey:
            summary["rekeyed"] = moved
    except (FileNotFoundError, ValueError, Busy) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
