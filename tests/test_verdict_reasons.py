"""Reasons from evidence (issue 69, item 4): a reason names a horizon, a deviation or the scale only where another
run shows it, and says "untested" where none can; {tie, fails} reads fails; every rule rounds at its threshold.

Property tests run over generated claims (random rules, values, seeds and evidence); the tests at the end derive
the committed tables' reasons from the columns they name."""
import math
import random

import pytest

from fedlib.lab import verdicts as v

WORDS = ("holds", "partly", "fails", "not robust across seeds")


def _claim(rule, values, **kw):
    return v.Claim("c", "a claim", "Fig. 1", "paper", "nb", rule, lambda m: m["x"], **kw), {"x": {"ours": values}}


def _cell(word, reason=None, number="1"):
    return {"word": word, "number": number, "reason": reason}


def _random_rule(rng):
    kind = rng.choice(("at_least", "at_most", "better", "trend"))
    if kind == "at_least":
        return v.AtLeast(target=1.0, partly=rng.choice((None, 0.0)))
    if kind == "at_most":
        return v.AtMost(target=1.0, partly=rng.choice((None, 2.0)))
    if kind == "better":
        return v.Better(margin=rng.choice((0.0, 0.5)))
    return v.Trend(direction=rng.choice(("up", "down")), margin=rng.choice((0.0, 0.3)))


def _random_value(rng, rule):
    if isinstance(rule, v.Trend):
        return [round(rng.uniform(-2, 3), 2) for _ in range(rng.randint(2, 4))]
    return rng.choice((round(rng.uniform(-2, 3), 2), 1.0, 0.5, -0.5, v.Censored(round(rng.uniform(-1, 2), 2))))


def _generated(seed: int):
    """A random claim (rule, seeds, resolution, extreme_of, horizon, deviation, scale) and random evidence."""
    rng = random.Random(seed)
    rule = _random_rule(rng)
    kw = {}
    if rng.random() < 0.6:
        kw["resolution"] = rng.choice((0.1, 0.4, 1.0))
        kw["extreme_of"] = rng.choice((1, 1, 4, 16))
    for name in ("horizon", "deviation", "scale"):
        if rng.random() < 0.5:
            kw[name] = f"the {name} sentence"
    values = [_random_value(rng, rule) for _ in range(rng.randint(1, 3))]
    evidence = {}
    for key, needs in (("horizon", "horizon"), ("scale", None), ("no deviation", "deviation"),
                       ("without", "deviation")):
        if (needs is None or needs in kw) and rng.random() < 0.5:
            evidence[key] = (f"{key} column", _cell(rng.choice(WORDS), {"class": "measured disagreement",
                                                                        "text": "there"}))
    c, m = _claim(rule, values, **kw)
    return c, m, {"ours": evidence}


def test_property_a_cause_is_named_only_where_another_run_gives_another_word():
    seen = set()
    for seed in range(3000):
        c, m, evidence = _generated(seed)
        cell = v.judge(c, m, evidence=evidence)["cells"]["ours"]
        r, ev = cell["reason"], evidence["ours"]
        if r is None:
            assert cell["word"] == "holds" and not c.deviation
            continue
        seen.add(r["class"])
        if cell["word"] == "holds":
            assert r["class"] == v.HOLDS_NOTE and c.deviation and r["text"].startswith(c.deviation)
            continue
        assert r["class"] in v.REASONS
        if r["class"] == "horizon":
            assert c.horizon and "horizon" in ev and ev["horizon"][1]["word"] != cell["word"], seed
        if r["class"] == "horizon, untested":
            assert c.horizon and "horizon" not in ev, seed
        if r["class"] == "stated deviation":
            assert c.deviation and ev["no deviation"][1]["word"] != cell["word"], seed
        if r["class"] == "deviation, untested":
            assert c.deviation and "no deviation" not in ev, seed
            assert "without" not in ev or ev["without"][1]["word"] != cell["word"], seed
        if r["class"] == "scale":
            assert ev["scale"][1]["word"] != cell["word"], seed
        # a claim's attributes alone never name a cause: without evidence, horizon and deviation are "untested"
        if not ev:
            assert r["class"] not in ("horizon", "stated deviation", "scale"), seed
        # the same word at the paper's horizon: that column's reason, said to be at the paper's horizon
        if c.horizon and "horizon" in ev and ev["horizon"][1]["word"] == cell["word"] and \
                r["class"] not in ("within resolution",):
            assert r["text"].startswith("at the paper's horizon too"), seed
        inherited = r["text"].startswith("at the paper's horizon too")
        if "scale" in ev and ev["scale"][1]["word"] == cell["word"] and not inherited and \
                r["class"] in ("seeds disagree", "measured disagreement"):
            assert "not the scale" in r["text"], seed
        if not ev.get("scale") and c.scale and not inherited and r["class"] in ("seeds disagree",
                                                                                 "measured disagreement"):
            assert "the paper's scale is untested" in r["text"], seed
    assert seen >= {"horizon", "horizon, untested", "stated deviation", "deviation, untested", "scale",
                    "within resolution", "measured disagreement", "seeds disagree", "undecided"}, seen


