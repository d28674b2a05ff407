"""Poses and rotations: the one home of pinkctl's quaternion and SE(3) conversions.

A pose is a position (3,) in m and a quaternion (4,) ordered **(w, x, y, z)** (MuJoCo's and
Isaac Sim's convention); it maps to and from a ``pin.SE3`` ``T`` with ``T.translation =
position`` and ``T.rotation = R(q)``. Pinocchio stores quaternions as ``(x, y, z, w)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pinocchio as pin

from ..errors import InputError
from .state import QUATERNION_MIN_NORM, NameSpace, SpatialState

__all__ = [
    "SitePoseReader",
    "isaac_sim_position_quaternion_to_se3",
    "pose_to_se3",
    "se3_to_isaac_sim_position_quaternion",
    "se3_to_pose",
]


def _finite_floats(value: Any, size: int, what: str) -> list[float]:
    """``value`` as ``size`` finite Python floats (any shape with ``size`` elements)."""
    if type(value) is np.ndarray and value.dtype == np.float64:
        arr = value
    else:
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"{what}: cannot read as an array: {exc}") from exc
        if arr.dtype.kind not in "fiu":
            raise InputError(f"{what} must hold real numbers, got dtype {arr.dtype}")
    if arr.size != size:
        raise InputError(f"{what} must have {size} elements, got {arr.size}")
    values = [float(v) for v in arr.reshape(-1).tolist()]
    if not all(map(math.isfinite, values)):
        raise InputError(f"{what} contains NaN or infinite values")
    return values


def pose_to_se3(position: Any, quaternion_wxyz: Any) -> pin.SE3:
    """Build the transform ``T = (R(q), p)`` from a position and a (w, x, y, z) quaternion.

    Args:
        position: Translation ``[x, y, z]`` in m (any shape with 3 elements).
        quaternion_wxyz: Rotation ``[w, x, y, z]`` (any shape with 4 elements); normalised here,
            so any non-zero scale is accepted.

    Raises:
        ValueError: On a wrong number of elements, NaN/inf, or an all-zero quaternion.
    """
    px, py, pz = _finite_floats(position, 3, "position")
    w, x, y, z = _finite_floats(quaternion_wxyz, 4, "quaternion")
    scale = max(abs(w), abs(x), abs(y), abs(z))
    if scale < QUATERNION_MIN_NORM:
        raise InputError("quaternion (w, x, y, z) must not be zero")
    w, x, y, z = w / scale, x / scale, y / scale, z / scale  # no overflow/underflow below
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    # Pinocchio's XYZQUAT layout is (x, y, z, qx, qy, qz, qw).
    return pin.XYZQUATToSE3(np.array([px, py, pz, x / norm, y / norm, z / norm, w / norm]))


def se3_to_pose(transform: pin.SE3) -> tuple[np.ndarray, np.ndarray]:
    """Split a transform into ``(position (3,), quaternion (4,) as w, x, y, z)``.

    The quaternion is unit norm with the sign chosen so that ``w >= 0``.
    """
    if not isinstance(transform, pin.SE3):
        raise InputError(f"transform must be a pinocchio.SE3, got {type(transform).__name__}")
    px, py, pz, x, y, z, w = pin.SE3ToXYZQUAT(transform).tolist()
    norm = math.sqrt(w * w + x * x + y * y + z * z)
    if w < 0.0:
        norm = -norm
    return np.array([px, py, pz]), np.array([w / norm, x / norm, y / norm, z / norm])


class SitePoseReader:
    """Reads one frame's world pose from :class:`~pinkctl.state.SpatialState` objects.

    A controller reads its target from a setpoint's site poses on every tick; this does it in
    a handful of cheap operations: the frame's row is looked up once per name space (states
    over the same frame names share it) and the pose goes through Pinocchio's XYZQUAT layout
    ``(x, y, z, qx, qy, qz, qw)`` with the quaternion normalised (the state only guarantees a
    finite, non-zero one).

    Args:
        frame: Name of the frame (site) to read.
    """

    def __init__(self, frame: str) -> None:
        self.frame = frame
        self._space: NameSpace | None = None
        self._row = -1

    def pose(self, sites: SpatialState, previous: pin.SE3 | None) -> pin.SE3 | None:
        """The frame's pose in ``sites``, or None when it has no valid position.

        Args:
            sites: The spatial state to read.
            previous: Pose whose rotation is kept when the frame has a valid position but no
                valid orientation (identity if None).
        """
        space = sites.name_space
        if space is not self._space:
            self._row = space.index.get(self.frame, -1)
            self._space = space
        row = self._row
        if row < 0:
            return None
        valid = sites.valid_array
        if not valid[row, 0]:
            return None
        if not valid[row, 1]:
            rotation = np.eye(3) if previous is None else previous.rotation
            return pin.SE3(rotation, sites.position_data[row])
        # Python floats: cheaper than numpy for seven numbers
        px, py, pz = sites.position_data[row].tolist()
        w, x, y, z = sites.orientation_data[row].tolist()
        squared_norm = w * w + x * x + y * y + z * z
        # (a valid state's quaternion has an entry >= QUATERNION_MIN_NORM: no underflow)
        if not squared_norm < 1e200:  # huge entries: the overflow-safe conversion
            return pose_to_se3((px, py, pz), (w, x, y, z))
        scale = 1.0 / math.sqrt(squared_norm)
        return pin.XYZQUATToSE3((px, py, pz, x * scale, y * scale, z * scale, w * scale))


#: Isaac Sim PINK extension name of :func:`pose_to_se3`.
isaac_sim_position_quaternion_to_se3 = pose_to_se3
#: Isaac Sim PINK extension name of :func:`se3_to_pose`.
se3_to_isaac_sim_position_quaternion = se3_to_pose
