"""IkTarget: a draggable IK target on one site, and the controller that drives the arm to it.

This is the Python form of the MuJoCo/React seed's ``useIkController`` hook (its return value,
``IkContextValue``). One :class:`IkTarget` per site; several targets live side by side in one
scene (a dual-arm robot gets one per arm), each driving its own joints.

============================  ==============================================================
seed (``IkContextValue``)     pinkctl
============================  ==============================================================
``useIkController(config)``   ``IkTarget(sim, site=..., joints=..., actuators=...)``
``siteName``                  ``site``
``setIkEnabled(enabled)``     :meth:`IkTarget.set_ik_enabled` / :attr:`IkTarget.enabled`
``moveTarget(pos, ms)``       :meth:`IkTarget.move_target` (duration in **seconds**)
``syncTargetToSite()``        :meth:`IkTarget.sync_target_to_site`
``solveIK({position, ...})``  :meth:`IkTarget.solve_ik`
``getGizmoStats()``           :meth:`IkTarget.target_pose` (position, quaternion, roll/pitch/yaw)
``ikSolveFn``                 ``ik_solve_fn`` (argument and attribute)
``joints`` / ``actuators``    ``joints=`` / ``actuators=`` (names or regular expressions)
``useBeforePhysicsStep``      :meth:`IkTarget.step`, called by
                              :class:`~pinkctl.view.scene.InteractiveScene` each control tick
============================  ==============================================================

Each control tick, when enabled, the target writes the servo commands (``data.ctrl``) of its
actuators: by default from a :class:`~pinkctl.controllers.PinkIKController` tick (one QP,
motion limits, braking on failure: see the README's "The controller" and "Safety") over the
selected joints, integrating its own command (``integrate_from="command"``) toward the
target pose with a posture task toward the robot's home; or, with ``ik_solve_fn``, from the
joint positions that function returns. Disabled, it writes nothing, so whatever the user
writes into ``data.ctrl`` reaches the servos untouched. Positions are in metres and
quaternions (w, x, y, z), in the world frame.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import mujoco
import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .._validation import callable_or_none, real_number
from ..controllers import ControllerStatus, PinkIKController
from ..core.poses import se3_to_pose
from ..core.robot import PinkRobot
from ..core.state import JointState, RobotState, SpatialState
from ..errors import InputError
from ..ik import IKSolver
from ..trajectories import Trajectory
from .chain import JointSelection, Selector, position_servo_gains, select_joints
from .motion import MinimumJerkMove
from .pose import TargetPose, checked_pose, orientation_distance

if TYPE_CHECKING:
    from ..sim import MujocoSimulation

__all__ = ["IkSolveFn", "IkTarget"]

#: ``ik_solve_fn(position, quaternion, current_q) -> q | None``: position (3,) [m] and
#: quaternion (w, x, y, z) of the target (world frame; the quaternion is None only from
#: :meth:`IkTarget.solve_ik` without one), ``current_q`` the selected joints' positions;
#: returns the selected joints' positions, or None when it has no answer.
IkSolveFn = Callable[[np.ndarray, "np.ndarray | None", np.ndarray], "ArrayLike | None"]


def _chain_robot(robot: PinkRobot, joints: tuple[str, ...], site: str) -> PinkRobot:
    """A copy of ``robot`` that controls ``joints`` with ``site`` as tool frame."""
    model = robot.model
    for name in joints:
        if not model.existJointName(name) or model.joints[model.getJointId(name)].nv != 1:
            raise InputError(f"joint {name!r} is not a one-coordinate joint of the robot model")
    if not model.existFrame(site):
        raise InputError(f"site {site!r} is not a frame of the robot model")
    velocity = {
        n: robot.velocity_limits.get(
            n, float(model.velocityLimit[model.joints[model.getJointId(n)].idx_v])
        )
        for n in joints
    }
    acceleration: dict[str, float] = {}
    jerk: dict[str, float] = {}
    if all(n in robot.acceleration_limits for n in joints):
        acceleration = {n: robot.acceleration_limits[n] for n in joints}
        if all(n in robot.jerk_limits for n in joints):
            jerk = {n: robot.jerk_limits[n] for n in joints}
    return dataclasses.replace(
        robot,
        controlled_joint_names=list(joints),
        tool_frame=site,
        gripper_joint_names=[],
        velocity_limits=velocity,
        acceleration_limits=acceleration,
        jerk_limits=jerk,
    )


def _site_sample(
    state: RobotState | None, site: str
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray] | None:
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


class IkTarget:
    """An interactive IK target on one site of a :class:`~pinkctl.sim.MujocoSimulation`.

    Args:
        sim: The simulation whose actuators this target commands (its ``robot`` is the
            default ``robot``).
        site: Site (and Pinocchio frame) to move; default: the robot's tool frame, else the
            simulation's first site.
        robot: Pinocchio robot for the built-in QP step and :meth:`solve_ik`; default
            ``sim.robot``. Needed unless ``ik_solve_fn`` is given.
        joints: Joint names or a regular expression (see :mod:`pinkctl.view.chain`); default:
            the site's kinematic chain.
        actuators: Actuator names or a regular expression, instead of ``joints``.
        ik_solve_fn: Custom solver used instead of the built-in QP step (:data:`IkSolveFn`).
        enabled: Whether the IK writes the commands from the start.
        dt: Control period [s]; default: the simulation's timestep.
        solver: QP backend of the built-in step (any installed qpsolvers name).
        position_cost: Frame-task position cost [cost]/[m].
        orientation_cost: Frame-task orientation cost [cost]/[rad] (0: position only).
        posture_cost: Posture-task cost toward the robot's home [cost]/[rad].
        integrate_from: ``"command"`` (default, best tracking with position servos) or
            ``"measured"``; see :class:`~pinkctl.controllers.PinkIKController`.
        marker: Name of a mocap body that shows the target in MuJoCo (e.g.
            ``"pinkctl_target"``), or None.

    Raises:
        ValueError: Unknown site, joints or actuators, no robot and no ``ik_solve_fn``, a
            site or joint the robot model lacks, a bad cost or period, an unknown marker.

    Not thread-safe: :class:`~pinkctl.view.scene.InteractiveScene` guards it with its lock.
    """

    def __init__(
        self,
        sim: MujocoSimulation,
        *,
        site: str | None = None,
        robot: PinkRobot | None = None,
        joints: Selector | None = None,
        actuators: Selector | None = None,
        ik_solve_fn: IkSolveFn | None = None,
        enabled: bool = True,
        dt: float | None = None,
        solver: str = "daqp",
        position_cost: float = 1.0,
        orientation_cost: float = 1.0,
        posture_cost: float = 1e-3,
        integrate_from: Literal["measured", "command"] = "command",
        marker: str | None = None,
    ) -> None:
        robot = sim.robot if robot is None else robot
        if robot is not None and not isinstance(robot, PinkRobot):
            raise InputError(f"robot must be a PinkRobot, got {type(robot).__name__}")
        if site is None:
            site = robot.tool_frame if robot is not None and robot.tool_frame else None
            site = site or (sim.site_names[0] if sim.site_names else None)
        if not isinstance(site, str) or site not in sim.site_names:
            raise InputError(f"site {site!r} is not a site of the simulation: {sim.site_names}")
        callable_or_none(ik_solve_fn, "ik_solve_fn")
        if robot is None and ik_solve_fn is None:
            raise InputError("an IkTarget needs a robot (sim.robot or robot=) or an ik_solve_fn")
        selection = select_joints(sim.model, site, joints=joints, actuators=actuators)
        dt = sim.timestep if dt is None else real_number(dt, "dt", low=0.0, low_open=True)
        self.sim = sim
        self.site = site
        self.selection: JointSelection = selection
        self.robot = robot
        self._ik_solve_fn = ik_solve_fn
        self._enabled = bool(enabled)
        self._controller: PinkIKController | None = None
        self._home = np.zeros(len(selection.joint_names))
        self._home_pose: tuple[np.ndarray, np.ndarray] | None = None
        if robot is not None:
            chain = _chain_robot(robot, selection.joint_names, site)
            self._controller = PinkIKController(
                chain,
                sim.joint_names,
                [site],
                dt=dt,
                solver=solver,
                position_cost=position_cost,
                orientation_cost=orientation_cost,
                posture_cost=posture_cost,
                integrate_from=integrate_from,
            )
            home = robot.home_positions()
            self._home = np.array([home.get(n, 0.0) for n in selection.joint_names])
            data = robot.model.createData()
            pin.framesForwardKinematics(robot.model, data, robot.q0)
            self._home_pose = se3_to_pose(data.oMf[robot.model.getFrameId(site)])
        self._feed_forward = position_servo_gains(sim.model, selection.actuator_ids)
        model = sim.model
        addresses = [model.joint(n).id for n in selection.joint_names]
        limited = model.jnt_limited[addresses].astype(bool)
        ranges = model.jnt_range[addresses]
        self._lower = np.where(limited, ranges[:, 0], -np.inf)
        self._upper = np.where(limited, ranges[:, 1], np.inf)
        self._mocap = -1
        if marker is not None:
            body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, marker)
            if body < 0 or model.body_mocapid[body] < 0:
                raise InputError(f"marker {marker!r} is not a mocap body of the model")
            self._mocap = int(model.body_mocapid[body])
        self._ik_solvers: dict[bool, IKSolver] = {}
        self._needs_reset = True
        self._motion: MinimumJerkMove | None = None
        self._trajectory: Trajectory | None = None
        self._trajectory_start = 0.0
        self._setpoint: RobotState | None = None
        self.last_error: str | None = None
        #: Number of commands this target has written to the servos.
        self.commands_written = 0
        #: The last joint positions it commanded (None before the first).
        self.last_command: np.ndarray | None = None
        position, quaternion = sim.get_site_pose(site)
        self._set_pose(position, quaternion, np.zeros(3), np.zeros(3))

    # ------------------------------------------------------------------ properties
    @property
    def joint_names(self) -> list[str]:
        """The joints this target drives, in command order (the seed's ``joints``)."""
        return list(self.selection.joint_names)

    @property
    def actuator_names(self) -> list[str]:
        """The actuators it writes, matching :attr:`joint_names` (the seed's ``actuators``)."""
        return list(self.selection.actuator_names)

    @property
    def controller(self) -> PinkIKController | None:
        """The built-in QP controller (None without a robot); its settings may be changed."""
        return self._controller

    @property
    def enabled(self) -> bool:
        """Whether the IK writes the commands each tick (the seed's ``setIkEnabled``)."""
        return self._enabled

    def set_ik_enabled(self, enabled: bool) -> None:
        """Turn the IK on or off (the seed's ``setIkEnabled``).

        Off: the target writes nothing; commands the user writes reach the servos untouched.
        On again: the built-in controller restarts from the measured joints at rest (the
        command sequence is continuous with what the arm does), toward the current target.
        """
        if not isinstance(enabled, (bool, np.bool_)):
            raise InputError(f"enabled must be a bool, got {enabled!r}")
        if enabled and not self._enabled:
            self._needs_reset = True
        self._enabled = bool(enabled)

    @property
    def ik_solve_fn(self) -> IkSolveFn | None:
        """Custom solver used instead of the built-in QP step, or None (seed: ``ikSolveFn``)."""
        return self._ik_solve_fn

    @ik_solve_fn.setter
    def ik_solve_fn(self, value: IkSolveFn | None) -> None:
        callable_or_none(value, "ik_solve_fn")
        if value is None and self._controller is None:
            raise InputError("this target has no robot: it needs an ik_solve_fn")
        if value is None and self._ik_solve_fn is not None:
            self._needs_reset = True
        self._ik_solve_fn = value

    @property
    def status(self) -> str:
        """``"disabled"``, ``"ok"``, ``"braking"``, ``"not_ready"`` or ``"error"``."""
        if not self._enabled:
            return "disabled"
        if self._ik_solve_fn is not None or self._controller is None:
            return "error" if self.last_error else "ok"
        status = self._controller.status
        return status.value if isinstance(status, ControllerStatus) else str(status)

    @property
    def home_pose(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Pose of the site at the robot's home configuration (None without a robot)."""
        if self._home_pose is None:
            return None
        return self._home_pose[0].copy(), self._home_pose[1].copy()

    @property
    def following(self) -> bool:
        """Whether the target follows a trajectory (see :meth:`follow_trajectory`)."""
        return self._trajectory is not None

    @property
    def animating(self) -> bool:
        """Whether a :meth:`move_target` animation is running."""
        return self._motion is not None

    # ------------------------------------------------------------------ the target
    def _set_pose(
        self, position: np.ndarray, quaternion: np.ndarray, linear: np.ndarray, angular: np.ndarray
    ) -> None:
        self._position = position
        self._quaternion = quaternion
        self._linear = linear
        self._angular = angular
        self._setpoint = None
        if self._mocap >= 0:
            self.sim.data.mocap_pos[self._mocap] = position
            self.sim.data.mocap_quat[self._mocap] = quaternion

    def target_pose(self) -> TargetPose:
        """The target's pose and velocity (the seed's ``getGizmoStats``)."""
        return TargetPose.from_pose(self._position, self._quaternion, self._linear, self._angular)

    def move_target(
        self,
        position: ArrayLike,
        quaternion: ArrayLike | None = None,
        duration: float | None = None,
    ) -> None:
        """Move the target (the seed's ``moveTarget``); stops any animation or trajectory.

        Args:
            position: Goal position [m], world frame.
            quaternion: Goal orientation (w, x, y, z); None keeps the current orientation.
            duration: None or 0: jump there now. Otherwise a minimum-jerk animation of this
                many **seconds** of simulation time (the seed takes milliseconds), starting
                now, with zero velocity and acceleration at both ends.

        Raises:
            ValueError: Malformed pose or negative duration (nothing changes).
        """
        goal_position, goal_quaternion = checked_pose(
            position, self._quaternion if quaternion is None else quaternion
        )
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

    def sync_target_to_site(self) -> None:
        """Snap the target to the site's current pose (the seed's ``syncTargetToSite``).

        Stops any animation or trajectory, and restarts the built-in controller from the
        measured joints on the next tick: use it after changing joint positions by hand.
        """
        position, quaternion = self.sim.get_site_pose(self.site)
        self._trajectory = None
        self._motion = None
        self._set_pose(*checked_pose(position, quaternion), np.zeros(3), np.zeros(3))
        self._needs_reset = True

    def follow_trajectory(self, trajectory: Trajectory, *, start_time: float | None = None) -> None:
        """Let the target follow a Cartesian trajectory of this site (figure-eight, circle,
        a recorded session) from ``start_time`` (default: now) on simulation time.

        The trajectory's relative time is ``t - start_time``. When it ends the target stays
        at its last pose. :meth:`move_target` (a gizmo drag) and :meth:`sync_target_to_site`
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
            relative = t - self._trajectory_start
            if relative >= self._trajectory.duration:
                relative = self._trajectory.duration
                sample = _site_sample(self._trajectory.get_target_state(relative), self.site)
                self._trajectory = None
            else:
                sample = _site_sample(
                    self._trajectory.get_target_state(max(relative, 0.0)), self.site
                )
            if sample is not None:
                position, quaternion, linear, angular = sample
                if quaternion is None:
                    quaternion = self._quaternion
                if self._trajectory is None:
                    linear, angular = np.zeros(3), np.zeros(3)
                self._set_pose(*checked_pose(position, quaternion), linear, angular)

    # ------------------------------------------------------------------ errors
    def tracking_error(self) -> tuple[float, float]:
        """``(position error [m], orientation error [rad])`` between the site and the target."""
        position, quaternion = self.sim.get_site_pose(self.site)
        return (
            float(np.linalg.norm(position - self._position)),
            orientation_distance(quaternion / np.linalg.norm(quaternion), self._quaternion),
        )

    # ------------------------------------------------------------------ solving
    def _measured_q(self) -> np.ndarray:
        return self.sim.data.qpos[list(self.selection.qpos_addresses)].copy()

    def _answer(self, answer: Any) -> np.ndarray | None:
        """A custom solver's answer as joint positions, or None (reason in ``last_error``)."""
        if answer is None:
            self.last_error = "ik_solve_fn returned None: the last command is kept"
            return None
        try:
            q = np.asarray(answer, dtype=float).reshape(-1)
        except (TypeError, ValueError) as exc:
            self.last_error = f"ik_solve_fn returned something that is not numbers: {exc}"
            return None
        if q.size != len(self.selection.joint_names) or not np.all(np.isfinite(q)):
            self.last_error = (
                f"ik_solve_fn returned {q.size} values (finite: {bool(np.all(np.isfinite(q)))}); "
                f"expected {len(self.selection.joint_names)} finite joint positions"
            )
            return None
        return q

    def _call_hook(
        self, position: np.ndarray, quaternion: np.ndarray | None, current_q: np.ndarray
    ) -> np.ndarray | None:
        hook = self._ik_solve_fn
        assert hook is not None
        try:
            answer = hook(
                position.copy(), None if quaternion is None else quaternion.copy(), current_q
            )
        except Exception as exc:  # a user function must not kill the control loop
            self.last_error = f"ik_solve_fn raised {type(exc).__name__}: {exc}"
            return None
        return self._answer(answer)

    def solve_ik(
        self,
        position: ArrayLike,
        quaternion: ArrayLike | None = None,
        current_q: ArrayLike | None = None,
    ) -> np.ndarray | None:
        """Joint positions that put the site at a pose, without touching the simulation
        (the seed's ``solveIK``).

        Uses ``ik_solve_fn`` when set; otherwise a local solve from ``current_q``
        (:class:`~pinkctl.ik.IKSolver`, Levenberg–Marquardt, tolerance 1e-5) and, if that
        fails, a deterministic global search (random restarts, seed 0).

        Args:
            position: Goal position [m], world frame.
            quaternion: Goal orientation (w, x, y, z); None: position only (orientation free).
            current_q: Start, one value per joint of :attr:`joint_names`; default: the
                simulation's current joint positions (only read).

        Returns:
            Positions of :attr:`joint_names`, or None when no solution was found.

        Raises:
            ValueError: Malformed position, quaternion or ``current_q``.
        """
        goal_position, goal_quaternion = checked_pose(
            position, (1.0, 0.0, 0.0, 0.0) if quaternion is None else quaternion
        )
        n = len(self.selection.joint_names)
        if current_q is None:
            start = self._measured_q()
        else:
            start = np.asarray(current_q, dtype=float).reshape(-1)
            if start.size != n or not np.all(np.isfinite(start)):
                raise InputError(f"current_q must hold {n} finite joint positions")
        q_goal = None if quaternion is None else goal_quaternion
        if self._ik_solve_fn is not None:
            error = self.last_error
            answer = self._call_hook(goal_position, q_goal, start.copy())
            self.last_error = error  # a query does not change the loop's state
            return answer
        assert self.robot is not None
        solver = self._ik_solvers.get(q_goal is None)
        if solver is None:
            solver = IKSolver(
                self.robot,
                frame=self.site,
                joint_names=self.joint_names,
                position_only=q_goal is None,
            )
            self._ik_solvers[q_goal is None] = solver
        model, qpos = self.sim.model, self.sim.data.qpos
        known = self.robot.home_positions()
        seed = {
            name: float(qpos[model.joint(name).qposadr[0]])
            for name in self.sim.joint_names
            if name in known and name not in self.joint_names
        }
        seed.update(zip(self.joint_names, start.tolist(), strict=True))
        target: Any = goal_position if q_goal is None else (goal_position, q_goal)
        result = solver.solve(target, seed=seed, max_iterations=200)
        if not result.success:
            result = solver.find(target, seed=seed, time_budget_ms=None, max_restarts=50, rng=0)
        return np.array(result.q, dtype=float) if result.success else None

    # ------------------------------------------------------------------ the control tick
    def _setpoint_state(self) -> RobotState:
        if self._setpoint is None:
            site, names = [self.site], self.joint_names
            self._setpoint = RobotState(
                sites=SpatialState.from_name(
                    site,
                    positions=(site, self._position.reshape(1, 3)),
                    orientations=(site, self._quaternion.reshape(1, 4)),
                    linear_velocities=(site, self._linear.reshape(1, 3)),
                    angular_velocities=(site, self._angular.reshape(1, 3)),
                ),
                joints=JointState.from_name(names, positions=(names, self._home)),
            )
        return self._setpoint

    def _write(self, positions: np.ndarray, velocities: np.ndarray | None) -> None:
        ctrl = positions if velocities is None else positions + self._feed_forward * velocities
        self.sim.data.ctrl[list(self.selection.actuator_ids)] = ctrl
        self.last_command = positions.copy()
        self.commands_written += 1

    def step(self, t: float, estimated: RobotState | None = None) -> bool:
        """One control tick at simulation time ``t`` [s] (the seed's before-physics-step
        work): advance the target, then, when enabled, write this tick's commands.

        Args:
            t: Simulation time [s].
            estimated: The measured state (joints by name); default: read from the simulation.

        Returns:
            True when a command was written. False when disabled, or when no command could
            be formed (the previous one stays in force and ``last_error`` says why). Never
            raises for a runtime condition.
        """
        self.advance(t)
        if not self._enabled:
            return False
        if self._ik_solve_fn is not None:
            q = self._call_hook(self._position, self._quaternion, self._measured_q())
            if q is None:
                return False
            self.last_error = None
            self._write(np.clip(q, self._lower, self._upper), None)
            return True
        controller = self._controller
        assert controller is not None
        if estimated is None:
            estimated = self.sim.get_robot_state(site_space=[self.site])
        if self._needs_reset:
            if not controller.reset(estimated, None, t):
                self.last_error = controller.last_error or "controller reset failed"
                return False
            self._needs_reset = False
        desired = controller.forward(estimated, self._setpoint_state(), t)
        self.last_error = controller.last_error
        if desired is None or desired.joints is None:
            return False
        names = self.joint_names
        self._write(desired.joints.get_positions(names), desired.joints.get_velocities(names))
        return True
