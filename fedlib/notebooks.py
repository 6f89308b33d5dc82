"""Execute the project's notebooks headlessly with papermill: ``python -m fedlib.notebooks``.

Used by ``run_all.sh`` and by the notebook tests. Each notebook ``notebooks/<name>.ipynb`` runs with the
parameter file ``notebooks/profiles/<profile>/<name>.yaml`` (papermill ``-f``); notebooks run in name order
(``hist_1_experiments`` before ``hist_2_figures``). A failing notebook does not stop the others; the exit status
is non-zero if any failed. A summary table (notebook, seconds, status) is printed at the end.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import sys
import time
from pathlib import Path

from .paths import REPO_ROOT

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
PROFILES = ("smoke", "quick", "paper")


def list_notebooks(only: str | None = None) -> list[Path]:
    """Notebooks in run order; ``only`` is a glob or substring matched against the notebook's stem."""
    nbs = sorted(p for p in NOTEBOOK_DIR.glob("*.ipynb"))
    if only:
        nbs = [p for p in nbs if fnmatch.fnmatch(p.stem, only) or only in p.stem]
    return nbs


def run_notebooks(profile: str, out_dir: str | Path, only: str | None = None) -> list[dict]:
    """Execute notebooks at ``profile``; executed copies go to ``out_dir``. Returns one row per notebook:
    ``{"notebook", "seconds", "status", "error"}``.

    Raises:
        ValueError: unknown profile, or ``only`` matches no notebook.
    """
    import papermill as pm
    import yaml

    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {PROFILES}, got {profile!r}")
    nbs = list_notebooks(only)
    if not nbs:
        raise ValueError(f"--only {only!r} matches no notebook in {NOTEBOOK_DIR}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # the kernel is a child process: it must import fedlib from this checkout
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    os.environ.setdefault("MPLBACKEND", "Agg")
    rows = []
    for nb in nbs:
        params = NOTEBOOK_DIR / "profiles" / profile / f"{nb.stem}.yaml"
        t0 = time.perf_counter()
        status, error = "ok", ""
        try:
            parameters = yaml.safe_load(params.read_text()) if params.is_file() else {}
            pm.execute_notebook(str(nb), str(out_dir / nb.name), parameters=parameters or {},
                                kernel_name="python3", cwd=str(REPO_ROOT), progress_bar=False)
        except Exception as exc:  # papermill raises PapermillExecutionError and others
            status, error = "FAILED", f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
        rows.append({"notebook": nb.stem, "seconds": time.perf_counter() - t0, "status": status, "error": error})
        print(f"[{status}] {nb.stem} ({rows[-1]['seconds']:.1f} s) {error}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    """CLI: run notebooks, print the summary table; exit 1 if any failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick", choices=PROFILES)
    parser.add_argument("--only", default=None, help="glob or substring of notebook names")
    parser.add_argument("--out", default=None, help="folder for executed notebooks (default .executed/<profile>)")
    args = parser.parse_args(argv)
    out = args.out or REPO_ROOT / ".executed" / args.profile
    rows = run_notebooks(args.profile, out, args.only)
    width = max(len(r["notebook"]) for r in rows)
    print(f"\n{'notebook'.ljust(width)}  seconds  status")
    for r in rows:
        print(f"{r['notebook'].ljust(width)}  {r['seconds']:7.1f}  {r['status']}")
    print(f"executed notebooks in {out}")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
