"""Plausible ranges of the physical inputs a researcher types (device compute, link rates, memory, data sizes,
client CPUs and samples), written once, in the inputs' base units, and the check every lab entry that takes typed
devices, clients or system ranges applies before any work (:func:`check_plausible`).

A value many orders of magnitude outside any real device is almost always a unit slip: a compute speed given in
FLOP/s where the input expects TFLOP/s reads as a 10^24 FLOP/s device, a link given in bit/s where the input
expects Mbit/s as a 10 Tbit/s link. Such a value is refused with the unit the input expects and the unit in which
the same number would be plausible ("1e+12 TFLOP/s is 1e+24 FLOP/s ... did you give FLOP/s?"). Nothing is clamped.

The ranges (:data:`PLAUSIBLE`) are wide on purpose: from the slowest hardware that could take part in federated
or split learning to well beyond the fastest there is. They refuse slips, not unusual systems:

- compute: 1 MFLOP/s (a microcontroller) to 100 PFLOP/s (a hundred of today's largest accelerators as one device);
- link rate: 100 bit/s (a low-power IoT radio) to 1 Tbit/s (beyond the fastest Ethernet standard);
- memory: 100 kB (a microcontroller's RAM) to 10 TB (beyond the largest single-host memory);
- data size: 1 B to 1 PB; samples on one client: 1 to 10^9; CPUs of one client: 0.001 (a CPU quota) to 10^4.

The method layer's classes (e.g. :class:`fedlib.dtfl.ResourceProfile`, :class:`fedlib.split.EdgeDevices`) check
only that a value is a finite number > 0; the plausibility lives here, in the lab, and is applied where a value
enters from a researcher: :func:`fedlib.lab.hasfl.explore_inputs.devices_from_text`, the HASFL explorer's
ranges, :func:`fedlib.lab.dtfl.checks.clients_from_text`, the DTFL explorer's speeds and ranges,
:func:`fedlib.lab.dtfl.experiments.typed_clients` and the DTFL timelines (:mod:`fedlib.lab.dtfl.timeline`).
"""
from __future__ import annotations

import math

from fedlib.core.validate import ParameterTypeError, check_float

#: quantity -> (base unit, lowest plausible, highest plausible, what the range is of), in the base unit
PLAUSIBLE = {
    "compute": ("FLOP/s", 1e6, 1e17, "device or server compute"),
    "rate": ("bit/s", 1e2, 1e12, "link rate"),
    "memory": ("B", 1e5, 1e13, "device memory"),
    "data": ("B", 1.0, 1e15, "data size"),
    "samples": ("samples", 1.0, 1e9, "number of samples on one client"),
    "cpus": ("CPUs", 1e-3, 1e4, "number of CPUs of one client"),
}
#: SI prefixes a unit may carry (quantities whose unit is a count take none)
PREFIXES = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_COUNTS = ("samples", "cpus")


def scale(quantity: str, unit: str) -> float:
    """How many base units one ``unit`` is (``scale("compute", "TFLOP/s")`` = 1e12).

    Raises:
        ValueError: an unknown quantity, or a unit that is not a prefix of :data:`PREFIXES` before the quantity's
        base unit."""
    if quantity not in PLAUSIBLE:
        raise ValueError(f"quantity must be one of {', '.join(PLAUSIBLE)}, got {quantity!r}")
    base = PLAUSIBLE[quantity][0]
    prefix = unit[:-len(base)] if isinstance(unit, str) and unit.endswith(base) else None
    if prefix is None or prefix not in PREFIXES or (quantity in _COUNTS and prefix):
        allowed = [base] if quantity in _COUNTS else [p + base for p in PREFIXES]
        raise ValueError(f"unit of {quantity} must be one of {', '.join(allowed)}, got {unit!r}")
    return PREFIXES[prefix]


def _g(x: float) -> str:
    return f"{x:.3g}"


def _digits(x: float, *bounds: float) -> int:
    """The fewest significant digits (3 to 17) at which ``x`` prints unlike each of ``bounds`` it differs from:
    a value just outside a range never prints as its bound (1.0004e12 against 1e12: 5 digits)."""
    for p in range(3, 18):
        if all(f"{x:.{p}g}" != f"{b:.{p}g}" for b in bounds if b != x):
            return p
    return 17


def suggestion(value: float, quantity: str, unit: str) -> str | None:
    """The unit in which ``value`` would be plausible, or None: the base unit when it is (the common slip), else
    the prefix nearest ``unit``'s."""
    base, lo, hi, _ = PLAUSIBLE[quantity]
    if quantity in _COUNTS:
        return None
    here = scale(quantity, unit)
    fits = [p + base for p, f in PREFIXES.items() if p + base != unit and lo <= value * f <= hi]
    if not fits:
        return None
    if base in fits:
        return base
    return min(fits, key=lambda u: abs(math.log10(scale(quantity, u) / here)))


def check_plausible(name: str, value, quantity: str, unit: str) -> float:
    """``value`` (in ``unit``, e.g. ``"TFLOP/s"``) as a float if it is a finite number > 0 within the plausible
    range of ``quantity`` (:data:`PLAUSIBLE`); the value is returned in ``unit``, unconverted.

    Raises:
        ParameterTypeError: not a number. ValueError: not finite or <= 0, or outside the range: one line naming
        ``name``, the unit it expects, the range, and the unit in which the number would be plausible."""
    factor = scale(quantity, unit)               # the quantity and unit known, before the value
    v = check_float(name, value, 0, low_open=True)
    base, lo, hi, what = PLAUSIBLE[quantity]
    si = v * factor
    if lo <= si <= hi:
        return v
    if quantity in _COUNTS:
        p = _digits(v, lo, hi)
        raise ValueError(f"{name}: {v:.{p}g} {unit} is outside the plausible {what} ({_g(lo)} to {_g(hi)} {unit})")
    hint = suggestion(v, quantity, unit)
    side = "above" if si > hi else "below"
    p = _digits(si, lo, hi)
    text = (f"{name}: {v:.{p}g} {unit} is {si:.{p}g} {base}, {side} any real {what} ({_g(lo)} to {_g(hi)} {base}); "
            f"the input is in {unit}")
    if hint:
        text += f": did you give {hint}? ({_g(v)} {hint} = {_g(v * scale(quantity, hint) / scale(quantity, unit))} {unit})"
    raise ValueError(text)


def check_plausible_all(name: str, values, quantity: str, unit: str) -> list[float]:
    """:func:`check_plausible` of each item of ``values`` (a list, tuple or 1-D array), named ``name[i]``.

    Raises:
        ParameterTypeError: not a sequence. ValueError: as :func:`check_plausible`, naming the item."""
    import numpy as np
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, np.ndarray)):
        raise ParameterTypeError(f"{name} must be a list of numbers in {unit}, got {values!r}")
    return [check_plausible(f"{name}[{i}]", v, quantity, unit)
            for i, v in enumerate(np.ravel(values) if isinstance(values, np.ndarray) else values)]
