"""Argument checks of the world's boundary: names, vectors, poses.

Each check raises :class:`~pinkctl.errors.InputError` naming the argument and returns the
value in the form a record stores (tuples of Python floats), so a rejected call changes
nothing. Quaternions are normalised (any non-zero scale is accepted, as everywhere in
pinkctl) and signed so that their first non-zero coefficient is positive (``w >= 0``); a
quaternion already of unit norm to rounding is kept as it is, so that normalising is
idempotent and a saved world reads back bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._validation import real_number
from ..errors import InputError

__all__ = ["checked_name", "positive", "quaternion", "vector"]

#: Below this norm a quaternion or a normal is taken for zero.
MIN_NORM = 1e-9


def checked_name(value: Any, argument: str = "name") -> str:
    """A non-empty string without surrounding whitespace or control characters."""
    if not isinstance(value, str) or not value or value.strip() != value:
        raise InputError(
            f"{argument} must be a non-empty string without surrounding spaces, got {value!r}"
        )
    if any(not ch.isprintable() for ch in value):
        raise InputError(f"{argument} must not contain control characters, got {value!r}")
    return value


def _text_or_bools(value: Any) -> bool:
    """Whether ``value`` is a string or a list or tuple holding a boolean (numpy would read
    both as numbers or fail later with a less helpful message)."""
    if isinstance(value, (str, bytes)):
        return True
    return isinstance(value, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in value)


def _not_numbers(value: Any, argument: str, size: int) -> InputError:
    return InputError(f"{argument} must be {size} real numbers, got {value!r}")


def vector(value: Any, argument: str, size: int = 3) -> tuple[float, ...]:
    """``size`` finite real numbers (a sequence or an array of that many), as floats."""
    if _text_or_bools(value):
        raise _not_numbers(value, argument, size)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise _not_numbers(value, argument, size) from None
    if array.dtype.kind not in "iuf" or array.shape != (size,):
        raise _not_numbers(value, argument, size)
    numbers = tuple(float(v) for v in array.tolist())
    if not all(math.isfinite(v) for v in numbers):
        raise InputError(f"{argument} must be finite (no NaN or infinity), got {value!r}")
    return numbers


def positive(value: Any, argument: str, *, allow_zero: bool = False) -> float:
    """A finite number > 0 (>= 0 with ``allow_zero``) [m]."""
    return real_number(value, argument, low=0.0, low_open=not allow_zero)


def unit(values: tuple[float, ...], argument: str) -> tuple[float, ...]:
    """``values`` scaled to unit norm; kept as they are when already unit to rounding."""
    norm = math.sqrt(sum(v * v for v in values))
    if norm < MIN_NORM:
        raise InputError(f"{argument} must not be zero, got {values}")
    if abs(norm - 1.0) <= 4.0 * np.finfo(float).eps:
        return values
    return tuple(v / norm for v in values)


def quaternion(value: Any, argument: str = "orientation") -> tuple[float, float, float, float]:
    """A (w, x, y, z) quaternion normalised with ``w >= 0`` (its first non-zero coefficient
    positive); None is the identity."""
    if value is None:
        return (1.0, 0.0, 0.0, 0.0)
    w, x, y, z = unit(vector(value, argument, 4), argument)
    leading = next(v for v in (w, x, y, z) if v != 0.0)
    if leading < 0.0:  # q and -q are one rotation: the first non-zero coefficient positive
        w, x, y, z = -w, -x, -y, -z
    return (w + 0.0, x + 0.0, y + 0.0, z + 0.0)  # + 0.0: no negative zeros in a record


def distance_limits(distance: Any) -> np.ndarray:
    """``CollisionScene.pairs_within``'s ``distance`` [m] as a (1,) or (P,) array (no NaN)."""
    if np.ndim(distance) == 0:
        return np.array([real_number(distance, "distance")])
    try:
        limit = np.asarray(distance, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"distance must be real numbers, got {distance!r}") from None
    if limit.ndim != 1 or np.isnan(limit).any():
        raise InputError(f"distance must be a vector of numbers (no NaN), got {distance!r}")
    return limit
