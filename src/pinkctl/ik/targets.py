"""IK targets: what one frame of the robot must reach, parsed from the accepted spellings.

A goal says where a point attached to a frame must go (world frame) and, depending on its
mode, how the frame must be oriented:

- ``"pose"``: position and full orientation (a target rotation ``R*``);
- ``"position"``: position only, the orientation is free;
- ``"approach"``: position plus one tool axis pointing along a world direction (e.g. the
  gripper's z axis pointing straight down for top-down grasping); the rotation about that
  direction is free.

Accepted spellings of a target (world frame, metres, quaternions ``(w, x, y, z)``):

- ``pin.SE3``;
- ``(position, quaternion)``: a pair of a (3,) position and a (4,) unit quaternion;
- a (4, 4) homogeneous transform;
- a (7,) vector ``[x, y, z, qw, qx, qy, qz]``;
- a (3,) position, only in the ``"position"`` and ``"approach"`` modes (a pose given in
  those modes contributes its translation only).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeGuard

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .._validation import REAL_KINDS
from ..core.poses import quaternion_to_matrix
from ..errors import InputError

__all__ = [
    "FrameGoal",
    "GoalMode",
    "IKTarget",
    "PoseLike",
    "SeedLike",
    "is_multi_target",
    "parse_approach_axis",
    "parse_target",
    "parse_vector",
]

GoalMode = Literal["pose", "position", "approach"]

#: One frame's target: ``pin.SE3``, ``(position, quaternion_wxyz)``, a (4, 4) transform, a
#: (7,) ``[x, y, z, qw, qx, qy, qz]`` or a (3,) position (module docstring).
PoseLike: TypeAlias = pin.SE3 | tuple[ArrayLike, ArrayLike] | ArrayLike
#: A target of one frame, or of several frames as ``{frame_name: target}``.
IKTarget: TypeAlias = PoseLike | Mapping[str, PoseLike]
#: Start of a solve: None (``robot.q0``), the moved joints' values, a full Pinocchio ``q``,
#: or a mapping joint name → value.
SeedLike: TypeAlias = ArrayLike | Mapping[str, float] | None

_AXES = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True)
class FrameGoal:
    """Where one frame must go.

    Attributes:
        frame: Frame name in the Pinocchio model.
        frame_id: Frame index in the Pinocchio model.
        mode: ``"pose"``, ``"position"`` or ``"approach"``.
        position: Target position of the controlled point in the world frame [m], (3,).
        rotation: Target rotation (world frame), (3, 3); only in ``"pose"`` mode.
        point_offset: Controlled point in the frame's own coordinates [m], (3,), or None for
            the frame origin.
        approach_axis: Unit tool axis in the frame's coordinates, (3,) (``"approach"`` mode).
        approach_direction: Unit world direction the tool axis must point along, (3,)
            (``"approach"`` mode).
    """

    frame: str
    frame_id: int
    mode: GoalMode
    position: np.ndarray
    rotation: np.ndarray | None = None
    point_offset: np.ndarray | None = None
    approach_axis: np.ndarray | None = None
    approach_direction: np.ndarray | None = None

    @property
    def nrows(self) -> int:
        """Rows this goal adds to the stacked error: 6 (pose, approach) or 3 (position)."""
        return 3 if self.mode == "position" else 6


def _real(value: Any, name: str) -> np.ndarray:
    """``value`` as a float64 array, refusing what is not real numbers: strings (``"0.1"``),
    complex numbers (the imaginary part would be dropped), None (it would become NaN) and
    objects. Ragged sequences raise ``ValueError`` for the caller's message."""
    arr = np.asarray(value)
    if arr.dtype.kind not in REAL_KINDS:
        raise InputError(f"{name}: expected real numbers, got {value!r}")
    return arr.astype(np.float64)


def parse_vector(value: ArrayLike, size: int, name: str) -> np.ndarray:
    """A finite float64 vector of ``size`` entries, or ``ValueError`` naming ``name``."""
    if type(value) is np.ndarray and value.shape == (size,) and value.dtype == np.float64:
        if not np.isfinite(value).all():
            raise InputError(f"{name}: values must be finite, got {value}")
        return value.copy()
    try:
        arr = _real(value, name).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected {size} numbers, got {value!r}") from exc
    if arr.size != size:
        raise InputError(f"{name}: expected {size} numbers, got shape {np.shape(value)}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name}: values must be finite, got {arr}")
    return arr


def _quaternion_matrix(quat: np.ndarray, name: str) -> np.ndarray:
    """Rotation matrix of a ``(w, x, y, z)`` quaternion (normalised here)."""
    norm = float(np.linalg.norm(quat))
    if norm < 1e-9:
        raise InputError(f"{name}: quaternion (w, x, y, z) must be non-zero, got {quat}")
    return quaternion_to_matrix(quat)


