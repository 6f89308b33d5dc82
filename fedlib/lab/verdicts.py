"""Verdicts by one written rule: what "holds", "partly", "fails", "not robust across seeds" and "not reached" mean,
and the reason printed beside every word weaker than "holds".

Every paper states its claims in :mod:`fedlib.<paper>.claims` as :class:`Claim` objects: the paper's words and
number, the notebook whose metrics decide it, a :class:`Rule` and an ``extract`` function that reads the measured
values out of that notebook's metrics. :func:`judge` applies the rule mechanically; nothing here knows today's
numbers. Each claim records when its rule was set (``registered``) and whether the numbers it judges were already
known then (``set_after_numbers``): most rules were written after the first seed's metrics existed, and the tables
mark them so (†). A later change of a rule or its wording is listed with its reason in the paper's run log
(``tests/test_claims_provenance.py`` fails when a rule changes and no entry says why).

- :class:`AtLeast` ("≥ 4× faster", "reduces by 80 %"): the measured value ``v`` against the paper's number
  ``target`` and a floor ``partly``: **holds** at ``v ≥ target``, **partly** at ``partly < v < target`` (the
  direction the paper claims, by less), **fails** at ``v ≤ partly``. For a speed-up the floor is 1 (not faster at
  all fails); for "faster" without a number the target itself is 1 and there is no partly band.
- :class:`AtMost`: the mirror image, for claims that a quantity is small ("costs at most 5 % accuracy").
- :class:`Better` ("higher accuracy", "less communication"): the sign of a difference ``v`` (ours minus the
  compared method's, oriented so positive is what the paper claims) against a ``margin`` that is the resolution
  of the measurement: **holds** at ``v > margin``, **partly** at ``|v| ≤ margin`` (a tie within the resolution),
  **fails** at ``v < -margin``. For an accuracy the resolution is the standard error of an accuracy on the test set
  (:func:`accuracy_se`), never less: one test image is the granularity of the number, not what it can tell apart.
- :class:`Trend` ("improves as N grows", "degrades"): a sequence ordered by the swept parameter; **holds** when
  every step moves the claimed way by more than ``margin``, **partly** when the end is beyond the start by more
  than ``margin`` but some step is not, **fails** otherwise.
- Censored values (:class:`Censored`): a run that never reached its target gives a bound, not a value
  ("time > 504 rounds", so a speed-up measured against it is a lower bound ``≥ v``). A bound decides only when
  every value it admits gets the same word; otherwise the word is **not reached** (no verdict either way). In a
  :class:`Trend` this holds point by point: a sequence with bounded points decides when every sequence it admits
  gets one word.
- A seed that cannot be judged at all (:class:`Unjudged`: its metrics lack a value the claim needs) is undecided
  with a reason, like a bound that admits two words. It is named in the cell, never dropped.
- Several seeds: each seed is judged alone. The cell's word is the common word of the *decided* seeds; **not
  robust across seeds** only when decided seeds disagree and one of them supports the claim: seeds that tie
  (a :class:`Better` value within its margin) or fail, none holding, read **fails**, the ties named in the reason.
  Undecided seeds are shown beside the word ("fails; 1 of 3 seeds undecided") with their reasons; no decided seed
  at all is **not reached**. The word never depends on the order of the seeds.
- Every rule rounds its value to :data:`RESOLUTION_DIGITS` decimals before it meets a threshold.
- Columns that differ by how a quantity is estimated (pilot vs calibrated constants, in vs out of sample) are
  separate *variants* of one claim: each gets its own cell, judged alone; nothing averages them.
- Claims of ``kind="check"`` are facts of the architecture or of our own code that cannot contradict the paper
  (the smashed data shrinks with depth): they are checks of the implementation, listed apart from the paper's
  claims.

Reasons (:func:`reason`), one rule for every cell whose word is not "holds", from evidence, first match wins: a
reason names a cause only where a run shows it, and says "untested" where no run can.

1. *horizon*: a run at the paper's horizon (the paper-horizon column) gives another word. Where it gives the same
   word, the reason is that column's reason, at the paper's horizon.
2. *within resolution*: every seed that misses lies within the resolution of the threshold that separates its
   word from "holds": the standard error of the difference compared (``Claim.resolution``,
   :func:`difference_se`), times :func:`extreme_factor` when the value is the smallest or largest of many noisy
   differences (``Claim.extreme_of``). A :class:`Better` tie within its margin is this class by definition.
3. *stated deviation*: a run without the deviation (``Claim.deviation``) gives another word; *deviation, untested*
   where no such run exists, unless the same runs without the deviating part (``Claim.without_deviation``) give
   the same word: then the deviation is not the reason.
4. *horizon, untested*: the profile stops before the paper's horizon (``Claim.horizon``) and no longer run exists.
5. *scale*: the paper-scale column gives another word; where it gives the same, the reason says "not the scale";
   where none exists and ``Claim.scale`` says ours differs, the reason says the scale is untested.
6. *seeds disagree* (not robust) or *measured disagreement* (anything else): our numbers contradict the claim.

A "holds" on a claim that names a deviation carries the note *rests on a deviation*. "not reached" always carries
the undecided seeds' reasons.

:func:`judge` raises :class:`UnknownClaim` for a rule or claim it does not know and :class:`MissingMetrics`
(naming the claim and the missing keys) when the metrics lack what the rule needs: no verdict is ever printed from
partial data.
"""
from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from fedlib.lab.verdict_rules import (RESOLUTION_DIGITS, RULES, UNDECIDED, WORDS, AtLeast, AtMost,  # noqa: F401  (re-exported)
                                      Better, Censored, MissingMetrics, Rule, Trend, Unjudged,  # noqa: F401  (re-exported)
                                      UnknownClaim, accuracy_se, difference_se, extreme_factor)  # noqa: F401  (re-exported)
