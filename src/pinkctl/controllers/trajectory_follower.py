"""Controllers that play back a :class:`~pinkctl.trajectories.trajectory.Trajectory`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.state import JointState, RobotState, RootState, SpatialState
from ..errors import InputError
from ..trajectories.trajectory import Trajectory
from .base import BaseController

__all__ = ["HoldingTrajectoryFollower", "TrajectoryFollower"]


class TrajectoryFollower(BaseController):
    """Outputs a trajectory's target state at the time elapsed since :meth:`reset`.

    Use: :meth:`set_trajectory`, then :meth:`reset` at the start time ``t0``, then
    :meth:`forward` every step; the output at time ``t`` is
    ``trajectory.get_target_state(t - t0)``. The estimated state and the setpoint are ignored.

    The follower plays the trajectory once, over ``t - t0`` in ``[0, duration]`` (both ends
    included, so ``t == t0 + duration`` still gives the final state). Outside that window it
    returns None **and forgets the trajectory and the start time**: it stays silent until
    :meth:`set_trajectory` and :meth:`reset` are called again. It does not hold the final
    state; the caller (or a :class:`~pinkctl.controllers.containers.SelectableController`
    switching to another controller) handles the None at the end. Use
    :class:`HoldingTrajectoryFollower` to keep commanding the final state instead.

    These are Isaac Sim's ``TrajectoryFollower`` semantics.
    """

    def __init__(self) -> None:
        super().__init__()
        self._trajectory: Trajectory | None = None
        self._start_time: float | None = None

    def set_trajectory(self, trajectory: Trajectory) -> None:
        """Store ``trajectory`` and clear the start time (call :meth:`reset` to start it).

        Raises:
            ValueError: If ``trajectory`` is not a
                :class:`~pinkctl.trajectories.trajectory.Trajectory`; the follower is unchanged.
        """
        if not isinstance(trajectory, Trajectory):
            raise InputError(f"trajectory must be a Trajectory, got {type(trajectory).__name__}")
        self._trajectory = trajectory
        self._start_time = None

    def has_trajectory(self) -> bool:
        """Whether a trajectory is stored (it is dropped when time runs out of its window)."""
        return self._trajectory is not None

    @property
    def trajectory(self) -> Trajectory | None:
        """The stored trajectory, or None."""
        return self._trajectory

    @property
    def start_time(self) -> float | None:
        """Absolute time [s] of the last successful :meth:`reset`, or None when not started."""
        return self._start_time

    def reset(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> bool:
        """Start the stored trajectory at time ``t``.

        Returns:
            False (with :attr:`last_error` set) if no trajectory is stored or ``t`` is not a
            finite number; otherwise True, with the start time set to ``t``.
        """
        if self._trajectory is None:
            self.last_error = "no trajectory set (call set_trajectory first)"
            return False
        if not _is_finite_number(t):
            self.last_error = f"reset time t must be a finite number, got {t!r}"
            return False
        self._start_time = float(t)
        self.last_error = None
        return True

    def forward(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> RobotState | None:
        """Target state at ``tau = t - start_time``, or None.

        Returns None when no trajectory is stored, when :meth:`reset` has not been called since
        :meth:`set_trajectory`, or when ``tau`` is outside ``[0, duration]`` (in which case the
        trajectory and the start time are cleared). A non-finite ``t`` also gives None but
        clears nothing.
        """
        trajectory = self._trajectory
        if trajectory is None:
            return self._fail("no trajectory set (call set_trajectory, then reset)")
        if self._start_time is None:
            return self._fail("trajectory not started (call reset after set_trajectory)")
        if not _is_finite_number(t):
            return self._fail(f"time t must be a finite number, got {t!r}")
        tau = float(t) - self._start_time
        duration = trajectory.duration
        if tau < 0.0 or tau > duration:
            return self._outside_window(trajectory, tau, duration)
        return self._target(trajectory, tau)

    def _outside_window(
        self, trajectory: Trajectory, tau: float, duration: float
    ) -> RobotState | None:
        self._trajectory = None
        self._start_time = None
        return self._fail(
            f"time since start {tau:.6g} s is outside the trajectory window [0, {duration:.6g}] s; "
            "trajectory cleared (set_trajectory and reset to run again)"
        )

    def _target(self, trajectory: Trajectory, tau: float) -> RobotState | None:
        target = trajectory.get_target_state(tau)
        if target is None:
            return self._fail(f"trajectory has no target state at {tau:.6g} s")
        self.last_error = None
        return target

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(trajectory={self._trajectory!r}, "
            f"start_time={self._start_time!r})"
        )


class HoldingTrajectoryFollower(TrajectoryFollower):
    """A :class:`TrajectoryFollower` that keeps commanding the final state after the end.

    Opt-in variant for callers that want the robot to stay at the end of the trajectory
    without switching controllers. Differences from :class:`TrajectoryFollower`:

    * for ``tau > duration`` it returns the final state ``get_target_state(duration)`` with
      every valid velocity set to zero (holding means standing still), and keeps the
      trajectory;
    * for ``tau < 0`` (``t`` before the start time) it returns None but keeps the trajectory
      and the start time.

    Everything else (``set_trajectory``, ``reset``, None before reset) is unchanged.
    """

    def __init__(self) -> None:
        super().__init__()
        self._held: tuple[Trajectory, RobotState] | None = None

    def _outside_window(
        self, trajectory: Trajectory, tau: float, duration: float
    ) -> RobotState | None:
        if tau < 0.0:
            return self._fail(f"t is {-tau:.6g} s before the trajectory start time")
        if self._held is None or self._held[0] is not trajectory:
            final = trajectory.get_target_state(duration)
            if final is None:
                return self._fail(f"trajectory has no target state at its end ({duration:.6g} s)")
            self._held = (trajectory, _at_rest(final))
        self.last_error = None
        return self._held[1]


def _is_finite_number(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _at_rest(state: RobotState) -> RobotState:
    """Copy of ``state`` with every *valid* joint, link, site and root velocity set to zero.

    Validity masks are kept, so a held state commands zero velocity exactly where the original
    commanded a velocity. Positions, orientations and efforts are unchanged.
    """
    joints = state.joints
    if joints is not None and joints.velocities is not None:
        data = joints.data_array.copy()
        data[1] = 0.0
        joints = JointState(joints.robot_joint_space, data, joints.valid_array)
    root = state.root
    if root is not None and (root.linear_velocity is not None or root.angular_velocity is not None):
        root = RootState(
            position=root.position,
            orientation=root.orientation,
            linear_velocity=None if root.linear_velocity is None else np.zeros(3),
            angular_velocity=None if root.angular_velocity is None else np.zeros(3),
        )
    return RobotState(
        joints=joints,
        root=root,
        links=_spatial_at_rest(state.links),
        sites=_spatial_at_rest(state.sites),
    )


def _spatial_at_rest(spatial: SpatialState | None) -> SpatialState | None:
    if spatial is None:
        return None
    valid = spatial.valid_array
    if not (valid[:, 2].any() or valid[:, 3].any()):
        return spatial
    zeros = np.zeros_like(spatial.linear_velocity_data)
    return SpatialState(
        spatial.spatial_space, spatial.position_data, spatial.orientation_data, zeros, zeros, valid
    )
