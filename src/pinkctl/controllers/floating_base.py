"""The floating base of a robot with a free-flyer root, as the IK controller sees it.

The base is a decision variable of the QP (its 6 velocity coordinates, a twist in the base
frame, Pinocchio's free-flyer tangent) but no actuator drives it: the controller reads its pose
from the estimate's :class:`~pinkctl.core.state.RootState` (world-frame position and (w, x, y, z)
orientation) and integrates its own on the manifold, ``M_k = M_{k-1} exp6(v dt)``; the output
carries the integrated pose and its twist as the desired root state.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..core.poses import matrix_to_quaternion, quaternion_to_matrix
from ..core.state import RootState

__all__ = ["FloatingBase", "taken_share"]


class FloatingBase:
    """Pose of a free-flyer root: read, integrated, written (see the module docstring).

    Args:
        q0: The home configuration; its first 7 coordinates (``x y z qx qy qz qw``) are the
            starting pose.
    """

    def __init__(self, q0: np.ndarray) -> None:
        self._pose = pin.XYZQUATToSE3(np.asarray(q0[:7], dtype=np.float64))

    @property
    def pose(self) -> pin.SE3:
        """The base pose the controller holds (world frame)."""
        return self._pose

    @staticmethod
    def read(root: RootState | None) -> pin.SE3 | None:
        """The pose given by a root state, or None when it lacks position or orientation."""
        if root is None or root.position is None or root.orientation is None:
            return None
        rotation = quaternion_to_matrix(root.orientation)
        return pin.SE3(rotation, np.array(root.position, dtype=np.float64))

    def place(
        self, q: np.ndarray, root: RootState | None, measured: bool, *, hold: bool = False
    ) -> pin.SE3 | None:
        """Write the base pose into ``q``: the estimate's root pose when ``measured`` and it has
        one (also held from now on when ``hold``), else the held pose.

        Returns:
            The pose taken from the estimate, or None.
        """
        pose = self.read(root) if measured else None
        if hold and pose is not None:
            self._pose = pose
        self.write(q, pose)
        return pose

    def write(self, q: np.ndarray, pose: pin.SE3 | None = None) -> None:
        """Put ``pose`` (default: the held pose) into the first 7 coordinates of ``q``."""
        q[:7] = pin.SE3ToXYZQUAT(self._pose if pose is None else pose)

    def step(self, twist: np.ndarray, dt: float, start: pin.SE3 | None = None) -> RootState:
        """Integrate the base twist ``[v, w]`` (base frame) for ``dt`` from ``start`` (default:
        the held pose), hold the result and return it as the desired root state."""
        origin = self._pose if start is None else start
        self._pose = origin * pin.exp6(pin.Motion(np.asarray(twist) * dt))
        return RootState(
            position=self._pose.translation.copy(),
            orientation=matrix_to_quaternion(self._pose.rotation),
            linear_velocity=np.array(twist[:3], dtype=np.float64),
            angular_velocity=np.array(twist[3:6], dtype=np.float64),
        )


def taken_share(wanted: np.ndarray, taken: np.ndarray) -> float:
    """The share of the joints' wanted velocity their shaped command took, in ``[0, 1]``.

    ``s = <taken, wanted> / |wanted|^2``, the scale of ``wanted`` closest to ``taken`` (least
    squares): 1 when the shaper passed the velocity through, 0 when there was none to take.
    The floating base's twist is scaled by it so that the base and the joints move by the
    same share of the QP's motion; a base moved by the full QP twist while the joints are
    held back makes tasks that span both (a hand reached with the legs and the pelvis) drift.
    """
    norm = float(wanted.dot(wanted))
    if norm == 0.0:
        return 0.0
    return min(1.0, max(0.0, float(taken.dot(wanted)) / norm))
