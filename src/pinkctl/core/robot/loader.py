"""Loading a robot: description + SRDF + configuration -> :class:`PinkRobot`.

:func:`load_pink_robot` takes any URDF or MJCF file (or a ``robot.toml`` naming one), an
optional configuration (a file or a dict, see :mod:`pinkctl.robot.config`) and keyword
overrides; what none of them gives is inferred (:mod:`pinkctl.robot.inference`) and recorded
in ``robot.inferred``. :func:`load_pink_supported_robot` loads a robot of the catalog
(``robot_configurations/<name>/robot.toml``): the hand-written robots and configurations over
the ``example-robot-data`` descriptions.
"""

from __future__ import annotations

import difflib
import math
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from ...errors import ConfigurationError, DescriptionNotFoundError, PinkctlWarning
from .config import RobotConfig, read_config
from .description import read_description
from .frames import disambiguate_frames, resolve_frame
from .inference import (
    DEFAULT_VELOCITY,
    SERVO_FREQUENCY,
    independent_joints,
    infer_chain,
    infer_home,
    infer_tool_frame,
    servo_gains,
    srdf_group_joints,
)
from .model import PinkRobot

__all__ = [
    "load_pink_robot",
    "load_pink_supported_robot",
    "robot_configurations_dir",
    "srdf_state",
    "supported_robots",
]


def robot_configurations_dir() -> Path:
    """Folder holding the catalog's robot configurations.

    In a wheel the folder ships inside the package (``pinkctl/robot_configurations``); in a
    source checkout (editable install) it sits at the repository top level.
    """
    package = Path(__file__).resolve().parents[2]  # .../pinkctl
    packaged = package / "robot_configurations"
    if packaged.is_dir():
        return packaged
    return package.parents[1] / "robot_configurations"


def supported_robots() -> list[str]:
    """Names of the catalog's robots, sorted (those over ``example-robot-data`` need the
    ``pinkctl[robots]`` extra to load)."""
    root = robot_configurations_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "robot.toml").is_file())


def srdf_state(srdf_path: Path, state_name: str) -> dict[str, float] | None:
    """Joint values of the SRDF ``group_state`` named ``state_name`` (None if absent).

    Raises:
        ValueError: If the SRDF cannot be parsed, or a joint value is missing or not a finite
            number (the message names the file and the joint).
    """
    try:
        root = ET.parse(srdf_path).getroot()
    except ET.ParseError as exc:
        raise ConfigurationError(f"cannot parse SRDF {srdf_path}: {exc}") from exc
    values: dict[str, float] | None = None
    for state in root.iter("group_state"):
        if state.get("name") != state_name:
            continue
        values = {} if values is None else values
        for joint in state.iter("joint"):
            name = joint.get("name", "")
            text = (joint.get("value") or "").split()
            try:
                value = float(text[0])
            except (IndexError, ValueError):
                value = math.nan
            if not math.isfinite(value):
                raise ConfigurationError(
                    f"{srdf_path}: group_state {state_name!r} gives joint {name!r} the value "
                    f"{joint.get('value')!r}; expected a finite number"
                )
            values[name] = value
    return values


def _apply_positions(model: pin.Model, q: np.ndarray, positions: Mapping[str, float]) -> None:
    """Write named scalar joint positions into ``q`` (continuous joints as cos/sin)."""
    for name, value in positions.items():
        if not model.existJointName(name):
            close = difflib.get_close_matches(name, list(model.names), n=3)
            raise ConfigurationError(
                f"joint {name!r} of the home configuration is not in the model"
                + (f"; close names: {close}" if close else "")
            )
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 1:
            q[joint.idx_q] = value
        elif joint.nq == 2 and joint.nv == 1:
            q[joint.idx_q] = np.cos(value)
            q[joint.idx_q + 1] = np.sin(value)
        elif joint.nq == 0:
            continue  # mimic follower: its value comes from its master
        else:
            raise ConfigurationError(
                f"joint {name!r} has {joint.nq} coordinates; give it by q vector"
            )


def _apply_srdf_state(
    model: pin.Model, q: np.ndarray, srdf: Path, name: str, values: Mapping[str, float]
) -> None:
    """An SRDF state into ``q``: joints the model lacks are skipped (a state of the full robot
    used on a reduced model), a ``root_joint`` entry sets a free-flyer root's pose."""
    scalar = {
        k: v
        for k, v in values.items()
        if model.existJointName(k) and model.joints[model.getJointId(k)].nq in (0, 1, 2)
    }
    _apply_positions(model, q, scalar)
    if model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer":
        for state in ET.parse(srdf).getroot().iter("group_state"):
            if state.get("name") != name:
                continue
            for joint in state.iter("joint"):
                numbers = (joint.get("value") or "").split()
                if joint.get("name") == model.names[1] and len(numbers) == 7:
                    pose = np.array([float(v) for v in numbers])
                    pose[3:] /= np.linalg.norm(pose[3:])
                    q[:7] = pose


