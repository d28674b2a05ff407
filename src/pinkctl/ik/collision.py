"""Collision checks of IK answers: a configuration is an answer only when every pair of the
robot's geometry and its world is at least the collision margin apart.

:class:`CollisionCheck` is what an :class:`~pinkctl.ik.IKSolver` asks about each converged
configuration (the search then rejects a colliding one and restarts; a local solve reports
it). It reads the pairs of a :class:`~pinkctl.world.CollisionScene` (the robot's active self
pairs and every moving robot geometry against every obstacle) and answers with as little
work as it can:

1. pairs no moved joint changes are left out once, when the check is built (the IK cannot
   change their distance: the other arm of a two-armed robot, the torso against the base);
2. a broad phase bounds every remaining pair from below by the bounding capsules of its two
   geometries in the native kernel (:mod:`pinkctl.ik.capsules`; bounding spheres,
   vectorised over the moved joints' placements, where the kernel cannot run): a
   configuration whose every bound exceeds the margin is accepted with no distance computed
   (the collision-free early exit);
3. the few remaining pairs, nearest bound first, are decided by the kernel's narrow phase
   on coal's own shapes (GJK that accepts a pair only with a proof that it keeps the margin,
   :mod:`pinkctl.ik.capsules`), or, without the kernel or for a shape it does not know, by
   coal's collision test at the pair's margin (``security_margin``: GJK stops as soon as it
   proves the shapes that far apart, about 1 us a pair where a signed distance takes
   10-20); the check stops at the first pair closer than the margin (the early rejection);
   only that pair's distance is measured, for the reason.

The IK's native search runs the same kernel check on every converged configuration inside
its loop (:mod:`pinkctl.ik.query`): a colliding one is rejected there and the search
restarts without returning to Python, so both paths take the same decisions.

Both tests run with the margin plus :data:`_SLACK`, so a configuration accepted here keeps
the margin by
:meth:`CollisionScene.min_distance <pinkctl.world.CollisionScene.min_distance>` as well
(checked over 90,000 pairs of random configurations, franka and ur5 among boxes, spheres,
convex pieces and the floor: no decision differs from the signed distance's).

Defaults (:func:`collision_check`): ``world=None`` is the floor the simulation puts under the
robot (:meth:`World.for_robot <pinkctl.world.World.for_robot>`); ``self_collision=None`` is on
when the robot's description has collision elements. The robot's geometry and its floor are
built once per robot (:func:`robot_collision_model`) and shared by every solver of it.
"""

from __future__ import annotations

import dataclasses
import math
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np
import pinocchio as pin

from .._validation import real_number
from ..core.robot import PinkRobot
from ..errors import InputError
from ..world import CollisionScene, RobotGeometry, World
from ..world.broad_phase import bounding_sphere
from ..world.home_pairs import home_margins
from .branches import BranchFlips, turned_columns
from .capsules import native_broad_phase
from .joints import JointSubset
from .options import IKOptions
from .result import IKResult

__all__ = ["CollisionCheck", "collision_check", "robot_collision_model", "screened"]

#: Robots whose geometry and floor are kept (least recently used dropped first).
_KEPT = 8
_models: OrderedDict[int, tuple[Any, tuple, RobotGeometry, World]] = OrderedDict()
#: Added to each pair's margin in coal's collision test [m]: an accepted configuration then
#: keeps the margin whatever coal's GJK tolerance (1e-6 m) does to the test's rounding.
_SLACK = 1e-5
#: Where the geometry comes from when the description has collision elements.
_COLLISION_SOURCE = "the description's collision elements"


def _fingerprint(robot: PinkRobot) -> tuple:
    """What the geometry and the floor are built from: rebuilt when any of it changes."""
    return (
        id(robot.model),
        id(robot.collision_model),
        np.asarray(robot.q0).tobytes(),
        str(robot.srdf_path),
        repr(robot.floor),
    )


def robot_collision_model(robot: PinkRobot) -> tuple[RobotGeometry, World]:
    """``robot``'s collision geometry and the world of its floor
    (:meth:`World.for_robot <pinkctl.world.World.for_robot>`), built on first use and kept for
    every later solver of the same robot (until the robot's model, home, SRDF or floor
    changes). The floor world is shared: never change it (give ``world=`` instead).
    """
    fingerprint = _fingerprint(robot)
    key = id(robot)
    hit = _models.get(key)
    if hit is not None and hit[0]() is robot and hit[1] == fingerprint:
        _models.move_to_end(key)
        return hit[2], hit[3]
    geometry = RobotGeometry.from_robot(robot)
    floor = World.for_robot(robot)
    _models[key] = (weakref.ref(robot), fingerprint, geometry, floor)
    while len(_models) > _KEPT:
        _models.popitem(last=False)
    return geometry, floor


