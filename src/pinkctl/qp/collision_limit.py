"""Collision avoidance as velocity-damper rows: a pink :class:`~pink.limits.Limit`.

For every active pair of a :class:`~pinkctl.world.CollisionScene` closer than the influence
distance, with signed distance ``d`` [m], margin ``m`` [m] and distance Jacobian ``J``
(``d(distance)/dq``, :meth:`~pinkctl.world.CollisionScene.distance_jacobians`), one row over
the displacement ``dq = v dt`` (pink's convention ``G dq <= h``):

.. math::

    -J\\, \\Delta q \\le \\mathrm{d}t\\; r(d - m)

``r(s)`` is the closing rate [m/s] the pair may have at a gap ``s = d - m`` above its margin:

- ``s >= 0``, with a closing deceleration ``a`` [m/s^2] (``acceleration``: the joints'
  acceleration limits, projected on the pair, :data:`BRAKING_SHARE` of them):
  ``r(s) = a (sqrt(tau^2 + 2 s / a) - tau)``, the speed from which a stop after a delay
  ``tau`` [s] (the jerk ramp) at deceleration ``a`` ends exactly at the margin. Near the
  margin ``r(s) ~ s / tau``: the gap closes exponentially with time constant ``tau``, never
  crossing the margin. Without ``acceleration``: ``r(s) = s / tau``;
- ``s < 0`` (closer than the margin, or in penetration: ``d`` is signed): ``r(s) = s / tau <
  0``, the pair must *open* at rate ``|s| / tau``: pushed out, never deeper.

``a = BRAKING_SHARE * sum_i |J_i| a_i`` for the acceleration limits ``a_i`` of the columns: the
closing rate the joints can brake at, leaving the rest of their authority to the tasks.

In :meth:`CollisionLimit.evaluate`:

- an obstacle pair (and a self pair so chosen) within :data:`TURNING_ZONE` of its margin
  (either side) also gets a row per *corner* of either shape (:func:`corners`: a capsule's
  end spheres, a box's corners, a cylinder's rim points, a convex mesh's vertices) within
  the zone of its margin: the corner's own signed distance to the other shape (coal), a
  smooth distance bounded like the pair's. A distance is not differentiable where its witness
  point is not unique (a box's face parallel to an obstacle's): turning about one witness
  point brings another corner closer at first order, which the plain linearisation misses
  (a box finger entered a box by 4 mm without these rows); each corner's row bounds only its
  own normal rate, so a link still slides along the obstacle and turns about it (a bound of
  the turning rate itself, ``rho |T dtheta|``, held panda_link5 at a box 25 mm from a
  reachable target);
- with a velocity box (the motion shaper's, this tick), a row whose ``h`` is beyond what the
  box allows cannot bind and is left out; a row asking more opening than the box allows is
  relaxed to the most the box allows (the arm gives way as far as its limits allow; when
  relaxed rows conflict, the controller asks no pair to close, else brakes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import coal
import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.limits import Limit
from scipy.optimize import linprog

from .._validation import real_number
from ..errors import InputError
from ..world.scene import CollisionScene, PairDistance
from .corners import HullBoxes, corner_floors, corners, plane_exact, plane_witnesses

__all__ = ["BRAKING_SHARE", "CollisionLimit", "CollisionRows"]

#: Share of the joints' acceleration limits a pair's braking may count on.
BRAKING_SHARE = 0.5
#: Pairs closer than this to their margin [m] get the corner rows (module docstring; the
#: name is kept: the native quiet check and the controller read it).
TURNING_ZONE = 0.01
#: A corner closer than this [m] to its shape's witness point is the witness point's row.
CORNER_APART = 1e-6
#: A corner is measured unless its floor clears the turning zone by this [m] (rounding)
FLOOR_SLACK = 1e-7
_EYE3 = np.eye(3)


@dataclass(frozen=True)
class CollisionRows:
    """The rows of one evaluation (:meth:`CollisionLimit.evaluate`).

    Attributes:
        G: (K, nv) rows over the displacement ``dq``.
        h: (K,) right-hand sides [m].
        distances: The K pairs' distances, in row order.
        margins: (K,) the pairs' margins [m].
    """

    G: np.ndarray
    h: np.ndarray
    distances: tuple[PairDistance, ...]
    margins: np.ndarray


class CollisionLimit(Limit):
    """Keep every active pair of a scene at least its margin apart (module docstring).

    Args:
        scene: The robot and its world (followed: obstacles may move between calls).
        margin: Smallest distance kept [m], ``>= 0``.
        influence_distance: Pairs closer than this [m] get a row (``> margin``).
        time_constant: ``tau`` [s], ``> 0``: the jerk ramp with ``acceleration``, else the
            time constant of the gap's exponential approach (a few control periods).
        acceleration: (nv,) acceleration limits [rad/s^2 or m/s^2] of the tangent
            coordinates (0 or ``inf``: not counted on for braking), or None (a plain
            damper).
        pair_margins: Margin of each self pair [m] in the scene's order (e.g. smaller for a
            pair closer than ``margin`` at home, so that home is admissible; ``-inf`` for a
            pair never checked, whose distance no controlled joint changes), or None.
        turning_pairs: Whether each self pair gets the corner rows (module docstring;
            obstacle pairs always do), or None (no self pair).
        obstacle_margins: Margins [m] of some robot-obstacle pairs, by (robot geometry
            name, obstacle name), e.g. the feet of a standing robot against the floor; the
            others keep ``margin``.

    Raises:
        InputError: A malformed argument (named).
    """

    def __init__(
        self,
        scene: CollisionScene,
        *,
        margin: float = 0.01,
        influence_distance: float = 0.05,
        time_constant: float = 0.01,
        acceleration: np.ndarray | None = None,
        pair_margins: np.ndarray | None = None,
        turning_pairs: np.ndarray | None = None,
        obstacle_margins: Mapping[tuple[str, str], float] | None = None,
    ) -> None:
        if not isinstance(scene, CollisionScene):
            raise InputError(f"scene must be a CollisionScene, got {type(scene).__name__}")
        self.scene = scene
        self.margin = real_number(margin, "margin", low=0.0, high=1.0)
        self.influence_distance = real_number(
            influence_distance, "influence_distance", low=self.margin, low_open=True
        )
        self.time_constant = real_number(time_constant, "time_constant", low=0.0, low_open=True)
        nv = scene.model.nv
        self.acceleration = None
        if acceleration is not None:
            accel = np.asarray(acceleration, dtype=np.float64)
            if accel.shape != (nv,) or np.any(np.isnan(accel)) or np.any(accel < 0.0):
                raise InputError(f"acceleration must be {nv} numbers >= 0, got {acceleration}")
            self.acceleration = accel
        self.self_margins = np.zeros(0)
        if pair_margins is not None:
            self.self_margins = np.minimum(np.asarray(pair_margins, dtype=np.float64), self.margin)
        self.turning_pairs = np.zeros(0, dtype=bool)
        if turning_pairs is not None:
            self.turning_pairs = np.asarray(turning_pairs, dtype=bool)
        self.obstacle_margins = {
            key: min(float(value), self.margin) for key, value in (obstacle_margins or {}).items()
        }
        self._held: CollisionRows | None = None
        self._per_pair: tuple[object, np.ndarray, np.ndarray] = (None, np.zeros(0), np.zeros(0))
        self._hull_boxes: HullBoxes = {}  # the convex meshes' boxes (corner_floors)

    # ------------------------------------------------------------------ rows
    def closing_rates(self, gaps: np.ndarray, G: np.ndarray) -> np.ndarray:
        """(K,) closing rate ``r(s)`` [m/s] each pair may have at gap ``s`` (module
        docstring), from its rows ``G`` (``-J``)."""
        tau = self.time_constant
        rates = gaps / tau
        if self.acceleration is not None:
            finite = np.where(np.isfinite(self.acceleration), self.acceleration, 0.0)
            braking = BRAKING_SHARE * (np.abs(G) @ finite)
            ahead = (gaps > 0.0) & (braking > 0.0)
            if ahead.any():
                a, s = braking[ahead], gaps[ahead]
                rates[ahead] = a * (np.sqrt(tau * tau + 2.0 * s / a) - tau)
        return rates

    def pair_margins(self) -> tuple[np.ndarray, np.ndarray]:
        """``(margins, turns)`` of the scene's pairs, in :attr:`CollisionScene.pairs` order:
        each pair's margin [m] (``-inf`` for a pair never checked) and whether it gets the
        corner rows (rebuilt when the scene's pairs change)."""
        pairs = self.scene.pairs
        if self._per_pair[0] is not pairs:
            margins = np.full(len(pairs), self.margin)
            own = min(self.self_margins.size, len(pairs))
            margins[:own] = self.self_margins[:own]
            turns = np.array([p.kind == "obstacle" for p in pairs], dtype=bool)
            flagged = min(self.turning_pairs.size, len(pairs))
            turns[:flagged] |= self.turning_pairs[:flagged]
            for k, pair in enumerate(pairs):
                if pair.kind == "obstacle" and self.obstacle_margins:
                    margins[k] = self.obstacle_margins.get((pair.a, pair.body_b), self.margin)
            self._per_pair = (pairs, margins, turns)
        return self._per_pair[1], self._per_pair[2]

    def evaluate(
        self,
        q: np.ndarray,
        dt: float,
        *,
        zone: np.ndarray | None = None,
        box: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        motions: dict[str, pin.SE3] | None = None,
        only: np.ndarray | None = None,
    ) -> CollisionRows:
        """The rows at configuration ``q`` for a step of ``dt`` [s].

        Args:
            q: Configuration (``model.nq``).
            dt: Control period [s].
            zone: Per pair (by index), rows only when closer than this to its margin [m]
                (obstacle pairs: also within :data:`TURNING_ZONE`); default: every pair
                within the influence distance.
            box: ``(columns, lower, upper)``: velocity bounds [rad/s] on these tangent
                columns (the others held): rows that cannot bind inside it are left out, rows
                asking more opening than it allows are relaxed (module docstring).
            motions: The rigid motion (world frame) each moving obstacle is expected to make
                during this step, by name: a pair's row is tightened by how much it brings
                the obstacle's witness point closer (never loosened).
            only: (P,) bool: measure only these pairs (by index), the others have no row
                (the native check's: their rows cannot bind inside ``box``); default: all.
        """
        found, margins = self._near(q, zone, only)
        if not found:
            nv = self.scene.model.nv
            return CollisionRows(np.zeros((0, nv)), np.zeros(0), (), np.zeros(0))
        found, margins = self._corners(found, margins)
        G = -self.scene.distance_jacobians(q, found)
        gaps = np.array([d.distance for d in found]) - margins
        h = dt * self.closing_rates(gaps, G)
        if motions:
            _tighten(h, found, motions)
        if box is not None:
            keep = _boxed(G, h, box, dt)
            G, h, margins = G[keep], h[keep], margins[keep]
            found = [d for d, k in zip(found, keep.tolist()) if k]
        return CollisionRows(G, h, tuple(found), margins)

    def _near(
        self, q: np.ndarray, zone: np.ndarray | None, only: np.ndarray | None = None
    ) -> tuple[list[PairDistance], np.ndarray]:
        """The pairs that get rows at ``q`` (:meth:`evaluate`'s ``zone`` and ``only``) and
        their margins."""
        margins, turns = self.pair_margins()
        if zone is None:
            within: float | np.ndarray = self.margin + (self.influence_distance - self.margin)
        else:  # each pair's own threshold, a hair wider: the test below decides
            wider = np.maximum(zone, np.where(turns, TURNING_ZONE, -np.inf))
            within = margins + wider + 1e-9
        if only is not None:
            within = np.where(only, within, -np.inf)
        found, kept = [], []
        for d in self.scene.pairs_within(q, within):
            k = d.pair.index
            gap = d.distance - margins[k]
            if margins[k] == -np.inf:  # a pair no command moves apart or together
                continue
            if zone is None or gap < zone[k] or (turns[k] and gap < TURNING_ZONE):
                found.append(d)
                kept.append(margins[k])
        return found, np.array(kept)

    def relaxed(
        self, rows: CollisionRows, box: tuple[np.ndarray, np.ndarray, np.ndarray], dt: float
    ) -> CollisionRows:
        """``rows`` with their right-hand sides raised by the least total amount that lets one
        velocity of the box meet them all (module docstring): rows each within the box can
        still conflict together (a finger and the hand pressed from two sides)."""
        columns, lower, upper = box
        k, n = rows.G.shape[0], len(columns)
        # min sum(s) over (v, s): G v dt - s <= h, lower <= v <= upper, s >= 0
        solution = linprog(
            np.r_[np.zeros(n), np.ones(k)],
            A_ub=np.hstack([dt * rows.G[:, columns], -np.eye(k)]),
            b_ub=rows.h,
            bounds=np.vstack(  # an infinite bound is none (a floating base's)
                [np.column_stack([lower, upper]), np.tile([0.0, np.inf], (k, 1))]
            ),
            method="highs",
        )
        if solution.status != 0:  # cannot happen: v = 0 and s large meet every row
            return replace(rows, h=np.maximum(rows.h, 0.0))
        # the rows as the LP's velocity meets them (exactly, not within its tolerance)
        velocity = np.clip(solution.x[:n], lower, upper)
        reached = dt * rows.G[:, columns] @ velocity
        return replace(rows, h=np.maximum(rows.h, reached + 1e-9 + 1e-6 * np.abs(reached)))

    def _corners(
        self, found: list[PairDistance], margins: np.ndarray
    ) -> tuple[list[PairDistance], np.ndarray]:
        """``found`` and, for each pair within :data:`TURNING_ZONE` of its margin that gets
        them, its corner distances (module docstring): the signed distance of each corner
        of either shape (:func:`corners`, a point or an end sphere fixed to its shape) to
        the other shape, when within the zone of the margin and not the pair's own witness
        point. Their margins follow."""
        gaps = np.array([d.distance for d in found]) - margins
        turns = self.pair_margins()[1][[d.pair.index for d in found]]
        near = np.flatnonzero((np.abs(gaps) < TURNING_ZONE) & turns)
        if not near.size:
            return found, margins
        objects, placements = (
            self.scene.geometry_model.geometryObjects,
            self.scene.geometry_data.oMg,
        )
        request, result = coal.DistanceRequest(), coal.DistanceResult()
        request.enable_signed_distance = True
        extra, kept = [], []
        for k in near.tolist():
            d, margin = found[k], float(margins[k])
            for mine, other, witness, side in (
                (d.pair.geometry_a, d.pair.geometry_b, d.point_a, 1.0),
                (d.pair.geometry_b, d.pair.geometry_a, d.point_b, -1.0),
            ):
                shape, placement = objects[other].geometry, placements[other]
                points, radius = corners(objects[mine].geometry, placements[mine])
                # coal's distance of a corner is at least its floor: those whose floor
                # clears the zone would be dropped below (module corners)
                floors = corner_floors(points, shape, placement, self._hull_boxes) - radius
                close = floors - margin < TURNING_ZONE + FLOOR_SLACK
                if plane_exact(shape):  # the floors are the distances: no coal call
                    witnesses = plane_witnesses(points[close], radius, shape, placement)
                else:
                    witnesses = _coal_witnesses(
                        points[close], radius, shape, placement, request, result
                    )
                for distance, on_mine, on_other, normal in witnesses:
                    if distance - margin >= TURNING_ZONE or (
                        np.linalg.norm(on_mine - witness) < CORNER_APART
                    ):
                        continue
                    if side < 0.0:  # the corner is on ``b``: from ``a`` toward it
                        on_mine, on_other, normal = on_other, on_mine, -normal
                    extra.append(PairDistance(d.pair, distance, on_mine, on_other, normal))
                    kept.append(margin)
        if not extra:
            return found, margins
        return found + extra, np.concatenate([margins, kept])

    def hold(self, rows: CollisionRows | None) -> None:
        """Return these rows from :meth:`compute_qp_inequalities` until the next call (None:
        evaluate at the configuration again)."""
        self._held = rows

    def compute_qp_inequalities(
        self, configuration: Configuration, dt: float
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """pink's interface: the held rows (:meth:`hold`), else :meth:`evaluate` at
        ``configuration.q``, both sides over ``dt`` (a rate [m/s]: a step's few micrometres
        would sit inside the solver's tolerance, and an arm at rest under a jerk limit would
        never start giving way); None without a row."""
        rows = self._held if self._held is not None else self.evaluate(configuration.q, dt)
        return (rows.G / dt, rows.h / dt) if rows.h.size else None


def _tighten(h: np.ndarray, found: list[PairDistance], motions: dict[str, pin.SE3]) -> None:
    """Tighten (in place) the rows of the obstacle pairs whose obstacle moves by how much the
    motion brings its witness point closer (never loosened)."""
    for k, d in enumerate(found):
        motion = motions.get(d.pair.body_b) if d.pair.kind == "obstacle" else None
        if motion is not None:
            h[k] += min(0.0, float(d.normal @ (motion.act(d.point_b) - d.point_b)))


def _boxed(
    G: np.ndarray, h: np.ndarray, box: tuple[np.ndarray, np.ndarray, np.ndarray], dt: float
) -> np.ndarray:
    """Which rows can bind inside the velocity ``box`` (module docstring); relaxes (in place)
    the rows asking more opening than the box allows to the most it allows."""
    columns, lower, upper = box
    rows = G[:, columns]
    low, high = rows * lower, rows * upper
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()):  # a free base
        low, high = np.nan_to_num(low), np.nan_to_num(high)  # 0 * inf
    most = dt * np.maximum(low, high).sum(axis=1)
    least = dt * np.minimum(low, high).sum(axis=1)
    np.maximum(h, least + 1e-9, out=h)
    return h < most


def _coal_witnesses(
    points: np.ndarray,
    radius: float,
    shape: coal.CollisionGeometry,
    placement: pin.SE3,
    request: coal.DistanceRequest,
    result: coal.DistanceResult,
) -> list[tuple[float, np.ndarray, np.ndarray, np.ndarray]]:
    """Per corner (a ball of ``radius`` at each of ``points``, world frame): coal's signed
    distance [m] to ``shape`` at ``placement``, its witness points on the ball and on the
    shape, and the normal from the ball toward the shape."""
    ball, far = coal.Sphere(radius), coal.Transform3s(placement.rotation, placement.translation)
    out = []
    for z in points:
        result.clear()
        distance = coal.distance(ball, coal.Transform3s(_EYE3, z), shape, far, request, result)
        out.append(
            (
                float(distance),
                result.getNearestPoint1(),
                result.getNearestPoint2(),
                result.normal.copy(),
            )
        )
    return out
