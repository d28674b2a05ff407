"""Target poses: the gizmo's position, orientation and roll/pitch/yaw.

Conventions (the project's): positions in metres in the world frame; quaternions ordered
**(w, x, y, z)** with ``w >= 0`` (MuJoCo's order; three.js, the seed's library, uses
(x, y, z, w)); roll/pitch/yaw in radians with ``R = Rz(yaw) · Ry(pitch) · Rx(roll)`` (fixed
axes x, then y, then z; the seed's three.js ``Euler`` defaults to the order XYZ instead).
The pose arithmetic lives in :mod:`pinkctl.core.poses`; its names used here are re-exported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..core.poses import (
    checked_pose,
    quaternion_angle,
    quaternion_to_matrix,
    rotate_by_vector,
    rotation_vector_between,
)

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
        rpy = pin.rpy.matrixToRpy(quaternion_to_matrix(quaternion))
        zero = np.zeros(3)
        return cls(
            position=np.array(position, dtype=float),
            quaternion=np.array(quaternion, dtype=float),
            rpy=np.array(rpy, dtype=float),
            linear_velocity=zero.copy() if linear_velocity is None else linear_velocity.copy(),
            angular_velocity=zero.copy() if angular_velocity is None else angular_velocity.copy(),
        )


#: The rotation angle [rad] between two (w, x, y, z) quaternions (see
#: :func:`pinkctl.core.poses.quaternion_angle`).
orientation_distance = quaternion_angle
