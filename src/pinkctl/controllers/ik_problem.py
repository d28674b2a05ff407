"""The pink objects of an IK controller's QP: its tasks, limits, barriers and priority levels.

Built once from the controller's arguments (each checked, naming the argument on failure):
a frame task on the tool frame, a posture task unless its cost is 0, the user's extra tasks;
pink's configuration limit (the position range) and velocity limit (the robot's *configured*
velocity limits, robot.toml, not only the URDF's), a :class:`~pinkctl.qp.BallRangeLimit` when
the robot has ball joints with a range (``robot.ball_ranges``, with the configuration limit's
gain), the user's extra limits; the user's barriers; optional strict priority levels
(:mod:`pinkctl.controllers.priority_levels`); the whole-body tasks and rows
(:mod:`pinkctl.controllers.whole_body`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.barriers import Barrier, SelfCollisionBarrier
from pink.limits import ConfigurationLimit, Limit, VelocityLimit
from pink.tasks import FrameTask, PostureTask, Task

from .._validation import choice, real_number
from ..core.joint_info import configured_velocity_limits
from ..core.robot import PinkRobot
from ..errors import InputError
from ..qp import BallRangeLimit, ReferenceQP, TickQP, compile_cascade, compile_qp
from ._arguments import MAX_WEIGHT, QPSettings, check_cost, check_pink_objects
from .frame_target import FrameTarget
from .priority_levels import resolve_priority_levels
from .tick_mode import TickMode
from .whole_body import WholeBody, WholeBodyTargets

__all__ = ["IKProblem"]


class IKProblem:
    """The tasks, limits and barriers of a :class:`~pinkctl.PinkIKController` (its docstring
    describes the arguments).

    Attributes:
        frame: The tool-frame task.
        posture: The posture task, or None.
        tasks: Frame, posture (if any), extras, whole-body tasks.
        whole_body: The whole-body tasks and rows (:mod:`pinkctl.controllers.whole_body`).
        range_limit: pink's configuration limit (the position range).
        range_limits: The range limit, and the ball joints' (:class:`~pinkctl.qp.BallRangeLimit`)
            when the robot has ball joints with a range.
        limits: The range limits, the velocity limit, the extras.
        extra_limits: The user's limits and the whole-body rows.
        barriers: The user's barriers.
        levels: The tasks per priority level, or None.
        priority_method: ``"cascade"`` or ``"nullspace"`` (with ``levels``).
    """

    def __init__(
        self,
        robot: PinkRobot,
        tool_frame: str,
        *,
        position_cost: Any,
        orientation_cost: Any,
        posture_cost: Any,
        gain: float,
        lm_damping: float,
        extra_tasks: Sequence[Task] | None,
        extra_limits: Sequence[Limit] | None,
        extra_barriers: Sequence[Barrier] | None,
        configuration_limit_gain: float,
        priority_levels: Sequence[Sequence[Task | str]] | None,
        priority_method: str,
        whole_body: dict[str, Any] | None = None,
    ) -> None:
        model = robot.model
        gain = real_number(gain, "gain", low=0.0, high=1.0, low_open=True)
        posture_weight = check_cost(posture_cost, "posture_cost")
        if np.ndim(posture_weight) != 0:
            raise InputError("posture_cost must be a scalar")
        self.frame = FrameTask(
            tool_frame,
            position_cost=check_cost(position_cost, "position_cost"),
            orientation_cost=check_cost(orientation_cost, "orientation_cost"),
            lm_damping=real_number(lm_damping, "lm_damping", low=0.0, high=MAX_WEIGHT),
            gain=gain,
        )
        self.posture = PostureTask(cost=posture_weight, gain=gain) if posture_weight > 0 else None
        options = {"position_cost": position_cost, "orientation_cost": orientation_cost}
        options |= whole_body or {}
        site_space = options.pop("site_space", ())
        self.whole_body = WholeBody(robot, tool_frame, site_space, options, gain=gain)
        if self.whole_body.tool_costs is not None:
            self.frame.set_position_cost(self.whole_body.tool_costs.position_cost)
            self.frame.set_orientation_cost(self.whole_body.tool_costs.orientation_cost)
        extra = check_pink_objects(extra_tasks, Task, "extra_tasks", model)
        posture = [] if self.posture is None else [self.posture]
        self.tasks: tuple[Task, ...] = (self.frame, *posture, *extra)
        limit_gain = real_number(
            configuration_limit_gain, "configuration_limit_gain", low=0.0, high=1.0, low_open=True
        )
        self.range_limit = ConfigurationLimit(model, config_limit_gain=limit_gain)
        self.range_limits: tuple[Limit, ...] = (self.range_limit,)
        if robot.ball_ranges:
            balls = BallRangeLimit(model, robot.ball_ranges, gain=limit_gain)
            self.range_limits = (self.range_limit, balls)
        velocity = VelocityLimit(model, configured_velocity_limits(robot))
        self.extra_limits = tuple(check_pink_objects(extra_limits, Limit, "extra_limits", model))
        self.barriers: tuple[Barrier, ...] = tuple(
            check_pink_objects(extra_barriers, Barrier, "extra_barriers", model)
        )
        self.priority_method = choice(priority_method, "priority_method", ("cascade", "nullspace"))
        self.levels = None
        if priority_levels is not None:
            named = self.whole_body.named()
            self.levels = resolve_priority_levels(
                priority_levels, self.frame, self.posture, extra, named
            )
            self.whole_body.contacts_as_tasks = any(
                "contacts" in level for level in priority_levels
            )
        self.tasks = (*self.tasks, *self.whole_body.tasks)
        self.extra_limits = (*self.extra_limits, *self.whole_body.limits)
        self.limits: tuple[Limit, ...] = (*self.range_limits, velocity, *self.extra_limits)

    @property
    def has_rows(self) -> bool:
        """Whether the QP has objects beyond the range and velocity limits (extra limits,
        barriers), which may add inequality rows."""
        return bool(self.extra_limits or self.barriers)

    def compile(
        self,
        model: pin.Model,
        columns: np.ndarray,
        mode: TickMode,
        settings: QPSettings,
        collision: Limit | None = None,
    ) -> TickQP:
        """The QP of a tick over the tangent ``columns`` (the QP variables) with these settings:
        the range limits alone in :attr:`TickMode.APPROACH`, every limit otherwise (and the
        ``collision`` limit, if any); a cascade with priority levels; pink's path with
        ``settings.path == "pink"``.

        Raises:
            InputError: Priority levels on pink's path, or what compiling raises.
        """
        limits = self.range_limits if mode is TickMode.APPROACH else self.limits
        if collision is not None:
            limits = (*limits, collision)
        common: dict[str, Any] = {
            "limits": limits,
            "barriers": self.barriers,
            "solver": settings.solver,
            "fallback_solver": settings.fallback,
            "damping": settings.damping,
            "solver_options": settings.options,
        }
        if self.levels is not None:
            if settings.path == "pink":
                raise InputError("priority_levels needs qp_path='pinkctl'")
            method = self.priority_method
            return compile_cascade(model, columns, levels=self.levels, method=method, **common)
        if settings.path == "pink":
            return ReferenceQP(model, columns, tasks=self.tasks, **common)
        return compile_qp(model, columns, tasks=self.tasks, **common)

    def targets(self) -> FrameTarget | WholeBodyTargets:
        """What reads the setpoint's targets: the tool frame's, and the whole-body ones when
        there are any."""
        tool = FrameTarget(self.frame)
        return tool if self.whole_body.reads_nothing else WholeBodyTargets(tool, self.whole_body)

    def configuration(self, robot: PinkRobot, q: np.ndarray) -> Configuration:
        """A pink configuration at ``q`` (collision distances only when a barrier reads them),
        with the frame target at the tool's pose and the posture target at ``q``."""
        collisions = any(isinstance(b, SelfCollisionBarrier) for b in self.barriers)
        configuration = Configuration(
            robot.model,
            robot.data,
            q,
            collision_model=robot.collision_model if collisions else None,
            collision_data=robot.collision_data if collisions else None,
            copy_data=True,
            forward_kinematics=True,
        )
        self.frame.set_target(configuration.get_transform_frame_to_world(self.frame.frame))
        if self.posture is not None:
            self.posture.set_target(q)
        self.whole_body.reset(configuration)
        return configuration
