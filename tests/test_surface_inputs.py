"""The newest surfaces refuse bad input when their objects are made, before any work, with one line naming the
parameter and what it allows: the verdict rule's objects (rules, claims), ``story``'s tables and Setup section, an
explorer's controls. And the Setup section shows each value in its own column."""
import math

import pytest

from fedlib.lab import story
from fedlib.lab import verdicts as v
from fedlib.lab.explore import Control


@pytest.mark.parametrize("make, words", [
    (lambda: v.Trend(direction="dwon"), "Trend.direction must be 'up' or 'down', got 'dwon'"),
    (lambda: v.Trend(direction="Down"), "Trend.direction must be 'up' or 'down'"),
    (lambda: v.Trend(direction=["up"]), "Trend.direction must be 'up' or 'down'"),
    (lambda: v.Trend(margin=math.nan), "Trend.margin must be a finite number"),
    (lambda: v.Trend(margin=-0.1), "Trend.margin must be >= 0"),
    (lambda: v.AtLeast(target=math.nan), "AtLeast.target must be a finite number, got nan"),
    (lambda: v.AtLeast(target="2"), "AtLeast.target must be a finite number"),
    (lambda: v.AtLeast(target=True), "AtLeast.target must be a finite number"),
    (lambda: v.AtLeast(target=2.0, partly=3.0), "AtLeast.partly must be below target"),
    (lambda: v.AtLeast(target=2.0, partly=2.0), "AtLeast.partly must be below target"),
    (lambda: v.AtLeast(target=2.0, partly=math.inf), "AtLeast.partly must be a finite number"),
    (lambda: v.AtMost(target=0.05, partly=0.01), "AtMost.partly must be above target"),
    (lambda: v.AtMost(target=math.inf), "AtMost.target must be a finite number"),
    (lambda: v.Better(margin=-0.005), "Better.margin must be >= 0"),
    (lambda: v.Better(margin=math.nan), "Better.margin must be a finite number"),
    (lambda: v.AtLeast(digits=-1), "AtLeast.digits must be an integer in 0..12"),
    (lambda: v.AtLeast(digits=2.5), "AtLeast.digits must be an integer in 0..12"),
    (lambda: v.Better(unit=5), "Better.unit must be a short text for a table cell"),
    (lambda: v.Better(unit=" a|b"), "Better.unit must be a short text"),
    (lambda: v.Censored(1.0, "upwards"), "Censored.side must be 'lower' or 'upper'"),
    (lambda: v.Censored(math.nan), "Censored.value must be a finite number"),
    (lambda: v.Unjudged(" "), "Unjudged.reason must be a non-empty sentence"),
])
def test_rule_objects_refuse_bad_values_when_made(make, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")):
        make()


def test_a_rule_made_right_judges_the_claimed_way():
    """The constructors' checks keep a rising curve from being read as falling: "down" judges the mirror of "up"."""
    rising = [0.1, 0.2, 0.3]
    assert v.Trend(direction="up").word(rising) == "holds"
    assert v.Trend(direction="down").word(rising) == "fails"
    assert v.AtLeast(target=2.0, partly=1.0).word(1.5) == "partly"
    assert v.AtMost(target=0.05, partly=0.1).word(0.07) == "partly"


def _claim(**kw):
    base = dict(id="c", text="t", figure="Fig. 1", paper="p", notebook="nb", rule=v.AtLeast(),
                extract=lambda m: m["x"])
    return v.Claim(**{**base, **kw})


@pytest.mark.parametrize("kw, words", [
    (dict(id=""), "Claim.id must be a non-empty name"),
    (dict(notebook=""), "Claim 'c': notebook must be a non-empty text"),
    (dict(rule="at_least"), "Claim 'c': unknown rule str"),
    (dict(extract={"ours": [1.0]}), "Claim 'c': extract must be a function"),
    (dict(variants="ours"), "Claim 'c': variants must be a non-empty tuple of distinct names"),
    (dict(variants=()), "variants must be a non-empty tuple"),
    (dict(variants=("pilot", "pilot")), "variants must be a non-empty tuple of distinct names"),
    (dict(registered="12/03/2025"), "registered must be '' or a date YYYY-MM-DD"),
    (dict(set_after_numbers="yes"), "set_after_numbers must be True or False"),
    (dict(kind="paper claim"), "kind must be one of paper, check"),
    (dict(resolution=math.nan), "resolution must be a finite number >= 0"),
])
def test_a_claim_refuses_bad_fields_when_made(kw, words):
    with pytest.raises(ValueError, match=words):
        _claim(**kw)


def test_every_committed_claim_is_well_formed():
    """The papers' claim modules and the explorers' claims all pass the constructors' checks (they import)."""
    import importlib
    n = 0
    for mod in ("hist.claims", "dtfl.claims", "hasfl.claims", "dtfl.explore", "hasfl.explore"):
        n += len(importlib.import_module(f"fedlib.lab.{mod}").CLAIMS)
    importlib.import_module("fedlib.lab.hist.explore")
    assert n > 50


@pytest.mark.parametrize("args, words", [
    (([{"a": 1}], []), "columns must be a non-empty list"),
    (([{"a": 1}], "a"), "columns must be a non-empty list"),
    (([{"a": 1}], ["a", "a"]), "columns must be distinct"),
    (({"a": 1}, ["a"]), "rows must be a list of dicts"),
    (("a", ["a"]), "rows must be a list of dicts"),
    (([{"a": 1}, 3], ["a"]), r"rows\[1\] must be a dict"),
    (([{"a": 1}], ["a"], {"b": ".2f"}), r"formats name none of the columns \(\['b'\]\)"),
    (([{"a": 1}], ["a"], None, {"A": "a (s)"}), r"headers name none of the columns \(\['A'\]\)"),
    (([{"a": 1}], ["a"], {"a": ".2q"}), r"formats\['a'\] must be a format spec"),
    (([{"a": 1}], ["a"], {"a": 3}), r"formats\['a'\] must be a format spec"),
])
def test_story_table_refuses_what_it_would_draw_wrong(args, words):
    with pytest.raises(ValueError, match=words):
        story.table(*args)


def test_story_table_formats_each_named_column():
    out = story.table([{"t": 1.23456, "acc": 0.8123}], ["t", "acc"], {"t": ".2f", "acc": "1%"},
                      {"t": "time (s)"}).data
    assert out.splitlines() == ["| time (s) | acc |", "|---|---|", "| 1.23 | 81.2 % |"]


def test_setup_section_shows_here_then_paper_with_unequal_values():
    """Each row's value in effect under "here" and the paper's under "paper" (a swap is invisible on a row where
    both are equal, so every row here differs)."""
    ns = {"rounds": 36, "num_clients": 10, "profile": "quick"}
    rows = [("rounds", "rounds", "200"), ("clients K", lambda n: f"{n['num_clients']} clients", "20 clients"),
            ("model", "ResNet-20", "ResNet-56")]
    lines = story.setup_section(ns, rows).data.splitlines()
    assert lines[0] == "| | here | paper |"
    assert lines[2:5] == ["| rounds | 36 | 200 |", "| clients K | 10 clients | 20 clients |",
                          "| model | ResNet-20 | ResNet-56 |"]
    for bad in ([("rounds", "rounds")], [["rounds", "rounds", "200"]], [("rounds", "rounds", 200)]):
        with pytest.raises(ValueError, match=r"rows\[0\] must be a \(quantity, here, paper\) triple"):
            story.setup_section(ns, bad)
    with pytest.raises(KeyError, match="no parameter 'seeds'"):
        story.setup_section(ns, [("seeds", "seeds", "0-4")])


@pytest.mark.parametrize("kw, words", [
    (dict(kind="slider", default=1), "kind of control 'x'"),
    (dict(kind="float", default=5.0, low=0.0, high=1.0), r"control 'x': default must be >= 0.0 and <= 1.0"),
    (dict(kind="float", default=0.5, low=math.nan, high=1.0), "control 'x': low must be a finite number"),
    (dict(kind="float", default=0.5, low=0.0, high=math.inf), "control 'x': high must be a finite number"),
    (dict(kind="float", default=0.5, low=1.0, high=0.0), "a slider needs low < high"),
    (dict(kind="float", default=0.5, low=0.0, high=1.0, step=0.0), "control 'x': step must be > 0"),
    (dict(kind="int", default=2.5, low=1, high=5), "control 'x': default must be an integer"),
    (dict(kind="range", default=(0.8, 0.2), low=0.0, high=1.0), "a range's default must have low <= high"),
    (dict(kind="range", default=0.5, low=0.0, high=1.0), r"a range's default must be \(low, high\)"),
    (dict(kind="choice", default="c", options=("a", "b")), "control 'x': default must be one of"),
    (dict(kind="choice", default="a", options=("a", "a")), "options must be distinct"),
    (dict(kind="choice", default="a", options=()), "a choice needs options"),
    (dict(kind="text", default=3), "control 'x': default must be"),
    (dict(kind="int", default=2, low=1, high=5, log=True), "a log slider needs kind 'float'"),
])
def test_a_control_refuses_an_impossible_setting_when_made(kw, words):
    with pytest.raises(ValueError, match=words):
        Control("x", "x", **kw)
