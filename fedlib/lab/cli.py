"""One convention for every way into fedlib: each ``python -m fedlib.*`` command, each ``run_all.sh`` flag and each
``FEDLIB_*`` environment variable (``tests/test_entry_points.py`` checks every one of them).

1. ``--help`` prints the usage and does nothing else: exit 0, no file or folder created, changed or deleted.
2. Every argument and variable is checked before any work starts. An unknown flag exits 2 and names the flag
   (an abbreviation too: ``--prof`` is not ``--profile``); so does an unknown ``FEDLIB_*`` variable.
3. An option given twice is refused (exit 2, naming it), unless its help says how repeats combine.
4. Booleans read one way: ``1``/``true``/``yes`` on, ``0``/``false``/``no``/empty/unset off, any case; anything
   else is refused naming the variable (:func:`fedlib.lab.paths.env_flag`). A command-line switch takes no
   value (``--commit``, never ``--commit=yes``).
5. A command creates only its documented, git-ignored default folders (``.cache/``, ``.scratch/``,
   ``.executed/``, ``site/``) or the folder the user named. A folder it reads must exist (:func:`existing_dir`):
   a misspelt one is refused, never created. Nothing deletes or replaces a folder it did not create. A folder
   given as a result store (``--store``, ``--dir``, ``FEDLIB_CACHE_DIR``) holds records only (:func:`store_dir`):
   a metrics or figures folder is refused. No command writes a committed folder (:func:`committed_folder`:
   ``figures/``, ``notebooks/``, ...) except the regeneration commands, which say so (``run_all.sh``,
   ``FEDLIB_COMMIT=1``, ``python -m fedlib.lab.tables``).
6. An error names the argument or variable and what is allowed.
7. An option that does not apply to what was asked for is refused, naming what it applies to, never dropped.
8. A command that writes a folder others write too (the site, the notebook runner, the tables, ``prune
   --delete``) holds a lock on it while it runs (:func:`fedlib.lab.runlock.exclusive`); a second one started
   meanwhile is refused in one line naming the holder.

In Python, :class:`ArgumentParser` gives rules 2, 3 and the variables of 4; ``run_all.sh`` does the same by hand.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from fedlib.lab.parallel import check_scheduler_address, notebook_threads
from fedlib.lab.paths import REPO_ROOT, committing, env_flag
from fedlib.lab.store import cache_only, is_record

BOOLEANS = {"FEDLIB_COMMIT": "write the committed figures and store (fedlib.lab.paths.committing)",
            "FEDLIB_CACHE_ONLY": "return stored records only (fedlib.lab.store.cache_only)",
            "FEDLIB_SLOW": "run the test suite's larger property sets",
            "FEDLIB_NO_FOOTER": "leave the provenance footer out of the figures (fedlib.lab.plotting.caption)"}
FOLDERS = {"FEDLIB_FIGURES_DIR": "figures", "FEDLIB_METRICS_DIR": "metrics", "FEDLIB_CACHE_DIR": "the result store",
           "FEDLIB_DATA_DIR": "datasets"}
ENVIRONMENT = {**BOOLEANS, **{k: f"folder: {v}" for k, v in FOLDERS.items()},
               "FEDLIB_THREADS": "a notebook's threads, a positive integer (fedlib.lab.parallel.notebook_threads)",
               "FEDLIB_DASK_SCHEDULER": "a Dask scheduler address (fedlib.lab.parallel.check_scheduler_address)"}
"""Every ``FEDLIB_*`` variable fedlib reads, with what it holds."""


def check_environment() -> dict:
    """Check every ``FEDLIB_*`` variable of ``os.environ`` (rule 2): booleans through the readers the library uses,
    folders not a file, ``FEDLIB_THREADS`` a positive integer, ``FEDLIB_DASK_SCHEDULER`` an address. Returns
    ``{name: value read}`` of those set.

    Raises:
        ValueError: an unknown ``FEDLIB_*`` name or a bad value; the message names the variable and what is allowed.
    """
    readers = {"FEDLIB_COMMIT": committing, "FEDLIB_CACHE_ONLY": cache_only,
               "FEDLIB_SLOW": lambda: env_flag("FEDLIB_SLOW", BOOLEANS["FEDLIB_SLOW"]),
               "FEDLIB_NO_FOOTER": lambda: env_flag("FEDLIB_NO_FOOTER", BOOLEANS["FEDLIB_NO_FOOTER"]),
               "FEDLIB_THREADS": notebook_threads,
               "FEDLIB_DASK_SCHEDULER": lambda: check_scheduler_address(os.environ["FEDLIB_DASK_SCHEDULER"])}
    out = {}
    for name in sorted(k for k in os.environ if k.startswith("FEDLIB_")):
        value = os.environ[name]
        if name not in ENVIRONMENT:
            raise ValueError(f"{name} is not a fedlib variable; fedlib reads {', '.join(sorted(ENVIRONMENT))}")
        if name in readers:
            value = readers[name]()
        elif name in FOLDERS and value and Path(value).exists() and not Path(value).is_dir():
            raise ValueError(f"{name} must name a folder ({FOLDERS[name]}), got the file {value!r}")
        elif name == "FEDLIB_CACHE_DIR" and value and Path(value).is_dir() and not_a_store(Path(value)):
            raise ValueError(f"{name} must name a result store folder (new, empty or holding records): "
                             f"{not_a_store(Path(value))}")
        out[name] = value
    return out


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {value}")
    return value


def existing_dir(text: str) -> Path:
    """argparse type: a folder that exists (one the command reads; a misspelt name is refused, never created)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a folder, got ''")
    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"no folder at {text}" if not Path(text).exists() else f"{text} is a file")
    return Path(text)


