"""Execute the project's notebooks headlessly with papermill: ``python -m fedlib.lab.notebooks``.

Used by ``run_all.sh`` and by the notebook tests. Notebooks live in ``notebooks/<paper>/<name>.ipynb`` and run in
path order (``hist_1_experiments`` before ``hist_2_figures``). Parameters of a profile come from two YAML files,
merged: ``notebooks/profiles/<profile>/<paper>.yaml`` (written once for a paper; each key applies to those of the
paper's notebooks that declare it) under ``notebooks/profiles/<profile>/<name>.yaml`` (that notebook only; every
key must be one of its parameters). A failing notebook does not stop the others; the exit status is non-zero if
any failed. A line when a notebook starts (its place in the selection, the time its last committed run took, what
is left), one a minute while it runs and one when it ends (:mod:`fedlib.lab.progress`), then a summary table. Executed notebooks (the report a user
opens, figures embedded) go to ``.executed/<profile>/<paper>/``.

Each kernel starts in the notebook's own folder, as Jupyter starts it, with the project's kernel (``fedlib``,
registered by ``run_all.sh``; ``python3`` where it is not registered), and imports the installed ``fedlib``
(``pip install -e .``). Threads are pinned as in JupyterLab: the kernel gets ``OMP_NUM_THREADS=1`` and
``MKL_NUM_THREADS=1`` (:data:`fedlib.lab.jupyter_setup.KERNEL_ENV`, the ``fedlib`` kernel's ``env``; set here
too, so the ``python3`` fallback gets them) and ``setup_notebook`` pins torch to 1 thread, or to
``FEDLIB_THREADS=<n>`` when the environment states it (checked before any notebook starts). Figures, metrics and
records go where :mod:`fedlib.lab.paths` says for the notebook's ``profile``: with ``--commit`` (``run_all.sh``'s
regeneration) into the committed ``figures/`` folders, else into ``.scratch/<profile>/``.

Inside each kernel, the notebook's first cell after its parameters cell starts it (:func:`setup_notebook`, exported
as ``fedlib.lab.setup_notebook``)::

    from fedlib.lab import setup_notebook
    from fedlib.lab.hist import checks as hist_checks

    setup_notebook(globals(), "hist", "hist_1_experiments")
    hist_checks.check_hist_1_experiments(globals())

It gives the notebook its profile's values (:func:`apply_profile`, the same files the runner gives papermill),
checks the parameters' types (:func:`fedlib.lab.params.validate_parameters`), applies the output rule of
:mod:`fedlib.lab.paths` for the notebook's ``profile`` and prints where figures, metrics and records go; the
notebook's checker then checks every parameter's range, choices and combinations, before any work.
"""
from __future__ import annotations

import contextlib
import fnmatch
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from fedlib.lab import paths, progress
from fedlib.lab.cli import ArgumentParser, writable_dir
from fedlib.lab.jupyter_setup import KERNEL_ENV
from fedlib.lab.parallel import notebook_threads, pin_threads
from fedlib.lab.params import NOTEBOOK_DIR, _injected_names, declared_parameters, sibling_parameters, validate_parameters
from fedlib.lab.paths import PROFILES, REPO_ROOT, committed_figures_dir
from fedlib.lab.runlock import Busy, exclusive
from fedlib.lab.story import display_path

PROFILE_DIR = NOTEBOOK_DIR / "profiles"


WORKED_EXAMPLE = "_your_method"
"""The name ending of a worked example, ``notebooks/<paper>/<paper>_your_method.ipynb``: a method of your own beside
the paper's, from a module beside the notebook. It decides no claim of the paper, so it has a Question and a "What it
shows" section instead of a Claim and a Verdict, and no row in any verdict table (:func:`is_worked_example`)."""


def is_worked_example(notebook: str | Path) -> bool:
    """Whether ``notebook`` (a path or a name) is a worked example (:data:`WORKED_EXAMPLE`)."""
    return Path(notebook).stem.endswith(WORKED_EXAMPLE)


