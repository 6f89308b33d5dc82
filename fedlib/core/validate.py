"""Input validation shared by every public function and notebook: type, finiteness, range and choice checks whose
messages name the parameter, its allowed values and the value given.

Errors: :class:`ParameterTypeError` (a ``TypeError``) for a value of the wrong type, ``ValueError`` for a value
of the right type outside its range, or an impossible combination. ``ParameterTypeError`` also derives from
``ValueError``, so that callers written against the earlier ``ValueError`` of fedlib keep catching it.

Nothing is clamped, wrapped or converted silently: ``True`` is not an integer, ``2.5`` is not an integer (nor is
``2.0``), NaN and ±inf are not numbers unless a check says so (``allow_inf``), and a string is never a number.

Notebooks check their parameters cell with :func:`fedlib.lab.params.validate_parameters` (through
:func:`fedlib.lab.notebooks.setup_notebook`).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["ParameterTypeError", "check_int", "check_float", "check_bool", "check_str", "check_choice",
           "check_list", "check_array", "check_instance", "check_callable", "check_per_client", "check_mask"]


class ParameterTypeError(TypeError, ValueError):
    """A parameter has the wrong type (a ``TypeError``; also a ``ValueError`` for callers of earlier fedlib)."""


def _got(value) -> str:
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return (isinstance(value, (numbers.Real, np.floating, np.integer))
            and not isinstance(value, (bool, np.bool_)))


def _range_text(low, high, low_open: bool = False, high_open: bool = False) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high}")
    return " and ".join(parts)


def _int_text(low, high) -> str:
    if high is None and low == 1:
        return "a positive integer (an int >= 1)"
    if high is None and low == 0:
        return "a non-negative integer (an int >= 0)"
    if low is not None and high is not None:
        return f"an integer in [{low}, {high}]"
    rng = _range_text(low, high)
    return f"an integer {rng}" if rng else "an integer"


def check_int(name: str, value, low: int | None = None, high: int | None = None, extra: str = "") -> int:
    """``value`` as an ``int`` if it is an integer (Python or numpy, not bool) in ``[low, high]``.

    Raises:
        ParameterTypeError: not an integer (bool, float such as 2.5 or 2.0, string, None...).
        ValueError: outside ``[low, high]``.
    """
    desc = _int_text(low, high) + extra
    if not _is_int(value):
        raise ParameterTypeError(f"{name} must be {desc}, got {_got(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be {desc}, got {value!r}")
    return int(value)


def check_float(name: str, value, low: float | None = None, high: float | None = None, low_open: bool = False,
                high_open: bool = False, allow_inf: bool = False) -> float:
    """``value`` as a ``float`` if it is a real number (int, float or numpy scalar, not bool, not a string),
    not NaN, finite unless ``allow_inf``, and within the bounds (``low_open``/``high_open``: strict).

    Raises:
        ParameterTypeError: not a real number.
        ValueError: NaN, ±inf (unless ``allow_inf``), or out of range.
    """
    rng = _range_text(low, high, low_open, high_open)
    kind = "a number" if allow_inf else "a finite number"
    desc = f"{rng} ({kind})" if rng else kind
    if not _is_real(value):
        raise ParameterTypeError(f"{name} must be {desc}, got {_got(value)}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be {desc}, got {value!r}")
    if low is not None and (v <= low if low_open else v < low):
        raise ValueError(f"{name} must be {desc}, got {value!r}")
    if high is not None and (v >= high if high_open else v > high):
        raise ValueError(f"{name} must be {desc}, got {value!r}")
    return v


def check_bool(name: str, value) -> bool:
    """``value`` if it is ``True`` or ``False`` (numpy bools too; not 0/1 or strings). Raises ParameterTypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(f"{name} must be True or False, got {_got(value)}")
    return bool(value)


def check_str(name: str, value, nonempty: bool = True) -> str:
    """``value`` if it is a string (non-empty unless ``nonempty=False``)."""
    if not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be a {'non-empty ' if nonempty else ''}string, got {_got(value)}")
    if nonempty and not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value


def check_choice(name: str, value, choices: Iterable) -> Any:
    """``value`` if it is one of ``choices`` (compared by equality, types must match: ``True`` is not ``1``).

    Raises:
        ParameterTypeError: ``value`` is not of the choices' type (e.g. a number where names are expected).
        ValueError: ``value`` is not one of ``choices``.
    """
    choices = tuple(choices)
    kinds = {type(c) for c in choices}
    if len(kinds) == 1 and not isinstance(value, kinds.pop()):
        raise ParameterTypeError(f"{name} must be one of {choices}, got {_got(value)}")
    if not any(type(value) is type(c) and value == c for c in choices):
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


def check_list(name: str, value, item_check: Callable[[str, Any], Any] | None = None, min_len: int = 1,
               distinct: bool = False) -> list:
    """``value`` as a list if it is a list, tuple or ``range`` (not a string, dict, set, generator or array) of at
    least ``min_len`` items, each passing ``item_check(f"{name}[{i}]", item)`` (e.g. ``lambda n, v: check_int(n, v,
    1)``); with ``distinct`` no item may repeat.

    Raises:
        ParameterTypeError: not a list/tuple/range (a string is refused: ``"iid"`` is not the list ``["iid"]``), or
            an item of the wrong type.
        ValueError: fewer than ``min_len`` items, an item out of range, or (``distinct``) a repeated item.
    """
    if isinstance(value, str):
        raise ParameterTypeError(f"{name} must be a list, got the string {value!r} (write a list such as "
                                 f"[{value!r}]; a string is not split into items)")
    if not isinstance(value, (list, tuple, range)):
        raise ParameterTypeError(f"{name} must be a list, got {_got(value)}")
    if len(value) < min_len:
        raise ValueError(f"{name} must be a list of at least {min_len} item(s), got {list(value)!r}")
    out = [item_check(f"{name}[{i}]", v) for i, v in enumerate(value)] if item_check is not None else list(value)
    if distinct:
        seen = []
        for v in out:
            if v in seen:
                raise ValueError(f"{name} must not repeat an item, got {v!r} twice in {list(value)!r}")
            seen.append(v)
    return out


