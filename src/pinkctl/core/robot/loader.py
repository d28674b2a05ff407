"""Loading a robot: description + SRDF + configuration -> :class:`PinkRobot`.

:func:`load_pink_robot` takes any URDF or MJCF file (or a ``robot.toml`` naming one), an
optional configuration (a file or a dict, see :mod:`pinkctl.core.robot.config`) and keyword
overrides; what none of them gives is inferred (:mod:`pinkctl.core.robot.inference`) and recorded
in ``robot.inferred``. :func:`load_pink_supported_robot` loads a robot of the catalog
(``robot_configurations/<name>/robot.toml``): the hand-written robots and configurations over
the ``example-robot-data`` descriptions.

The steps live beside this module: :mod:`~pinkctl.core.robot.description` (the file, for both
engines), :mod:`~pinkctl.core.robot.joint_settings` (controlled joints, limits, servos),
:mod:`~pinkctl.core.robot.home` and :mod:`~pinkctl.core.robot.srdf` (the home
configuration).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import pinocchio as pin

from ...errors import ConfigurationError, DescriptionNotFoundError, PinkctlWarning
from .acceleration import DEFAULT_RAMP_UP, infer_motion_limits
from .config import RobotConfig, read_config
from .description import RobotDescription, read_description
from .frames import disambiguate_frames, resolve_frame
from .home import set_home
from .inference import infer_tool_frame
from .inputs import (
    base_placement,
    configuration_and_file,
    description_file,
    package_folders,
    srdf_file,
)
from .joint_settings import (
    checked_joints,
    controlled_joints,
    per_joint,
    servo_settings,
    velocity_limits,
)
from .model import PinkRobot
from .source import RobotSource

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "RobotOverrides",
    "load_pink_robot",
    "load_pink_supported_robot",
    "robot_configurations_dir",
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


class RobotOverrides(TypedDict, total=False):
    """Keyword overrides :func:`load_pink_supported_robot` accepts (see :func:`load_pink_robot`)."""

    controlled_joint_names: Sequence[str] | None
    tool_frame: str | None
    home: Mapping[str, float] | str | None
    gripper_joint_names: Sequence[str] | None
    floating_base: bool | None


def load_pink_robot(
    urdf_path: Path | str | None = None,
    package_dirs: Sequence[str | Path] | None = None,
    srdf_path: Path | str | None = None,
    build_collision_model: bool = False,
    *,
    config: str | Path | Mapping[str, object] | RobotConfig | None = None,
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
        package_dirs: Folders for ``package://`` mesh URIs (see :mod:`pinkctl.core.robot.meshes`).
        srdf_path: SRDF: disabled collision pairs, planning groups, named states.
        build_collision_model: Build the collision geometry (needed by
            ``SelfCollisionBarrier``; costs nothing per tick otherwise).
        config: A configuration file, dict or :class:`~pinkctl.core.robot.config.RobotConfig`.
        controlled_joint_names: Joints the IK controls (overrides the configuration).
        tool_frame: The IK controller's end-effector frame (overrides the configuration).
            When neither the keywords nor the configuration name the controlled joints, they
            are the chain from the root to this frame (a robot with branches: one arm).
        home: Home joint values, or the name of an SRDF ``group_state``.
        gripper_joint_names: Actuated gripper joints.
        floating_base: A free-flyer root joint (default: the configuration's, else False).
        allow_outside_paths: Let the configuration's paths leave its folder (False for the
            catalog's own configurations).
        name: Robot name (default: the configuration's, else the file name).

    Raises:
        FileNotFoundError: A missing description, SRDF, configuration or mesh file.
        ValueError: A malformed file or value, an unknown joint or frame (close names listed),
            a tree whose tool frame or chain cannot be inferred (the tips listed), or a
            setting that gives no joint to control (the setting named).
    """
    cfg, given_path = configuration_and_file(urdf_path, config)
    settings = cfg if cfg is not None else RobotConfig(source="load_pink_robot")
    description_path = description_file(given_path, settings, allow_outside_paths)
    srdf = srdf_file(srdf_path, settings, allow_outside_paths)
    overrides = RobotOverrides(
        controlled_joint_names=controlled_joint_names,
        tool_frame=tool_frame,
        home=home,
        gripper_joint_names=gripper_joint_names,
        floating_base=floating_base,
    )
    robot = _assemble(
        description_path,
        settings,
        srdf,
        package_dirs,
        overrides,
        build_collision_model=build_collision_model,
        name=name or settings.name or description_path.stem,
    )
    robot.source = RobotSource.of_call(
        cfg,
        robot.model,
        urdf_path=description_path,
        package_dirs=package_dirs,
        srdf_path=srdf,
        build_collision_model=build_collision_model,
        **overrides,
        name=robot.name,
    )
    return robot


