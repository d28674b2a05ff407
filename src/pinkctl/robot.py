"""Robot descriptions: URDF + SRDF loaded into Pinocchio, plus the bundled robots.

A bundled robot lives in ``robot_configurations/<name>/`` as ``robot.urdf``, ``robot.srdf`` and
``robot.toml``. The TOML file declares what the URDF cannot: which joints the arm controller
drives, the default tool frame, the home configuration, the gripper joints, per-joint motion
limits (velocity [rad/s], acceleration [rad/s²], jerk [rad/s³]) and the MuJoCo servo gains.
"""

from __future__ import annotations

import math
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from ._validation import name_list

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "PinkRobot",
    "load_pink_robot",
    "load_pink_supported_robot",
    "supported_robots",
    "robot_configurations_dir",
]


def robot_configurations_dir() -> Path:
    """Folder holding the bundled robots.

    In a wheel the folder ships inside the package (``pinkctl/robot_configurations``); in a
    source checkout (editable install) it sits at the repository top level.
    """
    packaged = Path(__file__).resolve().parent / "robot_configurations"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "robot_configurations"


@dataclass
class PinkRobot:
    """A robot ready for differential IK: Pinocchio model, data and the joints to control.

    Attributes:
        directory: Folder of the robot description (the URDF's folder).
        model: Pinocchio model built from the URDF (mimic joints parsed as mimic joints).
        data: Pinocchio data for ``model``.
        controlled_joint_names: Joints the arm controller drives (decision variables of the QP).
        collision_model: Collision geometry (SRDF disabled pairs removed), if requested.
        collision_data: Data for ``collision_model``.
        q0: Home configuration, a Pinocchio ``q`` vector of size ``model.nq``.
        name: Robot name (bundled robots: the folder name).
        urdf_path: Path of the URDF.
        srdf_path: Path of the SRDF, if any.
        tool_frame: Default tool frame for the IK controller (None: the model's last frame).
        gripper_joint_names: Actuated gripper joints (mimic followers excluded).
        velocity_limits: Per controlled joint velocity limit [rad/s] or [m/s], by name.
        acceleration_limits: Per controlled joint acceleration limit [rad/s²], by name.
        jerk_limits: Per controlled joint jerk limit [rad/s³], by name.
        actuator_kp: MuJoCo position-servo stiffness per actuated joint, by name.
        actuator_kv: MuJoCo position-servo damping per actuated joint, by name.
        armature: MuJoCo joint armature per joint [kg m²], by name.
        config: The raw ``robot.toml`` contents (empty for a plain URDF).
    """

    directory: Path
    model: pin.Model
    data: pin.Data
    controlled_joint_names: list[str]
    collision_model: pin.GeometryModel | None = None
    collision_data: pin.GeometryData | None = None
    q0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = ""
    urdf_path: Path | None = None
    srdf_path: Path | None = None
    tool_frame: str | None = None
    gripper_joint_names: list[str] = field(default_factory=list)
    velocity_limits: dict[str, float] = field(default_factory=dict)
    acceleration_limits: dict[str, float] = field(default_factory=dict)
    jerk_limits: dict[str, float] = field(default_factory=dict)
    actuator_kp: dict[str, float] = field(default_factory=dict)
    actuator_kv: dict[str, float] = field(default_factory=dict)
    armature: dict[str, float] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.q0.size == 0:
            self.q0 = pin.neutral(self.model)

    @property
    def actuated_joint_names(self) -> list[str]:
        """Controlled joints followed by gripper joints: the joints MuJoCo gets actuators on."""
        return list(self.controlled_joint_names) + [
            j for j in self.gripper_joint_names if j not in self.controlled_joint_names
        ]

    @property
    def joint_names(self) -> list[str]:
        """Every joint with a coordinate of its own (nq > 0), in model order."""
        return [
            self.model.names[i] for i in range(1, self.model.njoints) if self.model.joints[i].nq > 0
        ]

    def home_positions(self) -> dict[str, float]:
        """Home position of every single-coordinate joint, by name (continuous: the angle)."""
        out: dict[str, float] = {}
        for i in range(1, self.model.njoints):
            joint = self.model.joints[i]
            if joint.nq == 1:
                out[self.model.names[i]] = float(self.q0[joint.idx_q])
            elif joint.nq == 2 and joint.nv == 1:
                c, s = self.q0[joint.idx_q], self.q0[joint.idx_q + 1]
                out[self.model.names[i]] = float(np.arctan2(s, c))
        return out


