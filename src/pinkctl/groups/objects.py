"""The objects a kinematic scene adds to a robot: dummies, joints, intervals, dependencies.

- :class:`Dummy`: a frame (CoppeliaSim's "dummy") rigidly attached to a parent frame: the world,
  a robot frame, another dummy or a scene joint. Tips, targets and bases of IK elements are
  frames.
- :class:`SceneJoint`: a joint created at run time. Its axis is its frame's z axis (the seed's
  convention): ``"revolute"`` (with a *screw lead* it becomes helical: a revolute-prismatic
  joint that advances ``lead`` metres per turn along z), ``"prismatic"`` or ``"spherical"``.
- :class:`JointInterval`: the range of a one-coordinate joint: cyclic (no limits, rotational
  joints only) or ``[lower, lower + range]``.
- :class:`JointDependency`: a joint that follows another one,
  ``q_dep = offset + mult * q_master``, or ``q_dep = callback(q_master)``. A callback that
  raises, or returns something that is not a real number, is an
  :class:`~pinkctl.errors.InputError` naming the callback and the joint (the original
  exception chained); a law that gives NaN or an infinite value raises
  :class:`NonFiniteDependency`, which a solve turns into ``CANNOT_INVERT``.

Placements are relative to the parent frame (units: m; rotations are proper rotation
matrices). The world frame is named :data:`WORLD`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pinocchio as pin

from .._validation import boolean, real_array, real_number
from ..errors import InputError

__all__ = [
    "JOINT_KINDS",
    "WORLD",
    "Dummy",
    "JointDependency",
    "JointInterval",
    "NonFiniteDependency",
    "SceneJoint",
    "check_pose",
    "check_rotation",
]

#: Name of the world frame (Pinocchio's ``universe``).
WORLD = "world"

#: Kinds of scene joints.
JOINT_KINDS = ("revolute", "prismatic", "spherical")

#: Largest deviation of ``RᵀR`` from the identity accepted in a pose's rotation.
ORTHONORMAL_TOLERANCE = 1e-9

#: Step of the central difference that differentiates a dependency callback [rad or m].
CALLBACK_STEP = 1e-6


def check_pose(value: Any, name: str) -> pin.SE3:
    """``value`` (a ``pin.SE3`` or a 4 x 4 homogeneous matrix) as a new ``pin.SE3``.

    Raises:
        ValueError: Not a pose, non-finite entries, or a rotation that is not orthonormal with
            determinant 1 (within :data:`ORTHONORMAL_TOLERANCE`).
    """
    if isinstance(value, pin.SE3):
        matrix = value.homogeneous
    else:
        try:
            matrix = real_array(value, name, (4, 4), finite=False)
        except InputError as exc:
            raise InputError(f"{name} must be a pin.SE3 or a 4x4 matrix: {exc}") from exc
        if not np.array_equal(matrix[3], [0.0, 0.0, 0.0, 1.0]):
            raise InputError(f"{name} must be a pin.SE3 or a 4x4 homogeneous matrix")
    if not np.isfinite(matrix).all():
        raise InputError(f"{name} contains NaN or infinite values")
    return pin.SE3(check_rotation(matrix[:3, :3].copy(), name), matrix[:3, 3].copy())


def check_rotation(matrix: np.ndarray, name: str) -> np.ndarray:
    """``matrix`` (3 x 3, finite) itself when it is orthonormal with determinant 1 (within
    :data:`ORTHONORMAL_TOLERANCE`); else :class:`~pinkctl.errors.InputError`."""
    error = float(np.max(np.abs(matrix.T @ matrix - np.eye(3))))
    if error > ORTHONORMAL_TOLERANCE or np.linalg.det(matrix) < 0.0:
        raise InputError(f"{name}: not a proper rotation matrix")
    return matrix


@dataclass
class Dummy:
    """A frame attached to ``parent`` at ``placement`` (relative to the parent frame)."""

    parent: str
    placement: pin.SE3


@dataclass
class SceneJoint:
    """A joint created at run time (see the module docstring).

    Attributes:
        kind: ``"revolute"``, ``"prismatic"`` or ``"spherical"``.
        parent: Parent frame.
        placement: Pose of the joint frame at zero, relative to the parent frame.
        screw_lead: Advance along z per turn [m/turn] of a revolute joint (0: plain revolute).
    """

    kind: str
    parent: str
    placement: pin.SE3
    screw_lead: float = 0.0

    def joint_model(self) -> Any:
        """The Pinocchio joint model: RZ, helical HZ (pitch = lead / 2π m/rad), PZ or ball."""
        if self.kind == "prismatic":
            return pin.JointModelPZ()
        if self.kind == "spherical":
            return pin.JointModelSpherical()
        if self.screw_lead != 0.0:
            return pin.JointModelHZ(self.screw_lead / (2.0 * math.pi))
        return pin.JointModelRZ()


@dataclass(frozen=True)
class JointInterval:
    """The range of a one-coordinate joint.

    Attributes:
        cyclic: No limits (rotational joints only); ``lower``/``range`` are then ``-inf``/``inf``.
        lower: Lower limit [rad or m].
        range: ``upper - lower`` [rad or m], >= 0.
    """

    cyclic: bool
    lower: float = -math.inf
    range: float = math.inf

    @property
    def upper(self) -> float:
        """Upper limit, ``lower + range``."""
        return self.lower + self.range

    @staticmethod
    def make(cyclic: bool, lower: Any, range: Any, joint: str) -> JointInterval:
        """A checked interval (``lower``/``range`` ignored, and may be None, when cyclic)."""
        if boolean(cyclic, f"cyclic of joint {joint!r}"):
            return JointInterval(cyclic=True)
        low = real_number(lower, f"lower limit of joint {joint!r}")
        span = real_number(range, f"range of joint {joint!r}", low=0.0)
        if not math.isfinite(low + span):
            raise InputError(
                f"range of joint {joint!r}: the upper limit lower + range overflows "
                f"({low!r} + {span!r})"
            )
        return JointInterval(cyclic=False, lower=low, range=span)


class NonFiniteDependency(InputError):
    """A dependency law gave NaN or an infinite value (a solve reports it as
    ``CANNOT_INVERT`` with the reason, and never returns such a configuration)."""


def _callable_name(callback: Callable[..., Any]) -> str:
    return str(getattr(callback, "__qualname__", type(callback).__name__))


def _is_real(value: Any) -> bool:
    """A real number: a Python or numpy int or float, or a 0-d array of one (not a bool)."""
    if isinstance(value, np.ndarray):
        return value.shape == () and value.dtype.kind in "iuf"
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class JointDependency:
    """``q = offset + mult * q_master`` or ``q = callback(q_master)``.

    Attributes:
        master: The joint followed (a one-coordinate joint that depends on no other).
        offset: Offset [rad or m] of the linear law.
        mult: Factor of the linear law.
        callback: ``callback(q_master) -> q`` replacing the linear law, or None. Its derivative
            (which IK needs) is a central difference of step :data:`CALLBACK_STEP`.
    """

    master: str
    offset: float = 0.0
    mult: float = 1.0
    callback: Callable[[float], float] | None = None

    def value(self, master_position: float, joint: str = "?") -> float:
        """The position of the dependent joint (named ``joint`` in messages) for the
        master's.

        Raises:
            ValueError: (:class:`~pinkctl.errors.InputError`) the callback raised (its
                exception chained) or returned something that is not a real number;
                (:class:`NonFiniteDependency`) the law gave NaN or an infinite value.
        """
        at = f"at {self.master} = {master_position!r}"
        if self.callback is None:
            result: Any = self.offset + self.mult * master_position
            law = f"the dependency law of joint {joint!r} {at}"
        else:
            name = _callable_name(self.callback)
            law = f"the dependency callback {name} of joint {joint!r} {at}"
            try:
                result = self.callback(master_position)
            except Exception as exc:
                raise InputError(f"{law} raised {type(exc).__name__}: {exc}") from exc
            if not _is_real(result):
                raise InputError(f"{law} returned {result!r}, not a real number")
        number = float(result)
        if not math.isfinite(number):
            raise NonFiniteDependency(f"{law} gave {number}")
        return number

    def derivative(self, master_position: float, joint: str = "?") -> float:
        """``d q / d q_master`` at the master's position (errors as :meth:`value`)."""
        if self.callback is None:
            return self.mult
        h = CALLBACK_STEP
        ahead = self.value(master_position + h, joint)
        behind = self.value(master_position - h, joint)
        return (ahead - behind) / (2.0 * h)
