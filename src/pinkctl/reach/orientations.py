"""The tool orientations a reachability map tries at every voxel.

An orientation set is ``(n, 3, 3)`` rotation matrices. :func:`spread_orientations` spreads
the tool's z axis (its approach axis) evenly over the sphere (a Fibonacci lattice), with the
tool's x axis as close to the vertical as the direction allows. In a *radial* map each set is
expressed in the voxel's radial frame (x pointing away from the base's vertical axis, z up),
so the map has the robot's own symmetry about that axis; otherwise in the base frame.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..errors import InputError

__all__ = ["orientation_set", "radial_rotation", "spread_orientations"]

_GOLDEN_ANGLE = np.pi * (3.0 - np.sqrt(5.0))


def spread_orientations(count: int) -> np.ndarray:
    """``count`` tool orientations whose z axes spread evenly over the sphere.

    Returns:
        Rotation matrices, ``(count, 3, 3)``; column 2 of each is its approach direction.
    """
    out = np.empty((count, 3, 3))
    for k in range(count):
        z = 1.0 - (2.0 * k + 1.0) / count
        ring = np.sqrt(max(0.0, 1.0 - z * z))
        direction = np.array(
            [ring * np.cos(k * _GOLDEN_ANGLE), ring * np.sin(k * _GOLDEN_ANGLE), z]
        )
        reference = np.array([0.0, 0.0, 1.0]) if ring > 1e-6 else np.array([1.0, 0.0, 0.0])
        x = reference - direction * float(reference @ direction)
        x /= np.linalg.norm(x)
        out[k] = np.column_stack([x, np.cross(direction, x), direction])
    return out


def orientation_set(orientations: int | ArrayLike | None) -> np.ndarray | None:
    """An orientation set from the forms :func:`~pinkctl.reach.reachability_map` accepts.

    Args:
        orientations: A count (:func:`spread_orientations`), rotation matrices ``(n, 3, 3)``,
            unit quaternions ``(n, 4)`` (w, x, y, z), or None (position only).

    Returns:
        ``(n, 3, 3)`` rotation matrices, or None for position only.

    Raises:
        InputError: A count below 1, or matrices or quaternions that are not rotations.
    """
    if orientations is None:
        return None
    if isinstance(orientations, (int, np.integer)) and not isinstance(orientations, bool):
        if orientations < 1:
            raise InputError(f"orientations: expected at least 1, got {orientations}")
        return spread_orientations(int(orientations))
    arr = np.asarray(orientations, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[1] == 4:
        arr = _quaternion_matrices(arr)
    return _checked_rotations(arr)


def _quaternion_matrices(quaternions: np.ndarray) -> np.ndarray:
    """``(n, 4)`` unit quaternions (w, x, y, z) as ``(n, 3, 3)`` rotation matrices."""
    norms = np.linalg.norm(quaternions, axis=1)
    if not np.all(np.isfinite(quaternions)) or np.any(np.abs(norms - 1.0) > 1e-6):
        raise InputError("orientations: quaternions (w, x, y, z) must be unit and finite")
    return np.array([pin.Quaternion(*q).toRotationMatrix() for q in quaternions])


def _checked_rotations(arr: np.ndarray) -> np.ndarray:
    """``arr`` if it is ``(n, 3, 3)`` rotation matrices, n >= 1."""
    if arr.ndim != 3 or arr.shape[1:] != (3, 3) or arr.shape[0] < 1:
        raise InputError(
            "orientations: expected a count, (n, 3, 3) rotation matrices or (n, 4) "
            f"quaternions, got shape {arr.shape}"
        )
    eye = np.einsum("nij,nkj->nik", arr, arr)
    if not np.all(np.isfinite(arr)) or np.max(np.abs(eye - np.eye(3))) > 1e-6:
        raise InputError("orientations: matrices must be rotations (orthonormal)")
    if np.any(np.linalg.det(arr) < 0.0):
        raise InputError("orientations: matrices must be rotations (determinant +1)")
    return arr


def radial_rotation(point: ArrayLike) -> np.ndarray:
    """The radial frame at ``point`` (base frame): a rotation about z by the azimuth.

    Returns:
        ``(3, 3)`` rotation; identity on the vertical axis itself.
    """
    x, y = float(np.asarray(point)[0]), float(np.asarray(point)[1])
    angle = np.arctan2(y, x) if np.hypot(x, y) > 1e-12 else 0.0
    return np.asarray(pin.rpy.rpyToMatrix(0.0, 0.0, angle))