def _assemble(
    description_path: Path,
    settings: RobotConfig,
    srdf: Path | None,
    package_dirs: Sequence[str | Path] | None,
    overrides: RobotOverrides,
    *,
    build_collision_model: bool,
    name: str,
) -> PinkRobot:
    """The robot of the description at ``description_path`` under ``settings``, the
    keywords of :func:`load_pink_robot` (``overrides``) taking precedence."""
    source = settings.source
    placement = base_placement(settings)
    description = read_description(
        description_path,
        package_dirs=package_folders(package_dirs, settings),
        base_placement=placement,
        expected_repairs=settings.inertia_repairs,
        repairs_setting=f"{source}: inertia_repairs",
    )
    floating_base = overrides["floating_base"]
    floating = bool(settings.floating_base if floating_base is None else floating_base)
    model = _build_model(description, floating)
    notes = list(description.repairs) + disambiguate_frames(model)
    inferred: dict[str, str] = {}
    tool_frames, controlled, gripper = _joints_and_tools(
        model,
        settings,
        srdf,
        inferred,
        overrides["controlled_joint_names"],
        overrides["gripper_joint_names"],
        overrides["tool_frame"],
    )
    q0 = pin.neutral(model)
    home = overrides["home"] if overrides["home"] is not None else settings.home
    set_home(model, q0, home, srdf, source, inferred)
    if description.place_free_joint(model, q0):
        inferred["base pose"] = (
            f"the pose the MJCF gives the body of its free joint {model.names[1]!r}"
        )
    velocity = velocity_limits(model, controlled, settings.limits.get("velocity"), source, notes)
    acceleration, jerk = _motion_limits(model, velocity, settings, inferred, notes)
    actuated = list(dict.fromkeys([*controlled, *gripper]))  # each joint once
    armature, kp, kv = servo_settings(model, q0, actuated, settings.mujoco, source, inferred)
    collision_model = _collision_model(description, model, srdf) if build_collision_model else None
    return PinkRobot(
        directory=description_path.parent,
        model=model,
        data=model.createData(),
        controlled_joint_names=list(controlled),
        collision_model=collision_model,
        collision_data=None if collision_model is None else pin.GeometryData(collision_model),
        q0=q0,
        name=name,
        urdf_path=description_path,
        srdf_path=srdf,
        tool_frame=tool_frames[0],
        gripper_joint_names=gripper,
        velocity_limits=velocity,
        acceleration_limits=acceleration,
        jerk_limits=jerk,
        actuator_kp=kp,
        actuator_kv=kv,
        armature=armature,
        ball_ranges=description.ball_ranges(),
        config=dict(settings.raw),
        description=description,
        floating_base=floating,
        base_placement=placement if placement is not None else pin.SE3.Identity(),
        floor=settings.floor,
        tool_frames=tool_frames,
        inferred=inferred,
        notes=notes,
    )


