"""What a configuration does not say, inferred from the model (and said, never silent).

- **Controlled joints**: the serial chain of independent joints (mimic followers and the
  floating base excluded) from the root to the only tip of the kinematic tree. Trailing
  joints whose name says gripper (``finger``, ``gripper``, ``jaw``, ``thumb``) are the
  gripper, not the chain. A tree with several tips (a humanoid, a mobile manipulator, a multi-finger
  hand) is a ``ValueError`` listing them: name the controlled joints or an SRDF group.
- **Tool frame**: the tip of that chain: among the frames rigidly attached to its last joint
  (gripper fingers excluded), the leaf; when there are several, the one named like a tool
  (in this order: ``tcp``, ``tool``, ``end_effector``/``eef``, ``grasp``, ``ee``,
  ``flange``), else the deepest; a tie is a ``ValueError`` listing the candidates.
- **Home**: an SRDF ``group_state``: ``home`` first, else the first whose values are inside
  the joint ranges; else the middle of each range (0 for unlimited joints).
- **Velocity limits**: the description's; a joint without one (0 or missing) gets
  :data:`DEFAULT_VELOCITY` with a warning.
- **Servo gains** (MuJoCo): from each joint's inertia at home ``m`` (the diagonal of the
  joint-space inertia matrix, Pinocchio's CRBA) so that every joint's servo has the same
  bandwidth ``w`` = :data:`SERVO_FREQUENCY` (see :func:`servo_gains`). Light wrists get soft
  servos and heavy shoulders stiff ones, and armature where a joint is too light for its
  servo: stable at a 2 ms step on any arm (a fixed ``kp = 1000`` made light wrists oscillate
  at up to 113 rad/s).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin

from ...errors import ConfigurationError
from .srdf import srdf_group_states

__all__ = [
    "DEFAULT_VELOCITY",
    "SERVO_FREQUENCY",
    "infer_chain",
    "infer_home",
    "infer_tool_frame",
    "independent_joints",
    "servo_gains",
    "srdf_group_joints",
    "srdf_group_states",
]

#: Velocity limit of a joint whose description has none [rad/s] (prismatic: [m/s] / 4).
DEFAULT_VELOCITY = 1.0
#: Natural frequency of the inferred MuJoCo servos [rad/s] (10 Hz).
SERVO_FREQUENCY = 2.0 * np.pi * 10.0
#: Smallest effective joint inertia used for the servo gains [kg m^2] or [kg].
MIN_SERVO_INERTIA = 1e-4
#: Highest natural frequency of a servo on its joint's inertia (armature added above it)
#: [rad/s]: 250 rad/s is 0.5 rad per 2 ms step, well inside the explicit stiffness's limit.
MAX_SERVO_FREQUENCY = 250.0

_GRIPPER_NAME = re.compile(r"finger|gripper|jaw|thumb", re.IGNORECASE)
#: Names of tool frames, most telling first.
_TOOL_NAMES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (r"tcp", r"tool", r"end_?effector|eef", r"grasp", r"(^|_)ee(_|$)", r"flange")
)
_ROOT_JOINTS = ("JointModelFreeFlyer", "JointModelPlanar")


def independent_joints(model: pin.Model) -> list[int]:
    """Ids of joints with a velocity of their own (not mimic, not a floating root)."""
    out = []
    for j in range(1, model.njoints):
        joint = model.joints[j]
        if joint.nv == 0 or joint.shortname() in _ROOT_JOINTS and model.parents[j] == 0:
            continue
        out.append(j)
    return out


def _movable_parent(model: pin.Model, joint: int, movable: set[int]) -> int:
    parent = model.parents[joint]
    while parent != 0 and parent not in movable:
        parent = model.parents[parent]
    return parent


def _link_of(model: pin.Model, joint: int) -> str:
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint == joint:
            return str(frame.name)
    return str(model.names[joint])


def _is_gripper(model: pin.Model, joint: int) -> bool:
    return bool(_GRIPPER_NAME.search(model.names[joint]))


def infer_chain(model: pin.Model) -> tuple[list[str], list[str]]:
    """The serial chain's joints (root to tip) and the gripper joints after it.

    Raises:
        ValueError: If the tree has several tips (listed with their links).
    """
    movable = set(independent_joints(model))
    if not movable:
        raise ConfigurationError("the model has no movable joint to control")
    children: dict[int, list[int]] = {j: [] for j in movable}
    children[0] = []
    for j in sorted(movable):
        children[_movable_parent(model, j, movable)].append(j)
    # gripper joints: subtrees hanging at the end whose every joint is named like a gripper
    gripper: list[int] = []

    def subtree(j: int) -> list[int]:
        out = [j]
        for c in children[j]:
            out += subtree(c)
        return out

    for j in sorted(movable):
        nodes = subtree(j)
        if all(_is_gripper(model, n) for n in nodes) and not _is_gripper(
            model, _movable_parent(model, j, movable)
        ):
            gripper += nodes
    arm = movable - set(gripper)
    tips = [j for j in sorted(arm) if not any(c in arm for c in children[j])]
    if len(tips) != 1:
        listed = ", ".join(f"{model.names[j]} ({_link_of(model, j)})" for j in tips)
        raise ConfigurationError(
            f"cannot infer the controlled joints: the kinematic tree has {len(tips)} tips "
            f"({listed}); name them with controlled_joint_names= or a configuration "
            "(controlled_joints / planning_group)"
        )
    chain = []
    j = tips[0]
    while j != 0:
        chain.append(j)
        j = _movable_parent(model, j, movable)
    chain.reverse()
    off_chain = sorted(arm - set(chain))
    if off_chain:
        names = [model.names[j] for j in off_chain]
        raise ConfigurationError(
            f"cannot infer the controlled joints: joints {names} branch off the chain to "
            f"{_link_of(model, tips[0])}; name them with controlled_joint_names="
        )
    gripper_names = sorted(
        (model.names[j] for j in gripper if model.joints[j].nv == 1), key=model.getJointId
    )
    return [model.names[j] for j in chain], gripper_names


def infer_tool_frame(model: pin.Model, last_joint: str) -> str:
    """The tip frame rigidly attached to ``last_joint`` (see the module docstring).

    Raises:
        ValueError: If several frames qualify equally (listed).
    """
    joint = model.getJointId(last_joint)
    kinds = (pin.FrameType.BODY, pin.FrameType.OP_FRAME)
    candidates = [
        i for i, f in enumerate(model.frames) if f.parentJoint == joint and f.type in kinds
    ]
    if not candidates:
        return str(model.names[joint])

    def depth(i: int) -> int:
        d = 0
        while model.frames[i].parentJoint == joint and i != 0:
            i = model.frames[i].parentFrame
            d += 1
        return d

    def ancestors(i: int) -> set[int]:
        out = set()
        while i != 0 and model.frames[i].parentJoint == joint:
            i = model.frames[i].parentFrame
            out.add(i)
        return out

    inner = set().union(*(ancestors(i) for i in candidates))
    leaves = [i for i in candidates if i not in inner]
    pool = leaves
    for pattern in _TOOL_NAMES:
        named = [i for i in leaves if pattern.search(model.frames[i].name)]
        if named:
            pool = named
            break
    deepest = max(depth(i) for i in pool)
    best = [i for i in pool if depth(i) == deepest]
    if len(best) > 1:
        names = [model.frames[i].name for i in best]
        raise ConfigurationError(
            f"cannot infer the tool frame: frames {names} end the chain at {last_joint!r}; "
            "name one with tool_frame="
        )
    return str(model.frames[best[0]].name)


def srdf_group_joints(model: pin.Model, srdf: Path, group: str) -> list[str]:
    """The independent joints of an SRDF group (``<joint>`` entries or a ``<chain>``).

    Raises:
        ValueError: If the group does not exist (the groups are listed).
    """
    root = ET.parse(srdf).getroot()
    groups = {g.get("name", ""): g for g in root.iter("group")}
    if group not in groups:
        raise ConfigurationError(f"{srdf}: no planning group {group!r}; groups: {sorted(groups)}")
    element = groups[group]
    names = [j.get("name", "") for j in element.findall("joint")]
    for chain in element.findall("chain"):
        base, tip = chain.get("base_link", ""), chain.get("tip_link", "")
        if not (model.existFrame(base) and model.existFrame(tip)):
            raise ConfigurationError(f"{srdf}: chain {base!r} -> {tip!r} names unknown links")
        j = model.frames[model.getFrameId(tip)].parentJoint
        stop = model.frames[model.getFrameId(base)].parentJoint
        path = []
        while j not in (0, stop):
            path.append(model.names[j])
            j = model.parents[j]
        names += list(reversed(path))
    for sub in element.findall("group"):
        names += srdf_group_joints(model, srdf, sub.get("name", ""))
    movable = {model.names[j] for j in independent_joints(model)}
    return [n for n in dict.fromkeys(names) if n in movable]


def _inside(model: pin.Model, values: dict[str, float]) -> bool:
    for name, value in values.items():
        if not model.existJointName(name):
            continue
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 1:
            lo = model.lowerPositionLimit[joint.idx_q]
            hi = model.upperPositionLimit[joint.idx_q]
            if not lo - 1e-9 <= value <= hi + 1e-9:
                return False
    return True


def infer_home(model: pin.Model, srdf: Path | None) -> tuple[dict[str, float], str]:
    """Home joint values and where they came from (see the module docstring)."""
    if srdf is not None:
        states = srdf_group_states(srdf)
        ordered = sorted(states, key=lambda s: s[0] != "home")
        for name, values in ordered:
            known = {k: v for k, v in values.items() if model.existJointName(k)}
            if known and _inside(model, known):
                return known, f"SRDF group_state {name!r}"
    middle: dict[str, float] = {}
    for j in independent_joints(model):
        joint = model.joints[j]
        if joint.nq != 1:
            continue
        lo = float(model.lowerPositionLimit[joint.idx_q])
        hi = float(model.upperPositionLimit[joint.idx_q])
        finite = np.isfinite(lo) and np.isfinite(hi) and max(abs(lo), abs(hi)) < 1e10
        middle[model.names[j]] = 0.5 * (lo + hi) if finite else 0.0
    return middle, "the middle of each joint's range"


def servo_gains(
    model: pin.Model, q: np.ndarray, joints: list[str], armature: dict[str, float]
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Servo ``kp``, ``kv`` and armature per joint (see the module docstring).

    With ``m`` the joint's inertia at ``q`` plus its configured armature and ``d`` the
    description's joint damping: ``kp = max(m w^2, d w)`` (a heavily damped joint needs a
    stiffer servo to keep the bandwidth ``w``); the armature is raised until the servo's own
    frequency ``sqrt(kp / m)`` stays below :data:`MAX_SERVO_FREQUENCY` (explicit stiffness at
    a 2 ms step); ``kv = 2 sqrt(kp m)`` (critical damping, on top of ``d``).
    """
    data = model.createData()
    inertia = pin.crba(model, data, q)
    w = SERVO_FREQUENCY
    kp: dict[str, float] = {}
    kv: dict[str, float] = {}
    added: dict[str, float] = {}
    for name in joints:
        v = model.joints[model.getJointId(name)].idx_v
        configured = armature.get(name, 0.0)
        m = max(float(inertia[v, v]) + configured, MIN_SERVO_INERTIA)
        d = float(model.damping[v]) if model.damping.size > v else 0.0
        gain = max(m * w * w, d * w)
        needed = gain / MAX_SERVO_FREQUENCY**2
        if needed > m:
            added[name] = configured + needed - m
            m = needed
        kp[name] = gain
        kv[name] = 2.0 * math.sqrt(gain * m)
    return kp, kv, added