def _check_home(model: pin.Model, q: np.ndarray, source: Path | str) -> None:
    """Every single-coordinate joint of ``q`` inside its position range (1e-9 tolerance)."""
    for i in range(1, model.njoints):
        joint = model.joints[i]
        if joint.nq != 1:
            continue
        value = float(q[joint.idx_q])
        lower = float(model.lowerPositionLimit[joint.idx_q])
        upper = float(model.upperPositionLimit[joint.idx_q])
        if not (lower - 1e-9 <= value <= upper + 1e-9):
            raise ConfigurationError(
                f"{source}: home value {value!r} of joint {model.names[i]!r} is outside its "
                f"range [{lower:g}, {upper:g}]"
            )


def _joints(model: pin.Model, names: Sequence[str], what: str) -> list[str]:
    """``names`` checked: independent joints of the model (close names suggested)."""
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


def _per_joint(
    value: float | dict[str, float] | None, joints: list[str], what: str, source: str
) -> dict[str, float] | None:
    if value is None:
        return None
    if isinstance(value, dict):
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


def _controlled(
    model: pin.Model,
    cfg: RobotConfig | None,
    srdf: Path | None,
    names: Sequence[str] | None,
    inferred: dict[str, str],
) -> tuple[list[str], list[str] | None]:
    """Controlled joints and, when inferred from the tree, the gripper joints found there."""
    if names is not None:
        return _joints(model, names, "controlled_joint_names"), None
    if cfg is not None and cfg.controlled_joints is not None:
        return _joints(model, cfg.controlled_joints, f"{cfg.source}: controlled_joints"), None
    if cfg is not None and cfg.planning_group is not None:
        if srdf is None:
            raise ConfigurationError(f"{cfg.source}: planning_group needs an srdf")
        joints = srdf_group_joints(model, srdf, cfg.planning_group)
        inferred["controlled joints"] = f"SRDF planning group {cfg.planning_group!r}"
        return joints, None
    chain, gripper = infer_chain(model)
    inferred["controlled joints"] = "the serial chain from the root to the only tip"
    if gripper:
        inferred["gripper joints"] = "trailing joints named like a gripper"
    return chain, gripper


def _home(
    robot_model: pin.Model,
    q0: np.ndarray,
    requested: Mapping[str, float] | str | None,
    srdf: Path | None,
    source: str,
    inferred: dict[str, str],
) -> None:
    if srdf is not None:
        # every named state must parse (finite values); the one named "home" is the home
        srdf_home = None
        for state in dict.fromkeys(
            s.get("name", "") for s in ET.parse(srdf).getroot().iter("group_state")
        ):
            values = srdf_state(srdf, state)
            if state == "home":
                srdf_home = values
        if srdf_home:
            probe = pin.neutral(robot_model)
            _apply_srdf_state(robot_model, probe, srdf, "home", srdf_home)
            _check_home(robot_model, probe, f"{srdf} (group_state 'home')")
    if isinstance(requested, str):
        if srdf is None:
            raise ConfigurationError(
                f"{source}: home {requested!r} names an SRDF state, but no srdf"
            )
        values = srdf_state(srdf, requested)
        if values is None:
            raise ConfigurationError(f"{source}: the SRDF has no group_state {requested!r}")
        _apply_srdf_state(robot_model, q0, srdf, requested, values)
        _check_home(robot_model, q0, source)
        return
    if requested is not None:
        _apply_positions(robot_model, q0, requested)
        _check_home(robot_model, q0, source)
        return
    values, origin = infer_home(robot_model, srdf)
    _apply_positions(robot_model, q0, values)
    _check_home(robot_model, q0, origin)
    inferred["home"] = origin


