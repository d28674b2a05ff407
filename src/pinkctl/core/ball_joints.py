"""Ball (spherical) joints as three named scalar coordinates: the joint's rotation vector.

pinkctl's named joint states (:class:`~pinkctl.core.state.JointState`) hold one scalar per
name. A ball joint ``shoulder`` is given there by three coordinates, ``shoulder:x``,
``shoulder:y`` and ``shoulder:z``: the rotation vector :math:`r = \\theta\\, a = \\log R`
[rad] of the joint's rotation :math:`R` (child frame in the joint frame), and their velocities
are its rates :math:`\\dot r = J_{\\log}(R)\\, \\omega`, with :math:`\\omega` the child's
angular velocity in its own frame (the tangent velocity of a ball joint in Pinocchio and in
MuJoCo alike). :math:`R = \\exp r` for any :math:`r`; :math:`\\log` returns
:math:`\\theta \\le \\pi`, so a measured rotation vector flips its axis when the rotation
passes :math:`\\pi` (a ball joint with a range below :math:`\\pi` never does).

The configurations hold the rotation as a quaternion: Pinocchio's ``q`` as ``(x, y, z, w)``,
MuJoCo's ``qpos`` as ``(w, x, y, z)`` (:mod:`pinkctl.core.mujoco_qpos` converts whole
configurations).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..errors import InputError

__all__ = [
    "BALL_AXES",
    "ball_coordinate_names",
    "ball_joint_names",
    "expand_ball_joints",
    "is_ball_joint",
    "quaternion_of",
    "rotation_rate",
    "rotation_vector",
    "split_ball_coordinate",
    "unit_quaternion",
]

#: Suffixes of a ball joint's three coordinates (``<joint>:x`` ...).
BALL_AXES = ("x", "y", "z")


def ball_coordinate_names(joint: str) -> tuple[str, str, str]:
    """The three coordinate names of ball joint ``joint``: ``("<joint>:x", ":y", ":z")``."""
    return (f"{joint}:x", f"{joint}:y", f"{joint}:z")


def split_ball_coordinate(name: str) -> tuple[str, int] | None:
    """``(joint, axis index)`` of a ball coordinate name such as ``"shoulder:y"``, else None."""
    joint, sep, axis = name.rpartition(":")
    if not sep or not joint or axis not in BALL_AXES:
        return None
    return joint, BALL_AXES.index(axis)


def is_ball_joint(model: pin.Model, joint_id: int) -> bool:
    """Whether joint ``joint_id`` of ``model`` is a ball joint (``JointModelSpherical``)."""
    return bool(model.joints[joint_id].shortname() == "JointModelSpherical")


def ball_joint_names(model: pin.Model) -> list[str]:
    """The ball joints of ``model``, in model order."""
    return [model.names[j] for j in range(1, model.njoints) if is_ball_joint(model, j)]


def expand_ball_joints(model: pin.Model, names: list[str]) -> list[str]:
    """``names`` with each ball joint replaced by its three coordinate names."""
    out: list[str] = []
    for name in names:
        ball = model.existJointName(name) and is_ball_joint(model, model.getJointId(name))
        out.extend(ball_coordinate_names(name) if ball else (name,))
    return out


def unit_quaternion(quaternion: np.ndarray, name: str) -> np.ndarray:
    """``quaternion`` (4,) divided by its norm (either component order).

    Raises:
        InputError: A zero or non-finite quaternion (``name`` names it).
    """
    quaternion = np.asarray(quaternion, dtype=np.float64)
    norm = float(np.linalg.norm(quaternion))
    if not np.isfinite(norm) or norm < 1e-9:
        raise InputError(f"{name}: a zero quaternion or a non-finite one: {quaternion.tolist()}")
    return quaternion / norm


def rotation_vector(quaternion_xyzw: np.ndarray) -> np.ndarray:
    """The rotation vector ``log R`` [rad] (3,) of a Pinocchio quaternion ``(x, y, z, w)``
    (normalised here).

    Raises:
        InputError: A zero or non-finite quaternion.
    """
    x, y, z, w = unit_quaternion(quaternion_xyzw, "ball joint").tolist()
    return np.asarray(pin.log3(pin.Quaternion(w, x, y, z).toRotationMatrix()))


def quaternion_of(rotation: np.ndarray) -> np.ndarray:
    """Pinocchio's quaternion ``(x, y, z, w)`` (4,) of the rotation vector ``rotation`` [rad]
    (``w >= 0``)."""
    coeffs = np.asarray(pin.Quaternion(pin.exp3(np.asarray(rotation, dtype=np.float64))).coeffs())
    return -coeffs if coeffs[3] < 0.0 else coeffs


def rotation_rate(rotation: np.ndarray, angular_velocity: np.ndarray) -> np.ndarray:
    """The rate :math:`\\dot r = J_{\\log}(\\exp r)\\, \\omega` [rad/s] of the rotation vector
    ``rotation`` under the child-frame angular velocity ``angular_velocity`` [rad/s]."""
    matrix = pin.exp3(np.asarray(rotation, dtype=np.float64))
    return np.asarray(pin.Jlog3(matrix) @ np.asarray(angular_velocity, dtype=np.float64))
