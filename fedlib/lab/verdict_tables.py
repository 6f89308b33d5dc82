"""Verdict tables as markdown (:func:`markdown_table`) and their counts, from :func:`fedlib.lab.verdicts.judge`'s
dicts: the paper's claims in one table, the checks of the implementation in a second, the rules set after their
numbers were known marked †, and the reason of every word weaker than "holds" listed under the tables."""
from __future__ import annotations

from typing import Callable, Sequence

from fedlib.lab.verdict_rules import UNDECIDED, WORDS

AFTER_MARKS = ("†", "‡", "§", "¶", "#")
"""The marks of rules set after their numbers were known, one per registration date (oldest first)."""


def _marks(verdicts: Sequence[dict]) -> dict[str, str]:
    days = sorted({v["registered"] for v in verdicts if v.get("set_after_numbers")})
    return {d: AFTER_MARKS[min(i, len(AFTER_MARKS) - 1)] for i, d in enumerate(days)}


def columns(verdicts: Sequence[dict]) -> list[str]:
    """The variant columns of a table, in first-seen order."""
    seen: list[str] = []
    for v in verdicts:
        seen += [k for k in v["cells"] if k not in seen]
    return seen


def _cell(c: dict, most: int) -> str:
    n = c["seeds"]
    fewer = "" if n >= most else " (1 seed)" if n == 1 else f" ({n} of {most} seeds)"
    out = f"{c['number']}{fewer} **{c['word']}**"
    undecided = len(c.get("undecided", ()))
    if undecided and c["word"] != UNDECIDED:
        out += f"; {undecided} of {n} seeds undecided"
    r = c.get("reason")
    if r:
        out += f" ({r['class']})"
    return out