from fedlib.lab.verdict_tables import columns, counts, counts_text, markdown_table  # noqa: F401  (re-exported)

REASONS = ("undecided", "horizon", "within resolution", "stated deviation", "deviation, untested",
           "horizon, untested", "scale", "seeds disagree", "measured disagreement")
"""The reason classes of a word weaker than "holds" (module docstring), in the order :func:`reason` tries them (a
cell whose paper-horizon column gives the same word takes that column's class)."""
HOLDS_NOTE = "rests on a deviation"
"""The class of the note a "holds" carries when the claim names a stated deviation (:func:`reason`)."""
EVIDENCE = ("horizon", "scale", "no deviation", "without")
"""The keys of :func:`reason`'s ``evidence``: the same claim and variant judged at the paper's horizon (a longer
run), at the paper's scale, on a run without the stated deviation, and on the same runs without the part that
deviates (``Claim.without_deviation``)."""

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
READINGS = ("paper", "narrower", "not in the paper", "duplicate")
"""``Claim.reading``: a row worded as the paper words it, on its method and settings ("paper"); a narrower reading
of a paper's claim; a setting or measure the paper does not show; a duplicate of another row (a baseline that
computes what another computes). Only "paper" rows, on the paper's own method (not ``Claim.own_variants``), are
counted as the paper's verdicts; the others are shown and counted apart (:func:`counts`)."""
KINDS = ("paper", "check")
"""``Claim.kind``: a claim of the paper, or a check of the implementation (cannot contradict the paper)."""


