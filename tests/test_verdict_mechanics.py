"""The verdict rule follows its own principle ("a bound decides only when every value it admits gets the same
word"): censored points in a trend, undecided seeds beside decided ones, seeds that cannot be judged, and the
generated reason beside every word weaker than "holds". Property tests compare the rule with a brute-force
enumeration of the values a bound admits."""
import itertools
import math
import random

import pytest

from fedlib.lab import verdicts as v


def _claim(rule, values, **kw):
    return v.Claim("c", "a claim", "Fig. 1", "paper words", "nb", rule, lambda m: m["x"], **kw), {"x": values}


def _word(rule, value):
    return rule.word_of("c", value)


# --- censored points in a trend ------------------------------------------------------------------------------

def test_the_issue_example_a_censored_start_that_falls_at_every_step_holds():
    # HIST fully non-iid, seed 2: communication to 75 % at N = 2, 3, 4 is >= 30 (never reached), 23.3, 18.75
    rule = v.Trend(direction="down", margin=0.0)
    assert _word(rule, [v.Censored(30.0, "lower"), 23.3, 18.75]) == "holds"
    # a censored end that may lie above the start admits rises and falls: undecided
    assert _word(rule, [20.0, 15.0, v.Censored(12.0, "lower")]) == "not reached"
    # the end bounded from above below every point: every admitted sequence falls at the last step
    assert _word(rule, [20.0, 15.0, v.Censored(12.0, "upper")]) == "holds"


def test_censored_trends_give_partly_and_fails_when_every_admitted_sequence_does():
    up = v.Trend(direction="up", margin=0.0)
    # ends rise for every admitted value, the middle step falls for every one: partly
    assert _word(up, [1.0, v.Censored(10.0, "lower"), 5.0]) == "partly"
    # the end is at most the start for every admitted value: fails
    assert _word(up, [5.0, 7.0, v.Censored(5.0, "upper")]) == "fails"


_GRID = [x / 2 for x in range(-60, 61)] + [-1e6, 1e6]


def _admitted(x):
    if isinstance(x, v.Censored):
        lo, hi = x.interval()
        return [g for g in _GRID if lo <= g <= hi]
    return [x]


def _brute_words(rule, seq):
    words = set()
    for combo in itertools.product(*(_admitted(x) for x in seq)):
        words.add(rule.word_of("c", list(combo)))
    return words


def test_property_a_censored_trend_gets_the_common_word_of_the_sequences_it_admits():
    rng = random.Random(20261201)
    checked = decided = 0
    for _ in range(400):
        n = rng.randint(2, 4)
        seq = [float(rng.randint(-5, 5)) for _ in range(n)]
        for i in rng.sample(range(n), rng.randint(1, min(2, n))):
            seq[i] = v.Censored(float(rng.randint(-5, 5)), rng.choice(("lower", "upper")))
        rule = v.Trend(direction=rng.choice(("up", "down")), margin=float(rng.choice((0, 1))))
        got, words = _word(rule, seq), _brute_words(rule, seq)
        want = words.pop() if len(words) == 1 else "not reached"
        assert got == want, (rule, seq, got, words)
        checked += 1
        decided += got != "not reached"
    assert checked == 400 and 40 < decided < 360   # both kinds of outcome were exercised


def test_property_a_censored_scalar_gets_the_common_word_of_the_values_it_admits():
    rng = random.Random(7)
    for _ in range(300):
        rule = rng.choice([v.AtLeast(target=2.0, partly=1.0), v.AtMost(target=1.0, partly=3.0), v.Better(margin=1.0)])
        c = v.Censored(float(rng.randint(-4, 4)), rng.choice(("lower", "upper")))
        words = {rule.word_of("c", g) for g in _admitted(c)}
        assert _word(rule, c) == (words.pop() if len(words) == 1 else "not reached")


# --- seeds --------------------------------------------------------------------------------------------------

def test_an_undecided_seed_beside_a_decided_one_keeps_the_decided_word_and_is_shown():
    rule = v.AtLeast(target=4.0, partly=1.0, unit="×")
    c, m = _claim(rule, {"ours": [0.5, v.Censored(2.0, "lower")]})   # fails; >= 2 admits partly and holds
    cell = v.judge(c, m)["cells"]["ours"]
    assert cell["word"] == "fails" and cell["words"] == ["fails", "not reached"]
    assert [u["seed"] for u in cell["undecided"]] == ["seed #2"]
    table = v.markdown_table([v.judge(c, m)])
    assert "**fails**; 1 of 2 seeds undecided" in table and "≥ 2.00× admits more than one word" in table


def test_not_robust_only_when_decided_seeds_disagree_and_no_decided_seed_is_not_reached():
    assert v.aggregate(["holds", "fails"]) == "not robust across seeds"
    assert v.aggregate(["holds", "not reached", "holds"]) == "holds"
    assert v.aggregate(["not reached", "not reached"]) == "not reached"


def test_property_the_word_never_depends_on_the_order_of_the_seeds():
    rng = random.Random(3)
    rule = v.AtLeast(target=4.0, partly=1.0)
    for _ in range(200):
        values = [rng.choice([0.5, 2.0, 5.0, v.Censored(2.0, "lower"), v.Censored(4.5, "lower"),
                              v.Unjudged("no run")]) for _ in range(rng.randint(1, 4))]
        words = set()
        for perm in itertools.permutations(values):
            c, m = _claim(rule, {"ours": list(perm)})
            words.add(v.judge(c, m)["cells"]["ours"]["word"])
        assert len(words) == 1, values


