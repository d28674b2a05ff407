"""MotionLimits: per-joint position, velocity, acceleration and jerk limits."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.ball_joints import expand_ball_joints, split_ball_coordinate
from ..core.joint_info import configured_velocity_limits, joint_info
from ..errors import InputError
from ._vectors import _as_vector, _positive_finite, _readonly

if TYPE_CHECKING:  # pragma: no cover
    from ..core.robot import PinkRobot

__all__ = ["MotionLimits"]


@dataclass(frozen=True, kw_only=True)
class MotionLimits:
    """Per-joint motion limits of a set of joints.

    Attributes:
        joint_names: The joints, in the order of every array below.
        lower: Lower position limits [rad or m]; ``-inf`` for a joint without one.
        upper: Upper position limits [rad or m]; ``+inf`` for a joint without one.
        velocity: Velocity limits [rad/s or m/s], finite and positive.
        acceleration: Acceleration limits [rad/s² or m/s²], finite and positive, or None
            (not limited).
        jerk: Jerk limits [rad/s³ or m/s³], finite and positive, or None. Jerk limits need
            acceleration limits.

    Arrays are stored as read-only float64 copies. A scalar is accepted for any array and
    applies to every joint. Raises ``ValueError`` on a malformed argument.
    """

    joint_names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray | None = None
    jerk: np.ndarray | None = None

    def __post_init__(self) -> None:
        names = _joint_names(self.joint_names)
        n = len(names)
        lower, upper = _position_range(self.lower, self.upper, names)
        velocity = _limit_vector(self.velocity, n, "velocity")
        acceleration = _limit_vector(self.acceleration, n, "acceleration")
        if self.jerk is not None and acceleration is None:
            raise InputError("jerk limits need acceleration limits (acceleration is None)")
        jerk = _limit_vector(self.jerk, n, "jerk")
        object.__setattr__(self, "joint_names", names)
        object.__setattr__(self, "lower", _readonly(lower))
        object.__setattr__(self, "upper", _readonly(upper))
        object.__setattr__(self, "velocity", velocity)
        object.__setattr__(self, "acceleration", acceleration)
        object.__setattr__(self, "jerk", jerk)

    @property
    def num_joints(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The limit kinds this object limits (position and velocity always)."""
        out = ["position", "velocity"]
        if self.acceleration is not None:
            out.append("acceleration")
        if self.jerk is not None:
            out.append("jerk")
        return tuple(out)

    def select(self, joint_names: Sequence[str]) -> MotionLimits:
        """The limits of a subset of the joints, in the given order."""
        index = {name: i for i, name in enumerate(self.joint_names)}
        unknown = [j for j in joint_names if j not in index]
        if unknown:
            raise InputError(f"joints {unknown} are not in {list(self.joint_names)}")
        idx = np.array([index[j] for j in joint_names], dtype=np.intp)
        return MotionLimits(
            joint_names=tuple(joint_names),
            lower=self.lower[idx],
            upper=self.upper[idx],
            velocity=self.velocity[idx],
            acceleration=None if self.acceleration is None else self.acceleration[idx],
            jerk=None if self.jerk is None else self.jerk[idx],
        )

    @classmethod
    def from_robot(
        cls,
        robot: PinkRobot,
        joint_names: Sequence[str] | None = None,
        *,
        use_acceleration: bool = True,
        use_jerk: bool = True,
    ) -> MotionLimits:
        """Read the limits of a :class:`~pinkctl.core.robot.PinkRobot`.

        Position and velocity limits are read through :mod:`pinkctl.core.joint_info` (the
        joint model every layer shares): the Pinocchio model's range at each joint's
        ``idx_q``, infinite for continuous joints and limits beyond
        :data:`~pinkctl.core.joint_info.UNBOUNDED`; ``robot.velocity_limits`` over the
        model's ``velocityLimit``. Acceleration and jerk limits come from
        ``robot.acceleration_limits`` and ``robot.jerk_limits``.

        Args:
            robot: The robot.
            joint_names: The joints (default: ``robot.controlled_joint_names``, a ball joint as
                its three coordinates). Each must have
                exactly one velocity coordinate, or be a ball joint's coordinate
                (``<joint>:x`` ..., :mod:`pinkctl.core.ball_joints`: no range; the ball
                joint's velocity, acceleration and jerk limits).
            use_acceleration: Include acceleration limits when the robot declares them.
            use_jerk: Include jerk limits when the robot declares them (only together with
                acceleration limits).

        Raises:
            ValueError: If a joint is unknown, has no single coordinate (mimic followers,
                floating joints), or lacks a positive velocity limit, or if the robot declares
                acceleration or jerk limits for some of the joints only.
        """
        model = robot.model
        controlled = list(robot.controlled_joint_names)
        names = expand_ball_joints(model, controlled) if joint_names is None else list(joint_names)
        joints, lower, upper, velocity = _ranges_and_velocities(robot, names)
        if not np.all(np.isfinite(velocity) & (velocity > 0.0)):
            bad = [names[i] for i in np.flatnonzero(~(np.isfinite(velocity) & (velocity > 0.0)))]
            raise InputError(f"joints {bad} have no positive velocity limit")
        acceleration = (
            _declared(robot, robot.acceleration_limits, joints, "acceleration")
            if use_acceleration
            else None
        )
        jerk = None
        if use_jerk and acceleration is not None:
            jerk = _declared(robot, robot.jerk_limits, joints, "jerk")
        return cls(
            joint_names=tuple(names),
            lower=lower,
            upper=upper,
            velocity=velocity,
            acceleration=acceleration,
            jerk=jerk,
        )


