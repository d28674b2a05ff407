"""Which joints a MuJoCo-level solve moves, their velocity columns, and their limits.

A joint of a MuJoCo model owns ``qpos`` coordinates from ``jnt_qposadr`` and velocity
coordinates (Jacobian columns) from ``jnt_dofadr``: hinge and slide 1 / 1, ball 4 / 3 (a
``(w, x, y, z)`` quaternion and a rotation vector), free 7 / 6 (position, quaternion; linear
then angular velocity).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ._checks import SCALAR, object_id

__all__ = ["chain_joints", "dof_columns", "joint_ids", "project_to_limits"]

_FREE = int(mujoco.mjtJoint.mjJNT_FREE)
_BALL = int(mujoco.mjtJoint.mjJNT_BALL)

#: Velocity coordinates of each joint type (free, ball, slide, hinge).
_NDOF = {_FREE: 6, _BALL: 3, SCALAR[0]: 1, SCALAR[1]: 1}


def _equality_followers(model: mujoco.MjModel) -> set[int]:
    """Joints that an active joint equality drives (a mimic finger follows its primary)."""
    return {
        int(model.eq_obj1id[i])
        for i in range(model.neq)
        if int(model.eq_type[i]) == int(mujoco.mjtEq.mjEQ_JOINT) and model.eq_active0[i]
    }


def chain_joints(model: mujoco.MjModel, site_id: int) -> tuple[int, ...]:
    """The hinge and slide joints met walking from the site's body to the world, root first
    (the seed's default selection), minus joints an active joint equality drives."""
    followers = _equality_followers(model)
    found: list[int] = []
    body = int(model.site_bodyid[site_id])
    while body > 0:
        own = [
            j
            for j in range(
                int(model.body_jntadr[body]),
                int(model.body_jntadr[body]) + int(model.body_jntnum[body]),
            )
            if int(model.jnt_type[j]) in SCALAR and j not in followers
        ]
        found[:0] = own
        body = int(model.body_parentid[body])
    return tuple(found)


def joint_ids(model: mujoco.MjModel, site_id: int, joints: Any) -> tuple[int, ...]:
    """The joints of a solve: ``joints`` (names or ids, any type) or, when None, the site's
    chain (:func:`chain_joints`).

    Raises:
        InputError: Not a sequence, an unknown name or id, a repeated joint, none at all.
    """
    if joints is None:
        return _site_chain(model, site_id)
    if isinstance(joints, (str, bytes)) or not isinstance(joints, (Sequence, np.ndarray)):
        raise InputError(f"joints must be a sequence of joint names or ids, got {joints!r}")
    ids = tuple(
        object_id(model, j, mujoco.mjtObj.mjOBJ_JOINT, f"joints[{k}]") for k, j in enumerate(joints)
    )
    if not ids:
        raise InputError("joints must not be empty")
    if len(set(ids)) != len(ids):
        repeated = sorted({model.joint(j).name or str(j) for j in ids if ids.count(j) > 1})
        raise InputError(f"joints names a joint twice: {repeated}")
    return ids


def _site_chain(model: mujoco.MjModel, site_id: int) -> tuple[int, ...]:
    """The site's chain (at least one joint)."""
    ids = chain_joints(model, site_id)
    if not ids:
        raise InputError(
            f"site {model.site(site_id).name!r} has no hinge or slide joint between it "
            "and the world: name the joints (joints=[...])"
        )
    return ids


def dof_columns(model: mujoco.MjModel, ids: Sequence[int]) -> NDArray[np.intp]:
    """The velocity coordinates (Jacobian columns) of the joints, joint by joint."""
    columns: list[int] = []
    for j in ids:
        start = int(model.jnt_dofadr[j])
        columns.extend(range(start, start + _NDOF[int(model.jnt_type[j])]))
    return np.array(columns, dtype=np.intp)


def _cap_rotation(quaternion: NDArray[np.float64], limit: float) -> NDArray[np.float64]:
    """The unit quaternion turned back along its own axis to at most ``limit`` [rad]."""
    q = quaternion / np.linalg.norm(quaternion)
    if q[0] < 0.0:  # the same rotation, with the angle in [0, pi]
        q = -q
    angle = 2.0 * float(np.arccos(min(1.0, q[0])))
    if angle <= limit:
        return q
    axis = q[1:] / np.linalg.norm(q[1:])
    half = 0.5 * limit
    return np.concatenate([[np.cos(half)], np.sin(half) * axis])


def project_to_limits(model: mujoco.MjModel, ids: Sequence[int], qpos: NDArray[np.float64]) -> None:
    """Put the joints of ``qpos`` back in their ranges, in place.

    Limited hinges and slides are clipped to ``jnt_range``; quaternions are normalised; a
    limited ball joint's rotation angle is capped at ``jnt_range[1]`` (MuJoCo's meaning of a
    ball range: the largest angle from the reference orientation), keeping its axis.
    """
    for j in ids:
        kind, a = int(model.jnt_type[j]), int(model.jnt_qposadr[j])
        limited = bool(model.jnt_limited[j])
        if kind in SCALAR:
            if limited:
                low, high = model.jnt_range[j]
                qpos[a] = min(max(qpos[a], low), high)
        elif kind == _BALL:
            quaternion = qpos[a : a + 4] / np.linalg.norm(qpos[a : a + 4])
            qpos[a : a + 4] = (
                _cap_rotation(quaternion, float(model.jnt_range[j][1])) if limited else quaternion
            )
        else:
            qpos[a + 3 : a + 7] /= np.linalg.norm(qpos[a + 3 : a + 7])