def _check_rotation(rot: np.ndarray, name: str) -> np.ndarray:
    """``rot`` if it is a finite rotation matrix (orthonormal, determinant +1)."""
    (a, b, c), (d, e, f), (g, h, i) = rot.tolist()
    # Every entry of RᵀR - I within 1e-6 (on nine floats, plain arithmetic beats numpy's
    # calls); NaN and inf fail every comparison.
    tol = 1e-6
    if not (
        abs(a * a + d * d + g * g - 1.0) <= tol
        and abs(b * b + e * e + h * h - 1.0) <= tol
        and abs(c * c + f * f + i * i - 1.0) <= tol
        and abs(a * b + d * e + g * h) <= tol
        and abs(a * c + d * f + g * i) <= tol
        and abs(b * c + e * f + h * i) <= tol
    ):
        raise InputError(f"{name}: rotation must be a finite orthonormal matrix")
    if a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) < 0.0:
        raise InputError(f"{name}: rotation matrix has determinant -1 (a reflection)")
    return rot


#: The target spellings, as error messages list them.
_SPELLINGS = (
    "pin.SE3, (position, quaternion wxyz), a (4, 4) transform, "
    "a (7,) [x, y, z, qw, qx, qy, qz] vector or a (3,) position"
)


def parse_target(
    target: PoseLike, *, orientation: bool, name: str = "target"
) -> tuple[np.ndarray, np.ndarray | None]:
    """Split a target into ``(position (3,), rotation (3, 3) or None)``.

    Args:
        target: One of the spellings listed in this module's docstring.
        orientation: Whether the goal needs an orientation. When False a bare (3,) position
            is accepted and a pose's rotation is dropped.
        name: Argument name used in error messages.

    Raises:
        ValueError: If the target is malformed, not finite, or a bare position is given where
            an orientation is needed.
    """
    if isinstance(target, pin.SE3):
        return _se3_target(target, orientation=orientation, name=name)
    if isinstance(target, (tuple, list)) and len(target) == 2:
        position = parse_vector(target[0], 3, f"{name} position")
        quat = parse_vector(target[1], 4, f"{name} quaternion (w, x, y, z)")
        return position, (_quaternion_matrix(quat, name) if orientation else None)
    try:
        arr = _real(target, name)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected {_SPELLINGS}; got {target!r}") from exc
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name}: values must be finite, got {arr}")
    return _array_target(arr, orientation=orientation, name=name)


def _se3_target(
    target: pin.SE3, *, orientation: bool, name: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`parse_target` of a ``pin.SE3`` (position [m], world frame; rotation checked)."""
    position = target.translation.copy()  # (the attribute is a view into the pose)
    x, y, z = position.tolist()
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        raise InputError(f"{name}: values must be finite, got {position}")
    if not orientation:
        return position, None
    return position, _check_rotation(target.rotation.copy(), name)


def _array_target(
    arr: np.ndarray, *, orientation: bool, name: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`parse_target` of a finite array: a (4, 4) transform, a (7,) position and
    quaternion (w, x, y, z) or a (3,) position [m]."""
    if arr.shape == (4, 4):
        if np.abs(arr[3] - np.array([0.0, 0.0, 0.0, 1.0])).max() > 1e-9:
            raise InputError(f"{name}: last row of a homogeneous transform must be [0, 0, 0, 1]")
        rotation = _check_rotation(arr[:3, :3].copy(), name)
        return arr[:3, 3].copy(), (rotation if orientation else None)
    if arr.shape == (7,):
        return arr[:3].copy(), (_quaternion_matrix(arr[3:], name) if orientation else None)
    if arr.shape != (3,):
        raise InputError(f"{name}: expected {_SPELLINGS}; got shape {arr.shape}")
    if orientation:
        raise InputError(
            f"{name}: a bare position (3,) needs position_only=True or an approach_axis; "
            "give a pose (pin.SE3 or (position, quaternion wxyz)) to constrain orientation"
        )
    return arr.copy(), None


def parse_approach_axis(axis: int | str | ArrayLike, name: str = "approach_axis") -> np.ndarray:
    """Unit tool axis in frame coordinates.

    Accepts an index ``0, 1, 2`` (x, y, z), a string ``"x"``, ``"-z"``, ``"+y"``..., or a
    (3,) vector (normalised here).
    """
    if isinstance(axis, (bool, np.bool_)):
        raise InputError(f"{name}: expected 0, 1, 2, 'x', '-z'... or a (3,) vector, got {axis}")
    if isinstance(axis, (int, np.integer)):
        if int(axis) not in (0, 1, 2):
            raise InputError(f"{name}: axis index must be 0, 1 or 2, got {axis}")
        out = np.zeros(3)
        out[int(axis)] = 1.0
        return out
    if isinstance(axis, str):
        text = axis.strip().lower()
        sign = -1.0 if text.startswith("-") else 1.0
        key = text.lstrip("+-")
        if key not in _AXES:
            raise InputError(f"{name}: expected 'x', 'y', 'z' with an optional sign, got {axis!r}")
        out = np.zeros(3)
        out[_AXES[key]] = sign
        return out
    vec = parse_vector(axis, 3, name)
    norm = float(np.linalg.norm(vec))
    if norm < 1e-9:
        raise InputError(f"{name}: axis vector must be non-zero")
    return vec / norm


def is_multi_target(target: IKTarget) -> TypeGuard[Mapping[str, PoseLike]]:
    """Whether ``target`` maps frame names to targets (several frames at once)."""
    return isinstance(target, Mapping)
