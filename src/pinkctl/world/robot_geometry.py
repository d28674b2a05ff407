"""The robot's own collision geometry and the pairs of it that are never checked.

:meth:`RobotGeometry.from_robot` builds a ``pin.GeometryModel`` of coal shapes from the
robot's description: its collision elements (``robot.collision_model`` when the loader built
it, else built from the description the same way), or its visual elements when it has no
collision element. Triangle meshes become their convex hulls (as MuJoCo collides them): coal's
distance between convex shapes is signed, its distance to a triangle soup is not.

Link pairs that can never or always touch are excluded, each with its reason:

- ``rigidly attached``: links moved by the same joint (a fixed joint between them);
- with an SRDF: its ``disable_collisions`` pairs (``SRDF: <its reason>``, e.g.
  ``SRDF: Adjacent``, ``SRDF: Never``);
- without an SRDF: ``adjacent``, links one moving joint apart (the joint's parent and child
  bodies);
- in both cases, the link pairs still in contact at home (``in contact at home``), as the
  simulation excludes them: a pair no motion can separate would hold the controller forever.

Every other pair of geometries on two different links is an active self pair; the geometry
model's ``collisionPairs`` are exactly those.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import coal
import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import ConfigurationError, InputError
from .mesh import hull_vertices
from .obstacle import convex_shape

__all__ = ["CONTACT_TOLERANCE", "GJK_TOLERANCE", "Exclusion", "RobotGeometry", "srdf_exclusions"]

#: Pairs closer than this at home [m] are "in contact at home".
CONTACT_TOLERANCE = 1e-6
#: Accuracy asked of coal's GJK (pairs apart) in the reference queries [m]; EPA (pairs in
#: penetration) keeps coal's default 1e-6 m: tighter, it fails to converge on curved shapes.
GJK_TOLERANCE = 1e-9


def accurate(data: pin.GeometryData) -> pin.GeometryData:
    """``data`` with every distance request at :data:`GJK_TOLERANCE`, each query started from
    the guess :func:`same_start` sets."""
    for request in data.distanceRequests:
        request.gjk_tolerance = GJK_TOLERANCE
        request.gjk_initial_guess = coal.GJKInitialGuess.CachedGuess
    return data


_GUESS = np.array([1.0, 0.0, 0.0])
_SUPPORT = np.zeros(2, dtype=np.int32)


def same_start(data: pin.GeometryData, pairs: Any) -> None:
    """Start GJK on these pairs (indices) of ``data`` (:func:`accurate`) from one fixed guess:
    coal keeps the last query's support hints, and where the nearest points are not unique
    (parallel faces) they would depend on what was measured before (a controller's commands
    on its history: the same episode twice, two answers)."""
    requests = data.distanceRequests
    for k in pairs:
        request = requests[k]
        request.cached_gjk_guess = _GUESS
        request.cached_support_func_guess = _SUPPORT


@dataclass(frozen=True)
class Exclusion:
    """A link pair whose geometries are never checked against each other.

    Attributes:
        link_a: One link (Pinocchio body frame) name, the smaller of the two by name.
        link_b: The other link.
        reason: Why (module docstring).
    """

    link_a: str
    link_b: str
    reason: str


def srdf_exclusions(path: Path) -> dict[tuple[str, str], str]:
    """The SRDF's ``disable_collisions`` link pairs (sorted by name) and their reasons."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise ConfigurationError(f"cannot read SRDF {path}: {exc}") from exc
    pairs: dict[tuple[str, str], str] = {}
    for element in root.iter("disable_collisions"):
        a, b = sorted((element.get("link1", ""), element.get("link2", "")))
        pairs[(a, b)] = f"SRDF: {element.get('reason') or 'disabled'}"
    return pairs