def test_property_within_resolution_means_every_miss_lies_within_the_difference_resolution():
    for seed in range(3000):
        c, m, _ = _generated(seed)
        cell = v.judge(c, m)["cells"]["ours"]
        r = cell["reason"]
        if not r or r["class"] != "within resolution" or cell["word"] == "partly" and isinstance(c.rule, v.Better):
            continue
        res = c.resolution * v.extreme_factor(c.extreme_of)
        for value, word in zip(m["x"]["ours"], cell["words"]):
            if word not in ("holds", v.UNDECIDED):
                d = v.reason.__globals__["_distance"](c.rule, value)
                assert d is not None and round(d, 9) <= res, (seed, value, res)


def test_property_ties_and_failures_with_no_seed_for_the_claim_read_fails():
    rng = random.Random(11)
    for _ in range(500):
        margin = rng.choice((0.1, 0.5))
        rule = v.Better(margin=margin)
        values = [rng.choice((rng.uniform(-margin, margin), rng.uniform(-3, -margin - 0.01), rng.uniform(-3, 3)))
                  for _ in range(rng.randint(1, 4))]
        c, m = _claim(rule, values)
        cell = v.judge(c, m)["cells"]["ours"]
        words = set(cell["words"])
        if words == {"partly", "fails"}:
            assert cell["word"] == "fails"
            ties = [lab for lab, w in zip(cell["labels"], cell["words"]) if w == "partly"]
            assert f"{', '.join(ties)} tie within" in cell["reason"]["text"]
        elif len(words) > 1:
            assert cell["word"] == "not robust across seeds" and "holds" in words
        # the word never depends on the seeds' order
        c2, m2 = _claim(rule, list(reversed(values)))
        assert v.judge(c2, m2)["cells"]["ours"]["word"] == cell["word"]


def test_ties_and_failures_read_fails_only_under_a_rule_whose_partly_is_a_tie():
    assert v.aggregate(["partly", "fails"], v.tie_word(v.Better(margin=0.5))) == "fails"
    assert v.aggregate(["partly", "fails", "holds"], "partly") == "not robust across seeds"
    # AtLeast's partly is the claimed direction by less, not a tie: the seeds still disagree
    assert v.aggregate(["partly", "fails"], v.tie_word(v.AtLeast(target=4.0, partly=1.0))) == \
        "not robust across seeds"
    c, m = _claim(v.Better(margin=0.5), [0.2, -1.0, v.Unjudged("no run")])
    cell = v.judge(c, m)["cells"]["ours"]
    assert cell["word"] == "fails" and "seed #1 tie within ±0.50" in cell["reason"]["text"]


@pytest.mark.parametrize("rule, value, word", [
    (v.AtLeast(target=1.0), 1.0 - 1e-12, "holds"),          # a float beside the threshold is the threshold
    (v.AtLeast(target=1.0, partly=0.5), 0.5 + 1e-12, "fails"),
    (v.AtLeast(target=1.0), 1.0 - 1e-6, "fails"),           # beyond the rounding: below
    (v.AtMost(target=1.0), 1.0 + 1e-12, "holds"),
    (v.AtMost(target=1.0, partly=2.0), 2.0 - 1e-12, "fails"),
    (v.AtMost(target=1.0), 1.0 + 1e-6, "fails"),
    (v.Better(margin=0.5), 0.5 + 1e-12, "partly"),
])
def test_every_rule_rounds_at_its_thresholds(rule, value, word):
    assert rule.word(value) == word
    # 0.7 / 0.7 computed the long way round is 1 but for float noise
    assert v.AtLeast(target=1.0).word((0.1 + 0.2) / 0.30000000000000004) == "holds"


def test_the_difference_standard_error_and_the_extreme_factor_by_hand():
    assert v.difference_se(0.3, 0.4) == pytest.approx(0.5)
    assert v.difference_se(0.5) == pytest.approx(0.5 * math.sqrt(2))
    assert v.extreme_factor(1) == v.extreme_factor(2) == 1.0
    assert v.extreme_factor(16) == pytest.approx(1.769, abs=1e-3)   # Φ⁻¹(15.625 / 16.25) = Φ⁻¹(0.9615)
    assert v.extreme_factor(6) == pytest.approx(1.282, abs=1e-3)    # Φ⁻¹(0.9)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="k must be"):
            v.extreme_factor(bad)
    with pytest.raises(ValueError, match="se_a"):
        v.difference_se(-0.1)


def test_an_extreme_of_many_gaps_is_resolved_at_the_expected_extreme_of_as_many_ties():
    rule = v.AtLeast(target=1.0, partly=0.0, unit=" points", digits=1)
    # one gap with SE 1.58: a miss by 2 points is resolved; the smallest of 16 such gaps: 2.8 points are not
    one = _claim(rule, [-1.0], resolution=1.58)
    many = _claim(rule, [-1.0], resolution=1.58, extreme_of=16)
    assert v.judge(*one)["cells"]["ours"]["reason"]["class"] == "measured disagreement"
    r = v.judge(*many)["cells"]["ours"]["reason"]
    assert r["class"] == "within resolution" and "extreme of 16 differences" in r["text"]
    # beyond it: a disagreement, and the cell says the threshold itself is below what it can resolve
    r = v.judge(*_claim(rule, [-9.0], resolution=1.58, extreme_of=16))["cells"]["ours"]["reason"]
    assert r["class"] == "measured disagreement" and "it cannot resolve the claim" in r["text"]


def test_a_deviation_is_the_reason_only_where_a_run_without_it_moves_the_word():
    rule = v.AtLeast(target=1.0)
    c, m = _claim(rule, [0.5], deviation="our FedGKT differs")
    moved = {"ours": {"no deviation": ("FedGKT as FedML", _cell("holds"))}}
    same = {"ours": {"no deviation": ("FedGKT as FedML", _cell("fails"))}}
    assert v.judge(c, m, evidence=moved)["cells"]["ours"]["reason"]["class"] == "stated deviation"
    r = v.judge(c, m, evidence=same)["cells"]["ours"]["reason"]
    assert r["class"] == "measured disagreement" and "not the deviation" in r["text"]
    assert v.judge(c, m)["cells"]["ours"]["reason"]["class"] == "deviation, untested"


def test_the_same_runs_without_the_deviating_part_decide_whether_the_deviation_can_matter():
    runs = {"x": {"ours": [0.5]}, "y": {"ours": [0.4]}}
    make = lambda y_word: v.Claim(  # noqa: E731
        "c", "a claim", "Fig. 1", "paper", "nb", v.AtLeast(target=1.0), lambda m: m["x"], deviation="FedGKT differs",
        without_deviation=lambda m: m["y"] if y_word == "fails" else {"ours": [2.0]}, deviating="FedGKT")
    same = v.judge(make("fails"), runs)["cells"]["ours"]["reason"]
    assert same["class"] == "measured disagreement" and "the word is the same without FedGKT" in same["text"]
    moved = v.judge(make("holds"), runs)["cells"]["ours"]["reason"]
    assert moved["class"] == "deviation, untested" and "without FedGKT the word is holds" in moved["text"]
    with pytest.raises(ValueError, match="without_deviation"):
        v.Claim("c", "t", "f", "p", "nb", v.AtLeast(), lambda m: m, without_deviation=lambda m: m)


# --- the committed tables: each reason derived from the columns it names ------------------------------------

@pytest.fixture(scope="module")
def committed():
    from fedlib.lab.tables import paper_verdicts
    return {p: paper_verdicts(p) for p in ("hist", "dtfl", "hasfl")}


def test_every_committed_horizon_reason_rests_on_the_paper_horizon_column(committed):
    from fedlib.lab.hist.claims import CLAIMS
    hist = committed["hist"]
    n = 0
    for claim in hist["claims"]:
        if not v.find(CLAIMS, claim["id"]).horizon:
            continue
        for col, cell in claim["cells"].items():
            r = cell["reason"]
            if col.endswith("paper profile") or not r:
                continue
            paper = claim["cells"].get(f"{col} · paper profile")
            if r["class"] == "horizon":
                n += 1
                assert paper and paper["word"] != cell["word"], (claim["id"], col)
            if paper and paper["word"] == cell["word"] and r["class"] != "within resolution" \
                    and cell["word"] != "not reached":
                assert r["text"].startswith("at the paper's horizon too"), (claim["id"], col)
                assert r["class"] == paper["reason"]["class"], (claim["id"], col)
    assert n >= 1
    # a cell blames the scale only where a column at the paper's scale gives its claim another word
    n_scale = 0
    for v_ in committed.values():
        for claim in v_["claims"]:
            at_scale = [c for k, c in claim["cells"].items() if "paper scale" in k]
            for cell in claim["cells"].values():
                if (cell["reason"] or {}).get("class") == "scale":
                    n_scale += 1
                    assert at_scale and all(c["word"] != cell["word"] for c in at_scale), claim["id"]
    assert n_scale >= 1           # DTFL's Table 1 rows: holds at the paper's scale (time model), not robust here