def load_pink_robot(
    urdf_path: Path | str | None = None,
    package_dirs: Sequence[str | Path] | None = None,
    srdf_path: Path | str | None = None,
    build_collision_model: bool = False,
    *,
    config: str | Path | Mapping[str, Any] | RobotConfig | None = None,
    controlled_joint_names: Sequence[str] | None = None,
    tool_frame: str | None = None,
    home: Mapping[str, float] | str | None = None,
    gripper_joint_names: Sequence[str] | None = None,
    floating_base: bool | None = None,
    allow_outside_paths: bool = True,
    name: str | None = None,
) -> PinkRobot:
    """Load a robot from a URDF or MJCF file, with an optional configuration.

    Args:
        urdf_path: The description (``.urdf`` or MuJoCo ``.xml``), or a ``robot.toml`` that
            names one; None when ``config`` names it.
        package_dirs: Folders for ``package://`` mesh URIs (see :mod:`pinkctl.robot.meshes`).
        srdf_path: SRDF: disabled collision pairs, planning groups, named states.
        build_collision_model: Build the collision geometry (needed by
            ``SelfCollisionBarrier``; costs nothing per tick otherwise).
        config: A configuration file, dict or :class:`~pinkctl.robot.config.RobotConfig`.
        controlled_joint_names: Joints the IK controls (overrides the configuration).
        tool_frame: The IK controller's end-effector frame (overrides the configuration).
        home: Home joint values, or the name of an SRDF ``group_state``.
        gripper_joint_names: Actuated gripper joints.
        floating_base: A free-flyer root joint (default: the configuration's, else False).
        allow_outside_paths: Let the configuration's paths leave its folder (False for the
            catalog's own configurations).
        name: Robot name (default: the configuration's, else the file name).

    Raises:
        FileNotFoundError: A missing description, SRDF, configuration or mesh file.
        ValueError: A malformed file or value, an unknown joint or frame (close names listed),
            or a tree whose tool frame or chain cannot be inferred (the tips listed).
    """
    cfg: RobotConfig | None = None
    if urdf_path is not None and Path(urdf_path).suffix == ".toml":
        cfg = read_config(Path(urdf_path))
        urdf_path = None
    if config is not None:
        if cfg is not None:
            raise ConfigurationError("give the configuration once: as urdf_path or as config")
        cfg = read_config(config)
    source = cfg.source if cfg is not None else "load_pink_robot"
    if urdf_path is None:
        if cfg is None or (cfg.urdf is None and cfg.mjcf is None):
            raise ConfigurationError(
                "no robot description: pass a URDF/MJCF path or a config naming one"
            )
        description_path = cfg.path(
            "urdf" if cfg.urdf else "mjcf", allow_outside=allow_outside_paths
        )
        assert description_path is not None
    else:
        description_path = Path(urdf_path)
    srdf: Path | None = Path(srdf_path) if srdf_path is not None else None
    if srdf is None and cfg is not None:
        srdf = cfg.path("srdf", allow_outside=allow_outside_paths)
    if srdf is not None and not srdf.is_file():
        raise DescriptionNotFoundError(f"SRDF file not found: {srdf}")
    dirs: list[Path] = [Path(p) for p in package_dirs] if package_dirs is not None else []
    if cfg is not None and cfg.folder is not None:
        dirs += [cfg.folder / p for p in cfg.package_dirs]
    placement = None
    if cfg is not None and (cfg.base_position is not None or cfg.base_rpy is not None):
        placement = pin.SE3(
            pin.rpy.rpyToMatrix(*(cfg.base_rpy or (0.0, 0.0, 0.0))),
            np.array(cfg.base_position or (0.0, 0.0, 0.0)),
        )
    description = read_description(description_path, package_dirs=dirs, base_placement=placement)
    floating = bool(
        cfg.floating_base if floating_base is None and cfg is not None else floating_base
    )
    try:
        model = description.build_model(floating_base=floating)
    except (RuntimeError, ValueError) as exc:
        raise ConfigurationError(f"cannot build a model from {description_path}: {exc}") from exc
    notes = list(description.repairs) + disambiguate_frames(model)
    inferred: dict[str, str] = {}

    controlled, gripper_found = _controlled(model, cfg, srdf, controlled_joint_names, inferred)
    if gripper_joint_names is not None:
        gripper = _joints(model, gripper_joint_names, "gripper_joint_names")
    elif cfg is not None and cfg.gripper_joints is not None:
        gripper = _joints(model, cfg.gripper_joints, f"{source}: gripper_joints")
    else:
        gripper = gripper_found or []
    frame = tool_frame if tool_frame is not None else (cfg.tool_frame if cfg else None)
    if frame is None:
        frame = infer_tool_frame(model, controlled[-1])
        inferred["tool frame"] = f"the tip of the chain after {controlled[-1]!r}"
    resolve_frame(model, frame, what="tool_frame")
    extra_frames = list(cfg.tool_frames) if cfg is not None else []
    for extra in extra_frames:
        resolve_frame(model, extra, what="tool_frames")

    q0 = pin.neutral(model)
    requested = home if home is not None else (cfg.home if cfg is not None else None)
    _home(model, q0, requested, srdf, source, inferred)

    limits = cfg.limits if cfg is not None else {}
    velocity = _per_joint(limits.get("velocity"), controlled, "limits.velocity", source)
    if velocity is None:
        velocity = {}
        missing = []
        for joint_name in controlled:
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
            warnings.warn(note, PinkctlWarning, stacklevel=2)
    acceleration = _per_joint(limits.get("acceleration"), controlled, "limits.acceleration", source)
    jerk = _per_joint(limits.get("jerk"), controlled, "limits.jerk", source)
    if jerk is not None and acceleration is None:
        raise ConfigurationError(f"{source}: jerk limits need acceleration limits")
    if acceleration is None:
        note = (
            "no acceleration limits: the controller's motion limits (acceleration, jerk) are "
            "off; set [limits] acceleration (and jerk) to enforce them"
        )
        notes.append(note)
        warnings.warn(note, PinkctlWarning, stacklevel=2)

    actuated = list(controlled) + [j for j in gripper if j not in controlled]
    servo = cfg.mujoco if cfg is not None else {}
    armature = _per_joint(servo.get("armature"), actuated, "mujoco.armature", source) or {}
    kp = _per_joint(servo.get("kp"), actuated, "mujoco.kp", source) or {}
    kv = _per_joint(servo.get("kv"), actuated, "mujoco.kv", source) or {}
    # every other scalar joint gets a servo holding it at home in MuJoCo: gains inferred too
    scalar = [
        model.names[j]
        for j in independent_joints(model)
        if model.joints[j].nv == 1 and model.joints[j].nq in (1, 2)
    ]
    missing = [j for j in scalar if j not in kp or j not in kv]
    if missing:
        inferred_kp, inferred_kv, added = servo_gains(model, q0, missing, armature)
        for joint_name in missing:
            kp.setdefault(joint_name, inferred_kp[joint_name])
            kv.setdefault(joint_name, inferred_kv[joint_name])
        armature.update(added)
        inferred["servo gains"] = (
            f"{SERVO_FREQUENCY / (2 * math.pi):g} Hz on each joint's inertia at home "
            f"({len(missing)} joints" + (f", armature added on {sorted(added)})" if added else ")")
        )

    collision_model = collision_data = None
    if build_collision_model:
        try:
            collision_model = description.build_collision_model(model)
        except (RuntimeError, ValueError) as exc:
            raise ConfigurationError(
                f"cannot build collision model from {description_path}: {exc}"
            ) from exc
        if srdf is not None:
            pin.removeCollisionPairs(model, collision_model, str(srdf))
        collision_data = pin.GeometryData(collision_model)

    robot = PinkRobot(
        directory=description_path.parent,
        model=model,
        data=model.createData(),
        controlled_joint_names=list(controlled),
        collision_model=collision_model,
        collision_data=collision_data,
        q0=q0,
        name=name or (cfg.name if cfg is not None and cfg.name else description_path.stem),
        urdf_path=description_path,
        srdf_path=srdf,
        tool_frame=frame,
        gripper_joint_names=gripper,
        velocity_limits=velocity,
        acceleration_limits=acceleration or {},
        jerk_limits=jerk or {},
        actuator_kp=kp,
        actuator_kv=kv,
        armature=armature,
        config=dict(cfg.raw) if cfg is not None else {},
        description=description,
        floating_base=floating,
        base_placement=placement if placement is not None else pin.SE3.Identity(),
        floor=cfg.floor if cfg is not None else None,
        tool_frames=[frame] + [f for f in extra_frames if f != frame],
        inferred=inferred,
        notes=notes,
    )
    return robot


