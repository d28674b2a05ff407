"""PinkIKController: reactive differential IK as one QP per control tick.

Each :meth:`PinkIKController.forward` solves

.. math::

    \\min_{v} \\; \\sum_i \\| J_i(q) v - \\alpha_i e_i(q) / \\Delta t \\|^2_{W_i}
        + \\lambda \\| v \\|^2
    \\quad \\text{s.t.} \\quad
    q_{\\min} \\le q \\oplus v \\Delta t \\le q_{\\max},\\;
    |v| \\le v_{\\max},\\; G v \\le h \\text{ (barriers, extra limits)}

over the velocities :math:`v` [rad/s] of the *controlled* joints only: a frame task on the tool
frame, a posture task, the user's extra tasks, pink's configuration and velocity limits plus the
user's, and the user's barriers. The command is :math:`q_{ref} \\oplus v \\Delta t` with its
velocity :math:`v`.

Which configuration the command is integrated from is a documented choice
(``integrate_from``):

* ``"measured"`` (default, the Isaac PINK extension's behaviour): the loop closes on the
  measured joint positions at every tick. Simple, but a position servo that sags under load
  sees a command that moves with it.
* ``"command"``: the controller integrates its own previous command (a kinematic reference
  trajectory). It tracks faster trajectories with position servos; other (uncontrolled) joints
  are still read from the measurement. :meth:`reset` re-seeds it from the measurement.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pinocchio as pin
import qpsolvers
from pink import Configuration
from pink.barriers import Barrier
from pink.limits import ConfigurationLimit, Limit, VelocityLimit
from pink.tasks import FrameTask, PostureTask, Task

from ..motion_limits import MotionLimitFilter, MotionLimits
from ..qp import EXACT_SOLVERS, DiffIKQP, QPSolveError, reference_solve_ik
from ..robot import PinkRobot
from ..state import RobotState
from ..transforms import JointSpaceMap, SitePoseReader
from .base import BaseController

__all__ = ["PinkIKController", "EXACT_SOLVERS"]


PreStepCallback = Callable[[Configuration, "RobotState | None"], None]


def _cost(value: Any, name: str) -> float | np.ndarray:
    """A non-negative scalar cost or a 3-vector of them."""
    arr = np.asarray(value, dtype=float) if value is not None else np.asarray(0.0)
    if arr.shape not in ((), (3,)):
        raise ValueError(f"{name} must be a scalar or a 3-vector, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return float(arr) if arr.shape == () else arr.copy()


def _check_states(estimated_state: Any, setpoint_state: Any) -> None:
    if not isinstance(estimated_state, RobotState):
        raise ValueError(
            f"estimated_state must be a RobotState, got {type(estimated_state).__name__}"
        )
    if setpoint_state is not None and not isinstance(setpoint_state, RobotState):
        raise ValueError(
            f"setpoint_state must be a RobotState or None, got {type(setpoint_state).__name__}"
        )


class PinkIKController(BaseController):
    """Reactive differential-IK controller (pink tasks, limits and barriers; one QP per tick).

    The API is the Isaac Sim PINK extension's: targets come from the setpoint's site poses and
    complete joint setpoints; the output is a :class:`~pinkctl.state.RobotState` with joint
    positions and velocities for the controlled joints.

    Args:
        pink_robot: Robot from :func:`~pinkctl.robot.load_pink_robot` or
            :func:`~pinkctl.robot.load_pink_supported_robot`.
        robot_joint_space: Ordered joint names of the robot as the caller sees it (e.g.
            ``MujocoSimulation.joint_names``). Must contain every controlled joint.
        robot_site_space: Ordered frame names the setpoints use; must contain the tool frame.
        tool_frame: End-effector frame of the frame task; None: the robot's configured tool
            frame, else the model's last frame.
        position_cost: Frame-task position cost [cost]/[m], scalar or per axis (tool frame).
        orientation_cost: Frame-task orientation cost [cost]/[rad], scalar or per axis.
        posture_cost: Posture-task cost [cost]/[rad]; 0 or None disables the posture task.
        damping: Tikhonov damping of the QP Hessian [cost]/[rad/s]^2.
        gain: Task gain in (0, 1] of the frame and posture tasks (1: dead-beat).
        lm_damping: Levenberg–Marquardt damping of the frame task.
        solver: QP backend; any installed qpsolvers name (default ``"daqp"``).
        extra_tasks: More pink tasks in the objective.
        extra_limits: More pink limits, added to the configuration and velocity limits.
        extra_barriers: pink barriers (e.g. ``SelfCollisionBarrier``, ``PositionBarrier``).
        pre_step_callback: ``callback(configuration, setpoint_state)`` called each tick after
            the configuration is updated and before the QP is solved.
        dt: Integration step [s] (the control period).
        integrate_from: ``"measured"`` or ``"command"`` (see the module docstring).
        qp_backend: ``"pinkctl"`` (the fast in-place QP layer) or ``"pink"`` (pink's own
            ``build_ik`` + qpsolvers; the reference path).
        fallback_solver: Second backend tried when the first one fails.
        solver_options: Extra keyword arguments for the backend.
        configuration_limit_gain: Gain of pink's configuration limit in (0, 1].
        motion_limits: Enforce joint acceleration and jerk limits on the command sequence
            (with position and velocity limits; see :mod:`pinkctl.motion_limits`). None
            (default): on when the robot declares acceleration limits (every bundled robot
            does), off otherwise; True: on with whatever the robot declares; False: off; or
            a :class:`~pinkctl.motion_limits.MotionLimits` over the controlled joints.

    Raises:
        ValueError: On an unknown tool frame, controlled joints missing from
            ``robot_joint_space``, negative costs, a non-positive ``dt``, or an unknown solver.
    """

    def __init__(
        self,
        pink_robot: PinkRobot,
        robot_joint_space: Sequence[str],
        robot_site_space: Sequence[str],
        *,
        tool_frame: str | None = None,
        position_cost: float | Sequence[float] = 1.0,
        orientation_cost: float | Sequence[float] = 1.0,
        posture_cost: float | None = 1e-3,
        damping: float = 1e-12,
        gain: float = 1.0,
        lm_damping: float = 0.0,
        solver: str = "daqp",
        extra_tasks: Sequence[Task] | None = None,
        extra_limits: Sequence[Limit] | None = None,
        extra_barriers: Sequence[Barrier] | None = None,
        pre_step_callback: PreStepCallback | None = None,
        dt: float,
        integrate_from: Literal["measured", "command"] = "measured",
        qp_backend: Literal["pinkctl", "pink"] = "pinkctl",
        fallback_solver: str | None = None,
        solver_options: dict[str, Any] | None = None,
        configuration_limit_gain: float = 0.5,
        motion_limits: bool | MotionLimits | None = None,
    ) -> None:
        super().__init__()
        model = pink_robot.model
        joint_space = list(robot_joint_space)
        site_space = list(robot_site_space)
        if len(set(joint_space)) != len(joint_space) or not joint_space:
            raise ValueError("robot_joint_space must be a non-empty list of unique joint names")
        controlled = list(pink_robot.controlled_joint_names)
        missing = [j for j in controlled if j not in joint_space]
        if missing:
            raise ValueError(
                f"controlled joints {missing} are not in robot_joint_space {joint_space}"
            )
        if tool_frame is None:
            tool_frame = pink_robot.tool_frame or model.frames[model.nframes - 1].name
        if not model.existFrame(tool_frame):
            raise ValueError(f"tool_frame {tool_frame!r} is not a frame of the model")
        if tool_frame not in site_space:
            raise ValueError(f"tool_frame {tool_frame!r} is not in robot_site_space {site_space}")
        if not np.isfinite(dt) or dt <= 0:
            raise ValueError(f"dt must be a positive number of seconds, got {dt!r}")
        for name, value in (("damping", damping), ("lm_damping", lm_damping)):
            if not np.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
        if not np.isfinite(gain) or not 0.0 < gain <= 1.0:
            raise ValueError(f"gain must be in (0, 1], got {gain!r}")
        if not 0.0 < configuration_limit_gain <= 1.0:
            raise ValueError(
                f"configuration_limit_gain must be in (0, 1], got {configuration_limit_gain!r}"
            )
        if integrate_from not in ("measured", "command"):
            raise ValueError(
                f"integrate_from must be 'measured' or 'command', got {integrate_from!r}"
            )
        if qp_backend not in ("pinkctl", "pink"):
            raise ValueError(f"qp_backend must be 'pinkctl' or 'pink', got {qp_backend!r}")
        for s in (solver, fallback_solver):
            if s is not None and s not in qpsolvers.available_solvers:
                raise ValueError(
                    f"solver {s!r} is not installed; available: {qpsolvers.available_solvers}"
                )
        pos_cost = _cost(position_cost, "position_cost")
        ori_cost = _cost(orientation_cost, "orientation_cost")
        post_cost = _cost(0.0 if posture_cost is None else posture_cost, "posture_cost")
        if np.ndim(post_cost) != 0:
            raise ValueError("posture_cost must be a scalar")

        self.robot = pink_robot
        self.robot_joint_space = joint_space
        self.robot_site_space = site_space
        self.tool_frame = tool_frame
        self.dt = float(dt)
        self.solver = solver
        self.fallback_solver = fallback_solver
        self.damping = float(damping)
        self.integrate_from = integrate_from
        self.qp_backend = qp_backend
        self.solver_options = dict(solver_options or {})
        self.pre_step_callback = pre_step_callback

        self._frame_task = FrameTask(
            tool_frame,
            position_cost=pos_cost,
            orientation_cost=ori_cost,
            lm_damping=lm_damping,
            gain=gain,
        )
        self._posture_task = PostureTask(cost=post_cost, gain=gain) if post_cost > 0 else None
        self._extra_tasks = list(extra_tasks or [])
        # tuples: the QP layer recognises the same (immutable) sequences tick after tick
        self._limits: tuple[Limit, ...] = (
            ConfigurationLimit(model, config_limit_gain=configuration_limit_gain),
            VelocityLimit(model),
            *(extra_limits or []),
        )
        self._barriers: tuple[Barrier, ...] = tuple(extra_barriers or [])
        self._tasks: tuple[Task, ...] = tuple(
            [self._frame_task]
            + ([self._posture_task] if self._posture_task is not None else [])
            + self._extra_tasks
        )

        self._map = JointSpaceMap(model, controlled, joint_space)
        # Joints with a coordinate of their own that the controller does not command (e.g.
        # fingers): read from the estimated state each tick and held in the model.
        passive = [
            name
            for name in pink_robot.joint_names
            if name not in controlled
            and name in joint_space
            and model.joints[model.getJointId(name)].nv == 1
        ]
        self._passive_map = JointSpaceMap(model, passive, joint_space) if passive else None
        # fast path: every joint at once when the estimate has them all (the usual case)
        self._all_map = JointSpaceMap(model, controlled + passive, joint_space) if passive else None
        self._n_controlled = len(controlled)
        self._controlled_v = np.array(self._map.idx_v)
        self._v_max = np.asarray(model.velocityLimit, dtype=float)[self._controlled_v]
        self._neg_v_max = -self._v_max
        continuous = np.asarray(self._map.is_continuous, dtype=bool)
        idx_q = np.asarray(self._map.idx_q)
        self._q_lower = np.where(continuous, -np.inf, model.lowerPositionLimit[idx_q])
        self._q_upper = np.where(continuous, np.inf, model.upperPositionLimit[idx_q])
        self._qp = DiffIKQP(
            model, self._controlled_v, solver=solver, damping=damping, solver_options=solver_options
        )
        self._solvers: tuple[tuple[DiffIKQP, str], ...] = ((self._qp, solver),)
        if fallback_solver is not None:
            fallback_qp = DiffIKQP(
                model, self._controlled_v, solver=fallback_solver, damping=damping
            )
            self._solvers += ((fallback_qp, fallback_solver),)
        self._last_target: pin.SE3 | None = None
        self._range_limit = self._limits[:1]  # the configuration limit alone
        self._setup_motion_limits(motion_limits, controlled)
        self._target_reader = SitePoseReader(tool_frame)
        self._last_sites: Any = None
        self._last_target_se3: Any = None
        self._configuration: Configuration | None = None
        self._command_positions: np.ndarray | None = None
        #: the fast QP path clips its solution into the QP box, which holds the velocity
        #: limits and the range; the pink path's solution is clipped by _within_limits
        self._box_clipped = qp_backend == "pinkctl"

    def _setup_motion_limits(
        self, motion_limits: bool | MotionLimits | None, controlled: list[str]
    ) -> None:
        """The motion-limit filter (see the ``motion_limits`` argument) and its constants."""
        pink_robot = self.robot
        self._filter: MotionLimitFilter | None = None
        if isinstance(motion_limits, MotionLimits):
            if list(motion_limits.joint_names) != controlled:
                raise ValueError(
                    f"motion_limits must cover the controlled joints {controlled} in order, "
                    f"got {list(motion_limits.joint_names)}"
                )
            self._filter = MotionLimitFilter(motion_limits, self.dt)
        elif motion_limits is None or motion_limits is True:
            if motion_limits or pink_robot.acceleration_limits:
                self._filter = MotionLimitFilter(
                    MotionLimits.from_robot(pink_robot, controlled), self.dt
                )
        elif motion_limits is not False:
            raise ValueError(
                f"motion_limits must be None, a bool or a MotionLimits, got {motion_limits!r}"
            )
        self._motion_velocity = np.zeros(0)
        self._motion_acceleration = np.zeros(0)
        self._motion_ramp: np.ndarray | None = None
        self._loop_scale = 1.0
        self._min_loop_scale = 1.0
        if self._filter is not None:
            limits = self._filter.limits
            self._motion_velocity = np.asarray(limits.velocity, dtype=float)
            if limits.acceleration is not None:
                self._motion_acceleration = np.asarray(limits.acceleration, dtype=float)
                jerk_ramp = np.zeros_like(self._motion_acceleration)
                if limits.jerk is not None:
                    jerk_ramp = self._motion_acceleration / limits.jerk
                self._motion_ramp = jerk_ramp + self.dt
                # the loop gain the slowest acceleration ramp can follow without ringing
                self._min_loop_scale = min(1.0, 2.0 * self.dt / float(np.max(self._motion_ramp)))

    # ------------------------------------------------------------------ accessors
    def get_frame_task(self) -> FrameTask:
        """The tool-frame task (costs and target can be changed at run time)."""
        return self._frame_task

    def get_posture_task(self) -> PostureTask | None:
        """The posture task, or None when ``posture_cost`` is 0."""
        return self._posture_task

    @property
    def configuration(self) -> Configuration | None:
        """The pink configuration of the last tick (None before a successful reset)."""
        return self._configuration

    @property
    def motion_limits(self) -> MotionLimits | None:
        """The motion limits enforced on the command sequence, or None."""
        return None if self._filter is None else self._filter.limits

    @property
    def tasks(self) -> list[Task]:
        """Tasks of the QP: frame, posture (if any), extras."""
        return list(self._tasks)

    @property
    def limits(self) -> list[Limit]:
        """Limits of the QP: configuration, velocity, extras."""
        return list(self._limits)

    @property
    def barriers(self) -> list[Barrier]:
        """Barriers of the QP."""
        return list(self._barriers)

    # ------------------------------------------------------------------ BaseController
    def _read_q(self, estimated_state: RobotState | None) -> tuple[np.ndarray, np.ndarray] | None:
        """Measured controlled positions and the Pinocchio ``q`` built from the estimate.

        Uncontrolled joints present in the estimate take their measured values, the others
        their home value. Returns None (reason recorded) when a controlled position is missing.
        """
        joints = None if estimated_state is None else estimated_state.joints
        if joints is None:
            self._fail("estimated state has no joint state")
            return None
        if self._all_map is not None:
            every = self._all_map.positions_from_state(joints)
            if every is not None:
                return every[: self._n_controlled], self._all_map.to_configuration(
                    every, self.robot.q0
                )
        positions = self._map.positions_from_state(joints)
        if positions is None:
            self._fail(
                "estimated state lacks a valid position for some of the controlled joints "
                f"{self._map.controlled_joint_names}"
            )
            return None
        q_base = self.robot.q0
        if self._passive_map is not None:
            passive = self._passive_map.positions_from_state(joints)
            if passive is not None:
                q_base = self._passive_map.to_configuration(passive, q_base)
        return positions, self._map.to_configuration(positions, q_base)

    def reset(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> bool:
        """Seed the controller from the measured state.

        The frame target becomes the current tool pose and the posture target the current
        configuration; the setpoint is ignored. Returns False (configuration cleared) if a
        controlled joint has no measured position.

        Raises:
            ValueError: If the states are not RobotState objects (see :meth:`forward`).
        """
        _check_states(estimated_state, setpoint_state)
        read = self._read_q(estimated_state)
        if read is None:
            self._configuration = None
            return False
        positions, q = read
        robot = self.robot
        self._configuration = Configuration(
            robot.model,
            robot.data,
            q,
            collision_model=robot.collision_model,
            collision_data=robot.collision_data,
            copy_data=True,
            forward_kinematics=True,
        )
        self._frame_task.set_target(
            self._configuration.get_transform_frame_to_world(self.tool_frame)
        )
        if self._posture_task is not None:
            self._posture_task.set_target(q)
        self._command_positions = positions
        if self._filter is not None:
            # start at rest from the measured positions (the command sequence starts here)
            self._filter.reset(positions)
            self._loop_scale = 1.0
        self.last_error = None
        return True

    @staticmethod
    def _update_configuration(configuration: Configuration, q: np.ndarray) -> None:
        """Forward kinematics, joint Jacobians (and collisions) at ``q``, a new array we own."""
        if configuration.collision_model is None:
            # pink's Configuration.update without collisions, minus its copy of our new q:
            # joint Jacobians (with forward kinematics) and frame placements
            q.setflags(write=False)
            configuration.q = q
            pin.computeJointJacobians(configuration.model, configuration.data, q)
            pin.updateFramePlacements(configuration.model, configuration.data)
        else:
            configuration.update(q)

    def _update_targets(self, setpoint_state: RobotState | None) -> None:
        if setpoint_state is None:
            return
        sites = setpoint_state.sites
        task = self._frame_task
        # states are immutable: the same site state sets the same target again, unless the
        # user replaced the target through get_frame_task() in between
        if sites is not None and not (
            sites is self._last_sites and task.transform_target_to_world is self._last_target_se3
        ):
            target = self._target_reader.pose(sites, task.transform_target_to_world)
            if target is not None:
                task.set_target(target)
            self._last_sites = sites
            self._last_target_se3 = task.transform_target_to_world
        joints = setpoint_state.joints
        if joints is not None and self._posture_task is not None:
            # only a complete joint setpoint (every controlled joint) replaces the posture target
            positions = self._map.positions_from_state(joints)
            if positions is not None:
                self._posture_task.set_target(self._map.to_configuration(positions, self.robot.q0))

    def forward(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> RobotState | None:
        """One control tick: targets from the setpoint, one QP, the integrated command.

        Returns None (with ``last_error`` set) before a successful reset, when a controlled
        joint has no measured position, or when the QP fails; never raises for those.

        Raises:
            ValueError: If ``estimated_state`` is not a RobotState or ``setpoint_state`` is
                neither a RobotState nor None (a programming error, not a runtime condition).
        """
        if type(estimated_state) is not RobotState or (
            setpoint_state is not None and type(setpoint_state) is not RobotState
        ):
            _check_states(estimated_state, setpoint_state)  # subclasses pass, others raise
        configuration = self._configuration
        if configuration is None:
            return self._fail("forward called before a successful reset")
        read = self._read_q(estimated_state)
        if read is None:
            return None
        measured, q = read
        base = measured
        if self.integrate_from == "command" and self._command_positions is not None:
            base = self._command_positions
            q = self._map.to_configuration(base, q)
        self._update_configuration(configuration, q)
        self._update_targets(setpoint_state)
        if self.pre_step_callback is not None:
            try:
                self.pre_step_callback(configuration, setpoint_state)
            except Exception as exc:  # a user callback must not kill the control loop
                return self._fail(f"pre_step_callback raised {type(exc).__name__}: {exc}")
        motion = self._filter
        if motion is None and self._box_clipped:
            # the plain fast path: the QP's box already holds the velocity limits and range
            displacement = self._displacement(configuration, None, None)
            if displacement is None:
                return None
            joints, positions = self._map.command_from_displacement(base, displacement, self.dt)
        else:
            if motion is None:
                velocity = self._solve(configuration, None, None)
            else:
                velocity = self._solve_within_motion_limits(configuration, base)
            if velocity is None:
                return None
            velocity, positions = self._within_limits(velocity, base)
            if motion is not None and self._command_positions is not None:
                motion.update((positions - self._command_positions) / self.dt)
            joints = self._map.command_state(positions, velocity)
        self._command_positions = positions
        self.last_error = None
        return RobotState(joints=joints)

    def _within_limits(
        self, velocity: np.ndarray, base: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Clip the QP solution into the velocity limits and the position range.

        Active-set solvers meet *active* bounds exactly but accept inactive ones violated by
        up to their feasibility tolerance (DAQP: 1e-6 on the displacement, i.e. up to 1e-3 rad/s
        at 1 kHz): enough to trip a robot's limit monitor. Joints already outside their range
        (recovering) are not pulled in by the position clip.

        Returns:
            The velocity and the commanded positions ``base + velocity dt``.
        """
        np.minimum(velocity, self._v_max, out=velocity)
        np.maximum(velocity, self._neg_v_max, out=velocity)
        positions = base + velocity * self.dt
        over = positions > self._q_upper
        under = positions < self._q_lower
        if not (np.count_nonzero(over) or np.count_nonzero(under)):  # cheaper than .any()
            return velocity, positions
        inside = (base >= self._q_lower) & (base <= self._q_upper)
        positions[over & inside] = self._q_upper[over & inside]
        positions[under & inside] = self._q_lower[under & inside]
        return (positions - base) / self.dt, positions

    def _solve_within_motion_limits(
        self, configuration: Configuration, base: np.ndarray
    ) -> np.ndarray | None:
        """The tick's velocity when acceleration and jerk limits are enforced.

        The motion-limit filter gives a box ``lower <= v_c <= upper`` on the command velocity
        of the controlled joints (shifted when the command integrates from the measurement,
        whose ``base`` differs from the last command). Adding that box to the QP is greedy: a
        dead-beat task asks for the whole remaining motion in one tick, the narrow box puts the
        solution in a corner, the tool moves elsewhere than the task asks and the loop rings.
        Instead the controller acts like an online trajectory generator:

        1. ``v*``: the velocity the tasks want, with the position range as the only limit;
        2. one scale for all joints (the direction is kept) so that ``v*`` respects the
           velocity limits and, while the frame target holds still, every joint can still
           stop within the motion it has left, ``d = |v*| dt / gain``: braking at ``A/2``
           after a jerk-limited ramp of ``A/J`` (plus one tick) needs
           ``v²/A + v (A/J + dt) <= d``. A moving target is followed, not approached to a
           stop;
        3. each joint's velocity moves toward that wanted velocity as fast as the box allows.

        With barriers or extra limits (QP rows that must keep holding), the QP is solved with
        the box instead.
        """
        motion = self._filter
        assert motion is not None and self._command_positions is not None
        lower, upper = motion.bounds()
        if base is not self._command_positions:  # closing on the measurement
            shift = (base - self._command_positions) / self.dt
            lower = lower - shift
            upper = upper - shift
        if self._barriers or len(self._limits) > 2:
            # user constraints are rows of the QP: solve with the box so they keep holding
            v = self._solve(configuration, lower, upper)
            if v is None:
                # the rows ask for a stop the joints cannot make under their acceleration
                # and jerk limits (e.g. a barrier reached at speed): the hardware limits win,
                # the rows are met as closely as the box allows
                v = self._solve(configuration, None, None)
            if v is not None:
                # DAQP meets bounds to ~1e-15; the clip makes the guarantee exact
                v = np.minimum(np.maximum(v, lower), upper)
            return v
        # the velocity the tasks want, not yet cut by the velocity limit (which would turn
        # a large error into a bang-bang signal): only the position range constrains it
        wanted = self._solve(configuration, None, None, limits=self._range_limit)
        if wanted is None:
            return None
        speed = np.abs(wanted)
        top_speed = max(speed.tolist())  # a few floats: cheaper than a numpy reduction
        np.maximum(speed, 1e-300, out=speed)
        # one scale for all joints keeps the direction: within the velocity limits, and slow
        # enough that each joint can still brake within the motion it has left
        scale = min((self._motion_velocity / speed).tolist())
        # a moving target (a trajectory) must be followed, not approached to a stop: the
        # braking envelope is for a target that holds still
        target = self._frame_task.transform_target_to_world
        last = self._last_target
        holding = target is not None and last is not None and target.isApprox(last, 1e-14)
        self._last_target = None if target is None else target.copy()
        if self._motion_ramp is not None and holding:
            # braking at A/2 after a jerk-limited ramp of A/J seconds (plus one tick) stops
            # from |v| within v^2 / A + v (A/J + dt) <= d, d = |v*| dt / gain the motion
            # left: |v| <= (A/2) (sqrt((A/J + dt)^2 + 4 d / A) - (A/J + dt))
            acceleration = self._motion_acceleration
            ramp = self._motion_ramp
            distance = speed * (self.dt / self._frame_task.gain)
            envelope = (
                0.5 * acceleration * (np.sqrt(ramp * ramp + 4.0 * distance / acceleration) - ramp)
            )
            scale = min(scale, *(envelope / speed).tolist())
        # anti-windup for a moving target: while the box clips the wanted velocity, the
        # dead-beat correction of the tracking error outruns what the acceleration/jerk limits
        # let the joints do, and the loop would ring; lower the loop gain while saturated,
        # restore it once free
        if not holding:
            scale *= self._loop_scale
        if scale < 1.0:
            wanted = wanted * scale
            top_speed *= scale
        # each joint moves its velocity toward the wanted one as fast as the box allows
        command = np.minimum(np.maximum(wanted, lower), upper)
        if holding:  # a fixed target is approached by the braking envelope
            self._loop_scale = 1.0
        elif max(np.abs(command - wanted).tolist()) > 1e-6 * (1.0 + top_speed):
            self._loop_scale = max(self._min_loop_scale, 0.9 * self._loop_scale)
        elif self._loop_scale < 1.0:
            self._loop_scale = min(1.0, self._loop_scale * 1.002)
        return command

    def _solve(
        self,
        configuration: Configuration,
        v_lower: np.ndarray | None,
        v_upper: np.ndarray | None,
        limits: tuple[Limit, ...] | None = None,
    ) -> np.ndarray | None:
        """Velocities [rad/s] of the controlled joints from this tick's QP, or None."""
        displacement = self._displacement(configuration, v_lower, v_upper, limits)
        return None if displacement is None else np.divide(displacement, self.dt, displacement)

    def _displacement(
        self,
        configuration: Configuration,
        v_lower: np.ndarray | None,
        v_upper: np.ndarray | None,
        limits: tuple[Limit, ...] | None = None,
    ) -> np.ndarray | None:
        """Displacements ``v dt`` [rad] of the controlled joints from this tick's QP, or None
        (reason recorded).

        On the fast path the solution is clipped into the QP's simple bounds (configuration,
        velocity and ``v_lower``/``v_upper``), see :meth:`DiffIKQP.clip_to_bounds`.
        """
        errors = []
        limits = self._limits if limits is None else limits
        for qp, solver in self._solvers:
            try:
                if self.qp_backend == "pink":
                    v = reference_solve_ik(
                        configuration,
                        self._tasks,
                        self.dt,
                        controlled_v_indices=self._controlled_v,
                        solver=solver,
                        damping=self.damping,
                        limits=limits,
                        barriers=self._barriers,
                        solver_options=self.solver_options,
                        v_lower=v_lower,
                        v_upper=v_upper,
                    )[self._controlled_v]
                    if not np.isfinite(v).all():
                        errors.append(f"{solver}: non-finite velocity")
                        continue
                    return v * self.dt
                x = qp.solve_displacement(
                    configuration,
                    self._tasks,
                    self.dt,
                    limits=limits,
                    barriers=self._barriers,
                    v_lower=v_lower,
                    v_upper=v_upper,
                )
            except QPSolveError as exc:  # non-finite solutions included
                errors.append(f"{solver}: {exc}")
                continue
            except Exception as exc:  # pink task/barrier code failing at run time
                errors.append(f"{solver}: {type(exc).__name__}: {exc}")
                continue
            return qp.clip_to_bounds(x)
        self._fail("QP failed: " + "; ".join(errors))
        return None