def test_a_seed_whose_metrics_lack_the_value_is_named_with_the_reason_not_dropped():
    c = v.Claim("c", "a claim", "Fig. 1", "≥ 4×", "nb", v.AtLeast(target=4.0), lambda m: {"ours": [m["x"]]})
    out = v.judge(c, {"x": 5.0, "seeds": [0]}, extra=[{"x": 6.0, "seeds": [1]}, {"other": 1, "seeds": [2]}])
    cell = out["cells"]["ours"]
    assert cell["seeds"] == 3 and cell["labels"] == ["seed 0", "seed 1", "seed 2"]
    assert cell["word"] == "holds" and cell["undecided"][0]["seed"] == "seed 2"
    assert "lack what the claim needs" in cell["undecided"][0]["why"]
    assert "seed 2: its metrics lack" in v.markdown_table([out])


def test_an_unjudged_variant_of_one_seed_leaves_the_other_variants_judged():
    c, m = _claim(v.Better(margin=0.0), {"a": [1.0, v.Unjudged("no run reached 75 %")], "b": [2.0, 3.0]},
                  variants=("a", "b"))
    cells = v.judge(c, m)["cells"]
    assert cells["a"]["word"] == "holds" and cells["a"]["undecided"][0]["why"] == "no run reached 75 %"
    assert cells["b"]["word"] == "holds" and not cells["b"]["undecided"]


# --- reasons ------------------------------------------------------------------------------------------------

def _reason(rule, values, **kw):
    c, m = _claim(rule, {"ours": values}, **kw)
    return v.judge(c, m)["cells"]["ours"]["reason"]


def test_every_reason_class_follows_the_written_order():
    assert _reason(v.AtLeast(target=1.0), [2.0]) is None                                   # holds: no reason
    assert _reason(v.AtLeast(target=1.0), [2.0], deviation="d")["class"] == "rests on a deviation"
    assert _reason(v.Better(margin=0.5), [0.2])["class"] == "within resolution"            # a tie
    assert _reason(v.AtLeast(target=1.0), [0.95], resolution=0.1)["class"] == "within resolution"
    # beyond the resolution, with no other run: the deviation and the horizon are untested, not asserted
    assert _reason(v.AtLeast(target=1.0), [0.5], resolution=0.1, deviation="d", horizon="h") == \
        {"class": "deviation, untested", "text": "d; no run without the deviation exists"}
    assert _reason(v.AtLeast(target=1.0), [0.5], horizon="h") == \
        {"class": "horizon, untested", "text": "h; no run to the paper's horizon exists"}
    assert _reason(v.AtLeast(target=1.0), [0.5])["class"] == "measured disagreement"
    assert _reason(v.AtLeast(target=1.0), [0.5, 2.0])["class"] == "seeds disagree"
    assert _reason(v.AtLeast(target=1.0), [v.Unjudged("nothing")])["class"] == "undecided"
    # a trend whose failing step falls short by less than the resolution
    assert _reason(v.Trend(margin=0.0), [[1.0, 2.0, 1.95]], resolution=0.1)["class"] == "within resolution"
    assert _reason(v.Trend(margin=0.0), [[1.0, 2.0, 1.5]], resolution=0.1)["class"] == "measured disagreement"


def test_checks_of_the_implementation_are_a_table_of_their_own_and_not_counted():
    paper, m = _claim(v.AtLeast(target=1.0), {"ours": [0.5]})
    check = v.Claim("k", "a check", "Fig. 2", "1/N", "nb", v.AtLeast(target=1.0), lambda m: m["x"], kind="check")
    out = [v.judge(paper, m), v.judge(check, {"x": {"ours": [2.0]}})]
    table = v.markdown_table(out)
    assert table.index("a claim") < table.index("**Checks of the implementation**") < table.index("a check")
    assert v.counts(out) == {"fails": 1}


def test_a_rule_set_after_its_numbers_is_marked():
    c, m = _claim(v.AtLeast(target=1.0), {"ours": [2.0]})
    (c,) = v.registered([c], {"c": ("2026-11-27", True)})
    table = v.markdown_table([v.judge(c, m)])
    assert "a claim (Fig. 1)†" in table and "were known (at least the first seed's): † on 2026-11-27." in table
    (later,) = v.registered([c], {"c": ("2026-12-01", True)})
    both = v.markdown_table([v.judge(c, m), v.judge(later, m)])
    assert "† on 2026-11-27; ‡ on 2026-12-01" in both and "a claim (Fig. 1)‡" in both
    with pytest.raises(ValueError, match="missing"):
        v.registered([c], {})
    with pytest.raises(ValueError):
        v.registered([c], {"c": ("27 Nov", True)})


@pytest.mark.parametrize("make, match", [
    (lambda: v.Trend(direction="dwon"), "direction"),
    (lambda: v.Trend(margin=math.nan), "margin"),
    (lambda: v.Better(margin=-0.1), "margin"),
    (lambda: v.AtLeast(target=math.nan), "target"),
    (lambda: v.AtLeast(target=1.0, partly=2.0), "partly"),
    (lambda: v.AtMost(target=1.0, partly=0.5), "partly"),
    (lambda: v.Censored(math.inf), "finite"),
    (lambda: v.Unjudged(""), "reason"),
    (lambda: v.accuracy_se(0), "n_test"),
    (lambda: v.Claim("c", "t", "f", "p", "nb", v.AtLeast(), lambda m: m, kind="paperr"), "kind"),
])
def test_the_rules_refuse_bad_input_naming_the_parameter(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_accuracy_standard_error_by_hand():
    assert v.accuracy_se(10_000, 0.75) == pytest.approx(math.sqrt(0.1875) / 100)   # 0.433 points
    assert v.accuracy_se(2_000) == pytest.approx(0.5 / math.sqrt(2000))
