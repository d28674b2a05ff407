"""The servos of a robot's MuJoCo scene: the description's own, or pinkctl's, never both.

:func:`add_servos` gives every actuated joint exactly one position servo
(:mod:`pinkctl.sim.servos` drives them):

- a joint the description already drives with a plain position actuator (an MJCF's
  ``<position joint="j1" kp=...>``: joint transmission, unit gear, fixed gain, affine bias)
  keeps it, with its own name and gains (``kp`` / ``kv`` given to the simulation override
  them); its other actuators on that joint are removed;
- a joint the description drives otherwise (a motor, a velocity actuator, a geared servo) has
  those actuators replaced by a pinkctl servo;
- any other actuated joint gets a pinkctl servo named like the joint (gains from
  ``robot.actuator_kp`` / ``actuator_kv``), a ball joint three, ``<joint>:x``, ``:y``, ``:z``,
  with their gear along each axis (MuJoCo's length of such an actuator is that component of
  the joint's rotation vector), gains of the same bandwidth as the other servos on the
  largest inertia the joint moves at home.

Every other scalar joint of the robot is held where it was reset: by its own position
actuator when the description has one, else by a servo named ``hold:<joint>`` (mimic
followers follow their master; joints the description drives otherwise are left to it); a
ball joint that is not actuated by a spring and damper toward its reference rotation. What
was chosen is one line, ``robot.inferred["servos"]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np
import pinocchio as pin

from ..core.ball_joints import ball_coordinate_names, ball_joint_names
from ..errors import InputError

if TYPE_CHECKING:
    from ..core.robot import PinkRobot

__all__ = ["HOLD_PREFIX", "add_servos"]

#: Name prefix of the servos that hold a robot's other joints at their reset position.
HOLD_PREFIX = "hold:"


def _is_position(actuator: Any) -> bool:
    """Whether a spec actuator is a plain position servo (module docstring)."""
    kp = float(actuator.gainprm[0])
    return (
        actuator.trntype == mujoco.mjtTrn.mjTRN_JOINT
        and actuator.gaintype == mujoco.mjtGain.mjGAIN_FIXED
        and actuator.biastype == mujoco.mjtBias.mjBIAS_AFFINE
        and kp > 0.0
        and float(actuator.biasprm[1]) == -kp
        and list(actuator.gear) == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    )


def _ball_gains(robot: PinkRobot, spec_joint: Any, name: str) -> tuple[float, float]:
    """``(kp, kv)`` of a ball joint's servos or spring: the servos' bandwidth on the largest
    inertia it moves at home, armature added where an axis is too light for it."""
    from ..core.robot.inference import (  # noqa: PLC0415
        MAX_SERVO_FREQUENCY,
        MIN_SERVO_INERTIA,
        SERVO_FREQUENCY,
    )

    model = robot.model
    v = model.joints[model.getJointId(name)].idx_v
    inertia = np.diag(pin.crba(model, model.createData(), robot.q0))[v : v + 3]
    heaviest = max(float(np.max(inertia)), MIN_SERVO_INERTIA)
    gain_p = heaviest * SERVO_FREQUENCY**2
    needed = gain_p / MAX_SERVO_FREQUENCY**2
    lightest = float(np.min(inertia))
    if needed > lightest:
        spec_joint.armature = max(float(spec_joint.armature), needed - lightest)
    return gain_p, 2.0 * math.sqrt(gain_p * heaviest)


def _add_position(spec: mujoco.MjSpec, name: str, joint: str, kp: float, kv: float) -> Any:
    actuator = spec.add_actuator(name=name, target=joint)
    actuator.trntype = mujoco.mjtTrn.mjTRN_JOINT
    actuator.set_to_position(kp=kp, kv=kv)
    return actuator


def _joint_actuators(spec: mujoco.MjSpec) -> dict[str, list[Any]]:
    """The spec's actuators with a joint transmission, by the name of the joint they drive."""
    own: dict[str, list[Any]] = {}
    for actuator in spec.actuators:
        if actuator.trntype == mujoco.mjtTrn.mjTRN_JOINT and actuator.target:
            own.setdefault(actuator.target, []).append(actuator)
    return own


def _scalar_gains(
    robot: PinkRobot, name: str, kp: float | None, kv: float | None
) -> tuple[float, float]:
    """``(kp, kv)`` of a pinkctl servo on a hinge or slide joint: the given gains, else the
    robot's (``actuator_kp`` / ``actuator_kv``), else 1000 and a critically damped kv."""
    gain_p = kp if kp is not None else robot.actuator_kp.get(name, 1000.0)
    gain_v = kv if kv is not None else robot.actuator_kv.get(name, 2.0 * np.sqrt(gain_p))
    return gain_p, gain_v


def _override_gains(servo: Any, kp: float | None, kv: float | None) -> None:
    """Set the given gains on one of the description's own position servos (``None``: keep)."""
    if kp is not None:
        servo.gainprm[0], servo.biasprm[1] = kp, -kp
    if kv is not None:
        servo.biasprm[2] = -kv