def checked_settings(world: Any, self_collision: Any, margin: Any) -> float:
    """Check the collision options; returns the margin [m].

    Raises:
        InputError: ``world`` not a World or None, ``self_collision`` not a bool or None,
            ``collision_margin`` negative or not finite.
    """
    if world is not None and not isinstance(world, World):
        raise InputError(f"world: expected a pinkctl.World or None, got {type(world).__name__}")
    if self_collision is not None and not isinstance(self_collision, (bool, np.bool_)):
        raise InputError(f"self_collision: expected True, False or None, got {self_collision!r}")
    value = real_number(margin, "collision_margin")
    if value < 0.0:
        raise InputError(f"collision_margin: expected a non-negative distance [m], got {margin!r}")
    return value


def collision_check(
    robot: PinkRobot, subset: JointSubset, options: IKOptions
) -> CollisionCheck | None:
    """The check of the answers of a solver built from ``options`` (``world``,
    ``self_collision``, ``collision_margin``: module docstring), or None when the robot has
    no geometry to check."""
    world, self_collision = options.world, options.self_collision
    margin = checked_settings(world, self_collision, options.collision_margin)
    geometry, floor = robot_collision_model(robot)
    if self_collision is None:
        self_collision = geometry.source == _COLLISION_SOURCE
    scene = CollisionScene(
        geometry, world if world is not None else floor, self_collision=bool(self_collision)
    )
    check = CollisionCheck(scene, subset, margin, home=robot.q0)
    return check if check.active else None