def supported_robots() -> list[str]:
    """Names of the bundled robots, sorted."""
    root = robot_configurations_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "robot.toml").is_file())


def _joint_names_with_dofs(model: pin.Model) -> list[str]:
    return [model.names[i] for i in range(1, model.njoints) if model.joints[i].nq > 0]


def _apply_positions(model: pin.Model, q: np.ndarray, positions: dict[str, float]) -> None:
    """Write named scalar joint positions into ``q`` (continuous joints as cos/sin)."""
    for name, value in positions.items():
        if not model.existJointName(name):
            raise ValueError(f"joint {name!r} of the home configuration is not in the model")
        joint = model.joints[model.getJointId(name)]
        if joint.nq == 1:
            q[joint.idx_q] = value
        elif joint.nq == 2 and joint.nv == 1:
            q[joint.idx_q] = np.cos(value)
            q[joint.idx_q + 1] = np.sin(value)
        elif joint.nq == 0:
            continue  # mimic follower: its value comes from its master
        else:
            raise ValueError(f"joint {name!r} has {joint.nq} coordinates; give it by q vector")


def _srdf_home(srdf_path: Path, state_name: str = "home") -> dict[str, float] | None:
    """Joint values of the SRDF ``group_state`` named ``state_name`` (None if absent).

    Raises:
        ValueError: If the SRDF cannot be parsed, or a joint value is missing or not a finite
            number (the message names the file and the joint).
    """
    try:
        root = ET.parse(srdf_path).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"cannot parse SRDF {srdf_path}: {exc}") from exc
    for state in root.iter("group_state"):
        if state.get("name") == state_name:
            values: dict[str, float] = {}
            for joint in state.iter("joint"):
                name = joint.get("name", "")
                text = (joint.get("value") or "").split()
                try:
                    value = float(text[0])
                except (IndexError, ValueError):
                    value = math.nan
                if not math.isfinite(value):
                    raise ValueError(
                        f"{srdf_path}: group_state {state_name!r} gives joint {name!r} the value "
                        f"{joint.get('value')!r}; expected a finite number"
                    )
                values[name] = value
            return values
    return None


def _check_home(model: pin.Model, q: np.ndarray, source: Path | str) -> None:
    """Every single-coordinate joint of ``q`` inside its position range (1e-9 tolerance).

    Raises:
        ValueError: Naming the joint, its value and its range.
    """
    for i in range(1, model.njoints):
        joint = model.joints[i]
        if joint.nq != 1:
            continue
        value = float(q[joint.idx_q])
        lower = float(model.lowerPositionLimit[joint.idx_q])
        upper = float(model.upperPositionLimit[joint.idx_q])
        if not (lower - 1e-9 <= value <= upper + 1e-9):
            raise ValueError(
                f"{source}: home value {value!r} of joint {model.names[i]!r} is outside its "
                f"range [{lower:g}, {upper:g}]"
            )


def _confined(directory: Path, relative: Any, what: str, source: Path) -> Path:
    """``directory / relative``, which must stay inside ``directory``.

    Raises:
        ValueError: If ``relative`` is not a string or leads outside ``directory`` (an
            absolute path or ``..``).
    """
    if not isinstance(relative, str) or not relative:
        raise ValueError(f"{source}: {what} must be a file name, got {relative!r}")
    path = (directory / relative).resolve()
    if not path.is_relative_to(directory.resolve()):
        raise ValueError(
            f"{source}: {what} {relative!r} leads outside the robot's folder {directory}"
        )
    return path


