"""Poses and rotations: the one home of pinkctl's quaternion and SE(3) conversions.

A pose is a position (3,) in m and a quaternion (4,) ordered **(w, x, y, z)** (MuJoCo's and
Isaac Sim's convention); it maps to and from a ``pin.SE3`` ``T`` with ``T.translation =
position`` and ``T.rotation = R(q)``. Pinocchio stores quaternions as ``(x, y, z, w)``; the
conversions below go through :class:`pinocchio.Quaternion`, ``pin.exp3_quat`` and
``pin.log3`` rather than hand-written formulas.

Rotation vectors ``r`` (axis times angle [rad]) are in the world frame: ``exp([r]) R`` turns
the orientation ``R`` by ``|r|`` about ``r``. A quaternion and its negative are the same
rotation; functions that choose a sign say so (``w >= 0``, "canonical"), the others keep the
sign their inputs give.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from .state import QUATERNION_MIN_NORM, NameSpace, SpatialState

__all__ = [
    "SitePoseReader",
    "canonical_quaternion",
    "checked_pose",
    "isaac_sim_position_quaternion_to_se3",
    "matrix_to_quaternion",
    "pose_to_se3",
    "quaternion_angle",
    "quaternion_from_rotation_vector",
    "quaternion_product",
    "quaternion_to_matrix",
    "quaternion_to_rotation_vector",
    "rotate_by_vector",
    "rotation_vector_between",
    "se3_to_isaac_sim_position_quaternion",
    "se3_to_pose",
    "unit_quaternions",
]

#: A float64 array (a quaternion (4,), a rotation vector (3,), a matrix (3, 3), ...).
Vector = NDArray[np.float64]


# ---------------------------------------------------------------------------- quaternions
def _pin_quaternion(quaternion_wxyz: ArrayLike) -> pin.Quaternion:
    """The unit :class:`pinocchio.Quaternion` of a non-zero (w, x, y, z) quaternion."""
    w, x, y, z = np.asarray(quaternion_wxyz, dtype=np.float64).reshape(4).tolist()
    scale = max(abs(w), abs(x), abs(y), abs(z))
    if not (scale >= QUATERNION_MIN_NORM and math.isfinite(w + x + y + z)):
        raise InputError(f"quaternion (w, x, y, z) must be finite and non-zero, got {w, x, y, z}")
    quaternion = pin.Quaternion(w, x, y, z)
    quaternion.normalize()
    return quaternion


def _wxyz(quaternion: pin.Quaternion) -> Vector:
    """A Pinocchio quaternion's coefficients in (w, x, y, z) order."""
    x, y, z, w = quaternion.coeffs().tolist()
    return np.array([w, x, y, z])


def unit_quaternions(values: ArrayLike, argument: str, *, count: int | None = None) -> Vector:
    """Validate (K, 4) or (4,) (w, x, y, z) quaternions; return them normalised, (K, 4).

    Signs are kept. ``argument`` names the input in error messages.

    Raises:
        InputError: Not real numbers, a wrong shape or row count (``count``), NaN or
            infinite values, or a zero quaternion.
    """
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{argument} must be (w, x, y, z) quaternions of real numbers") from None
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != 4:
        raise InputError(f"{argument} must have shape (K, 4) (w, x, y, z), got {array.shape}")
    if count is not None and array.shape[0] != count:
        raise InputError(f"{argument} must have {count} rows, got {array.shape[0]}")
    if not np.all(np.isfinite(array)):
        raise InputError(f"{argument} must be finite (no NaN or infinity)")
    norms = np.linalg.norm(array, axis=1)
    if np.any(norms < QUATERNION_MIN_NORM):
        raise InputError(f"{argument} contains a zero quaternion")
    return array / norms[:, None]


def canonical_quaternion(quaternion_wxyz: ArrayLike) -> Vector:
    """The unit quaternion of the same rotation with ``w >= 0``.

    Raises:
        InputError: On a zero, NaN or infinite quaternion.
    """
    wxyz = _wxyz(_pin_quaternion(quaternion_wxyz))
    return -wxyz if wxyz[0] < 0.0 else wxyz


def quaternion_to_matrix(quaternion_wxyz: ArrayLike) -> Vector:
    """Rotation matrix ``R(q)`` (3, 3) of a (w, x, y, z) quaternion, normalised first.

    Raises:
        InputError: On a zero, NaN or infinite quaternion.
    """
    return np.asarray(_pin_quaternion(quaternion_wxyz).toRotationMatrix())


