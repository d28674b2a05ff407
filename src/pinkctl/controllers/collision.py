"""Collision avoidance in an IK controller's tick (self-collision, a world, the floor).

This module is long because the tick's collision steps (following the world, influence
distances, rows, the solve and the status) share one object's state; the approach policy
of the ticks with rows is split out (:mod:`~pinkctl.controllers.boxed_approach`).

:class:`CollisionAvoidance` holds a :class:`~pinkctl.world.CollisionScene` of the robot and
its world (the user's :class:`~pinkctl.world.World`, followed every tick as it changes, plus
the robot's floor) and a :class:`~pinkctl.qp.CollisionLimit`. Each tick, at the *command*
configuration (the last command, where the next one starts):

1. the influence distance of this tick beyond each pair's margin: the distance any point of
   the robot can travel before it stops from the fastest velocity the shaper's box allows
   (``sum_i R_i (V_i tau + V_i^2 / (2 s a_i))``: ``R_i`` a bound of the lever of joint
   ``i`` over the geometry it moves, ``V_i`` its speed bound this tick, ``a_i`` its
   acceleration limit, ``s`` the braking share: no row of a pair farther than this can
   bind), plus :data:`INFLUENCE_BUFFER`, plus for the pairs of an obstacle that moved on
   the last tick its step times ``(tau +`` :data:`ANTICIPATION` ``) / dt``, at most
   :data:`MAX_INFLUENCE`;
2. the pairs within it (broad phase, then coal), each with a velocity-damper row; rows that
   cannot bind inside the shaper's box are dropped;
3. no row left: the tick runs as without avoidance (same QP, same shaper policy, same
   command); else (:attr:`~pinkctl.controllers.tick_mode.TickMode.BOXED`) the command is the
   shaper's approach toward the tasks' velocity with the rows, inside the shaper's box and
   meeting the rows (:mod:`~pinkctl.controllers.boxed_approach`; with rows that conflict,
   or without acceleration limits, the QP with the rows inside the box), so every command
   keeps the four limits, and a row binding is reported
   (:meth:`CollisionAvoidance.blocking`: the controller's status ``BLOCKED``).

Pairs close at home follow :mod:`pinkctl.world.home_pairs` (the global IK's policy too): a
self pair closer than twice the margin keeps half its home clearance (one in contact is not
checked), so does a link within the margin of the floor; a self pair within
``TURNING_ZONE`` of its margin at home gets no corner rows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin
from pink import Configuration

from .._validation import real_number
from ..core.robot import PinkRobot
from ..errors import InputError
from ..motion.shaper import MotionShaper
from ..qp import BRAKING_SHARE, CollisionLimit, CollisionRows, QPSolveError
from ..qp.collision_limit import TURNING_ZONE
from ..world import FLOOR, CollisionScene, Obstacle, RobotGeometry, World
from ..world.home_pairs import home_margins
from ..world.still_pairs import drop_still_pairs, still_geometries
from .boxed_approach import BoxedApproach
from .collision_check import QuietCheck, quiet_check
from .levers import levers
from .tick_mode import TickMode

if TYPE_CHECKING:
    from ._arguments import QPSettings
    from .ik_problem import IKProblem
    from .joint_mapping import JointMapping

__all__ = [
    "ANTICIPATION",
    "INFLUENCE_BUFFER",
    "MAX_INFLUENCE",
    "CollisionAvoidance",
    "check_collision_arguments",
]

#: Gap [m] added to the braking distance (the linearisation between ticks).
INFLUENCE_BUFFER = 1e-3
#: How far ahead [s] an obstacle's motion (its last step) widens the influence distance.
ANTICIPATION = 0.1
#: The motions of a world standing still (one object: the quiet check is told it once).
_STILL: dict[str, pin.SE3] = {}
#: Largest influence distance beyond the margin [m].
MAX_INFLUENCE = 0.5
#: Time constant of a gap's approach without acceleration limits, in control periods.
PLAIN_TICKS = 5
#: Smallest time constant with acceleration limits, in control periods.
SMOOTH_TICKS = 2


def check_collision_arguments(
    world: Any, self_collision: Any, margin: Any
) -> tuple[World | None, bool | None, float]:
    """The controller's ``world``, ``self_collision`` and ``collision_margin``, checked
    (InputError naming the argument)."""
    if world is not None and not isinstance(world, World):
        raise InputError(f"world must be a pinkctl.World or None, got {type(world).__name__}")
    if self_collision is not None and not isinstance(self_collision, bool):
        raise InputError(f"self_collision must be None, True or False, got {self_collision!r}")
    margin = real_number(margin, "collision_margin", low=0.0, high=1.0)
    return world, self_collision, margin


class CollisionAvoidance:
    """The collision rows of a controller's tick (module docstring).

    Args:
        robot: The controller's robot.
        geometry: Its collision geometry (its self pairs that no controlled joint moves are
            removed from it).
        joints: The controller's joint mapping (QP columns).
        shaper: The controller's motion shaper (its box and limits).
        world: The user's world (followed as it changes), or None.
        self_collision: Check the robot against itself.
        margin: Smallest distance kept [m].

    Raises:
        InputError: ``self_collision=True`` for a robot without any geometry.
    """

    def __init__(
        self,
        robot: PinkRobot,
        geometry: RobotGeometry,
        joints: JointMapping,
        shaper: MotionShaper,
        *,
        world: World | None,
        self_collision: bool,
        margin: float,
    ) -> None:
        if self_collision and geometry.ngeoms == 0:
            raise InputError(f"self_collision=True, but {robot.name} has no collision geometry")
        model = robot.model
        self._columns = np.asarray(joints.qp_columns[joints.n_base :], dtype=np.intp)
        drop_still_pairs(geometry, self._columns)  # no command moves them (a hand's fingers)
        self.world = world
        self._mirror = World.for_robot(robot)
        self._follows = world is None or FLOOR not in world
        self._seen = -1
        self._records: dict[str, Obstacle] = {}  # the user's obstacles at the last tick
        self._motions: dict[str, pin.SE3] = _STILL
        self._told: tuple[Any, Any] = (None, None)  # the check and motions it was last told
        self._terms: tuple[Any, ...] = (None, {}, ())  # _approach's: pairs, by obstacle, still
        self._follow_world()
        self.scene = CollisionScene(geometry, self._scene_world(), self_collision=self_collision)
        self._joints, self._shaper = joints, shaper
        self.dt = shaper.dt
        n_self = sum(1 for p in self.scene.pairs if p.kind == "self")
        home = np.array([d.distance for d in self.scene.distances(robot.q0)[:n_self]])
        margins = home_margins(self.scene, robot.q0, margin)
        # a link on the floor at home keeps half its clearance; a shape no joint moves: none
        still = still_geometries(geometry, self._columns)
        floor = {
            (p.a, p.body_b): -np.inf if still[p.geometry_a] else float(m)
            for p, m in zip(self.scene.pairs[n_self:], margins[n_self:])
            if still[p.geometry_a] or (p.body_b == FLOOR and m < margin)
        }
        limits = shaper.limits
        acceleration = np.zeros(model.nv)
        tau = PLAIN_TICKS * self.dt
        if shaper.smooth:
            assert limits.acceleration is not None
            self._accel = np.asarray(limits.acceleration, dtype=np.float64)
            acceleration[self._columns] = self._accel
            # the acceleration turns from +a to -a (2 a / j) before the braking starts
            ramp = 0.0 if limits.jerk is None else float(np.max(2.0 * self._accel / limits.jerk))
            tau = max(ramp + self.dt, SMOOTH_TICKS * self.dt)
        self.limit = CollisionLimit(
            self.scene,
            margin=margin,
            influence_distance=margin + MAX_INFLUENCE,
            time_constant=tau,
            acceleration=acceleration if shaper.smooth else None,
            # pairs close at home keep half their home clearance (pinkctl.world.home_pairs)
            pair_margins=margins[:n_self],
            turning_pairs=home - margin > TURNING_ZONE,
            obstacle_margins=floor,
        )
        self._levers = levers(model, geometry.geometry_model, self._columns)
        self._columns_of: tuple[int, Any, np.ndarray] = (-1, (), np.zeros((0, self._columns.size)))
        self.qp: Any = None
        self.approach: BoxedApproach | None = None
        self._rows: CollisionRows | None = None
        self._box = (np.zeros(0), np.zeros(0))
        self._q_home = np.array(robot.q0, dtype=np.float64)
        self._check: tuple[int, QuietCheck | None, Any] = (-1, None, None)  # with its pairs
        # the native check's pairs that may have a row this tick (None: every pair)
        self._flagged: np.ndarray | None = None
        self._unquiet: Any = None  # the shaper's command the check last said "not quiet" at
        self._followed: Any = None  # the shaper's command the world was last followed at
        self._none = CollisionRows(np.zeros((0, model.nv)), np.zeros(0), (), np.zeros(0))

    @classmethod
    def build(
        cls,
        robot: PinkRobot,
        joints: JointMapping,
        shaper: MotionShaper,
        world: Any,
        self_collision: Any,
        margin: Any,
    ) -> CollisionAvoidance | None:
        """The avoidance of a controller from its ``world``, ``self_collision`` and
        ``collision_margin`` arguments (checked first: InputError naming the argument), or
        None when there is nothing to avoid (no world and self-collision off).

        ``self_collision=None`` is on, with or without a ``world``, when the description has
        collision elements (built from it whether or not the loader built a collision model)
        and the base is fixed; a floating-base robot stays off (it balances on its feet's
        contacts). With self-collision on, the robot's floor is avoided too (the simulation's
        floor is part of every world). docs/collision.md, "Default on", has the figures."""
        world, self_collision, margin = check_collision_arguments(world, self_collision, margin)
        if world is None and (
            self_collision is False or (self_collision is None and robot.floating_base)
        ):
            return None  # no geometry to build
        geometry = RobotGeometry.from_robot(robot)
        if self_collision is None:
            self_collision = "collision elements" in geometry.source and not robot.floating_base
        if not self_collision and world is None:
            return None
        on = self_collision
        return cls(robot, geometry, joints, shaper, world=world, self_collision=on, margin=margin)

    def compile(
        self, problem: IKProblem, model: pin.Model, columns: np.ndarray, settings: QPSettings
    ) -> None:
        """Compile :attr:`qp`: the controller's problem with every limit and the collision
        rows (the QP of the ticks with rows)."""
        self.qp = problem.compile(model, columns, TickMode.BOXED, settings, self.limit)
        if not self._joints.n_base:  # the approach policy of these ticks (boxed_approach)
            self.approach = BoxedApproach.compile(
                problem, model, columns, settings, self.limit, self._shaper
            )

    # ------------------------------------------------------------------ the world
    def _scene_world(self) -> World:
        """The world the scene follows: the user's when it has a floor, else a mirror of it
        with the robot's floor."""
        if self.world is not None and not self._follows:
            return self.world
        return self._mirror

    def _follow_world(self) -> None:
        """Mirror the user's changes and record each obstacle's motion since the last tick."""
        user = self.world
        if user is None or user.version == self._seen:
            self._motions = _STILL
            return
        self._seen = user.version
        mirror = self._mirror
        if self._follows:
            for name in [n for n in mirror if n != FLOOR and n not in user]:
                mirror.remove(name)
            for record in user.obstacles:
                mine = mirror.get(record.name)
                if mine is record:
                    continue
                if mine is not None and mine.shapes is record.shapes:
                    mirror.replace(record)  # moved: the same shapes
                else:
                    if mine is not None:
                        mirror.remove(record.name)
                    mirror.add(record)
        records, motions = {o.name: o for o in user.obstacles}, {}
        for name, record in records.items():  # a moved obstacle is a new record
            before = self._records.get(name, record)
            if record is not before and not record.placement.isApprox(before.placement, 0.0):
                motions[name] = record.placement * before.placement.inverse()
        self._motions, self._records = motions or _STILL, records

    # ------------------------------------------------------------------ the tick
    def influence(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """This tick's influence distance beyond the margin [m] of each pair (by index) for
        the shaper's box (module docstring; the joints that move one of the two shapes and
        not the other): no pair farther from its margin has a row that can bind."""
        speeds = np.maximum(np.abs(lower), np.abs(upper))
        tau = self.limit.time_constant
        travel = speeds * tau
        if self._shaper.smooth:
            travel = travel + speeds * speeds / (2.0 * BRAKING_SHARE * self._accel)
        reach = self._pair_columns() @ np.where(np.isfinite(travel), self._levers * travel, 1e9)
        approach = self._approach()[0]
        return np.minimum(reach + INFLUENCE_BUFFER + approach, MAX_INFLUENCE)

    def _approach(self) -> tuple[np.ndarray, np.ndarray]:
        """``(approach, moving)`` per pair (by index): added to its influence distance [m],
        the last step of its obstacle over the anticipation horizon (0 for a pair whose
        obstacle did not move on the last tick: the robot's own travel bounds how its
        distance changes); and whether its obstacle moved."""
        pairs = self.scene.pairs
        if self._terms[0] is not pairs:  # each obstacle's pairs, and the terms of no motion
            named: dict[str, list[int]] = {}
            for pair in pairs:
                if pair.kind == "obstacle":
                    named.setdefault(pair.body_b, []).append(pair.index)
            still = (np.zeros(len(pairs)), np.zeros(len(pairs), dtype=bool))
            self._terms = (pairs, named, still)
        _, named, still = self._terms
        if not self._motions:
            return still
        approach, moving = np.zeros(len(pairs)), np.zeros(len(pairs), dtype=bool)
        horizon = (self.limit.time_constant + ANTICIPATION) / self.dt
        for name, motion in self._motions.items():
            index = named.get(name, [])
            approach[index] = float(np.linalg.norm(motion.translation)) * horizon
            moving[index] = True
        return approach, moving

    def _pair_columns(self) -> np.ndarray:
        """(P, n) 1 where controlled column ``c`` moves one shape of pair ``p`` and not the
        other (built again when the scene's pairs change)."""
        version = self.scene.world.version  # the pairs change only with the world
        if self._columns_of[0] != version and self._columns_of[1] is not self.scene.pairs:
            pairs = self.scene.pairs
            model = self.scene.model
            objects = self.scene.geometry_model.geometryObjects
            joint_of = [
                int(np.searchsorted(model.idx_vs.tolist()[1:], c, "right")) for c in self._columns
            ]
            moves = np.array(
                [
                    [j > 0 and i in model.supports[j].tolist() for i in joint_of]
                    for j in range(model.njoints)
                ]
            )
            mask = [
                moves[objects[p.geometry_a].parentJoint] ^ moves[objects[p.geometry_b].parentJoint]
                for p in pairs
            ]
            self._columns_of = (version, pairs, np.array(mask, dtype=float).reshape(len(pairs), -1))
        return self._columns_of[2]

    def native_check(self) -> QuietCheck | None:
        """The native quiet-tick check (:mod:`~pinkctl.controllers.collision_check`) at the
        scene as it is now: built again when obstacles came or went, its obstacles placed
        again when they only moved (:meth:`QuietCheck.place`); None where the kernel cannot
        run it."""
        scene = self.scene
        version, check, pairs = self._check
        if version != scene.world.version:
            if check is not None and scene.pairs is pairs:  # the same pairs: moves only
                placed = np.flatnonzero(scene.placed > version).tolist()
                check.place(scene.geometry_model.geometryObjects, placed)
            else:
                check = quiet_check(
                    self, q_home=self._q_home, buffer=INFLUENCE_BUFFER, cap=MAX_INFLUENCE
                )
            self._check = (scene.world.version, check, scene.pairs)
        return check

    def quiet(self, measured: np.ndarray, space: bool) -> bool:
        """Whether this tick surely has no collision row (the native check, at the command
        configuration: the controlled joints at the shaper's last command, the others from
        ``measured``: a joint row over the controller's joint space (``space``) or a
        configuration); False when unsure (then :meth:`engage` measures). A quiet tick runs
        exactly as without avoidance."""
        position = self._shaper.position
        if self._followed is not position:  # once a tick: the world's motion since the last
            self._follow_world()
            self._followed = position
        self._flagged = None
        check = self.native_check()
        if check is None:
            return False
        if self._told[0] is not check or self._told[1] is not self._motions:
            check.follow(*self._approach())  # this tick's obstacle motion (none: zeros)
            self._told = (check, self._motions)
        count = check.count(measured, space, position)
        if count != 0:
            # the pairs engage measures: the others' rows, the check proved, cannot bind
            self._flagged = check.flagged.astype(bool) if count > 0 else None
            self._unquiet = position
            return False
        self.limit.hold(self._none)
        self._rows = None
        return True

    def engage(self, q: np.ndarray) -> bool:
        """Evaluate this tick's rows at the command configuration (the controlled joints at
        the shaper's last command, the others from ``q``); True when some row can bind (the
        tick then solves the QP with the rows inside the shaper's box)."""
        # the compiled path asked the check at this command already (and the check said
        # not quiet): its answer stands, asked once a tick
        asked = self._unquiet is self._shaper.position
        if not asked and self.quiet(q, False):
            return False
        self._unquiet = None
        shaper, joints = self._shaper, self._joints
        command = joints.controlled.to_configuration(shaper.position, q)
        lower, upper = shaper.box()
        columns = np.asarray(joints.qp_columns, dtype=np.intp)
        if joints.n_base:
            free = np.full(joints.n_base, np.inf)
            lower, upper = np.concatenate([-free, lower]), np.concatenate([free, upper])
        rows = self.limit.evaluate(
            command,
            self.dt,
            zone=self.influence(lower[joints.n_base :], upper[joints.n_base :]),
            box=(columns, lower, upper),
            motions=self._motions,
            only=self._flagged,
        )
        self.limit.hold(rows)
        self._box = (lower, upper)
        self._rows = rows if rows.h.size else None
        return self._rows is not None

    def solve(self, configuration: Configuration) -> np.ndarray:
        """The velocity of :attr:`approach`, or the QP with this tick's rows inside the
        shaper's box; when they conflict there, the closest pair's rows as they are and the
        others asking at least no closing (``h >= 0``); when these still conflict, the rows
        raised by the least total amount that some velocity of the box meets
        (:meth:`~pinkctl.qp.CollisionLimit.relaxed`: the arm gives way as far as its limits
        allow, never braking into an obstacle).

        Raises:
            QPSolveError: No velocity in the box meets the relaxed rows (the controller
                brakes).
        """
        lower, upper = self._box
        rows = self._rows
        assert rows is not None
        columns = np.asarray(self._joints.qp_columns, dtype=np.intp)
        if self.approach is not None and (
            (v := self.approach.velocity(configuration, self.dt, rows, columns, self._box))
            is not None
        ):
            return v
        closest = min(d.distance for d in rows.distances)
        first = np.array([d.distance == closest for d in rows.distances])
        for attempt in range(3):
            try:
                return self.qp.solve(configuration, self.dt, lower, upper)
            except QPSolveError:
                if attempt == 2:
                    raise
            if attempt == 0:
                self.limit.hold(replace(rows, h=np.where(first, rows.h, np.maximum(rows.h, 0.0))))
            else:
                self.limit.hold(self.limit.relaxed(rows, (columns, lower, upper), self.dt))
        raise AssertionError("unreachable")

    def blocking(self, velocity: np.ndarray) -> str | None:
        """Why the command is held back: the closest pair whose row binds at the QP's
        ``velocity`` (QP columns), or that the tasks' own velocity would break (the
        :attr:`approach`'s ticks), or None (no row bound, or the tick had no rows)."""
        rows = self._rows
        if rows is None:
            return None
        self._rows = None
        desired = None if self.approach is None else self.approach.desired
        tolerance = 1e-9 + 1e-6 * np.abs(rows.h)
        step = rows.G[:, self._joints.qp_columns] @ (velocity if desired is None else desired)
        step *= self.dt
        binding = np.flatnonzero(
            step >= rows.h - tolerance if desired is None else step > rows.h + tolerance
        )
        if not binding.size:
            return None
        k = min(binding.tolist(), key=lambda i: rows.distances[i].distance)
        d = rows.distances[k]
        return (
            f"collision avoidance holds the command: {d.pair.a} ({d.pair.link_a}) and "
            f"{d.pair.b} ({d.pair.body_b}) {1000 * d.distance:.1f} mm apart "
            f"(margin {1000 * rows.margins[k]:.1f} mm)"
        )