def load_pink_supported_robot(
    robot_name: str,
    build_collision_model: bool = False,
    **overrides: Any,
) -> PinkRobot:
    """Load a robot of the catalog (see :func:`supported_robots`).

    Args:
        robot_name: Folder name under ``robot_configurations/``, e.g. ``"franka"``.
        build_collision_model: Build the collision geometry with the SRDF pairs removed.
        **overrides: Keyword overrides of :func:`load_pink_robot` (``controlled_joint_names``,
            ``tool_frame``, ``home``, ``gripper_joint_names``, ``floating_base``).

    Raises:
        FileNotFoundError: If no robot has that name (the message lists them), or its
            description package is not installed (the message names the extra).
    """
    available = supported_robots()
    if not isinstance(robot_name, str) or robot_name not in available:
        raise DescriptionNotFoundError(
            f"no robot named {robot_name!r}; available robots: {', '.join(available)}"
        )
    allowed = {
        "controlled_joint_names",
        "tool_frame",
        "home",
        "gripper_joint_names",
        "floating_base",
    }
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise ConfigurationError(f"unknown overrides {unknown}; accepted: {sorted(allowed)}")
    toml_path = robot_configurations_dir() / robot_name / "robot.toml"
    cfg = read_config(toml_path)
    robot = load_pink_robot(
        config=cfg,
        build_collision_model=build_collision_model,
        allow_outside_paths=False,
        name=robot_name,
        **overrides,
    )
    robot.directory = toml_path.parent
    return robot
