"""Argument checks shared by constructors, loaders and setters.

Each check raises :class:`~pinkctl.errors.InputError` (a ``ValueError``) naming the
argument and what was expected, and returns the value in the form the caller stores (a
Python float, a list of names), so a rejected call changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Any

from .errors import InputError

__all__ = ["callable_or_none", "name_list", "real_number", "choice"]


def real_number(
    value: Any,
    name: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a finite float in the interval ``[low, high]`` (ends open on request).

    Booleans and strings are rejected (``dt=True`` or ``gain="1"`` are mistakes, not numbers).
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(f"{name} must be a real number, got {value!r}")
    number = float(value)
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    interval = f"{left}{low:g}, {high:g}{right}"
    if not math.isfinite(number):
        raise InputError(f"{name} must be finite and in {interval}, got {value!r}")
    too_low = number <= low if low_open else number < low
    too_high = number >= high if high_open else number > high
    if too_low or too_high:
        raise InputError(f"{name} must be in {interval}, got {value!r}")
    return number


def name_list(value: Any, name: str, *, allow_empty: bool = True) -> list[str]:
    """``value`` as a list of unique strings (a bare string is not a list of names)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InputError(f"{name} must be a sequence of names, got {value!r}")
    names = list(value)
    bad = [n for n in names if not isinstance(n, str) or not n]
    if bad:
        raise InputError(f"{name} must hold non-empty strings, got {bad!r}")
    if len(set(names)) != len(names):
        duplicates = sorted({n for n in names if names.count(n) > 1})
        raise InputError(f"{name} has duplicates: {duplicates}")
    if not names and not allow_empty:
        raise InputError(f"{name} must not be empty")
    return names


def callable_or_none(value: Any, name: str) -> Any:
    """``value`` if it is callable or None."""
    if value is not None and not callable(value):
        raise InputError(f"{name} must be callable or None, got {value!r}")
    return value


def choice(value: Any, name: str, options: Sequence[str]) -> str:
    """``value`` if it is one of the strings ``options``."""
    if not isinstance(value, str) or value not in options:
        raise InputError(f"{name} must be one of {list(options)}, got {value!r}")
    return value
