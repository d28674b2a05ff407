"""The exact shapes of the IK's narrow phase in the native kernel (``_narrow.c``): each
geometry of the collision check as coal holds it (a sphere, a capsule, a cylinder, a box,
or a convex hull's vertices with its vertex graph), in its joint's frame.

A support point of a hull is found by climbing its vertex graph (coal's neighbours) from the
last one, which is the farthest vertex only when the graph is the hull's: the graph is kept
when it is symmetric, every vertex has at least two neighbours and climbs along 64 fixed
directions all end at the farthest vertex; else the kernel tries every vertex. An inflated
shape (coal's swept-sphere radius) or another kind is left to coal (:mod:`pinkctl.ik.capsules`).
"""

from __future__ import annotations

import coal
import numpy as np
import pinocchio as pin

__all__ = ["flat", "shape_arrays", "vertices"]

#: ``SHAPE_*`` of ``_narrow.h``: the kernel's narrow phase knows these shapes.
_SPHERE, _CAPSULE, _CYLINDER, _BOX, _CONVEX, _OTHER = range(6)


def flat(placement: pin.SE3) -> np.ndarray:
    """A placement as 12 numbers: its rotation row-major, then its translation."""
    return np.concatenate([placement.rotation.reshape(-1), placement.translation])


def vertices(shape: coal.CollisionGeometry) -> np.ndarray | None:
    """The corners of a box or the vertices of a convex hull (N, 3), else None."""
    if isinstance(shape, coal.Box):
        half = np.asarray(shape.halfSide, dtype=np.float64)
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        return signs * half
    if isinstance(shape, coal.ConvexBase):
        return np.asarray(shape.points(), dtype=np.float64).reshape(-1, 3)
    return None


def _exact_shape(shape: coal.CollisionGeometry) -> tuple[int, tuple[float, ...], np.ndarray]:
    """``(SHAPE_* kind, parameters, convex vertices)`` of a shape for the narrow phase."""
    none = np.zeros((0, 3))
    if shape.getSweptSphereRadius() != 0.0:  # an inflated shape: left to coal
        return _OTHER, (), none
    if isinstance(shape, coal.Sphere):
        return _SPHERE, (float(shape.radius),), none
    if isinstance(shape, coal.Capsule):
        return _CAPSULE, (float(shape.radius), float(shape.halfLength)), none
    if isinstance(shape, coal.Cylinder):
        return _CYLINDER, (float(shape.radius), float(shape.halfLength)), none
    if isinstance(shape, coal.Box):
        return _BOX, tuple(float(h) for h in shape.halfSide), none
    if isinstance(shape, coal.ConvexBase):
        return _CONVEX, (), vertices(shape)  # type: ignore[return-value]
    return _OTHER, (), none


def _climb(points: np.ndarray, lists: list[list[int]], d: np.ndarray, at: int) -> int:
    """The vertex a climb of the graph ``lists`` along ``d`` from ``at`` ends at."""
    heights = points @ d
    moved = True
    while moved:
        moved = False
        for v in lists[at]:
            if heights[v] > heights[at]:
                at, moved = v, True
    return at


def _neighbours(shape: coal.ConvexBase, count: int) -> list[list[int]] | None:
    """coal's vertex graph of a hull, or None where it is not symmetric with at least two
    neighbours a vertex."""
    try:
        lists = [[int(v) for v in shape.neighbors(i)] for i in range(count)]
    except (TypeError, ValueError, RuntimeError, IndexError):
        return None
    edges = {(i, v) for i, vs in enumerate(lists) for v in vs}
    symmetric = all((v, i) in edges for i, v in edges)
    return lists if count >= 4 and symmetric and min(map(len, lists)) >= 2 else None


#: Hull graphs worked out, by their vertices' bytes: a robot's meshes come back unchanged at
#: every rebuild of a check (after each change of the world), and their graphs cost ~1 ms each.
_GRAPHS: dict[bytes, list[list[int]] | None] = {}
_GRAPHS_KEPT = 4096


def _hull_graph(shape: coal.ConvexBase, points: np.ndarray) -> list[list[int]] | None:
    """The hull's vertex graph, or None where a climb cannot trust it (module docstring;
    the kernel then tries every vertex). Kept by its vertices: a graph that passes the
    climbs on these points serves any shape with the same points."""
    key = points.tobytes()
    if key not in _GRAPHS:
        if len(_GRAPHS) >= _GRAPHS_KEPT:
            _GRAPHS.clear()
        _GRAPHS[key] = _checked_graph(shape, points)
    return _GRAPHS[key]


def _checked_graph(shape: coal.ConvexBase, points: np.ndarray) -> list[list[int]] | None:
    """:func:`_hull_graph`, worked out."""
    lists = _neighbours(shape, len(points))
    if lists is None:
        return None
    for k, d in enumerate(np.random.default_rng(0).normal(size=(64, 3))):
        heights = points @ d
        if heights[_climb(points, lists, d, k % len(points))] < heights.max():
            return None
    return lists


def shape_arrays(objects: list, used: list[int]) -> dict[str, np.ndarray]:
    """Each used geometry's exact shape for the narrow phase, in its joint's frame (a convex
    hull's vertices, and its vertex graph where a climb can trust it)."""
    count = len(objects)
    kind = np.full(count, _OTHER, dtype=np.intc)
    param = np.zeros((count, 3))
    placement = np.zeros((count, 12))
    start = np.zeros(count, dtype=np.intc)
    size = np.zeros(count, dtype=np.intc)
    climb = np.zeros(count, dtype=np.intc)
    hulls, lists = [np.zeros((0, 3))], []
    for g in used:
        obj = objects[g]
        kind[g], values, points = _exact_shape(obj.geometry)
        param[g, : len(values)] = values
        placement[g] = flat(obj.placement)
        start[g], size[g] = sum(len(h) for h in hulls), len(points)
        graph = _hull_graph(obj.geometry, points) if len(points) else None
        climb[g] = graph is not None
        lists += graph if graph is not None else [[] for _ in points]
        hulls.append(points)
    adj_start = np.cumsum([0] + [len(vs) for vs in lists]).astype(np.intc)
    return {
        "shape": kind,
        "shape_param": param.reshape(-1),
        "shape_placement": placement.reshape(-1),
        "vert_start": start,
        "vert_count": size,
        "vertices": np.ascontiguousarray(np.vstack(hulls)).reshape(-1),
        "climb": climb,
        "adj_start": adj_start,
        "adj": np.array([v for vs in lists for v in vs] or [0], dtype=np.intc),
        "warm": np.zeros(count, dtype=np.intc),
    }
