"""Acceleration and jerk limits of a robot whose configuration gives none, from its description.

Without acceleration limits the motion shaper could only clip velocities: its dead-beat step
asks, every tick, for whatever velocity closes the remaining error, so a command may go from
``+v_max`` to ``-v_max`` in one tick. A kinematic loop follows that, but an arm with inertia
and a servo of finite bandwidth does not: where the controller linearises at the measured
joints (the default), the command integrates the lagging measurement's error at ``1/dt`` and
the loop rings between the velocity limits (the PR2's right arm in MuJoCo: commands flipping
sign every few ticks, the arm up to 2 rad behind them). Real interfaces reject such a
sequence anyway. So every joint gets limits, said in ``robot.inferred``:

- **acceleration** ``A = ETA * effort / inertia``: half (:data:`EFFORT_SHARE`) of the
  description's effort limit (the rest is left for gravity, friction and the servo's own
  corrections) over the largest inertia the joint can ever carry (:func:`inertia_bound`),
  kept between full speed in :data:`SLOWEST_RAMP_UP` s and in :data:`FASTEST_RAMP_UP` s
  (``v / 2 s <= A <= v / 0.2 s``: a distal joint's effort over its small inertia allows
  hundreds of rad/s^2 that no gearbox delivers). A joint without a usable effort limit (0,
  infinite, missing) reaches full speed in :data:`DEFAULT_RAMP_UP` s (``A = 2 v``).
- **jerk** ``J = A / RAMP``: the acceleration builds up over :data:`ACCELERATION_RAMP`
  (20 ms, the ratio ``J / A = 50`` of most of the catalog's configurations: ur5, kinova,
  xarm7, g1), slow enough for a 10 Hz servo to follow.

Measured against the catalog's hand-written limits (franka's datasheet: 7.5-20 rad/s^2) the
rule gives franka 10.9-13 rad/s^2; the configured limits always win.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

__all__ = [
    "ACCELERATION_RAMP",
    "DEFAULT_RAMP_UP",
    "EFFORT_SHARE",
    "FASTEST_RAMP_UP",
    "SLOWEST_RAMP_UP",
    "inertia_bound",
    "infer_motion_limits",
]

#: Share of a joint's effort limit its inferred acceleration limit may use.
EFFORT_SHARE = 0.5
#: Shortest time from rest to the velocity limit an inferred acceleration limit allows [s].
FASTEST_RAMP_UP = 0.2
#: Longest time from rest to the velocity limit an inferred acceleration limit allows [s].
SLOWEST_RAMP_UP = 2.0
#: Time from rest to the velocity limit of a joint without an effort limit [s].
DEFAULT_RAMP_UP = 0.5
#: Time the inferred jerk limit takes to build up the acceleration limit [s].
ACCELERATION_RAMP = 0.02

_PRISMATIC = ("JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismaticUnaligned")


def _prismatic(model: pin.Model, joint: int) -> bool:
    """Whether a joint slides along one axis."""
    return model.joints[joint].shortname() in _PRISMATIC


def _travel(model: pin.Model, joint: int) -> float:
    """How far a joint's child frame can slide from its placement [m] (0 unless prismatic;
    infinite for an unlimited prismatic joint)."""
    if not _prismatic(model, joint):
        return 0.0
    j = model.joints[joint]
    lo = float(model.lowerPositionLimit[j.idx_q])
    hi = float(model.upperPositionLimit[j.idx_q])
    return max(abs(lo), abs(hi))


def _axis(model: pin.Model, joint: int) -> np.ndarray | None:
    """A one-axis rotation joint's unit axis in its own frame (None for other joints)."""
    if model.joints[joint].nv != 1:
        return None
    data = model.createData()
    pin.computeJointJacobians(model, data, pin.neutral(model))
    local = np.reshape(pin.getJointJacobian(model, data, joint, pin.LOCAL), (6, model.nv))
    axis = local[3:, model.joints[joint].idx_v]
    return axis / np.linalg.norm(axis)


def _off_axis(point: np.ndarray, axis: np.ndarray | None) -> float:
    """Distance [m] of a point of a joint's frame from the joint's axis (from its origin
    when it has none)."""
    if axis is None:
        return float(np.linalg.norm(point))
    return float(np.linalg.norm(point - (point @ axis) * axis))