class Seeded(list):
    """The values of one variant with the seed each was read at: what an ``extract`` returns where the metrics'
    own ``seeds`` do not say which run a value comes from (a first seed read beside out-of-sample seeds). A list
    (it compares equal to the plain values); ``labels`` holds one label per value ("seed 1")."""

    def __init__(self, values, seeds):
        super().__init__(values)
        self.labels = [f"seed {s}" for s in seeds]
        if len(self.labels) != len(self):
            raise ValueError(f"Seeded: {len(self)} values but {len(self.labels)} seeds")


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
        extract: ``metrics -> {variant: [value per seed]}`` (a :class:`Seeded` list where the metrics' ``seeds``
            do not label the values; a value: a number, :class:`Censored`,
            :class:`Unjudged` or, for :class:`Trend`, a list); raises ``KeyError`` / ``IndexError`` /
            ``TypeError`` when the metrics lack something (turned into :class:`MissingMetrics`).
        why: how the threshold follows from the paper's wording; every text in single quotes is the paper's own
            words (``tests/test_claims_provenance.py`` finds each in the paper's text).
        variants: the columns it may fill.
        kind: ``"paper"`` (a claim of the paper) or ``"check"`` (a check of the implementation).
        registered: the date (ISO, ``YYYY-MM-DD``) its rule took its present form.
        set_after_numbers: True when the numbers it judges (some of its seeds) were known when the rule was set.
        resolution: the smallest difference from the rule's threshold that the measurement can tell (same unit as
            the value; e.g. :func:`accuracy_se`); ``None``: exact (a count, a model's prediction).
        horizon: where the profile stops before the paper's horizon, when it does (a sentence; empty: it does not).
        deviation: a stated deviation of our setup that bears on this claim (a sentence; empty: none). Never a
            behaviour the project has shown to be the authors' own.
        extreme_of: how many noisy differences the value is the smallest (or largest) of (1: one difference); the
            resolution is ``resolution`` × :func:`extreme_factor` of it.
        scale: how our scale differs from the paper's (a sentence; empty: the paper's own scale).
        without_deviation: an ``extract`` of the same quantity from the same runs without the part that deviates
            (e.g. every baseline but FedGKT); ``None``: none can be read.
        deviating: the part that deviates, as the reason names it ("FedGKT"); needed with ``without_deviation``.
        reading: one of :data:`READINGS`.
        own_variants: the variants that are a method of ours, not the paper's (HASFL-calibrated): shown, counted
            apart.
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
    kind: str = "paper"
    registered: str = ""
    set_after_numbers: bool = False
    resolution: float | None = None
    horizon: str = ""
    deviation: str = ""
    extreme_of: int = 1
    scale: str = ""
    without_deviation: Callable[[Mapping[str, Any]], Mapping[str, Sequence[Any]]] | None = None
    deviating: str = ""
    reading: str = "paper"
    own_variants: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.id, str) or not self.id.strip():
            raise ValueError(f"Claim.id must be a non-empty name, got {self.id!r}")
        for name in ("text", "figure", "paper", "notebook"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"Claim {self.id!r}: {name} must be a non-empty text, got {getattr(self, name)!r}")
        for name in ("why", "horizon", "deviation", "registered", "scale", "deviating"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"Claim {self.id!r}: {name} must be a text ('' for none), got {getattr(self, name)!r}")
        if not isinstance(self.rule, Rule):
            raise UnknownClaim(f"Claim {self.id!r}: unknown rule {type(self.rule).__name__}; a rule is one of "
                               f"{', '.join(c.__name__ for c in RULES.values())}")
        if not callable(self.extract):
            raise ValueError(f"Claim {self.id!r}: extract must be a function metrics -> {{variant: values}}, got "
                             f"{self.extract!r}")
        v = self.variants
        if (isinstance(v, str) or not isinstance(v, (tuple, list)) or not v
                or not all(isinstance(x, str) and x.strip() for x in v) or len(set(v)) != len(v)):
            raise ValueError(f"Claim {self.id!r}: variants must be a non-empty tuple of distinct names, got {v!r}")
        if self.registered and not _ISO_DATE.fullmatch(self.registered):
            raise ValueError(f"Claim {self.id!r}: registered must be '' or a date YYYY-MM-DD, got {self.registered!r}")
        if not isinstance(self.set_after_numbers, bool):
            raise ValueError(f"Claim {self.id!r}: set_after_numbers must be True or False, got {self.set_after_numbers!r}")
        if self.reading not in READINGS:
            raise ValueError(f"Claim {self.id!r}: reading must be one of {', '.join(READINGS)}, got {self.reading!r}")
        if not isinstance(self.own_variants, tuple) or not set(self.own_variants) <= set(self.variants):
            raise ValueError(f"Claim {self.id!r}: own_variants must be a tuple of its variants "
                             f"({', '.join(self.variants)}), got {self.own_variants!r}")
        if self.kind not in KINDS:
            raise ValueError(f"Claim {self.id!r}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if isinstance(self.extreme_of, bool) or not isinstance(self.extreme_of, int) or self.extreme_of < 1:
            raise ValueError(f"Claim {self.id!r}: extreme_of must be a positive integer (how many differences the "
                             f"value is the extreme of), got {self.extreme_of!r}")
        if self.without_deviation is not None and (not callable(self.without_deviation) or not self.deviation
                                                   or not self.deviating.strip()):
            raise ValueError(f"Claim {self.id!r}: without_deviation must be an extract function, given with the "
                             f"deviation it removes and the part that deviates (deviating), got "
                             f"{self.without_deviation!r}, deviating={self.deviating!r}")
        if self.resolution is not None and (isinstance(self.resolution, bool) or
                                            not isinstance(self.resolution, (int, float)) or
                                            not math.isfinite(self.resolution) or self.resolution < 0):
            raise ValueError(f"Claim {self.id!r}: resolution must be a finite number >= 0 or None, "
                             f"got {self.resolution!r}")

    def fingerprint(self) -> str:
        """Ten hex digits of what the rule says and measures (words, rule, variants, kind, extract's name, and what
        its reasons read: resolution, horizon, deviation, extreme_of, without_deviation): a change of any of them
        needs an entry in the paper's run log (``tests/test_claims_provenance.py``)."""
        parts = (self.id, self.text, self.figure, self.paper, self.notebook, repr(self.rule), self.why,
                 repr(self.variants), self.kind, repr(self.resolution), self.horizon, self.deviation,
                 getattr(self.extract, "__qualname__", repr(self.extract)))
        if self.extreme_of != 1 or self.without_deviation is not None:   # later fields, when set (``scale`` is the
            parts += (repr(self.extreme_of), self.deviating,        # paper's, not the claim's: not in it)
                      getattr(self.without_deviation, "__qualname__", repr(self.without_deviation)))
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:10]