def load_pink_robot(
    urdf_path: Path | str,
    package_dirs: list[str] | None = None,
    srdf_path: Path | str | None = None,
    build_collision_model: bool = False,
    *,
    controlled_joint_names: list[str] | None = None,
) -> PinkRobot:
    """Load a robot from a URDF file into Pinocchio.

    Args:
        urdf_path: Path to the URDF file.
        package_dirs: Folders for resolving ``package://`` mesh paths; default: the URDF's folder.
        srdf_path: Optional SRDF. Its disabled collision pairs are removed from the collision
            model, and its ``home`` group state becomes ``q0``.
        build_collision_model: Build the collision geometry (needed by ``SelfCollisionBarrier``).
        controlled_joint_names: Joints the IK controls; default: every joint with a coordinate
            (mimic followers excluded, since they have none of their own).

    Raises:
        FileNotFoundError: If the URDF (or the given SRDF) does not exist.
        ValueError: If the URDF cannot be parsed, or a controlled joint is not in the model.
    """
    urdf = Path(urdf_path)
    if not urdf.is_file():
        raise FileNotFoundError(f"URDF file not found: {urdf}")
    srdf = Path(srdf_path) if srdf_path is not None else None
    if srdf is not None and not srdf.is_file():
        raise FileNotFoundError(f"SRDF file not found: {srdf}")
    dirs = list(package_dirs) if package_dirs is not None else [str(urdf.parent)]
    try:
        ET.parse(urdf)
        model = pin.buildModelFromUrdf(str(urdf), True)
    except (ET.ParseError, RuntimeError, ValueError) as exc:
        raise ValueError(f"cannot parse URDF {urdf}: {exc}") from exc

    collision_model = collision_data = None
    if build_collision_model:
        try:
            collision_model = pin.buildGeomFromUrdf(
                model, str(urdf), pin.GeometryType.COLLISION, package_dirs=dirs
            )
        except (RuntimeError, ValueError) as exc:
            raise ValueError(f"cannot build collision model from {urdf}: {exc}") from exc
        collision_model.addAllCollisionPairs()
        if srdf is not None:
            pin.removeCollisionPairs(model, collision_model, str(srdf))
        collision_data = pin.GeometryData(collision_model)

    available = _joint_names_with_dofs(model)
    if controlled_joint_names is None:
        controlled = available
    else:
        controlled = list(controlled_joint_names)
        unknown = [j for j in controlled if j not in available]
        if unknown:
            raise ValueError(
                f"controlled_joint_names {unknown} are not joints of {urdf.name} "
                f"with a coordinate; available: {available}"
            )
        if len(set(controlled)) != len(controlled):
            raise ValueError(f"controlled_joint_names has duplicates: {controlled}")

    q0 = pin.neutral(model)
    if srdf is not None:
        home = _srdf_home(srdf)
        if home is not None:
            _apply_positions(model, q0, home)
            _check_home(model, q0, srdf)

    return PinkRobot(
        directory=urdf.parent,
        model=model,
        data=model.createData(),
        controlled_joint_names=controlled,
        collision_model=collision_model,
        collision_data=collision_data,
        q0=q0,
        name=urdf.stem,
        urdf_path=urdf,
        srdf_path=srdf,
        velocity_limits={
            n: float(model.velocityLimit[model.joints[model.getJointId(n)].idx_v])
            for n in controlled
        },
    )


