"""The one written verdict rule (fedlib.lab.verdicts), the notebooks' story sections (fedlib.lab.story) and the
generated tables (python -m fedlib.lab.tables): hand-computed words at and around every threshold."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fedlib.lab import story, verdicts as v

ROOT = Path(__file__).resolve().parents[1]


def _claim(rule, values, variants=("ours",)):
    return v.Claim("c", "a claim", "Fig. 1", "≥ 4×", "nb", rule, lambda m: m["x"], variants=variants), {"x": values}


@pytest.mark.parametrize("value, word", [(4.0, "holds"), (5.5, "holds"), (3.99, "partly"), (1.01, "partly"),
                                         (1.0, "fails"), (0.3, "fails")])
def test_at_least_with_a_partly_band(value, word):
    # "≥ 4× faster": holds at 4, partly in (1, 4), fails at 1 (not faster at all) and below
    c, m = _claim(v.AtLeast(target=4.0, partly=1.0, unit="×"), {"ours": [value]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == word


@pytest.mark.parametrize("value, word", [(1.0, "holds"), (1.2, "holds"), (0.99, "fails")])
def test_at_least_without_a_partly_band(value, word):
    c, m = _claim(v.AtLeast(target=1.0), {"ours": [value]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == word


@pytest.mark.parametrize("value, word", [(0.05, "holds"), (0.02, "holds"), (0.07, "partly"), (0.1, "fails"),
                                         (0.2, "fails")])
def test_at_most(value, word):
    c, m = _claim(v.AtMost(target=0.05, partly=0.1), {"ours": [value]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == word


@pytest.mark.parametrize("value, word", [(0.011, "holds"), (0.01, "partly"), (0.0, "partly"), (-0.01, "partly"),
                                         (-0.011, "fails")])
def test_better_margin_is_the_resolution(value, word):
    c, m = _claim(v.Better(margin=0.01), {"ours": [value]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == word


@pytest.mark.parametrize("seq, word", [([1, 2, 3], "holds"), ([1, 3, 2], "partly"), ([3, 2, 1], "fails"),
                                       ([1, 1.005, 1.2], "partly"), ([1, 1], "fails")])
def test_trend_up(seq, word):
    c, m = _claim(v.Trend(direction="up", margin=0.01), {"ours": [seq]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == word


def test_a_step_of_exactly_the_margin_is_not_above_it():
    # 76.91 % - 76.90 % is one test image in 10,000 but 0.00010000000000005 in floats
    c, m = _claim(v.Trend(direction="up", margin=0.0001), {"ours": [[0.7690, 0.7691, 0.7699]]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == "partly"
    c, m = _claim(v.Better(margin=0.0001), {"ours": [0.7691 - 0.7690]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == "partly"


def test_trend_down_mirrors_up():
    c, m = _claim(v.Trend(direction="down"), {"ours": [[3, 2, 1]]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == "holds"


def test_seeds_judged_alone_and_disagreement_is_not_robust():
    c, m = _claim(v.AtLeast(target=4.0, partly=1.0, unit="×"), {"ours": [4.5, 2.0, 5.0]})
    cell = v.judge(c, m)["cells"]["ours"]
    assert cell["word"] == "not robust across seeds" and cell["seeds"] == 3
    assert cell["number"] == "2.00× – 5.00×"
    c, m = _claim(v.AtLeast(target=4.0, partly=1.0, unit="×"), {"ours": [2.0, 3.0]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == "partly"      # agreeing seeds keep their word


def test_censored_bounds_decide_only_when_every_admitted_value_agrees():
    rule = v.AtLeast(target=4.0, partly=1.0, unit="×")
    # a speed-up of at least 5x (the benchmark never reached the target): every value >= 5 holds
    c, m = _claim(rule, {"ours": [v.Censored(5.0, "lower")]})
    cell = v.judge(c, m)["cells"]["ours"]
    assert cell["word"] == "holds" and cell["number"] == "≥ 5.00×"
    # at least 2x: could be partly or holds: no verdict either way
    c, m = _claim(rule, {"ours": [v.Censored(2.0, "lower")]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == "not reached"
    # at most 0.5x (ours never reached it): fails whatever the value
    c, m = _claim(rule, {"ours": [v.Censored(0.5, "upper")]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == "fails"
    with pytest.raises(ValueError, match="side"):
        v.Censored(1.0, "left")


def test_variants_are_separate_cells_never_averaged():
    c, m = _claim(v.AtLeast(target=1.0, unit="×"), {"pilot": [0.9], "calibrated": [1.3]},
                  variants=("pilot", "calibrated"))
    cells = v.judge(c, m)["cells"]
    assert (cells["pilot"]["word"], cells["calibrated"]["word"]) == ("fails", "holds")
    table = v.markdown_table([v.judge(c, m)])
    assert table.splitlines()[0] == "| claim | paper | pilot | calibrated | notebook |"
    assert "0.90× **fails**" in table and "1.30× **holds**" in table


def test_unknown_claim_rule_or_variant_is_named():
    c, m = _claim(v.AtLeast(), {"other": [1.0]})
    with pytest.raises(v.UnknownClaim, match="'c'.*unknown variant 'other'"):
        v.judge(c, m)
    with pytest.raises(v.UnknownClaim, match="'weird'.*unknown rule"):       # refused when the claim is made
        v.Claim("weird", "t", "Fig. 1", "p", "nb", object(), lambda m: {"ours": [1.0]})
    with pytest.raises(v.UnknownClaim, match="unknown claim 'nope'"):
        v.find([c], "nope")
    with pytest.raises(v.UnknownClaim, match="decides no claim"):
        v.judge_all([c], {"nb": m}, notebook="other_nb")


@pytest.mark.parametrize("metrics", [{}, {"x": {"ours": []}}, {"x": {"ours": [float("nan")]}},
                                     {"x": {"ours": ["0.9"]}}, {"x": {}}])
def test_missing_or_partial_metrics_name_the_claim(metrics):
    c = v.Claim("speedup", "t", "Fig. 1", "p", "nb", v.AtLeast(), lambda m: m["x"])
    with pytest.raises(v.MissingMetrics, match="'speedup'"):
        v.judge(c, metrics)


def test_counts_text_counts_every_cell():
    c, _ = _claim(v.AtLeast(target=1.0), None, variants=("a", "b"))
    out = [v.judge(c, {"x": {"a": [2.0], "b": [0.5]}}), v.judge(c, {"x": {"a": [3.0]}})]
    assert v.counts_text(out) == "2 holds, 1 fails"


def test_verdict_section_says_what_is_missing_and_prints_no_verdict(monkeypatch):
    import types
    fake = types.SimpleNamespace(CLAIMS=(
        v.Claim("a", "first", "Fig. 1", "p", "nb", v.AtLeast(), lambda m: {"ours": [m["ok"]]}),
        v.Claim("b", "second", "Fig. 2", "p", "nb", v.AtLeast(), lambda m: {"ours": [m["gone"]]})))
    fake.PROFILE = "quick"
    monkeypatch.setattr(story, "_module", lambda paper, name: fake)
    shown = str(story.verdict_section("hist", "nb", {"ok": 2.0}))
    assert "No verdict from this run" in shown and "'b'" in shown and "gone" in shown and "profile quick" in shown
    assert "**holds**" not in shown                                  # nothing from partial data
    shown = str(story.verdict_section("hist", "nb", {"ok": 2.0, "gone": 0.5}))
    assert "2.00 **holds**" in shown and "0.50 **fails**" in shown


def test_story_table_and_paths():
    t = str(story.table([{"acc": 0.81234, "t": 12.3456, "name": "a|b"}], ["name", "acc", "t"],
                        formats={"acc": "1%", "t": ".1f"}, headers={"t": "time (s)"}))
    assert t.splitlines() == ["| name | acc | time (s) |", "|---|---|---|", "| a\\|b | 81.2 % | 12.3 |"]
    assert story.display_path(ROOT / "figures" / "x.png") == "figures/x.png"
    assert story.display_path("/somewhere/else/x.png") == "…/x.png"
    rows = str(story.setup_section({"num_clients": 60, "profile": "smoke"}, [("clients", "num_clients", "60")],
                                   ["Fashion-MNIST instead of CIFAR-10"]))
    assert "| clients | 60 | 60 |" in rows and "| profile | smoke |" in rows and "- Fashion-MNIST" in rows
    with pytest.raises(KeyError, match="num_cells"):
        story.setup_section({}, [("cells", "num_cells", "5")])


def test_committed_tables_are_the_generators_output():
    """Every verdict table (paper READMEs, the top README's glance table, figures/verdicts/*.json) is what
    ``python -m fedlib.lab.tables`` writes from the committed metrics: edit a number by hand and this fails."""
    out = subprocess.run([sys.executable, "-m", "fedlib.lab.tables", "--check"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr


def test_generated_verdict_files_match_the_rule():
    for paper in ("hist", "dtfl", "hasfl"):
        data = json.loads((ROOT / "figures" / "verdicts" / f"{paper}.json").read_text())
        assert data["paper"] == paper and data["claims"]
        for claim in data["claims"]:
            assert claim["cells"] and all(c["word"] in v.WORDS for c in claim["cells"].values()), claim["id"]


def test_extra_seed_sources_join_the_seeds_and_a_source_lacking_the_value_is_an_undecided_seed():
    c = v.Claim("c", "t", "Fig. 1", "≥ 4×", "nb", v.AtLeast(target=4.0, partly=1.0, unit="×"),
                lambda m: {"ours": [m["r"]]})
    cell = v.judge(c, {"r": 4.5}, extra=[{"r": 2.0}, {"other": 1}])["cells"]["ours"]
    assert cell["seeds"] == 3 and cell["word"] == "not robust across seeds"
    assert cell["words"] == ["holds", "partly", "not reached"] and len(cell["undecided"]) == 1
    with pytest.raises(v.MissingMetrics):
        v.judge(c, {"other": 1}, extra=[{"r": 2.0}])       # the main metrics must hold it


def test_a_long_trend_shows_its_ends_and_first_step():
    rule = v.Trend(direction="down", unit=" s", digits=0)
    assert rule.fmt([309, 333, 274, 326, 288, 231, 155]) == "309 s → 333 s → … → 155 s"
    assert rule.fmt([3, 2, 1]) == "3 s → 2 s → 1 s"


def test_a_trend_with_a_censored_point_decides_when_every_admitted_sequence_agrees():
    rule = v.Trend(direction="down", unit=" L0", digits=1)
    # 15 -> >= 30 rises whatever the bound's true value, 15 -> 10 falls: every admitted sequence is partly
    c, m = _claim(rule, {"ours": [[15.0, 10.0, 7.5], [15.0, v.Censored(30.0), 10.0]]})
    cell = v.judge(c, m)["cells"]["ours"]
    assert cell["word"] == "not robust across seeds" and cell["number"] == "15.0 L0 → … → 7.5 L0 / 15.0 L0 → … → 10.0 L0"
    assert cell["words"] == ["holds", "partly"]
    assert rule.fmt([15.0, v.Censored(30.0), 10.0]) == "15.0 L0 → ≥ 30.0 L0 → 10.0 L0"
    # a bounded end that may lie above or below the start: no word
    c, m = _claim(rule, {"ours": [[15.0, 10.0, v.Censored(8.0)]]})
    assert v.judge(c, m)["cells"]["ours"]["word"] == "not reached"


def test_a_cell_judged_at_fewer_seeds_says_so():
    c, _ = _claim(v.AtLeast(target=1.0, unit="×"), None)
    table = v.markdown_table([v.judge(c, {"x": {"ours": [2.0, 3.0, 4.0]}}), v.judge(c, {"x": {"ours": [2.0]}})])
    assert "2.00× – 4.00× **holds**" in table and "2.00× (1 seed) **holds**" in table
    table = v.markdown_table([v.judge(c, {"x": {"ours": [2.0, 3.0, 4.0]}}), v.judge(c, {"x": {"ours": [2.0, 5.0]}})])
    assert "2.00× – 5.00× (2 of 3 seeds) **holds**" in table


@pytest.mark.parametrize("edit, words", [
    (lambda d: d["runs"][0].__setitem__("final_test_acc", "0.78"),
     "hist_1_experiments.json: runs[0].final_test_acc holds the text '0.78' where a number belongs"),
    (lambda d: d.pop("runs"), "figures/metrics/hist_1_experiments.json: claim 'fig2_higher_accuracy': the metrics lack"),
], ids=["number-as-text", "key-removed"])
def test_tables_name_the_metrics_file_and_key_that_stand_in_the_way(tmp_path, edit, words):
    """``python -m fedlib.lab.tables`` on a metrics file edited by hand: the file (and the key) named in one line,
    never a bare TypeError (issue 70, item 5)."""
    import json
    import shutil

    from fedlib.lab import tables

    shutil.copytree(tables.REPO_ROOT / "figures" / "metrics", tmp_path / "figures" / "metrics")
    path = tmp_path / "figures" / "metrics" / "hist_1_experiments.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError) as err:
        tables.paper_verdicts("hist", tmp_path)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_live_verdict_of_fewer_seeds_than_the_committed_block_says_which_seeds_it_judges(monkeypatch):
    import types
    fake = types.SimpleNamespace(CLAIMS=(
        v.Claim("a", "first", "Fig. 1", "p", "nb", v.AtLeast(), lambda m: {"ours": [m["ok"]]}),), PROFILE="quick")
    monkeypatch.setattr(story, "_module", lambda paper, name: fake)
    head = "**This run** (seed 0 only; the committed block above judges seeds 0, 1):\n\n| claim |"
    assert str(story.verdict_section("hist", "nb", {"ok": 2.0, "seeds": [0]}, committed=[1, 0])).startswith(head)
    assert str(story.verdict_section("hist", "nb", {"ok": 2.0, "seed": 0}, committed=[0, 1])).startswith(head)
    three = str(story.verdict_section("hist", "nb", {"ok": 2.0, "seeds": [2, 0]}, committed=[0, 1, 2]))
    assert three.startswith("**This run** (seeds 0, 2 only; the committed block above judges seeds 0, 1, 2)")
    for metrics, committed in (({"ok": 2.0, "seeds": [0, 1]}, [0, 1]), ({"ok": 2.0, "seeds": [0]}, [0]),
                               ({"ok": 2.0}, [0, 1]), ({"ok": 2.0, "seeds": [0]}, [])):
        shown = str(story.verdict_section("hist", "nb", metrics, committed=committed))
        assert shown.startswith("| claim |") and "This run" not in shown, (metrics, committed)
    # the committed block's seeds from the verdict file: dtfl_2_table1's Table 1 claim judges seeds 0 and 1
    assert story.committed_seeds("dtfl", "dtfl_2_table1") == [0, 1]
    assert story.committed_seeds("dtfl", "no_such_notebook") == []
    shown = str(story.verdict_section("hist", "nb", {"ok": 2.0, "seeds": [0]}))     # "nb": no committed rows
    assert shown.startswith("| claim |")
