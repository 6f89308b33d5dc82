"""papermill as users call it: ``papermill NB OUT -f notebooks/profiles/<profile>/<paper>.yaml`` passes every
notebook's parameter check, for every notebook and every profile file (parsed and checked, not run); a key that
only a sibling notebook declares is skipped with a note; a key that no notebook declares fails by name."""
from pathlib import Path

import pytest
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook

from fedlib.lab import notebooks
from fedlib.lab.params import declared_parameters, sibling_parameters, validate_parameters

NBS = notebooks.list_notebooks()
CASES = [(nb, path) for nb in NBS for path in sorted(notebooks.PROFILE_DIR.glob(f"*/{nb.parent.name}.yaml"))]


def _check(nb: Path, parameters: dict, capsys=None) -> tuple[dict, dict]:
    """The notebook's parameters cell, then the cell papermill injects for ``parameters``, then the check the
    notebook's first code cell runs; returns (checked parameters, namespace)."""
    node = parameterize_notebook(load_notebook_node(str(nb)), parameters, report_mode=False)
    cells = [c for c in node.cells if c.cell_type == "code"]
    tags = [c.metadata.get("tags", []) for c in cells]
    params_src = cells[next(i for i, t in enumerate(tags) if "parameters" in t)].source
    injected_src = cells[next(i for i, t in enumerate(tags) if "injected-parameters" in t)].source
    ns: dict = {}
    exec(compile(params_src, "<parameters>", "exec"), ns)
    exec(compile(injected_src, "<injected>", "exec"), ns)
    ns["In"] = ["", params_src, injected_src]
    return validate_parameters(ns, paper=nb.parent.name), ns


def test_every_notebook_has_a_case_per_profile_file_of_its_paper():
    assert len(CASES) == sum(len(list(notebooks.PROFILE_DIR.glob(f"*/{p}.yaml"))) * n
                             for p, n in (("hist", 5), ("hasfl", 8), ("dtfl", 9)))   # each paper's explorer
    # included, and the worked examples (hist_your_method, hasfl_your_method, dtfl_your_method)
    assert len(CASES) >= 50


@pytest.mark.parametrize("nb, path", CASES, ids=[f"{p.parent.name}-{nb.stem}" for nb, p in CASES])
def test_paper_profile_file_passes_the_parameter_check(nb, path, capsys):
    shared = notebooks._read_yaml(path)
    checked, ns = _check(nb, shared)
    declared = declared_parameters(nb)
    for key, value in shared.items():
        if key in declared:
            assert checked[key] == value, key              # the profile's value reached the notebook
        else:
            assert key not in ns, key                      # a sibling's key is removed from the namespace
    skipped = sorted(set(shared) - set(declared))
    out = capsys.readouterr().out
    assert (f"note: skipped {', '.join(k for k in shared if k in skipped)}" in out) == bool(skipped)
    # with the notebook's own file after the paper's (papermill -f PAPER.yaml -f NOTEBOOK.yaml), as run_all.sh runs it
    own = path.parent / f"{nb.stem}.yaml"
    if own.is_file():
        checked, _ = _check(nb, {**shared, **notebooks._read_yaml(own)})
        assert all(checked[k] == v for k, v in notebooks.notebook_parameters(nb, path.parent.name).items())


def test_a_key_no_notebook_declares_fails_by_name():
    nb = next(p for p in NBS if p.stem == "hist_2_figures")
    with pytest.raises(ValueError, match="num_cels"):
        _check(nb, {"num_cels": [2], "num_cells": [2]})
    # one unknown key among sibling keys: the error names it, and the sibling keys are not dropped silently
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) .*typo_key"):
        _check(nb, {"H": 40, "typo_key": 1})


def test_sibling_parameters_are_the_union_of_the_papers_notebooks():
    assert "fig4_H" in sibling_parameters("hist") and "smoothness_clients" in sibling_parameters("hist")
    assert "fig4_H" not in declared_parameters(next(p for p in NBS if p.stem == "hist_3_bounds"))
    with pytest.raises(ValueError, match="paper must be one of"):
        sibling_parameters("hsfl")


@pytest.mark.parametrize("profile", ["smoke", "quick", "converged"])
def test_committed_profiles_name_their_dataset(profile):
    """A committed profile never says ``dataset: auto``: on a machine with CIFAR-10 on disk, "auto" would switch a
    run away from the committed store's Fashion-MNIST records (issue 69). Only ``paper`` may choose by what is on
    disk."""
    from fedlib.lab import notebooks
    from fedlib.lab.params import declared_parameters

    auto = []
    for path in notebooks.list_notebooks():
        if "dataset" not in declared_parameters(path) or not notebooks.has_profile(path, profile):
            continue
        value = notebooks.notebook_parameters(path, profile).get("dataset", declared_parameters(path)["dataset"])
        if value == "auto":
            auto.append(path.stem)
    assert auto == []


@pytest.mark.parametrize("nb", NBS, ids=[p.stem for p in NBS])
def test_the_parameters_cell_shows_what_an_unchanged_run_all_uses(nb):
    """Issue 71: every value written in a parameters cell is the one Run All on the unchanged notebook uses: the
    cell's own ``profile``'s files restate it or leave it alone (the other profiles' files hold their values)."""
    declared = declared_parameters(nb)
    if not notebooks.has_profile(nb, declared["profile"]):
        pytest.skip(f"{nb.stem}: its profile {declared['profile']!r} has no file for the paper")
    used = notebooks.notebook_parameters(nb, declared["profile"])
    shown_but_not_used = {k: (declared[k], v) for k, v in used.items() if k in declared and k != "profile"
                          and v != declared[k]}
    assert shown_but_not_used == {}
