"""Configurations between Pinocchio (``q``) and MuJoCo (``qpos``) models of one robot.

A Pinocchio model and a MuJoCo model compiled from the same description (URDF or MJCF) name
their joints alike; :func:`to_mujoco_qpos` and :func:`from_mujoco_qpos` map one configuration
onto the other joint by joint, by name. Copying ``q`` into ``qpos`` index by index is wrong as
soon as a model has a ball or free joint, a continuous joint or a mimic joint:

=============================  ===============================  ===============================
Pinocchio joint                ``q`` coordinates                MuJoCo ``qpos`` coordinates
=============================  ===============================  ===============================
revolute, prismatic            angle [rad] or offset [m]        hinge / slide: the same value
continuous (``RUB*``)          ``(cos θ, sin θ)``               hinge: ``θ = atan2(sin, cos)``
spherical (ball)               quaternion ``(x, y, z, w)``      ball: quaternion ``(w, x, y, z)``
free flyer                     ``(p, x, y, z, w)``: the joint   free: ``(p, w, x, y, z)``: the
                               frame in its placement           body's world pose
mimic                          none (follows its primary)       hinge / slide of its own:
                                                                ``scaling · primary + offset``
=============================  ===============================  ===============================

A free joint's ``qpos`` is the world pose of its body, while Pinocchio's free-flyer ``q`` is
the motion of the joint frame after its placement ``J`` in the parent (the world):
``qpos = J · M(q)``, ``M(q) = J⁻¹ · qpos``. Hinge and slide values are copied as they are (a
MuJoCo ``ref`` other than 0 would shift them; URDF-compiled models have none). Quaternions are
normalised on the way (a configuration read from a simulation drifts off unit norm).

MuJoCo joints that Pinocchio lacks (a free cube of the scene) keep the values of the ``qpos``
given as the base (default ``mj_model.qpos0``); Pinocchio joints that MuJoCo lacks are an
error unless ``joint_map`` renames them or maps them to None (skipped: they keep the base
``q``, default ``pin.neutral``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import mujoco
import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike, NDArray

from .._validation import real_vector
from ..errors import InputError
from .ball_joints import unit_quaternion

__all__ = ["from_mujoco_qpos", "to_mujoco_qpos"]

_FREE = int(mujoco.mjtJoint.mjJNT_FREE)
_BALL = int(mujoco.mjtJoint.mjJNT_BALL)
_SCALAR = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
_HINGE = int(mujoco.mjtJoint.mjJNT_HINGE)


def _pin_model(value: Any) -> pin.Model:
    """A ``pin.Model``, or the ``model`` of a robot (:class:`~pinkctl.core.robot.PinkRobot`)."""
    model = value if isinstance(value, pin.Model) else getattr(value, "model", None)
    if not isinstance(model, pin.Model):
        raise InputError(f"pin_model must be a pinocchio.Model or a robot, got {value!r}")
    return model


def _mj_model(value: Any) -> mujoco.MjModel:
    """A ``mujoco.MjModel``, or the ``model`` of a simulation (``MujocoSimulation``)."""
    model = value if isinstance(value, mujoco.MjModel) else getattr(value, "model", None)
    if not isinstance(model, mujoco.MjModel):
        raise InputError(f"mj_model must be a mujoco.MjModel or a simulation, got {value!r}")
    return model


def _pairs(
    pin_model: pin.Model, mj_model: mujoco.MjModel, joint_map: Mapping[str, str | None] | None
) -> list[tuple[int, int]]:
    """``(Pinocchio joint index, MuJoCo joint id)`` of every mapped joint, checked."""
    renames = dict(joint_map or {})
    unknown = sorted(set(renames) - set(pin_model.names[1:]))
    if unknown:
        raise InputError(f"joint_map names joints the Pinocchio model lacks: {unknown}")
    pairs, missing = [], []
    for index in range(1, pin_model.njoints):
        name = pin_model.names[index]
        target = renames.get(name, name)
        if target is None:
            continue
        joint = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_JOINT, target)
        if joint < 0:
            missing.append(name)
            continue
        pairs.append((index, int(joint)))
    if missing:
        raise InputError(
            f"the MuJoCo model has no joint named {missing}: map them with joint_map "
            "(a MuJoCo name, or None to skip them)"
        )
    return pairs


def _kind(pin_model: pin.Model, index: int, mj_model: mujoco.MjModel, joint: int) -> str:
    """``"scalar"``, ``"continuous"``, ``"ball"``, ``"free"`` or ``"mimic"``; checks that the
    two joints are of matching kinds."""
    pj = pin_model.joints[index]
    shortname, mj_type = pj.shortname(), int(mj_model.jnt_type[joint])
    expected: tuple[int, ...]
    if shortname == "JointModelMimic":
        kind, expected = "mimic", _SCALAR
    elif shortname == "JointModelSpherical":
        kind, expected = "ball", (_BALL,)
    elif shortname == "JointModelFreeFlyer":
        kind, expected = "free", (_FREE,)
    elif pj.nq == 2 and pj.nv == 1:
        kind, expected = "continuous", (_HINGE,)
    elif pj.nq == 1 and pj.nv == 1:
        kind, expected = "scalar", _SCALAR
    else:
        raise InputError(
            f"joint {pin_model.names[index]!r} ({shortname}) has no MuJoCo counterpart "
            "(supported: revolute, prismatic, continuous, spherical, free flyer, mimic)"
        )
    if mj_type not in expected:
        raise InputError(
            f"joint {pin_model.names[index]!r} is a {shortname} in Pinocchio but MuJoCo joint "
            f"{mj_model.joint(joint).name!r} has type {mujoco.mjtJoint(mj_type).name}"
        )
    return kind


def to_mujoco_qpos(
    pin_model: Any,
    mj_model: Any,
    q: ArrayLike,
    *,
    qpos: ArrayLike | None = None,
    joint_map: Mapping[str, str | None] | None = None,
) -> NDArray[np.float64]:
    """MuJoCo's ``qpos`` (``mj_model.nq``) of a Pinocchio configuration ``q``.

    Args:
        pin_model: ``pin.Model`` (or a robot with a ``model``).
        mj_model: ``mujoco.MjModel`` compiled from the same description (or a simulation
            with a ``model``).
        q: Pinocchio configuration (``pin_model.nq``); quaternions ``(x, y, z, w)``.
        qpos: Values of the MuJoCo joints Pinocchio lacks; default ``mj_model.qpos0``. Not
            modified.
        joint_map: Pinocchio joint name -> MuJoCo joint name where they differ, or None to
            leave a joint out.

    Returns:
        A new array of ``mj_model.nq`` values; ball and free quaternions ``(w, x, y, z)``.

    Raises:
        InputError: Wrong sizes, NaN, a zero quaternion, a joint MuJoCo lacks or of another
            kind.
    """
    pm, mm = _pin_model(pin_model), _mj_model(mj_model)
    q = real_vector(q, "q", pm.nq)
    out = mm.qpos0.copy() if qpos is None else real_vector(qpos, "qpos", mm.nq)
    for index, joint in _pairs(pm, mm, joint_map):
        kind = _kind(pm, index, mm, joint)
        i, a = pm.joints[index].idx_q, int(mm.jnt_qposadr[joint])
        if kind == "scalar":
            out[a] = q[i]
        elif kind == "continuous":
            out[a] = math.atan2(q[i + 1], q[i])
        elif kind == "mimic":
            mimic = pm.joints[index].extract()
            out[a] = mimic.scaling * q[i] + mimic.offset
        elif kind == "ball":
            x, y, z, w = unit_quaternion(q[i : i + 4], "q").tolist()
            out[a : a + 4] = (w, x, y, z)
        else:
            motion = pin.XYZQUATToSE3(
                np.concatenate([q[i : i + 3], unit_quaternion(q[i + 3 : i + 7], "q")])
            )
            pose = pm.jointPlacements[index] * motion
            x, y, z, w = pin.SE3ToXYZQUAT(pose)[3:].tolist()
            out[a : a + 3] = pose.translation
            out[a + 3 : a + 7] = (w, x, y, z)
    return out


def from_mujoco_qpos(
    pin_model: Any,
    mj_model: Any,
    qpos: ArrayLike,
    *,
    q: ArrayLike | None = None,
    joint_map: Mapping[str, str | None] | None = None,
) -> NDArray[np.float64]:
    """Pinocchio's configuration (``pin_model.nq``) of a MuJoCo ``qpos``.

    The inverse of :func:`to_mujoco_qpos` (mimic joints have no coordinate of their own in
    Pinocchio: their MuJoCo values are not read).

    Args:
        pin_model: ``pin.Model`` (or a robot with a ``model``).
        mj_model: ``mujoco.MjModel`` compiled from the same description (or a simulation).
        qpos: MuJoCo configuration (``mj_model.nq``); quaternions ``(w, x, y, z)``.
        q: Values of the Pinocchio joints that ``joint_map`` leaves out; default
            ``pin.neutral(pin_model)``. Not modified.
        joint_map: Pinocchio joint name -> MuJoCo joint name where they differ, or None.

    Returns:
        A new array of ``pin_model.nq`` values; ball and free quaternions ``(x, y, z, w)``.

    Raises:
        InputError: As :func:`to_mujoco_qpos`.
    """
    pm, mm = _pin_model(pin_model), _mj_model(mj_model)
    qpos = real_vector(qpos, "qpos", mm.nq)
    out = pin.neutral(pm) if q is None else real_vector(q, "q", pm.nq)
    for index, joint in _pairs(pm, mm, joint_map):
        kind = _kind(pm, index, mm, joint)
        i, a = pm.joints[index].idx_q, int(mm.jnt_qposadr[joint])
        if kind == "scalar":
            out[i] = qpos[a]
        elif kind == "continuous":
            out[i : i + 2] = (math.cos(qpos[a]), math.sin(qpos[a]))
        elif kind == "ball":
            w, x, y, z = unit_quaternion(qpos[a : a + 4], "qpos").tolist()
            out[i : i + 4] = (x, y, z, w)
        elif kind == "free":
            w, x, y, z = unit_quaternion(qpos[a + 3 : a + 7], "qpos").tolist()
            pose = pin.XYZQUATToSE3(np.concatenate([qpos[a : a + 3], [x, y, z, w]]))
            out[i : i + 7] = pin.SE3ToXYZQUAT(pm.jointPlacements[index].actInv(pose))
    return out
