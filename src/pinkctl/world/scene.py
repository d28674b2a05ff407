"""A robot in a world: the active pairs and the reference distance queries.

:class:`CollisionScene` puts a robot's geometry (:class:`~pinkctl.world.RobotGeometry`) and a
:class:`~pinkctl.world.World` into one ``pin.GeometryModel``: the robot's geometry objects
first, then one object per obstacle piece, attached to the universe joint (``parentJoint``
0) at the obstacle's pose. Its ``collisionPairs`` are the active pairs: the robot's self
pairs, then every moving robot geometry against every obstacle piece (obstacles are never
checked against each other; the fixed base, geometry on the universe joint, is not paired
with obstacles: no joint moves it, so no command changes those distances).

Distance conventions (every query):

- ``distance``: signed, in m: positive apart, 0 touching, negative in penetration (minus the
  penetration depth: the shortest translation that separates the two). Every pair has a
  signed distance: obstacles and the robot's meshes are convex shapes (coal's GJK and EPA),
  never triangle soups (whose distance is not signed: a shape deep inside reads 0).
- ``point_a``, ``point_b``: witness points on the surfaces of ``a`` (a robot geometry) and
  ``b`` (a robot geometry or an obstacle), in the world frame [m], with
  ``point_b - point_a = distance * normal``.
- ``normal``: unit vector in the world frame from ``a`` toward ``b``: moving ``b`` along it
  (or ``a`` against it) increases the distance, apart or in penetration alike.
- :meth:`CollisionScene.distance_jacobian`: the rate of the distance with the joint
  velocities, ``d(distance)/dq = normal^T (J_b(point_b) - J_a(point_a))`` (``J_x(p)`` the
  world-frame linear Jacobian of the point ``p`` fixed to ``x``'s joint; zero for an
  obstacle), the row a velocity damper bounds. Its sign stays right in penetration.

The scene follows its world: every query first compares the world's ``version`` with the
one it last read, moves the obstacles' geometry objects when only poses changed, and
rebuilds its obstacle objects and pairs when obstacles were added or removed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..errors import InputError, SolverError
from ._checks import distance_limits
from .broad_phase import BoundingSpheres
from .robot_geometry import RobotGeometry, accurate, same_start
from .world import World

if TYPE_CHECKING:
    from ..core.robot import PinkRobot
    from .obstacle import Obstacle

__all__ = ["CollisionScene", "PairDistance", "ScenePair"]


@dataclass(frozen=True)
class ScenePair:
    """One active pair of a scene.

    Attributes:
        index: Its place in :attr:`CollisionScene.pairs` (and in the geometry model's
            ``collisionPairs``).
        a: Name of the robot geometry object.
        b: Name of the other: a robot geometry object, or an obstacle (a mesh's pieces are
            ``name[k]``).
        link_a: The link ``a`` is on.
        body_b: The link ``b`` is on, or the obstacle's name.
        kind: ``"self"`` or ``"obstacle"``.
        geometry_a: Index of ``a`` in the scene's geometry model.
        geometry_b: Index of ``b``.
    """

    index: int
    a: str
    b: str
    link_a: str
    body_b: str
    kind: str
    geometry_a: int
    geometry_b: int


@dataclass(frozen=True)
class PairDistance:
    """The signed distance of one pair at one configuration (module docstring).

    Attributes:
        pair: The pair.
        distance: Signed distance [m], negative in penetration.
        point_a: Witness point on ``a``, world frame [m].
        point_b: Witness point on ``b``, world frame [m].
        normal: Unit normal from ``a`` toward ``b``, world frame.
    """

    pair: ScenePair
    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray


#: A distance beyond this [m] is coal's failure value, not a distance.
FAILED = 1e6
#: At most this many pairs are measured one by one (more: one pass over the active pairs).
FEW = 16


class CollisionScene:
    """A robot's geometry and a world, with the active pairs and the reference queries
    (module docstring).

    Args:
        robot: A loaded robot (its geometry is built with
            :meth:`RobotGeometry.from_robot <pinkctl.world.RobotGeometry.from_robot>`) or a
            :class:`~pinkctl.world.RobotGeometry`.
        world: The obstacles (default: an empty world, self pairs only). The scene keeps a
            reference and follows its changes.
        self_collision: Check the robot's self pairs (False: obstacle pairs only).

    Attributes:
        geometry: The robot's geometry.
        world: The world followed.
        model: The robot's kinematic model.
        data: Pinocchio data the queries write.
        geometry_model: Robot geometry objects, then obstacle pieces; ``collisionPairs`` =
            :attr:`pairs`.
        geometry_data: Its data (coal's GJK asked for
            :data:`~pinkctl.world.robot_geometry.GJK_TOLERANCE` accuracy).
        measured: How many pairs coal measured in the last query (all of them for
            :meth:`distances`, those the broad phase kept for :meth:`pairs_within`).
        placed: (ngeoms,) the world version each geometry object was last placed at.
    """

    def __init__(
        self,
        robot: PinkRobot | RobotGeometry,
        world: World | None = None,
        *,
        self_collision: bool = True,
    ) -> None:
        if world is not None and not isinstance(world, World):
            raise InputError(f"world must be a pinkctl.World or None, got {type(world).__name__}")
        if not isinstance(self_collision, bool):
            raise InputError(f"self_collision must be True or False, got {self_collision!r}")
        self.geometry = (
            robot if isinstance(robot, RobotGeometry) else RobotGeometry.from_robot(robot)
        )
        self.world = world if world is not None else World()
        self.self_collision = self_collision
        self.model = self.geometry.model
        self.data = self.model.createData()
        self._records: tuple[Obstacle, ...] = ()  # the obstacles as last built or placed
        self._pieces: list[list[int]] = []
        self._build()
        self._version = self.world.version

    # ------------------------------------------------------------------ structure
    def _build(self) -> None:
        robot = self.geometry
        model = pin.GeometryModel()
        for obj in robot.geometry_model.geometryObjects:
            model.addGeometryObject(obj)
        pairs: list[ScenePair] = []
        if self.self_collision:
            for i, j in robot.pairs:
                pairs.append(self._pair(len(pairs), i, j, robot.links[j], "self", model))
        self._add_obstacles(model, pairs)
        for pair in pairs:
            model.addCollisionPair(pin.CollisionPair(pair.geometry_a, pair.geometry_b))
        self.geometry_model = model
        self.geometry_data = accurate(pin.GeometryData(model))
        self._results = list(self.geometry_data.distanceResults)  # 5x cheaper than indexing
        self._pairs: tuple[ScenePair, ...] = tuple(pairs)
        index = np.array([[p.geometry_a, p.geometry_b] for p in pairs], dtype=np.intp)
        self._spheres = BoundingSpheres(model, index.reshape(-1, 2))
        self._all = np.ones((model.ngeoms, model.ngeoms), dtype=bool)
        self._mask = np.zeros_like(self._all)  # the pairs_within's active pairs
        self._chosen: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.intp),) * 2
        self.measured, self._culled = 0, False
        self.placed = np.full(model.ngeoms, self.world.version)

    def _add_obstacles(self, model: pin.GeometryModel, pairs: list[ScenePair]) -> None:
        """Add each obstacle piece to ``model`` (on the universe joint, at the obstacle's
        placement) and its pairs with every moving robot geometry to ``pairs``."""
        moving = [g for g in range(self.geometry.ngeoms) if model.geometryObjects[g].parentJoint]
        self._records, self._pieces = self.world.obstacles, []
        for obstacle in self._records:
            indices = []
            for k, shape in enumerate(obstacle.shapes):
                name = obstacle.name if len(obstacle.shapes) == 1 else f"{obstacle.name}[{k}]"
                obj = pin.GeometryObject(name, 0, 0, obstacle.placement, shape)
                indices.append(model.addGeometryObject(obj))
            self._pieces.append(indices)
            for g in moving:
                for index in indices:
                    pairs.append(self._pair(len(pairs), g, index, obstacle.name, "obstacle", model))

    @property
    def pairs(self) -> tuple[ScenePair, ...]:
        """The active pairs (after following the world's changes): the robot's self pairs,
        then each moving robot geometry against each obstacle piece."""
        self.sync()
        return self._pairs

    def _pair(
        self, index: int, a: int, b: int, body_b: str, kind: str, model: pin.GeometryModel
    ) -> ScenePair:
        objects = model.geometryObjects
        return ScenePair(
            index, objects[a].name, objects[b].name, self.geometry.links[a], body_b, kind, a, b
        )

    def sync(self) -> bool:
        """Follow the world's changes since the last call; True when something changed."""
        world = self.world
        if world.version == self._version:
            return False
        records, old = world.obstacles, self._records
        if len(records) == len(old) and all(  # the same pieces: only placements changed
            r.name == o.name and r.shapes is o.shapes for r, o in zip(records, old)
        ):
            objects, moved = self.geometry_model.geometryObjects, []
            for record, before, indices in zip(records, old, self._pieces):
                if record is not before:  # a moved obstacle: a new record
                    moved += indices
                    for index in indices:
                        objects[index].placement = record.placement
            self._spheres.refresh(self.geometry_model, moved)
            self._records, self.placed[moved] = records, world.version
        else:
            self._build()
        self._version = world.version
        return True

    # ------------------------------------------------------------------ queries
    def _configuration(self, q: Any) -> np.ndarray:
        try:
            array = np.asarray(q, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"q must be {self.model.nq} real numbers, got {q!r}") from None
        if array.shape != (self.model.nq,):
            raise InputError(f"q must have shape ({self.model.nq},), got {array.shape}")
        if not np.isfinite(array).all():
            raise InputError("q must be finite (no NaN or infinity)")
        return array

    def _result(self, k: int) -> PairDistance:
        result = self._results[k]
        if not -FAILED < result.min_distance < FAILED:
            result = self._measured_again(k)
        return PairDistance(
            self._pairs[k],
            result.min_distance,
            result.getNearestPoint1(),  # a copy
            result.getNearestPoint2(),
            result.normal.copy(),  # a view of coal's result: copied
        )

    def _measured_again(self, k: int) -> Any:
        """Pair ``k`` measured again with coal's robust settings after no finite distance (EPA
        fails as -1.8e308; never seen in 3,000 random franka configurations)."""
        request = self.geometry_data.distanceRequests[k]
        saved = (request.gjk_tolerance, request.epa_tolerance, request.epa_max_iterations)
        request.gjk_tolerance, request.epa_tolerance = 1e-6, 1e-5
        request.epa_max_iterations = 256
        try:
            result = pin.computeDistance(self.geometry_model, self.geometry_data, k)
        finally:
            request.gjk_tolerance, request.epa_tolerance, request.epa_max_iterations = saved
        if not -FAILED < result.min_distance < FAILED:
            pair = self._pairs[k]
            raise SolverError(f"coal could not measure the distance of {pair.a} and {pair.b}")
        return result

    def distances(self, q: Any) -> list[PairDistance]:
        """The signed distance of every active pair at configuration ``q`` (Pinocchio's
        ``computeDistances`` over all pairs), in :attr:`pairs` order."""
        q = self._configuration(q)
        self.sync()
        if self._culled:
            self.geometry_data.setActiveCollisionPairs(self.geometry_model, self._all)
            self._culled = False
        same_start(self.geometry_data, range(len(self._pairs)))
        pin.computeDistances(self.model, self.data, self.geometry_model, self.geometry_data, q)
        self.measured = len(self._pairs)
        return [self._result(k) for k in range(len(self._pairs))]

    def pairs_within(self, q: Any, distance: float | np.ndarray) -> list[PairDistance]:
        """The pairs closer than ``distance`` [m] (one number, or one per pair in
        :attr:`pairs` order) at ``q``, in :attr:`pairs` order. A broad phase
        (:mod:`pinkctl.world.broad_phase`) skips the pairs whose bounding spheres are
        farther apart than their ``distance`` (not a handful); coal measures the others."""
        q = self._configuration(q)
        limit = distance_limits(distance)
        self.sync()
        model, data = self.model, self.data
        geometry, gdata = self.geometry_model, self.geometry_data
        pin.updateGeometryPlacements(model, data, geometry, gdata, q)
        if not self._pairs:
            return []
        if limit.shape != (1,) and limit.shape != (len(self._pairs),):
            raise InputError(
                f"distance must be one number or {len(self._pairs)} (one per pair), "
                f"got shape {limit.shape}"
            )
        few = np.flatnonzero(limit > -np.inf) if limit.size > 1 else limit[:0]
        if limit.size > 1 and len(few) <= FEW:  # a handful asked: coal measures them all
            near = few
        else:
            near = np.flatnonzero(self._spheres.lower_bounds(data.oMi) < limit)
        same_start(gdata, near.tolist())
        if len(near) <= FEW:  # one by one: no pass over every pair
            for k in near.tolist():
                pin.computeDistance(geometry, gdata, k)
        else:
            mask = self._mask
            mask[self._chosen] = False
            pairs = self._spheres.pairs[near]
            self._chosen = (pairs[:, 0], pairs[:, 1])
            mask[self._chosen] = True
            gdata.setActiveCollisionPairs(geometry, mask)
            self._culled = True
            pin.computeDistances(geometry, gdata)
        self.measured = len(near)
        found = []
        limits = np.broadcast_to(limit, (len(self._pairs),)).tolist()
        results = self._results
        for k in near.tolist():  # a PairDistance only for those kept (or measured again)
            if not limits[k] <= results[k].min_distance < FAILED:
                found.append(self._result(k))
        return [d for d in found if d.distance < limits[d.pair.index]]

    def in_collision(self, q: Any, margin: float = 0.0) -> bool:
        """Whether some active pair is closer than ``margin`` [m] at ``q`` (0: penetrates)."""
        return bool(self.pairs_within(q, margin))

    def closest(self, q: Any) -> PairDistance | None:
        """The pair of smallest signed distance at ``q``, None without pairs."""
        found = self.distances(q)
        return min(found, key=lambda d: d.distance) if found else None

    def min_distance(self, q: Any) -> float:
        """The smallest signed distance over the active pairs at ``q`` [m], inf without pairs."""
        closest = self.closest(q)
        return closest.distance if closest is not None else float("inf")

    # ------------------------------------------------------------------ derivatives
    def distance_jacobians(self, q: Any, distances: Sequence[PairDistance]) -> np.ndarray:
        """(K, nv) rows ``d(distance)/dq`` of ``distances`` measured at ``q`` (module
        docstring): ``distance(q + dq) ~ distance(q) + row @ dq`` for a small tangent
        ``dq`` (``pin.integrate``).

        A point ``p`` fixed to a joint of world-frame Jacobian ``(J_lin, J_ang)`` has
        ``n . v_p = n^T J_lin + (p x n)^T J_ang``: one Jacobian per joint, then array ops.
        """
        q = self._configuration(q)
        for k, d in enumerate(distances):
            if not isinstance(d, PairDistance):
                raise InputError(f"distances[{k}] must be a PairDistance, got {d!r}")
        if not distances:
            return np.zeros((0, self.model.nv))
        model, data = self.model, self.data
        pin.computeJointJacobians(model, data, q)
        objects = self.geometry_model.geometryObjects
        count = len(distances)
        joints = np.zeros((count, 2), dtype=np.intp)
        normals, points = np.empty((count, 3)), np.empty((2, count, 3))
        for k, d in enumerate(distances):
            pair = d.pair
            joints[k] = objects[pair.geometry_a].parentJoint, objects[pair.geometry_b].parentJoint
            normals[k], points[0, k], points[1, k] = d.normal, d.point_a, d.point_b
        jacobians = np.zeros((model.njoints, 6, model.nv))  # the universe's stays 0
        for j in np.unique(joints).tolist():
            if j:
                jacobians[j] = pin.getJointJacobian(model, data, j, pin.ReferenceFrame.WORLD)
        rows = np.zeros((count, model.nv))
        for side, sign in ((0, -1.0), (1, 1.0)):
            jacobian = jacobians[joints[:, side]]
            rows += sign * np.einsum("ki,kij->kj", normals, jacobian[:, :3])
            p, n = points[side], normals  # p x n, written out (np.cross is slow on small arrays)
            moments = p[:, [1, 2, 0]] * n[:, [2, 0, 1]] - p[:, [2, 0, 1]] * n[:, [1, 2, 0]]
            rows += sign * np.einsum("ki,kij->kj", moments, jacobian[:, 3:])
        return rows

    def distance_jacobian(self, q: Any, distance: PairDistance) -> np.ndarray:
        """(nv,) row ``d(distance)/dq`` of one pair measured at ``q``."""
        return self.distance_jacobians(q, [distance])[0]

    def report(self) -> str:
        """The robot's geometry report, the world's obstacles and the pair counts."""
        kinds = [p.kind for p in self.pairs]
        objects = self.geometry_model.geometryObjects[: self.geometry.ngeoms]
        base = [o.name for o in objects if o.parentJoint == 0]
        lines = [self.geometry.report(), self.world.report()]
        lines.append(
            f"scene: {kinds.count('self')} self pairs, {kinds.count('obstacle')} obstacle pairs"
        )
        if base and len(self.world):
            lines.append("  fixed base not paired with obstacles: " + ", ".join(base))
        return "\n".join(lines)