def registered(claims: Sequence[Claim], dates: Mapping[str, tuple[str, bool]]) -> tuple[Claim, ...]:
    """``claims`` with ``registered`` and ``set_after_numbers`` from ``dates`` (``{id: (YYYY-MM-DD, after)}``).

    Raises:
        ValueError: a claim without an entry, an entry for no claim, a duplicate id, or a date not YYYY-MM-DD."""
    import datetime
    import dataclasses
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate claim ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    if set(ids) != set(dates):
        raise ValueError(f"every claim needs a registration date: missing {sorted(set(ids) - set(dates))}, "
                         f"unknown {sorted(set(dates) - set(ids))}")
    out = []
    for c in claims:
        day, after = dates[c.id]
        datetime.date.fromisoformat(day)
        out.append(dataclasses.replace(c, registered=day, set_after_numbers=bool(after)))
    return tuple(out)


def at_scale(claims: Sequence[Claim], scale: str) -> tuple[Claim, ...]:
    """``claims`` with ``scale`` (how our scale differs from the paper's, a sentence) set on each: the reasons say
    the paper's scale is untested where no column at that scale exists.

    Raises:
        ValueError: an empty ``scale`` (a paper judged at its own scale sets none)."""
    import dataclasses
    if not isinstance(scale, str) or not scale.strip():
        raise ValueError(f"scale must be a sentence saying how ours differs from the paper's, got {scale!r}")
    return tuple(dataclasses.replace(c, scale=scale) for c in claims)


