"""Prepare this environment's Jupyter for the project: ``python -m fedlib.lab.jupyter_setup``.

Run by ``run_all.sh`` (and by hand in the README's steps). Into ``sys.prefix`` (the virtual environment), nothing
in the user's home:

- the project's kernel ``fedlib`` ("Python (fedlib)", this Python), which every notebook names in its metadata,
  with ``OMP_NUM_THREADS=1`` and ``MKL_NUM_THREADS=1`` in its environment (``kernel.json``'s ``env``:
  :data:`KERNEL_ENV`). JupyterLab and the papermill runner (:mod:`fedlib.lab.notebooks`) both start this kernel,
  so a notebook computes on one stated thread count wherever it runs; ``setup_notebook`` pins torch to the same
  count (:func:`fedlib.lab.parallel.pin_threads`), and ``FEDLIB_THREADS=<n>`` in the environment Jupyter starts
  from states another count for torch. On a loaded 2-core machine ``hist_3_bounds`` took 813 s in JupyterLab
  unpinned, 405 s with torch's default threads, 108 s with one OpenMP thread;
- JupyterLab's autosave off (``share/jupyter/lab/settings/overrides.json``): a notebook opened from
  ``notebooks/`` and run with changed parameters is not written back into the committed file unless the user
  saves it (File > Save, or Save As into a folder of their own); in the same file, no news prompt and no update
  check;
- the server's default kernel for new notebooks: ``fedlib`` (``etc/jupyter/jupyter_server_config.d/fedlib.json``).

Existing settings in those files are kept; only the keys above are set. Prints one line per file written.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from fedlib.lab.cli import ArgumentParser

KERNEL, DISPLAY = "fedlib", "Python (fedlib)"
LAB_OVERRIDES = {"@jupyterlab/docmanager-extension:plugin": {"autosave": False},
                 # no "get notified about Jupyter news?" prompt over the notebook, no update checks (offline machines)
                 "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}
SERVER_CONFIG = {"MappingKernelManager": {"default_kernel_name": KERNEL}}
#: the kernel's environment: one OpenMP / MKL thread (torch's count is set by ``setup_notebook``)
KERNEL_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _merge(path: Path, update: dict) -> None:
    """Write ``update`` into the JSON object in ``path`` (created if missing), one level deep."""
    data = json.loads(path.read_text()) if path.is_file() else {}
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object, got {type(data).__name__}")
    for key, value in update.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def setup(prefix: str | Path | None = None) -> list[Path]:
    """Install the kernel and the settings into ``prefix`` (default ``sys.prefix``); returns the files written."""
    from ipykernel.kernelspec import install

    prefix = Path(prefix or sys.prefix)
    kernel_dir = Path(install(prefix=str(prefix), kernel_name=KERNEL, display_name=DISPLAY, env=dict(KERNEL_ENV)))
    lab = prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    server = prefix / "etc" / "jupyter" / "jupyter_server_config.d" / "fedlib.json"
    _merge(lab, LAB_OVERRIDES)
    _merge(server, SERVER_CONFIG)
    return [kernel_dir / "kernel.json", lab, server]


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m fedlib.lab.jupyter_setup",
                            description="Install the project's Jupyter kernel 'Python (fedlib)' (one thread) "
                                        "and JupyterLab settings (autosave off) into this environment "
                                        f"({sys.prefix}); nothing in your home folder.")
    parser.parse_args(argv)
    for path in setup():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
