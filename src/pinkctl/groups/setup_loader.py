"""Reading the sections of an IK-setup document into an environment (:mod:`pinkctl.groups.
setup_file` describes the layout); every error names the file and the line of its key.

The sections are read in the order their contents depend on each other: the robot, the
objects (parents first), joint intervals, dependencies, the joints' IK settings and screw
leads, the tips' targets, then the groups with their elements and joint overrides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.robot import load_pink_robot, load_pink_supported_robot
from .element import IKElement
from .flags import AXES, Constraint, GroupFlags
from .objects import JOINT_KINDS, WORLD
from .scene import KinematicScene
from .setup_reader import DocumentReader, Location, close_names

if TYPE_CHECKING:
    from .environment import IKEnvironment

__all__ = [
    "CONSTRAINT_BITS",
    "DEPENDENCY_KEYS",
    "ELEMENT_KEYS",
    "FLAG_BITS",
    "GROUP_KEYS",
    "INTERVAL_KEYS",
    "JOINT_KEYS",
    "OBJECT_KEYS",
    "ROBOT_KEYS",
    "SETTING_KEYS",
    "TARGET_KEYS",
    "load_groups",
    "load_robot",
    "load_scene",
]

CONSTRAINT_BITS = tuple(bit for bit, _ in AXES)
FLAG_BITS = tuple(GroupFlags)

# the keys each table may hold, in the order the writer writes them
ROBOT_KEYS = ("name", "urdf", "srdf", "controlled_joints", "tool_frame")
OBJECT_KEYS = ("type", "name", "parent", "position", "rotation")
INTERVAL_KEYS = ("joint", "cyclic", "lower", "range")
DEPENDENCY_KEYS = ("joint", "master", "offset", "mult")
SETTING_KEYS = ("mode", "weight", "limit_margin", "max_step")
JOINT_KEYS = ("name", *SETTING_KEYS, "screw_lead")
TARGET_KEYS = ("tip", "target")
GROUP_KEYS = ("name", "method", "damping", "max_iterations", "flags", "elements", "joints")
_FRAME_KEYS = ("base", "constraint_base")
ELEMENT_KEYS = (*TARGET_KEYS, *_FRAME_KEYS, "constraints", "precision", "weights", "enabled")
_SETTING_TYPES = {"mode": str, "weight": float, "limit_margin": float, "max_step": float}


def _scene_name(
    reader: DocumentReader,
    scene: KinematicScene,
    table: dict[str, Any],
    path: Location,
    key: str,
    kind: str,
    default: Any = ...,
) -> Any:
    """``table[key]``, the name of a frame (``kind="frame"``) or joint of ``scene``."""
    name = reader.get(table, path, key, str, default)
    if name is None:
        return None
    model = scene.model
    if kind == "frame":
        known = [WORLD] + [frame.name for frame in model.frames]
        exists = name == WORLD or model.existFrame(name)
    else:
        known = list(model.names)[1:]
        exists = name in known
    if not exists:
        raise reader.fail(
            path + (key,), f"{key} {name!r} is not a {kind} of the scene{close_names(name, known)}"
        )
    return name


def load_robot(reader: DocumentReader, document: dict[str, Any]) -> Any:
    """The robot of ``[robot]``, or None when the document has no such table (an empty
    environment)."""
    if "robot" not in document:
        return None
    path: Location = ("robot",)
    table = reader.get(document, (), "robot", dict)
    reader.keys(table, path, ROBOT_KEYS)
    if ("name" in table) == ("urdf" in table):
        given = "both" if "name" in table else "neither"
        raise reader.fail(path, f"give name (a catalog robot) or urdf (a file); {given} given")
    if "name" in table and "srdf" in table:
        raise reader.fail(path + ("srdf",), "srdf goes with urdf; a catalog robot has its own")
    overrides: dict[str, Any] = {}
    if "controlled_joints" in table:
        overrides["controlled_joint_names"] = reader.get(table, path, "controlled_joints", list)
    if "tool_frame" in table:
        overrides["tool_frame"] = reader.get(table, path, "tool_frame", str)
    source = "name" if "name" in table else "urdf"
    aliases = {"controlled_joint_names": "controlled_joints"}
    with reader.at(path, table, aliases=aliases, fallback=source):
        if source == "name":
            return load_pink_supported_robot(reader.get(table, path, "name", str), **overrides)
        srdf = reader.get(table, path, "srdf", str, None)
        return load_pink_robot(reader.get(table, path, "urdf", str), srdf_path=srdf, **overrides)


def _pose_of(reader: DocumentReader, table: dict[str, Any], path: Location) -> np.ndarray:
    matrix = np.eye(4)
    matrix[:3, 3] = reader.floats(table, path, "position", (3,))
    matrix[:3, :3] = reader.floats(table, path, "rotation", (3, 3))
    return matrix


def _load_objects(reader: DocumentReader, scene: KinematicScene, document: dict[str, Any]) -> None:
    for k, item in enumerate(reader.tables(document, (), "objects")):
        where: Location = ("objects", k)
        kind = reader.get(item, where, "type", str)
        if kind not in ("dummy", *JOINT_KINDS):
            known = ["dummy", *JOINT_KINDS]
            raise reader.fail(where + ("type",), f"unknown type {kind!r}; known: {known}")
        reader.keys(item, where, OBJECT_KEYS + (("screw_lead",) if kind == "revolute" else ()))
        name = reader.get(item, where, "name", str)
        parent = _scene_name(reader, scene, item, where, "parent", "frame")
        pose = _pose_of(reader, item, where)
        with reader.at(where, item):
            if kind == "dummy":
                scene.add_dummy(name, parent=parent, pose=pose)
            else:
                lead = reader.get(item, where, "screw_lead", float, 0.0)
                scene.add_joint(name, kind, parent=parent, pose=pose, screw_lead=lead)


def _load_laws(reader: DocumentReader, scene: KinematicScene, document: dict[str, Any]) -> None:
    """Intervals and dependencies."""
    for k, item in enumerate(reader.tables(document, (), "intervals")):
        where: Location = ("intervals", k)
        cyclic = reader.get(item, where, "cyclic", bool)
        reader.keys(item, where, INTERVAL_KEYS[:2] if cyclic else INTERVAL_KEYS)
        joint = _scene_name(reader, scene, item, where, "joint", "joint")
        with reader.at(where, item, fallback="joint"):
            scene.set_joint_interval(
                joint,
                cyclic=cyclic,
                lower=reader.get(item, where, "lower", float, None),
                range=reader.get(item, where, "range", float, None),
            )
    for k, item in enumerate(reader.tables(document, (), "dependencies")):
        where = ("dependencies", k)
        reader.keys(item, where, DEPENDENCY_KEYS)
        joint = _scene_name(reader, scene, item, where, "joint", "joint")
        master = _scene_name(reader, scene, item, where, "master", "joint")
        with reader.at(where, item, fallback="master"):
            scene.set_joint_dependency(
                joint,
                master,
                offset=reader.get(item, where, "offset", float),
                mult=reader.get(item, where, "mult", float),
            )


def _settings(reader: DocumentReader, item: dict[str, Any], where: Location) -> dict[str, Any]:
    """The joint-setting fields an entry gives."""
    types = _SETTING_TYPES.items()
    return {key: reader.get(item, where, key, kind) for key, kind in types if key in item}


def load_scene(reader: DocumentReader, scene: KinematicScene, document: dict[str, Any]) -> None:
    """Objects, intervals, dependencies, joints (IK settings, robot screw leads), targets."""
    _load_objects(reader, scene, document)
    _load_laws(reader, scene, document)
    for k, item in enumerate(reader.tables(document, (), "joints")):
        where: Location = ("joints", k)
        reader.keys(item, where, JOINT_KEYS)
        name = _scene_name(reader, scene, item, where, "name", "joint")
        with reader.at(where, item, fallback="name"):
            settings = _settings(reader, item, where)
            if settings:
                scene.set_joint_settings(name, **settings)
            if "screw_lead" in item:
                scene.set_screw_lead(name, reader.get(item, where, "screw_lead", float))
    for k, item in enumerate(reader.tables(document, (), "targets")):
        where = ("targets", k)
        reader.keys(item, where, TARGET_KEYS)
        tip = _scene_name(reader, scene, item, where, "tip", "frame")
        target = _scene_name(reader, scene, item, where, "target", "frame")
        with reader.at(where, item, fallback="target"):
            scene.set_target(tip, target)


def _element(
    reader: DocumentReader, scene: KinematicScene, item: dict[str, Any], where: Location
) -> IKElement:
    reader.keys(item, where, ELEMENT_KEYS)
    tip = _scene_name(reader, scene, item, where, "tip", "frame")
    target, base, constraint_base = (
        _scene_name(reader, scene, item, where, key, "frame", None)
        for key in ("target", *_FRAME_KEYS)
    )
    with reader.at(where, item):
        return IKElement(
            tip,
            target,
            base=base,
            constraint_base=constraint_base,
            constraints=Constraint(reader.names(item, where, "constraints", CONSTRAINT_BITS)),
            precision=tuple(reader.floats(item, where, "precision", (2,))),  # type: ignore[arg-type]
            weights=tuple(reader.floats(item, where, "weights", (3,))),  # type: ignore[arg-type]
            enabled=reader.get(item, where, "enabled", bool),
        )


def load_groups(reader: DocumentReader, env: IKEnvironment, document: dict[str, Any]) -> None:
    """The groups, their elements and their joint overrides."""
    scene = env.scene
    for g, table in enumerate(reader.tables(document, (), "groups")):
        path: Location = ("groups", g)
        reader.keys(table, path, GROUP_KEYS)
        with reader.at(path, table, fallback="name"):
            group = env.add_group(
                reader.get(table, path, "name", str),
                method=reader.get(table, path, "method", str),
                damping=reader.get(table, path, "damping", float),
                max_iterations=reader.get(table, path, "max_iterations", int),
                flags=reader.names(table, path, "flags", FLAG_BITS),
            )
        for k, item in enumerate(reader.tables(table, path, "elements")):
            where = path + ("elements", k)
            element = _element(reader, scene, item, where)
            with reader.at(where, item, fallback="tip"):
                group.add_element(element)
        for k, item in enumerate(reader.tables(table, path, "joints")):
            where = path + ("joints", k)
            reader.keys(item, where, ("name", *SETTING_KEYS))
            name = _scene_name(reader, scene, item, where, "name", "joint")
            with reader.at(where, item):
                group.set_joint(name, **_settings(reader, item, where))
