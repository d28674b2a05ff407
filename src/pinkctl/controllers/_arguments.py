"""Argument checks of :class:`~pinkctl.controllers.PinkIKController` (constructor and setters).

Each raises ``ValueError`` naming the argument and what was expected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypeVar, overload

import numpy as np
import pinocchio as pin
from pink import Configuration

from .._validation import choice, real_number
from ..core.ball_joints import expand_ball_joints
from ..core.robot import PinkRobot
from ..core.state import RobotState
from ..errors import InputError
from ..motion.limits import MotionLimits
from ..qp import available_solvers, missing_solver_message

__all__ = [
    "DT_RANGE",
    "MAX_WEIGHT",
    "PATHS",
    "PreStepCallback",
    "QPSetting",
    "QPSettings",
    "check_damping",
    "check_fallback",
    "check_path",
    "check_solver_name",
    "check_cost",
    "check_pink_objects",
    "check_solver",
    "check_solver_options",
    "check_states",
    "check_tool_frame",
    "resolve_motion_limits",
]

#: Largest accepted cost or damping: weights are squared into the QP's Hessian, and beyond
#: this the problem is numerically meaningless (1e12 against a posture cost of 1e-3).
MAX_WEIGHT = 1e6
#: Accepted control periods [s].
DT_RANGE = (1e-6, 1.0)
#: Attributes of pink tasks and barriers that name model frames (checked at construction).
_FRAME_ATTRIBUTES = ("frame", "root", "floor_frame", "hub_frame")


#: ``callback(configuration, setpoint_state)`` run by the controller before each solve.
PreStepCallback = Callable[[Configuration, "RobotState | None"], None]

#: The two paths a controller's QP can take (:attr:`QPSettings.path`).
PATHS = ("pinkctl", "pink")


@dataclass(frozen=True)
class QPSettings:
    """The settings a :class:`~pinkctl.PinkIKController` compiles its QP with.

    Attributes:
        solver: Solver name (:mod:`pinkctl.qp.solvers`).
        fallback: Solver tried when ``solver`` fails, or None.
        damping: Tikhonov damping of the Hessian.
        options: ``solver``'s options.
        path: ``"pinkctl"`` (the compiled QP) or ``"pink"`` (pink's ``build_ik`` + qpsolvers).
    """

    solver: str
    fallback: str | None
    damping: float
    options: dict[str, Any]
    path: str

    @classmethod
    def checked(
        cls, solver: Any, fallback: Any, damping: Any, options: Any, path: Any
    ) -> QPSettings:
        """The settings, each checked (InputError naming the argument)."""
        return cls(
            check_solver_name(solver),
            check_fallback(fallback),
            check_damping(damping),
            check_solver_options(options),
            check_path(path),
        )


class _Recompiles(Protocol):
    _settings: QPSettings

    def _rebuild(self, settings: QPSettings) -> None: ...


T = TypeVar("T")


class QPSetting(Generic[T]):
    """A controller property over one field of its :class:`QPSettings`: setting it checks the
    value and compiles the QP again (nothing changes if either raises); a dict is read as a
    copy.

    Args:
        field: The :class:`QPSettings` field.
        check: Returns the checked value or raises ``InputError``.
        doc: The property's docstring.
    """

    def __init__(self, field: str, check: Callable[[Any], T], doc: str) -> None:
        self._field = field
        self._check = check
        self.__doc__ = doc

    @overload
    def __get__(self, owner: None, cls: type) -> QPSetting[T]: ...

    @overload
    def __get__(self, owner: _Recompiles, cls: type) -> T: ...

    def __get__(self, owner: _Recompiles | None, cls: type) -> QPSetting[T] | T:
        if owner is None:
            return self
        value: T = getattr(owner._settings, self._field)
        return dict(value) if isinstance(value, dict) else value  # type: ignore[return-value]

    def __set__(self, owner: _Recompiles, value: Any) -> None:
        changes: dict[str, Any] = {self._field: self._check(value)}
        owner._rebuild(replace(owner._settings, **changes))


def check_tool_frame(robot: PinkRobot, tool_frame: Any, site_space: list[str]) -> str:
    """The tool frame: the given one, else the robot's configured one, else the model's last
    frame; a frame of the model and a site of ``site_space``."""
    model = robot.model
    if tool_frame is None:
        tool_frame = robot.tool_frame or model.frames[model.nframes - 1].name
    if not isinstance(tool_frame, str) or not model.existFrame(tool_frame):
        raise InputError(f"tool_frame {tool_frame!r} is not a frame of the model")
    if tool_frame not in site_space:
        raise InputError(f"tool_frame {tool_frame!r} is not in robot_site_space {site_space}")
    return tool_frame


def check_cost(value: Any, name: str) -> float | np.ndarray:
    """A non-negative scalar cost or a 3-vector of them (at most :data:`MAX_WEIGHT`)."""
    if value is None:
        return 0.0
    if isinstance(value, (bool, str, bytes)):
        raise InputError(f"{name} must be a number or a 3-vector of numbers, got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(
            f"{name} must be a number or a 3-vector of numbers, got {value!r}"
        ) from exc
    if arr.shape not in ((), (3,)):
        raise InputError(f"{name} must be a scalar or a 3-vector, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > MAX_WEIGHT):
        raise InputError(f"{name} must be in [0, {MAX_WEIGHT:g}], got {value!r}")
    return float(arr) if arr.shape == () else arr.copy()


def check_states(estimated_state: Any, setpoint_state: Any) -> None:
    if not isinstance(estimated_state, RobotState):
        raise InputError(
            f"estimated_state must be a RobotState, got {type(estimated_state).__name__}"
        )
    if setpoint_state is not None and not isinstance(setpoint_state, RobotState):
        raise InputError(
            f"setpoint_state must be a RobotState or None, got {type(setpoint_state).__name__}"
        )


def check_solver(value: Any, name: str, *, optional: bool) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or value not in available_solvers():
        raise InputError(missing_solver_message(value, name))
    return value


def check_solver_name(value: Any) -> str:
    """The ``solver`` argument: an installed solver's name."""
    return str(check_solver(value, "solver", optional=False))


def check_fallback(value: Any) -> str | None:
    """The ``fallback_solver`` argument: None or an installed solver's name."""
    return check_solver(value, "fallback_solver", optional=True)


def check_damping(value: Any) -> float:
    """The ``damping`` argument, in ``[0, MAX_WEIGHT]``."""
    return real_number(value, "damping", low=0.0, high=MAX_WEIGHT)


def check_path(value: Any) -> str:
    """The ``qp_path`` argument."""
    return choice(value, "qp_path", PATHS)


def check_pink_objects(value: Any, kind: type, name: str, model: pin.Model) -> list[Any]:
    """A list of pink ``kind`` objects whose frame names exist in ``model``."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InputError(f"{name} must be a sequence of pink {kind.__name__} objects")
    items = list(value)
    for item in items:
        if not isinstance(item, kind):
            raise InputError(
                f"{name} must hold pink {kind.__name__} objects, got {type(item).__name__}"
            )
        _check_frames(item, name, model)
    return items


def _check_frames(item: Any, name: str, model: pin.Model) -> None:
    """Raise InputError when a pink task or limit ``item`` (argument ``name``) names a frame
    ``model`` lacks (its frame attributes and its ``frames`` list)."""
    frames = [getattr(item, attr, None) for attr in _FRAME_ATTRIBUTES]
    frames += list(getattr(item, "frames", None) or [])
    for frame in frames:
        if isinstance(frame, str) and not model.existFrame(frame):
            raise InputError(
                f"{name}: {type(item).__name__} uses frame {frame!r}, which is not a frame "
                "of the model"
            )


def check_solver_options(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise InputError(f"solver_options must be a dict with string keys, got {value!r}")
    return dict(value)


def resolve_motion_limits(
    robot: PinkRobot, motion_limits: bool | MotionLimits | None
) -> MotionLimits:
    """The limits the motion shaper enforces (the controller's ``motion_limits`` argument):
    ``None``: the robot's acceleration and jerk limits when it declares them; ``False``:
    position and velocity limits only; the velocity limits are the configured ones.

    A robot with controlled ball joints gets position and velocity limits only (``None``;
    ``True`` or acceleration limits raise InputError): the shaper brakes each coordinate
    ahead of its own range, while a ball joint's range bounds the norm of its three
    coordinates, which the QP's :class:`~pinkctl.qp.BallRangeLimit` holds only when the
    command follows the QP's step."""
    controlled = expand_ball_joints(robot.model, list(robot.controlled_joint_names))
    balls = len(controlled) != len(robot.controlled_joint_names)
    _check_motion_limits(motion_limits, controlled, balls=balls)
    if isinstance(motion_limits, MotionLimits):
        return motion_limits
    smooth = (
        bool(robot.acceleration_limits) and not balls if motion_limits is None else motion_limits
    )
    return MotionLimits.from_robot(robot, controlled, use_acceleration=smooth)


def _check_motion_limits(
    motion_limits: bool | MotionLimits | None, controlled: list[str], *, balls: bool
) -> None:
    """Raise InputError for a ``motion_limits`` argument :func:`resolve_motion_limits` does
    not take: acceleration limits asked on a robot with controlled ``balls``, limits over
    other joints than ``controlled`` (ball joints expanded), or another type."""
    smooth_asked = motion_limits is True or (
        isinstance(motion_limits, MotionLimits) and motion_limits.acceleration is not None
    )
    if balls and smooth_asked:
        raise InputError(
            "motion_limits: acceleration and jerk limits are not enforced on robots with "
            "controlled ball joints (their range is held by the QP); use None or False"
        )
    if isinstance(motion_limits, MotionLimits):
        if list(motion_limits.joint_names) != controlled:
            raise InputError(
                f"motion_limits must cover the controlled joints {controlled} in order, "
                f"got {list(motion_limits.joint_names)}"
            )
    elif motion_limits is not None and not isinstance(motion_limits, bool):
        raise InputError(
            f"motion_limits must be None, a bool or a MotionLimits, got {motion_limits!r}"
        )
