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
:class:`~pinkctl.errors.ConfigurationError` (a ``ValueError``) naming the file and the line.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..core.robot import load_pink_robot, load_pink_supported_robot, supported_robots
from ..errors import ConfigurationError, InputError, PinkctlError
from .element import IKElement
from .flags import AXES, Constraint, GroupFlags, flag_names
from .objects import JOINT_KINDS, SceneJoint
from .toml_text import LineIndex, dumps

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

if TYPE_CHECKING:
    from .environment import IKEnvironment

__all__ = ["FORMAT", "environment_document", "read_environment", "write_environment"]

#: Version of the file layout.
FORMAT = 1

_HEADER = "pinkctl IK setup (pinkctl.groups): robot, scene objects, joints, groups."
_CONSTRAINTS = tuple(bit for bit, _ in AXES)
_FLAGS = tuple(GroupFlags)


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
class _Reader:
    """Typed access to the parsed document; errors name the file and the line."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.index = LineIndex(text)

    def fail(self, path: tuple[str | int, ...], message: str) -> ConfigurationError:
        line = self.index.line(path) or 1
        where = ".".join(str(p) for p in path)
        return ConfigurationError(f"{self.source}, line {line} ({where}): {message}")

    @contextmanager
    def at(self, path: tuple[str | int, ...], table: dict[str, Any]) -> Iterator[None]:
        """Report a pinkctl error raised inside as a configuration error at the key of
        ``table`` its message starts with (pinkctl's messages name the argument first), else
        at ``path``."""
        try:
            yield
        except ConfigurationError:
            raise
        except PinkctlError as exc:
            word = re.match(r"[A-Za-z_]+", str(exc))
            key = word.group(0) if word is not None and word.group(0) in table else None
            raise self.fail(path if key is None else path + (key,), str(exc)) from exc

    def get(
        self,
        table: dict[str, Any],
        path: tuple[str | int, ...],
        key: str,
        kind: Any,
        default: Any = ...,
    ) -> Any:
        if key not in table:
            if default is ...:
                raise self.fail(path, f"missing key {key!r}")
            return default
        value = table[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(path + (key,), f"{key} has the wrong type: {value!r}")
        return value

    def tables(self, table: dict[str, Any], path: tuple[str | int, ...], key: str) -> list[Any]:
        items = self.get(table, path, key, list, [])
        if not all(isinstance(item, dict) for item in items):
            raise self.fail(path + (key,), f"{key} must be an array of tables")
        return items

    def floats(self, table: dict[str, Any], path: tuple[str | int, ...], key: str) -> Any:
        values = self.get(table, path, key, list)
        try:
            return np.array(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise self.fail(path + (key,), f"{key} must hold numbers: {values!r}") from exc

    def names(
        self, table: dict[str, Any], path: tuple[str | int, ...], key: str, members: tuple[Any, ...]
    ) -> int:
        known = {str(m.name).lower(): int(m) for m in members}
        value = 0
        for name in self.get(table, path, key, list):
            if name not in known:
                raise self.fail(path + (key,), f"unknown name {name!r}; known: {list(known)}")
            value |= known[name]
        return value


def _load_robot(reader: _Reader, document: dict[str, Any]) -> Any:
    path: tuple[str | int, ...] = ("robot",)
    table = reader.get(document, (), "robot", dict)
    overrides: dict[str, Any] = {}
    if "controlled_joints" in table:
        overrides["controlled_joint_names"] = reader.get(table, path, "controlled_joints", list)
    if "tool_frame" in table:
        overrides["tool_frame"] = reader.get(table, path, "tool_frame", str)
    with reader.at(path, table):
        if "name" in table:
            return load_pink_supported_robot(reader.get(table, path, "name", str), **overrides)
        srdf = reader.get(table, path, "srdf", str, None)
        return load_pink_robot(reader.get(table, path, "urdf", str), srdf_path=srdf, **overrides)


def _pose_of(reader: _Reader, table: dict[str, Any], path: tuple[str | int, ...]) -> np.ndarray:
    matrix = np.eye(4)
    position = reader.floats(table, path, "position")
    rotation = reader.floats(table, path, "rotation")
    if position.shape != (3,) or rotation.shape != (3, 3):
        raise reader.fail(path + ("rotation",), "position needs 3 numbers and rotation 3 rows of 3")
    matrix[:3, 3], matrix[:3, :3] = position, rotation
    return matrix


def _load_groups(reader: _Reader, env: IKEnvironment, document: dict[str, Any]) -> None:
    for g, table in enumerate(reader.tables(document, (), "groups")):
        path: tuple[str | int, ...] = ("groups", g)
        with reader.at(path, table):
            group = env.add_group(
                reader.get(table, path, "name", str),
                method=reader.get(table, path, "method", str),
                damping=reader.get(table, path, "damping", float),
                max_iterations=reader.get(table, path, "max_iterations", int),
                flags=reader.names(table, path, "flags", _FLAGS),
            )
        for k, item in enumerate(reader.tables(table, path, "elements")):
            where = path + ("elements", k)
            with reader.at(where, item):
                group.add_element(
                    IKElement(
                        reader.get(item, where, "tip", str),
                        reader.get(item, where, "target", str),
                        base=reader.get(item, where, "base", str, None),
                        constraint_base=reader.get(item, where, "constraint_base", str, None),
                        constraints=Constraint(
                            reader.names(item, where, "constraints", _CONSTRAINTS)
                        ),
                        precision=tuple(reader.floats(item, where, "precision")),  # type: ignore[arg-type]
                        weights=tuple(reader.floats(item, where, "weights")),  # type: ignore[arg-type]
                        enabled=reader.get(item, where, "enabled", bool),
                    )
                )
        for k, item in enumerate(reader.tables(table, path, "joints")):
            where = path + ("joints", k)
            with reader.at(where, item):
                group.set_joint(
                    reader.get(item, where, "name", str),
                    mode=reader.get(item, where, "mode", str),
                    weight=reader.get(item, where, "weight", float),
                    limit_margin=reader.get(item, where, "limit_margin", float),
                    max_step=reader.get(item, where, "max_step", float, None),
                )


def _load_scene(reader: _Reader, env: IKEnvironment, document: dict[str, Any]) -> None:
    scene = env.scene
    for k, item in enumerate(reader.tables(document, (), "objects")):
        where: tuple[str | int, ...] = ("objects", k)
        kind = reader.get(item, where, "type", str)
        if kind not in ("dummy", *JOINT_KINDS):
            raise reader.fail(where + ("type",), f"unknown type {kind!r}")
        name = reader.get(item, where, "name", str)
        parent = reader.get(item, where, "parent", str)
        pose = _pose_of(reader, item, where)
        with reader.at(where, item):
            if kind == "dummy":
                scene.add_dummy(name, parent=parent, pose=pose)
            else:
                lead = reader.get(item, where, "screw_lead", float, 0.0)
                scene.add_joint(name, kind, parent=parent, pose=pose, screw_lead=lead)
    for k, item in enumerate(reader.tables(document, (), "intervals")):
        where = ("intervals", k)
        with reader.at(where, item):
            scene.set_joint_interval(
                reader.get(item, where, "joint", str),
                cyclic=reader.get(item, where, "cyclic", bool),
                lower=reader.get(item, where, "lower", float, None),
                range=reader.get(item, where, "range", float, None),
            )
    for k, item in enumerate(reader.tables(document, (), "dependencies")):
        where = ("dependencies", k)
        with reader.at(where, item):
            scene.set_joint_dependency(
                reader.get(item, where, "joint", str),
                reader.get(item, where, "master", str),
                offset=reader.get(item, where, "offset", float),
                mult=reader.get(item, where, "mult", float),
            )


def read_environment(path: str | Path) -> IKEnvironment:
    """Load a setup written by :func:`write_environment` (or by hand).

    Raises:
        FileNotFoundError: No such file.
        ValueError: (:class:`~pinkctl.errors.ConfigurationError`) a malformed file; the message
            names the line.
    """
    from .environment import IKEnvironment

    source = Path(path)
    text = source.read_text(encoding="utf-8")
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{source}: {exc}") from exc
    reader = _Reader(str(source), text)
    version = reader.get(document, (), "format", int)
    if version != FORMAT:
        raise reader.fail(("format",), f"unsupported format {version} (expected {FORMAT})")
    env = IKEnvironment(_load_robot(reader, document))
    _load_scene(reader, env, document)
    _load_groups(reader, env, document)
    return env
