"""The user docs hold together: every relative link in the READMEs (and the run logs) points at a file of the
repository, every ``#anchor`` at a heading of its file (GitHub's slugs, which the site's heading anchors follow),
and each paper README is a card of at most 250 lines."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", *ROOT.glob("notebooks/*/README.md"), *ROOT.glob("notebooks/**/RUN_LOG.md"),
               ROOT / "data" / "README.md"])
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor of a markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set:
    heads = re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", path.read_text(), flags=re.S), re.M)
    return {slug(h) for h in heads}


def test_slug_follows_github():
    assert slug("Use it in your own code") == "use-it-in-your-own-code"
    assert slug("Results at a glance") == "results-at-a-glance"
    assert slug("Setup and deviations (`converged`)") == "setup-and-deviations-converged"


@pytest.mark.parametrize("doc", DOCS, ids=[str(p.relative_to(ROOT)) for p in DOCS])
def test_relative_links_resolve(doc):
    bad = []
    for m in LINK.finditer(doc.read_text()):
        target = m.group(1) or m.group(2)
        if re.match(r"^[a-z]+:", target):          # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists():
            bad.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            bad.append(f"{target}: no heading #{anchor} in {path.relative_to(ROOT)}")
    assert not bad, bad


@pytest.mark.parametrize("paper", ["hist", "dtfl", "hasfl"])
def test_paper_readme_is_a_card(paper):
    text = (ROOT / "notebooks" / paper / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert "<!-- verdicts:begin -->" in text and "## Results at a glance" in text
    assert re.search(r"https://arxiv\.org/abs/\d{4}\.\d{4,5}", text), "the paper's public page"
    assert re.search(r"!\[[^\]]+\]\([^)]+\.png\)", text), "a headline figure"
