"""Minimal-time, rest-to-rest joint trajectory through joint-space waypoints."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._validation import name_list, positive_number
from ..core.state import JointState, RobotState
from ..errors import InputError
from .time_scaling import TrapezoidTimeScaling
from .trajectory import Trajectory, _check_time

__all__ = ["MinimalTimeJointTrajectory"]


def _active_joints(names: Sequence[str], joint_space: list[str], width: int) -> list[str]:
    """The joint of each waypoint column, all in ``joint_space``."""
    active = name_list(names, "active_joints")
    if len(active) != width:
        raise InputError(
            f"active_joints must name one joint per waypoint column ({width}), "
            f"got {len(active)} names"
        )
    unknown = [name for name in active if name not in joint_space]
    if unknown:
        raise InputError(f"active_joints {unknown} are not in robot_joint_space")
    return active


def _check_distinct(points: np.ndarray, *, rtol: float, atol: float) -> None:
    """No two consecutive waypoints equal within the tolerances."""
    for k in range(points.shape[0] - 1):
        if np.allclose(points[k], points[k + 1], rtol=rtol, atol=atol):
            raise InputError(
                f"waypoints {k} and {k + 1} are equal within the tolerances "
                f"(rtol={rtol}, atol={atol}); remove the duplicate"
            )


def _limit_vector(values: ArrayLike, size: int, argument: str) -> np.ndarray:
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{argument} must be a 1-D array of {size} numbers") from None
    if array.shape != (size,):
        raise InputError(
            f"{argument} must be a 1-D array of length {size} (one per waypoint column), "
            f"got shape {array.shape}"
        )
    if not np.all(np.isfinite(array) & (array > 0.0)):
        raise InputError(f"{argument} must be finite and strictly positive, got {array}")
    return array


class MinimalTimeJointTrajectory(Trajectory):
    """Joint trajectory through waypoints, at rest at every waypoint, as fast as the limits allow.

    Segment ``k`` goes from waypoint ``k`` to waypoint ``k + 1`` along the straight joint-space
    line, timed by :meth:`TrapezoidTimeScaling.synchronized` with the joint displacements and
    the per-joint limits: the slowest joint sets the segment duration and every other joint is
    slowed down so that all of them accelerate, cruise and decelerate together. Segments follow
    each other with no pause; the velocity is zero at every waypoint.

    Usually built by :meth:`pinkctl.trajectories.path.Path.to_minimal_time_joint_trajectory`,
    which documents the arguments. Column ``j`` of ``waypoints`` is joint ``active_joints[j]``.

    Raises:
        ValueError: See :meth:`Path.to_minimal_time_joint_trajectory`.
    """

    def __init__(
        self,
        waypoints: ArrayLike,
        *,
        max_velocities: ArrayLike,
        max_accelerations: ArrayLike,
        robot_joint_space: Sequence[str],
        active_joints: Sequence[str],
        waypoint_relative_difference_tolerance: float = 1e-6,
        waypoint_absolute_difference_tolerance: float = 1e-10,
    ) -> None:
        points = np.array(waypoints, dtype=np.float64)
        if points.ndim != 2:
            raise InputError(f"waypoints must be a 2-D (W x M) matrix, got shape {points.shape}")
        if not np.all(np.isfinite(points)):
            raise InputError("waypoints must be finite (no NaN or infinity)")
        count, width = points.shape
        v_max = _limit_vector(max_velocities, width, "max_velocities")
        a_max = _limit_vector(max_accelerations, width, "max_accelerations")
        joint_space = name_list(robot_joint_space, "robot_joint_space")
        active = _active_joints(active_joints, joint_space, width)
        if count < 2:
            raise InputError(f"a trajectory needs at least 2 waypoints, got {count}")
        _check_distinct(
            points,
            rtol=positive_number(
                waypoint_relative_difference_tolerance, "waypoint_relative_difference_tolerance"
            ),
            atol=positive_number(
                waypoint_absolute_difference_tolerance, "waypoint_absolute_difference_tolerance"
            ),
        )

        deltas = np.diff(points, axis=0)
        profiles = [TrapezoidTimeScaling.synchronized(d, v_max, a_max) for d in deltas]
        durations = np.array([profile.duration for profile in profiles])
        starts = np.concatenate(([0.0], np.cumsum(durations)))

        points.flags.writeable = False
        self._waypoints = points
        self._deltas = deltas
        self._profiles = profiles
        self._segment_starts = starts
        self._segment_start_list = starts[:-1].tolist()
        self._duration = float(starts[-1])
        self._robot_joint_space = joint_space
        self._active_joints = active

    @property
    def duration(self) -> float:
        """Total time [s]: the sum of the segment durations."""
        return self._duration

    @property
    def robot_joint_space(self) -> list[str]:
        """Ordered joint names the output states are expressed over (copy)."""
        return list(self._robot_joint_space)

    @property
    def waypoint_times(self) -> np.ndarray:
        """Time at which each waypoint is reached [s], shape (W,); starts at 0."""
        return self._segment_starts.copy()

    @property
    def segment_profiles(self) -> list[TrapezoidTimeScaling]:
        """Time scaling of each segment (W - 1 entries)."""
        return list(self._profiles)

    def get_active_joints(self) -> list[str]:
        """Names of the joints the trajectory drives, in waypoint-column order (copy)."""
        return list(self._active_joints)

    def sample(self, time: float) -> tuple[np.ndarray, np.ndarray]:
        """Positions and velocities of the active joints at relative ``time``.

        Args:
            time: Relative time [s]; clamped to ``[0, duration]``.

        Returns:
            ``(positions, velocities)``, each of shape (M,) in waypoint-column order.

        Raises:
            ValueError: If ``time`` is not finite.
        """
        tau = min(max(_check_time(time), 0.0), self._duration)
        k = max(bisect.bisect_right(self._segment_start_list, tau) - 1, 0)
        s, s_dot, _ = self._profiles[k].evaluate(tau - self._segment_start_list[k])
        delta = self._deltas[k]
        return self._waypoints[k] + s * delta, s_dot * delta

    def get_target_state(self, time: float) -> RobotState:
        """Joint positions and velocities of the active joints at relative ``time``.

        ``time`` is clamped to ``[0, duration]``, so this never returns None: before the start
        the first waypoint (at rest) is returned and after the end the last one.

        Returns:
            ``RobotState(joints=JointState)`` over ``robot_joint_space`` with positions and
            velocities valid for the active joints only (no efforts).

        Raises:
            ValueError: If ``time`` is not finite.
        """
        positions, velocities = self.sample(time)
        joints = JointState.from_name(
            self._robot_joint_space,
            positions=(self._active_joints, positions),
            velocities=(self._active_joints, velocities),
        )
        return RobotState(joints=joints)

    def __repr__(self) -> str:
        return (
            f"MinimalTimeJointTrajectory({len(self._waypoints)} waypoints, "
            f"{len(self._active_joints)} joints, duration={self._duration:.6g} s)"
        )