def _table(verdicts: Sequence[dict], link: Callable[[str], str] | None, marks: dict[str, str]) -> list[str]:
    cols = columns(verdicts)
    # a cell judged at fewer seeds than its column's others says so (another profile or machine has its own count)
    most = {col: max((v["cells"][col]["seeds"] for v in verdicts if col in v["cells"]), default=1) for col in cols}
    head = ["claim", "paper", *(("ours" if c == "ours" else c) for c in cols), "notebook"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for v in verdicts:
        cells = [_cell(c, most[col]) if (c := v["cells"].get(col)) else "–" for col in cols]
        nb = link(v["notebook"]) if link else f"`{v['notebook']}`"
        mark = marks.get(v["registered"], "") if v.get("set_after_numbers") else ""
        reading = "" if v.get("reading", "paper") == "paper" else f" [{v['reading']}]"
        own = v.get("own_variants") or []
        cells = [f"{x} [ours]" if col in own and x != "–" else x for col, x in zip(cols, cells)]
        lines.append("| " + " | ".join([f"{v['text']} ({v['figure']}){mark}{reading}", v["paper"], *cells, nb]) +
                     " |")
    return lines


_DIFFER = "the seeds' words differ ("


def _seed_words(text: str) -> tuple[str, str]:
    """A "seeds disagree" reason's text without its list of the seeds' words, and that list (`` (seed 0 holds,
    seed 1 fails)``) to show beside its cell; any other text as it is and ``""``."""
    if not text.startswith(_DIFFER) or ")" not in text:
        return text, ""
    words, _, tail = text[len(_DIFFER):].partition(")")
    return _DIFFER[:-2] + tail, f" ({words})"


def reasons_list(verdicts: Sequence[dict]) -> list[str]:
    """The reasons of the cells whose word is not "holds" (and the notes of holds that rest on a deviation), one
    line per distinct reason (its class and sentence, then each claim and column it explains, with the word; for
    seeds that disagree, each seed's word beside its cell), and one line per cell with undecided seeds (each seed
    and why)."""
    by_reason: dict[tuple, list[str]] = {}
    undecided = []
    for v in verdicts:
        for col, c in v["cells"].items():
            where = f"*{v['text']}*" + ("" if col == "ours" else f" ({col})")
            if (r := c.get("reason")) and r["class"] != "undecided":
                text, seeds = _seed_words(r["text"])   # the seeds' own words go beside the cell, not in the key
                by_reason.setdefault((r["class"], text), []).append(f"{where} **{c['word']}**{seeds}")
            if c.get("undecided"):
                seeds = "; ".join(f"{u['seed']}: {u['why']}" for u in c["undecided"])
                undecided.append(f"- undecided, {where} **{c['word']}**: {seeds}.")
    return [f"- {cls}, {text}: " + ", ".join(cells) + "." for (cls, text), cells in by_reason.items()] + undecided


def markdown_table(verdicts: Sequence[dict], link: Callable[[str], str] | None = None) -> str:
    """The verdicts as markdown: the paper's claims (claim (figure), paper, one column per variant: ``number word``
    and the reason's class, notebook); the checks of the implementation (``kind="check"``) in a table of their
    own; a † note when a rule was set after its numbers were known; the reasons, one line per cell that does not
    hold. ``link(notebook)`` makes the notebook cell a link (default: the name in code font)."""
    claims = [v for v in verdicts if v.get("kind", "paper") == "paper"]
    checks = [v for v in verdicts if v.get("kind", "paper") == "check"]
    parts: list[str] = []
    marks = _marks(verdicts)
    if claims:
        parts.append("\n".join(_table(claims, link, marks)))
    if checks:
        parts.append("**Checks of the implementation** (facts of the architecture or of our code; they cannot "
                     "contradict the paper):\n\n" + "\n".join(_table(checks, link, marks)))
    if any(v.get("reading", "paper") != "paper" or v.get("own_variants") for v in claims):
        parts.append("Rows marked [narrower] (a narrower reading of a claim), [not in the paper] (a setting or measure "
                     "the paper does not show) or [duplicate] (a baseline that computes what another row's computes), "
                     "and cells marked [ours] (a method of ours, not the paper's), are shown and counted apart from "
                     "the paper's verdicts.")
    if marks:
        when = "; ".join(f"{m} on {d}" for d, m in marks.items())
        parts.append(f"The rule was set after the numbers it judges were known (at least the first seed's): {when}. "
                     f"Seeds and profiles that ran later were judged by it as written; the run log lists every "
                     f"change of a rule and why.")
    reasons = reasons_list(verdicts)
    if reasons:
        parts.append("Why a cell does not hold, and the seeds no cell could judge (one rule, "
                     "`fedlib.lab.verdicts.reason`):\n\n" + "\n".join(reasons))
    return "\n\n".join(parts)


def is_papers(v: dict, column: str) -> bool:
    """Whether a cell counts as the paper's verdict: a claim of the paper (not a check), read as the paper words
    it (``reading`` "paper"), in a column of the paper's own method (not one of ``own_variants``)."""
    return (v.get("kind", "paper") == "paper" and v.get("reading", "paper") == "paper"
            and column not in v.get("own_variants", ()))


def counts(verdicts: Sequence[dict], apart: bool = False) -> dict[str, int]:
    """How many cells of the paper's claims carry each word: the paper's rows on its own method
    (:func:`is_papers`), or, with ``apart``, the other rows of the paper's claims (narrower readings, settings the
    paper does not show, duplicates, our own methods). Checks of the implementation count in neither."""
    out = {w: 0 for w in WORDS}
    for v in verdicts:
        if v.get("kind", "paper") != "paper":
            continue
        for col, c in v["cells"].items():
            if is_papers(v, col) != apart:
                out[c["word"]] += 1
    return {w: n for w, n in out.items() if n}


def counts_text(verdicts: Sequence[dict], apart: bool = False) -> str:
    """``"3 holds, 1 partly, 2 not robust across seeds"`` (:func:`counts`)."""
    return ", ".join(f"{n} {w}" for w, n in counts(verdicts, apart).items())