def _joint_names(names: object) -> tuple[str, ...]:
    """``names`` as a tuple of distinct strings."""
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise InputError("joint_names must be a sequence of joint names")
    names = tuple(names)
    if not all(isinstance(n, str) for n in names):
        raise InputError(f"joint_names must be strings, got {names}")
    if len(set(names)) != len(names):
        raise InputError(f"joint_names has duplicates: {list(names)}")
    return names


def _position_range(
    lower: object, upper: object, names: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` as vectors with ``lower < upper`` (infinite ends allowed outward)."""
    n = len(names)
    lower = _as_vector(lower, n, "lower")
    upper = _as_vector(upper, n, "upper")
    if (lower == np.inf).any() or (upper == -np.inf).any():
        raise InputError("lower cannot be +inf and upper cannot be -inf")
    if not (lower < upper).all():
        bad = [names[i] for i in np.flatnonzero(~(lower < upper))]
        raise InputError(f"lower must be < upper; violated for joints {bad}")
    return lower, upper


def _limit_vector(value: object, n: int, name: str) -> np.ndarray | None:
    """A derivative limit as a read-only vector of ``n`` finite positive values (None kept)."""
    if value is None:
        return None
    limit = _as_vector(value, n, name)
    _positive_finite(limit, name)
    return _readonly(limit)


def _ranges_and_velocities(
    robot: PinkRobot, names: list[str]
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """``(joints, lower, upper, velocity)`` of the coordinates ``names`` (the joint of each
    name: a ball joint's for its coordinates), from :func:`_joint_limits`."""
    configured = configured_velocity_limits(robot)
    n = len(names)
    joints = list(names)
    lower, upper, velocity = np.empty(n), np.empty(n), np.empty(n)
    for i, name in enumerate(names):
        joints[i], lower[i], upper[i], velocity[i] = _joint_limits(robot, name, configured)
    return joints, lower, upper, velocity


def _joint_limits(
    robot: PinkRobot, name: str, configured: np.ndarray
) -> tuple[str, float, float, float]:
    """``(joint, lower, upper, velocity)`` of one coordinate: a ball joint's coordinate has
    no range and its joint's velocity limit; a single-coordinate joint its own range."""
    model = robot.model
    ball = split_ball_coordinate(name)
    if ball is not None and model.existJointName(ball[0]):
        info = joint_info(model, ball[0])
        if info.nq == 4 and info.nv == 3:  # a ball joint's coordinate: no range
            return ball[0], -np.inf, np.inf, float(configured[info.idx_v + ball[1]])
    if not model.existJointName(name):
        raise InputError(f"joint {name!r} is not in the model of robot {robot.name!r}")
    info = joint_info(model, name)
    if info.kind not in ("scalar", "continuous"):
        raise InputError(
            f"joint {name!r} has nq={info.nq}, nv={info.nv}; motion limits need "
            "single-coordinate joints (revolute, prismatic or continuous)"
        )
    velocity = float(configured[info.idx_v])
    if not (math.isfinite(velocity) and velocity > 0.0):
        raise InputError(f"joint {name!r} has no positive velocity limit (got {velocity})")
    return name, info.lower, info.upper, velocity


def _declared(
    robot: PinkRobot, values: dict[str, float], joints: list[str], what: str
) -> np.ndarray | None:
    """The ``what`` limits the robot declares for ``joints``: None when it declares none,
    ``ValueError`` when it declares some of them only."""
    present = [j for j in joints if j in values]
    if not present:
        return None
    if len(present) != len(joints):
        missing = [j for j in joints if j not in values]
        raise InputError(f"robot {robot.name!r} lacks {what} limits for joints {missing}")
    return np.array([values[j] for j in joints], dtype=np.float64)