def list_notebooks(only: str | None = None) -> list[Path]:
    """Notebooks ``notebooks/<paper>/*.ipynb`` in run order (sorted by path).

    Args:
        only: a glob or substring matched against the notebook's name (``hist_1_experiments``) and its paper's
            folder (``hist``); ``None`` selects every notebook.

    Raises:
        ValueError: ``only`` is empty or matches no notebook (the message lists the notebooks).
    """
    nbs = sorted(p for p in NOTEBOOK_DIR.glob("*/*.ipynb") if p.parent.name != "profiles")
    if only is None:
        return nbs
    if not isinstance(only, str) or not only.strip():
        raise ValueError(f"only must be a non-empty pattern, got {only!r}")
    picked = [p for p in nbs if any(fnmatch.fnmatch(s, only) or only in s for s in (p.stem, p.parent.name))]
    if not picked:
        raise ValueError(f"only={only!r} matches no notebook; notebooks: {', '.join(p.stem for p in nbs)}")
    return picked


def _read_yaml(path: Path) -> dict:
    import yaml

    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a mapping of parameter names to values, got {type(data).__name__}")
    return data


def notebook_parameters(notebook: Path, profile: str) -> dict:
    """The parameters ``notebook`` runs with at ``profile``: the paper's file filtered to the notebook's declared
    parameters, updated by the notebook's own file.

    Raises:
        ValueError: unknown profile; the profile has no file for the notebook's paper
            (``notebooks/profiles/<profile>/<paper>.yaml``: :func:`has_profile`); the notebook's own file names a
            parameter the notebook does not declare.
    """
    if not isinstance(notebook, (str, Path)):
        raise TypeError(f"notebook must be a path (str or pathlib.Path), got {type(notebook).__name__}")
    notebook = Path(notebook)
    if not notebook.is_file():
        raise FileNotFoundError(f"notebook {notebook} does not exist")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    if not has_profile(notebook, profile):
        raise ValueError(f"profile {profile!r} has no {PROFILE_DIR / profile / (notebook.parent.name + '.yaml')}: "
                         f"{notebook.parent.name} is not defined at {profile!r}")
    declared = set(declared_parameters(notebook))
    shared_path = PROFILE_DIR / profile / f"{notebook.parent.name}.yaml"
    shared = _read_yaml(shared_path)
    siblings = sibling_parameters(notebook.parent.name)
    stray = sorted(set(shared) - siblings)
    if stray:        # a key no notebook of the paper declares would apply to none: a misspelt name
        raise ValueError(f"{_shown(shared_path)} sets {', '.join(stray)}, which no "
                         f"{notebook.parent.name} notebook declares; their parameters: {', '.join(sorted(siblings))}")
    own_path = PROFILE_DIR / profile / f"{notebook.stem}.yaml"
    own = _read_yaml(own_path)
    unknown = sorted(set(own) - declared)
    if unknown:
        raise ValueError(f"{_shown(own_path)} sets {', '.join(unknown)}, which {notebook.stem} does "
                         f"not declare; its parameters: {', '.join(sorted(declared))}")
    return {**{k: v for k, v in shared.items() if k in declared}, **own}


def _shown(path: Path) -> str:
    """``path`` relative to the repository when inside it."""
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def check_profiles(profile: str, notebooks: list[Path]) -> None:
    """Check the profile files of every notebook in ``notebooks`` that ``profile`` defines
    (:func:`notebook_parameters`), before any of them runs.

    Raises:
        ValueError: the first file that sets a parameter its notebook (the notebook's own file) or every notebook
            of the paper (the paper's file) does not declare, naming the file, the notebook, the parameter and the
            declared ones.
    """
    for nb in notebooks:
        if has_profile(nb, profile):
            notebook_parameters(nb, profile)


def has_profile(notebook: Path, profile: str) -> bool:
    """Whether ``profile`` is defined for ``notebook``'s paper: ``notebooks/profiles/<profile>/<paper>.yaml`` exists
    (every paper has smoke, quick and paper; ``converged`` is written per paper as its runs are sized)."""
    return (PROFILE_DIR / profile / f"{notebook.parent.name}.yaml").is_file()


