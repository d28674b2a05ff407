"""RootState: the pose and velocity of a robot's floating or mobile base."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import InputError
from ._space import _ROOT_FIELDS, _ROOT_WIDTHS, _check_finite, _check_quaternions, _readonly


class RootState:
    """State of a robot's root (floating or mobile base).

    Args:
        position: (3,) position [m], world frame.
        orientation: (4,) quaternion (w, x, y, z), world frame, non-zero (kept as given).
        linear_velocity: (3,) linear velocity [m/s], base (body) frame.
        angular_velocity: (3,) angular velocity [rad/s], base (body) frame.

    Each given field is 1-D of the stated length, real-valued (ints are accepted and
    converted) and finite; at least one field is required.

    Raises:
        ValueError: If no field is given or a field breaks the rules above.
    """

    __slots__ = ("_fields",)

    _fields: tuple[np.ndarray | None, ...]

    def __init__(
        self,
        position: Any = None,
        orientation: Any = None,
        linear_velocity: Any = None,
        angular_velocity: Any = None,
    ):
        given = (position, orientation, linear_velocity, angular_velocity)
        if all(v is None for v in given):
            raise InputError(f"RootState needs at least one of {', '.join(_ROOT_FIELDS)}")
        fields: list[np.ndarray | None] = []
        for what, width, value in zip(_ROOT_FIELDS, _ROOT_WIDTHS, given, strict=True):
            if value is None:
                fields.append(None)
                continue
            try:
                arr = np.asarray(value)
            except (TypeError, ValueError, OverflowError) as exc:
                raise InputError(f"{what}: cannot read values as an array: {exc}") from exc
            if arr.dtype.kind not in "fiu":
                raise InputError(f"{what} must be real numbers, got dtype {arr.dtype}")
            if arr.shape != (width,):
                raise InputError(f"{what} must be 1-D with {width} elements, got {arr.shape}")
            arr = np.array(arr, dtype=np.float64)
            _check_finite(arr, what)
            if what == "orientation":
                _check_quaternions(arr[None, :], what)
            fields.append(_readonly(arr))
        self._fields = tuple(fields)

    @property
    def position(self) -> np.ndarray | None:
        """(3,) position [m], world frame, or None."""
        return self._fields[0]

    @property
    def orientation(self) -> np.ndarray | None:
        """(4,) quaternion (w, x, y, z), world frame, or None."""
        return self._fields[1]

    @property
    def linear_velocity(self) -> np.ndarray | None:
        """(3,) linear velocity [m/s], body frame, or None."""
        return self._fields[2]

    @property
    def angular_velocity(self) -> np.ndarray | None:
        """(3,) angular velocity [rad/s], body frame, or None."""
        return self._fields[3]

    def __repr__(self) -> str:
        parts = [
            f"{what}={np.array2string(v, precision=4)}"
            for what, v in zip(_ROOT_FIELDS, self._fields, strict=True)
            if v is not None
        ]
        return f"RootState({', '.join(parts)})"
