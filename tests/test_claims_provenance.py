"""Provenance that is true: every claim says when its rule was set and whether its numbers were known then; a
change of a rule or its wording is listed with its reason in the paper's run log; every sentence a claim quotes is
the paper's own; nothing says the thresholds were fixed before the runs."""
import importlib
import re
from pathlib import Path

import pytest

from fedlib.lab.verdicts import WORDS
from fedlib.lab.tables import PAPERS, ledger_lines

ROOT = Path(__file__).resolve().parents[1]
PAPER_TEXTS = ROOT.parent / "shared" / "papers"   # the papers' texts where this checkout has them (not in CI)


def _claims(paper):
    return importlib.import_module(f"fedlib.lab.{paper}.claims").CLAIMS


@pytest.mark.parametrize("paper", PAPERS)
def test_every_claim_is_registered_with_a_date_and_whether_its_numbers_were_known(paper):
    for c in _claims(paper):
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", c.registered), (c.id, c.registered)
        assert isinstance(c.set_after_numbers, bool)


@pytest.mark.parametrize("paper", PAPERS)
def test_every_rule_in_its_present_form_is_in_the_run_log_with_a_reason(paper):
    """A rule whose words, threshold or reading change gets a new fingerprint: the run log must list it (the
    line ``python -m fedlib.lab.tables --ledger`` prints, followed by the date and the reason)."""
    log = (ROOT / "notebooks" / paper / "RUN_LOG.md").read_text()
    missing = [line for line in ledger_lines(paper) if line.split(" — ")[0] not in log]
    assert not missing, (f"notebooks/{paper}/RUN_LOG.md lacks these rules in their present form; add each line with "
                         f"the date and why the rule changed:\n" + "\n".join(missing))
    for line in log.splitlines():   # every ledger entry says why
        if line.startswith("- `") and "` `" in line and " — " in line:
            assert len(line.split(" — ", 1)[1].strip()) > 10, line


def test_a_changed_rule_changes_its_fingerprint():
    import dataclasses
    c = _claims("hist")[0]
    assert dataclasses.replace(c, rule=dataclasses.replace(c.rule, margin=0.01)).fingerprint() != c.fingerprint()
    assert dataclasses.replace(c, why=c.why + " ").fingerprint() != c.fingerprint()


def test_nothing_says_the_thresholds_were_fixed_before_the_runs():
    files = [*ROOT.glob("fedlib/**/*.py"), *ROOT.glob("notebooks/**/*.ipynb"), *ROOT.glob("notebooks/**/*.md"),
             *ROOT.glob("notebooks/profiles/**/*.yaml"), ROOT / "README.md"]
    said = [str(p.relative_to(ROOT)) for p in files if re.search(r"fixed\s+before\s+(the\s+)?(runs|tables|regenerating)",
                                                                  p.read_text())]
    assert not said, said


def _norm(text: str) -> str:
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"').replace("-\n", "")
    return re.sub(r"\s+", " ", text).strip().lower()


def quotes(why: str) -> list[str]:
    """The single-quoted fragments of a claim's ``why`` (an apostrophe after a letter or digit is not a quote; a
    verdict word in quotes, 'holds', is ours), split at elisions (``...``, ``…``, ``[...]``)."""
    out = []
    for q in re.findall(r"(?<![A-Za-z0-9])'(.+?)'(?![A-Za-z])", why):
        if q in WORDS:
            continue
        out += [f.strip(" ,.;:") for f in re.split(r"\[\.\.\.\]|\.\.\.|…", q)]
    return [f for f in out if len(f) >= 3]


def test_quotes_are_found_word_for_word():
    assert quotes("Fig. 2's words: 'HIST achieves a higher ... N=4' and HIST's 'holds'") == [
        "HIST achieves a higher", "N=4"]


@pytest.mark.skipif(not PAPER_TEXTS.is_dir(), reason="the papers' texts are not in this checkout")
@pytest.mark.parametrize("paper", PAPERS)
def test_every_quoted_fragment_appears_in_the_paper(paper):
    (src,) = PAPER_TEXTS.glob(f"{paper}_*.txt")
    text = _norm(src.read_text())
    absent = [(c.id, q) for c in _claims(paper) for q in quotes(c.why) if _norm(q) not in text]
    assert not absent, absent
