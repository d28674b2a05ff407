"""Bounding spheres of a scene's geometries: a cheap lower bound on every pair's distance.

Each geometry gets a sphere in its own frame that holds it (centre, radius); a half-space is
kept as its plane. For two spheres the distance of their shapes is at least
``|c_a - c_b| - r_a - r_b``; for a sphere and a half-space at least ``n . c - offset - r``.
A pair whose bound exceeds a query's distance cannot be within it, and coal is not asked.
"""

from __future__ import annotations

import coal
import numpy as np
import pinocchio as pin

__all__ = ["BoundingSpheres", "bounding_sphere"]


def bounding_sphere(shape: coal.CollisionGeometry) -> tuple[np.ndarray, float]:
    """Centre (3,) in the shape's frame and radius [m] of a sphere holding ``shape``
    (radius ``inf`` for a half-space)."""
    if isinstance(shape, coal.Sphere):
        return np.zeros(3), float(shape.radius)
    if isinstance(shape, coal.Box):
        return np.zeros(3), float(np.linalg.norm(shape.halfSide))
    if isinstance(shape, coal.Capsule):
        return np.zeros(3), float(shape.radius + shape.halfLength)
    if isinstance(shape, coal.Cylinder):
        return np.zeros(3), float(np.hypot(shape.radius, shape.halfLength))
    if isinstance(shape, coal.Halfspace):
        return np.zeros(3), np.inf
    if isinstance(shape, coal.ConvexBase):
        points = np.asarray(shape.points(), dtype=np.float64).reshape(-1, 3)
        centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
        return centre, float(np.max(np.linalg.norm(points - centre, axis=1)))
    shape.computeLocalAABB()
    centre = np.asarray(shape.aabb_center, dtype=np.float64).copy()
    return centre, float(shape.aabb_radius)


class BoundingSpheres:
    """The bounding spheres of a geometry model and the lower bound of each pair's distance.

    Each sphere (and each half-space's plane) is kept in the frame of the joint its geometry
    is attached to, so a query reads only the joints' placements (``Data.oMi``: a handful of
    joints instead of every geometry).

    Args:
        geometry_model: The geometries (half-spaces allowed as the second of a pair).
        pairs: (P, 2) geometry indices.
    """

    def __init__(self, geometry_model: pin.GeometryModel, pairs: np.ndarray) -> None:
        spheres = [bounding_sphere(o.geometry) for o in geometry_model.geometryObjects]
        self.centres = np.array([c for c, _ in spheres]).reshape(-1, 3)
        self.radii = np.array([r for _, r in spheres])
        self.plane: np.ndarray = np.isinf(self.radii)
        self.pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
        self.joints = np.array(
            [o.parentJoint for o in geometry_model.geometryObjects], dtype=np.intp
        )
        self._used = np.unique(self.joints)
        self._planar: np.ndarray = self.plane[self.pairs[:, 1]]
        self._finite_radii = np.where(self.plane, 0.0, self.radii)
        self._local = np.empty((len(self.radii), 3))
        self._normals = np.zeros((len(self.radii), 3))
        # per pair, precomputed: its two geometries, their radii, the planar pairs' parts
        a, b, p = self.pairs[:, 0], self.pairs[:, 1], self._planar
        self._radius_sum = self._finite_radii[a] + self._finite_radii[b]
        self._plane_a, self._plane_b = a[p], b[p]
        self._plane_radius = self._finite_radii[a[p]]
        self._plane_joints = self.joints[b[p]]
        self.refresh(geometry_model)

    def refresh(self, geometry_model: pin.GeometryModel, moved: list[int] | None = None) -> None:
        """Read the placements in their joints' frames again of the ``moved`` geometries (an
        obstacle's pieces after it moved; None: every geometry)."""
        local, normals = self._local, self._normals
        objects = geometry_model.geometryObjects
        for g in range(len(self.radii)) if moved is None else moved:
            m = objects[g].placement
            if self.plane[g]:  # the plane's point and normal (the frame's z axis)
                local[g] = m.translation
                normals[g] = m.rotation[:, 2]
            else:
                local[g] = m.act(self.centres[g])
        self._plane_normals = normals[self._plane_b]

    def lower_bounds(self, joint_placements: pin.StdVec_SE3) -> np.ndarray:
        """(P,) lower bounds [m] of the pairs' distances at the joints' world placements
        (``Data.oMi`` after forward kinematics)."""
        rotations = np.empty((len(joint_placements), 3, 3))
        translations = np.zeros((len(joint_placements), 3))
        for j in self._used.tolist():
            m = joint_placements[j]
            rotations[j] = m.rotation
            translations[j] = m.translation
        turn = rotations[self.joints]
        centres = np.einsum("gij,gj->gi", turn, self._local) + translations[self.joints]
        offsets = centres[self.pairs[:, 0]] - centres[self.pairs[:, 1]]
        bounds = np.sqrt(np.einsum("ij,ij->i", offsets, offsets)) - self._radius_sum
        if self._plane_a.size:
            normals = np.einsum("gij,gj->gi", rotations[self._plane_joints], self._plane_normals)
            heights = np.einsum("ij,ij->i", normals, offsets[self._planar])
            bounds[self._planar] = heights - self._plane_radius
        return bounds
