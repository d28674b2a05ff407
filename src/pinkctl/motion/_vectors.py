"""Argument checks shared by the motion-limit modules."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError


def _as_vector(value: Any, n: int, name: str, *, finite: bool = False) -> np.ndarray:
    """``value`` as a float64 vector of size ``n`` (a scalar is broadcast), without NaN (and
    finite, with ``finite``)."""
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a number or a sequence of {n} numbers") from exc
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise InputError(f"{name} must have shape ({n},), got {arr.shape}")
    if np.isnan(arr).any():
        raise InputError(f"{name} contains NaN")
    if finite and not np.isfinite(arr).all():
        raise InputError(f"{name} must be finite, got {arr.tolist()}")
    return arr


def _positive_finite(arr: np.ndarray, name: str) -> None:
    if not np.isfinite(arr).all() or (arr <= 0.0).any():
        raise InputError(f"{name} must be finite and > 0, got {arr.tolist()}")


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr
