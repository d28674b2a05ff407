"""MovingTarget: where an interactive target is, and how it moves by itself.

A target is a world pose and velocity on one site of a
:class:`~pinkctl.sim.MujocoSimulation`. It jumps (:meth:`MovingTarget.move_target` without a
duration), plays a minimum-jerk animation (:class:`~pinkctl.view.motion.MinimumJerkMove`), or
follows a Cartesian :class:`~pinkctl.trajectories.Trajectory` of its site, all on simulation
time; :meth:`MovingTarget.advance` moves it to a given time. An optional mocap body shows it
in MuJoCo. :class:`~pinkctl.view.target.IkTarget` adds the controller that drives the arm to
it. Positions are in metres and quaternions (w, x, y, z) with ``w >= 0``, in the world frame;
with ``conventions="threejs"`` (:mod:`pinkctl.view.conventions`), :meth:`MovingTarget.move_target`
and :meth:`MovingTarget.gizmo_stats` speak three.js instead: (x, y, z, w) quaternions, XYZ
Euler angles, durations in milliseconds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np
from numpy.typing import ArrayLike

from .._validation import real_number
from ..core.poses import checked_pose
from ..core.state import RobotState
from ..errors import InputError
from ..trajectories import Trajectory
from .conventions import Conventions, GizmoStats, as_conventions
from .motion import MinimumJerkMove
from .pose import TargetPose

if TYPE_CHECKING:
    from ..sim import MujocoSimulation

__all__ = ["MovingTarget"]

#: A site's sample of a trajectory: position, orientation (None if absent), linear and
#: angular velocity.
_SiteSample = tuple[np.ndarray, "np.ndarray | None", np.ndarray, np.ndarray]


def _site_sample(state: RobotState | None, site: str) -> _SiteSample | None:
    """Position, orientation (None if absent) and velocities of ``site`` in a setpoint."""
    sites = None if state is None else state.sites
    if sites is None:
        return None
    position = sites.get_position(site)
    if position is None:
        return None
    velocities = []
    for names, values in (
        (sites.linear_velocity_names, sites.linear_velocities),
        (sites.angular_velocity_names, sites.angular_velocities),
    ):
        has = values is not None and site in names
        velocities.append(values[names.index(site)].copy() if has else np.zeros(3))  # type: ignore[index]
    return position, sites.get_orientation(site), velocities[0], velocities[1]


class MovingTarget:
    """A target pose on one site, moved by jumps, animations and trajectories.

    Args:
        sim: The simulation (its clock and, for the marker, its mocap data).
        site: The site the target is for; the target starts at its current pose.
        marker: Name of a mocap body that shows the target, or None.
        conventions: ``"pinkctl"`` or ``"threejs"``: how :meth:`move_target` reads and
            :meth:`gizmo_stats` writes quaternions, Euler angles and durations.

    Raises:
        ValueError: An unknown marker or conventions.
    """

    def __init__(
        self,
        sim: MujocoSimulation,
        site: str,
        marker: str | None,
        conventions: str | Conventions = "pinkctl",
    ) -> None:
        #: The conventions of :meth:`move_target` and :meth:`gizmo_stats`
        #: (:mod:`pinkctl.view.conventions`).
        self.conventions = as_conventions(conventions)
        self.sim = sim
        self.site = site
        self._mocap = -1
        if marker is not None:
            model = sim.model
            body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, marker)
            if body < 0 or model.body_mocapid[body] < 0:
                raise InputError(f"marker {marker!r} is not a mocap body of the model")
            self._mocap = int(model.body_mocapid[body])
        self._motion: MinimumJerkMove | None = None
        self._trajectory: Trajectory | None = None
        self._trajectory_start = 0.0
        position, quaternion = sim.get_site_pose(site)
        self._set_pose(position, quaternion, np.zeros(3), np.zeros(3))

    @property
    def following(self) -> bool:
        """Whether the target follows a trajectory (see :meth:`follow_trajectory`)."""
        return self._trajectory is not None

    @property
    def animating(self) -> bool:
        """Whether a :meth:`move_target` animation is running."""
        return self._motion is not None

    def _set_pose(
        self, position: np.ndarray, quaternion: np.ndarray, linear: np.ndarray, angular: np.ndarray
    ) -> None:
        """Put the target at a checked pose with a velocity (and the marker with it)."""
        self._position = position
        self._quaternion = quaternion
        self._linear = linear
        self._angular = angular
        if self._mocap >= 0:
            self.sim.data.mocap_pos[self._mocap] = position
            self.sim.data.mocap_quat[self._mocap] = quaternion

    def target_pose(self) -> TargetPose:
        """The target's pose and velocity, in pinkctl's conventions whatever the target's:
        (w, x, y, z), roll/pitch/yaw (see :meth:`gizmo_stats` for the target's own)."""
        return TargetPose.from_pose(self._position, self._quaternion, self._linear, self._angular)

    def gizmo_stats(self) -> GizmoStats:
        """The target's position, Euler angles and quaternion in the target's conventions
        (the seed's ``getGizmoStats()``: ``pos`` and ``rot``, a ``THREE.Euler`` with
        ``conventions="threejs"``)."""
        return self.conventions.gizmo_stats(self._position, self._quaternion)

    def move_target(
        self,
        position: ArrayLike,
        quaternion: ArrayLike | None = None,
        duration: float | None = None,
        *,
        euler: ArrayLike | None = None,
    ) -> None:
        """Move the target (the seed's ``moveTarget``); stops any animation or trajectory.

        Args:
            position: Goal position [m], world frame.
            quaternion: Goal orientation, (w, x, y, z), or (x, y, z, w) with
                ``conventions="threejs"``; None (and no ``euler``) keeps the orientation.
            duration: None or 0: jump there now. Otherwise a minimum-jerk animation over
                this long, in seconds, or in milliseconds (the seed's unit) with
                ``conventions="threejs"``, of simulation time, starting now, with zero
                velocity and acceleration at both ends.
            euler: Goal orientation as Euler angles [rad] instead of ``quaternion``:
                roll/pitch/yaw, or three.js XYZ with ``conventions="threejs"``.

        Raises:
            ValueError: Malformed pose, both ``quaternion`` and ``euler``, or a negative
                duration (nothing changes).
        """
        goal = self._orientation(quaternion, euler)
        seconds = None
        if duration is not None:
            seconds = self.conventions.seconds(real_number(duration, "duration", low=0.0))
        self._move(position, self._quaternion if goal is None else goal, seconds)

    def _orientation(self, quaternion: ArrayLike | None, euler: ArrayLike | None) -> Any:
        """A (w, x, y, z) orientation from a quaternion or Euler angles in the target's
        conventions (not normalised), or None when neither is given."""
        if quaternion is not None and euler is not None:
            raise InputError("give the orientation as quaternion or as euler, not both")
        if quaternion is not None:
            return self.conventions.quaternion_in(quaternion)
        return None if euler is None else self.conventions.euler_in(euler)

    def _move(
        self, position: ArrayLike, quaternion_wxyz: ArrayLike, duration: float | None
    ) -> None:
        """:meth:`move_target` in pinkctl's conventions whatever the target's: (w, x, y, z),
        seconds. The scene, the web page and MuJoCo's viewer move targets through it."""
        goal_position, goal_quaternion = checked_pose(position, quaternion_wxyz)
        if duration is not None:
            duration = real_number(duration, "duration", low=0.0)
        self._trajectory = None
        if not duration:
            self._motion = None
            self._set_pose(goal_position, goal_quaternion, np.zeros(3), np.zeros(3))
            return
        self._motion = MinimumJerkMove(
            start_position=self._position,
            start_quaternion=self._quaternion,
            goal_position=goal_position,
            goal_quaternion=goal_quaternion,
            start_time=self.sim.time,
            duration=duration,
        )

    def _snap_to_site(self) -> None:
        """Stop any animation or trajectory and put the target at rest on the site."""
        position, quaternion = self.sim.get_site_pose(self.site)
        self._trajectory = None
        self._motion = None
        self._set_pose(*checked_pose(position, quaternion), np.zeros(3), np.zeros(3))

    def follow_trajectory(self, trajectory: Trajectory, *, start_time: float | None = None) -> None:
        """Let the target follow a Cartesian trajectory of this site (figure-eight, circle,
        a recorded session) from ``start_time`` (default: now) on simulation time.

        The trajectory's relative time is ``t - start_time``. When it ends the target stays
        at its last pose. :meth:`move_target` (a gizmo drag) and ``sync_target_to_site``
        override it.

        Raises:
            ValueError: If ``trajectory`` is not a Trajectory.
        """
        if not isinstance(trajectory, Trajectory):
            raise InputError(f"trajectory must be a Trajectory, got {type(trajectory).__name__}")
        start = self.sim.time if start_time is None else real_number(start_time, "start_time")
        self._motion = None
        self._trajectory = trajectory
        self._trajectory_start = start

    def stop_trajectory(self) -> None:
        """Stop following the trajectory; the target stays where it is, at rest."""
        self._trajectory = None
        self._set_pose(self._position, self._quaternion, np.zeros(3), np.zeros(3))

    def advance(self, t: float) -> None:
        """Move the target along its animation or trajectory to time ``t`` [s]."""
        if self._motion is not None:
            self._set_pose(*self._motion.sample(t))
            if self._motion.finished(t):
                self._motion = None
        elif self._trajectory is not None:
            trajectory, relative = self._trajectory, t - self._trajectory_start
            ended = relative >= trajectory.duration
            at = trajectory.duration if ended else max(relative, 0.0)
            sample = _site_sample(trajectory.get_target_state(at), self.site)
            if ended:
                self._trajectory = None
            if sample is not None:
                position, quaternion, linear, angular = sample
                if quaternion is None:
                    quaternion = self._quaternion
                if self._trajectory is None:
                    linear, angular = np.zeros(3), np.zeros(3)
                self._set_pose(*checked_pose(position, quaternion), linear, angular)
