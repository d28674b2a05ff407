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
    own: dict[str, list[Any]] = {}
    for actuator in spec.actuators:
        if actuator.trntype == mujoco.mjtTrn.mjTRN_JOINT and actuator.target:
            own.setdefault(actuator.target, []).append(actuator)
    kept: list[str] = []
    replaced: list[str] = []
    added: list[str] = []
    for name in actuated:
        if name not in joints:
            raise InputError(f"actuated joint {name!r} is not a joint of the MuJoCo model")
        servo = (
            None if name in balls else next((a for a in own.get(name, []) if _is_position(a)), None)
        )
        for actuator in own.get(name, []):
            if actuator is not servo:
                replaced.append(actuator.name or f"(unnamed, on {name})")
                spec.delete(actuator)
        if servo is not None:
            kept.append(f"{servo.name or '(unnamed)'} on {name}")
            if kp is not None:
                servo.gainprm[0], servo.biasprm[1] = kp, -kp
            if kv is not None:
                servo.biasprm[2] = -kv
            continue
        added.append(name)
        if name in balls:
            gain_p, gain_v = _ball_gains(robot, joints[name], name)
            gain_p, gain_v = kp or gain_p, gain_v if kv is None else kv
            for axis, coordinate in enumerate(ball_coordinate_names(name)):
                actuator = _add_position(spec, coordinate, name, gain_p, gain_v)
                actuator.gear = [1.0 * (k == axis) for k in range(3)] + [0.0, 0.0, 0.0]
            continue
        gain_p = kp if kp is not None else robot.actuator_kp.get(name, 1000.0)
        gain_v = kv if kv is not None else robot.actuator_kv.get(name, 2.0 * np.sqrt(gain_p))
        _add_position(spec, name, name, gain_p, gain_v)
    _hold_others(spec, robot, actuated, own, kp, kv)
    parts = []
    if kept:
        parts.append("the description's own position actuators " + ", ".join(kept))
    if added:
        parts.append(f"pinkctl's position servos on {added}")
    if replaced:
        parts.append(f"replacing the description's actuators {replaced} (not position servos)")
    note = "; ".join(parts) or "none"
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
    followers = {e.name1 for e in spec.equalities if e.type == mujoco.mjtEq.mjEQ_JOINT and e.name1}
    scalar = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    joints = {j.name: j for j in spec.joints if j.name}
    for name in robot.joint_names:
        joint = joints.get(name)
        if name in actuated or name in followers or name in own or joint is None:
            continue
        if joint.type not in scalar:
            continue
        gain_p = kp if kp is not None else robot.actuator_kp.get(name, 1000.0)
        gain_v = kv if kv is not None else robot.actuator_kv.get(name, 2.0 * np.sqrt(gain_p))
        _add_position(spec, HOLD_PREFIX + name, name, gain_p, gain_v)
    for name in ball_joint_names(robot.model):
        joint = joints.get(name)
        if name in actuated or joint is None or joint.type != mujoco.mjtJoint.mjJNT_BALL:
            continue
        gain_p, gain_v = _ball_gains(robot, joint, name)
        # MuJoCo 4's spring and damper coefficients are polynomials: the linear term only
        joint.stiffness = [gain_p, 0.0, 0.0]
        joint.damping = [gain_v, 0.0, 0.0]