def _source_geometry(robot: PinkRobot) -> tuple[pin.GeometryModel, str]:
    model = robot.model
    if robot.collision_model is not None and robot.collision_model.ngeoms > 0:
        return robot.collision_model, "the description's collision elements"
    description = robot.description
    if description is None:
        return pin.GeometryModel(), "none (the robot has no description)"
    collision = description.build_collision_model(model)
    if collision.ngeoms > 0:
        return collision, "the description's collision elements"
    if description.kind == "mjcf":
        visual = pin.buildGeomFromMJCF(model, str(description.path), pin.GeometryType.VISUAL)
    else:
        dirs = [str(p) for p in description.package_dirs]
        visual = pin.buildGeomFromUrdfString(
            model, description.xml, pin.GeometryType.VISUAL, package_dirs=dirs
        )
    if visual.ngeoms > 0:
        return visual, "the description's visual elements (it has no collision element)"
    return visual, "none (the description has no collision or visual element)"


def _convex(obj: pin.GeometryObject) -> pin.GeometryObject:
    """A copy of ``obj`` whose triangle mesh, if any, is replaced by its convex hull."""
    shape = obj.geometry
    if isinstance(shape, coal.BVHModelBase):
        vertices = np.asarray(shape.vertices(), dtype=np.float64).reshape(-1, 3)
        # the hull's vertices first (scipy, vectorised): a mesh can have 1e5 vertices
        shape = convex_shape(hull_vertices(vertices, f"geometry {obj.name!r}"))
    elif not isinstance(shape, (coal.ShapeBase, coal.ConvexBase)) or isinstance(
        shape, (coal.Plane, coal.Halfspace)
    ):
        raise InputError(f"geometry {obj.name!r}: {type(shape).__name__} is not supported")
    copy = pin.GeometryObject(obj)
    copy.geometry = shape
    return copy


