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
``moveTarget(pos, ms)``       :meth:`IkTarget.move_target` (seconds; ms with three.js's)
``syncTargetToSite()``        :meth:`IkTarget.sync_target_to_site`
``solveIK({position, ...})``  :meth:`IkTarget.solve_ik`
``getGizmoStats()``           :meth:`IkTarget.gizmo_stats`, :meth:`IkTarget.target_pose`
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
joint positions that function returns (:mod:`pinkctl.view.solve_fn`). Disabled, it writes
nothing, so whatever the user writes into ``data.ctrl`` reaches the servos untouched. Where
the target is and how it moves by itself (animations, trajectories) is
:class:`~pinkctl.view.moving_target.MovingTarget`, which :class:`IkTarget` extends. Positions
are in metres and quaternions (w, x, y, z), in the world frame, or, for a target built with
``conventions="threejs"``, as three.js writes them (:mod:`pinkctl.view.conventions`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .._validation import callable_or_none, positive_number
from ..controllers import ControllerStatus, PinkIKController
from ..core.poses import checked_pose, quaternion_angle, se3_to_pose
from ..core.robot import PinkRobot
from ..core.state import JointState, RobotState, SpatialState
from ..errors import InputError
from ..ik import IKTarget
from .chain import (
    JointSelection,
    Selector,
    chain_robot,
    position_servo_gains,
    select_joints,
    target_site,
)
from .conventions import Conventions
from .moving_target import MovingTarget
from .site_query import SiteQuery
from .solve_fn import IkSolveFn, call_solve_fn

if TYPE_CHECKING:
    from ..sim import MujocoSimulation

__all__ = ["IkSolveFn", "IkTarget"]


class IkTarget(MovingTarget):
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
        solver: QP solver of the built-in step (:mod:`pinkctl.qp.solvers`).
        position_cost: Frame-task position cost [cost]/[m].
        orientation_cost: Frame-task orientation cost [cost]/[rad] (0: position only).
        posture_cost: Posture-task cost toward the robot's home [cost]/[rad].
        integrate_from: ``"command"`` (default, best tracking with position servos) or
            ``"measured"``; see :class:`~pinkctl.controllers.PinkIKController`.
        marker: Name of a mocap body that shows the target in MuJoCo (e.g.
            ``"pinkctl_target"``), or None.
        conventions: ``"pinkctl"`` (default) or ``"threejs"``: the quaternion order, Euler
            angles and duration unit of :meth:`move_target`, :meth:`solve_ik`,
            :meth:`gizmo_stats` and ``ik_solve_fn`` (:mod:`pinkctl.view.conventions`).

    Raises:
        ValueError: Unknown site, joints or actuators, no robot and no ``ik_solve_fn``, a
            site or joint the robot model lacks, a bad cost or period, an unknown marker or
            conventions.

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
        solver: str = "box",
        position_cost: float = 1.0,
        orientation_cost: float = 1.0,
        posture_cost: float = 1e-3,
        integrate_from: Literal["measured", "command"] = "command",
        marker: str | None = None,
        conventions: str | Conventions = "pinkctl",
    ) -> None:
        robot = sim.robot if robot is None else robot
        if robot is not None and not isinstance(robot, PinkRobot):
            raise InputError(f"robot must be a PinkRobot, got {type(robot).__name__}")
        site = target_site(sim, robot, site)
        callable_or_none(ik_solve_fn, "ik_solve_fn")
        if robot is None and ik_solve_fn is None:
            raise InputError("an IkTarget needs a robot (sim.robot or robot=) or an ik_solve_fn")
        selection = select_joints(sim.model, site, joints=joints, actuators=actuators)
        dt = sim.timestep if dt is None else positive_number(dt, "dt")
        self.selection: JointSelection = selection
        self.robot = robot
        self._ik_solve_fn = ik_solve_fn
        self._enabled = bool(enabled)
        self._controller: PinkIKController | None = None
        self._home = np.zeros(len(selection.joint_names))
        self._home_pose: tuple[np.ndarray, np.ndarray] | None = None
        self._query: SiteQuery | None = None
        if robot is not None:
            self._controller = PinkIKController(
                chain_robot(robot, selection.joint_names, site),
                sim.joint_names,
                [site],
                dt=dt,
                solver=solver,
                position_cost=position_cost,
                orientation_cost=orientation_cost,
                posture_cost=posture_cost,
                integrate_from=integrate_from,
                world=sim.world,  # the simulation's obstacles, avoided
            )
            self._home, self._home_pose = _home_of(robot, selection.joint_names, site)
            self._query = SiteQuery(robot, sim, site, list(selection.joint_names))
        self._feed_forward = position_servo_gains(sim.model, selection.actuator_ids)
        self._lower, self._upper = sim.joint_position_limits(selection.joint_names)
        self._needs_reset = True
        self._setpoint: RobotState | None = None
        self.last_error: str | None = None
        #: Number of commands this target has written to the servos.
        self.commands_written = 0
        #: The last joint positions it commanded (None before the first).
        self.last_command: np.ndarray | None = None
        super().__init__(sim, site, marker, conventions)

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

    # ------------------------------------------------------------------ the target
    def _set_pose(
        self, position: np.ndarray, quaternion: np.ndarray, linear: np.ndarray, angular: np.ndarray
    ) -> None:
        self._setpoint = None  # rebuilt from the new pose on the next tick
        super()._set_pose(position, quaternion, linear, angular)

    def sync_target_to_site(self) -> None:
        """Snap the target to the site's current pose (the seed's ``syncTargetToSite``).

        Stops any animation or trajectory, and restarts the built-in controller from the
        measured joints on the next tick: use it after changing joint positions by hand.
        """
        self._snap_to_site()
        self._needs_reset = True

    # ------------------------------------------------------------------ errors
    def tracking_error(self) -> tuple[float, float]:
        """``(position error [m], orientation error [rad])`` between the site and the target."""
        position, quaternion = self.sim.get_site_pose(self.site)
        return (
            float(np.linalg.norm(position - self._position)),
            quaternion_angle(quaternion, self._quaternion),
        )

    # ------------------------------------------------------------------ solving
    def _measured_q(self) -> np.ndarray:
        return self.sim.data.qpos[list(self.selection.qpos_addresses)].copy()

    def _call_hook(
        self, position: np.ndarray, quaternion: np.ndarray | None, current_q: np.ndarray
    ) -> tuple[np.ndarray | None, str | None]:
        hook = self._ik_solve_fn
        assert hook is not None
        if quaternion is not None and self.conventions.quaternion_order == "xyzw":
            quaternion = quaternion[[1, 2, 3, 0]]  # checked poses are unit with w >= 0
        return call_solve_fn(hook, position, quaternion, current_q)

    def solve_ik(
        self,
        position: ArrayLike,
        quaternion: ArrayLike | None = None,
        current_q: ArrayLike | None = None,
        *,
        euler: ArrayLike | None = None,
    ) -> np.ndarray | None:
        """Joint positions that put the site at a pose, without touching the simulation
        (the seed's ``solveIK``).

        Uses ``ik_solve_fn`` when set; otherwise a local solve from ``current_q``
        (:class:`~pinkctl.ik.IKSolver`, Levenberg–Marquardt, tolerance 1e-5) and, if that
        fails, a deterministic global search (random restarts, seed 0).

        Args:
            position: Goal position [m], world frame.
            quaternion: Goal orientation, (w, x, y, z), or (x, y, z, w) with
                ``conventions="threejs"``; None (and no ``euler``): position only.
            current_q: Start, one value per joint of :attr:`joint_names`; default: the
                simulation's current joint positions (only read).
            euler: Goal orientation as Euler angles [rad] instead of ``quaternion``
                (roll/pitch/yaw, or three.js XYZ with ``conventions="threejs"``).

        Returns:
            Positions of :attr:`joint_names`, or None when no solution was found.

        Raises:
            ValueError: Malformed position, quaternion or ``current_q``.
        """
        quaternion = self._orientation(quaternion, euler)
        goal_position, goal_quaternion = checked_pose(
            position, (1.0, 0.0, 0.0, 0.0) if quaternion is None else quaternion
        )
        start = self._start(current_q)
        q_goal = None if quaternion is None else goal_quaternion
        if self._ik_solve_fn is not None:  # a query does not change the loop's last_error
            return self._call_hook(goal_position, q_goal, start.copy())[0]
        assert self._query is not None
        target: IKTarget = goal_position if q_goal is None else (goal_position, q_goal)
        return self._query.solve(target, start)

    def _start(self, current_q: ArrayLike | None) -> np.ndarray:
        """A query's start: ``current_q`` checked, else the measured joint positions."""
        if current_q is None:
            return self._measured_q()
        n = len(self.selection.joint_names)
        start = np.asarray(current_q, dtype=float).reshape(-1)
        if start.size != n or not np.all(np.isfinite(start)):
            raise InputError(f"current_q must hold {n} finite joint positions")
        return start

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
            return self._step_hook()
        return self._step_controller(t, estimated)

    def _step_hook(self) -> bool:
        q, self.last_error = self._call_hook(self._position, self._quaternion, self._measured_q())
        if q is not None:
            self._write(np.clip(q, self._lower, self._upper), None)
        return q is not None

    def _step_controller(self, t: float, estimated: RobotState | None) -> bool:
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


def _home_of(
    robot: PinkRobot, joint_names: tuple[str, ...], site: str
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The home positions of ``joint_names`` and the pose of ``site`` at the robot's home."""
    home = robot.home_positions()
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    pose = se3_to_pose(data.oMf[robot.model.getFrameId(site)])
    return np.array([home.get(n, 0.0) for n in joint_names]), pose
