"""One joint model for every layer: what a joint is, where its coordinates sit, its limits.

The controller's joint maps (:class:`~pinkctl.core.joints.JointSpaceMap`), the IK's moved
joints (:class:`~pinkctl.ik.joints.JointSubset`), the motion limits
(:meth:`~pinkctl.motion.MotionLimits.from_robot`) and the controller's velocity limits all
read joints through :func:`joint_info` and :func:`configured_velocity_limits`, so that they
agree on:

- the *kind* of a joint, from its Pinocchio coordinates: ``"scalar"`` (revolute, prismatic,
  helical: ``nq = nv = 1``), ``"continuous"`` (unbounded revolute stored as
  ``(cos θ, sin θ)``: ``nq = 2, nv = 1``), ``"mimic"`` (no coordinate of its own:
  ``nq = nv = 0``), ``"multi"`` (ball, free-flyer, planar, ...: several velocity coordinates);
- its position range: finite only for scalar joints whose Pinocchio limits are below
  :data:`UNBOUNDED` in magnitude (URDF continuous joints and unset limits are unbounded);
- its velocity limit: the robot's configured value (``robot.velocity_limits``, from
  ``robot.toml``) where there is one, else the model's ``velocityLimit``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pinocchio as pin

from ..errors import InputError

if TYPE_CHECKING:  # the robot package builds on this module
    from .robot.model import PinkRobot

__all__ = [
    "UNBOUNDED",
    "JointInfo",
    "JointKind",
    "configured_velocity_limits",
    "joint_info",
    "scalar_joint_names",
]

#: A Pinocchio position limit beyond this magnitude [rad or m] means "no limit".
UNBOUNDED = 1e10

JointKind = Literal["scalar", "continuous", "mimic", "multi"]


@dataclass(frozen=True)
class JointInfo:
    """A joint of a Pinocchio model, as every pinkctl layer sees it.

    Attributes:
        name: Joint name.
        kind: ``"scalar"``, ``"continuous"``, ``"mimic"`` or ``"multi"`` (module docstring).
        idx_q: First configuration index.
        nq: Number of configuration coordinates.
        idx_v: First velocity (tangent) index.
        nv: Number of velocity coordinates.
        lower: Lower position limit [rad or m], ``-inf`` when unbounded (or not scalar).
        upper: Upper position limit, ``+inf`` when unbounded (or not scalar).
        velocity: The model's velocity limit of a one-velocity joint [rad/s or m/s] (``inf``
            for other kinds).
    """

    name: str
    kind: JointKind
    idx_q: int
    nq: int
    idx_v: int
    nv: int
    lower: float
    upper: float
    velocity: float

    @property
    def bounded(self) -> bool:
        """Whether the joint has a finite position range."""
        return bool(np.isfinite(self.lower) and np.isfinite(self.upper))


def _kind(nq: int, nv: int) -> JointKind:
    if nq == 1 and nv == 1:
        return "scalar"
    if nq == 2 and nv == 1:
        return "continuous"
    if nq == 0 and nv == 0:
        return "mimic"
    return "multi"


def joint_info(model: pin.Model, name: str, *, what: str = "joint") -> JointInfo:
    """The :class:`JointInfo` of joint ``name``.

    Raises:
        InputError: If ``name`` is not a joint of the model (the message starts with
            ``what`` and suggests close names), or its Pinocchio limits are crossed.
    """
    if not isinstance(name, str) or not model.existJointName(name):
        close = difflib.get_close_matches(str(name), list(model.names), n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise InputError(f"{what} {name!r} is not a joint of the model{hint}")
    joint = model.joints[model.getJointId(name)]
    kind = _kind(joint.nq, joint.nv)
    lower, upper = -np.inf, np.inf
    if kind == "scalar":
        lo = float(model.lowerPositionLimit[joint.idx_q])
        hi = float(model.upperPositionLimit[joint.idx_q])
        if np.isfinite(lo) and np.isfinite(hi) and max(abs(lo), abs(hi)) <= UNBOUNDED:
            if hi < lo:
                raise InputError(f"{what} {name!r} has its lower limit above its upper limit")
            lower, upper = lo, hi
    velocity = float(model.velocityLimit[joint.idx_v]) if joint.nv == 1 else np.inf
    return JointInfo(
        name=name,
        kind=kind,
        idx_q=int(joint.idx_q),
        nq=int(joint.nq),
        idx_v=int(joint.idx_v),
        nv=int(joint.nv),
        lower=lower,
        upper=upper,
        velocity=velocity,
    )


def scalar_joint_names(model: pin.Model) -> list[str]:
    """Every joint with one velocity coordinate and a position of its own (revolute,
    prismatic, helical, continuous; not a mimic follower), in model order."""
    joints = model.joints
    return [
        model.names[j]
        for j in range(1, model.njoints)
        if joints[j].nv == 1 and joints[j].nq in (1, 2)
    ]


def configured_velocity_limits(robot: PinkRobot) -> np.ndarray:
    """The robot's velocity limit per tangent coordinate (``nv``,) [rad/s or m/s]: the
    configured ``robot.velocity_limits`` over the model's ``velocityLimit`` (a ball joint's
    value on each of its three coordinates)."""
    model = robot.model
    limits = np.array(model.velocityLimit, dtype=np.float64)
    for name, value in robot.velocity_limits.items():
        if model.existJointName(name):
            joint = model.joints[model.getJointId(name)]
            if joint.nv == 1 or joint.shortname() == "JointModelSpherical":
                limits[joint.idx_v : joint.idx_v + joint.nv] = value
    return limits