def check_instance(name: str, value, kind: type | tuple, what: str | None = None, allow_none: bool = False) -> Any:
    """``value`` if it is an instance of ``kind`` (or ``None`` when ``allow_none``); ``what`` describes it in the
    message (default the class name). Raises :class:`ParameterTypeError` naming ``name``."""
    if (allow_none and value is None) or isinstance(value, kind):
        return value
    if what is None:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        what = " or ".join(k.__name__ for k in kinds)
    raise ParameterTypeError(f"{name} must be {what}{' or None' if allow_none else ''}, got {_got(value)}")


def check_callable(name: str, value, allow_none: bool = True) -> Any:
    """``value`` if it is callable (or ``None`` when ``allow_none``). Raises :class:`ParameterTypeError`."""
    if (allow_none and value is None) or callable(value):
        return value
    raise ParameterTypeError(f"{name} must be a callable{' or None' if allow_none else ''}, got {_got(value)}")


def check_array(name: str, value, low: float | None = None, low_open: bool = False, high: float | None = None,
                ndim: int | None = None, integer: bool = False, allow_inf: bool = False,
                nonempty: bool = True) -> np.ndarray:
    """``value`` as a numpy array (float, or int64 when ``integer``) of real numbers: no NaN, finite unless
    ``allow_inf`` (+inf only), every entry within the bounds, ``ndim`` dimensions if given.

    Raises:
        ParameterTypeError: not numeric (strings, None, bools, objects), or non-integral entries when ``integer``.
        ValueError: NaN, inf, out of range, wrong ``ndim``, empty.
    """
    rng = f"in [{low}, {high}]" if low is not None and high is not None and not low_open else \
        _range_text(low, high, low_open)
    kind = "integers" if integer else ("numbers" if allow_inf else "finite numbers")
    desc = f"an array of {kind}" + (f" {rng}" if rng else "")
    try:
        arr = np.asarray(value)
    except Exception as exc:   # ragged nested lists
        raise ParameterTypeError(f"{name} must be {desc}, got {_got(value)}") from exc
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ParameterTypeError(f"{name} must be {desc}, got {_got(value)}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {arr.shape}")
    if arr.size == 0:
        if nonempty:
            raise ValueError(f"{name} must not be empty, got {value!r}")
        return arr.astype(np.int64 if integer else float)
    if integer and not np.issubdtype(arr.dtype, np.integer):
        raise ParameterTypeError(f"{name} must be {desc}, got {_got(value)}")
    if not integer:
        arr = arr.astype(float)
        if np.isnan(arr).any() or (np.isinf(arr).any() and not allow_inf) or (arr == -np.inf).any():
            raise ValueError(f"{name} must be {desc} (no NaN{'' if allow_inf else ' or inf'}), got {value!r}")
    if low is not None and np.any(arr <= low if low_open else arr < low):
        raise ValueError(f"{name} must be {desc}, got {value!r}")
    if high is not None and np.any(arr > high):
        raise ValueError(f"{name} must be {desc}, got {value!r}")
    return arr


def check_per_client(name: str, value, count: int, what: str = "K", allow_scalar: bool = False,
                     **array_checks) -> np.ndarray:
    """``value`` as a ``[count]`` array, one entry per client / device (``what`` names the count in the message:
    ``K`` clients, ``N`` devices); a scalar is broadcast to ``[count]`` when ``allow_scalar``. ``array_checks``
    go to :func:`check_array` (bounds, ``integer``, ``allow_inf``).

    Raises:
        ParameterTypeError / ValueError: as :func:`check_array`; ValueError naming ``name``, the expected length
            and the shape given when the length is not ``count``.
    """
    arr = check_array(name, value, **array_checks)
    if arr.ndim == 0 and allow_scalar:
        return np.broadcast_to(arr, (count,))
    if arr.shape != (count,):
        scalar = " (or one number for every one)" if allow_scalar else ""
        raise ValueError(f"{name} must hold one entry per client: {what} = {count} entries{scalar}, "
                         f"got shape {arr.shape}")
    return arr


def check_mask(name: str, value, count: int, what: str = "K") -> np.ndarray:
    """``value`` as a ``[count]`` bool array (a mask over the clients / devices). Integers are refused (``[0, 1,
    2]`` is not a mask), so an index list is never read as flags.

    Raises:
        ParameterTypeError: not bools. ValueError: length not ``count`` (naming ``what``).
    """
    arr = np.asarray(value)
    if arr.dtype != bool:
        raise ParameterTypeError(f"{name} must be {what} = {count} bools (a mask over the clients), "
                                 f"got {_got(value)}")
    if arr.shape != (count,):
        raise ValueError(f"{name} must be {what} = {count} bools (one per client), got shape {arr.shape}")
    return arr