def _remove_others(spec: mujoco.MjSpec, actuators: list[Any], servo: Any, joint: str) -> list[str]:
    """Delete a joint's actuators other than ``servo``; returns the names deleted."""
    removed = []
    for actuator in actuators:
        if actuator is not servo:
            removed.append(actuator.name or f"(unnamed, on {joint})")
            spec.delete(actuator)
    return removed


def _add_ball_servos(
    spec: mujoco.MjSpec, robot: PinkRobot, joint: Any, kp: float | None, kv: float | None
) -> None:
    """Three pinkctl servos on a ball joint, ``<joint>:x`` / ``:y`` / ``:z``, each geared
    along its axis of the rotation vector."""
    gain_p, gain_v = _ball_gains(robot, joint, joint.name)
    gain_p, gain_v = kp or gain_p, gain_v if kv is None else kv
    for axis, coordinate in enumerate(ball_coordinate_names(joint.name)):
        actuator = _add_position(spec, coordinate, joint.name, gain_p, gain_v)
        actuator.gear = [1.0 * (k == axis) for k in range(3)] + [0.0, 0.0, 0.0]


def _servo_note(kept: list[str], added: list[str], replaced: list[str]) -> str:
    """The one line saying which servos are the description's and which are pinkctl's."""
    parts = []
    if kept:
        parts.append("the description's own position actuators " + ", ".join(kept))
    if added:
        parts.append(f"pinkctl's position servos on {added}")
    if replaced:
        parts.append(f"replacing the description's actuators {replaced} (not position servos)")
    return "; ".join(parts) or "none"


def add_servos(
    spec: mujoco.MjSpec,
    robot: PinkRobot,
    actuated: Sequence[str],
    kp: float | None,
    kv: float | None,
) -> str:
    """Give the actuated joints their servos and hold the others (module docstring).

    Returns:
        One line saying which servos are the description's and which are pinkctl's (also
        stored as ``robot.inferred["servos"]``).

    Raises:
        InputError: An actuated joint the MuJoCo model lacks.
    """
    joints = {j.name: j for j in spec.joints if j.name}
    balls = set(ball_joint_names(robot.model))
    own = _joint_actuators(spec)
    kept: list[str] = []
    replaced: list[str] = []
    added: list[str] = []
    for name in actuated:
        if name not in joints:
            raise InputError(f"actuated joint {name!r} is not a joint of the MuJoCo model")
        actuators = own.get(name, [])
        servo = None if name in balls else next(filter(_is_position, actuators), None)
        replaced += _remove_others(spec, actuators, servo, name)
        if servo is not None:
            kept.append(f"{servo.name or '(unnamed)'} on {name}")
            _override_gains(servo, kp, kv)
        elif name in balls:
            added.append(name)
            _add_ball_servos(spec, robot, joints[name], kp, kv)
        else:
            added.append(name)
            _add_position(spec, name, name, *_scalar_gains(robot, name, kp, kv))
    _hold_others(spec, robot, actuated, own, kp, kv)
    note = _servo_note(kept, added, replaced)
    robot.inferred["servos"] = note
    return note


def _hold_others(
    spec: mujoco.MjSpec,
    robot: PinkRobot,
    actuated: Sequence[str],
    own: dict[str, list[Any]],
    kp: float | None,
    kv: float | None,
) -> None:
    """Hold every other joint of the robot (module docstring): real robots hold the joints
    they do not move (a hand's fingers, a head, wheels)."""
    joints = {j.name: j for j in spec.joints if j.name}
    skipped = set(actuated) | _followers(spec) | set(own)
    scalar = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    for name in robot.joint_names:
        joint = joints.get(name)
        if name not in skipped and joint is not None and joint.type in scalar:
            _add_position(spec, HOLD_PREFIX + name, name, *_scalar_gains(robot, name, kp, kv))
    for name in set(ball_joint_names(robot.model)) - set(actuated):
        _hold_ball(robot, joints.get(name))


def _followers(spec: mujoco.MjSpec) -> set[str]:
    """Joints that follow another through a joint equality (mimic joints): never held."""
    return {e.name1 for e in spec.equalities if e.type == mujoco.mjtEq.mjEQ_JOINT and e.name1}


def _hold_ball(robot: PinkRobot, joint: Any) -> None:
    """A spring and damper holding an unactuated ball joint at its reference rotation
    (``joint`` ``None`` or not a ball in the MuJoCo model: nothing to hold)."""
    if joint is None or joint.type != mujoco.mjtJoint.mjJNT_BALL:
        return
    gain_p, gain_v = _ball_gains(robot, joint, joint.name)
    # MuJoCo 4's spring and damper coefficients are polynomials: the linear term only
    joint.stiffness = [gain_p, 0.0, 0.0]
    joint.damping = [gain_v, 0.0, 0.0]
