"""Joint-space paths: waypoints joined by straight lines."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from .minimal_time_joint_trajectory import MinimalTimeJointTrajectory

__all__ = ["Path"]


class Path:
    """An ordered list of joint-space waypoints, joined by straight lines in joint space.

    A path has no timing. :meth:`to_minimal_time_joint_trajectory` turns it into a
    :class:`~pinkctl.trajectories.minimal_time_joint_trajectory.MinimalTimeJointTrajectory`
    that stops at every waypoint.

    Args:
        waypoints: Matrix of shape (W, M): W waypoints of M joint values (rad or m). Anything
            ``numpy.asarray`` accepts; it is copied as float64.

    Raises:
        ValueError: If ``waypoints`` is not a 2-D matrix of finite real numbers.
    """

    def __init__(self, waypoints: ArrayLike) -> None:
        try:
            array = np.array(waypoints, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(
                "waypoints must be a 2-D (W x M) matrix of real numbers, "
                f"got {type(waypoints).__name__}"
            ) from None
        if array.ndim != 2:
            raise InputError(
                f"waypoints must be a 2-D (W x M) matrix, got an array of shape {array.shape}"
            )
        if not np.all(np.isfinite(array)):
            raise InputError("waypoints must be finite (no NaN or infinity)")
        array.flags.writeable = False
        self._waypoints = array

    def get_waypoints(self) -> np.ndarray:
        """Copy of the waypoint matrix, shape (W, M), float64."""
        return self._waypoints.copy()

    def get_waypoints_count(self) -> int:
        """Number of waypoints W."""
        return int(self._waypoints.shape[0])

    def get_waypoint_by_index(self, index: int) -> np.ndarray:
        """Copy of waypoint ``index`` (0-based), shape (M,).

        Raises:
            IndexError: If ``index`` is not in ``[0, W)`` (negative indices are rejected too).
            TypeError: If ``index`` is not an integer.
        """
        i = operator.index(index)
        count = self.get_waypoints_count()
        if not 0 <= i < count:
            raise IndexError(f"waypoint index {i} out of range for a path of {count} waypoints")
        return self._waypoints[i].copy()

    def to_minimal_time_joint_trajectory(
        self,
        max_velocities: ArrayLike,
        max_accelerations: ArrayLike,
        robot_joint_space: Sequence[str],
        active_joints: Sequence[str],
        waypoint_relative_difference_tolerance: float = 1e-6,
        waypoint_absolute_difference_tolerance: float = 1e-10,
    ) -> MinimalTimeJointTrajectory:
        """Fastest rest-to-rest trajectory through the waypoints under joint limits.

        Every segment starts and ends at rest and runs a synchronized trapezoidal profile (see
        :mod:`pinkctl.trajectories.time_scaling`), so the motion follows the straight lines of
        the path exactly. Column ``j`` of the waypoint matrix is joint ``active_joints[j]``.

        Args:
            max_velocities: Speed limit per active joint, shape (M,), > 0 [rad/s or m/s].
            max_accelerations: Acceleration limit per active joint, shape (M,), > 0
                [rad/s² or m/s²].
            robot_joint_space: Ordered names of all joints of the robot; the trajectory's
                states are expressed over this space.
            active_joints: Name of the joint of each waypoint column, M unique names of
                ``robot_joint_space``.
            waypoint_relative_difference_tolerance: ``rtol`` of the ``numpy.allclose`` test
                that rejects two equal consecutive waypoints, > 0.
            waypoint_absolute_difference_tolerance: ``atol`` of that test, > 0.

        Raises:
            ValueError: If a limit is not a 1-D array of M finite values > 0, the number of
                active joints is not M, an active joint is repeated or not in
                ``robot_joint_space``, there are fewer than 2 waypoints, a tolerance is not
                > 0, or two consecutive waypoints are equal within the tolerances.
        """
        return MinimalTimeJointTrajectory(
            self._waypoints,
            max_velocities=max_velocities,
            max_accelerations=max_accelerations,
            robot_joint_space=robot_joint_space,
            active_joints=active_joints,
            waypoint_relative_difference_tolerance=waypoint_relative_difference_tolerance,
            waypoint_absolute_difference_tolerance=waypoint_absolute_difference_tolerance,
        )

    #: Alias of :meth:`to_minimal_time_joint_trajectory` (the name one Isaac docstring uses).
    to_minimal_time_trajectory = to_minimal_time_joint_trajectory

    def __repr__(self) -> str:
        w, m = self._waypoints.shape
        return f"Path({w} waypoints x {m} joints)"
