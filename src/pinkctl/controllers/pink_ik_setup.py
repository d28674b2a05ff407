"""What a :class:`~pinkctl.PinkIKController` is built from: its checked arguments, tasks,
limits, joint maps, motion shaper and compiled QP steps, and the settings that recompile them.

The tick itself (reset and the six phases of ``forward``) is in :mod:`pinkctl.controllers.pink_ik`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.barriers import Barrier, SelfCollisionBarrier
from pink.limits import ConfigurationLimit, Limit, VelocityLimit
from pink.tasks import FrameTask, PostureTask, Task

from .._validation import callable_or_none, choice, name_list, real_number
from ..core.joint_info import configured_velocity_limits
from ..core.joints import JointSpaceMap
from ..core.poses import SitePoseReader
from ..core.robot import PinkRobot
from ..core.state import RobotState
from ..errors import InputError
from ..motion.limits import MotionLimits
from ..motion.shaper import MotionShaper
from ..qp import CascadeStep, QPStep
from ._arguments import (
    DT_RANGE,
    MAX_WEIGHT,
    check_cost,
    check_pink_objects,
    check_solver,
    check_solver_options,
)
from .base import BaseController
from .floating_base import FloatingBase
from .priority_levels import resolve_priority_levels
from .status import ControllerStatus

__all__ = ["PinkIKSetup", "PreStepCallback", "QPSettings"]


PreStepCallback = Callable[[Configuration, "RobotState | None"], None]


@dataclass(frozen=True)
class QPSettings:
    """The settings a :class:`PinkIKController` compiles its QP with."""

    solver: str
    fallback: str | None
    damping: float
    options: dict[str, Any]
    backend: str


class PinkIKSetup(BaseController):
    """Construction and settings of :class:`~pinkctl.PinkIKController` (its docstring lists
    the arguments)."""

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
        priority_levels: Sequence[Sequence[Task | str]] | None = None,
        priority_method: Literal["cascade", "nullspace"] = "cascade",
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
        velocity_limit = configured_velocity_limits(pink_robot)
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
        self._priority_method = choice(priority_method, "priority_method", ("cascade", "nullspace"))
        self._levels = None
        if priority_levels is not None:
            self._levels = resolve_priority_levels(
                priority_levels, self._frame_task, self._posture_task, tasks
            )
        self._steps = self._compile_steps(
            QPSettings(solver_name, fallback_name, damping, options, backend)
        )
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
        self, settings: QPSettings
    ) -> tuple[QPStep | CascadeStep, QPStep | CascadeStep]:
        """The tick's QP (every limit) and, for the shaper's approach, the same QP with the
        position range as its only limit (the velocity limit would make a large error a
        bang-bang signal; the shaper scales the direction instead)."""
        model = self.robot.model
        if self._levels is not None and settings.backend == "pink":
            raise InputError("priority_levels needs qp_backend='pinkctl'")

        def compiled(limits: tuple[Limit, ...]) -> QPStep | CascadeStep:
            common: dict[str, Any] = {
                "limits": limits,
                "barriers": self._barriers,
                "solver": settings.solver,
                "fallback_solver": settings.fallback,
                "damping": settings.damping,
                "solver_options": settings.options,
            }
            if self._levels is not None:
                return CascadeStep(
                    model,
                    self._controlled_v,
                    levels=self._levels,
                    method=self._priority_method,
                    **common,
                )
            return QPStep(
                model,
                self._controlled_v,
                tasks=self._tasks,
                reference=settings.backend == "pink",
                **common,
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
        self._steps = self._compile_steps(settings)
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
    def qp_step(self) -> QPStep | CascadeStep:
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
