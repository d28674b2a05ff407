"""What a configuration does not say, inferred from the model (and said, never silent).

- **Controlled joints**: the serial chain of independent joints (mimic followers and the
  floating base excluded) from the root to the only tip of the kinematic tree. Trailing
  joints whose name says gripper (``finger``, ``gripper``, ``jaw``, ``thumb``) are the
  gripper, not the chain. A tree with several tips (a humanoid, a mobile manipulator, a
  multi-finger hand) is a ``ValueError`` listing them: name the tool frame (the chain is then
  the joints from the root to that frame, :func:`chain_to_frame`), the controlled joints or an
  SRDF group.
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
  at up to 113 rad/s). A floating-base robot stands on its lowest links (its feet): the joints
  between its root and its feet move the rest of the robot about them, so their servos also
  get :data:`STANCE_FREQUENCY` on that inertia (:func:`support_inertia`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pinocchio as pin

from ...errors import ConfigurationError
from .srdf import srdf_group_states

__all__ = [
    "DEFAULT_VELOCITY",
    "SERVO_FREQUENCY",
    "chain_to_frame",
    "infer_chain",
    "infer_home",
    "infer_tool_frame",
    "independent_joints",
    "servo_gains",
    "srdf_group_states",
]

#: Velocity limit of a joint whose description has none [rad/s] (prismatic: [m/s] / 4).
DEFAULT_VELOCITY = 1.0
#: Natural frequency of the inferred MuJoCo servos [rad/s] (10 Hz).
SERVO_FREQUENCY = 2.0 * np.pi * 10.0
#: Smallest effective joint inertia used for the servo gains [kg m^2] or [kg].
MIN_SERVO_INERTIA = 1e-4
#: Bandwidth [rad/s] of a standing robot's leg servos on the inertia they carry
#: (:func:`support_inertia`): 5 Hz. Without it the ankles (2-11 N m/rad, sized on the foot
#: alone) let g1 tip over; at 10 Hz the legs' internal forces made its feet creep (7/10
#: targets of its reach pass, TALOS 6/10), at 3 Hz TALOS sagged (4/10); at 5 Hz 8/10 and 6/10.
STANCE_FREQUENCY = 2.0 * np.pi * 5.0
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


def _chain_to(model: pin.Model, joint: int, movable: set[int]) -> list[int]:
    """The movable joints from the root down to ``joint`` (included), root first."""
    chain = []
    while joint != 0:
        chain.append(joint)
        joint = _movable_parent(model, joint, movable)
    return chain[::-1]


def _link_of(model: pin.Model, joint: int) -> str:
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint == joint:
            return str(frame.name)
    return str(model.names[joint])


def _is_gripper(model: pin.Model, joint: int) -> bool:
    return bool(_GRIPPER_NAME.search(model.names[joint]))


def _movable_tree(model: pin.Model) -> tuple[set[int], dict[int, list[int]]]:
    """The independent joints and, for each of them (and the root, 0), its movable children."""
    movable = set(independent_joints(model))
    if not movable:
        raise ConfigurationError("the model has no movable joint to control")
    children: dict[int, list[int]] = {j: [] for j in movable}
    children[0] = []
    for j in sorted(movable):
        children[_movable_parent(model, j, movable)].append(j)
    return movable, children


def _subtree(children: dict[int, list[int]], j: int) -> list[int]:
    out = [j]
    for c in children[j]:
        out += _subtree(children, c)
    return out


def _gripper_joints(
    model: pin.Model, movable: set[int], children: dict[int, list[int]], below: int | None = None
) -> list[int]:
    """Joints of the subtrees whose every joint is named like a gripper, hanging from a joint
    that is not (only those below the joint ``below`` when given). A subtree hanging from the
    root is the robot itself, never a gripper (a finger robot: its joints are the chain)."""
    out: list[int] = []
    for j in sorted(movable):
        parent = _movable_parent(model, j, movable)
        if (below is not None and parent != below) or parent == 0:
            continue
        nodes = _subtree(children, j)
        if all(_is_gripper(model, n) for n in nodes) and not _is_gripper(model, parent):
            out += nodes
    return out


def _scalar_names(model: pin.Model, joints: list[int]) -> list[str]:
    """Names of the single-coordinate joints among ``joints``, in model order."""
    return sorted((model.names[j] for j in joints if model.joints[j].nv == 1), key=model.getJointId)


def infer_chain(model: pin.Model) -> tuple[list[str], list[str]]:
    """The serial chain's joints (root to tip) and the gripper joints after it.

    Raises:
        ValueError: If the tree has several tips (listed with their links).
    """
    movable, children = _movable_tree(model)
    # gripper joints: subtrees hanging at the end whose every joint is named like a gripper
    gripper = _gripper_joints(model, movable, children)
    arm = movable - set(gripper)
    tips = [j for j in sorted(arm) if not any(c in arm for c in children[j])]
    if len(tips) != 1:
        listed = ", ".join(f"{model.names[j]} ({_link_of(model, j)})" for j in tips)
        raise ConfigurationError(
            f"cannot infer the controlled joints: the kinematic tree has {len(tips)} tips "
            f"({listed}); name the tool frame (tool_frame=: the chain from the root to it), "
            "the joints (controlled_joint_names=) or a configuration "
            "(tool_frame / controlled_joints / planning_group)"
        )
    chain = _chain_to(model, tips[0], movable)
    off_chain = sorted(arm - set(chain))
    if off_chain:
        names = [model.names[j] for j in off_chain]
        raise ConfigurationError(
            f"cannot infer the controlled joints: joints {names} branch off the chain to "
            f"{_link_of(model, tips[0])}; name them with controlled_joint_names="
        )
    return [model.names[j] for j in chain], _scalar_names(model, gripper)


def chain_to_frame(model: pin.Model, frame_id: int, setting: str) -> tuple[list[str], list[str]]:
    """The joints that move the frame ``frame_id``, root first, and the gripper joints after
    them.

    The chain holds every independent joint between the root and the frame (mimic followers
    and a floating root excluded), whatever branches the tree has elsewhere: the tool frame of
    one arm of a two-armed robot names that arm. The gripper joints are the subtrees hanging
    from the chain's last joint whose every joint is named like a gripper.

    Raises:
        ValueError: If no joint moves the frame (it sits on the root): ``setting`` names
            where the frame came from.
    """
    movable, children = _movable_tree(model)
    frame = model.frames[frame_id].name
    joint = model.frames[frame_id].parentJoint
    if joint not in movable:
        joint = _movable_parent(model, joint, movable)
    chain = _chain_to(model, joint, movable)
    if not chain:
        raise ConfigurationError(
            f"{setting} {frame!r} sits on the robot's root: no joint moves it, so it defines "
            "no chain to control; name a frame on the arm, or the controlled joints"
        )
    gripper = _gripper_joints(model, movable, children, below=chain[-1])
    return [model.names[j] for j in chain], _scalar_names(model, gripper)


def infer_tool_frame(model: pin.Model, last_joint: str) -> str:
    """The tip frame rigidly attached to ``last_joint`` (see the module docstring).

    Raises:
        ValueError: If several frames qualify equally (listed).
    """
    joint = model.getJointId(last_joint)
    leaves = _leaf_frames(model, joint)
    if not leaves:
        return str(model.names[joint])
    pool = next(
        (named for named in (_named_like(model, leaves, p) for p in _TOOL_NAMES) if named),
        leaves,
    )
    depth = {i: len(_frames_above(model, i, joint)) for i in pool}
    best = [i for i in pool if depth[i] == max(depth.values())]
    if len(best) > 1:
        names = [model.frames[i].name for i in best]
        raise ConfigurationError(
            f"cannot infer the tool frame: frames {names} end the chain at {last_joint!r}; "
            "name one with tool_frame="
        )
    return str(model.frames[best[0]].name)


def _leaf_frames(model: pin.Model, joint: int) -> list[int]:
    """The body and operational frames on ``joint`` with no such frame below them."""
    kinds = (pin.FrameType.BODY, pin.FrameType.OP_FRAME)
    candidates = [
        i for i, f in enumerate(model.frames) if f.parentJoint == joint and f.type in kinds
    ]
    inner = set().union(*(_frames_above(model, i, joint) for i in candidates))
    return [i for i in candidates if i not in inner]


def _frames_above(model: pin.Model, frame: int, joint: int) -> set[int]:
    """The frames between ``frame`` and its joint ``joint`` (its depth below the joint)."""
    out = set()
    while frame != 0 and model.frames[frame].parentJoint == joint:
        frame = model.frames[frame].parentFrame
        out.add(frame)
    return out


def _named_like(model: pin.Model, frames: list[int], pattern: re.Pattern[str]) -> list[int]:
    return [i for i in frames if pattern.search(model.frames[i].name)]


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
        found = _srdf_home(model, srdf)
        if found is not None:
            return found
    return _middle_of_ranges(model), "the middle of each joint's range"


def _srdf_home(model: pin.Model, srdf: Path) -> tuple[dict[str, float], str] | None:
    """The first SRDF state (``home`` first) that gives a joint of the model and keeps every
    joint in its range, with where it came from; None when no state does."""
    ordered = sorted(srdf_group_states(srdf), key=lambda s: s[0] != "home")
    for name, values in ordered:
        known = {k: v for k, v in values.items() if model.existJointName(k)}
        if known and _inside(model, known):
            return known, f"SRDF group_state {name!r}"
    return None


def _middle_of_ranges(model: pin.Model) -> dict[str, float]:
    """The middle of each one-coordinate joint's range (0 for an unbounded joint)."""
    middle: dict[str, float] = {}
    for j in independent_joints(model):
        joint = model.joints[j]
        if joint.nq != 1:
            continue
        lo = float(model.lowerPositionLimit[joint.idx_q])
        hi = float(model.upperPositionLimit[joint.idx_q])
        finite = np.isfinite(lo) and np.isfinite(hi) and max(abs(lo), abs(hi)) < 1e10
        middle[model.names[j]] = 0.5 * (lo + hi) if finite else 0.0
    return middle


