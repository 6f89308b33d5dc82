"""The rules of :mod:`fedlib.lab.verdicts` (its docstring says what each word means): :class:`AtLeast`,
:class:`AtMost`, :class:`Better`, :class:`Trend`, and the values a seed can carry besides a number: a bound
(:class:`Censored`) or nothing that can be judged (:class:`Unjudged`)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

UNDECIDED = "not reached"
"""The word of a value that admits more than one word (a bound) or none (:class:`Unjudged`)."""
WORDS = ("holds", "partly", "fails", "not robust across seeds", UNDECIDED)
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
    ``R`` rounds is at least (time of the benchmark's ``R`` rounds) / (ours): ``Censored(v, "lower")``.

    Raises:
        ValueError: ``side`` not "lower" / "upper", or ``value`` not a finite number."""
    value: float
    side: str = "lower"

    def __post_init__(self):
        if self.side not in ("lower", "upper"):
            raise ValueError(f"Censored.side must be 'lower' or 'upper', got {self.side!r}")
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float)) or not math.isfinite(self.value):
            raise ValueError(f"Censored.value must be a finite number, got {self.value!r}")

    def interval(self) -> tuple[float, float]:
        """The values the bound admits, ``(lo, hi)`` with one end infinite."""
        return (float(self.value), math.inf) if self.side == "lower" else (-math.inf, float(self.value))


@dataclass(frozen=True)
class Unjudged:
    """One seed's value that the metrics cannot give (``reason``: why, e.g. "no run reached 75 %"): the seed is
    undecided and named in the cell with the reason, never dropped.

    Raises:
        ValueError: an empty ``reason``."""
    reason: str

    def __post_init__(self):
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError(f"Unjudged.reason must be a non-empty sentence, got {self.reason!r}")


RESOLUTION_DIGITS = 9
"""Every rule rounds a value (a difference, a step, a ratio) to this many decimals before it meets a threshold, so a
step of exactly one test image (``0.7691 - 0.7690`` = ``0.00010000000000005``) counts as equal to a margin of one
image, not above it, and a speed-up of ``0.9999999999999999×`` as 1×."""
_EPS = 10.0 ** -RESOLUTION_DIGITS


def accuracy_se(n_test: int, p: float = 0.5) -> float:
    """The standard error ``sqrt(p (1 - p) / n_test)`` of an accuracy ``p`` measured on ``n_test`` test samples
    (a fraction; times 100 for points). ``p = 0.5`` gives the largest, e.g. 0.005 (0.5 points) on 10,000 images.

    Raises:
        ValueError: ``n_test`` not a positive integer or ``p`` outside [0, 1]."""
    if isinstance(n_test, bool) or not isinstance(n_test, int) or n_test < 1:
        raise ValueError(f"n_test must be a positive integer (test samples), got {n_test!r}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be an accuracy in [0, 1], got {p!r}")
    return math.sqrt(p * (1.0 - p) / n_test)