# --- judging ----------------------------------------------------------------------------------------------------

def _range(rule: Rule, values: list) -> str:
    values = [v for v in values if not isinstance(v, Unjudged)]
    if not values:
        return "–"
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


def _labels(metrics: Mapping[str, Any], values: Sequence[Any], fallback: str) -> list[str]:
    """A label per value of one metrics source: the seeds a :class:`Seeded` list names, else the metrics' seeds
    when they name as many, else ``fallback``."""
    if isinstance(values, Seeded):
        return list(values.labels)
    n = len(values)
    seeds = metrics.get("seeds") if isinstance(metrics, Mapping) else None
    if isinstance(seeds, list) and len(seeds) == n:
        return [f"seed {s}" for s in seeds]
    if isinstance(metrics, Mapping) and isinstance(metrics.get("seed"), int) and n == 1:
        return [f"seed {metrics['seed']}"]
    return [fallback] * n if n == 1 else [f"{fallback} #{i + 1}" for i in range(n)]


def _undecided_why(rule: Rule, value) -> str:
    if isinstance(value, Unjudged):
        return value.reason
    if isinstance(value, Censored):
        return f"{rule.fmt(value)} admits more than one word"
    return "a sequence with bounded points admits more than one word"


def aggregate(words: Sequence[str], tie: str | None = None) -> str:
    """The cell's word from the seeds' words: the decided seeds' common word, **not robust across seeds** when
    decided seeds disagree, **not reached** when no seed is decided. ``tie``: the word that means a tie under the
    rule (:class:`Better`'s "partly"): seeds that tie or fail, none holding, read **fails** (no seed supports the
    claim; :func:`reason` names the ties). Independent of the order of ``words``."""
    decided = {w for w in words if w != UNDECIDED}
    if not decided:
        return UNDECIDED
    if tie is not None and decided == {tie, "fails"}:
        return "fails"
    return decided.pop() if len(decided) == 1 else "not robust across seeds"


def tie_word(rule: Rule) -> str | None:
    """The word that means a tie within the measurement's resolution under ``rule``: :class:`Better`'s "partly"
    (``|v| <= margin``); ``None`` for the other rules, whose "partly" is the claimed direction by less."""
    return "partly" if isinstance(rule, Better) else None


