"""Which joints and actuators a target drives: the site's kinematic chain, or selectors.

By default (the seed's model-aware default) the joints are the scalar (hinge or slide) joints
met when walking from the site's body toward the world body, listed root first, minus joints
tied to another joint by a joint equality (mimic followers); the actuators are the
joint-driven actuators of those joints. In a scene with two arms on one base, each arm's site
therefore gets its own arm's joints and not the other's.

Selectors replace the inference (the seed's ``joints`` / ``actuators`` options):

* ``joints``: a sequence of joint names (kept in the given order), or a regular expression
  (a ``re.Pattern`` or a string), matched with ``re.search`` against every scalar joint's
  name (model order);
* ``actuators``: the same over actuator names; the joints are then the actuators' joints, in
  the actuators' order (useful when the actuator order differs from the ``qpos`` order).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

import mujoco
import numpy as np

from ..core.robot import PinkRobot
from ..errors import InputError
from ..mujoco_ik._checks import SCALAR
from ..mujoco_ik.joints import chain_joints

if TYPE_CHECKING:
    from ..sim import MujocoSimulation

__all__ = ["JointSelection", "Selector", "chain_robot", "select_joints", "target_site"]

#: A list of names, or a regular expression (string or compiled) searched in each name.
Selector = Union[Sequence[str], str, "re.Pattern[str]"]


@dataclass(frozen=True)
class JointSelection:
    """The joints and actuators one target drives, in matching order.

    Attributes:
        joint_names: Joint names; ``actuator_ids[k]`` drives ``joint_names[k]``.
        actuator_ids: MuJoCo actuator ids.
        actuator_names: MuJoCo actuator names (may be empty strings for unnamed actuators).
        qpos_addresses: ``qpos`` address of each joint.
    """

    joint_names: tuple[str, ...]
    actuator_ids: tuple[int, ...]
    actuator_names: tuple[str, ...]
    qpos_addresses: tuple[int, ...]


def _match(selector: Selector, names: list[str], what: str) -> list[str]:
    """Names chosen by ``selector`` among ``names`` (see the module docstring)."""
    if isinstance(selector, (str, re.Pattern)):
        return _search(selector, names, what)
    if not isinstance(selector, Sequence) or not all(isinstance(n, str) for n in selector):
        raise InputError(f"{what} must be a sequence of names or a regular expression")
    chosen = list(selector)
    unknown = [n for n in chosen if n not in names]
    if unknown:
        raise InputError(f"{what}: unknown names {unknown}; available: {names}")
    if len(set(chosen)) != len(chosen) or not chosen:
        raise InputError(f"{what} must name at least one item, each once, got {chosen}")
    return chosen


def _search(selector: str | re.Pattern[str], names: list[str], what: str) -> list[str]:
    """The names a regular expression finds (at least one)."""
    try:
        pattern = re.compile(selector)
    except re.error as exc:
        raise InputError(f"{what}: invalid regular expression {selector!r}: {exc}") from exc
    chosen = [n for n in names if pattern.search(n)]
    if not chosen:
        raise InputError(f"{what}: {pattern.pattern!r} matches none of {names}")
    return chosen


def select_joints(
    model: mujoco.MjModel,
    site: str,
    *,
    joints: Selector | None = None,
    actuators: Selector | None = None,
) -> JointSelection:
    """The joints and actuators a target on ``site`` drives (see the module docstring).

    Raises:
        ValueError: Unknown site, both selectors given, a selector that matches nothing or
            names unknown items, a chosen joint without a joint-driven actuator, or an
            actuator that does not drive a scalar joint.
    """
    if joints is not None and actuators is not None:
        raise InputError("give joints or actuators, not both")
    if actuators is not None:
        joint_names, ids = _actuated_joints(model, actuators)
    else:
        joint_names, ids = _site_joints(model, site, joints)
    return JointSelection(
        joint_names=tuple(joint_names),
        actuator_ids=tuple(ids),
        actuator_names=tuple(model.actuator(a).name for a in ids),
        qpos_addresses=tuple(int(model.joint(j).qposadr[0]) for j in joint_names),
    )


def _actuated_joints(model: mujoco.MjModel, actuators: Selector) -> tuple[list[str], list[int]]:
    """The scalar joints of the chosen actuators and the actuators' ids, in their order."""
    names = [model.actuator(a).name for a in range(model.nu)]
    ids = [names.index(n) for n in _match(actuators, names, "actuators")]
    joint_names = []
    for a in ids:
        if int(model.actuator_trntype[a]) != int(mujoco.mjtTrn.mjTRN_JOINT):
            raise InputError(f"actuator {names[a]!r} does not drive a joint")
        joint = model.joint(int(model.actuator_trnid[a, 0]))
        if int(model.jnt_type[joint.id]) not in SCALAR:
            raise InputError(f"actuator {names[a]!r} drives {joint.name!r}, not a scalar joint")
        joint_names.append(joint.name)
    return joint_names, ids


