"""The interactive path runs what the batch path runs.

- Run All in JupyterLab on an unchanged notebook (a Jupyter kernel, no parameters injected by papermill, no
  ``FEDLIB_*`` variable) runs the profile of the notebook's committed verdict with that profile's parameters, reads
  the committed store (nothing is trained) and redraws the committed verdict block's numbers.
- ``setup_notebook`` gives a notebook the values of its profile's files for every parameter left as the cell
  states it; a value typed in the cell, or given by papermill, wins; the first cell's output says which came from
  where.
- A committing quick run of DTFL or HASFL writes its records to ``.cache/results`` (their quick store is not
  committed), HIST's to ``figures/quick/store``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from fedlib.lab import notebooks, paths
from fedlib.lab.notebooks import apply_profile, setup_notebook
from fedlib.lab.params import declared_parameters
from fedlib.lab.site import site_profile
from fedlib.lab.verify import compare

ROOT = paths.REPO_ROOT
STUDIES = [nb for nb in notebooks.list_notebooks() if not nb.stem.endswith("_explore")]


@pytest.mark.parametrize("nb", STUDIES, ids=[nb.stem for nb in STUDIES])
def test_a_notebooks_default_profile_is_its_committed_verdicts(nb):
    """The parameters cell names the profile the committed verdicts and the site are at (converged for DTFL and
    HASFL, quick for HIST), and the notebook names itself to setup_notebook, so that its profile's files apply."""
    assert declared_parameters(nb)["profile"] == site_profile(nb.parent.name)
    assert f'setup_notebook(globals(), "{nb.parent.name}", "{nb.stem}")' in nb.read_text().replace('\\"', '"')


def _namespace(nb: Path, **typed) -> dict:
    """A kernel's globals after the parameters cell of ``nb`` ran with ``typed`` edited into it."""
    ns = {**declared_parameters(nb), **typed}
    ns["__annotations__"] = {k: type(v) for k, v in ns.items()}
    ns["In"] = ["", "\n".join(f"{k}: {type(v).__name__} = {v!r}" for k, v in ns.items() if k != "__annotations__")]
    return ns


def test_unchanged_values_take_the_profiles_typed_values_win(capsys):
    nb = ROOT / "notebooks" / "dtfl" / "dtfl_2_table1.ipynb"
    wanted = notebooks.notebook_parameters(nb, "converged")
    # the cell shows the committed profile's values (issue 71): at converged the profile's files restate them
    ns = _namespace(nb)
    applied = apply_profile(ns, "dtfl", "dtfl_2_table1")
    assert ns["width"] == wanted["width"] == 0.25 and ns["rounds"] == wanted["rounds"] == 24
    assert applied["taken"] == {} and applied["kept"] == {}
    ns = _namespace(nb, seeds=[0, 1], batch_size=25)               # two values typed in the cell
    applied = apply_profile(ns, "dtfl", "dtfl_2_table1")
    assert ns["train_subset"] == 6000 and ns["lr"] == 0.003
    assert ns["seeds"] == [0, 1] and ns["batch_size"] == 25        # typed: kept over the profile's [0] and 50
    assert ns["model"] == "resnet20"                                # not in the profile: the cell's
    assert applied["kept"] == {"batch_size": (25, 50), "seeds": ([0, 1], [0])} and applied["taken"] == {}
    # papermill's injected cell counts as typed even where it repeats the cell's default
    ns = _namespace(nb)
    ns["In"].append("# Parameters\nwidth = 0.25\nrounds = 12\n")
    ns["rounds"] = 12
    apply_profile(ns, "dtfl", "dtfl_2_table1")
    assert ns["width"] == 0.25 and ns["rounds"] == 12
    # another profile typed in the first cell brings its own values: quick's files hold what the cell held before
    ns = _namespace(nb, profile="quick", seeds=[0, 1])
    taken = apply_profile(ns, "dtfl", "dtfl_2_table1")["taken"]
    assert ns["width"] == taken["width"] == 0.5 and ns["batch_size"] == taken["batch_size"] == 10
    assert ns["rounds"] == 12 and ns["seeds"] == [0, 1] and "seeds" not in taken


