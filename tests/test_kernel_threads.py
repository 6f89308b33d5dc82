"""Notebook kernels compute on one stated thread count: the ``fedlib`` kernel's environment pins OpenMP and MKL
to one thread, ``setup_notebook`` pins torch to one thread unless ``FEDLIB_THREADS`` states another count, and
the papermill runner starts the same kernel with the same environment."""
from __future__ import annotations

import json
import os

import pytest
import torch


@pytest.fixture
def restore_threads():
    """The test process's torch threads and thread variables come back after the test."""
    from fedlib.lab import paths
    n, profile = torch.get_num_threads(), paths.active_profile()
    saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "FEDLIB_THREADS")}
    yield
    torch.set_num_threads(n)
    paths.use_profile(profile)
    for k, v in saved.items():
        os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def test_the_kernel_spec_written_into_a_prefix_pins_openmp_and_mkl(tmp_path):
    from fedlib.lab.jupyter_setup import setup
    written = setup(tmp_path)
    spec = json.loads((tmp_path / "share" / "jupyter" / "kernels" / "fedlib" / "kernel.json").read_text())
    assert written[0] == tmp_path / "share" / "jupyter" / "kernels" / "fedlib" / "kernel.json"
    assert spec["env"] == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    # run_all.sh's setup check looks for this file
    assert (tmp_path / "etc" / "jupyter" / "jupyter_server_config.d" / "fedlib.json").is_file()


def test_the_runner_starts_its_kernels_with_the_kernels_environment(monkeypatch, tmp_path, restore_threads):
    """The papermill runner's kernels inherit OMP_NUM_THREADS=1 / MKL_NUM_THREADS=1 (the python3 fallback too),
    and the caller's environment comes back after the run."""
    import papermill as pm

    from fedlib.lab import notebooks
    seen = []
    monkeypatch.setattr(pm, "execute_notebook", lambda *a, **k: seen.append(
        (os.environ.get("OMP_NUM_THREADS"), os.environ.get("MKL_NUM_THREADS"))))
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    rows = notebooks.run_notebooks("smoke", tmp_path, only="hist_3_bounds")
    assert [r["status"] for r in rows] == ["ok"] and seen == [("1", "1")]
    assert os.environ["OMP_NUM_THREADS"] == "7" and "MKL_NUM_THREADS" not in os.environ


def _namespace() -> dict:
    """A notebook's globals after its parameters cell (one parameter)."""
    return {"__annotations__": {"profile": str}, "profile": "smoke"}


def test_setup_notebook_pins_torch_to_one_thread(monkeypatch, restore_threads, capsys):
    from fedlib.lab.notebooks import setup_notebook
    monkeypatch.delenv("FEDLIB_THREADS", raising=False)
    torch.set_num_threads(2)
    setup_notebook(_namespace(), "hist")
    assert torch.get_num_threads() == 1
    assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["MKL_NUM_THREADS"] == "1"


def test_fedlib_threads_states_another_count(monkeypatch, restore_threads, capsys):
    from fedlib.lab.notebooks import setup_notebook
    from fedlib.lab.story import threads_in_effect
    monkeypatch.setenv("FEDLIB_THREADS", "2")
    torch.set_num_threads(1)
    setup_notebook(_namespace(), "hist")
    assert torch.get_num_threads() == 2 and os.environ["OMP_NUM_THREADS"] == "2"
    assert threads_in_effect() == "torch 2, OpenMP 2"


@pytest.mark.parametrize("bad", ["0", "-1", "two", "1.5", "", " "])
def test_a_bad_fedlib_threads_is_refused_naming_the_variable(monkeypatch, restore_threads, bad):
    from fedlib.lab.notebooks import setup_notebook
    from fedlib.lab.notebooks import run_notebooks
    monkeypatch.setenv("FEDLIB_THREADS", bad)
    before = torch.get_num_threads()
    with pytest.raises(ValueError, match="FEDLIB_THREADS"):
        setup_notebook(_namespace(), "hist")
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="FEDLIB_THREADS"):
        run_notebooks("smoke", "/nonexistent", only="hist_3_bounds")


def test_jupyter_setup_help_only_prints(monkeypatch, capsys):
    from fedlib.lab import jupyter_setup
    monkeypatch.setattr(jupyter_setup, "setup", lambda *a, **k: pytest.fail("--help installed the kernel"))
    with pytest.raises(SystemExit) as e:
        jupyter_setup.main(["--help"])
    assert e.value.code == 0 and "usage:" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        jupyter_setup.main(["--bogus"])
    assert e.value.code == 2 and "--bogus" in capsys.readouterr().err


def test_lab_settings_keep_the_news_prompt_off(tmp_path):
    import json
    from fedlib.lab.jupyter_setup import setup
    setup(tmp_path)
    lab = json.loads((tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json").read_text())
    assert lab["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}
    assert lab["@jupyterlab/docmanager-extension:plugin"] == {"autosave": False}
