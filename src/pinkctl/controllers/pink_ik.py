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
user's, and the user's barriers. A :class:`~pinkctl.motion.MotionShaper` then turns :math:`v`
into the next command of the command sequence it owns, within the robot's position, velocity
and (by default) acceleration and jerk limits *relative to the previous command*.

Which configuration the QP linearises at is a documented choice (``integrate_from``):

* ``"measured"`` (default, the Isaac PINK extension's choice): the measured joint positions.
  The tasks' errors are the *measured* errors, so the command keeps moving until the measured
  pose reaches the target (integral action: a position servo that sags or lags is corrected).
* ``"command"``: the controller's own previous command (a kinematic reference trajectory):
  the measurement of the controlled joints is not used after :meth:`reset`; other
  (uncontrolled) joints are still read from it.

In both modes the command continues from the previous command, never from the measurement:
``q_k = q_{k-1} + v dt`` with ``v`` within the limits, whatever the measurement does (noise,
a blocked arm, a dropped estimate). Note that a blocked arm in ``"measured"`` mode keeps a
constant error, so its command moves on toward the target (within every limit).

A tick that cannot be solved (an infeasible or failing QP, an estimate without the controlled
joints, a failing ``pre_step_callback``) does not stop the arm dead: the output is the next
step of a braking profile from the last command (:attr:`ControllerStatus.BRAKING`, the reason
in ``last_error``). ``forward`` returns None only before a successful :meth:`reset`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Literal

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.barriers import Barrier, SelfCollisionBarrier
from pink.limits import ConfigurationLimit, Limit, VelocityLimit
from pink.tasks import FrameTask, PostureTask, Task

from .._validation import callable_or_none, choice, name_list, real_number
from ..core.joints import JointSpaceMap
from ..core.poses import SitePoseReader
from ..core.robot import PinkRobot
from ..core.state import RobotState, RootState
from ..errors import InputError
from ..motion.limits import MotionLimits
from ..motion.shaper import MotionShaper
from ..qp import EXACT_SOLVERS, QPSolveError, QPStep
from ._arguments import (
    DT_RANGE,
    MAX_TARGET_DISTANCE,
    MAX_WEIGHT,
    check_cost,
    check_pink_objects,
    check_solver,
    check_solver_options,
    check_states,
)
from .base import BaseController
from .floating_base import FloatingBase

__all__ = ["ControllerStatus", "EXACT_SOLVERS", "MAX_TARGET_DISTANCE", "PinkIKController"]


PreStepCallback = Callable[[Configuration, "RobotState | None"], None]


@dataclass(frozen=True)
class QPSettings:
    """The settings a :class:`PinkIKController` compiles its QP with."""

    solver: str
    fallback: str | None
    damping: float
    options: dict[str, Any]
    backend: str


class ControllerStatus(str, Enum):
    """What the last :meth:`PinkIKController.forward` produced.

    Attributes:
        NOT_READY: No command: ``reset`` has not succeeded yet (``forward`` returned None).
        OK: The tick was solved; the command follows the tasks.
        BRAKING: The tick could not be solved (reason in ``last_error``); the command is the
            next step of a braking profile within the limits.
    """

    NOT_READY = "not_ready"
    OK = "ok"
    BRAKING = "braking"


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
        position_cost: Frame-task position cost [cost]/[m], scalar or per axis (tool frame),
            in ``[0, MAX_WEIGHT]``.
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
        dt: Integration step [s] (the control period), in ``DT_RANGE``.
        integrate_from: ``"measured"`` or ``"command"`` (see the module docstring).
        qp_backend: ``"pinkctl"`` (the fast in-place QP layer) or ``"pink"`` (pink's own
            ``build_ik`` + qpsolvers; the reference path).
        fallback_solver: Second backend tried when the first one fails.
        solver_options: Extra keyword arguments for the backend (checked by a trial solve).
        configuration_limit_gain: Gain of pink's configuration limit in (0, 1].
        motion_limits: Enforce joint acceleration and jerk limits on the command sequence
            (with position and velocity limits; see :mod:`pinkctl.motion_limits`). None
            (default): on when the robot declares acceleration limits (every bundled robot
            does), off otherwise; True: on with whatever the robot declares; False: position
            and velocity limits only; or a :class:`~pinkctl.motion_limits.MotionLimits` over
            the controlled joints. Velocity limits are ``robot.velocity_limits`` (the
            configured ones) in every case.

    Raises:
        ValueError: On any malformed argument (the message names it and what was expected):
            an unknown tool frame, controlled joints missing from ``robot_joint_space``,
            costs outside ``[0, MAX_WEIGHT]``, ``dt`` outside ``DT_RANGE``, an unknown
            solver, invalid solver options, extra tasks, limits or barriers that are not
            pink objects or name unknown frames, a callback that is not callable.
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
        if not isinstance(pink_robot, PinkRobot):
            raise InputError(f"pink_robot must be a PinkRobot, got {type(pink_robot).__name__}")
        model = pink_robot.model
        joint_space = name_list(robot_joint_space, "robot_joint_space", allow_empty=False)
        site_space = name_list(robot_site_space, "robot_site_space")
        controlled = list(pink_robot.controlled_joint_names)
        missing = [j for j in controlled if j not in joint_space]
        if missing:
            raise InputError(
                f"controlled joints {missing} are not in robot_joint_space {joint_space}"
            )
        if tool_frame is None:
            tool_frame = pink_robot.tool_frame or model.frames[model.nframes - 1].name
        if not isinstance(tool_frame, str) or not model.existFrame(tool_frame):
            raise InputError(f"tool_frame {tool_frame!r} is not a frame of the model")
        if tool_frame not in site_space:
            raise InputError(f"tool_frame {tool_frame!r} is not in robot_site_space {site_space}")
        dt = real_number(dt, "dt", low=DT_RANGE[0], high=DT_RANGE[1])
        damping = real_number(damping, "damping", low=0.0, high=MAX_WEIGHT)
        lm_damping = real_number(lm_damping, "lm_damping", low=0.0, high=MAX_WEIGHT)
        gain = real_number(gain, "gain", low=0.0, high=1.0, low_open=True)
        configuration_limit_gain = real_number(
            configuration_limit_gain, "configuration_limit_gain", low=0.0, high=1.0, low_open=True
        )
        integration = choice(integrate_from, "integrate_from", ("measured", "command"))
        backend = choice(qp_backend, "qp_backend", ("pinkctl", "pink"))
        solver_name = check_solver(solver, "solver", optional=False)
        assert solver_name is not None
        fallback_name = check_solver(fallback_solver, "fallback_solver", optional=True)
        options = check_solver_options(solver_options)
        pos_cost = check_cost(position_cost, "position_cost")
        ori_cost = check_cost(orientation_cost, "orientation_cost")
        post_cost = check_cost(posture_cost, "posture_cost")
        if np.ndim(post_cost) != 0:
            raise InputError("posture_cost must be a scalar")
        tasks = check_pink_objects(extra_tasks, Task, "extra_tasks", model)
        limits = check_pink_objects(extra_limits, Limit, "extra_limits", model)
        barriers = check_pink_objects(extra_barriers, Barrier, "extra_barriers", model)
        callable_or_none(pre_step_callback, "pre_step_callback")

        self.robot = pink_robot
        self.robot_joint_space = joint_space
        self.robot_site_space = site_space
        self.tool_frame = tool_frame
        self.dt = dt
        self._integrate_from = integration
        self._qp_backend = backend
        self._damping = damping
        self._solver = solver_name
        self._fallback_solver = fallback_name
        self._solver_options = options
        self._pre_step_callback = pre_step_callback

        self._frame_task = FrameTask(
            tool_frame,
            position_cost=pos_cost,
            orientation_cost=ori_cost,
            lm_damping=lm_damping,
            gain=gain,
        )
        self._posture_task = PostureTask(cost=post_cost, gain=gain) if post_cost > 0 else None
        self._tasks: tuple[Task, ...] = tuple(
            [self._frame_task]
            + ([self._posture_task] if self._posture_task is not None else [])
            + tasks
        )
        self._map = JointSpaceMap(model, controlled, joint_space)
        # a floating base's 6 velocity coordinates are decision variables too (first)
        self._base = FloatingBase(pink_robot.q0) if pink_robot.floating_base else None
        self._n_base = 6 if self._base is not None else 0
        self._controlled_v = np.concatenate(
            [np.arange(self._n_base), np.asarray(self._map.idx_v)]
        ).astype(np.intp)
        # the QP's velocity limits are the configured ones (robot.toml), not only the URDF's
        velocity_limit = np.array(model.velocityLimit, dtype=float)
        for name, value in pink_robot.velocity_limits.items():
            if model.existJointName(name):
                joint = model.joints[model.getJointId(name)]
                if joint.nv == 1:
                    velocity_limit[joint.idx_v] = value
        self._limits: tuple[Limit, ...] = (
            ConfigurationLimit(model, config_limit_gain=configuration_limit_gain),
            VelocityLimit(model, velocity_limit),
            *limits,
        )
        self._barriers: tuple[Barrier, ...] = tuple(barriers)
        self._needs_collisions = any(isinstance(b, SelfCollisionBarrier) for b in barriers)

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
        self._continuous = np.flatnonzero(self._map.is_continuous)
        self._shaper = MotionShaper(self._resolve_motion_limits(motion_limits, controlled), dt)
        self._steps = self._compile_steps(solver_name, fallback_name, damping, options, backend)
        self._target_reader = SitePoseReader(tool_frame)
        self._last_sites: Any = None
        self._last_target_se3: Any = None
        self._last_target: pin.SE3 | None = None
        self._configuration: Configuration | None = None
        self._base_start: pin.SE3 | None = None
        self._status = ControllerStatus.NOT_READY

    def _resolve_motion_limits(
        self, motion_limits: bool | MotionLimits | None, controlled: list[str]
    ) -> MotionLimits:
        """The limits the shaper enforces (see the ``motion_limits`` argument)."""
        robot = self.robot
        if isinstance(motion_limits, MotionLimits):
            if list(motion_limits.joint_names) != controlled:
                raise InputError(
                    f"motion_limits must cover the controlled joints {controlled} in order, "
                    f"got {list(motion_limits.joint_names)}"
                )
            return motion_limits
        if motion_limits is not None and not isinstance(motion_limits, bool):
            raise InputError(
                f"motion_limits must be None, a bool or a MotionLimits, got {motion_limits!r}"
            )
        smooth = bool(robot.acceleration_limits) if motion_limits is None else motion_limits
        return MotionLimits.from_robot(robot, controlled, use_acceleration=smooth)

    def _compile_steps(
        self,
        solver: str,
        fallback: str | None,
        damping: float,
        options: dict[str, Any],
        backend: str,
    ) -> tuple[QPStep, QPStep]:
        """The tick's QP (every limit) and, for the shaper's approach, the same QP with the
        position range as its only limit (the velocity limit would make a large error a
        bang-bang signal; the shaper scales the direction instead)."""
        model = self.robot.model

        def compiled(limits: tuple[Limit, ...]) -> QPStep:
            return QPStep(
                model,
                self._controlled_v,
                tasks=self._tasks,
                limits=limits,
                barriers=self._barriers,
                solver=solver,
                fallback_solver=fallback,
                damping=damping,
                solver_options=options,
                reference=backend == "pink",
            )

        full = compiled(self._limits)
        if not self._shaper.smooth or self._barriers or len(self._limits) > 2:
            return full, full
        return full, compiled(self._limits[:1])

    def _rebuild(self, **changes: Any) -> None:
        """Compile the QP steps with changed settings; nothing changes if that raises."""
        settings = replace(
            QPSettings(
                solver=self._solver,
                fallback=self._fallback_solver,
                damping=self._damping,
                options=self._solver_options,
                backend=self._qp_backend,
            ),
            **changes,
        )
        self._steps = self._compile_steps(
            settings.solver, settings.fallback, settings.damping, settings.options, settings.backend
        )
        self._solver = settings.solver
        self._fallback_solver = settings.fallback
        self._damping = settings.damping
        self._solver_options = settings.options
        self._qp_backend = settings.backend

    # ------------------------------------------------------------------ settings
    @property
    def solver(self) -> str:
        """QP backend name; setting it recompiles the QP (ValueError if not installed)."""
        return self._solver

    @solver.setter
    def solver(self, value: str) -> None:
        self._rebuild(solver=check_solver(value, "solver", optional=False))

    @property
    def fallback_solver(self) -> str | None:
        """Second backend tried when the first fails (None: none)."""
        return self._fallback_solver

    @fallback_solver.setter
    def fallback_solver(self, value: str | None) -> None:
        self._rebuild(fallback=check_solver(value, "fallback_solver", optional=True))

    @property
    def solver_options(self) -> dict[str, Any]:
        """Backend options (a copy); setting them recompiles the QP after a trial solve."""
        return dict(self._solver_options)

    @solver_options.setter
    def solver_options(self, value: dict[str, Any] | None) -> None:
        self._rebuild(options=check_solver_options(value))

    @property
    def damping(self) -> float:
        """Tikhonov damping of the QP Hessian, in ``[0, MAX_WEIGHT]``."""
        return self._damping

    @damping.setter
    def damping(self, value: float) -> None:
        self._rebuild(damping=real_number(value, "damping", low=0.0, high=MAX_WEIGHT))

    @property
    def integrate_from(self) -> str:
        """``"measured"`` or ``"command"``: where the QP linearises (module docstring)."""
        return self._integrate_from

    @integrate_from.setter
    def integrate_from(self, value: str) -> None:
        self._integrate_from = choice(value, "integrate_from", ("measured", "command"))

    @property
    def qp_backend(self) -> str:
        """``"pinkctl"`` (fast QP layer) or ``"pink"`` (pink's ``build_ik``)."""
        return self._qp_backend

    @qp_backend.setter
    def qp_backend(self, value: str) -> None:
        self._rebuild(backend=choice(value, "qp_backend", ("pinkctl", "pink")))

    @property
    def pre_step_callback(self) -> PreStepCallback | None:
        """``callback(configuration, setpoint_state)`` run before each solve, or None."""
        return self._pre_step_callback

    @pre_step_callback.setter
    def pre_step_callback(self, value: PreStepCallback | None) -> None:
        self._pre_step_callback = callable_or_none(value, "pre_step_callback")

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
        """The acceleration/jerk limits enforced on the command sequence, or None."""
        return self._shaper.limits if self._shaper.smooth else None

    @property
    def shaper(self) -> MotionShaper:
        """The motion shaper that owns the command sequence (last command, limits, dt)."""
        return self._shaper

    @property
    def qp_step(self) -> QPStep:
        """The compiled QP of a tick (every task, limit and barrier)."""
        return self._steps[0]

    @property
    def status(self) -> ControllerStatus:
        """What the last ``forward`` (or ``reset``) produced; see :class:`ControllerStatus`."""
        return self._status

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

    # ------------------------------------------------------------------ reset
    def reset(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> bool:
        """Seed the controller from the measured state.

        The frame target becomes the current tool pose, the posture target the current
        configuration, and the command sequence starts at rest at the measured positions;
        the setpoint is ignored. Returns False (controller not ready) if a controlled joint
        has no measured position.

        Raises:
            ValueError: If the states are not RobotState objects (see :meth:`forward`).
        """
        check_states(estimated_state, setpoint_state)
        read = self.read_estimate(estimated_state)
        if read is None:
            self._configuration = None
            self._status = ControllerStatus.NOT_READY
            return False
        positions, q = read
        robot = self.robot
        if self._base is not None:
            self._base.reset(estimated_state.root)
            self._base.write(q)
        self._configuration = Configuration(
            robot.model,
            robot.data,
            q,
            # distances are computed every tick only when a barrier reads them
            collision_model=robot.collision_model if self._needs_collisions else None,
            collision_data=robot.collision_data if self._needs_collisions else None,
            copy_data=True,
            forward_kinematics=True,
        )
        self._frame_task.set_target(
            self._configuration.get_transform_frame_to_world(self.tool_frame)
        )
        if self._posture_task is not None:
            self._posture_task.set_target(q)
        self._shaper.reset(positions)
        self._last_target = None
        self._status = ControllerStatus.OK
        self.last_error = None
        return True

    # ------------------------------------------------------------------ the tick's phases
    def read_estimate(
        self, estimated_state: RobotState | None
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Phase 1: the measured controlled positions and the Pinocchio ``q`` of the estimate.

        Uncontrolled joints present in the estimate take their measured values, the others
        their home value. Returns None (reason in ``last_error``) when a controlled position
        is missing.
        """
        joints = None if estimated_state is None else estimated_state.joints
        if joints is None:
            self.last_error = "estimated state has no joint state"
            return None
        if self._all_map is not None:
            every = self._all_map.positions_from_state(joints)
            if every is not None:
                return every[: self._n_controlled], self._all_map.to_configuration(
                    every, self.robot.q0
                )
        positions = self._map.positions_from_state(joints)
        if positions is None:
            self.last_error = (
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

    def update_configuration(
        self, measured: np.ndarray, q: np.ndarray, root: RootState | None = None
    ) -> None:
        """Phase 2: forward kinematics and Jacobians where the QP linearises.

        ``"command"`` integration replaces the controlled positions of ``q`` by the last
        command; a floating base is placed at the estimate's root (``"measured"``) or where
        the controller holds it.
        """
        configuration = self._configuration
        assert configuration is not None
        if self._continuous.size:
            self._follow_winding(measured)
        if self._integrate_from == "command":
            q = self._map.to_configuration(self._shaper.position, q)
        if self._base is not None:
            self._base_start = self._base.read(root) if self._integrate_from == "measured" else None
            self._base.write(q, self._base_start)
        if configuration.collision_model is None:
            # pink's Configuration.update without collisions, minus its copy of our new q:
            # joint Jacobians (with forward kinematics) and frame placements
            q.setflags(write=False)
            configuration.q = q
            pin.computeJointJacobians(configuration.model, configuration.data, q)
            pin.updateFramePlacements(configuration.model, configuration.data)
        else:
            configuration.update(q)

    def update_targets(self, setpoint_state: RobotState | None) -> bool:
        """Phase 3: frame and posture targets from the setpoint.

        Returns False (reason recorded) when the frame target lies beyond
        :data:`MAX_TARGET_DISTANCE`; the previous target is kept.
        """
        if setpoint_state is None:
            return True
        sites = setpoint_state.sites
        task = self._frame_task
        # states are immutable: the same site state sets the same target again, unless the
        # user replaced the target through get_frame_task() in between
        if sites is not None and not (
            sites is self._last_sites and task.transform_target_to_world is self._last_target_se3
        ):
            target = self._target_reader.pose(sites, task.transform_target_to_world)
            if target is not None:
                x, y, z = target.translation.tolist()
                if x * x + y * y + z * z > MAX_TARGET_DISTANCE**2:
                    distance = math.sqrt(x * x + y * y + z * z)
                    self.last_error = (
                        f"target of {self.tool_frame!r} is {distance:.3g} m from the world "
                        f"origin, beyond {MAX_TARGET_DISTANCE:g} m: ignored"
                    )
                    return False
                task.set_target(target)
            self._last_sites = sites
            self._last_target_se3 = task.transform_target_to_world
        joints = setpoint_state.joints
        if joints is not None and self._posture_task is not None:
            # only a complete joint setpoint (every controlled joint) replaces the posture target
            positions = self._map.positions_from_state(joints)
            if positions is not None:
                self._posture_task.set_target(self._map.to_configuration(positions, self.robot.q0))
        return True

    def solve(self) -> np.ndarray | None:
        """Phase 4: this tick's QP: the velocity [rad/s] of every QP variable (floating base
        first, then the controlled joints), or None (reason in ``last_error``).

        With motion limits and no QP rows, the tasks' velocity with only the position range
        as a limit (the shaper scales it); with QP rows (barriers, extra limits), the QP
        inside the shaper's box, so that the rows keep holding.
        """
        configuration = self._configuration
        assert configuration is not None
        full, approach = self._steps
        shaper = self._shaper
        try:
            if not shaper.smooth:
                x = full.step(configuration, self.dt)
            elif approach is not full:
                x = approach.step(configuration, self.dt)
            else:
                lower, upper = self._with_base_bounds(*shaper.box())
                try:
                    x = full.step(configuration, self.dt, lower, upper)
                except QPSolveError:
                    # the rows ask for a stop the joints cannot make under their acceleration
                    # and jerk limits (e.g. a barrier reached at speed): the hardware limits
                    # win, the rows are met as closely as the box allows
                    x = full.step(configuration, self.dt)
        except QPSolveError as exc:
            self.last_error = f"QP failed: {exc}"
            return None
        return np.divide(x, self.dt, out=x)

    def shape(self, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray, RootState | None]:
        """Phase 5: the next command from the QP's velocity (see
        :class:`~pinkctl.motion.MotionShaper`): positions and velocity of the controlled
        joints, and the floating base's desired root state (None without one)."""
        shaper = self._shaper
        n_base = self._n_base
        scale = 1.0
        if shaper.smooth and self._steps[1] is not self._steps[0]:
            positions, command_velocity = shaper.follow(
                velocity[n_base:],
                holding=self._target_holds(),
                gain=float(self._frame_task.gain),
            )
            scale = shaper.scale
        else:
            positions, command_velocity = shaper.commit(velocity[n_base:])
        root = None
        if self._base is not None:
            root = self._base.step(velocity[:n_base] * scale, self.dt, self._base_start)
        return positions, command_velocity, root

    def write_command(
        self, positions: np.ndarray, velocity: np.ndarray, root: RootState | None = None
    ) -> RobotState:
        """Phase 6: the output state (controlled joints; the root for a floating base)."""
        joints = self._map.command_state(positions, velocity)
        return RobotState(joints=joints) if root is None else RobotState(joints=joints, root=root)

    def forward(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> RobotState | None:
        """One control tick: :meth:`read_estimate`, :meth:`update_configuration`,
        :meth:`update_targets` (then the ``pre_step_callback``), :meth:`solve`,
        :meth:`shape`, :meth:`write_command`.

        Returns None (with ``last_error`` set) only before a successful reset. A tick that
        cannot be solved returns the next braking step (``status`` is
        :attr:`ControllerStatus.BRAKING`, the reason in ``last_error``); never raises for
        those.

        Raises:
            ValueError: If ``estimated_state`` is not a RobotState or ``setpoint_state`` is
                neither a RobotState nor None (a programming error, not a runtime condition).
        """
        if type(estimated_state) is not RobotState or (
            setpoint_state is not None and type(setpoint_state) is not RobotState
        ):
            check_states(estimated_state, setpoint_state)  # subclasses pass, others raise
        if self._configuration is None:
            self._status = ControllerStatus.NOT_READY
            return self._fail("forward called before a successful reset")
        read = self.read_estimate(estimated_state)
        if read is None:
            return self._brake()
        measured, q = read
        self.update_configuration(measured, q, estimated_state.root)
        if not self.update_targets(setpoint_state):
            return self._brake()
        callback = self._pre_step_callback
        if callback is not None:
            try:
                callback(self._configuration, setpoint_state)
            except Exception as exc:  # a user callback must not kill the control loop
                self.last_error = f"pre_step_callback raised {type(exc).__name__}: {exc}"
                return self._brake()
        velocity = self.solve()
        if velocity is None:
            return self._brake()
        positions, command_velocity, root = self.shape(velocity)
        self._status = ControllerStatus.OK
        self.last_error = None
        return self.write_command(positions, command_velocity, root)

    # ------------------------------------------------------------------ helpers
    def _target_holds(self) -> bool:
        """Whether the frame target is the same as on the previous tick."""
        target = self._frame_task.transform_target_to_world
        last = self._last_target
        holding = target is not None and last is not None and target.isApprox(last, 1e-14)
        self._last_target = None if target is None else target.copy()
        return holding

    def _with_base_bounds(
        self, lower: np.ndarray, upper: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The joints' velocity box, unbounded for the floating base's coordinates."""
        if not self._n_base:
            return lower, upper
        free = np.full(self._n_base, np.inf)
        return np.concatenate([-free, lower]), np.concatenate([free, upper])

    def _follow_winding(self, measured: np.ndarray) -> None:
        """Re-anchor continuous joints on the measured winding (whole turns apart)."""
        index = self._continuous
        turns = np.round((measured[index] - self._shaper.position[index]) / (2.0 * np.pi))
        if np.any(turns):
            every = np.zeros(self._n_controlled)
            every[index] = turns
            self._shaper.rewind(every)

    def _brake(self) -> RobotState:
        """The next braking step from the last command (the reason is in ``last_error``)."""
        positions, velocity = self._shaper.brake()
        self._status = ControllerStatus.BRAKING
        self._last_target = None
        root = None if self._base is None else self._base.step(np.zeros(6), self.dt)
        return self.write_command(positions, velocity, root)