def _joints_and_tools(
    model: pin.Model,
    settings: RobotConfig,
    srdf: Path | None,
    inferred: dict[str, str],
    controlled_joint_names: Sequence[str] | None,
    gripper_joint_names: Sequence[str] | None,
    tool_frame: str | None,
) -> tuple[list[str], list[str], list[str]]:
    """The tool frames (the IK controller's first, then the configuration's ``tool_frames``),
    the controlled joints and the gripper joints (keywords first, then the configuration,
    then inferred)."""
    frame = tool_frame if tool_frame is not None else settings.tool_frame
    setting = "tool_frame" if tool_frame is not None else f"{settings.source}: tool_frame"
    controlled, gripper_found = controlled_joints(
        model,
        settings,
        srdf,
        controlled_joint_names,
        inferred,
        tool_frame=None if frame is None else (frame, setting),
    )
    gripper = _gripper_joints(model, settings, gripper_joint_names, gripper_found)
    if frame is None:
        frame = infer_tool_frame(model, controlled[-1])
        inferred["tool frame"] = f"the tip of the chain after {controlled[-1]!r}"
    resolve_frame(model, frame, what="tool_frame")
    for extra in settings.tool_frames:
        resolve_frame(model, extra, what="tool_frames")
    return [frame] + [f for f in settings.tool_frames if f != frame], controlled, gripper


def _gripper_joints(
    model: pin.Model,
    settings: RobotConfig,
    names: Sequence[str] | None,
    found: list[str] | None,
) -> list[str]:
    """The gripper joints: the ones named, else the configuration's, else those found at
    the end of the inferred chain (none when not inferred)."""
    if names is not None:
        return checked_joints(model, names, "gripper_joint_names")
    if settings.gripper_joints is not None:
        what = f"{settings.source}: gripper_joints"
        return checked_joints(model, settings.gripper_joints, what)
    return found or []


def _motion_limits(
    model: pin.Model,
    velocity: dict[str, float],
    settings: RobotConfig,
    inferred: dict[str, str],
    notes: list[str],
) -> tuple[dict[str, float], dict[str, float]]:
    """Acceleration and jerk limits by controlled joint: the configured ones, else inferred
    from the description (:mod:`~pinkctl.core.robot.acceleration`, recorded in ``inferred``).
    Configured acceleration limits without jerk limits stay without.

    Raises:
        ValueError: Jerk limits without acceleration limits, or a malformed table.
    """
    source = settings.source
    limits = settings.limits
    controlled = list(velocity)
    acceleration = per_joint(limits.get("acceleration"), controlled, "limits.acceleration", source)
    jerk = per_joint(limits.get("jerk"), controlled, "limits.jerk", source)
    if jerk is not None and acceleration is None:
        raise ConfigurationError(f"{source}: jerk limits need acceleration limits")
    if acceleration is None:
        acceleration, jerk, inferred["motion limits"], guessed = infer_motion_limits(
            model, velocity
        )
        # inferred limits are a guess at the hardware: say so, as for every inferred setting
        note = (
            "no acceleration limits configured: acceleration and jerk limits inferred from "
            "the description's effort limits and link inertias (robot.inferred['motion "
            "limits']); set [limits] acceleration (and jerk) to the hardware's"
        )
        if guessed:
            note += (
                f"; joints {guessed} have no effort limit: full speed in {DEFAULT_RAMP_UP:g} s "
                "assumed"
            )
        notes.append(note)
        warnings.warn(note, PinkctlWarning, stacklevel=3)
    return acceleration, jerk or {}


def _collision_model(
    description: RobotDescription, model: pin.Model, srdf: Path | None
) -> pin.GeometryModel:
    """The collision geometry, less the SRDF's disabled pairs."""
    try:
        collision_model = description.build_collision_model(model)
    except (RuntimeError, ValueError) as exc:
        raise ConfigurationError(
            f"cannot build collision model from {description.path}: {exc}"
        ) from exc
    if srdf is not None:
        pin.removeCollisionPairs(model, collision_model, str(srdf))
    return collision_model


def _build_model(description: RobotDescription, floating: bool) -> pin.Model:
    """The kinematic model of ``description`` (a free-flyer root when ``floating``)."""
    try:
        return description.build_model(floating_base=floating)
    except (RuntimeError, ValueError) as exc:
        raise ConfigurationError(f"cannot build a model from {description.path}: {exc}") from exc


def load_pink_supported_robot(
    robot_name: str,
    build_collision_model: bool = False,
    **overrides: Unpack[RobotOverrides],
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
    allowed = set(RobotOverrides.__annotations__)
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
    robot.source = RobotSource(
        catalog=robot_name,
        arguments={"build_collision_model": build_collision_model, **overrides},
        digest=robot.source.digest if robot.source is not None else "",
    )
    return robot