def servo_gains(
    model: pin.Model, q: np.ndarray, joints: list[str], armature: dict[str, float]
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Servo ``kp``, ``kv`` and armature per joint (see the module docstring).

    With ``m`` the joint's inertia at ``q`` plus its configured armature and ``d`` the
    description's joint damping: ``kp = max(m w^2, d w)`` (a heavily damped joint needs a
    stiffer servo to keep the bandwidth ``w``); the armature is raised until the servo's own
    frequency ``sqrt(kp / m)`` stays below :data:`MAX_SERVO_FREQUENCY` (explicit stiffness at
    a 2 ms step); ``kv = 2 sqrt(kp m)`` (critical damping, on top of ``d``). A standing
    robot's leg joint: ``kp`` at least :data:`STANCE_FREQUENCY` on the inertia it carries,
    ``kv`` critical on the larger of the two inertias.
    """
    data = model.createData()
    inertia = pin.crba(model, data, q)
    support = support_inertia(model, q)
    w = SERVO_FREQUENCY
    kp: dict[str, float] = {}
    kv: dict[str, float] = {}
    added: dict[str, float] = {}
    for name in joints:
        v = model.joints[model.getJointId(name)].idx_v
        configured = armature.get(name, 0.0)
        m = max(float(inertia[v, v]) + configured, MIN_SERVO_INERTIA)
        d = float(model.damping[v]) if model.damping.size > v else 0.0
        carried = support.get(name, 0.0) * STANCE_FREQUENCY**2  # standing: the robot above
        gain = max(m * w * w, carried, d * w)
        needed = gain / MAX_SERVO_FREQUENCY**2
        if needed > m:
            added[name] = configured + needed - m
            m = needed
        kp[name] = gain
        kv[name] = 2.0 * math.sqrt(gain * max(m, support.get(name, 0.0)))
    return kp, kv, added


#: Links whose origin is this close to the lowest one at home [m] are a standing robot's feet.
FOOT_HEIGHT = 0.1


def _leg_joints(model: pin.Model, data: pin.Data) -> list[int]:
    """Ids of the joints between a floating-base robot's root and its feet (the joints whose
    origin in ``data`` is within :data:`FOOT_HEIGHT` of the lowest), sorted."""
    heights = np.array([data.oMi[j].translation[2] for j in range(2, model.njoints)])
    feet = [int(j) + 2 for j in np.flatnonzero(heights <= heights.min() + FOOT_HEIGHT)]
    return sorted({int(k) for foot in feet for k in model.supports[foot] if k > 1})


def support_inertia(model: pin.Model, q: np.ndarray) -> dict[str, float]:
    """Inertia [kg m^2] of the rest of a standing floating-base robot about each joint between
    its root and its feet (the joints whose origin is within :data:`FOOT_HEIGHT` of the
    lowest): the whole robot's inertia about the joint's axis minus the part the joint
    carries toward the feet. Empty without a free-flyer root."""
    if model.njoints < 2 or model.joints[1].shortname() != "JointModelFreeFlyer":
        return {}
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    total = pin.Inertia.Zero()  # the whole robot, world frame
    for j in range(1, model.njoints):
        total += data.oMi[j].act(model.inertias[j])
    inertia = pin.crba(model, model.createData(), q)
    result: dict[str, float] = {}
    for j in _leg_joints(model, data):
        joint = model.joints[j]
        if joint.nv != 1:
            continue
        axis = pin.getJointJacobian(model, data, j, pin.LOCAL)[:, joint.idx_v]
        about = float(axis @ data.oMi[j].actInv(total).matrix() @ axis)
        result[model.names[j]] = about - float(inertia[joint.idx_v, joint.idx_v])
    return result