def _site_joints(
    model: mujoco.MjModel, site: str, joints: Selector | None
) -> tuple[list[str], list[int]]:
    """The chosen joints (default: the site's chain) and the first actuator driving each."""
    site_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, site)
    if site_id < 0:
        raise InputError(f"the MuJoCo model has no site {site!r}")
    if joints is None:
        joint_names = [model.joint(j).name for j in chain_joints(model, site_id)]
        if not joint_names:
            raise InputError(f"no hinge or slide joint moves site {site!r}")
    else:
        joint_names = _match(joints, _scalar_joints(model), "joints")
    joint_actuators = _joint_actuators(model)
    missing = [j for j in joint_names if j not in joint_actuators]
    if missing:
        raise InputError(f"joints {missing} have no actuator driving them")
    return joint_names, [joint_actuators[j] for j in joint_names]


def _scalar_joints(model: mujoco.MjModel) -> list[str]:
    """Names of the named hinge and slide joints, in model order."""
    return [
        model.joint(j).name
        for j in range(model.njnt)
        if int(model.jnt_type[j]) in SCALAR and model.joint(j).name
    ]


def _joint_actuators(model: mujoco.MjModel) -> dict[str, int]:
    """The first joint-driven actuator of each joint, by joint name."""
    out: dict[str, int] = {}
    for a in range(model.nu):
        if int(model.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_JOINT):
            out.setdefault(model.joint(int(model.actuator_trnid[a, 0])).name, a)
    return out


def position_servo_gains(model: mujoco.MjModel, actuator_ids: Sequence[int]) -> np.ndarray:
    """``kv / kp`` of position servos (``gainprm[0] = kp``, ``biasprm[2] = -kv``), per actuator.

    Commanding ``u = q_des + (kv / kp) qd_des`` gives a position servo velocity feed-forward.
    """
    ids = np.asarray(actuator_ids, dtype=int)
    kp = model.actuator_gainprm[ids, 0]
    kv = -model.actuator_biasprm[ids, 2]
    return np.where(kp > 0, kv / np.where(kp > 0, kp, 1.0), 0.0)


def chain_robot(robot: PinkRobot, joints: Sequence[str], site: str) -> PinkRobot:
    """A copy of ``robot`` that controls ``joints`` with ``site`` as tool frame, no gripper.

    Velocity limits come from the robot (else its model); acceleration limits only when the
    robot has them for every joint of ``joints``, jerk limits likewise.

    Raises:
        ValueError: A joint that is not a one-coordinate joint of the model, or a site that is
            not a frame of it.
    """
    model = robot.model
    for name in joints:
        if not model.existJointName(name) or model.joints[model.getJointId(name)].nv != 1:
            raise InputError(f"joint {name!r} is not a one-coordinate joint of the robot model")
    if not model.existFrame(site):
        raise InputError(f"site {site!r} is not a frame of the robot model")
    velocity = {
        n: robot.velocity_limits.get(
            n, float(model.velocityLimit[model.joints[model.getJointId(n)].idx_v])
        )
        for n in joints
    }
    acceleration = _all_or_none(robot.acceleration_limits, joints)
    jerk = _all_or_none(robot.jerk_limits, joints) if acceleration else {}
    return dataclasses.replace(
        robot,
        controlled_joint_names=list(joints),
        tool_frame=site,
        gripper_joint_names=[],
        velocity_limits=velocity,
        acceleration_limits=acceleration,
        jerk_limits=jerk,
    )


def _all_or_none(limits: dict[str, float], joints: Sequence[str]) -> dict[str, float]:
    """``limits`` of ``joints`` when it has one for every joint, else none."""
    if all(n in limits for n in joints):
        return {n: limits[n] for n in joints}
    return {}


def target_site(sim: MujocoSimulation, robot: PinkRobot | None, site: str | None) -> str:
    """The site a target follows: the one named, else the robot's tool frame, else the
    simulation's first site.

    Raises:
        ValueError: A site the simulation does not have (or none at all).
    """
    if site is None:
        site = robot.tool_frame if robot is not None and robot.tool_frame else None
        site = site or (sim.site_names[0] if sim.site_names else None)
    if not isinstance(site, str) or site not in sim.site_names:
        raise InputError(f"site {site!r} is not a site of the simulation: {sim.site_names}")
    return site
