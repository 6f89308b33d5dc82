"""Verdicts by one written rule: what "holds", "partly", "fails" and "not robust across seeds" mean.

Every paper states its claims in :mod:`fedlib.<paper>.claims` as :class:`Claim` objects: the paper's words and
number, the notebook whose metrics decide it, a :class:`Rule` and an ``extract`` function that reads the measured
values out of that notebook's metrics. :func:`judge` applies the rule mechanically; nothing here knows today's
numbers. The thresholds were fixed before the tables were regenerated and come from the papers' own wording:

- :class:`AtLeast` ("≥ 4× faster", "reduces by 80 %"): the measured value ``v`` against the paper's number
  ``target`` and a floor ``partly``: **holds** at ``v ≥ target``, **partly** at ``partly < v < target`` (the
  direction the paper claims, by less), **fails** at ``v ≤ partly``. For a speed-up the floor is 1 (not faster at
  all fails); for "faster" without a number the target itself is 1 and there is no partly band.
- :class:`AtMost`: the mirror image, for claims that a quantity is small ("costs at most 5 % accuracy").
- :class:`Better` ("higher accuracy", "less communication"): the sign of a difference ``v`` (ours minus the
  compared method's, oriented so positive is what the paper claims) against a ``margin`` that is the resolution
  of the measurement (e.g. one test sample in 2,000 accuracy, 0.0005): **holds** at ``v > margin``, **partly**
  at ``|v| ≤ margin`` (a tie within the resolution), **fails** at ``v < -margin``.
- :class:`Trend` ("improves as N grows", "degrades"): a sequence ordered by the swept parameter; **holds** when
  every step moves the claimed way by more than ``margin``, **partly** when the end is beyond the start by more
  than ``margin`` but some step is not, **fails** otherwise.
- Several seeds: each seed is judged alone. The cell's word is the common word when all seeds agree, else **not
  robust across seeds**; its number is the range over seeds.
- Censored values (:class:`Censored`): a run that never reached its target gives a bound, not a value
  ("time > 504 rounds", so a speed-up measured against it is a lower bound ``≥ v``). A bound decides only when
  every value it admits gets the same word; otherwise the word is **not reached** (no verdict either way).
- Columns that differ by how a quantity is estimated (pilot vs calibrated constants, in vs out of sample) are
  separate *variants* of one claim: each gets its own cell, judged alone; nothing averages them.

:func:`judge` raises :class:`UnknownClaim` for a rule or claim it does not know and :class:`MissingMetrics`
(naming the claim and the missing keys) when the metrics lack what the rule needs: no verdict is ever printed from
partial data.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

WORDS = ("holds", "partly", "fails", "not robust across seeds", "not reached")
"""Every word a verdict cell can carry (in this order of strength)."""


class UnknownClaim(ValueError):
    """A claim id, rule kind or variant that the paper's claims module does not define."""


class MissingMetrics(KeyError):
    """The metrics lack a value a claim's rule needs; ``.claim`` names the claim and ``.missing`` the keys."""

    def __init__(self, claim: str, missing: str):
        super().__init__(f"claim {claim!r}: the metrics lack {missing}; no verdict from partial data")
        self.claim, self.missing = claim, missing

    def __str__(self):
        return self.args[0]


@dataclass(frozen=True)
class Censored:
    """A measurement that is only a bound: the true value is ``>= value`` (``side="lower"``) or ``<= value``
    (``side="upper"``). Example: a speed-up against a benchmark that never reached the target within its
    ``R`` rounds is at least (time of the benchmark's ``R`` rounds) / (ours): ``Censored(v, "lower")``."""
    value: float
    side: str = "lower"

    def __post_init__(self):
        if self.side not in ("lower", "upper"):
            raise ValueError(f"Censored.side must be 'lower' or 'upper', got {self.side!r}")
        if not isinstance(self.value, (int, float)) or not math.isfinite(self.value):
            raise ValueError(f"Censored.value must be a finite number, got {self.value!r}")


RESOLUTION_DIGITS = 9
"""Differences are rounded to this many decimals before they meet a margin, so a step of exactly one test image
(``0.7691 - 0.7690`` = ``0.00010000000000005``) counts as equal to a margin of one image, not above it."""


