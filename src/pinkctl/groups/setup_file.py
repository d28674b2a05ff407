"""A whole IK setup as a human-readable TOML file: save, and load with line-accurate errors.

The file holds (``format = 1``)::

    [robot]                 # name = catalog robot, or urdf (+ srdf); controlled_joints,
                            # tool_frame. No [robot]: an empty environment
    [[objects]]             # dummies and scene joints, parents first: type ("dummy",
                            # "revolute", "prismatic", "spherical"), name, parent, position [m],
                            # rotation (3 rows), screw_lead [m/turn] (revolute)
    [[intervals]]           # joint, cyclic, lower, range (sorted by joint)
    [[dependencies]]        # joint, master, offset, mult (sorted by joint)
    [[joints]]              # the joints' own IK settings and the robot joints' screw leads:
                            # name, mode, weight, limit_margin, max_step, screw_lead
    [[targets]]             # tip, target (sorted by tip)
    [[groups]]              # name, method, damping, max_iterations, flags (names)
    [[groups.elements]]     # tip, target, base, constraint_base, constraints (names),
                            # precision [m, rad], weights, enabled
    [[groups.joints]]       # name and the fields the group overrides: mode, weight,
                            # limit_margin, max_step

The text is written by ``tomli_w`` (arrays one item per line; arrays of short tables as
inline tables). Floats are written with ``repr`` and rotations as matrices, so a saved setup
loads into the same model, the same numbers and the same order: ``save -> load -> solve``
gives bit-identical results, and ``save -> load -> save`` the same text. A dependency given by
a callback cannot be saved (:class:`~pinkctl.errors.InputError`). Any malformed entry raises
:class:`~pinkctl.errors.ConfigurationError` (a ``ValueError``) naming the file and the line
of the offending key (:mod:`pinkctl.groups.setup_reader`, :mod:`pinkctl.groups.setup_loader`):
a key or table a table does not know (``[[group]]``, ``bse``), a frame or joint the scene
lacks, a number written as a string, a value out of its range.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pinocchio as pin
import tomli_w

from ..core.robot import supported_robots
from ..errors import InputError
from .flags import flag_names
from .objects import SceneJoint
from .setup_loader import CONSTRAINT_BITS, FLAG_BITS, load_groups, load_robot, load_scene
from .setup_reader import DocumentReader

if TYPE_CHECKING:
    from .environment import IKEnvironment
    from .group import IKGroup

__all__ = ["FORMAT", "environment_document", "environment_text", "load_environment"]

#: Version of the file layout.
FORMAT = 1

_HEADER = "# pinkctl IK setup (pinkctl.groups): robot, scene objects, joints, groups.\n"
_TOP_KEYS = (
    "format",
    "robot",
    "objects",
    "intervals",
    "dependencies",
    "joints",
    "targets",
    "groups",
)


# ---------------------------------------------------------------------- writing
def _pose(placement: pin.SE3) -> dict[str, Any]:
    return {
        "position": [float(v) for v in placement.translation],
        "rotation": [[float(v) for v in row] for row in placement.rotation],
    }


def _robot(env: IKEnvironment) -> dict[str, Any]:
    robot = env.scene.robot
    assert robot is not None
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


def _laws(env: IKEnvironment) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Intervals and dependencies."""
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
    return intervals, dependencies


def _joints(env: IKEnvironment) -> list[dict[str, Any]]:
    """The joints' IK settings and the robot joints' screw leads, in model order."""
    scene = env.scene
    settings, leads = scene.settings, scene.screw_leads
    entries = []
    for name in list(scene.model.names)[1:]:
        if name not in settings and name not in leads:
            continue
        entry: dict[str, Any] = {"name": name}
        if name in settings:
            values = settings[name]
            entry.update(mode=values.mode, weight=values.weight)
            entry["limit_margin"] = values.limit_margin
            if values.max_step is not None:
                entry["max_step"] = values.max_step
        if name in leads:
            entry["screw_lead"] = leads[name]
        entries.append(entry)
    return entries


def _group(name: str, group: IKGroup) -> dict[str, Any]:
    elements = []
    for element in group.elements:
        entry: dict[str, Any] = {"tip": element.tip, "target": element.target}
        if element.base is not None:
            entry["base"] = element.base
        if element.constraint_base is not None:
            entry["constraint_base"] = element.constraint_base
        entry.update(
            constraints=flag_names(element.constraints, CONSTRAINT_BITS),
            precision=list(element.precision),
            weights=list(element.weights),
            enabled=element.enabled,
        )
        elements.append(entry)
    joints = [
        {"name": joint, **{k: v for k, v in fields.items() if v is not None}}
        for joint, fields in group.joint_overrides.items()
    ]
    return {
        "name": name,
        "method": group.method,
        "damping": group.damping,
        "max_iterations": group.max_iterations,
        "flags": flag_names(group.flags, FLAG_BITS),
        "elements": elements,
        "joints": joints,
    }


def environment_document(env: IKEnvironment) -> dict[str, Any]:
    """The setup as a TOML document (module docstring).

    Raises:
        ValueError: A dependency given by a callback (it cannot be written to a file).
    """
    intervals, dependencies = _laws(env)
    document: dict[str, Any] = {"format": FORMAT}
    if env.scene.robot is not None:
        document["robot"] = _robot(env)
    document.update(
        objects=_objects(env),
        intervals=intervals,
        dependencies=dependencies,
        joints=_joints(env),
        targets=[{"tip": t, "target": g} for t, g in sorted(env.scene.targets.items())],
        groups=[_group(name, group) for name, group in env.groups.items()],
    )
    return document


def environment_text(env: IKEnvironment) -> str:
    """The TOML text of the setup (module docstring)."""
    return _HEADER + tomli_w.dumps(environment_document(env))


# ---------------------------------------------------------------------- reading
def load_environment(reader: DocumentReader, document: dict[str, Any]) -> IKEnvironment:
    """The environment of a parsed setup document (:func:`~pinkctl.groups.setup_reader.
    read_document`, :func:`~pinkctl.groups.setup_reader.parse_document`).

    Raises:
        ValueError: (:class:`~pinkctl.errors.ConfigurationError`) an unknown table or key, or
            a malformed entry; the message names the file and the line.
    """
    from .environment import IKEnvironment

    version = reader.get(document, (), "format", int)
    if version != FORMAT:
        raise reader.fail(("format",), f"unsupported format {version} (expected {FORMAT})")
    reader.keys(document, (), _TOP_KEYS)
    env = IKEnvironment(load_robot(reader, document))
    load_scene(reader, env.scene, document)
    load_groups(reader, env, document)
    return env
