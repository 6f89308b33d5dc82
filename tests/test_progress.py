"""Long work says where it is, one line per event: the notebook runner (``./run_all.sh``) names each notebook as it
starts (its place, its last committed time, what is left), prints a heartbeat while it runs and a line when it
ends; a kernel the runner shuts down is not interrupted (no ``KeyboardInterrupt`` lines in the log); a run that
waits for another worker's record says so in words."""
from __future__ import annotations

import io
import json
import os
import socket
import tempfile
import time

import pytest

from fedlib.lab import notebooks, progress, runlock


def test_the_runner_prints_a_line_per_event_and_a_heartbeat(monkeypatch, tmp_path, capsys):
    import papermill as pm

    monkeypatch.setattr(pm, "execute_notebook", lambda *a, **k: time.sleep(0.35))
    rows = notebooks.run_notebooks("quick", tmp_path, only="hist_[12]_*", heartbeat_s=0.1)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    out = capsys.readouterr().out.splitlines()
    last1, last2 = progress.last_wall_s("hist_1_experiments", "quick"), progress.last_wall_s("hist_2_figures", "quick")
    assert last1 is not None and last2 is not None                 # from the committed quick metrics
    assert out[0] == (f"[1/2] hist/hist_1_experiments started (last committed run {progress.duration(last1)}); "
                      f"1 after it (last committed {progress.duration(last2)})")
    beats = [ln for ln in out if ln.startswith("[1/2] hist/hist_1_experiments still running: ")]
    assert 1 <= len(beats) <= 4, out                                # every 0.1 s during 0.35 s
    assert any(ln.startswith("[ok] hist/hist_1_experiments (") for ln in out)
    assert any(ln.startswith("[2/2] hist/hist_2_figures started") and ln.endswith("the last one") for ln in out)
    assert not any("still running" in ln for ln in out[out.index(next(ln for ln in out if ln.startswith("[ok]"))):]
                   if ln.startswith("[1/2]"))                     # the heartbeat stops with its notebook


def test_start_lines_and_durations():
    assert progress.duration(42) == "42 s" and progress.duration(234) == "3.9 min"
    assert progress.duration(1200) == "20 min" and progress.duration(4320) == "1 h 12 min"
    line = progress.start_line("dtfl/dtfl_3_fig3", 3, 5, 234.0, [60.0, None])
    assert line == "[3/5] dtfl/dtfl_3_fig3 started (last committed run 3.9 min); 2 after it (last committed 60 s, 1 of them)"
    assert progress.last_wall_s("no_such_notebook", "quick") is None and progress.last_wall_s("hist_2", "smoke") is None
    with pytest.raises(ValueError, match="every must be"):
        progress.Heartbeat("x", every=0)


def test_heartbeat_writes_to_its_stream():
    buf = io.StringIO()
    with progress.Heartbeat("[1/1] site page", last=60.0, every=0.05, stream=buf):
        time.sleep(0.18)
    lines = buf.getvalue().splitlines()
    assert lines and all(ln.startswith("[1/1] site page still running: ") and ln.endswith("(last committed run 60 s)")
                         for ln in lines)


POOL_NOTEBOOK = {
    "cells": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [], "source":
               "import multiprocessing as mp\nfrom concurrent.futures import ProcessPoolExecutor\n"
               "pool = ProcessPoolExecutor(2, mp_context=mp.get_context('spawn'))\nprint(list(pool.map(abs, [-1, -2])))"},
              {"cell_type": "code", "execution_count": None, "id": "b", "metadata": {}, "outputs": [],
               "source": "print('done')"}],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    "nbformat": 4, "nbformat_minor": 5}


def test_a_finished_kernel_is_shut_down_without_an_interrupt(tmp_path, capfd):
    """jupyter_client interrupts a kernel (SIGINT to its process group) before shutting it down; the runner's kernel
    manager does not, so a notebook that keeps a process pool (its workers idle) leaves no KeyboardInterrupt
    traceback and no '[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.' in the log."""
    import papermill as pm

    nb = tmp_path / "pool.ipynb"
    nb.write_text(json.dumps(POOL_NOTEBOOK))
    pm.execute_notebook(str(nb), str(tmp_path / "out.ipynb"), kernel_name="python3", progress_bar=False,
                        cwd=str(tmp_path), kernel_manager_class=notebooks._ipc_kernel_manager(tempfile.mkdtemp(prefix="k-")))
    time.sleep(1.0)                                     # the workers' dying words, if any, reach the terminal
    err = capfd.readouterr().err
    assert "KeyboardInterrupt" not in err, err[-2000:]
    assert "done" in (tmp_path / "out.ipynb").read_text()


def test_a_wait_for_another_worker_of_this_machine_is_said_in_words(tmp_path):
    lock = tmp_path / "0123abcd.lock"
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "time": time.time()}))
    text = runlock.describe(lock)
    assert text.startswith(f"another process of this machine (process {os.getpid()}, started ")
    assert "takes its record as soon as it is written" in text
    assert str(tmp_path) not in text and ".lock" not in text      # no lock path for the common case
