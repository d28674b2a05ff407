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
  (either side) also bounds
  ``-J dq + rho |T dtheta|_1`` (4 rows, one per sign vector): ``dtheta`` the angle one shape
  turns relative to the other during the step, ``T`` two unit tangents of the normal (a turn
  about the normal moves no point across the separating plane), ``rho`` a bound of the
  distance from a witness point to any point of its shape
  (:meth:`~pinkctl.world.CollisionScene.witness_reach`; seen from either shape, only the
  other one moves).
  A distance is not differentiable where its witness point is not unique (a box's face
  parallel to an obstacle's): turning about one witness point brings another corner closer
  at first order, which the plain linearisation misses (a box finger entered a box by 4 mm
  without this term, 0 with it);
- with a velocity box (the motion shaper's, this tick), a row whose ``h`` is beyond what the
  box allows cannot bind and is left out; a row asking more opening than the box allows is
  relaxed to the most the box allows (the arm gives way as far as its limits allow; when
  relaxed rows conflict, the controller asks no pair to close, else brakes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.limits import Limit

from .._validation import real_number
from ..errors import InputError
from ..world.scene import CollisionScene, PairDistance

__all__ = ["BRAKING_SHARE", "CollisionLimit", "CollisionRows"]

#: Share of the joints' acceleration limits a pair's braking may count on.
BRAKING_SHARE = 0.5
#: Pairs closer than this to their margin [m] get the turning rows (module docstring).
TURNING_ZONE = 0.01
_SIGNS = np.array([[x, y] for x in (-1.0, 1.0) for y in (-1.0, 1.0)])


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
        turning_pairs: Whether each self pair gets the turning rows (module docstring;
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
        turning rows (rebuilt when the scene's pairs change)."""
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
        """
        found, margins = self._near(q, zone)
        if not found:
            nv = self.scene.model.nv
            return CollisionRows(np.zeros((0, nv)), np.zeros(0), (), np.zeros(0))
        G = -self.scene.distance_jacobians(q, found)
        gaps = np.array([d.distance for d in found]) - margins
        h = dt * self.closing_rates(gaps, G)
        if motions:
            _tighten(h, found, motions)
        G, h, margins, found = self._turning(found, G, h, margins)
        if box is not None:
            keep = _boxed(G, h, box, dt)
            G, h, margins = G[keep], h[keep], margins[keep]
            found = [d for d, k in zip(found, keep.tolist()) if k]
        return CollisionRows(G, h, tuple(found), margins)

    def _near(
        self, q: np.ndarray, zone: np.ndarray | None
    ) -> tuple[list[PairDistance], np.ndarray]:
        """The pairs that get rows at ``q`` (:meth:`evaluate`'s ``zone``) and their margins."""
        if zone is None:
            wider = self.influence_distance - self.margin
        else:
            wider = max(float(zone.max(initial=0.0)), TURNING_ZONE)
        margins, turns = self.pair_margins()
        found, kept = [], []
        for d in self.scene.pairs_within(q, self.margin + wider):
            k = d.pair.index
            gap = d.distance - margins[k]
            if margins[k] == -np.inf:  # a pair no command moves apart or together
                continue
            if zone is None or gap < zone[k] or (turns[k] and gap < TURNING_ZONE):
                found.append(d)
                kept.append(margins[k])
        return found, np.array(kept)

    def _turning(
        self, found: list[PairDistance], G: np.ndarray, h: np.ndarray, margins: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[PairDistance]]:
        """The rows with the turning term for the obstacle pairs within :data:`TURNING_ZONE`
        of their margin (module docstring; self pairs get none: they would freeze the wrist
        of an arm whose links sit close at home): ``-J dq + rho s . (T dtheta) <= h`` for
        the 4 sign vectors ``s``."""
        scene = self.scene
        model, data = scene.model, scene.data
        gaps = np.array([d.distance for d in found]) - margins
        turns = self.pair_margins()[1][[d.pair.index for d in found]]
        near = np.flatnonzero((np.abs(gaps) < TURNING_ZONE) & turns)
        if not near.size:
            return G, h, margins, found
        objects = scene.geometry_model.geometryObjects
        reach = scene.witness_reach([found[k] for k in near.tolist()])
        rotations = {0: np.zeros((3, model.nv))}
        blocks, rights, kept, pairs = [G], [h], [margins], list(found)
        for n, k in enumerate(near.tolist()):
            d = found[k]
            joints = [
                objects[d.pair.geometry_a].parentJoint,
                objects[d.pair.geometry_b].parentJoint,
            ]
            for j in joints:
                if j not in rotations:
                    jacobian = pin.getJointJacobian(model, data, j, pin.ReferenceFrame.WORLD)
                    rotations[j] = jacobian[3:]
            rho = float(min(reach[n]))
            if rho <= 0.0 or joints[0] == joints[1]:
                continue
            tangents = np.linalg.svd(d.normal.reshape(1, 3))[2][1:]
            relative = tangents @ (rotations[joints[1]] - rotations[joints[0]])
            blocks.append(G[k] + rho * (_SIGNS @ relative))
            rights.append(np.full(len(_SIGNS), h[k]))
            kept.append(np.full(len(_SIGNS), margins[k]))
            pairs.extend([d] * len(_SIGNS))
        return np.vstack(blocks), np.concatenate(rights), np.concatenate(kept), pairs

    def hold(self, rows: CollisionRows | None) -> None:
        """Return these rows from :meth:`compute_qp_inequalities` until the next call (None:
        evaluate at the configuration again)."""
        self._held = rows

    def compute_qp_inequalities(
        self, configuration: Configuration, dt: float
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """pink's interface: the held rows (:meth:`hold`), else :meth:`evaluate` at
        ``configuration.q``; None without a row."""
        rows = self._held if self._held is not None else self.evaluate(configuration.q, dt)
        return (rows.G, rows.h) if rows.h.size else None


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