def _same(a, b) -> bool:
    """Whether two parameter values are equal as a parameters cell states them (``1`` and ``1.0`` alike, a list
    and a tuple alike, ``True`` never ``1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def apply_profile(namespace: dict, paper: str, notebook: str, history: list[str] | None = None) -> dict:
    """Give the notebook its profile's parameters, as ``run_all.sh`` gives them through papermill: every parameter
    of ``notebooks/profiles/<profile>/<paper>.yaml`` and ``<notebook>.yaml`` (:func:`notebook_parameters`, the files ``run_all.sh`` reads) that the notebook declares and the user did not set
    takes the profile's value in ``namespace``. The user set a parameter when papermill injected it or its value
    differs from the committed notebook's parameters cell (``notebooks/<paper>/<notebook>.ipynb``): that value wins.
    (A value typed equal to the cell's default reads as unchanged and takes the profile's.)

    Returns:
        ``{"profile", "files": [profile files read], "taken": {name: profile value}, "kept": {name: (your value,
        profile value)}, "injected": [names]}``: ``taken``, the values the profile gives that differ from the
        cell's defaults; ``kept``, the parameters the user set that the profile sets to another value;
        ``injected``, the declared parameters papermill gave (``profile`` aside).

    Raises:
        FileNotFoundError: no ``notebooks/<paper>/<notebook>.ipynb``. ValueError: as
            :func:`notebook_parameters` (a profile file naming a parameter the notebook lacks).
    """
    path = NOTEBOOK_DIR / paper / f"{notebook}.ipynb"
    profile = namespace.get("profile", "quick")
    out = {"profile": profile, "files": [], "taken": {}, "kept": {}, "injected": []}
    if not isinstance(profile, str) or profile not in paths.PROFILES or not has_profile(path, profile):
        return out
    out["files"] = [f for f in (PROFILE_DIR / profile / f"{paper}.yaml", PROFILE_DIR / profile / f"{notebook}.yaml")
                    if f.is_file()]
    defaults = declared_parameters(path)
    if history is None:
        history = list(namespace.get("In") or namespace.get("_ih") or [])
    injected = set(_injected_names(history))
    out["injected"] = sorted(n for n in injected if n in defaults and n != "profile")
    for name, value in notebook_parameters(path, profile).items():
        if name == "profile" or name not in namespace:
            continue
        mine = namespace[name]
        if name not in injected and name in defaults and _same(mine, defaults[name]):
            namespace[name] = value
            if not _same(value, defaults[name]):         # a value the profile changes (not one it restates)
                out["taken"][name] = value
        elif not _same(mine, value):
            out["kept"][name] = (mine, value)
    return out


def _profile_source(name: str | None, namespace: dict, paper: str, notebook: str | None) -> str | None:
    """The profile file (``notebooks/profiles/<profile>/<paper or notebook>.yaml``, shown relative to the
    repository) that sets parameter ``name`` to the value ``namespace`` holds, or None: the file a user never typed,
    which a type error names (the notebook's own file first, as it wins)."""
    profile = namespace.get("profile")
    if name is None or not isinstance(profile, str) or profile not in paths.PROFILES:
        return None
    for stem in ([notebook] if notebook else []) + [paper]:
        path = PROFILE_DIR / profile / f"{stem}.yaml"
        if path.is_file():
            data = _read_yaml(path)
            if name in data:
                return _shown(path) if _same(data[name], namespace.get(name)) else None
    return None


def _profile_note(applied: dict, default_profile) -> str:
    profile = applied["profile"]
    if profile == default_profile:
        line = f"profile {profile} (this notebook's default: the profile of its committed verdict)"
    else:
        line = f"profile {profile} (given; this notebook's default, the profile of its committed verdict, is " \
               f"{default_profile})"
    if not applied["files"]:
        return line + "; no profile file for it: every parameter is the cell's"
    files = ", ".join(display_path(f) for f in applied["files"])
    taken = ", ".join(f"{k}={v!r}" for k, v in applied["taken"].items())
    line += f"; from {files}: " + (taken if taken else "no value beyond the cell's or papermill's")
    if applied["injected"]:
        line += f"; given by papermill: {', '.join(applied['injected'])}"
    if applied["kept"]:
        line += "; set in the cell or by papermill, over the profile's: " + ", ".join(
            f"{k}={mine!r} (profile: {theirs!r})" for k, (mine, theirs) in applied["kept"].items())
    return line + "; every other parameter is the cell's"


def setup_notebook(namespace: dict, paper: str, notebook: str | None = None) -> dict:
    """Start a notebook: give it its profile's parameters (:func:`apply_profile`, with ``notebook`` named), check
    its parameters (:func:`validate_parameters` with ``paper``), make its ``profile`` parameter the active profile
    (:func:`fedlib.lab.paths.use_profile`) and print which profile and which values it took from where, and where
    its figures, metrics and new records go and which committed store it reads. Call it with ``globals()`` right
    after the parameters cell.

    The profile a notebook's parameters cell names by default is the one its committed verdict was judged at
    (``converged`` for DTFL and HASFL, ``quick`` for HIST), so that Run All on an unchanged notebook redraws the
    committed result from the committed store, in JupyterLab as under ``run_all.sh``. Typing another ``profile``
    in the first cell brings that profile's parameters, the same files ``run_all.sh`` gives papermill; a value
    typed in the cell wins over the profile's.

    Threads: it pins torch to one thread (:func:`fedlib.lab.parallel.pin_threads`), the count the project's kernel ``fedlib`` also
    gives OpenMP and MKL (``OMP_NUM_THREADS=1``, ``MKL_NUM_THREADS=1`` in its ``kernel.json``, written by
    ``python -m fedlib.lab.jupyter_setup``), in JupyterLab and under papermill alike. ``FEDLIB_THREADS=<n>``
    in the environment the kernel starts from states another count. A notebook's own ``threads`` parameter,
    where it has one and it is not 0, applies after this.

    Args:
        namespace: the notebook's ``globals()``. paper: hist, hasfl or dtfl. notebook: the notebook's name
            (``dtfl_2_table1``): its committed parameters cell tells which values the user changed; None (an
            explorer): no profile file is applied, every value is the cell's.

    Returns:
        ``{"parameters", "profile", "figures", "metrics", "store", "reads", "applied"}``: the checked parameters,
        the profile, the figures, metrics and store folders (:class:`pathlib.Path`), the read-only stores and what
        :func:`apply_profile` took (None without ``notebook``).

    Raises:
        ValueError / ParameterTypeError: as :func:`fedlib.lab.params.validate_parameters`; ``profile`` is not one of smoke, quick,
        converged, paper; ``FEDLIB_THREADS`` is not a positive integer.
    """
    pin_threads()
    applied = None
    if notebook is not None:
        applied = apply_profile(namespace, paper, notebook)
    try:
        params = validate_parameters(namespace, paper=paper)
    except ValueError as exc:                             # a value a profile file gave: name the file and key
        source = _profile_source(getattr(exc, "parameter", None), namespace, paper, notebook)
        if source is None:
            raise
        raise type(exc)(f"{exc} (the value of key {exc.parameter!r} in {source})") from None
    profile = paths.use_profile(params.get("profile", "quick"), paper)
    where = {"parameters": params, "profile": profile, "figures": paths.figures_dir(),
             "metrics": paths.metrics_dir(), "store": paths.cache_dir(), "reads": paths.read_only_stores(),
             "applied": applied}
    kind = "committed" if paths.committing() else "scratch (git ignores it)"
    if applied is not None:
        print(_profile_note(applied, declared_parameters(NOTEBOOK_DIR / paper / f"{notebook}.ipynb").get("profile")))
    print(f"profile {profile}: figures -> {display_path(where['figures'])} [{kind}]; new records -> "
          f"{display_path(where['store'])}"
          + (f"; also reads {', '.join(map(display_path, where['reads']))}" if where["reads"] else ""))
    return where


def _ipc_kernel_manager(socket_dir: str):
    """A kernel manager that talks to the local kernel over IPC sockets in ``socket_dir`` instead of unencrypted
    TCP (the kernel then prints no transport warning, and no port is opened)."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", str(Path(socket_dir) / "kernel"))
            super().__init__(**kwargs)

        async def _async_interrupt_kernel(self) -> None:
            # jupyter_client interrupts a kernel (SIGINT to its process group) before it asks it to shut down. The
            # runner shuts a kernel down only once its last cell has finished, so the interrupt stops nothing: it
            # only reaches a kernel still flushing its output (ipykernel logs "KeyboardInterrupt caught in kernel")
            # and the worker processes of a pool the notebook keeps (each prints a KeyboardInterrupt traceback).
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return IPCKernelManager


def _quiet_kernel_logs() -> None:
    # the kernel's transport chatter (zmq / asyncio / traitlets) is not the user's business: warnings and up only
    for name in ("papermill", "traitlets", "asyncio", "nbclient"):
        logging.getLogger(name).setLevel(logging.ERROR)


KERNEL = "fedlib"
"""The project's kernelspec (``python -m fedlib.lab.jupyter_setup`` installs it into the environment), named in every
notebook's metadata."""


def kernel_name() -> str:
    """:data:`KERNEL` when that kernelspec is installed, else ``python3`` (this Python's ipykernel)."""
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL if KERNEL in KernelSpecManager().find_kernel_specs() else "python3"


def run_notebooks(profile: str, out_dir: str | Path, only: str | None = None, commit: bool = False,
                  heartbeat_s: float | None = progress.HEARTBEAT_S) -> list[dict]:
    """Execute notebooks at ``profile``; executed copies go to ``out_dir/<paper>/``, figures embedded.
    ``commit``: the kernels write the committed figures, metrics and store (``FEDLIB_COMMIT=1``). Progress, one line
    per event (:mod:`fedlib.lab.progress`): a notebook starts (its place, its last committed time, what is left),
    is still running (every ``heartbeat_s`` seconds; None: no such line), ends.

    Returns:
        One row per notebook: ``{"notebook", "paper", "seconds", "status", "error"}``; status ``ok``, ``FAILED`` or
        ``skipped`` (the paper has no file at ``profile``: :func:`has_profile`).

    Raises:
        ValueError: unknown profile, ``only`` matches no notebook, ``FEDLIB_THREADS`` is set but not a positive
            integer, or a profile file sets a parameter its notebooks do not declare (:func:`check_profiles`; before
            any notebook runs).
    """
    import papermill as pm

    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    nbs = list_notebooks(only)
    notebook_threads()                              # a bad FEDLIB_THREADS fails once, here, not in every kernel
    check_profiles(profile, nbs)                    # a key no notebook takes stops the run before any notebook
    out_dir = Path(out_dir)
    # the kernels are child processes: the fedlib kernel's own env (the python3 fallback inherits it), figures
    # inline, the committed folders written only if asked; this process's environment is restored on return
    saved_env = dict(os.environ)
    os.environ.update(KERNEL_ENV, **({"FEDLIB_COMMIT": "1"} if commit else {}))
    os.environ.pop("MPLBACKEND", None)
    os.environ.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    kernel = kernel_name()
    _quiet_kernel_logs()
    socket_dir = tempfile.TemporaryDirectory(prefix="fedlib-kernel-")
    rows = []
    runnable = [nb for nb in nbs if has_profile(nb, profile)]
    last = {nb: progress.last_wall_s(nb.stem, profile) for nb in runnable}
    t_all = time.perf_counter()
    for nb in nbs:
        t0 = time.perf_counter()
        status, error = "ok", ""
        if not has_profile(nb, profile):
            rows.append({"notebook": nb.stem, "paper": nb.parent.name, "seconds": 0.0, "status": "skipped",
                         "error": f"no {profile} profile for {nb.parent.name}"})
            print(f"[skipped] {nb.parent.name}/{nb.stem}: no {profile} profile for {nb.parent.name}", flush=True)
            continue
        label, i = f"{nb.parent.name}/{nb.stem}", runnable.index(nb) + 1
        print(progress.start_line(label, i, len(runnable), last[nb], [last[n] for n in runnable[i:]]), flush=True)
        try:
            parameters = notebook_parameters(nb, profile)
            (out_dir / nb.parent.name).mkdir(parents=True, exist_ok=True)
            beat = (progress.Heartbeat(f"[{i}/{len(runnable)}] {label}", last[nb], every=heartbeat_s)
                    if heartbeat_s is not None else contextlib.nullcontext())
            with beat:
                pm.execute_notebook(str(nb), str(out_dir / nb.parent.name / nb.name), parameters=parameters,
                                    kernel_name=kernel, cwd=str(nb.parent), progress_bar=False, log_output=False,
                                    kernel_manager_class=_ipc_kernel_manager(socket_dir.name))
        except Exception as exc:  # papermill raises PapermillExecutionError and others
            text = str(exc).strip()
            status, error = "FAILED", f"{type(exc).__name__}: {text.splitlines()[-1] if text else ''}"
        rows.append({"notebook": nb.stem, "paper": nb.parent.name, "seconds": time.perf_counter() - t0,
                     "status": status, "error": error})
        print(f"[{status}] {label} ({progress.duration(rows[-1]['seconds'])}; "
              f"{progress.duration(time.perf_counter() - t_all)} since the first) {error}".rstrip(), flush=True)
    socket_dir.cleanup()
    os.environ.clear()
    os.environ.update(saved_env)
    return rows


def main(argv: list[str] | None = None) -> int:
    """CLI: run notebooks, print the summary table; exit 1 if any failed, 2 for bad arguments."""
    parser = ArgumentParser(prog="python -m fedlib.lab.notebooks", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick", choices=PROFILES)
    parser.add_argument("--only", default=None, help="glob or substring of notebook or paper names")
    parser.add_argument("--out", type=writable_dir, default=None,
                        help="folder for executed notebooks, outside the committed folders (default "
                             ".executed/<profile>)")
    parser.add_argument("--check", action="store_true",
                        help="only check that --only matches and the profile files; run nothing")
    parser.add_argument("--commit", action="store_true",
                        help="write the committed figures/ folders and store (run_all.sh); default .scratch/<profile>")
    args = parser.parse_args(argv)
    if args.check and (args.commit or args.out is not None):
        parser.error(f"argument --check: runs nothing; it takes no {'--commit' if args.commit else '--out'}")
    try:
        nbs = list_notebooks(args.only)
        check_profiles(args.profile, nbs)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        return 0
    out = Path(args.out) if args.out else REPO_ROOT / ".executed" / args.profile
    try:
        notebook_threads()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:      # one runner per folder it writes: its executed copies, and with --commit the committed figures
        with contextlib.ExitStack() as held:
            held.enter_context(exclusive(out, "python -m fedlib.lab.notebooks"))
            if args.commit and committed_figures_dir(args.profile) is not None:
                held.enter_context(exclusive(committed_figures_dir(args.profile), "python -m fedlib.lab.notebooks "
                                                                                   "--commit"))
            rows = run_notebooks(args.profile, out, args.only, commit=args.commit)
    except Busy as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    assert len(rows) == len(nbs)
    width = max(len(f"{r['paper']}/{r['notebook']}") for r in rows)
    print(f"\n{'notebook'.ljust(width)}  seconds  status")
    for r in rows:
        print(f"{(r['paper'] + '/' + r['notebook']).ljust(width)}  {r['seconds']:7.1f}  {r['status']}")
    ran = [r for r in rows if r["status"] != "skipped"]
    if not ran:
        print(f"error: no selected notebook has a {args.profile} profile; nothing ran", file=sys.stderr)
        return 1
    print(f"executed notebooks (figures embedded) in {out}")
    return 0 if all(r["status"] == "ok" for r in ran) else 1


if __name__ == "__main__":
    sys.exit(main())
