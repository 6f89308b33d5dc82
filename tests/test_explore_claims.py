"""The explorers' verdicts (``fedlib.lab.<paper>.explore``) and the Verdict blocks committed in every notebook
(``fedlib.lab.notebook_verdicts``): values read from hand-made results, words by the rule, no verdict from a result
that lacks what the claim needs, and the generated blocks."""
from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from fedlib.lab.story import explore_verdict
from fedlib.lab.verdicts import judge_all
from fedlib.lab.dtfl import explore as dtfl_ec
from fedlib.lab.hasfl import explore as hasfl_ec
from fedlib.lab.hist import explore as hist_ec
from fedlib.hist.config import comm_per_round
from fedlib.lab import notebook_verdicts as nv
from fedlib.lab.params import parameter_values

ROOT = Path(__file__).resolve().parents[1]


def _hist_result(N, cloud_scale=1.0):
    per = {m: comm_per_round(m, N, 60, 40, 200) for m in ("hist", "hfedavg")}
    per["hist"]["cloud"] *= cloud_scale
    return {"inputs": {"N": N}, "per_round": per}


def _word(claims, result, nb):
    (v,) = judge_all(claims, {nb: result}, notebook=nb)
    cell = v["cells"]["ours"]
    return {k: cell[k] for k in ("values", "seeds", "number", "word")}   # the cell's value and word


@pytest.mark.parametrize("N", [2, 3, 5, 7, 12])
def test_hist_loads_are_one_over_n_by_the_accounting(N):
    """Client 5/N vs 5 L0 per round (E/H = 5), edge server 10·5/N... : every share is exactly 1/N."""
    r = _hist_result(N)
    assert hist_ec.largest_share(r)["ours"] == [pytest.approx(1 / N, abs=1e-9)]
    assert _word(hist_ec.claims(r), r, "hist_explore")["word"] == "holds"


def test_hist_a_larger_share_fails():
    """One HIST load above 1/N (the cloud's at 1.5/N; the client's and edge server's at 1/N) fails: the largest
    share decides."""
    r = _hist_result(3, cloud_scale=1.5)
    cell = _word(hist_ec.claims(r), r, "hist_explore")
    assert cell["values"] == [0.5] and cell["word"] == "fails"


def test_dtfl_round_speedup():
    """FedAvg 10 s, DTFL 4 s: 2.5× holds; DTFL 12 s: 0.83× fails."""
    r = {"fedavg_round_s": 10.0, "dtfl_round_s": 4.0}
    assert _word(dtfl_ec.CLAIMS, r, "dtfl_explore") == {"values": [2.5], "seeds": 1, "number": "2.50×",
                                                         "word": "holds"}
    assert _word(dtfl_ec.CLAIMS, dict(r, dtfl_round_s=12.0), "dtfl_explore")["word"] == "fails"


def _hasfl_result(h, *benches):
    return {"hasfl": {"theta": h}, "benchmarks": {f"B{i}": [{"theta": t} for t in ds] for i, ds in enumerate(benches)}}


def test_hasfl_smallest_ratio_over_benchmarks_and_draws():
    """HASFL 100 s; benchmarks (300, unreachable) and (150, 400): the smallest reachable ratio is 1.5×; a draw at
    90 s makes it 0.9×: fails."""
    r = _hasfl_result(100.0, [300.0, None], [150.0, 400.0])
    assert _word(hasfl_ec.CLAIMS, r, "hasfl_explore")["values"] == [1.5]
    assert _word(hasfl_ec.CLAIMS, _hasfl_result(100.0, [300.0], [90.0]), "hasfl_explore")["word"] == "fails"


def test_hasfl_no_verdict_when_hasfl_cannot_reach_eps():
    shown = str(explore_verdict("hasfl", _hasfl_result(None, [300.0])))
    assert shown.startswith("**No verdict at these controls.**") and "HASFL's Θ" in shown and "holds" not in shown


def test_hasfl_holds_as_a_bound_when_no_benchmark_reaches_eps():
    """Every benchmark draw unreachable (Θ None), HASFL's reachable: each ratio is unbounded, shown as the bound
    ≥ 1.00× and judged holds (the explorer at N = 8 with the converged constants is such a state)."""
    cell = _word(hasfl_ec.CLAIMS, _hasfl_result(100.0, [None], [None, None]), "hasfl_explore")
    assert cell["number"] == "≥ 1.00×" and cell["word"] == "holds"


@pytest.mark.parametrize("paper", ["hist", "dtfl", "hasfl"])
def test_no_valid_state_gives_no_verdict(paper):
    assert str(explore_verdict(paper, None)).startswith("**No verdict at these controls:**")


def test_explore_verdict_names_an_unknown_paper():
    with pytest.raises(ValueError, match="paper must be one of hist, dtfl, hasfl"):
        explore_verdict("fedavg", {})


def test_explore_verdict_shows_the_table_and_the_rule():
    shown = str(explore_verdict("dtfl", {"fedavg_round_s": 10.0, "dtfl_round_s": 4.0}))
    assert "| 2.50× **holds** | `dtfl_explore` |" in shown and "holds at ≥ 1.00×, else fails" in shown


def test_hist_default_state_is_read_from_the_notebook():
    """The generated block's result is the explorer's at the notebook's own parameters (N = 3 there)."""
    nb = nbformat.read(ROOT / "notebooks" / "hist" / "hist_explore.ipynb", as_version=4)
    params = parameter_values(nb)
    assert params["N"] == 3 and params["settings"] == ["noniid", "cell_iid"]
    r = nv.default_result("hist", nb)
    assert r["inputs"]["N"] == 3 and r["per_round"]["hist"]["client"] == pytest.approx(5 / 3)
    assert "0.333 **holds**" in nv.explorer_block("hist", nb)


def test_parameters_needs_the_tagged_cell():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x: int = 1")])
    with pytest.raises(ValueError, match="no cell tagged 'parameters'"):
        parameter_values(nb)


def test_study_block_is_the_notebooks_rows_of_the_readme_table():
    judged = json.loads((ROOT / "figures" / "verdicts" / "dtfl.json").read_text())
    block = nv.study_block(judged, "dtfl_2_table1")
    assert "`figures/converged/metrics/`" in block
    assert block.count("(Table 1)") == 2 and "dtfl_5_baselines" not in block
    with pytest.raises(ValueError, match="decides no claim"):
        nv.study_block(judged, "dtfl_explore")


@pytest.mark.parametrize("text, problem", [("## Verdict\n\nno block", "exactly one"),
                                           ("## Verdict\n<!-- verdict:end --><!-- verdict:begin -->", "exactly one")])
def test_a_verdict_cell_without_its_block_is_named(text, problem):
    with pytest.raises(ValueError, match=problem):
        nv._with_block(text, "body", "notebooks/x/y.ipynb")


def test_every_notebook_block_is_generated():
    """``python -m fedlib.lab.tables --check`` covers the notebooks: a hand edit inside a block is found."""
    from fedlib.lab import tables
    files = tables.generated()
    nbs = [p for p in files if p.suffix == ".ipynb"]
    from fedlib.lab.notebooks import is_worked_example
    every = list((ROOT / "notebooks").glob("*/*.ipynb"))        # a worked example has no Verdict block
    assert len(nbs) == len([p for p in every if not is_worked_example(p)]) == 19
    for p in nbs:
        assert files[p] == p.read_text(), f"{p.relative_to(ROOT)}: run python -m fedlib.lab.tables"