class CollisionCheck:
    """Whether configurations keep the margin from every pair of a scene (module docstring).

    Args:
        scene: The robot and its world (followed: obstacles moved, added or removed between
            two queries are seen by the next one).
        subset: The joints the IK moves.
        margin: Smallest distance accepted [m].
        home: The robot's home configuration (full ``q``), or None (every pair keeps the
            margin): pairs close there by design keep less (a gripper's jaw beside its
            wrist, links a few mm apart: with the full margin no configuration near home,
            often none at all, would pass; :func:`~pinkctl.world.home_pairs.home_margins`).

    Attributes:
        scene: The scene.
        margin: The margin [m].
        relaxed: The pairs that keep less than the margin because of home:
            ``(a, b, kept)`` (geometry or obstacle names; ``kept`` [m]: half the home
            clearance, or ``-inf`` for a pair in contact at home, which is not checked).
        last: After a rejection, the pair that was too close and its distance:
            ``(a, b, distance)`` (geometry or obstacle names, [m]).
        far_address: The address of the (pairs, n) ``intc`` array of :meth:`far_columns`
            for the native search (row ``k``: the ``k``-th checked pair).
        flips: The branch flips tried after a rejection (:mod:`pinkctl.ik.branches`).
    """

    def __init__(
        self,
        scene: CollisionScene,
        subset: JointSubset,
        margin: float,
        home: np.ndarray | None = None,
    ) -> None:
        self.scene = scene
        self.margin = float(margin)
        self._home = None if home is None else np.array(home, dtype=np.float64)
        self.relaxed: tuple[tuple[str, str, float], ...] = ()
        model = scene.model
        moved = {model.getJointId(name) for name in subset.names}
        # the joints between a joint and the root (the universe excluded)
        self._support = [set(s) - {0} for s in model.supports]
        self._moved = moved
        self._subset = subset
        self.last: tuple[str, str, float] | None = None
        self._build()

    @property
    def active(self) -> bool:
        """Whether the robot has geometry to check (else every answer passes, whatever the
        world holds)."""
        return self.scene.geometry.ngeoms > 0

    def _build(self) -> None:
        """The pairs the moved joints change, and their bounding spheres."""
        scene = self.scene
        objects = scene.geometry_model.geometryObjects
        kept = []
        for k, pair in enumerate(scene.geometry_model.collisionPairs):
            a, b = objects[pair.first].parentJoint, objects[pair.second].parentJoint
            if (self._support[a] ^ self._support[b]) & self._moved:
                kept.append((k, pair.first, pair.second))
        self._index = [k for k, _, _ in kept]
        self._margins = self._pair_margins(kept)
        joints = [(objects[a].parentJoint, objects[b].parentJoint) for _, a, b in kept]
        self._far = turned_columns(scene.model, self._subset, joints)
        self.flips = BranchFlips(scene.model, self._subset, joints)
        self._last_pair = -1
        self.far_address = int(self._far.ctypes.data)
        requests = list(scene.geometry_data.collisionRequests)
        for k, margin in zip(self._index, self._margins):
            requests[k].security_margin = margin + _SLACK
        pairs = np.array([(a, b) for _, a, b in kept], dtype=np.intp).reshape(-1, 2)
        thresholds = np.array(self._margins, dtype=np.float64) + _SLACK
        self._native = native_broad_phase(
            scene.model, scene.geometry_model, pairs, self.margin + _SLACK, thresholds
        )
        self._vouched: np.ndarray | None = None
        if self._native is None:
            self._spheres_of(kept, pairs)

    def _pair_margins(self, kept: list[tuple[int, int, int]]) -> list[float]:
        """The margin of each kept pair: :attr:`margin`, or less for a pair close at home
        (:attr:`relaxed`)."""
        if self._home is None:
            self.relaxed = ()
            return [self.margin] * len(kept)
        margins = list(home_margins(self.scene, self._home, self.margin, self._index))
        objects = self.scene.geometry_model.geometryObjects
        self.relaxed = tuple(
            (objects[a].name, objects[b].name, float(m))
            for (_, a, b), m in zip(kept, margins)
            if m < self.margin
        )
        return margins

    def far_columns(self) -> np.ndarray | None:
        """After a rejection: the moved columns (n,) that are full-turn joints (a sampling
        range of at least 2 pi) between the two geometries of the pair found too close (the
        search turns them away, :func:`pinkctl.ik.search._away`), or None (there are none)."""
        if self._last_pair < 0:
            return None
        far = self._far[self._last_pair]
        return far if far.any() else None

    def branch_starts(self, q: np.ndarray) -> list[np.ndarray]:
        """After a rejection of ``q``: its branch flips' starts (:attr:`flips`)."""
        return self.flips.starts(self._last_pair, q)

    @property
    def last_pair(self) -> int:
        """The checked pair (its position) of the last rejection, or -1."""
        return self._last_pair

    def _spheres_of(self, kept: list[tuple[int, int, int]], pairs: np.ndarray) -> None:
        """The numpy broad phase (bounding spheres), where the kernel's cannot run."""
        objects = self.scene.geometry_model.geometryObjects
        geoms = sorted({g for _, a, b in kept for g in (a, b)})
        joints = sorted({objects[g].parentJoint for g in geoms} - {0})
        self._joints = joints
        slot = {j: s + 1 for s, j in enumerate(joints)}  # slot 0: the universe (identity)
        count = len(objects)
        self._slot = np.zeros(count, dtype=np.intp)
        self._centre = np.zeros((count, 3))
        self._radius = np.zeros(count)
        plane = np.zeros(count, dtype=bool)
        normal = np.zeros((count, 3))
        offset = np.zeros(count)
        for g in geoms:
            obj = objects[g]
            centre, radius = bounding_sphere(obj.geometry)
            if math.isinf(radius):  # a half-space (an obstacle: on the universe)
                plane[g] = True
                normal[g] = obj.placement.rotation[:, 2]
                offset[g] = float(normal[g] @ obj.placement.translation)
                continue
            self._slot[g] = slot.get(obj.parentJoint, 0)
            self._centre[g] = obj.placement.act(centre)
            self._radius[g] = radius
        # a half-space is always the second of its pair (obstacles come after the robot)
        on_plane = plane[pairs[:, 1]]
        self._spheres = pairs[~on_plane]
        self._planes = pairs[on_plane]
        self._sphere_k = np.flatnonzero(~on_plane)
        self._plane_k = np.flatnonzero(on_plane)
        self._normal = normal[self._planes[:, 1]]
        self._offset = offset[self._planes[:, 1]] + self._radius[self._planes[:, 0]]
        self._gap = self._radius[self._spheres[:, 0]] + self._radius[self._spheres[:, 1]]
        self._rotations = np.empty((len(joints) + 1, 3, 3))
        self._rotations[0] = np.eye(3)
        self._translations = np.zeros((len(joints) + 1, 3))

    def _bounds(self) -> np.ndarray:
        """Lower bounds [m] of the kept pairs' distances at the placements just computed."""
        placements = self.scene.data.oMi
        rotations, translations = self._rotations, self._translations
        for s, joint in enumerate(self._joints, start=1):
            m = placements[joint]
            rotations[s] = m.rotation
            translations[s] = m.translation
        slot = self._slot
        centres = np.einsum("gij,gj->gi", rotations[slot], self._centre) + translations[slot]
        bounds = np.empty(len(self._index))
        a, b = self._spheres[:, 0], self._spheres[:, 1]
        bounds[self._sphere_k] = np.linalg.norm(centres[a] - centres[b], axis=1) - self._gap
        if len(self._planes):
            heights = np.einsum("ij,ij->i", self._normal, centres[self._planes[:, 0]])
            bounds[self._plane_k] = heights - self._offset
        return bounds

    def native_address(self) -> int | None:
        """The kernel's check of the current scene (the world's changes followed first), as
        the address the native search reads, or None (no kernel check: the search asks
        :meth:`accepts`)."""
        if self.scene.sync():
            self._build()
        return self._native.address if self._native is not None else None

    def vouch(self, q: np.ndarray) -> None:
        """Record that the native search has just accepted ``q`` (the same object): the next
        :meth:`accepts` of it answers without checking again."""
        self._vouched = q

    def native_rejection(self, k: int, q: np.ndarray) -> None:
        """Set :attr:`last` from the kernel's rejection of its ``k``-th pair at ``q``."""
        scene = self.scene
        pin.updateGeometryPlacements(
            scene.model, scene.data, scene.geometry_model, scene.geometry_data, q
        )
        self._last_pair = k
        self._record(self._index[k])

    def _record(self, pair: int) -> None:
        """:attr:`last` from ``pair``'s distance at the placements just computed."""
        geometry = self.scene.geometry_model
        distance = pin.computeDistance(geometry, self.scene.geometry_data, pair).min_distance
        first = geometry.collisionPairs[pair]
        objects = geometry.geometryObjects
        self.last = (objects[first.first].name, objects[first.second].name, distance)

    def accepts(self, q: np.ndarray) -> bool:
        """Whether every kept pair is at least the margin apart at the full configuration
        ``q`` (else :attr:`last` names the pair found too close)."""
        if q is self._vouched:
            self._vouched = None
            return True
        scene = self.scene
        if scene.sync():
            self._build()
        if not self._index:
            return True
        native = self._native
        if native is not None:
            verdict = native.free(q)
            if verdict >= 0:
                if not verdict:
                    self.native_rejection(native.hit, q)
                return bool(verdict)
        return self._coal_accepts(q)

    def _coal_accepts(self, q: np.ndarray) -> bool:
        """:meth:`accepts` by coal on the pairs the broad phase cannot clear."""
        scene = self.scene
        pin.updateGeometryPlacements(
            scene.model, scene.data, scene.geometry_model, scene.geometry_data, q
        )
        if self._native is not None:
            near = self._native.near(q)
        else:
            bounds = self._bounds()
            near = np.flatnonzero(bounds < self.margin)
            near = near[np.argsort(bounds[near], kind="stable")]
        geometry, gdata = scene.geometry_model, scene.geometry_data
        for k in near:
            if pin.computeCollision(geometry, gdata, self._index[k]):
                self._last_pair = int(k)
                self._record(self._index[k])
                return False
        return True

    def describe_last(self) -> str:
        """The last rejection in words: ``"a-b at 3.2 mm"`` ("" before any)."""
        if self.last is None:
            return ""
        a, b, distance = self.last
        return f"{a}-{b} at {distance * 1e3:.1f} mm"

    def reason(self) -> str:
        """Why a converged configuration is no answer: the pair closer than the margin."""
        return f"in collision: converged with {self.describe_last()} " + (
            f"(collision_margin {self.margin * 1e3:g} mm)"
        )


def screened(check: CollisionCheck | None, result: IKResult) -> IKResult:
    """``result``, or a failure saying so when its configuration is a success that does not
    keep the collision margin (the same object when nothing changes)."""
    if check is None or not result.success or check.accepts(result.q_full):
        return result
    return dataclasses.replace(result, success=False, solutions=0, reason=check.reason())
