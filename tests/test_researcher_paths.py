"""The paths a researcher takes: fedlib imports from any folder, the README examples run, a notebook run by hand
(a kernel in the notebook's folder, no FEDLIB_* variables, changed parameters) leaves ``git status`` clean and, at
``converged``, redraws from the committed store; the committed stores hold only records of the current code."""
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fedlib.lab import paths
from fedlib.lab.store import ResultStore

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("hist", "dtfl", "hasfl")


def _clean_env() -> dict:
    """The environment of a researcher's shell: no FEDLIB_* variable, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FEDLIB_") and k != "PYTHONPATH"}
    env["OMP_NUM_THREADS"] = "1"
    return env


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


def _example(paper: str) -> str:
    text = (ROOT / "notebooks" / paper / "README.md").read_text()
    section = text.split("## Use it in your own code", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, f"{paper}: expected one python block in 'Use it in your own code'"
    return blocks[0]


def test_fedlib_imports_in_a_notebook_folder_without_pythonpath():
    out = subprocess.run([sys.executable, "-c", "import fedlib, fedlib.dtfl, fedlib.hasfl, fedlib.hist; "
                          "print(fedlib.__file__)"], cwd=ROOT / "notebooks" / "hist", env=_clean_env(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert Path(out.stdout.strip()) == ROOT / "fedlib" / "__init__.py"


@pytest.mark.parametrize("paper", PAPERS)
def test_readme_example_runs(paper, tmp_path):
    # run from an empty folder of the user's, as a script, with the installed fedlib
    (tmp_path / "example.py").write_text(_example(paper))
    out = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=_clean_env(), capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    if paper == "hist":
        # per-client communication: HIST sends 1/N of the model (N = 2 cells), HFedAvg the whole model
        comm = {ln.split()[0]: float(ln.split("communication ")[1].split()[0]) for ln in lines}
        acc = {ln.split()[0]: float(ln.split("test accuracy ")[1].split()[0]) for ln in lines}
        assert comm["hist"] == pytest.approx(comm["hfedavg"] / 2)
        assert all(0.3 < a <= 1 for a in acc.values()), acc          # 3 cloud rounds learn (chance is 0.1)
    elif paper == "dtfl":
        tiers = [json.loads(ln.split("tiers ")[1].split("]")[0] + "]") for ln in lines]
        assert tiers[0] == [4] * 5                                     # before any observation: tier M
        assert tiers[-1][0] < tiers[-1][-1]                            # the slowest client offloads more
        times = [float(ln.split("round time ")[1].split()[0]) for ln in lines]
        assert times[-1] < times[0]                                   # scheduling shortens the straggler's round
    else:
        b = json.loads(lines[0].split("batch sizes")[1])
        cuts = json.loads(lines[1].split("cut layers")[1])
        theta = float(lines[2].split("latency ")[1].split()[0])
        assert len(b) == len(cuts) == 10 and all(v >= 1 for v in b) and all(1 <= c <= 5 for c in cuts)
        assert 0 < theta < float("inf")


def test_committed_stores_hold_only_current_records():
    # a code change to a module a store hashes must come with retrained or re-keyed records (python -m fedlib.lab.prune)
    from fedlib.lab.prune import prune
    for store in sorted(ROOT.glob("figures/**/store")):
        summary = prune(store)
        assert summary["stale"] == 0 and summary["unreadable"] == 0, summary


def test_output_rule(monkeypatch, tmp_path):
    for k in ("FEDLIB_FIGURES_DIR", "FEDLIB_CACHE_DIR", "FEDLIB_METRICS_DIR", "FEDLIB_COMMIT"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    (tmp_path / "figures" / "converged" / "store").mkdir(parents=True)
    try:
        paths.use_profile("converged")
        assert paths.figures_dir() == tmp_path / ".scratch" / "converged"
        assert paths.metrics_dir() == tmp_path / ".scratch" / "converged" / "metrics"
        assert paths.cache_dir() == tmp_path / ".cache" / "results"
        assert paths.read_only_stores() == [tmp_path / "figures" / "converged" / "store"]
        monkeypatch.setenv("FEDLIB_COMMIT", "1")                   # the regeneration command
        assert paths.figures_dir() == tmp_path / "figures" / "converged"
        assert paths.cache_dir() == tmp_path / "figures" / "converged" / "store" and paths.read_only_stores() == []
        paths.use_profile("quick")
        assert paths.figures_dir() == tmp_path / "figures"
        assert paths.cache_dir() == tmp_path / "figures" / "quick" / "store"   # quick's runs are committed too
        paths.use_profile("smoke")                                 # nothing of smoke is committed
        assert paths.figures_dir() == tmp_path / ".scratch" / "smoke"
        monkeypatch.setenv("FEDLIB_COMMIT", "maybe")
        with pytest.raises(ValueError, match="FEDLIB_COMMIT must be 1"):
            paths.figures_dir()
        with pytest.raises(ValueError, match="profile must be one of"):
            paths.use_profile("converge")
    finally:
        paths.use_profile("quick")


def test_store_reads_committed_records_and_writes_its_own_folder(tmp_path):
    committed, own = tmp_path / "committed", tmp_path / "own"
    ResultStore(committed, code=("fedlib.core.seeding",)).save({"seed": 0}, {"acc": 0.5})
    store = ResultStore(own, code=("fedlib.core.seeding",), read_only=[committed])
    assert store.has({"seed": 0}) and store.get_or_run({"seed": 0}, lambda: pytest.fail("retrained"))["acc"] == 0.5
    assert store.get_or_run({"seed": 1}, lambda: {"acc": 0.7})["acc"] == 0.7
    assert len(list(own.glob("*.json"))) == 1 and len(list(committed.glob("*.json"))) == 1
    assert store.with_code(("fedlib.core.validate",)).read_only == (committed,)


def _papermill(nb: Path, out: Path, *args: str, timeout: int, env: dict | None = None) -> subprocess.CompletedProcess:
    """papermill as a researcher types it in the notebook's folder (the kernel starts there)."""
    return subprocess.run([sys.executable, "-m", "papermill", nb.name, str(out), *args, "--no-progress-bar"],
                          cwd=nb.parent, env=env or _clean_env(), capture_output=True, text=True, timeout=timeout)