def _finite(claim: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise MissingMetrics(claim, f"a finite number (got {v!r})")
    return float(v)


@dataclass(frozen=True)
class Rule:
    """Base of the rules; ``unit`` is how the cell prints a number ("×", "%", " points", "")."""
    unit: str = ""
    digits: int = 2

    kind = "rule"

    def word(self, value: float) -> str:  # pragma: no cover - every rule overrides it
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover
        raise NotImplementedError

    def word_of(self, claim: str, value) -> str:
        """The word for one seed's value (a number, a :class:`Censored` bound, or a sequence for :class:`Trend`)."""
        if isinstance(value, Censored):
            v = _finite(claim, value.value)
            # the values a bound admits: [v, inf) or (-inf, v]; decide only when both ends agree
            ends = (v, math.inf) if value.side == "lower" else (-math.inf, v)
            words = {self.word(e) for e in ends}
            return words.pop() if len(words) == 1 else "not reached"
        return self.word(_finite(claim, value))

    def fmt(self, value) -> str:
        if isinstance(value, Censored):
            return ("≥ " if value.side == "lower" else "≤ ") + self.fmt(value.value)
        if self.unit == "%":
            return f"{100 * value:.{max(self.digits - 2, 0)}f} %"
        return f"{value:.{self.digits}f}{self.unit}"


@dataclass(frozen=True)
class AtLeast(Rule):
    """Holds at ``v >= target``, partly at ``partly < v < target``, fails at ``v <= partly``
    (``partly=None``: no partly band, fails below ``target``)."""
    target: float = 1.0
    partly: float | None = None

    kind = "at_least"

    def word(self, v: float) -> str:
        if v >= self.target:
            return "holds"
        return "partly" if self.partly is not None and v > self.partly else "fails"

    def describe(self) -> str:
        t = self.fmt(self.target)
        return f"holds at ≥ {t}" + (f", partly above {self.fmt(self.partly)}" if self.partly is not None else "") + \
            ", else fails"


@dataclass(frozen=True)
class AtMost(Rule):
    """Holds at ``v <= target``, partly at ``target < v < partly``, fails at ``v >= partly``."""
    target: float = 1.0
    partly: float | None = None

    kind = "at_most"

    def word(self, v: float) -> str:
        if v <= self.target:
            return "holds"
        return "partly" if self.partly is not None and v < self.partly else "fails"

    def describe(self) -> str:
        t = self.fmt(self.target)
        return f"holds at ≤ {t}" + (f", partly below {self.fmt(self.partly)}" if self.partly is not None else "") + \
            ", else fails"


@dataclass(frozen=True)
class Better(Rule):
    """The sign of a difference oriented so that positive is the paper's claim: holds above ``margin``, partly
    within ``±margin`` (a tie at the measurement's resolution), fails below ``-margin``."""
    margin: float = 0.0

    kind = "better"

    def word(self, v: float) -> str:
        v = round(v, RESOLUTION_DIGITS)
        if v > self.margin:
            return "holds"
        return "partly" if v >= -self.margin else "fails"

    def describe(self) -> str:
        return f"holds above +{self.fmt(self.margin)}, partly within ±{self.fmt(self.margin)}, else fails"


@dataclass(frozen=True)
class Trend(Rule):
    """A sequence ordered by the swept parameter moves the claimed way (``direction`` "up" or "down"): holds when
    every step does so by more than ``margin``, partly when only the last value is beyond the first by more than
    ``margin``, else fails; a sequence holding a :class:`Censored` point is **not reached**."""
    direction: str = "up"
    margin: float = 0.0

    kind = "trend"

    def word_of(self, claim: str, value) -> str:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) < 2:
            raise MissingMetrics(claim, f"a sequence of at least 2 values for a trend (got {value!r})")
        if any(isinstance(x, Censored) for x in value):   # a point that is only a bound: no word either way
            return "not reached"
        xs = [_finite(claim, x) for x in value]
        sign = 1.0 if self.direction == "up" else -1.0
        steps = [round(sign * (b - a), RESOLUTION_DIGITS) for a, b in zip(xs, xs[1:])]
        if all(s > self.margin for s in steps):
            return "holds"
        return "partly" if round(sign * (xs[-1] - xs[0]), RESOLUTION_DIGITS) > self.margin else "fails"

    def fmt(self, value) -> str:
        """A sequence as ``a → b → c``; one of more than 4 values as ``a → b → … → z`` (the whole sequence is in the
        verdict file and the notebook)."""
        if isinstance(value, (list, tuple)):
            shown = [Rule.fmt(self, x) for x in value]
            if len(shown) > 4:
                shown = shown[:2] + ["…"] + shown[-1:]
            return " → ".join(shown)
        return Rule.fmt(self, value)

    def describe(self) -> str:
        way = "rises" if self.direction == "up" else "falls"
        return f"holds when every step {way} by more than {self.fmt(self.margin)}, partly when only the ends do"


