"""Small quaternion helpers for the Cartesian trajectories. Quaternions are (w, x, y, z)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError

_NORM_EPS = 1e-9


def as_unit_quaternions(values: ArrayLike, argument: str, count: int | None = None) -> np.ndarray:
    """Validate (K, 4) or (4,) wxyz quaternions and return them normalised, float64, (K, 4)."""
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{argument} must be (w, x, y, z) quaternions of real numbers") from None
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != 4:
        raise InputError(f"{argument} must have shape (K, 4) (w, x, y, z), got {array.shape}")
    if count is not None and array.shape[0] != count:
        raise InputError(f"{argument} must have {count} rows, got {array.shape[0]}")
    if not np.all(np.isfinite(array)):
        raise InputError(f"{argument} must be finite (no NaN or infinity)")
    norms = np.linalg.norm(array, axis=1)
    if np.any(norms < _NORM_EPS):
        raise InputError(f"{argument} contains a zero quaternion")
    return array / norms[:, None]


def multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` of two wxyz quaternions."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    )


def conjugate(q: np.ndarray) -> np.ndarray:
    """Conjugate (inverse of a unit quaternion)."""
    return np.array([q[0], -q[1], -q[2], -q[3]])


def from_rotation_vector(rotvec: np.ndarray) -> np.ndarray:
    """Unit quaternion of the rotation by angle ``|rotvec|`` about axis ``rotvec / |rotvec|``."""
    angle = math.sqrt(float(rotvec @ rotvec))
    if angle < 1e-12:
        # Second-order expansion; exact enough for the tiny angles that take this branch.
        return np.array([1.0 - angle * angle / 8.0, *(0.5 * rotvec)])
    half = 0.5 * angle
    return np.array([math.cos(half), *(math.sin(half) / angle * rotvec)])


def to_rotation_vector(q: np.ndarray) -> np.ndarray:
    """Rotation vector (axis times angle, angle in [0, pi]) of a unit quaternion."""
    if q[0] < 0.0:
        q = -q
    vec = q[1:]
    sin_half = math.sqrt(float(vec @ vec))
    if sin_half < 1e-12:
        return 2.0 * vec
    angle = 2.0 * math.atan2(sin_half, float(q[0]))
    return angle / sin_half * vec
