"""A free-standing chain Jacobian (the seed's ``ikComputeJacobian``): no group, no element.

:func:`chain_jacobian` takes a chain from a ``base`` frame (the world by default) to its last
``joint``, a tip rigidly attached to that joint's frame (its world pose at ``q`` given), a
target pose (the tip's by default: zero error) and the frame whose axes the position rows use
(a pose, by default the base's), all fixed in the world. The error and its Jacobian are an
element's (:mod:`pinkctl.groups.element`):

.. math::

    e_p = R_C^T (p_T - p_G), \\quad e_r = \\log_3(R_G^T R_T), \\qquad
    \\frac{\\partial e_p}{\\partial q} = R_C^T J_{v,T}, \\quad
    \\frac{\\partial e_r}{\\partial q} = J_{\\log_3}(R_G^T R_T) R_T^T J_{ω,T}

with ``J_{v,T} = J_{v,j} - [p_T - p_j]_× J_{ω,j}`` from the LOCAL_WORLD_ALIGNED Jacobian of
the joint ``j``. Rows are the constrained axes (x, y, z, alpha, beta, gamma); columns the
velocity coordinates of the joints between the base and the last joint, from base to tip,
those whose IK settings hold them (mode ``"passive"``, weight 0) left out and dependent joints
folded into their masters, as in a group's Jacobian.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from ..errors import InputError
from .flags import AXES, Constraint, check_constraints
from .jacobian import GroupJacobian
from .layout import Row, chain_columns
from .objects import WORLD, check_pose
from .scene import KinematicScene

__all__ = ["chain_jacobian"]

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


def _chain(scene: KinematicScene, base: str, joint: str) -> tuple[int, set[int]]:
    """The last joint's index and the joints between ``base`` and it."""
    if not isinstance(joint, str) or not scene.is_joint(joint):
        raise InputError(f"joint {joint!r} is not a joint of the scene")
    model = scene.model
    last = scene.joint_id(joint)
    try:
        above = model.frames[scene.frame_id(base)].parentJoint
    except InputError as exc:
        raise InputError(f"base {base!r} is not a frame of the scene") from exc
    if above not in model.supports[last]:
        raise InputError(f"base {base!r} is not on the chain from the world to joint {joint!r}")
    on_chain = set(model.supports[last]) - set(model.supports[above])
    return last, {j for j in on_chain if model.joints[j].nv > 0}


def chain_jacobian(
    scene: KinematicScene,
    q: Any,
    joint: str,
    tip_pose: Any,
    *,
    base: str | None = None,
    constraints: int = Constraint.POSE,
    target_pose: Any = None,
    constraint_base_pose: Any = None,
) -> GroupJacobian:
    """The Jacobian and error of a kinematic chain at ``q`` (module docstring).

    Args:
        scene: The scene.
        q: Configuration of the scene (dependent joints are taken as they are).
        joint: The chain's last joint, going from the base to the tip.
        tip_pose: World pose of the tip at ``q`` (``pin.SE3`` or 4 x 4), attached to
            ``joint``'s frame.
        base: Frame the chain starts from (None: the world).
        constraints: The constrained axes (:class:`~pinkctl.groups.flags.Constraint`).
        target_pose: World pose of the target (None: the tip's, so the error is zero).
        constraint_base_pose: World pose whose axes the position rows use (None: the
            base's at ``q``).

    Returns:
        The Jacobian ``J`` (rows per constrained axis, element 0; columns base to tip) and
        the error ``e = tip - target``.

    Raises:
        ValueError: An unknown joint or frame, a base that is not on the joint's chain, or
            a malformed pose, mask or configuration (the message names the argument).
    """
    mask = check_constraints(constraints)
    base_name = WORLD if base is None else base
    last, on_chain = _chain(scene, base_name, joint)
    tip = check_pose(tip_pose, "tip_pose")
    target = tip if target_pose is None else check_pose(target_pose, "target_pose")
    q_now = scene.check_configuration(q)
    if constraint_base_pose is None:
        reference = scene.world_pose(base_name, q_now)
    else:
        reference = check_pose(constraint_base_pose, "constraint_base_pose")
    model, data = scene.model, scene.data
    pin.computeJointJacobians(model, data, q_now)
    J_joint = pin.getJointJacobian(model, data, last, _LWA)
    offset = tip.translation - data.oMi[last].translation
    linear = J_joint[:3] - pin.skew(offset) @ J_joint[3:]
    M = target.rotation.T @ tip.rotation
    e6 = np.concatenate(
        [reference.rotation.T @ (tip.translation - target.translation), pin.log3(M)]
    )
    J6 = np.vstack([reference.rotation.T @ linear, pin.Jlog3(M) @ tip.rotation.T @ J_joint[3:]])
    columns = chain_columns(scene, on_chain, scene.joint_settings)
    for fold in columns.folds:
        slope = fold.law.derivative(float(q_now[fold.master_q]), fold.joint)
        J6[:, fold.master_v] += slope * J6[:, fold.dependent_v]
    axes = [axis for bit, bit_axes in AXES if mask & bit for axis in bit_axes]
    rows = np.array([component for _, component in axes], dtype=np.intp)
    return GroupJacobian(
        J=J6[rows][:, columns.v_indices],
        e=e6[rows],
        rows=tuple(Row(0, label) for label, _ in axes),
        columns=columns.columns,
    )
