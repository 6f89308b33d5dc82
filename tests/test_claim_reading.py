"""What each verdict cell reads, tested on its behaviour rather than against the generated tables: every seed the
metrics hold is judged (in the notebook's own file and in the further seed folders the README's tables join), a cell
reads the final accuracy of a run and never its best, and each study notebook's Verdict cell, run on its committed
metrics the way the notebook runs it, shows verdict rows, not "No verdict"."""
import copy
import importlib
import json

import pytest

from fedlib.lab import story, tables
from fedlib.lab.verdicts import judge

PAPERS = ("hist", "dtfl", "hasfl")
#: claims whose value does not come from per-seed training runs (one profiled or pilot record per setting)
SEEDLESS_NOTEBOOKS = {"hist_3_bounds", "dtfl_1_profiles"}


def _claims(paper):
    return importlib.import_module(f"fedlib.lab.{paper}.claims")


def _metrics(paper, notebook):
    return json.loads((tables.metrics_dir(_claims(paper).PROFILE) / f"{notebook}.json").read_text())


def _three_seeds(m: dict) -> dict:
    """``m`` with each training run copied to seeds 1 and 2 (and ``seeds`` [0, 1, 2])."""
    m = copy.deepcopy(m)
    m["runs"] = m["runs"] + [dict(r, seed=s) for s in (1, 2) for r in m["runs"]]
    m["seeds"] = [0, 1, 2]
    return m


def _per_seed_claims():
    for paper in ("hist", "dtfl"):          # their notebooks write one row per training run, with its seed
        for c in _claims(paper).CLAIMS:
            if c.notebook not in SEEDLESS_NOTEBOOKS:
                yield pytest.param(paper, c, id=c.id)


@pytest.mark.parametrize("paper, claim", list(_per_seed_claims()))
def test_a_claim_is_judged_at_every_seed_its_metrics_hold(paper, claim):
    m = _metrics(paper, claim.notebook)
    assert {r["seed"] for r in m["runs"]} == {0}
    one, three = judge(claim, m), judge(claim, _three_seeds(m))
    assert set(one["cells"]) == set(three["cells"])
    for variant, cell in one["cells"].items():
        got = three["cells"][variant]
        assert got["seeds"] == 3 * cell["seeds"], (variant, got["labels"])
        assert got["values"] == cell["values"] * 3          # the copies judged alike, in seed order


@pytest.mark.parametrize("paper", PAPERS)
def test_the_readme_tables_join_every_seed_folder(paper):
    """paper_verdicts' main cells hold the values of the profile's file and of every further seed folder."""
    mod = _claims(paper)
    judged = tables.paper_verdicts(paper)
    folder = tables.metrics_dir(mod.PROFILE)
    seed_dirs = (sorted(folder.parent.glob("seed[0-9]*/metrics")) if mod.PROFILE != "quick"
                 else sorted((tables.REPO_ROOT / "figures").glob("seed[0-9]*/metrics")))
    more_than_one = 0
    for v in judged["claims"]:
        c = next(c for c in mod.CLAIMS if c.id == v["id"])
        sources = [folder / f"{c.notebook}.json"] + [d / f"{c.notebook}.json" for d in seed_dirs]
        alone = [judge(c, json.loads(p.read_text())) for p in sources if p.exists()]
        for variant in alone[0]["cells"]:
            want = sum(a["cells"][variant]["seeds"] for a in alone if variant in a["cells"])
            assert v["cells"][variant]["seeds"] == want, (c.id, variant, v["cells"][variant]["labels"])
            more_than_one += want > 1
    assert more_than_one > 0 or paper == "hasfl"


def _replace_key(obj, key: str, new):
    """A copy of ``obj`` with every ``key`` of every dict inside it set to ``new(old value)``."""
    if isinstance(obj, dict):
        return {k: (new(v) if k == key and isinstance(v, (int, float)) else _replace_key(v, key, new))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_replace_key(x, key, new) for x in obj]
    return obj


def _values(claim, m):
    return {k: c["values"] for k, c in judge(claim, m)["cells"].items()}


@pytest.mark.parametrize("paper", ("hist", "dtfl"))
def test_no_cell_reads_the_best_accuracy(paper):
    """The best accuracy of every run moved (to 0.999) changes no cell; the final accuracy moved changes the cells
    of the claims about accuracy. (HASFL's cells read the converged accuracy, where the paper's rule stops a run,
    and a run's best so far only as a bound when it never converged: its readers' own tests.)"""
    moved_final = 0
    for c in _claims(paper).CLAIMS:
        m = _metrics(paper, c.notebook)
        if "best_test_acc" not in json.dumps(m):
            continue
        base = _values(c, m)
        assert _values(c, _replace_key(m, "best_test_acc", lambda v: 0.999)) == base, c.id
        halved = _replace_key(m, "final_test_acc", lambda v: v / 2)
        try:
            moved_final += _values(c, halved) != base
        except Exception:                   # a claim whose metrics the halving makes unjudgeable reads it too
            moved_final += 1
    assert moved_final >= 3


def test_dtfls_accuracy_cell_is_the_difference_of_final_accuracies():
    """A hand-made Table 3 pair where the best accuracies say the opposite of the final ones."""
    c = next(c for c in _claims("dtfl").CLAIMS if c.id == "accuracy_vs_fedavg_iid")
    row = dict(model="resnet20", setting="iid", seed=0)
    m = {"seeds": [0], "runs": [dict(row, method="dtfl", final_test_acc=0.80, best_test_acc=0.81),
                                dict(row, method="fedavg", final_test_acc=0.78, best_test_acc=0.90)]}
    cell = next(iter(judge(c, m)["cells"].values()))
    assert cell["values"] == [pytest.approx(2.0)] and cell["word"] == "holds"


def _studies():
    from fedlib.lab.notebooks import is_worked_example
    for paper in PAPERS:
        for nb in sorted({c.notebook for c in _claims(paper).CLAIMS}):
            if not nb.endswith("_explore") and not is_worked_example(nb):
                yield pytest.param(paper, nb, id=nb)


@pytest.mark.parametrize("paper, notebook", list(_studies()))
def test_each_study_notebook_shows_its_verdict_rows_at_the_committed_profile(paper, notebook):
    """The notebook's Verdict cell calls ``story.verdict_section(<paper>, <its own name>, metrics)`` on the dict it
    wrote; on the committed metrics of the paper's profile that gives a row per claim of the notebook, never
    "No verdict from this run"."""
    import nbformat
    nb = nbformat.read(tables.REPO_ROOT / "notebooks" / paper / f"{notebook}.ipynb", as_version=4)
    calls = [c.source for c in nb.cells if c.cell_type == "code" and "story.verdict_section(" in c.source]
    assert len(calls) == 1 and f'story.verdict_section("{paper}", "{notebook}", metrics)' in calls[0], calls
    writes = [c.source for c in nb.cells if c.cell_type == "code" and "write_metrics(" in c.source]
    assert any(f'write_metrics("{notebook}", metrics' in s for s in writes), "the verdict reads the dict written"
    shown = story.verdict_section(paper, notebook, _metrics(paper, notebook)).data
    assert "No verdict" not in shown and "| claim |" in shown, shown[:300]
    for c in _claims(paper).CLAIMS:
        if c.notebook == notebook:
            assert c.text in shown, c.id