def test_no_committed_reason_names_fedml_s_own_behaviour_as_the_deviation(committed):
    for claim in committed["dtfl"]["claims"]:
        for col, cell in claim["cells"].items():
            r = cell["reason"]
            if r and "FedGKT" in r["text"] and r["class"] in ("stated deviation", "deviation, untested",
                                                                v.HOLDS_NOTE):
                assert "1 epoch" in r["text"] and "is FedML's own" in r["text"], (claim["id"], col)
                assert "not a global model's accuracy" not in r["text"]
    cells = {c["id"]: c["cells"] for c in committed["dtfl"]["claims"]}
    # Table 4 with the authors' scheduler fails without FedGKT too: the deviation is not its reason
    authors = cells["table4_fastest_every_k_authors"]["ResNet-20"]
    assert authors["word"] == "fails" and authors["reason"]["class"] == "measured disagreement"
    assert "the word is the same without FedGKT" in authors["reason"]["text"]
    # the "comparable to FedGKT" holds show the deviation they rest on
    for setting in ("iid", "noniid"):
        for col, cell in cells[f"accuracy_vs_fedgkt_{setting}"].items():
            assert cell["word"] == "holds" and cell["reason"]["class"] == v.HOLDS_NOTE, col


# --- the glance counts what the paper claims (issue 69, item 7) -----------------------------------------------

def test_only_the_papers_rows_on_its_own_method_are_counted_the_rest_apart():
    rule = v.AtLeast(target=1.0)
    paper = v.Claim("p", "a claim", "Fig. 1", "p", "nb", rule, lambda m: m["x"], variants=("ours", "mine"),
                    own_variants=("mine",))
    narrower = v.Claim("n", "narrower", "Fig. 1", "p", "nb", rule, lambda m: {"ours": m["x"]["ours"]},
                       reading="narrower")
    check = v.Claim("k", "a check", "Fig. 1", "p", "nb", rule, lambda m: {"ours": m["x"]["ours"]}, kind="check")
    m = {"x": {"ours": [2.0], "mine": [0.5]}}
    out = [v.judge(c, m) for c in (paper, narrower, check)]
    assert v.counts(out) == {"holds": 1}                               # the paper's row, its own method
    assert v.counts(out, apart=True) == {"holds": 1, "fails": 1}       # the narrower row; our method's cell
    table = v.markdown_table(out)
    assert "narrower (Fig. 1) [narrower]" in table and "**fails** (measured disagreement) [ours]" in table
    assert "counted apart" in table
    with pytest.raises(ValueError, match="reading"):
        v.Claim("c", "t", "f", "p", "nb", rule, lambda m: m, reading="broader")
    with pytest.raises(ValueError, match="own_variants"):
        v.Claim("c", "t", "f", "p", "nb", rule, lambda m: m, own_variants=("calibrated",))


def test_the_committed_glance_counts_the_papers_rows(committed):
    # HASFL as the paper defines it (pilot), on rows worded as the paper words them (issue 69's own count)
    assert committed["hasfl"]["counts"] == "1 holds, 4 partly, 10 fails, 2 not robust across seeds, 2 not reached"
    readings = {c["id"]: c["reading"] for c in committed["dtfl"]["claims"]}
    assert readings["accuracy_vs_splitfed_iid"] == readings["accuracy_vs_splitfed_noniid"] == "duplicate"
    assert readings["fig2_dtfl_first_global_models"] == "narrower"
    assert all(c["reading"] == "paper" for c in committed["hist"]["claims"])
    for c in committed["hasfl"]["claims"]:   # every HASFL-calibrated cell (in and out of sample) is ours
        if c["kind"] == "paper":
            assert set(c["cells"]) - {"pilot"} <= set(c["own_variants"]) and "pilot" not in c["own_variants"]
