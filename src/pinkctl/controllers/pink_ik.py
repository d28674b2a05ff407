"""PinkIKController: reactive differential IK as one QP per control tick.

A tick reads the estimate, updates the pink configuration and the targets, solves the QP
compiled once (:func:`pinkctl.qp.compile_qp`) and lets a :class:`~pinkctl.motion.MotionShaper`
turn its velocity into the next command within the joints' limits; how the QP and the shaper
share it is a :class:`~pinkctl.controllers.tick_mode.TickMode`. A tick that cannot be solved
brakes (:mod:`pinkctl.controllers.failures`); ``forward`` returns None only before a reset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.barriers import Barrier
from pink.exceptions import PinkError
from pink.limits import Limit
from pink.tasks import Task

from .._validation import Checked, callable_or_none, choice, name_list, real_number
from ..core.robot import PinkRobot
from ..core.state import RobotState, RootState
from ..errors import InputError
from ..motion.limits import MotionLimits
from ..motion.shaper import MotionShaper
from ..qp import DEFAULT_SOLVER, QPSolveError, TickQP
from ..world import World
from . import _arguments as arguments
from ._arguments import DT_RANGE, PreStepCallback, QPSetting, QPSettings
from .array_step import ArrayStep
from .base import BaseController
from .collision import CollisionAvoidance
from .compiled_path import CompiledTicking
from .failures import debug_mode, internal_error, run_callback
from .floating_base import taken_share
from .ik_problem import IKProblem
from .joint_mapping import JointMapping
from .problem_views import ProblemViews
from .status import ControllerStatus
from .tick_mode import TickMode, solve_in_box
from .whole_body import DEFAULT_SOLE, FrameCosts

__all__ = ["PinkIKController"]


class PinkIKController(BaseController, ArrayStep, ProblemViews, CompiledTicking):
    """Reactive differential-IK controller (pink tasks, limits and barriers; one QP per tick).

    The Isaac Sim PINK extension's API: targets from the setpoint's site poses and complete
    joint setpoints; the output holds the controlled joints' positions and velocities.

    Args:
        pink_robot: Robot from :func:`~pinkctl.core.robot.load_pink_robot` or
            :func:`~pinkctl.core.robot.load_pink_supported_robot`.
        robot_joint_space: Ordered joint names of the robot as the caller sees it (e.g.
            ``MujocoSimulation.joint_names``). Must contain every controlled joint.
        robot_site_space: Ordered frame names the setpoints use; must contain the tool frame.
        tool_frame: End-effector frame of the frame task; None: the robot's configured tool
            frame, else the model's last frame.
        position_cost: Frame-task position cost [cost]/[m], scalar or per (tool) axis.
        orientation_cost: Frame-task orientation cost [cost]/[rad], scalar or per axis.
        posture_cost: Posture-task cost [cost]/[rad]; 0 or None disables the posture task.
        damping: Tikhonov damping of the QP Hessian [cost]/[rad/s]^2.
        gain: Task gain in (0, 1] of the frame and posture tasks (1: dead-beat).
        lm_damping: Levenberg–Marquardt damping of the frame task.
        solver: QP solver (:mod:`pinkctl.qp.solvers`): ``"box"`` (default: pinkctl's exact
            box-constrained QP where the only constraints are bounds, DAQP for problems with
            rows), ``"daqp"`` (always DAQP), or any installed qpsolvers name.
        extra_tasks: More pink tasks in the objective.
        extra_limits: More pink limits, added to the configuration and velocity limits (a
            limit that is not a simple bound adds inequality rows).
        extra_barriers: pink barriers (e.g. ``SelfCollisionBarrier``, ``PositionBarrier``).
        pre_step_callback: ``callback(configuration, setpoint_state)`` run before each solve.
        dt: Integration step [s] (the control period), in ``DT_RANGE``.
        integrate_from: Where the QP linearises: ``"measured"`` (default: the measured joints,
            so the command moves on until the measured pose reaches the target) or
            ``"command"`` (the last command, a kinematic reference).
        qp_path: ``"pinkctl"`` (:func:`pinkctl.qp.compile_qp`) or ``"pink"`` (pink's
            ``build_ik`` + qpsolvers, :class:`pinkctl.qp.ReferenceQP`: the reference path).
        fallback_solver: Second solver tried when the first one fails.
        solver_options: Options of ``solver`` (checked by a trial solve).
        configuration_limit_gain: Gain of pink's configuration limit in (0, 1].
        motion_limits: Acceleration and jerk limits on the command sequence
            (:mod:`pinkctl.motion`): None (default) when the robot declares them, True, False
            (position and velocity limits only) or a :class:`~pinkctl.motion.MotionLimits`.
        priority_levels: Strict priorities instead of one weighted sum: tasks per level, highest
            first, each ``"frame"``, ``"posture"`` or a task of ``extra_tasks``; the tick is
            then a :class:`~pinkctl.qp.CascadeQP` (``qp_path="pinkctl"``).
        priority_method: ``"cascade"`` (exact, a QP per level, every limit at every level) or
            ``"nullspace"`` (null-space projection; position and velocity limits only).
        frames: More frame tasks; with ``com_cost``, ``contacts``, ``support_margin`` and
            ``sole``: the whole-body terms of :mod:`pinkctl.controllers.whole_body`.
        world: Obstacles to avoid (a :class:`~pinkctl.world.World`, read every tick) or None.
        self_collision: Avoid the robot's own links; None (default): on, with or without a
            ``world``, if its description has collision elements and its base is fixed;
            False: off. With either, the floor too (:mod:`pinkctl.controllers.collision`).
        collision_margin: Smallest distance kept between any two checked shapes [m].

    Raises:
        InputError: (a ``ValueError``) on any malformed argument, naming it and what was
            expected.
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
        solver: str = DEFAULT_SOLVER,
        extra_tasks: Sequence[Task] | None = None,
        extra_limits: Sequence[Limit] | None = None,
        extra_barriers: Sequence[Barrier] | None = None,
        pre_step_callback: PreStepCallback | None = None,
        dt: float,
        integrate_from: Literal["measured", "command"] = "measured",
        qp_path: Literal["pinkctl", "pink"] = "pinkctl",
        fallback_solver: str | None = None,
        solver_options: dict[str, Any] | None = None,
        configuration_limit_gain: float = 0.5,
        motion_limits: bool | MotionLimits | None = None,
        priority_levels: Sequence[Sequence[Task | str]] | None = None,
        priority_method: Literal["cascade", "nullspace"] = "cascade",
        frames: Mapping[str, FrameCosts | Mapping[str, Any] | None] | Sequence[str] | None = None,
        com_cost: float | Sequence[float] | None = None,
        contacts: Sequence[str] | None = None,
        support_margin: float | None = 0.02,
        sole: Sequence[float] = DEFAULT_SOLE,
        world: World | None = None,
        self_collision: bool | None = None,
        collision_margin: float = 0.01,
    ) -> None:
        super().__init__()
        if not isinstance(pink_robot, PinkRobot):
            raise InputError(f"pink_robot must be a PinkRobot, got {type(pink_robot).__name__}")
        joint_space = name_list(robot_joint_space, "robot_joint_space", allow_empty=False)
        site_space = name_list(robot_site_space, "robot_site_space")
        self._joints = JointMapping(pink_robot, joint_space)
        tool_frame = arguments.check_tool_frame(pink_robot, tool_frame, site_space)
        self.dt = real_number(dt, "dt", low=DT_RANGE[0], high=DT_RANGE[1])
        settings = QPSettings.checked(solver, fallback_solver, damping, solver_options, qp_path)
        self._integrate_from = choice(integrate_from, "integrate_from", ("measured", "command"))
        self._pre_step_callback = callable_or_none(pre_step_callback, "pre_step_callback")
        self._problem = IKProblem(
            pink_robot,
            tool_frame,
            position_cost=position_cost,
            orientation_cost=orientation_cost,
            posture_cost=posture_cost,
            gain=gain,
            lm_damping=lm_damping,
            extra_tasks=extra_tasks,
            extra_limits=extra_limits,
            extra_barriers=extra_barriers,
            configuration_limit_gain=configuration_limit_gain,
            priority_levels=priority_levels,
            priority_method=priority_method,
            whole_body={"site_space": site_space, "frames": frames, "com_cost": com_cost}
            | {"contacts": contacts, "support_margin": support_margin, "sole": sole},
        )
        self.robot = pink_robot
        self.robot_joint_space = joint_space
        self.robot_site_space = site_space
        self.tool_frame = tool_frame
        limits = arguments.resolve_motion_limits(pink_robot, motion_limits)
        self._shaper = MotionShaper(limits, self.dt)
        self._mode = self._tick = TickMode.of(self._shaper.smooth, self._problem.has_rows)
        self._avoid = CollisionAvoidance.build(
            pink_robot, self._joints, self._shaper, world, self_collision, collision_margin
        )
        self._rebuild(settings)
        self._target = self._problem.targets()
        self._held_target: pin.SE3 | None = None  # the last solved tick's frame target, a copy
        self._configuration: Configuration | None = None
        self._base_start: pin.SE3 | None = None
        self._status = ControllerStatus.NOT_READY

    def _rebuild(self, settings: QPSettings) -> None:
        """Compile the QP (:meth:`IKProblem.compile`); nothing changes if that raises."""
        columns = self._joints.qp_columns
        self._qp = self._problem.compile(self.robot.model, columns, self._mode, settings)
        if self._avoid is not None:  # the QP of the ticks with collision rows
            self._avoid.compile(self._problem, self.robot.model, columns, settings)
        self._settings = settings

    def reset(
        self, estimated_state: RobotState, setpoint_state: RobotState | None, t: float, **kw: Any
    ) -> bool:
        """Seed from the estimate (targets at its frame poses and q, the command at rest; setpoint
        ignored); False (NOT_READY) without the controlled joints; ValueError: not RobotStates."""
        arguments.check_states(estimated_state, setpoint_state)
        read = self.read_estimate(estimated_state)
        if read is None:
            self._configuration = None
            self._status = ControllerStatus.NOT_READY
            return False
        positions, q = read
        if self._joints.base is not None:
            self._joints.base.place(q, estimated_state.root, True, hold=True)
        self._configuration = self._problem.configuration(self.robot, q)
        self._shaper.reset(positions)
        self._held_target = None
        self._status = ControllerStatus.OK
        self.last_error = None
        return True

    def read_estimate(
        self, estimated_state: RobotState | None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Phase 1: the measured controlled positions and Pinocchio ``q`` (other joints measured,
        else at home); None (reason in ``last_error``) without them."""
        joints = None if estimated_state is None else estimated_state.joints
        maps = self._joints
        every = None if joints is None else maps.every.positions_from_state(joints)
        if every is not None:  # the usual estimate: every joint the controller reads
            return every[: maps.n_controlled], maps.every.to_configuration(every, self.robot.q0)
        read = maps.read_partial(joints, self.robot.q0)  # no joint state, or some joint missing
        if isinstance(read, str):
            self.last_error = read
            return None
        return read

    def update_configuration(
        self, measured: np.ndarray, q: np.ndarray, root: RootState | None = None
    ) -> None:
        """Phase 2: kinematics and Jacobians where the QP linearises ("command": last command)."""
        configuration = self._configuration
        assert configuration is not None
        joints = self._joints
        if joints.continuous.size:
            joints.follow_winding(measured, self._shaper)
        if self._integrate_from == "command":
            q = joints.controlled.to_configuration(self._shaper.position, q)
        if joints.base is not None:  # at the estimate's root ("measured") or where it is held
            self._base_start = joints.base.place(q, root, self._integrate_from == "measured")
        if configuration.collision_model is None:
            # pink's Configuration.update without collisions or its copy of q: Jacobians, frames
            q.setflags(write=False)
            configuration.q = q
            pin.computeJointJacobians(configuration.model, configuration.data, q)
            pin.updateFramePlacements(configuration.model, configuration.data)
        else:
            configuration.update(q)

    def update_targets(self, setpoint_state: RobotState | None) -> bool:
        """Phase 3: frame and posture targets from the setpoint; False (reason recorded) when
        a frame target is refused (:class:`~pinkctl.controllers.frame_target.FrameTarget`)."""
        if setpoint_state is None:
            return True
        sites = setpoint_state.sites
        if sites is not None and (refused := self._target.read(sites)) is not None:
            self.last_error = refused
            return False
        joints = setpoint_state.joints
        posture = self._problem.posture
        if joints is not None and posture is not None:
            q = self._joints.posture(joints, self.robot.q0)
            if q is not None:  # only a complete joint setpoint replaces the posture target
                posture.set_target(q)
        return True

    def solve(self) -> np.ndarray | None:
        """Phase 4: the QP's velocity [rad/s] of its variables (base first), or None (reason)."""
        configuration = self._configuration
        assert configuration is not None
        try:
            self._tick = self._mode
            if self._avoid is not None and self._avoid.engage(configuration.q):
                self._tick = TickMode.BOXED  # the QP with collision rows, inside the box
                return self._avoid.solve(configuration)
            if self._mode is TickMode.BOXED:
                return solve_in_box(self._qp, configuration, self.dt, self._shaper, self._joints)
            return self._qp.solve(configuration, self.dt)
        except QPSolveError as exc:
            self.last_error = f"QP failed: {exc}"
        except PinkError as exc:  # a pink task or limit failing at this configuration
            self.last_error = f"QP failed: {type(exc).__name__}: {exc}"
        return None

    def shape(self, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray, RootState | None]:
        """Phase 5: the next command (controlled positions and velocities, a floating base's
        root state or None) from the QP's velocity (:class:`~pinkctl.motion.MotionShaper`)."""
        shaper, maps = self._shaper, self._joints
        joint_velocity = velocity[maps.n_base :]
        if maps.controlled.balls:  # as rates of the rotation vectors (JointMapping)
            joint_velocity = maps.chart_velocity(joint_velocity, shaper.position)
        approach = self._tick is TickMode.APPROACH
        if approach:
            # the target holds when it is the one of the previous solved tick (approach policy)
            task = self._problem.frame
            target, held = task.transform_target_to_world, self._held_target
            holding = target is not None and held is not None and target.isApprox(held, 1e-14)
            self._held_target = None if target is None else target.copy()
            positions, rates = shaper.follow(joint_velocity, holding=holding, gain=float(task.gain))
        else:
            positions, rates = shaper.commit(joint_velocity)
        if maps.base is None:
            return positions, rates, None
        twist = velocity[: maps.n_base] * (taken_share(joint_velocity, rates) if approach else 1.0)
        return positions, rates, maps.base.step(twist, self.dt, self._base_start)

    def write_command(
        self, positions: np.ndarray, velocity: np.ndarray, root: RootState | None = None
    ) -> RobotState:
        """Phase 6: the output state (controlled joints; the root for a floating base)."""
        joints = self._joints.controlled.command_state(positions, velocity)
        return RobotState(joints=joints) if root is None else RobotState(joints=joints, root=root)

    def forward(
        self, estimated_state: RobotState, setpoint_state: RobotState | None, t: float, **kw: Any
    ) -> RobotState | None:
        """One tick: :meth:`read_estimate`, :meth:`update_configuration`, :meth:`update_targets`
        (then the ``pre_step_callback``), :meth:`solve`, :meth:`shape`, :meth:`write_command`.
        None only before a successful reset; a tick that cannot be solved (or hits a bug:
        logged, re-raised with ``PINKCTL_DEBUG=1``) returns the next braking step (status
        BRAKING, reason in ``last_error``). ValueError for states that are not RobotStates."""
        if type(estimated_state) is not RobotState or (
            setpoint_state is not None and type(setpoint_state) is not RobotState
        ):
            arguments.check_states(estimated_state, setpoint_state)  # subclasses pass, others raise
        if self._configuration is None:
            self._status = ControllerStatus.NOT_READY
            return self._fail("forward called before a successful reset")
        try:
            if (command := self._compiled_forward(estimated_state, setpoint_state)) is not None:
                return command  # phases 2, 4, 5 in one C++ call (compiled_path), where it applies
            return self._python_tick(estimated_state, setpoint_state)
        except Exception as exc:  # a bug inside the tick: re-raised or logged, never silent
            if debug_mode():
                raise
            self.last_error = internal_error(self, exc)
            return self._brake()

    def _python_tick(self, estimated: RobotState, setpoint: RobotState | None) -> RobotState:
        """The six phases one by one; the braking step when one fails (reason recorded)."""
        read = self.read_estimate(estimated)
        if read is None:
            return self._brake()
        root = None if self._joints.base is None else estimated.root
        self.update_configuration(read[0], read[1], root)
        if not self.update_targets(setpoint):
            return self._brake()
        if self._pre_step_callback is not None:  # the user's code: a failure brakes
            failed = run_callback(self._pre_step_callback, self._configuration, setpoint)
            if failed is not None:
                self.last_error = failed
                return self._brake()
        velocity = self.solve()
        if velocity is None:
            return self._brake()
        positions, command_velocity, root = self.shape(velocity)
        self.last_error = None if self._avoid is None else self._avoid.blocking(velocity)
        self._status = ControllerStatus.BLOCKED if self.last_error else ControllerStatus.OK
        return self.write_command(positions, command_velocity, root)

    def _brake(self) -> RobotState:
        """The next braking step from the last command (the reason is in ``last_error``)."""
        positions, velocity = self._shaper.brake()
        self._status = ControllerStatus.BRAKING
        self._held_target = None
        base = self._joints.base
        root = None if base is None else base.step(np.zeros(6), self.dt)
        return self.write_command(positions, velocity, root)

    solver = QPSetting("solver", arguments.check_solver_name, "The QP solver's name.")
    fallback_solver = QPSetting("fallback", arguments.check_fallback, "Solver tried second.")
    solver_options = QPSetting("options", arguments.check_solver_options, "Solver options.")
    damping = QPSetting("damping", arguments.check_damping, "Tikhonov damping of the Hessian.")
    qp_path = QPSetting("path", arguments.check_path, '``"pinkctl"`` or ``"pink"``.')
    integrate_from = Checked(
        lambda value: choice(value, "integrate_from", ("measured", "command")),
        '``"measured"`` or ``"command"``: where the QP linearises.',
    )
    pre_step_callback = Checked[PreStepCallback | None](
        lambda value: callable_or_none(value, "pre_step_callback"),
        "``callback(configuration, setpoint_state)`` run before each solve, or None.",
    )
    configuration = Checked[Configuration | None](
        None, "The pink configuration of the last tick (None before a reset)."
    )
    shaper = Checked[MotionShaper](None, "The shaper that owns the command sequence.")
    mode = Checked[TickMode](None, "How the QP and the shaper share a tick.")
    qp_step = Checked[TickQP](None, "The compiled QP a tick solves (:mod:`pinkctl.qp`).", "_qp")
    status = Checked[ControllerStatus](None, "What the last forward or reset produced.")
    collision = Checked[CollisionAvoidance | None](
        None, "The collision avoidance (its scene, world and rows), or None.", "_avoid"
    )
