"""A whole IK setup as a human-readable TOML file: save, and load with line-accurate errors.

The file holds (``format = 1``)::

    [robot]                 # name = catalog robot, or urdf (+ srdf); controlled_joints, tool_frame
    [[objects]]             # dummies and scene joints, parents first: type ("dummy",
                            # "revolute", "prismatic", "spherical"), name, parent, position [m],
                            # rotation (3 rows), screw_lead [m/turn] (revolute)
    [[intervals]]           # joint, cyclic, lower, range (sorted by joint)
    [[dependencies]]        # joint, master, offset, mult (sorted by joint)
    [[groups]]              # name, method, damping, max_iterations, flags (names)
    [[groups.elements]]     # tip, target, base, constraint_base, constraints (names),
                            # precision [m, rad], weights, enabled
    [[groups.joints]]       # name, mode, weight, limit_margin, max_step

Floats are written with ``repr`` and rotations as matrices, so a saved setup loads into the
same model, the same numbers and the same order: ``save -> load -> solve`` gives bit-identical
results, and ``save -> load -> save`` the same text. A dependency given by a callback cannot
be saved (:class:`~pinkctl.errors.InputError`). Any malformed entry raises
:class:`~pinkctl.errors.ConfigurationError` (a ``ValueError``) naming the file and the line
of the offending key (:mod:`pinkctl.groups.setup_reader`): a key or table a table does not
know (``[[group]]``, ``bse``), a frame or joint the scene lacks, a number written as a string,
a value out of its range.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..core.robot import load_pink_robot, load_pink_supported_robot, supported_robots
from ..errors import InputError
from .element import IKElement
from .flags import AXES, Constraint, GroupFlags, flag_names
from .objects import JOINT_KINDS, WORLD, SceneJoint
from .scene import KinematicScene
from .setup_reader import DocumentReader, Location, close_names, read_document
from .toml_text import dumps

if TYPE_CHECKING:
    from .environment import IKEnvironment

__all__ = ["FORMAT", "environment_document", "read_environment", "write_environment"]

#: Version of the file layout.
FORMAT = 1

_HEADER = "pinkctl IK setup (pinkctl.groups): robot, scene objects, joints, groups."
_CONSTRAINTS = tuple(bit for bit, _ in AXES)
_FLAGS = tuple(GroupFlags)

# the keys each table may hold, in the order the writer writes them
_TOP_KEYS = ("format", "robot", "objects", "intervals", "dependencies", "groups")
_ROBOT_KEYS = ("name", "urdf", "srdf", "controlled_joints", "tool_frame")
_OBJECT_KEYS = ("type", "name", "parent", "position", "rotation")
_INTERVAL_KEYS = ("joint", "cyclic", "lower", "range")
_DEPENDENCY_KEYS = ("joint", "master", "offset", "mult")
_GROUP_KEYS = ("name", "method", "damping", "max_iterations", "flags", "elements", "joints")
_ELEMENT_KEYS = (
    "tip",
    "target",
    "base",
    "constraint_base",
    "constraints",
    "precision",
    "weights",
    "enabled",
)
_JOINT_KEYS = ("name", "mode", "weight", "limit_margin", "max_step")


# ---------------------------------------------------------------------- writing
def _pose(placement: pin.SE3) -> dict[str, Any]:
    return {
        "position": [float(v) for v in placement.translation],
        "rotation": [[float(v) for v in row] for row in placement.rotation],
    }


def _robot(env: IKEnvironment) -> dict[str, Any]:
    robot = env.scene.robot
    entry: dict[str, Any]
    if robot.name in supported_robots():
        entry = {"name": robot.name}
    else:
        entry = {"urdf": str(Path(str(robot.urdf_path)).resolve())}
        if robot.srdf_path is not None:
            entry["srdf"] = str(robot.srdf_path)
    entry["controlled_joints"] = list(robot.controlled_joint_names)
    if robot.tool_frame is not None:
        entry["tool_frame"] = robot.tool_frame
    return entry


def _objects(env: IKEnvironment) -> list[dict[str, Any]]:
    scene = env.scene
    entries = []
    for name in scene.build_order:
        obj = scene.object(name)
        kind = obj.kind if isinstance(obj, SceneJoint) else "dummy"
        entry: dict[str, Any] = {"type": kind, "name": name, "parent": obj.parent}
        entry.update(_pose(obj.placement))
        if kind == "revolute":
            entry["screw_lead"] = scene.screw_lead(name)
        entries.append(entry)
    return entries


def environment_document(env: IKEnvironment) -> dict[str, Any]:
    """The setup as a TOML document (module docstring).

    Raises:
        ValueError: A dependency given by a callback (it cannot be written to a file).
    """
    scene = env.scene
    intervals = []
    for joint, interval in sorted(scene.intervals.items()):
        entry: dict[str, Any] = {"joint": joint, "cyclic": interval.cyclic}
        if not interval.cyclic:
            entry.update(lower=interval.lower, range=interval.range)
        intervals.append(entry)
    dependencies = []
    for joint, law in sorted(scene.dependencies.items()):
        if law.callback is not None:
            raise InputError(f"joint {joint!r} follows a callback, which cannot be saved")
        dependencies.append(
            {"joint": joint, "master": law.master, "offset": law.offset, "mult": law.mult}
        )
    groups = []
    for name, group in env.groups.items():
        elements = []
        for element in group.elements:
            entry = {"tip": element.tip, "target": element.target}
            if element.base is not None:
                entry["base"] = element.base
            if element.constraint_base is not None:
                entry["constraint_base"] = element.constraint_base
            entry.update(
                constraints=flag_names(element.constraints, _CONSTRAINTS),
                precision=list(element.precision),
                weights=list(element.weights),
                enabled=element.enabled,
            )
            elements.append(entry)
        joints = []
        for joint, settings in group.joint_settings.items():
            entry = {"name": joint, "mode": settings.mode, "weight": settings.weight}
            entry["limit_margin"] = settings.limit_margin
            if settings.max_step is not None:
                entry["max_step"] = settings.max_step
            joints.append(entry)
        groups.append(
            {
                "name": name,
                "method": group.method,
                "damping": group.damping,
                "max_iterations": group.max_iterations,
                "flags": flag_names(group.flags, _FLAGS),
                "elements": elements,
                "joints": joints,
            }
        )
    return {
        "format": FORMAT,
        "robot": _robot(env),
        "objects": _objects(env),
        "intervals": intervals,
        "dependencies": dependencies,
        "groups": groups,
    }


def write_environment(env: IKEnvironment, path: str | Path) -> None:
    """Write the setup to ``path`` (module docstring)."""
    Path(path).write_text(dumps(environment_document(env), _HEADER), encoding="utf-8")


# ---------------------------------------------------------------------- reading
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


def _load_robot(reader: DocumentReader, document: dict[str, Any]) -> Any:
    path: Location = ("robot",)
    table = reader.get(document, (), "robot", dict)
    reader.keys(table, path, _ROBOT_KEYS)
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


def _load_groups(reader: DocumentReader, env: IKEnvironment, document: dict[str, Any]) -> None:
    scene = env.scene
    for g, table in enumerate(reader.tables(document, (), "groups")):
        path: Location = ("groups", g)
        reader.keys(table, path, _GROUP_KEYS)
        with reader.at(path, table, fallback="name"):
            group = env.add_group(
                reader.get(table, path, "name", str),
                method=reader.get(table, path, "method", str),
                damping=reader.get(table, path, "damping", float),
                max_iterations=reader.get(table, path, "max_iterations", int),
                flags=reader.names(table, path, "flags", _FLAGS),
            )
        for k, item in enumerate(reader.tables(table, path, "elements")):
            where = path + ("elements", k)
            reader.keys(item, where, _ELEMENT_KEYS)
            frames = [
                _scene_name(reader, scene, item, where, key, "frame", None if optional else ...)
                for key, optional in (
                    ("tip", False),
                    ("target", False),
                    ("base", True),
                    ("constraint_base", True),
                )
            ]
            with reader.at(where, item):
                group.add_element(
                    IKElement(
                        frames[0],
                        frames[1],
                        base=frames[2],
                        constraint_base=frames[3],
                        constraints=Constraint(
                            reader.names(item, where, "constraints", _CONSTRAINTS)
                        ),
                        precision=tuple(reader.floats(item, where, "precision", (2,))),  # type: ignore[arg-type]
                        weights=tuple(reader.floats(item, where, "weights", (3,))),  # type: ignore[arg-type]
                        enabled=reader.get(item, where, "enabled", bool),
                    )
                )
        for k, item in enumerate(reader.tables(table, path, "joints")):
            where = path + ("joints", k)
            reader.keys(item, where, _JOINT_KEYS)
            name = _scene_name(reader, scene, item, where, "name", "joint")
            with reader.at(where, item):
                group.set_joint(
                    name,
                    mode=reader.get(item, where, "mode", str),
                    weight=reader.get(item, where, "weight", float),
                    limit_margin=reader.get(item, where, "limit_margin", float),
                    max_step=reader.get(item, where, "max_step", float, None),
                )


def _load_objects(reader: DocumentReader, scene: KinematicScene, document: dict[str, Any]) -> None:
    for k, item in enumerate(reader.tables(document, (), "objects")):
        where: Location = ("objects", k)
        kind = reader.get(item, where, "type", str)
        if kind not in ("dummy", *JOINT_KINDS):
            known = ["dummy", *JOINT_KINDS]
            raise reader.fail(where + ("type",), f"unknown type {kind!r}; known: {known}")
        reader.keys(item, where, _OBJECT_KEYS + (("screw_lead",) if kind == "revolute" else ()))
        name = reader.get(item, where, "name", str)
        parent = _scene_name(reader, scene, item, where, "parent", "frame")
        pose = _pose_of(reader, item, where)
        with reader.at(where, item):
            if kind == "dummy":
                scene.add_dummy(name, parent=parent, pose=pose)
            else:
                lead = reader.get(item, where, "screw_lead", float, 0.0)
                scene.add_joint(name, kind, parent=parent, pose=pose, screw_lead=lead)


def _load_scene(reader: DocumentReader, scene: KinematicScene, document: dict[str, Any]) -> None:
    _load_objects(reader, scene, document)
    for k, item in enumerate(reader.tables(document, (), "intervals")):
        where: Location = ("intervals", k)
        cyclic = reader.get(item, where, "cyclic", bool)
        reader.keys(item, where, _INTERVAL_KEYS[:2] if cyclic else _INTERVAL_KEYS)
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
        reader.keys(item, where, _DEPENDENCY_KEYS)
        joint = _scene_name(reader, scene, item, where, "joint", "joint")
        master = _scene_name(reader, scene, item, where, "master", "joint")
        with reader.at(where, item, fallback="master"):
            scene.set_joint_dependency(
                joint,
                master,
                offset=reader.get(item, where, "offset", float),
                mult=reader.get(item, where, "mult", float),
            )


def read_environment(path: str | Path) -> IKEnvironment:
    """Load a setup written by :func:`write_environment` (or by hand).

    Raises:
        FileNotFoundError: No such file.
        ValueError: (:class:`~pinkctl.errors.ConfigurationError`) a directory, text that is not
            UTF-8, invalid TOML, an unknown table or key, or a malformed entry; the message
            names the file and the line.
    """
    from .environment import IKEnvironment

    reader, document = read_document(path)
    version = reader.get(document, (), "format", int)
    if version != FORMAT:
        raise reader.fail(("format",), f"unsupported format {version} (expected {FORMAT})")
    reader.keys(document, (), _TOP_KEYS)
    env = IKEnvironment(_load_robot(reader, document))
    _load_scene(reader, env.scene, document)
    _load_groups(reader, env, document)
    return env