def test_notebook_by_hand_with_changed_parameters_leaves_git_clean(tmp_path):
    nb = ROOT / "notebooks" / "hist" / "hist_3_bounds.ipynb"
    before = _git_status()
    res = _papermill(nb, tmp_path / "out.ipynb", "-f", "../profiles/smoke/hist.yaml", "-f",
                     "../profiles/smoke/hist_3_bounds.yaml", "-p", "seed", "3", "-p", "power_iters", "4",
                     timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    assert _git_status() == before
    text = json.dumps(json.loads((tmp_path / "out.ipynb").read_text())["cells"])
    # the first cell names the folder, relative to the project: no absolute path of the machine in the notebook
    assert "figures -> .scratch/smoke [scratch (git ignores it)]" in text and str(ROOT) not in text
    metrics = json.loads((ROOT / ".scratch" / "smoke" / "metrics" / "hist_3_bounds.json").read_text())
    assert metrics["profile"] == "smoke"


def _unit(key: str, value: float) -> float:
    """One step of the precision a metric ``key`` is written at (fedlib.lab.plotting.measured)."""
    from fedlib.lab.plotting import ACC_DECIMALS, SIGNIFICANT, TIME_DECIMALS
    if "acc" in key or key in ("plateau_rise", "plateau_spread"):
        return 10.0 ** -ACC_DECIMALS
    if key.endswith("_s") and not key.endswith("_per_s"):
        return 10.0 ** -TIME_DECIMALS
    return abs(value) * 10.0 ** (1 - SIGNIFICANT)


def _close(a, b, key: str = "") -> bool:
    """``a == b`` for nested dicts / lists; floats within one step of their key's written precision (a CPU whose
    reduction order moves a derived value across a rounding boundary changes it by one step), exact for
    everything else."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], str(k)) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, key) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(a, (int, float)) and isinstance(b, (int, float))
                and abs(a - b) <= 1.000001 * _unit(key, max(abs(a), abs(b))))
    return a == b


def test_close_compares_nested_values():
    assert _close([{"plateau_rise": 0.029, "m": "a"}], [{"plateau_rise": 0.0291, "m": "a"}])     # one step: 1e-4
    assert not _close([{"plateau_rise": 0.029, "m": "a"}], [{"plateau_rise": 0.0292, "m": "a"}])
    assert _close({"elapsed_s": 1.001}, {"elapsed_s": 1.002}) and not _close({"elapsed_s": 1.001}, {"elapsed_s": 1.003})
    assert not _close({"ratio": 1.08342}, {"ratio": 1.08345})
    assert not _close([{"x": 0.029, "m": "a"}], [{"x": 0.029, "m": "b"}])
    assert not _close({"x": 1.0}, {"x": 1.0, "y": 2})


@pytest.mark.skipif(not (ROOT / "figures" / "converged" / "store").is_dir(), reason="no committed converged store")
def test_converged_redraw_by_hand_reads_the_committed_store(tmp_path):
    # DTFL's Table 1 at converged: 12 trainings; from the committed store a redraw of about 20 s
    nb = ROOT / "notebooks" / "dtfl" / "dtfl_2_table1.ipynb"
    scratch_cache = ROOT / ".cache" / "results"
    had = set(scratch_cache.glob("*.json")) if scratch_cache.is_dir() else set()
    before = _git_status()
    t0 = time.perf_counter()
    res = _papermill(nb, tmp_path / "out.ipynb", "-f", "../profiles/converged/dtfl.yaml", "-f",
                     "../profiles/converged/dtfl_2_table1.yaml", timeout=900)
    wall = time.perf_counter() - t0
    assert res.returncode == 0, res.stderr[-3000:]
    assert _git_status() == before
    now = set(scratch_cache.glob("*.json")) if scratch_cache.is_dir() else set()
    assert now == had, f"trained {len(now - had)} runs instead of reading the committed store"
    ours = json.loads((ROOT / ".scratch" / "converged" / "metrics" / "dtfl_2_table1.json").read_text())
    committed = json.loads((ROOT / "figures" / "converged" / "metrics" / "dtfl_2_table1.json").read_text())
    # a redraw keeps what the runs measured (each row's training time included); only wall times differ
    drop = lambda rows: [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]
    # every value at its written precision (fedlib.lab.plotting.measured: accuracies 1e-4, times 1 ms); a value derived
    # after the read (plateau_rise: a float reduction whose order depends on the CPU) may cross a rounding boundary
    # on another CPU, one step at most
    assert _close(drop(ours["runs"]), drop(committed["runs"])), "a redraw changed a stored value"
    # the paper-scale column's time model is recomputed on a redraw: its values stay, its wall time moves
    no_wall = lambda d: {k: v for k, v in d.items() if k != "timing_wall_s"}
    assert no_wall(ours.get("paper_scale", {})) == no_wall(committed.get("paper_scale", {}))
    assert {k for k in ours if ours[k] != committed[k]} <= {"notebook_wall_s", "runs", "data_source", "paper_scale"}
    assert " /" not in ours["data_source"], ours["data_source"]                  # no absolute path
    assert wall < 600, wall


def test_metrics_hold_no_absolute_path(monkeypatch, tmp_path):
    from fedlib.lab.plotting import portable_source, write_metrics
    monkeypatch.setenv("FEDLIB_METRICS_DIR", str(tmp_path))
    inside = f"torchvision files in {ROOT}/data/FashionMNIST/raw"
    assert portable_source(inside) == "torchvision files in data/FashionMNIST/raw"
    assert portable_source("debian package /usr/share/datasets/fashion-mnist") == "debian package dataset-fashion-mnist"
    assert portable_source("torchvision files in /srv/other/data/FashionMNIST/raw") == \
        "torchvision files in .../FashionMNIST/raw"
    path = write_metrics("probe", {"data_source": inside, "runs": [{"data_source": inside}]})
    assert str(ROOT) not in path.read_text() and "data/FashionMNIST/raw" in path.read_text()


def test_jupyter_setup_installs_kernel_and_turns_autosave_off(tmp_path):
    from fedlib.lab.jupyter_setup import setup
    lab = tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    lab.parent.mkdir(parents=True)
    lab.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}))
    written = setup(tmp_path)
    kernel = json.loads(written[0].read_text())
    assert written[0] == tmp_path / "share" / "jupyter" / "kernels" / "fedlib" / "kernel.json"
    assert kernel["display_name"] == "Python (fedlib)" and kernel["argv"][0] == sys.executable
    settings = json.loads(lab.read_text())
    assert settings["@jupyterlab/docmanager-extension:plugin"]["autosave"] is False
    assert settings["@jupyterlab/apputils-extension:themes"]["theme"] == "JupyterLab Dark"     # kept
    server = json.loads(written[2].read_text())
    assert server["MappingKernelManager"]["default_kernel_name"] == "fedlib"


def test_converged_hasfl_plan_is_wholly_in_the_committed_store(monkeypatch):
    """HASFL's converged redraw stays 100 % cache hits: every distinct training run of the converged plan (91, Figs.
    2a-11; hasfl_4_train_experiments' design cell at the converged profile, decided as its runs cell decides them)
    is in the committed store, and its pilots and decisions too (cache-only: a missing one raises instead of
    computing). DTFL's is shown by the Table 1 redraw above, HIST's quick store by test_hist_quick_redraw_..."""
    from fedlib.data import load_dataset
    from fedlib.lab.hasfl.runs import experiments, train_plan
    from fedlib.lab.hasfl.runs.train_jobs import stored_run
    from fedlib.lab.hasfl.runs.train_run import AnyBackendRecords
    from fedlib.lab.hasfl.runs.training import TrainSettings
    from fedlib.lab.notebooks import notebook_parameters
    from fedlib.lab.params import declared_parameters

    monkeypatch.setenv("FEDLIB_CACHE_ONLY", "1")
    nb = ROOT / "notebooks" / "hasfl" / "hasfl_4_train_experiments.ipynb"
    ns = dict(declared_parameters(nb), **notebook_parameters(nb, "converged"), TrainSettings=TrainSettings,
              TrainPlan=train_plan.TrainPlan, load_dataset=load_dataset)
    exec(next("".join(c["source"]) for c in json.loads(nb.read_text())["cells"]
              if "plan = TrainPlan(" in "".join(c["source"])), ns)
    store = experiments.result_store(str(ROOT / "figures" / "converged" / "store"))
    runs = list(train_plan.decided_runs(store, ns["settings_"], ns["plan"], ns["seeds"], ns["target_acc"],
                                        ns["data"], "cpu"))
    rs = AnyBackendRecords(store)
    missing = [r["config"] for r in runs if not stored_run(rs, r["config"], r["extend"], ns["data"])]
    assert len({rs.key(r["config"]) for r in runs}) >= 90 and not missing, missing[:3]


def test_hist_quick_redraw_reads_the_committed_store(tmp_path):
    """HIST's quick figures redraw from figures/quick/store without training (hist_2 reads every hist_1 run)."""
    before = _git_status()
    env = {**_clean_env(), "FEDLIB_CACHE_ONLY": "1", "FEDLIB_FIGURES_DIR": str(tmp_path / "figs")}
    res = _papermill(ROOT / "notebooks" / "hist" / "hist_2_figures.ipynb", tmp_path / "out.ipynb", "-f",
                     "../profiles/quick/hist.yaml", timeout=600, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert _git_status() == before
    ours = json.loads((tmp_path / "figs" / "metrics" / "hist_2_figures.json").read_text())
    committed = json.loads((ROOT / "figures" / "metrics" / "hist_2_figures.json").read_text())
    assert _close([{k: v for k, v in r.items() if k != "wall_s"} for r in ours["runs"]],
                  [{k: v for k, v in r.items() if k != "wall_s"} for r in committed["runs"]])