def judge(claim: Claim, metrics: Mapping[str, Any], extra: Sequence[Mapping[str, Any]] = (),
          evidence: Mapping[str, Mapping[str, tuple[str, dict]]] | None = None) -> dict:
    """Apply ``claim.rule`` to ``claim.extract(metrics)``.

    ``extra``: the same notebook's metrics of further seeds, each run alone at one seed (e.g.
    ``figures/converged/seed1/metrics/``). Their values join the seeds of each variant. An extra source that lacks
    what the claim needs is an undecided seed of every variant, named with the reason (never dropped), while
    ``metrics`` itself must hold the claim. ``evidence``: ``{variant: {key: (label, cell)}}``, the cells of other
    columns that bear on each cell's reason (keys in :data:`EVIDENCE`; :func:`fedlib.lab.tables.paper_verdicts`
    passes the paper-horizon and paper-scale columns); ``claim.without_deviation`` adds its own.

    Returns:
        ``{"id", "text", "figure", "paper", "notebook", "rule", "kind", "registered", "set_after_numbers",
        "cells": {variant: {"values", "seeds", "labels", "words", "undecided", "number", "word", "reason"}}}``;
        ``number`` is the formatted value or range over seeds, ``word`` one of :data:`WORDS`, ``undecided`` a
        list of ``{"seed", "why"}``, ``reason`` :func:`reason`'s ``{"class", "text"}`` or ``None`` for holds.

    Raises:
        UnknownClaim: ``claim.rule`` is not one of :data:`RULES`' kinds, or a variant not in ``claim.variants``.
        MissingMetrics: the metrics lack what the rule needs (a missing key, an empty seed list, a non-number).
    """
    if not isinstance(claim.rule, Rule) or RULES.get(claim.rule.kind) is not type(claim.rule):
        raise UnknownClaim(f"claim {claim.id!r}: unknown rule {claim.rule!r}; rules: {', '.join(RULES)}")
    found = {k: (list(vs), _labels(metrics, vs, "the run" if len(vs) == 1 else "seed"))
             for k, vs in _extract(claim, metrics).items()}
    without = _without(claim, metrics, extra)
    for j, more in enumerate(extra):
        try:
            got = _extract(claim, more)
        except MissingMetrics as e:
            label = _labels(more, [None], f"extra source {j + 1}")[0]
            for k in found:
                found[k][0].append(Unjudged(f"its metrics lack what the claim needs ({e.missing})"))
                found[k][1].append(label)
            continue
        for k, vs in got.items():
            vals, labels = found.setdefault(k, ([], []))
            vals.extend(vs)
            labels.extend(_labels(more, vs, f"extra source {j + 1}"))
    cells = {}
    for variant, (values, labels) in found.items():
        if variant not in claim.variants:
            raise UnknownClaim(f"claim {claim.id!r}: unknown variant {variant!r}; variants: {', '.join(claim.variants)}")
        if not values:
            raise MissingMetrics(claim.id, f"a value of variant {variant!r} (no seed)")
        words = [claim.rule.word_of(claim.id, v) for v in values]
        undecided = [{"seed": lab, "why": _undecided_why(claim.rule, v)}
                     for lab, v, w in zip(labels, values, words) if w == UNDECIDED]
        cell = {"values": [_plain(v) for v in values], "seeds": len(values), "labels": labels, "words": words,
                "undecided": undecided, "number": _range(claim.rule, values),
                "word": aggregate(words, tie_word(claim.rule))}
        seen = dict((evidence or {}).get(variant, {}))
        if variant in without:
            seen["without"] = without[variant]
        cell["reason"] = reason(claim, values, words, cell["word"], labels, seen)
        cells[variant] = cell
    return {"id": claim.id, "text": claim.text, "figure": claim.figure, "paper": claim.paper,
            "notebook": claim.notebook, "rule": claim.rule.describe(), "kind": claim.kind, "reading": claim.reading,
            "own_variants": list(claim.own_variants),
            "registered": claim.registered, "set_after_numbers": claim.set_after_numbers, "cells": cells}


def _without(claim: Claim, metrics: Mapping[str, Any], extra: Sequence[Mapping[str, Any]]) -> dict:
    """``{variant: (label, cell)}``: the claim judged on ``claim.without_deviation`` (the same runs without the part
    that deviates), every seed as in :func:`judge`; empty when the claim has no such reading."""
    if claim.without_deviation is None:
        return {}
    import dataclasses
    plain = dataclasses.replace(claim, extract=claim.without_deviation, without_deviation=None, deviation="",
                                deviating="")
    return {k: (f"without {claim.deviating}", c) for k, c in judge(plain, metrics, extra)["cells"].items()}


# --- reasons ----------------------------------------------------------------------------------------------------

def _distance(rule: Rule, value) -> float | None:
    """How far one decided value lies from the rule's "holds" threshold (``None``: not a plain number). For a
    trend: the largest shortfall of a step that does not move the claimed way by more than the margin."""
    if isinstance(rule, Trend):
        if not isinstance(value, (list, tuple)) or any(not isinstance(x, (int, float)) for x in value):
            return None
        sign = 1.0 if rule.direction == "up" else -1.0
        steps = [sign * (b - a) for a, b in zip(value, value[1:])]
        return max((rule.margin - s for s in steps if round(s, RESOLUTION_DIGITS) <= rule.margin), default=0.0)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return abs(value - rule.threshold())