def matrix_to_quaternion(rotation: ArrayLike) -> Vector:
    """Unit (w, x, y, z) quaternion with ``w >= 0`` of a rotation matrix (3, 3)."""
    matrix = np.asarray(rotation, dtype=np.float64).reshape(3, 3)
    wxyz = _wxyz(pin.Quaternion(matrix).normalized())
    return -wxyz if wxyz[0] < 0.0 else wxyz


def quaternion_product(a: ArrayLike, b: ArrayLike) -> Vector:
    """Hamilton product ``a ⊗ b`` of two unit (w, x, y, z) quaternions: the rotation ``b``,
    then ``a`` (``R(a ⊗ b) = R(a) R(b)``). The sign follows the factors."""
    return _wxyz(_pin_quaternion(a) * _pin_quaternion(b))


def quaternion_from_rotation_vector(rotation_vector: ArrayLike) -> Vector:
    """``exp(r)``: the unit (w, x, y, z) quaternion of the rotation by ``|r|`` [rad] about
    ``r`` (``w = cos(|r| / 2)``, so ``w >= 0`` for ``|r| <= pi``)."""
    x, y, z, w = pin.exp3_quat(np.asarray(rotation_vector, dtype=np.float64)).tolist()
    return np.array([w, x, y, z])


def quaternion_to_rotation_vector(quaternion_wxyz: ArrayLike) -> Vector:
    """``log(q)``: the rotation vector of a (w, x, y, z) quaternion, angle in [0, pi] (``q``
    and ``-q`` give the same vector)."""
    return np.asarray(pin.log3(_pin_quaternion(quaternion_wxyz)))


def rotation_vector_between(q_from: ArrayLike, q_to: ArrayLike) -> Vector:
    """World rotation vector ``r`` [rad] with ``R(q_to) = exp([r]) R(q_from)``, the shortest
    (angle in [0, pi])."""
    return np.asarray(pin.log3(_pin_quaternion(q_to) * _pin_quaternion(q_from).conjugate()))


def rotate_by_vector(quaternion_wxyz: ArrayLike, rotation_vector: ArrayLike) -> Vector:
    """``exp(r) ⊗ q``: the orientation ``q`` turned by the world rotation vector ``r`` [rad].

    The sign follows ``q`` (for ``|r| <= pi``); :func:`canonical_quaternion` picks ``w >= 0``.
    """
    turn = pin.Quaternion(pin.exp3_quat(np.asarray(rotation_vector, dtype=np.float64)))
    return _wxyz(turn * _pin_quaternion(quaternion_wxyz))


def quaternion_angle(q1: ArrayLike, q2: ArrayLike) -> float:
    """Rotation angle [rad] between two (w, x, y, z) quaternions, in [0, pi] (normalised
    first; ``q`` and ``-q`` are the same orientation). Accurate for small angles too."""
    return float(np.linalg.norm(rotation_vector_between(q1, q2)))


# ---------------------------------------------------------------------------- poses
def _finite_floats(value: ArrayLike, size: int, what: str) -> list[float]:
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


def pose_to_se3(position: ArrayLike, quaternion_wxyz: ArrayLike) -> pin.SE3:
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


def checked_pose(position: ArrayLike, quaternion_wxyz: ArrayLike) -> tuple[Vector, Vector]:
    """``(position (3,), unit quaternion (4,) with w >= 0)`` from user input.

    Raises:
        InputError: Wrong sizes, NaN or infinite values, or a zero quaternion.
    """
    return se3_to_pose(pose_to_se3(position, quaternion_wxyz))


class SitePoseReader:
    """Reads one frame's world pose from :class:`~pinkctl.core.state.SpatialState` objects.

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

    def row(self, sites: SpatialState) -> int:
        """The frame's row in ``sites`` (-1 when it has none), looked up once per name space."""
        space = sites.name_space
        if space is not self._space:
            self._row = space.index.get(self.frame, -1)
            self._space = space
        return self._row

    def pose(self, sites: SpatialState, previous: pin.SE3 | None) -> pin.SE3 | None:
        """The frame's pose in ``sites``, or None when it has no valid position.

        Args:
            sites: The spatial state to read.
            previous: Pose whose rotation is kept when the frame has a valid position but no
                valid orientation (identity if None).
        """
        row = self.row(sites)
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