RULES = {cls.kind: cls for cls in (AtLeast, AtMost, Better, Trend)}


@dataclass(frozen=True)
class Claim:
    """One claim of a paper.

    Attributes:
        id: short stable name (``"fig3_comm_to_target"``), unique within the paper.
        text: the claim in a few words ("HIST needs less communication to 75 %").
        figure: the paper's figure or table ("Fig. 3").
        paper: the paper's words and number ("≥ 2× less", "higher accuracy").
        notebook: the notebook whose metrics decide it (``"hist_1_experiments"``).
        rule: the :class:`Rule`.
        extract: ``metrics -> {variant: [value per seed]}`` (a value: a number, :class:`Censored` or, for
            :class:`Trend`, a list); raises ``KeyError`` / ``IndexError`` / ``TypeError`` when the metrics lack
            something (turned into :class:`MissingMetrics`).
        why: how the threshold follows from the paper's wording (written before the runs).
    """
    id: str
    text: str
    figure: str
    paper: str
    notebook: str
    rule: Rule
    extract: Callable[[Mapping[str, Any]], Mapping[str, Sequence[Any]]]
    why: str = ""
    variants: tuple[str, ...] = field(default=("ours",))


def _range(rule: Rule, values: list) -> str:
    if isinstance(rule, Trend) and len(values) > 1:
        # several seeds: each seed's ends (``a → … → z``); every step is in the verdict file and the notebook
        return " / ".join(rule.fmt(v) if len(v) <= 2 else
                          f"{Rule.fmt(rule, v[0])} → … → {Rule.fmt(rule, v[-1])}" for v in values)
    if isinstance(rule, Trend) or len(values) == 1:
        return rule.fmt(values[0])
    key = lambda v: v.value if isinstance(v, Censored) else v  # noqa: E731
    lo, hi = min(values, key=key), max(values, key=key)
    return rule.fmt(lo) if rule.fmt(lo) == rule.fmt(hi) else f"{rule.fmt(lo)} – {rule.fmt(hi)}"


def _extract(claim: Claim, metrics: Mapping[str, Any]) -> Mapping[str, Sequence[Any]]:
    try:
        found = claim.extract(metrics)
    except (KeyError, IndexError, TypeError, StopIteration) as e:
        raise MissingMetrics(claim.id, f"{type(e).__name__}: {e}") from None
    if not found:
        raise MissingMetrics(claim.id, "every variant")
    return found


def judge(claim: Claim, metrics: Mapping[str, Any], extra: Sequence[Mapping[str, Any]] = ()) -> dict:
    """Apply ``claim.rule`` to ``claim.extract(metrics)``.

    ``extra``: the same notebook's metrics of further seeds, each run alone at one seed (e.g.
    ``figures/converged/seed1/metrics/``). Their values join the seeds of each variant; an extra source that
    lacks what the claim needs (a run of another scope) adds nothing, while ``metrics`` itself must hold it.

    Returns:
        ``{"id", "text", "figure", "paper", "notebook", "rule", "cells": {variant: {"values", "seeds", "number",
        "word"}}}``; ``number`` is the formatted value or range over seeds, ``word`` one of :data:`WORDS`.

    Raises:
        UnknownClaim: ``claim.rule`` is not one of :data:`RULES`' kinds, or a variant not in ``claim.variants``.
        MissingMetrics: the metrics lack what the rule needs (a missing key, an empty seed list, a non-number).
    """
    if not isinstance(claim.rule, Rule) or RULES.get(claim.rule.kind) is not type(claim.rule):
        raise UnknownClaim(f"claim {claim.id!r}: unknown rule {claim.rule!r}; rules: {', '.join(RULES)}")
    found = {k: list(vs) for k, vs in _extract(claim, metrics).items()}
    for more in extra:
        try:
            got = _extract(claim, more)
        except MissingMetrics:
            continue
        for k, vs in got.items():
            found.setdefault(k, []).extend(vs)
    cells = {}
    for variant, values in found.items():
        if variant not in claim.variants:
            raise UnknownClaim(f"claim {claim.id!r}: unknown variant {variant!r}; variants: {', '.join(claim.variants)}")
        values = list(values)
        if not values:
            raise MissingMetrics(claim.id, f"a value of variant {variant!r} (no seed)")
        words = [claim.rule.word_of(claim.id, v) for v in values]
        word = words[0] if len(set(words)) == 1 else "not robust across seeds"
        cells[variant] = {"values": [_plain(v) for v in values], "seeds": len(values),
                          "number": _range(claim.rule, values), "word": word}
    return {"id": claim.id, "text": claim.text, "figure": claim.figure, "paper": claim.paper,
            "notebook": claim.notebook, "rule": claim.rule.describe(), "cells": cells}


