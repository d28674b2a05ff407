"""Boundary checks of the environments' arguments (each raises ``ValueError`` naming it)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np

from ..errors import InputError

__all__ = ["finite_float", "one_of", "positive_float"]


def finite_float(value: Any, name: str) -> float:
    """``value`` as a finite Python float (booleans and strings are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        raise InputError(f"{name} must be a real number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise InputError(f"{name} must be finite, got {value!r}")
    return number


def positive_float(value: Any, name: str) -> float:
    """``value`` as a finite float > 0."""
    number = finite_float(value, name)
    if number <= 0.0:
        raise InputError(f"{name} must be positive, got {value!r}")
    return number


def one_of(value: Any, name: str, options: Sequence[Any]) -> Any:
    """``value`` if it equals one of ``options`` (and has the same type)."""
    if not any(type(value) is type(option) and value == option for option in options):
        raise InputError(f"{name} must be one of {list(options)}, got {value!r}")
    return value
