"""Target poses: the gizmo's position, orientation and roll/pitch/yaw, and pose arithmetic.

Conventions (the project's): positions in metres in the world frame; quaternions ordered
**(w, x, y, z)** with ``w >= 0`` (MuJoCo's order; three.js, the seed's library, uses
(x, y, z, w)); roll/pitch/yaw in radians with ``R = Rz(yaw) · Ry(pitch) · Rx(roll)`` (fixed
axes x, then y, then z; the seed's three.js ``Euler`` defaults to the order XYZ instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from ..core.poses import pose_to_se3, se3_to_pose

__all__ = [
    "TargetPose",
    "checked_pose",
    "orientation_distance",
    "rotation_vector_between",
    "rotate_by_vector",
]


@dataclass(frozen=True)
class TargetPose:
    """A target's pose as the gizmo shows it (the seed's ``getGizmoStats()``).

    Attributes:
        position: World position [m], shape (3,).
        quaternion: World orientation (w, x, y, z), unit norm, ``w >= 0``, shape (4,).
        rpy: The same orientation as roll, pitch, yaw [rad], ``R = Rz(yaw) Ry(pitch) Rx(roll)``.
        linear_velocity: World linear velocity of the target [m/s] (non-zero while it is
            animated or follows a trajectory).
        angular_velocity: World angular velocity of the target [rad/s].
    """

    position: np.ndarray
    quaternion: np.ndarray
    rpy: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray

    @classmethod
    def from_pose(
        cls,
        position: np.ndarray,
        quaternion: np.ndarray,
        linear_velocity: np.ndarray | None = None,
        angular_velocity: np.ndarray | None = None,
    ) -> TargetPose:
        """Build from a checked position and (w, x, y, z) quaternion (copies are stored)."""
        w, x, y, z = quaternion.tolist()
        rpy = pin.rpy.matrixToRpy(pin.Quaternion(w, x, y, z).toRotationMatrix())
        zero = np.zeros(3)
        return cls(
            position=np.array(position, dtype=float),
            quaternion=np.array(quaternion, dtype=float),
            rpy=np.array(rpy, dtype=float),
            linear_velocity=zero.copy() if linear_velocity is None else linear_velocity.copy(),
            angular_velocity=zero.copy() if angular_velocity is None else angular_velocity.copy(),
        )


def checked_pose(position: Any, quaternion: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(position (3,), unit quaternion (4,) with w >= 0)`` from user input.

    Raises:
        ValueError: Wrong sizes, NaN or infinite values, or a zero quaternion.
    """
    return se3_to_pose(pose_to_se3(position, quaternion))


def _matrix(quaternion: np.ndarray) -> np.ndarray:
    w, x, y, z = quaternion.tolist()
    return np.asarray(pin.Quaternion(w, x, y, z).toRotationMatrix())


def rotation_vector_between(q_from: np.ndarray, q_to: np.ndarray) -> np.ndarray:
    """World rotation vector [rad] ``r`` with ``R(q_to) = exp([r]) R(q_from)``."""
    return np.asarray(pin.log3(_matrix(q_to) @ _matrix(q_from).T))


def rotate_by_vector(quaternion: np.ndarray, rotation_vector: np.ndarray) -> np.ndarray:
    """``exp([r]) R(q)`` as a (w, x, y, z) quaternion with ``w >= 0``."""
    rotation = np.asarray(pin.exp3(rotation_vector)) @ _matrix(quaternion)
    return se3_to_pose(pin.SE3(rotation, np.zeros(3)))[1]


def orientation_distance(q1: np.ndarray, q2: np.ndarray) -> float:
    """Rotation angle [rad] between two unit (w, x, y, z) quaternions, in [0, pi]."""
    d = min(1.0, abs(float(np.dot(q1, q2))))
    return 2.0 * float(np.arccos(d))
