"""Per-joint settings of a robot: which joints move, their limits, and their MuJoCo servos.

Each setting comes from the caller's keywords, else the configuration, else the model: the
controlled joints from an SRDF planning group, the chain to the tool frame
(:func:`~pinkctl.core.robot.inference.chain_to_frame`) or the kinematic tree
(:func:`~pinkctl.core.robot.inference.infer_chain`), velocity limits from the description,
servo gains from each joint's inertia (:func:`~pinkctl.core.robot.inference.servo_gains`).
What is inferred is recorded in the ``inferred`` dict the loader passes along, and a missing
limit adds a note and a :class:`~pinkctl.errors.PinkctlWarning`.
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from ...errors import ConfigurationError, PinkctlWarning
from ..joint_info import scalar_joint_names
from .config import RobotConfig
from .frames import resolve_frame
from .inference import (
    DEFAULT_VELOCITY,
    SERVO_FREQUENCY,
    chain_to_frame,
    independent_joints,
    infer_chain,
    servo_gains,
)
from .srdf import srdf_group_joints

__all__ = [
    "checked_joints",
    "controlled_joints",
    "per_joint",
    "servo_settings",
    "velocity_limits",
]

#: A configured value: one number for every joint, or a table by joint name.
PerJoint = float | Mapping[str, float]


def checked_joints(model: pin.Model, names: Sequence[str], what: str) -> list[str]:
    """``names`` checked: independent joints of the model (close names suggested).

    Raises:
        ValueError: An unknown or dependent joint, or a duplicate.
    """
    if isinstance(names, str):
        raise ConfigurationError(f"{what} must be a list of joint names, got {names!r}")
    available = [model.names[j] for j in independent_joints(model)]
    out = list(names)
    unknown = [n for n in out if n not in available]
    if unknown:
        hints = {n: difflib.get_close_matches(n, available, n=3) for n in unknown}
        raise ConfigurationError(
            f"{what}: {unknown} are not movable joints of the model (close names: {hints}); "
            f"joints: {available}"
        )
    if len(set(out)) != len(out):
        raise ConfigurationError(f"{what} has duplicates: {out}")
    return out


def per_joint(
    value: PerJoint | None, joints: list[str], what: str, source: str
) -> dict[str, float] | None:
    """A configured value spread over ``joints`` (None stays None).

    Raises:
        ValueError: A table that lacks one of ``joints`` or names another joint.
    """
    if value is None:
        return None
    if isinstance(value, Mapping):
        missing = [j for j in joints if j not in value]
        if missing:
            raise ConfigurationError(f"{source}: {what} lacks joints {missing}")
        extra = sorted(set(value) - set(joints))
        if extra:
            raise ConfigurationError(
                f"{source}: {what} names joints {extra} that it does not apply to"
            )
        return {j: float(value[j]) for j in joints}
    return {j: float(value) for j in joints}


def controlled_joints(
    model: pin.Model,
    cfg: RobotConfig | None,
    srdf: Path | None,
    names: Sequence[str] | None,
    inferred: dict[str, str],
    tool_frame: tuple[str, str] | None = None,
) -> tuple[list[str], list[str] | None]:
    """Controlled joints and, when inferred from the model, the gripper joints found there.

    ``names`` (the caller's) win over the configuration's ``controlled_joints``, then its
    ``planning_group`` (an SRDF group), then the chain from the root to ``tool_frame`` (the
    frame's name and the setting that gave it), then the serial chain of the tree.

    Raises:
        ValueError: An unknown joint, or a setting that gives no joint to control (the
            message names the setting).
    """
    if names is not None:
        joints = checked_joints(model, names, "controlled_joint_names")
        return _not_empty(joints, "controlled_joint_names"), None
    if cfg is not None and cfg.controlled_joints is not None:
        setting = f"{cfg.source}: controlled_joints"
        return _not_empty(checked_joints(model, cfg.controlled_joints, setting), setting), None
    if cfg is not None and cfg.planning_group is not None:
        return _group_joints(model, cfg.planning_group, cfg.source, srdf, inferred), None
    return _inferred_chain(model, tool_frame, inferred)


def _group_joints(
    model: pin.Model, group: str, source: str, srdf: Path | None, inferred: dict[str, str]
) -> list[str]:
    """The movable joints of the SRDF planning group ``group``."""
    setting = f"{source}: planning_group {group!r}"
    if srdf is None:
        raise ConfigurationError(f"{setting} needs an srdf")
    movable = {model.names[j] for j in independent_joints(model)}
    joints = [j for j in srdf_group_joints(model, srdf, group) if j in movable]
    inferred["controlled joints"] = f"SRDF planning group {group!r}"
    return _not_empty(joints, f"{setting} (in {srdf})")


def _inferred_chain(
    model: pin.Model, tool_frame: tuple[str, str] | None, inferred: dict[str, str]
) -> tuple[list[str], list[str] | None]:
    """The chain to ``tool_frame`` (its name and the setting that gave it), else the tree's
    serial chain, and the gripper joints found after it."""
    if tool_frame is not None:
        frame, setting = tool_frame
        chain, gripper = chain_to_frame(model, resolve_frame(model, frame, what=setting), setting)
        inferred["controlled joints"] = f"the chain from the root to the tool frame {frame!r}"
    else:
        chain, gripper = infer_chain(model)
        inferred["controlled joints"] = "the serial chain from the root to the only tip"
    if gripper:
        inferred["gripper joints"] = "trailing joints named like a gripper"
    return chain, gripper


def _not_empty(joints: list[str], setting: str) -> list[str]:
    if not joints:
        raise ConfigurationError(
            f"{setting} gives no movable joint to control; name the joints (controlled_joints) "
            "or a tool frame on the arm (tool_frame)"
        )
    return joints


def velocity_limits(
    model: pin.Model, joints: list[str], configured: PerJoint | None, source: str, notes: list[str]
) -> dict[str, float]:
    """Velocity limit of each joint [rad/s] or [m/s]: configured, else the description's.

    A joint whose description has none (0, infinite or missing) gets
    :data:`~pinkctl.core.robot.inference.DEFAULT_VELOCITY` (a quarter of it for a prismatic
    joint), with a note and a warning.
    """
    velocity = per_joint(configured, joints, "limits.velocity", source)
    if velocity is not None:
        return velocity
    velocity = {}
    missing = []
    for joint_name in joints:
        joint = model.joints[model.getJointId(joint_name)]
        value = float(model.velocityLimit[joint.idx_v])
        if not (math.isfinite(value) and 0.0 < value < 1e10):
            prismatic = joint.shortname().startswith("JointModelP")
            value = DEFAULT_VELOCITY * (0.25 if prismatic else 1.0)
            missing.append(joint_name)
        velocity[joint_name] = value
    if missing:
        note = (
            f"joints {missing} have no velocity limit in the description: "
            f"{DEFAULT_VELOCITY} rad/s (0.25 m/s) assumed; set [limits] velocity"
        )
        notes.append(note)
        warnings.warn(note, PinkctlWarning, stacklevel=3)
    return velocity


def servo_settings(
    model: pin.Model,
    q0: np.ndarray,
    actuated: list[str],
    configured: Mapping[str, PerJoint],
    source: str,
    inferred: dict[str, str],
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """MuJoCo servo ``(armature, kp, kv)`` by joint name.

    ``configured`` (the ``[mujoco]`` table) sets them for the actuated joints; every other
    scalar joint also gets a servo (holding it at home in MuJoCo), and every joint without
    configured gains gets gains inferred at ``q0``, with armature added where a joint is too
    light for its servo.
    """
    armature = per_joint(configured.get("armature"), actuated, "mujoco.armature", source) or {}
    kp = per_joint(configured.get("kp"), actuated, "mujoco.kp", source) or {}
    kv = per_joint(configured.get("kv"), actuated, "mujoco.kv", source) or {}
    # every joint with one velocity coordinate gets a servo (revolute, prismatic, continuous)
    missing = [j for j in scalar_joint_names(model) if j not in kp or j not in kv]
    if missing:
        _infer_gains(model, q0, missing, (armature, kp, kv), inferred)
    return armature, kp, kv


def _infer_gains(
    model: pin.Model,
    q0: np.ndarray,
    missing: list[str],
    settings: tuple[dict[str, float], dict[str, float], dict[str, float]],
    inferred: dict[str, str],
) -> None:
    """Gains of the ``missing`` joints (``kp`` and ``kv`` not configured) into ``settings``
    (armature, kp, kv), keeping configured values; armature added where needed."""
    armature, kp, kv = settings
    inferred_kp, inferred_kv, added = servo_gains(model, q0, missing, armature)
    for joint_name in missing:
        kp.setdefault(joint_name, inferred_kp[joint_name])
        kv.setdefault(joint_name, inferred_kv[joint_name])
    armature.update(added)
    inferred["servo gains"] = (
        f"{SERVO_FREQUENCY / (2 * math.pi):g} Hz on each joint's inertia at home "
        f"({len(missing)} joints" + (f", armature added on {sorted(added)})" if added else ")")
    )