def _plain(v):
    if isinstance(v, Censored):
        return {"censored": v.side, "value": v.value}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def find(claims: Sequence[Claim], claim_id: str) -> Claim:
    """The claim named ``claim_id``. Raises :class:`UnknownClaim` naming the known ids."""
    for c in claims:
        if c.id == claim_id:
            return c
    raise UnknownClaim(f"unknown claim {claim_id!r}; claims: {', '.join(c.id for c in claims)}")


def judge_all(claims: Sequence[Claim], metrics_by_notebook: Mapping[str, Mapping[str, Any]],
              notebook: str | None = None,
              extra_by_notebook: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> list[dict]:
    """:func:`judge` every claim (of ``notebook`` only, when given) on its notebook's metrics, with
    ``extra_by_notebook[notebook]`` as its further seeds.

    Raises:
        UnknownClaim: ``notebook`` decides no claim.
        MissingMetrics: a claim's notebook has no metrics, or they lack what the rule needs.
    """
    chosen = [c for c in claims if notebook is None or c.notebook == notebook]
    if notebook is not None and not chosen:
        raise UnknownClaim(f"notebook {notebook!r} decides no claim; notebooks: "
                           f"{', '.join(sorted({c.notebook for c in claims}))}")
    out = []
    for c in chosen:
        if c.notebook not in metrics_by_notebook:
            raise MissingMetrics(c.id, f"the metrics of notebook {c.notebook}")
        out.append(judge(c, metrics_by_notebook[c.notebook], (extra_by_notebook or {}).get(c.notebook, ())))
    return out


def columns(verdicts: Sequence[dict]) -> list[str]:
    """The variant columns of a table, in first-seen order."""
    seen: list[str] = []
    for v in verdicts:
        seen += [k for k in v["cells"] if k not in seen]
    return seen


def markdown_table(verdicts: Sequence[dict], link: Callable[[str], str] | None = None) -> str:
    """The verdict table as markdown: claim (figure), paper, one column per variant (``number word``), notebook.
    ``link(notebook)`` makes the notebook cell a link (default: the name in code font)."""
    cols = columns(verdicts)
    most = max((c["seeds"] for v in verdicts for c in v["cells"].values()), default=1)
    head = ["claim", "paper", *(("ours" if c == "ours" else c) for c in cols), "notebook"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def cell(c):   # a cell judged at fewer seeds than the table's others says so
        fewer = "" if c["seeds"] >= most else " (1 seed)" if c["seeds"] == 1 else f" ({c['seeds']} of {most} seeds)"
        return f"{c['number']}{fewer} **{c['word']}**"

    for v in verdicts:
        cells = [cell(c) if (c := v["cells"].get(col)) else "–" for col in cols]
        nb = link(v["notebook"]) if link else f"`{v['notebook']}`"
        lines.append("| " + " | ".join([f"{v['text']} ({v['figure']})", v["paper"], *cells, nb]) + " |")
    return "\n".join(lines)


def counts(verdicts: Sequence[dict]) -> dict[str, int]:
    """How many cells carry each word (every variant counts)."""
    out = {w: 0 for w in WORDS}
    for v in verdicts:
        for c in v["cells"].values():
            out[c["word"]] += 1
    return {w: n for w, n in out.items() if n}


def counts_text(verdicts: Sequence[dict]) -> str:
    """``"3 holds, 1 partly, 2 not robust across seeds"``."""
    return ", ".join(f"{n} {w}" for w, n in counts(verdicts).items())
