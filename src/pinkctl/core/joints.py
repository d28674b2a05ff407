"""Conversions between pinkctl's named states and Pinocchio's vectors.

Poses: a position (3,) in m and a quaternion (4,) ordered **(w, x, y, z)** (the MuJoCo and
Isaac Sim convention) map to and from a ``pin.SE3`` ``T`` with ``T.translation = position``
and ``T.rotation = R(q)``.

Joints: a pinkctl joint position is one scalar per joint (rad or m). Pinocchio's
configuration ``q`` (size ``model.nq``) and tangent velocity ``v`` (size ``model.nv``) index
joints differently:

- revolute, prismatic, helical joints: one coordinate, ``q[idx_q] = angle``;
- continuous (unbounded revolute) joints: two coordinates ``(cos θ, sin θ)`` and one
  velocity; the angle is recovered with ``atan2(sin, cos)``, i.e. wrapped to (-π, π];
- mimic joints (``mimic=True`` parsing): no coordinate of their own (``nq = nv = 0``);
  Pinocchio computes them as ``scaling * q_master + offset``, so inputs for them are skipped;
- free, ball, planar and other multi-coordinate joints cannot be given by one scalar and are
  rejected with ``ValueError``.

:class:`JointSpaceMap` precomputes these index maps once for a set of controlled joints and
a robot joint space, and offers allocation-light methods for the control loop; the functions
below wrap it (or loop over the model) for one-off use. The Isaac Sim PINK extension names are
kept as aliases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pinocchio as pin

from .._validation import real_number, real_vector
from ..errors import InputError
from .joint_info import JointInfo
from .joint_space_map import JointSpaceMap, scalar_joint
from .state import JointState

__all__ = [
    "JointSpaceMap",
    "configuration_to_joint_positions",
    "joint_positions_to_configuration",
    "map_joint_positions_to_pinocchio",
    "map_pinocchio_velocity_to_joint_state",
    "velocity_to_joint_state",
]


def _scalar_from_q(model: pin.Model, info: JointInfo, q: np.ndarray) -> float:
    if info.kind == "scalar":
        return float(q[info.idx_q])
    if info.kind == "continuous":
        return float(np.arctan2(q[info.idx_q + 1], q[info.idx_q]))
    mimic = model.joints[model.getJointId(info.name)].extract()
    scaling, offset = getattr(mimic, "scaling", None), getattr(mimic, "offset", None)
    masters = [j for j in model.joints[1:] if j.nq == 1 and j.nv == 1 and j.idx_q == mimic.idx_q]
    if scaling is None or offset is None or len(masters) != 1:
        raise InputError(f"mimic joint {info.name!r}: cannot find a single-coordinate master")
    return float(scaling * q[mimic.idx_q] + offset)


def joint_positions_to_configuration(
    joint_names: Sequence[str],
    joint_positions: Any,
    model: pin.Model,
    q_current: Any = None,
) -> np.ndarray:
    """Write named scalar joint positions into a Pinocchio configuration vector.

    Args:
        joint_names: Joint names, one per entry of ``joint_positions``; unique.
        joint_positions: Positions [rad or m], same length as ``joint_names``, finite.
        model: Pinocchio model.
        q_current: Configuration (``model.nq``) supplying every joint not named; default
            ``pin.neutral(model)``. It is copied, never modified.

    Returns:
        The configuration ``q`` (``model.nq``). Names that are not joints of the model are
        skipped; continuous joints become ``(cos θ, sin θ)``; mimic joints are skipped
        (Pinocchio derives them from their master).

    Raises:
        ValueError: On a length mismatch, duplicate names, NaN/inf, a ``q_current`` of the
            wrong size, or a named multi-coordinate joint (free, ball, planar, ...).
    """
    names = list(joint_names)
    positions = real_vector(joint_positions, "joint_positions", len(names))
    if len(set(names)) != len(names):
        raise InputError(f"joint_names has duplicates: {names}")
    if q_current is None:
        q = pin.neutral(model)
    else:
        q = real_vector(q_current, "q_current", model.nq)
    for name, value in zip(names, positions, strict=True):
        if not model.existJointName(name):
            continue
        info = scalar_joint(model, name)
        if info.kind == "scalar":
            q[info.idx_q] = value
        elif info.kind == "continuous":
            q[info.idx_q] = np.cos(value)
            q[info.idx_q + 1] = np.sin(value)
    return q


def configuration_to_joint_positions(
    q: Any, model: pin.Model, joint_names: Sequence[str]
) -> np.ndarray:
    """Read scalar joint positions out of a Pinocchio configuration.

    Args:
        q: Configuration (``model.nq``), finite.
        model: Pinocchio model.
        joint_names: Joints to read, all in the model.

    Returns:
        One position per name [rad or m]. Continuous joints give ``atan2(sin, cos)`` in
        (-π, π]; mimic joints give ``scaling * q_master + offset``.

    Raises:
        ValueError: If ``q`` has the wrong size or NaN/inf, a name is not a joint of the model,
            or a joint has several coordinates.
    """
    qv = real_vector(q, "q", model.nq)
    out = np.empty(len(joint_names))
    for k, name in enumerate(joint_names):
        if not model.existJointName(name):
            raise InputError(f"joint {name!r} is not in the model")
        out[k] = _scalar_from_q(model, scalar_joint(model, name), qv)
    return out


def velocity_to_joint_state(
    velocity: Any,
    model: pin.Model,
    controlled_joint_names: Sequence[str],
    robot_joint_space: Sequence[str],
    dt: float,
    q_current: Any,
    current_joint_positions: Any = None,
) -> JointState:
    """Integrate a tangent velocity over ``dt`` into a joint position + velocity command.

    Args:
        velocity: (nv,) tangent velocity from the IK [rad/s or m/s].
        model: Pinocchio model.
        controlled_joint_names: Joints to command (each with one velocity coordinate).
        robot_joint_space: Ordered joint names of the output state.
        dt: Step length [s], > 0.
        q_current: (nq,) configuration before the step (checked; used for the positions when
            ``current_joint_positions`` is None).
        current_joint_positions: Current positions of ``controlled_joint_names`` (same order).
            Give the measured, unwrapped angles so that continuous joints continue them
            (``θ + v·dt`` rather than a value wrapped to (-π, π]).

    Returns:
        JointState with positions ``current + v·dt`` and velocities ``v`` for the controlled
        joints.

    Raises:
        ValueError: On wrong sizes, NaN/inf, ``dt <= 0``, or an unusable controlled joint.
    """
    mapping = JointSpaceMap(model, controlled_joint_names, robot_joint_space)
    v = real_vector(velocity, "velocity", model.nv)
    q = real_vector(q_current, "q_current", model.nq)
    step = real_number(dt, "dt", low=0.0, low_open=True)
    if current_joint_positions is None:
        current = mapping.configuration_to_positions(q)
    else:
        current = real_vector(
            current_joint_positions, "current_joint_positions", len(mapping.controlled_joint_names)
        )
    return mapping.to_joint_state(v, current, step)


#: Isaac Sim PINK extension name of :func:`joint_positions_to_configuration`.
map_joint_positions_to_pinocchio = joint_positions_to_configuration
#: Isaac Sim PINK extension name of :func:`velocity_to_joint_state`.
map_pinocchio_velocity_to_joint_state = velocity_to_joint_state