def difference_se(se_a: float, se_b: float | None = None) -> float:
    """The standard error of a difference ``a - b`` of two measurements with standard errors ``se_a`` and ``se_b``
    (``se_b`` defaults to ``se_a``): ``sqrt(se_a² + se_b²)``, e.g. ``sqrt(2)`` × :func:`accuracy_se` for two
    accuracies. Two models scored on the same test images err on partly the same images, which makes the true
    standard error of their difference smaller; the metrics keep no per-image predictions, so this is its upper
    bound (the cautious resolution: a miss it calls resolved is resolved).

    Raises:
        ValueError: a negative or non-finite standard error."""
    se_b = se_a if se_b is None else se_b
    for name, v in (("se_a", se_a), ("se_b", se_b)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a standard error (a finite number >= 0), got {v!r}")
    return math.hypot(se_a, se_b)


def extreme_factor(k: int) -> float:
    """How many standard errors the smallest (or largest) of ``k`` independent differences whose true values are all
    equal lies from that value, in expectation: the expected maximum of ``k`` standard normals by Blom's
    approximation ``Φ⁻¹((k − 0.375) / (k + 0.25))`` (k = 4: 1.05; 6: 1.28; 16: 1.77), and never less than 1 (one
    difference: one standard error). A claim read as the minimum over many noisy gaps is resolved at this many of
    the gap's standard errors, not at one.

    Raises:
        ValueError: ``k`` not a positive integer."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer (how many differences the extreme is over), got {k!r}")
    from statistics import NormalDist
    return max(1.0, NormalDist().inv_cdf((k - 0.375) / (k + 0.25)))


def finite(claim: str, v) -> float:
    """``v`` as a float; :class:`MissingMetrics` naming ``claim`` when it is not a finite number."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise MissingMetrics(claim, f"a finite number (got {v!r})")
    return float(v)


def _number(name: str, v, allow_none: bool = False):
    if allow_none and v is None:
        return
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {v!r}")


@dataclass(frozen=True)
class Rule:
    """Base of the rules; ``unit`` is how the cell prints a number ("×", "%", " points", "")."""
    unit: str = ""
    digits: int = 2

    kind = "rule"

    def __post_init__(self):
        self._check_format()

    def _check_format(self) -> None:
        """``unit`` a string of one line without ``|`` (it is printed in a markdown table cell), ``digits`` an
        integer 0..12 (every rule's constructor calls it)."""
        name = type(self).__name__
        if not isinstance(self.unit, str) or "|" in self.unit or "\n" in self.unit or len(self.unit) > 32:
            raise ValueError(f"{name}.unit must be a short text for a table cell (one line, no '|', e.g. '×', '%', "
                             f"' points'), got {self.unit!r}")
        if isinstance(self.digits, bool) or not isinstance(self.digits, int) or not 0 <= self.digits <= 12:
            raise ValueError(f"{name}.digits must be an integer in 0..12 (decimals shown), got {self.digits!r}")

    def word(self, value: float) -> str:  # pragma: no cover - every rule overrides it
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover
        raise NotImplementedError

    def threshold(self) -> float:  # pragma: no cover
        """The value that separates "holds" from the weaker words."""
        raise NotImplementedError

    def word_of(self, claim: str, value) -> str:
        """The word for one seed's value (a number, a :class:`Censored` bound, an :class:`Unjudged`, or a sequence
        for :class:`Trend`). Every rule's word is monotone in the value, so a bound decides when its two ends agree."""
        if isinstance(value, Unjudged):
            return UNDECIDED
        if isinstance(value, Censored):
            words = {self.word(e) for e in value.interval()}
            return words.pop() if len(words) == 1 else UNDECIDED
        return self.word(finite(claim, value))

    def fmt(self, value) -> str:
        if isinstance(value, Unjudged):
            return "–"
        if isinstance(value, Censored):
            return ("≥ " if value.side == "lower" else "≤ ") + self.fmt(value.value)
        if self.unit == "%":
            return f"{100 * value:.{max(self.digits - 2, 0)}f} %"
        return f"{value:.{self.digits}f}{self.unit}"


@dataclass(frozen=True)
class AtLeast(Rule):
    """Holds at ``v >= target``, partly at ``partly < v < target``, fails at ``v <= partly``
    (``partly=None``: no partly band, fails below ``target``).

    Raises:
        ValueError: a non-finite ``target`` / ``partly``, or ``partly >= target``."""
    target: float = 1.0
    partly: float | None = None

    kind = "at_least"

    def __post_init__(self):
        self._check_format()
        _number("AtLeast.target", self.target)
        _number("AtLeast.partly", self.partly, allow_none=True)
        if self.partly is not None and self.partly >= self.target:
            raise ValueError(f"AtLeast.partly must be below target ({self.target!r}), got {self.partly!r}")

    def word(self, v: float) -> str:
        v = round(v, RESOLUTION_DIGITS)      # like Better and Trend: a value equal to a threshold but for float noise is equal
        if v >= self.target:
            return "holds"
        return "partly" if self.partly is not None and v > self.partly else "fails"

    def threshold(self) -> float:
        return float(self.target)

    def describe(self) -> str:
        t = self.fmt(self.target)
        return f"holds at ≥ {t}" + (f", partly above {self.fmt(self.partly)}" if self.partly is not None else "") + \
            ", else fails"


@dataclass(frozen=True)
class AtMost(Rule):
    """Holds at ``v <= target``, partly at ``target < v < partly``, fails at ``v >= partly``.

    Raises:
        ValueError: a non-finite ``target`` / ``partly``, or ``partly <= target``."""
    target: float = 1.0
    partly: float | None = None

    kind = "at_most"

    def __post_init__(self):
        self._check_format()
        _number("AtMost.target", self.target)
        _number("AtMost.partly", self.partly, allow_none=True)
        if self.partly is not None and self.partly <= self.target:
            raise ValueError(f"AtMost.partly must be above target ({self.target!r}), got {self.partly!r}")

    def word(self, v: float) -> str:
        v = round(v, RESOLUTION_DIGITS)      # like Better and Trend: a value equal to a threshold but for float noise is equal
        if v <= self.target:
            return "holds"
        return "partly" if self.partly is not None and v < self.partly else "fails"

    def threshold(self) -> float:
        return float(self.target)

    def describe(self) -> str:
        t = self.fmt(self.target)
        return f"holds at ≤ {t}" + (f", partly below {self.fmt(self.partly)}" if self.partly is not None else "") + \
            ", else fails"


@dataclass(frozen=True)
class Better(Rule):
    """The sign of a difference oriented so that positive is the paper's claim: holds above ``margin``, partly
    within ``±margin`` (a tie at the measurement's resolution), fails below ``-margin``.

    Raises:
        ValueError: a negative or non-finite ``margin``."""
    margin: float = 0.0

    kind = "better"

    def __post_init__(self):
        self._check_format()
        _number("Better.margin", self.margin)
        if self.margin < 0:
            raise ValueError(f"Better.margin must be >= 0 (the measurement's resolution), got {self.margin!r}")

    def word(self, v: float) -> str:
        v = round(v, RESOLUTION_DIGITS)
        if v > self.margin:
            return "holds"
        return "partly" if v >= -self.margin else "fails"

    def threshold(self) -> float:
        return float(self.margin)

    def describe(self) -> str:
        return f"holds above +{self.fmt(self.margin)}, partly within ±{self.fmt(self.margin)}, else fails"


@dataclass(frozen=True)
class Trend(Rule):
    """A sequence ordered by the swept parameter moves the claimed way (``direction`` "up" or "down"): holds when
    every step does so by more than ``margin``, partly when only the last value is beyond the first by more than
    ``margin``, else fails. A :class:`Censored` point stands for every value it admits: the sequence decides when
    every sequence it admits gets one word, else it is **not reached**.

    Raises:
        ValueError: ``direction`` not "up" / "down", or a negative or non-finite ``margin``."""
    direction: str = "up"
    margin: float = 0.0

    kind = "trend"

    def __post_init__(self):
        self._check_format()
        if not isinstance(self.direction, str) or self.direction not in ("up", "down"):
            raise ValueError(f"Trend.direction must be 'up' or 'down', got {self.direction!r}")
        _number("Trend.margin", self.margin)
        if self.margin < 0:
            raise ValueError(f"Trend.margin must be >= 0, got {self.margin!r}")

    def threshold(self) -> float:
        return float(self.margin)

    def _intervals(self, claim: str, value) -> list[tuple[float, float]]:
        """Each point as the interval of values it admits, oriented so that the claimed way is up."""
        sign = 1.0 if self.direction == "up" else -1.0
        out = []
        for x in value:
            lo, hi = x.interval() if isinstance(x, Censored) else (finite(claim, x),) * 2
            out.append((lo, hi) if sign > 0 else (-hi, -lo))
        return out

    def word_of(self, claim: str, value) -> str:
        if isinstance(value, Unjudged):
            return UNDECIDED
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) < 2:
            raise MissingMetrics(claim, f"a sequence of at least 2 values for a trend (got {value!r})")
        iv = self._intervals(claim, value)
        m = self.margin

        def gt(step: float, margin: float) -> bool:   # the rounding of the rule's steps; infinite ends as they are
            return (round(step, RESOLUTION_DIGITS) if math.isfinite(step) else step) > margin

        # every step must rise by more than m: certain when each step's smallest admitted rise does
        steps_always = all(gt(lo2 - hi1, m) for (_, hi1), (lo2, _) in zip(iv, iv[1:]))
        # possible: greedily take each point as low as the previous point and its interval allow
        x, steps_possible = iv[0][0], True
        for lo, hi in iv[1:]:
            need = x + m + _EPS if math.isfinite(x) else -math.inf
            x = max(lo, need)
            if x > hi:
                steps_possible = False
                break
        ends_lo, ends_hi = iv[-1][0] - iv[0][1], iv[-1][1] - iv[0][0]   # the end-to-start rise's admitted range
        ends_always, ends_never = gt(ends_lo, m), not gt(ends_hi, m)
        if steps_always:
            return "holds"
        if ends_never:              # every step rising implies the ends rising (m >= 0), so holds is impossible too
            return "fails"
        if ends_always and not steps_possible:
            return "partly"
        return UNDECIDED

    def word(self, v) -> str:   # a sequence of numbers
        return self.word_of("trend", list(v))

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