#: the entries of a result store folder (:class:`fedlib.lab.store.ResultStore`): records, their locks, temporary
#: files, and the takeover guards (``.lock.takeover``) that the lock protocol before 2026-12-07 left in a store
STORE_ENTRY = re.compile(r"^(?:[0-9a-f]+\.(?:json|lock|lock\.takeover)|\.tmp-.*|\.gitkeep)$")
#: the repository's committed folders: only the regeneration commands write there (``run_all.sh``,
#: ``FEDLIB_COMMIT=1``, ``python -m fedlib.lab.tables``)
COMMITTED = ("figures", "notebooks", "fedlib", "docs", "tests")


def not_a_store(folder: Path) -> str | None:
    """Why ``folder`` (an existing folder) is not a result store, or None when it is one (empty, or holding only
    :data:`STORE_ENTRY` files: a metrics folder, a figures folder or a profile folder is not)."""
    other = sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir() if not STORE_ENTRY.match(p.name))
    if not other:
        sample = sorted(p for p in folder.glob("*.json") if not p.name.startswith(".tmp-"))[:3]   # a few read
        if sample and not any(_record_file(p) for p in sample):
            return (f"{folder} is not a result store: its JSON files are not fedlib records (e.g. {sample[0].name}: "
                    f"no schema, key, config, code_hash and record)")
        return None
    below = sorted(str(p) for p in folder.glob("**/store") if p.is_dir())[:2]
    return (f"{folder} is not a result store: it holds {', '.join(other[:3])}{' …' if len(other) > 3 else ''} "
            f"(a store holds only <key>.json records)" + (f"; did you mean {' or '.join(below)}?" if below else ""))


def _record_file(path: Path) -> bool:
    """Whether ``path`` holds a result store's envelope (:func:`fedlib.lab.store.is_record`)."""
    try:
        return is_record(json.loads(path.read_text()))
    except (OSError, UnicodeDecodeError, ValueError):
        return False


def committed_folder(folder: Path | str) -> str | None:
    """The committed folder of the repository that ``folder`` is (or lies in): ``figures/``, ``notebooks/``, ...
    (:data:`COMMITTED`), ``"the repository"`` for its root; None for any other folder (``.cache/``, ``site/``, a
    folder outside the repository)."""
    try:
        rel = Path(folder).resolve().relative_to(REPO_ROOT)
    except ValueError:
        return None
    if not rel.parts:
        return "the repository"
    return f"{rel.parts[0]}/" if rel.parts[0] in COMMITTED else None


def store_dir(text: str) -> Path:
    """argparse type: an existing result store folder (:func:`existing_dir`, then :func:`not_a_store`)."""
    folder = existing_dir(text)
    why = not_a_store(folder)
    if why:
        raise argparse.ArgumentTypeError(why)
    return folder


def writable_dir(text: str) -> Path:
    """argparse type: a folder a command writes (it may not exist yet), outside the committed folders
    (:func:`committed_folder`)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a folder, got ''")
    if Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file")
    where = committed_folder(text)
    if where:
        raise argparse.ArgumentTypeError(f"{text} is in {where}, a committed folder; name a folder of your own "
                                         f"(outside figures/, notebooks/, fedlib/, docs/, tests/)")
    return Path(text)


class _Once:
    """Mixin of argparse's storing actions: the option's second appearance is refused (argparse overwrites)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = getattr(parser, "_given", None)
        if option_string is not None and given is not None:
            if self in given:
                spelt = "" if given[self] == option_string else f" (as {given[self]} and {option_string})"
                raise argparse.ArgumentError(self, f"given twice{spelt}; give it once")
            given[self] = option_string
        super().__call__(parser, namespace, values, option_string)


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` under the convention (module docstring): no abbreviated options, an option
    given twice refused, an unknown flag named even when a positional argument is missing, and the ``FEDLIB_*``
    variables checked (:func:`check_environment`) once the arguments parse. ``action="append"`` / ``"count"`` /
    ``"extend"`` keep argparse's combining (say so in the option's help)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        for name in (None, "store", "store_const", "store_true", "store_false"):
            base = self._registry_get("action", name)
            self.register("action", name, type(f"Once{base.__name__}", (_Once, base), {}))

    def parse_known_args(self, args=None, namespace=None):
        self._given = {}
        try:
            return super().parse_known_args(args, namespace)
        finally:
            self._given = None

    def parse_args(self, args=None, namespace=None):
        argv = sys.argv[1:] if args is None else list(args)
        for arg in argv:
            if arg == "--":
                break
            if not arg.startswith("-") or arg == "-" or arg.split("=", 1)[0] in self._option_string_actions:
                continue
            if not arg.startswith("--") and arg[:2] in self._option_string_actions:     # -j4
                continue
            try:
                float(arg)                                                              # a negative number
            except ValueError:
                options = sorted(o for o in self._option_string_actions if o.startswith("--"))
                self.error(f"unrecognized argument {arg.split('=', 1)[0]}; the options are {', '.join(options)}")
        parsed = super().parse_args(argv, namespace)
        try:
            check_environment()
        except ValueError as exc:
            self.error(str(exc))
        return parsed