def test_the_first_cells_output_says_what_came_from_where(capsys, monkeypatch):
    monkeypatch.setattr(paths, "_profile", paths._profile)
    monkeypatch.setattr(paths, "_paper", paths._paper)
    monkeypatch.delenv("FEDLIB_COMMIT", raising=False)
    nb = ROOT / "notebooks" / "hasfl" / "hasfl_3_optimiser.ipynb"
    ns = _namespace(nb, num_draws=3)
    where = setup_notebook(ns, "hasfl", "hasfl_3_optimiser")
    out = capsys.readouterr().out
    assert where["profile"] == "converged" and ns["device_counts"] == [5, 10, 20]    # the cell's own values
    first = out.splitlines()[0]
    assert first.startswith("profile converged (this notebook's default: the profile of its committed verdict)")
    assert "no value beyond the cell's or papermill's" in first and "num_draws" not in first
    ns = _namespace(nb, profile="quick")
    setup_notebook(ns, "hasfl", "hasfl_3_optimiser")
    first = capsys.readouterr().out.splitlines()[0]
    assert ns["device_counts"] == [5, 10, 20, 50, 100]
    assert "notebooks/profiles/quick/hasfl_3_optimiser.yaml: device_counts=[5, 10, 20, 50, 100]" in first


def test_quick_records_of_dtfl_and_hasfl_stay_out_of_figures(monkeypatch, tmp_path):
    for k in ("FEDLIB_FIGURES_DIR", "FEDLIB_CACHE_DIR", "FEDLIB_METRICS_DIR"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("FEDLIB_COMMIT", "1")                        # the regeneration command
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(paths, "_profile", paths._profile)
    monkeypatch.setattr(paths, "_paper", paths._paper)
    for profile in ("quick", "converged"):
        (tmp_path / "figures" / profile / "store").mkdir(parents=True)
    for paper in ("dtfl", "hasfl"):
        paths.use_profile("quick", paper)
        assert paths.figures_dir() == tmp_path / "figures"          # the quick figures stay the committed ones
        assert paths.cache_dir() == tmp_path / ".cache" / "results"
        assert paths.read_only_stores() == [tmp_path / "figures" / "quick" / "store"]
        paths.use_profile("converged", paper)
        assert paths.cache_dir() == tmp_path / "figures" / "converged" / "store"
    paths.use_profile("quick", "hist")
    assert paths.cache_dir() == tmp_path / "figures" / "quick" / "store"
    with pytest.raises(ValueError, match="paper must be one of"):
        paths.use_profile("quick", "histt")


def _verdict_rows(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip().startswith("|") and not ln.startswith("|---")]


@pytest.mark.parametrize("stem", ["dtfl_2_table1", "hasfl_3_optimiser"])
def test_run_all_in_a_kernel_redraws_the_committed_verdict_and_trains_nothing(stem, tmp_path):
    """As JupyterLab runs it: the committed notebook in a copy of its folder, a Jupyter kernel started there, no
    injected parameters, no FEDLIB_* variable. (About 30 s and 70 s on an idle 2-core machine.)"""
    import nbformat
    from nbclient import NotebookClient

    paper = stem.split("_")[0]
    folder = tmp_path / paper
    shutil.copytree(ROOT / "notebooks" / paper, folder)
    stores = [ROOT / ".cache" / "results", ROOT / "figures" / "converged" / "store"]
    had = {p for s in stores if s.is_dir() for p in s.glob("*.json")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("FEDLIB_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])   # this checkout's fedlib
    nb = nbformat.read(folder / f"{stem}.ipynb", as_version=4)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)                                          # the kernel inherits this environment
    try:
        t0 = time.perf_counter()
        NotebookClient(nb, kernel_name=notebooks.kernel_name(), timeout=900,
                       resources={"metadata": {"path": str(folder)}}).execute()
        wall = time.perf_counter() - t0
    finally:
        os.environ.clear()
        os.environ.update(saved)
    now = {p for s in stores if s.is_dir() for p in s.glob("*.json")}
    assert now == had, f"trained {len(now - had)} runs instead of reading the committed store"
    first = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
                    if "setup_notebook(" in c.source)
    assert first.startswith("profile converged (this notebook's default"), first
    ours = json.loads((ROOT / ".scratch" / "converged" / "metrics" / f"{stem}.json").read_text())
    committed = json.loads((ROOT / "figures" / "converged" / "metrics" / f"{stem}.json").read_text())
    assert ours["profile"] == "converged"
    off = [r for r in compare(stem, committed, ours) if not r["ok"]]
    assert not off, off[:5]
    # the committed Verdict block's rows, number for number, in this run's verdict cell
    block = next(c.source for c in nb.cells if "<!-- verdict:begin -->" in c.source)
    block = block.split("<!-- verdict:begin -->")[1].split("<!-- verdict:end -->")[0]
    live = "".join(o.get("data", {}).get("text/markdown", "") for c in nb.cells if c.cell_type == "code"
                   and "verdict_section(" in c.source for o in c.outputs)
    # claim by claim, every number of this run's verdict is the committed block's (where the block also judges
    # other seeds' committed metrics, figures/converged/seed1/, its range holds this run's seed-0 value as an end)
    committed_rows = {r.split("|")[1].strip(): r for r in _verdict_rows(block)}
    live_rows = _verdict_rows(live)
    assert len(live_rows) == len(committed_rows) >= 2, (live_rows, committed_rows)
    number = re.compile(r"\d+(?:\.\d+)?\s*(?:×|%)")
    for row in live_rows:
        claim = row.split("|")[1].strip()
        assert claim in committed_rows, claim
        assert set(number.findall(row)) <= set(number.findall(committed_rows[claim])), (row, committed_rows[claim])
    if set(committed.get("seeds", [0])) == {0} and not (ROOT / "figures" / "converged" / "seed1" / "metrics" /
                                                         f"{stem}.json").exists():
        assert set(live_rows) == set(committed_rows.values())        # one seed judged: the very same rows
    assert any(number.search(r) for r in live_rows)
    assert wall < 600, wall


@pytest.mark.parametrize("own", [True, False], ids=["notebook-file", "paper-file"])
def test_a_wrong_type_from_a_profile_file_names_the_file_and_key(tmp_path, monkeypatch, own):
    """A value the user never typed (a profile file's) that fails its type check is refused naming the file and the
    key (issue 70, item 5); the notebook's own file is named where it sets the key, else the paper's."""
    profiles = tmp_path / "profiles"
    shutil.copytree(ROOT / "notebooks" / "profiles", profiles)
    target = profiles / "quick" / ("dtfl_2_table1.yaml" if own else "dtfl.yaml")
    target.write_text(target.read_text() + "\nrounds: '12'\n")
    if not own:                                       # the notebook's file must not set it too
        mine = profiles / "quick" / "dtfl_2_table1.yaml"
        mine.write_text("\n".join(x for x in mine.read_text().splitlines() if not x.startswith("rounds:")) + "\n")
    monkeypatch.setattr(notebooks, "PROFILE_DIR", profiles)
    monkeypatch.setattr(paths, "_profile", paths._profile)
    monkeypatch.setattr(paths, "_paper", paths._paper)
    nb = ROOT / "notebooks" / "dtfl" / "dtfl_2_table1.ipynb"
    with pytest.raises(TypeError, match=re.escape(f"rounds must be an int, got '12' (str) (the value of key 'rounds' "
                                                  f"in {target})")):
        setup_notebook(_namespace(nb, profile="quick"), "dtfl", "dtfl_2_table1")
    typed = _namespace(nb, profile="converged", rounds="12")
    typed["__annotations__"]["rounds"] = int                       # the cell's annotation, a str typed as its value
    with pytest.raises(TypeError, match=r"rounds must be an int, got '12' \(str\)$"):   # typed in the cell: no file
        setup_notebook(typed, "dtfl", "dtfl_2_table1")