def _per_joint(
    table: Any, joints: list[str], what: str, source: Path, *, positive: bool = True
) -> dict[str, float]:
    """A TOML value given as a scalar (same for all joints) or a table by joint name.

    Every value must be a finite number, > 0 (``positive``) or >= 0.
    """
    if table is None:
        return {}
    if not isinstance(table, dict):
        table = {j: table for j in joints}
    missing = [j for j in joints if j not in table]
    if missing:
        raise ValueError(f"{source}: {what} lacks joints {missing}")
    bound = "> 0" if positive else ">= 0"
    values = {}
    for joint in joints:
        value = table[joint]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{source}: {what} of {joint!r} must be a number, got {value!r}")
        number = float(value)
        if not math.isfinite(number) or number < 0.0 or (positive and number == 0.0):
            raise ValueError(
                f"{source}: {what} of {joint!r} must be finite and {bound}, got {value!r}"
            )
        values[joint] = number
    return values


def load_pink_supported_robot(
    robot_name: str,
    build_collision_model: bool = False,
) -> PinkRobot:
    """Load one of the bundled robots (see :func:`supported_robots`).

    Args:
        robot_name: Folder name under ``robot_configurations/``, e.g. ``"franka"``.
        build_collision_model: Build the collision geometry with the SRDF pairs removed.

    Raises:
        FileNotFoundError: If no bundled robot has that name (the message lists them).
    """
    available = supported_robots()
    if robot_name not in available:
        raise FileNotFoundError(
            f"no bundled robot named {robot_name!r}; available robots: {', '.join(available)}"
        )
    directory = robot_configurations_dir() / robot_name
    toml_path = directory / "robot.toml"
    with toml_path.open("rb") as f:
        try:
            config = tomllib.load(f)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"cannot parse {toml_path}: {exc}") from exc

    urdf = _confined(directory, config.get("urdf", "robot.urdf"), "urdf", toml_path)
    srdf_name = config.get("srdf", "robot.srdf")
    srdf = _confined(directory, srdf_name, "srdf", toml_path) if srdf_name else None
    controlled_config = config.get("controlled_joints")
    if controlled_config is not None:
        controlled_config = name_list(controlled_config, f"{toml_path}: controlled_joints")
    robot = load_pink_robot(
        urdf,
        srdf_path=srdf if srdf is not None and srdf.is_file() else None,
        build_collision_model=build_collision_model,
        controlled_joint_names=controlled_config,
    )
    robot.name = robot_name
    tool_frame = config.get("tool_frame")
    if tool_frame is not None and (
        not isinstance(tool_frame, str) or not robot.model.existFrame(tool_frame)
    ):
        raise ValueError(f"{toml_path}: tool_frame {tool_frame!r} is not a model frame")
    robot.tool_frame = tool_frame
    robot.gripper_joint_names = name_list(
        config.get("gripper_joints", []), f"{toml_path}: gripper_joints"
    )
    if "home" in config:
        home = config["home"]
        if not isinstance(home, dict):
            raise ValueError(f"{toml_path}: home must be a table of joint positions by name")
        for name, value in home.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{toml_path}: home value of {name!r} must be a number")
            if not math.isfinite(value):
                raise ValueError(f"{toml_path}: home value of {name!r} must be finite")
        _apply_positions(robot.model, robot.q0, dict(home))
        _check_home(robot.model, robot.q0, toml_path)
    controlled = robot.controlled_joint_names
    limits = config.get("limits", {})
    if "velocity" in limits:
        robot.velocity_limits = _per_joint(limits["velocity"], controlled, "velocity", toml_path)
    robot.acceleration_limits = _per_joint(
        limits.get("acceleration"), controlled, "acceleration", toml_path
    )
    robot.jerk_limits = _per_joint(limits.get("jerk"), controlled, "jerk", toml_path)
    mj = config.get("mujoco", {})
    actuated = robot.actuated_joint_names
    robot.actuator_kp = _per_joint(mj.get("kp"), actuated, "mujoco.kp", toml_path)
    robot.actuator_kv = _per_joint(mj.get("kv"), actuated, "mujoco.kv", toml_path, positive=False)
    robot.armature = _per_joint(
        mj.get("armature"), actuated, "mujoco.armature", toml_path, positive=False
    )
    robot.config = config
    return robot
