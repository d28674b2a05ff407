"""Contacts and the support polygon as inequality rows of the differential-IK QP.

Two pink :class:`~pink.limits.Limit` objects (pink's convention: rows ``G Δq <= h`` over the
displacement ``Δq`` of one tick), so that the compiled QP, the cascade and pink's own
``build_ik`` all take them as they take any limit:

- :class:`ContactLimit`: frames that must not move (a foot on the floor). Each contact is the
  equality ``J Δq = -e`` of a frame task (``e`` its 6-D error to the pose held at reset, in
  the frame, ``J`` its Jacobian), written as the band ``|J Δq + e| <= tolerance`` (two rows per
  coordinate; an active-set solver handles a band better than an equality written twice).
- :class:`SupportPolygonLimit`: the horizontal position of the centre of mass ``c`` kept inside
  a convex polygon (the support polygon of the contacts) shrunk by a margin: for each edge
  with outward unit normal ``n`` and offset ``d`` (``n · p <= d`` inside), the damper row
  ``n^T J_c Δq <= (dt / T) (d - margin - n · c)``, ``J_c`` the CoM's horizontal Jacobian: the
  CoM slows down toward the shrunk edge with the time constant ``T`` (``approach_time``), so
  that joints with acceleration limits can follow (a per-tick fraction such as pink's
  configuration-limit gain would ask a fast CoM to stop within a tick or two).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.limits import Limit
from pink.tasks import FrameTask

from ..errors import InputError

__all__ = ["ContactLimit", "SupportPolygonLimit", "convex_hull", "polygon_edges"]

#: Half-width of a contact's band [m] or [rad] per tick (module docstring).
CONTACT_TOLERANCE = 1e-6


class ContactLimit(Limit):
    """Frames held at their poses (module docstring).

    Args:
        frames: The contact frames (names of model frames).
        tolerance: Half-width of each row's band [m], [rad] per tick.
    """

    def __init__(self, frames: Sequence[str], tolerance: float = CONTACT_TOLERANCE) -> None:
        self.tasks = tuple(FrameTask(f, position_cost=1.0, orientation_cost=1.0) for f in frames)
        self.frames = tuple(frames)
        self.tolerance = float(tolerance)

    def hold(self, configuration: Configuration) -> None:
        """Hold every contact frame where it is in ``configuration``."""
        for task in self.tasks:
            task.set_target(configuration.get_transform_frame_to_world(task.frame))

    def poses(self) -> list[pin.SE3]:
        """The held poses (world frame), in the order of ``frames``."""
        return [task.transform_target_to_world.copy() for task in self.tasks]

    def compute_qp_inequalities(
        self, configuration: Configuration, dt: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """``G Δq <= h``: ``J Δq <= -e + tol`` and ``-J Δq <= e + tol`` for every contact."""
        jacobians = [task.compute_jacobian(configuration) for task in self.tasks]
        errors = [task.compute_error(configuration) for task in self.tasks]
        J, e = np.vstack(jacobians), np.concatenate(errors)
        return np.vstack([J, -J]), np.concatenate([self.tolerance - e, self.tolerance + e])


def convex_hull(points: np.ndarray) -> np.ndarray:
    """The convex hull of 2-D ``points`` (m, 2), counter-clockwise, collinear points dropped
    (Andrew's monotone chain)."""
    unique = sorted({(float(x), float(y)) for x, y in np.asarray(points, dtype=np.float64)})
    if len(unique) < 3:
        return np.array(unique).reshape(-1, 2)

    def cross(o: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    def chain(sequence: list[tuple[float, float]]) -> list[tuple[float, float]]:
        hull: list[tuple[float, float]] = []
        for p in sequence:
            while len(hull) >= 2 and cross(hull[-2], hull[-1], p) <= 0.0:
                hull.pop()
            hull.append(p)
        return hull

    lower, upper = chain(unique), chain(unique[::-1])
    return np.array(lower[:-1] + upper[:-1])


def polygon_edges(vertices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Outward unit normals (k, 2) and offsets (k,) of a counter-clockwise convex polygon:
    a point ``p`` is inside when ``normals @ p <= offsets``."""
    if len(vertices) < 3:
        raise InputError(f"a support polygon needs 3 vertices or more, got {len(vertices)}")
    edges = np.roll(vertices, -1, axis=0) - vertices
    normals = np.column_stack([edges[:, 1], -edges[:, 0]])
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    return normals, np.einsum("ij,ij->i", normals, vertices)


class SupportPolygonLimit(Limit):
    """The CoM's horizontal position inside a convex polygon, shrunk by ``margin`` (module
    docstring).

    Args:
        model: The robot model (its total mass and CoM).
        margin: Distance kept from every edge [m], >= 0.
        approach_time: Time constant ``T`` of the approach to an edge [s], > 0.

    The polygon is set by :meth:`set_polygon` (until then: no rows).
    """

    def __init__(self, model: pin.Model, margin: float, approach_time: float = 0.5) -> None:
        self.model = model
        self.data = model.createData()
        self.margin = float(margin)
        self.approach_time = float(approach_time)
        self.vertices = np.zeros((0, 2))
        self._normals = np.zeros((0, 2))
        self._offsets = np.zeros(0)

    def set_polygon(self, vertices: np.ndarray) -> None:
        """The support polygon: its vertices (k, 2), counter-clockwise, convex."""
        self._normals, self._offsets = polygon_edges(vertices)
        self.vertices = np.array(vertices, dtype=np.float64)

    def distances(self, point: np.ndarray) -> np.ndarray:
        """Signed distance of a horizontal point to each edge (positive inside) [m]."""
        return self._offsets - self._normals @ np.asarray(point)[:2]

    def compute_qp_inequalities(
        self, configuration: Configuration, dt: float
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The damper rows (module docstring), or None before :meth:`set_polygon`."""
        if not self._offsets.size:
            return None
        jacobian = pin.jacobianCenterOfMass(self.model, self.data, configuration.q)
        com = self.data.com[0]
        G = self._normals @ jacobian[:2]
        gain = min(1.0, dt / self.approach_time)
        return G, gain * (self.distances(com) - self.margin)