def _res_text(rule: Rule, res: float) -> str:
    if rule.unit in (" %", "%"):     # a difference of accuracies is in points, whatever the accuracies' unit
        return f"{res:.2f} points" if rule.unit == " %" else f"{100 * res:.2f} points"
    return Rule.fmt(rule, res)


def _at(ev: tuple[str, dict]) -> str:
    label, cell = ev
    return f"{label}: {cell['number']} {cell['word']}"


def reason(claim: Claim, values: Sequence[Any], words: Sequence[str], word: str,
           labels: Sequence[str] | None = None,
           evidence: Mapping[str, tuple[str, dict]] | None = None) -> dict | None:
    """Why a cell's word is not "holds", from evidence: ``{"class": one of REASONS, "text": a sentence}``; for holds
    ``None``, or, when the claim names a stated deviation, the note ``{"class": HOLDS_NOTE, ...}`` (a holds that
    rests on a deviation shows it).

    ``evidence``: ``{key: (label, cell)}`` with keys in :data:`EVIDENCE`: the same claim and variant judged on other
    runs (a cell of :func:`judge`, with its ``word`` and ``reason``). The rule, first match wins:

    1. *undecided* ("not reached"): each seed's reason.
    2. *horizon*: the claim stops before the paper's horizon (``claim.horizon``) and the run at the paper's horizon
       gives another word. Where it gives the same word, the reason is that column's reason, said to be at the
       paper's horizon (after 3).
    3. *within resolution*: every decided seed that misses lies within the resolution of the threshold that
       separates its word from "holds": ``claim.resolution`` (the standard error of the difference compared) ×
       :func:`extreme_factor` (``claim.extreme_of``) for a value that is the extreme of many noisy differences. A
       cell whose only misses are ties of a :class:`Better` rule is within resolution by definition.
    4. *stated deviation*: a run without the deviation gives another word. *deviation, untested*: no such run,
       unless the same runs without the part that deviates (``without``) give the same word: then the deviation
       does not decide the word and the rule goes on (the text says so).
    5. *horizon, untested*: ``claim.horizon`` and no run at the paper's horizon.
    6. *scale*: the run at the paper's scale gives another word; the same word is said ("not the scale").
    7. *seeds disagree* (not robust) or *measured disagreement*, with the ties named when seeds tied or failed
       (:func:`aggregate`) and the scale left untested where ``claim.scale`` says ours differs.
    """
    evidence = dict(evidence or {})
    unknown = set(evidence) - set(EVIDENCE)
    if unknown:
        raise ValueError(f"evidence keys must be among {', '.join(EVIDENCE)}, got {sorted(unknown)}")
    labels = list(labels) if labels is not None else [f"seed #{i + 1}" for i in range(len(values))]
    rule = claim.rule
    if word == "holds":
        if not claim.deviation:
            return None
        nd = evidence.get("no deviation")
        tested = f"a run without it: {_at(nd)}" if nd else "untested: no run without it"
        return {"class": HOLDS_NOTE, "text": f"{claim.deviation} ({tested})"}
    if word == UNDECIDED:
        whys = "; ".join(f"{lab}: {_undecided_why(rule, v)}" for lab, v in zip(labels, values))
        return {"class": "undecided", "text": f"no seed decides ({whys})"}
    decided = [(v, w) for v, w in zip(values, words) if w != UNDECIDED]
    horizon = evidence.get("horizon") if claim.horizon else None
    if horizon and horizon[1]["word"] != word:
        return {"class": "horizon", "text": f"a run to the paper's horizon gives another word ({_at(horizon)}); "
                                            f"{claim.horizon}"}
    tie = tie_word(rule)
    ties = [lab for lab, w in zip(labels, words) if tie is not None and w == tie]
    if tie is not None and word == tie:
        return {"class": "within resolution",
                "text": f"a tie within ±{rule.fmt(rule.margin)}, the resolution of the measurement"}
    if claim.resolution is not None and decided:
        res = claim.resolution * extreme_factor(claim.extreme_of)
        dist = [_distance(rule, v) for v, w in decided if w != "holds"]
        if dist and all(d is not None and round(d, RESOLUTION_DIGITS) <= res for d in dist):
            over = "" if claim.extreme_of == 1 else \
                (f" (the value is the extreme of {claim.extreme_of} differences: {extreme_factor(claim.extreme_of):.2f}"
                 f" × the standard error of one, {_res_text(rule, claim.resolution)})")
            return {"class": "within resolution",
                    "text": f"every seed that misses does so by at most {_res_text(rule, res)}, the resolution of "
                            f"the difference measured{over}"}
    if horizon:
        r = horizon[1].get("reason") or {"class": "measured disagreement", "text": "the claim does not hold there"}
        return {"class": r["class"], "text": f"at the paper's horizon too ({_at(horizon)}): {r['text']}"}
    notes = []
    if claim.deviation:
        nd, wo = evidence.get("no deviation"), evidence.get("without")
        if nd and nd[1]["word"] != word:
            return {"class": "stated deviation", "text": f"{claim.deviation}; a run without it gives another word "
                                                         f"({_at(nd)})"}
        if nd:
            notes.append(f"not the deviation: a run without it gives the same word ({_at(nd)})")
        elif wo and wo[1]["word"] == word:
            notes.append(f"not the deviation: the word is the same {wo[0]} ({_at(wo)})")
        else:
            moved = f"; {wo[0]} the word is {wo[1]['word']}" if wo else ""
            return {"class": "deviation, untested", "text": f"{claim.deviation}{moved}; no run without the deviation "
                                                            f"exists"}
    if claim.horizon:
        return {"class": "horizon, untested", "text": f"{claim.horizon}; no run to the paper's horizon exists"}
    scale = evidence.get("scale")
    if scale and scale[1]["word"] != word:
        return {"class": "scale", "text": f"the paper's scale gives another word ({_at(scale)})"}
    if scale:
        notes.append(f"not the scale: the paper's scale gives the same word ({_at(scale)})")
    elif claim.scale:
        notes.append(f"the paper's scale is untested (ours: {claim.scale})")
    if claim.extreme_of > 1 and claim.resolution is not None and not isinstance(rule, Trend):
        res = claim.resolution * extreme_factor(claim.extreme_of)
        if abs(rule.threshold()) < res:   # equal gaps would put the extreme this far off: the threshold is unresolved
            beyond = [lab for (v, w), lab in zip(zip(values, words), labels) if w not in ("holds", UNDECIDED)
                      and (d := _distance(rule, v.value if isinstance(v, Censored) else v)) is not None and d > res]
            notes.insert(0, f"the value is the extreme of {claim.extreme_of} noisy differences, resolved to "
                            f"{_res_text(rule, res)} ({extreme_factor(claim.extreme_of):.2f} × "
                            f"{_res_text(rule, claim.resolution)}), more than the claim's {rule.fmt(rule.threshold())}: "
                            f"it cannot resolve the claim, only misses beyond that"
                            + (f" ({', '.join(beyond)})" if beyond else " (none)"))
    if ties:
        notes.insert(0, f"no seed supports the claim: {', '.join(ties)} tie within ±{rule.fmt(rule.margin)}, the "
                        f"others fail")
    tail = "".join(f"; {n}" for n in notes)
    if word == "not robust across seeds":
        by = ", ".join(f"{lab} {w}" for lab, w in zip(labels, words) if w != UNDECIDED)
        return {"class": "seeds disagree", "text": f"the seeds' words differ ({by}){tail}"}
    return {"class": "measured disagreement", "text": f"our numbers do not show the claim{tail}"}


def _plain(v):
    if isinstance(v, Censored):
        return {"censored": v.side, "value": v.value}
    if isinstance(v, Unjudged):
        return {"unjudged": v.reason}
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