def inertia_bound(model: pin.Model, joint: int) -> float:
    """An upper bound, over every configuration, of the inertia a joint moves [kg m^2] (a
    prismatic joint: [kg], exact: the mass it carries), plus its armature.

    A rotation joint carries every body ``k`` of its subtree. The body it moves directly
    contributes exactly its inertia about the axis. Any other contributes at most its largest
    principal moment plus ``m_k r_k^2``, where ``r_k`` bounds the distance of its centre of
    mass from the axis whatever the joints in between do: the distance from the axis of the
    first joint after ``joint`` (fixed as ``joint`` turns), plus the lengths of the links from
    there. Infinite when a prismatic joint in between has no range.
    """
    j = model.joints[joint]
    armature = float(np.max(model.armature[j.idx_v : j.idx_v + j.nv]))
    subtree = [int(k) for k in model.subtrees[joint]]
    if _prismatic(model, joint):
        return armature + sum(float(model.inertias[k].mass) for k in subtree)
    axis = _axis(model, joint)
    own = model.inertias[joint]
    r = _off_axis(own.lever, axis)
    spin = (
        float(np.max(np.linalg.eigvalsh(own.inertia)))
        if axis is None
        else axis @ own.inertia @ axis
    )
    total = armature + float(spin) + float(own.mass) * r * r
    reach = {joint: 0.0}  # bound on the distance of each joint's origin from the axis
    for k in subtree[1:]:  # parents before children
        parent = int(model.parents[k])
        offset = model.jointPlacements[k].translation
        start = (
            _off_axis(offset, axis)
            if parent == joint
            else reach[parent] + float(np.linalg.norm(offset))
        )
        reach[k] = start + _travel(model, k)
        body = model.inertias[k]
        r = reach[k] + float(np.linalg.norm(body.lever))
        total += float(np.max(np.linalg.eigvalsh(body.inertia))) + float(body.mass) * r * r
    return total


def _acceleration(model: pin.Model, joint: int, velocity: float) -> tuple[float, bool]:
    """``(A, from_effort)`` of one joint (module docstring)."""
    j = model.joints[joint]
    effort = float(np.min(model.effortLimit[j.idx_v : j.idx_v + j.nv]))
    inertia = inertia_bound(model, joint)
    if not (math.isfinite(effort) and 0.0 < effort < 1e10 and 0.0 < inertia < math.inf):
        return velocity / DEFAULT_RAMP_UP, False
    wanted = EFFORT_SHARE * effort / inertia
    return min(max(wanted, velocity / SLOWEST_RAMP_UP), velocity / FASTEST_RAMP_UP), True


def infer_motion_limits(
    model: pin.Model, velocity: dict[str, float]
) -> tuple[dict[str, float], dict[str, float], str, list[str]]:
    """Acceleration and jerk limits of the joints ``velocity`` names (module docstring).

    Args:
        model: The robot's kinematic model (inertias, effort limits).
        velocity: Each joint's velocity limit [rad/s or m/s].

    Returns:
        ``(acceleration, jerk, reason, without)``: the limits by joint ([rad/s^2 or m/s^2],
        [/s^3]), one line saying how they were found (for ``robot.inferred``), and the joints
        without a usable effort limit (:data:`DEFAULT_RAMP_UP`).
    """
    acceleration: dict[str, float] = {}
    without: list[str] = []
    for name, v in velocity.items():
        acceleration[name], from_effort = _acceleration(model, model.getJointId(name), v)
        if not from_effort:
            without.append(name)
    jerk = {name: a / ACCELERATION_RAMP for name, a in acceleration.items()}
    values = ", ".join(f"{name} {a:.3g}" for name, a in acceleration.items())
    reason = (
        f"{EFFORT_SHARE:g} x effort limit / largest inertia, full speed in "
        f"{FASTEST_RAMP_UP:g}-{SLOWEST_RAMP_UP:g} s; jerk: the acceleration in "
        f"{ACCELERATION_RAMP * 1e3:g} ms ({values} /s^2)"
    )
    if without:
        reason += f"; no effort limit: full speed in {DEFAULT_RAMP_UP:g} s for {without}"
    return acceleration, jerk, reason, without
