"""Argument checks shared by constructors, loaders and setters.

Each check raises :class:`~pinkctl.errors.InputError` (a ``ValueError``) naming the
argument and what was expected, and returns the value in the form the caller stores (a
Python float, a list of names), so a rejected call changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from numbers import Integral, Real
from typing import Any, Generic, TypeVar, overload

import numpy as np

from .errors import InputError

__all__ = [
    "Checked",
    "boolean",
    "callable_or_none",
    "choice",
    "integer",
    "name_list",
    "positive_number",
    "real_array",
    "real_number",
    "real_vector",
]

#: dtype kinds of real numbers: signed and unsigned integers, floats (not bool, complex, str).
REAL_KINDS = "iuf"


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


def positive_number(value: Any, name: str) -> float:
    """``value`` as a finite float > 0 (:func:`real_number` on ``(0, inf]``)."""
    return real_number(value, name, low=0.0, low_open=True)


def integer(value: Any, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a Python int in ``[low, high]`` (None: unbounded on that side).

    Booleans and floats are rejected (``max_iterations=1e3`` or ``True`` are mistakes, not
    counts); numpy integers are accepted.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InputError(f"{name} must be an integer, got {value!r}")
    number = int(value)
    if (low is not None and number < low) or (high is not None and number > high):
        left = "-inf" if low is None else str(low)
        right = "inf" if high is None else str(high)
        raise InputError(f"{name} must be an integer in [{left}, {right}], got {value!r}")
    return number


def real_array(value: Any, name: str, shape: tuple[int, ...], *, finite: bool = True) -> np.ndarray:
    """``value`` as a new float64 array of exactly ``shape``, made of real numbers.

    The shape is taken as it is (gymnasium's ``Box.contains`` rule: a (1, 4) or a (4, 1)
    array is not a (4,) one, nothing is reshaped), and the values must have a real numeric
    dtype (integers or floats): booleans, strings, complex numbers and objects are rejected
    instead of converted (``"0.1"`` is not a number, ``1j`` would lose its imaginary part).
    With ``finite``, NaN and infinite values are rejected too.
    """
    expected = f"an array of shape {shape} of real numbers (a float or integer dtype)"
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise InputError(f"{name} must be {expected}, got {value!r}") from exc
    if array.dtype.kind not in REAL_KINDS:
        raise InputError(f"{name} must be {expected}, got dtype {array.dtype}: {value!r}")
    if not isinstance(value, np.ndarray) and _holds_bool(value):
        raise InputError(f"{name} must be {expected}, got booleans: {value!r}")
    if array.shape != shape:
        raise InputError(f"{name} must be {expected}, got shape {array.shape}: {value!r}")
    result = array.astype(np.float64)  # always a copy
    if finite and not np.isfinite(result).all():
        raise InputError(f"{name} must be finite (no NaN or infinite values), got {value!r}")
    return result


def real_vector(value: Any, name: str, size: int, *, unit: str = "") -> np.ndarray:
    """``value`` as a new finite float64 1-D array of ``size`` real numbers, from any shape
    holding that many (a (1, 3) or (3, 1) position is a 3-vector here, unlike in
    :func:`real_array`). ``unit`` follows ``size`` in messages (e.g. ``"[rad]"``)."""
    what = f"{size} real numbers" + (f" {unit}" if unit else "")
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise InputError(f"{name} must be {what}, got {value!r}") from exc
    if array.dtype.kind not in REAL_KINDS or (
        not isinstance(value, np.ndarray) and _holds_bool(value)
    ):
        raise InputError(f"{name} must be {what}, got {value!r}")
    if array.size != size:
        raise InputError(
            f"{name} must have {size} values" + (f" {unit}" if unit else "") + f", got {array.size}"
        )
    result = array.astype(np.float64).reshape(-1)  # always a copy
    if not np.isfinite(result).all():
        raise InputError(f"{name} must be finite (no NaN or infinity), got {result.tolist()}")
    return result


def _holds_bool(value: Any) -> bool:
    """Whether a (nested) sequence holds a boolean (numpy reads ``[True, 0.5]`` as floats)."""
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_bool(item) for item in value)
    return False


def name_list(value: Any, name: str, *, allow_empty: bool = True) -> list[str]:
    """``value`` as a list of unique strings (a bare string is not a list of names)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InputError(f"{name} must be a sequence of names, got {value!r}")
    names = list(value)
    bad = [n for n in names if not isinstance(n, str) or not n]
    if bad:
        raise InputError(f"{name} must hold non-empty strings, got {bad!r}")
    duplicates = _duplicates(names)
    if duplicates:
        raise InputError(f"{name} has duplicates: {duplicates}")
    if not names and not allow_empty:
        raise InputError(f"{name} must not be empty")
    return names


def _duplicates(names: list[str]) -> list[str]:
    """The names listed more than once, sorted."""
    if len(set(names)) == len(names):
        return []
    return sorted({n for n in names if names.count(n) > 1})


def boolean(value: Any, name: str) -> bool:
    """``value`` if it is a Python bool (``1`` or ``"yes"`` are mistakes, not flags)."""
    if not isinstance(value, bool):
        raise InputError(f"{name} must be a bool, got {value!r}")
    return value


def callable_or_none(value: Any, name: str) -> Any:
    """``value`` if it is callable or None."""
    if value is not None and not callable(value):
        raise InputError(f"{name} must be callable or None, got {value!r}")
    return value


def choice(value: Any, name: str, options: Sequence[Any]) -> Any:
    """``value`` if it equals one of ``options`` and is of its kind: a string for a string
    option, else the option's exact type (``True`` is not ``1``, ``1.0`` not ``1``)."""
    if not any(_same_kind(value, option) and value == option for option in options):
        raise InputError(f"{name} must be one of {list(options)}, got {value!r}")
    return value


def _same_kind(value: Any, option: Any) -> bool:
    if isinstance(option, str):
        return isinstance(value, str)
    return type(value) is type(option)


T = TypeVar("T")


class Checked(Generic[T]):
    """A data descriptor over the attribute ``slot`` (default: ``_`` + its own name): reading
    gives the stored value; assigning stores ``check(value)`` (which raises on a bad value,
    leaving the stored one as it was); without ``check`` it is read-only (AttributeError).

    Args:
        check: Validates and converts an assigned value; None: read-only.
        doc: The attribute's docstring.
        slot: The attribute holding the value.
    """

    def __init__(self, check: Callable[[Any], T] | None, doc: str, slot: str | None = None) -> None:
        self._check = check
        self._slot = slot
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name
        if self._slot is None:
            self._slot = f"_{name}"

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Checked[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Checked[T] | T:
        return self if obj is None else getattr(obj, str(self._slot))  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: Any) -> None:
        if self._check is None:
            raise AttributeError(f"{self._name} is read-only")
        setattr(obj, str(self._slot), self._check(value))