class RobotGeometry:
    """A robot's collision geometry (coal shapes in a ``pin.GeometryModel``) with its
    active self pairs and its excluded link pairs (module docstring).

    Attributes:
        model: The robot's kinematic model (shared with the robot).
        geometry_model: One geometry object per shape, attached to the robot's joints;
            ``collisionPairs`` are the active self pairs.
        source: Where the shapes came from, in words.
        exclusions: The excluded link pairs, with their reasons.
        links: The link name of each geometry object.
        name: The robot's name.
    """

    def __init__(
        self,
        model: pin.Model,
        geometry_model: pin.GeometryModel,
        exclusions: tuple[Exclusion, ...],
        source: str,
        name: str = "",
    ) -> None:
        self.model = model
        self.geometry_model = geometry_model
        self.exclusions = exclusions
        self.source = source
        self.name = name
        self.links = tuple(model.frames[o.parentFrame].name for o in geometry_model.geometryObjects)

    @classmethod
    def from_robot(
        cls, robot: PinkRobot, *, contact_tolerance: float = CONTACT_TOLERANCE
    ) -> RobotGeometry:
        """Build the geometry of ``robot`` and its exclusions (module docstring).

        Args:
            robot: A loaded robot (its description, SRDF and home configuration are read).
            contact_tolerance: Pairs closer than this at home [m] count as in contact.

        Raises:
            ConfigurationError: An unreadable SRDF or description geometry.
            InputError: A geometry coal cannot measure a distance to (height field,
                octree).
        """
        if not isinstance(robot, PinkRobot):
            raise InputError(f"robot must be a PinkRobot, got {type(robot).__name__}")
        model = robot.model
        try:
            original, source = _source_geometry(robot)
        except (RuntimeError, ValueError) as exc:
            raise ConfigurationError(f"cannot build the geometry of {robot.name}: {exc}") from exc
        geometry = pin.GeometryModel()
        for obj in original.geometryObjects:
            geometry.addGeometryObject(_convex(obj))
        links = [model.frames[o.parentFrame].name for o in geometry.geometryObjects]
        joints = [o.parentJoint for o in geometry.geometryObjects]
        srdf = srdf_exclusions(robot.srdf_path) if robot.srdf_path is not None else None
        reasons: dict[tuple[str, str], str] = {}
        candidates = []
        for i in range(geometry.ngeoms):
            for j in range(i + 1, geometry.ngeoms):
                if links[i] == links[j]:
                    continue
                key = (min(links[i], links[j]), max(links[i], links[j]))
                reason = reasons.get(key) or _reason(model, joints[i], joints[j], key, srdf)
                if reason:
                    reasons[key] = reason
                else:
                    candidates.append((i, j))
        for key, gap in _touching_at_home(model, geometry, candidates, robot.q0, links):
            if gap < contact_tolerance:
                reasons.setdefault(key, "in contact at home")
        for i, j in candidates:
            key = (min(links[i], links[j]), max(links[i], links[j]))
            if key not in reasons:
                geometry.addCollisionPair(pin.CollisionPair(i, j))
        exclusions = tuple(Exclusion(a, b, r) for (a, b), r in sorted(reasons.items()))
        return cls(model, geometry, exclusions, source, robot.name)

    @property
    def ngeoms(self) -> int:
        """Number of geometry objects."""
        return int(self.geometry_model.ngeoms)

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """The active self pairs as geometry index pairs."""
        return tuple((p.first, p.second) for p in self.geometry_model.collisionPairs)

    def exclusion(self, link_a: str, link_b: str) -> Exclusion | None:
        """The exclusion of a link pair (either order), or None when it is checked."""
        key = (min(link_a, link_b), max(link_a, link_b))
        return next((e for e in self.exclusions if (e.link_a, e.link_b) == key), None)

    def report(self) -> str:
        """What the geometry is made of and which pairs are checked, as ``pinkctl inspect``
        prints it."""
        objects = self.geometry_model.geometryObjects
        shapes = Counter(type(o.geometry).__name__.lower() for o in objects)
        lines = [
            f"robot {self.name!r}: {self.ngeoms} collision geometries on "
            f"{len(set(self.links))} links, from {self.source}",
        ]
        if shapes:
            lines.append("  shapes: " + ", ".join(f"{n} {k}" for k, n in shapes.most_common()))
        total = sum(
            1
            for i in range(self.ngeoms)
            for j in range(i + 1, self.ngeoms)
            if self.links[i] != self.links[j]
        )
        lines.append(
            f"  self pairs: {len(self.pairs)} checked of {total} geometry pairs on different "
            f"links ({total - len(self.pairs)} excluded)"
        )
        by_reason: dict[str, list[str]] = {}
        for e in self.exclusions:
            by_reason.setdefault(e.reason, []).append(f"{e.link_a}-{e.link_b}")
        for reason, pairs in sorted(by_reason.items()):
            lines.append(f"  excluded, {reason} ({len(pairs)}): " + ", ".join(pairs))
        return "\n".join(lines)


def _reason(
    model: pin.Model,
    joint_a: int,
    joint_b: int,
    key: tuple[str, str],
    srdf: dict[tuple[str, str], str] | None,
) -> str | None:
    if joint_a == joint_b:
        return "rigidly attached"
    if srdf is not None:
        return srdf.get(key)
    if model.parents[joint_b] == joint_a or model.parents[joint_a] == joint_b:
        return "adjacent"
    return None


def _touching_at_home(
    model: pin.Model,
    geometry: pin.GeometryModel,
    candidates: list[tuple[int, int]],
    q0: np.ndarray,
    links: list[str],
) -> list[tuple[tuple[str, str], float]]:
    """Distance at home of each candidate pair, keyed by its sorted link pair [m]."""
    if not candidates:
        return []
    probe = pin.GeometryModel()
    for obj in geometry.geometryObjects:
        probe.addGeometryObject(obj)
    for i, j in candidates:
        probe.addCollisionPair(pin.CollisionPair(i, j))
    data = accurate(pin.GeometryData(probe))
    pin.computeDistances(model, model.createData(), probe, data, q0)
    return [
        ((min(links[i], links[j]), max(links[i], links[j])), result.min_distance)
        for (i, j), result in zip(candidates, data.distanceResults)
    ]
