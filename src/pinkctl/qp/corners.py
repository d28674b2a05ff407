"""The corners of a shape (:class:`~pinkctl.qp.CollisionLimit`'s turning rows) and a cheap
lower bound of each corner's signed distance to the other shape of its pair.

A corner row is kept only when the corner's distance (coal) lies within the turning zone of
its margin. Most corners of a convex mesh (a torso's hull: hundreds of vertices) lie far
from the other shape, and asking coal for each cost most of an avoiding tick (tiago: ~2 ms
of its 6). :func:`corner_floors` bounds every corner's signed distance from below at once:
its exact signed distance to a sphere, capsule or box that *contains* the other shape (the
shape itself for a sphere, capsule or box; the capsule of a cylinder; the box of a convex
mesh's vertices in its frame; a half-space exactly). Containment only brings the surface
nearer (``A`` inside ``B``: ``sd_B(p) <= sd_A(p)`` apart and inside alike), so a corner whose
bound clears the zone is one coal would have dropped: the rows are unchanged.
"""

from __future__ import annotations

from typing import Any

import coal
import numpy as np
import pinocchio as pin

__all__ = ["HullBoxes", "corner_floors", "corners", "plane_exact", "plane_witnesses"]

_RIM = np.linspace(0.0, 2.0 * np.pi, 8, endpoint=False)
_SIGNS3 = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)])
#: what :func:`corner_floors` keeps per convex mesh: ``{id(shape): (shape, centre, half)}``
HullBoxes = dict[int, tuple[Any, np.ndarray, np.ndarray]]


def corners(shape: coal.CollisionGeometry, placement: pin.SE3) -> tuple[np.ndarray, float]:
    """``(points, radius)``: the corners of ``shape`` at ``placement`` (world frame [m]) and
    the radius of the sphere each carries: a capsule's two end spheres, a cylinder's end rims
    (eight points each), a box's eight corners, a convex mesh's vertices; none for a sphere
    (its witness point is the only point that can come nearest) or another shape."""
    rotation, translation = placement.rotation, placement.translation
    if isinstance(shape, coal.Capsule):
        axis = rotation[:, 2] * shape.halfLength
        return np.array([translation + axis, translation - axis]), float(shape.radius)
    if isinstance(shape, coal.Cylinder):
        rim = shape.radius * np.array([np.cos(_RIM), np.sin(_RIM), np.zeros(_RIM.size)]).T
        ends = [rim + [0.0, 0.0, sign * shape.halfLength] for sign in (1.0, -1.0)]
        return np.vstack(ends) @ rotation.T + translation, 0.0
    if isinstance(shape, coal.Box):
        return (_SIGNS3 * np.asarray(shape.halfSide)) @ rotation.T + translation, 0.0
    if isinstance(shape, coal.ConvexBase):
        points = np.asarray(shape.points(), dtype=np.float64).reshape(-1, 3)
        return points @ rotation.T + translation, 0.0
    return np.zeros((0, 3)), 0.0


def corner_floors(
    points: np.ndarray, shape: coal.CollisionGeometry, placement: pin.SE3, boxes: HullBoxes
) -> np.ndarray:
    """(K,) lower bounds [m] of the signed distance from each of ``points`` (world frame)
    to ``shape`` at ``placement`` (module docstring); ``-inf`` for a shape it does not
    bound (or one coal inflates by a swept sphere). ``boxes``: the convex meshes' boxes,
    filled on the way (the caller keeps it)."""
    if shape.getSweptSphereRadius() != 0.0:
        return np.full(len(points), -np.inf)
    local = (points - placement.translation) @ placement.rotation  # in the shape's frame
    if isinstance(shape, coal.Sphere):
        return np.linalg.norm(local, axis=1) - shape.radius
    if isinstance(shape, coal.Capsule | coal.Cylinder):
        along = np.clip(local[:, 2], -shape.halfLength, shape.halfLength)
        offsets = local - np.outer(along, [0.0, 0.0, 1.0])
        return np.linalg.norm(offsets, axis=1) - shape.radius
    if isinstance(shape, coal.Halfspace):
        return local @ np.asarray(shape.n) - shape.d
    if isinstance(shape, coal.Box):
        return _box_distances(local, np.zeros(3), np.asarray(shape.halfSide))
    if isinstance(shape, coal.ConvexBase):
        _, centre, half = _hull_box(shape, boxes)
        return _box_distances(local, centre, half)
    return np.full(len(points), -np.inf)


def plane_exact(shape: coal.CollisionGeometry) -> bool:
    """Whether ``shape`` is a half-space that :func:`corner_floors` measures exactly (not
    inflated): its corners' floors are their signed distances, coal's to rounding."""
    return isinstance(shape, coal.Halfspace) and shape.getSweptSphereRadius() == 0.0


def plane_witnesses(
    points: np.ndarray, radius: float, shape: coal.Halfspace, placement: pin.SE3
) -> list[tuple[float, np.ndarray, np.ndarray, np.ndarray]]:
    """What coal answers for balls of ``radius`` at ``points`` (world frame) and the
    half-space ``n . x <= d`` (its frame) at ``placement``, at once: per ball its signed
    distance ``n_w . z - d_w - radius`` [m] (``n_w = R n``, ``d_w = d + n_w . t``), its witness
    point ``z - radius n_w``, the plane's ``z - (n_w . z - d_w) n_w``, and the normal from the
    ball toward the plane, ``-n_w``."""
    normal = placement.rotation @ np.asarray(shape.n)
    heights = points @ normal - (shape.d + normal @ placement.translation)
    on_ball = points - radius * normal
    on_plane = points - np.outer(heights, normal)
    return [
        (float(h - radius), a, b, -normal) for h, a, b in zip(heights.tolist(), on_ball, on_plane)
    ]


def _box_distances(local: np.ndarray, centre: np.ndarray, half: np.ndarray) -> np.ndarray:
    """Exact signed distances [m] of points (the box's frame) to the box ``centre +-
    half``."""
    q = np.abs(local - centre) - half
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
    return np.where(q.max(axis=1) > 0.0, outside, q.max(axis=1))


def _hull_box(shape: Any, boxes: HullBoxes) -> tuple[Any, np.ndarray, np.ndarray]:
    """The box of a convex mesh's vertices in its own frame, computed once per shape."""
    found = boxes.get(id(shape))
    if found is None or found[0] is not shape:
        vertices = np.asarray(shape.points(), dtype=np.float64).reshape(-1, 3)
        low, high = vertices.min(axis=0), vertices.max(axis=0)
        found = (shape, (low + high) / 2.0, (high - low) / 2.0)
        boxes[id(shape)] = found
    return found
