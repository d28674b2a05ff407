"""The quiet-tick check of collision avoidance, in the native kernel (``_collision_tick.c``).

Most ticks of a controller with collision avoidance have no collision row: every pair is
farther from its margin than it can close before it stops (the pair's influence distance,
:meth:`~pinkctl.controllers.collision.CollisionAvoidance.influence`). :class:`QuietCheck`
proves that cheaply, without coal: at the command configuration it computes each pair's
influence distance from the shaper's box, as the Python path does, and a *lower bound* of
each pair's signed distance from bounding capsules (the IK's, :mod:`pinkctl.ik.capsules`: a
sphere, capsule or cylinder exactly, a box or a convex mesh inside a capsule that holds
it), sharpened where that is loose: a cylinder's end planes, a box measured as a box against
the other capsule, separating axes with the exact supports of boxes and cylinders
(``_collision_tick.c``). When every bound is at least the pair's margin plus its influence
distance (plus the turning zone for the pairs that get turning rows, and :data:`SLACK` for
coal's tolerance), no pair can get a row: :meth:`~pinkctl.qp.CollisionLimit.evaluate` would
return none, and the tick runs exactly as without avoidance (the compiled tick where it
applies). Otherwise the Python path measures the pairs with coal and writes the rows: the
check decides only *whether* coal is asked, never what a row is, so the controller's commands
are those of the Python path (``tests/test_collision_check.py``).

The error kept is one-sided: a bound is never above the pair's signed distance, apart or in
penetration (a shape inside its capsule penetrates no deeper than the capsule does; an
overlap along an axis is undone by a translation along it); how far below it is costs only
ticks that ask coal when they need not. Bounds are kept from call to call, less the motion
since of one shape relative to the other (``sum_c R_c |dq_c|`` over the columns that move one
shape and not the other, :func:`~pinkctl.controllers.levers.levers`).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import coal
import numpy as np
import pinocchio as pin

from .._native import kernel_module
from ..ik.capsules import NativeBroadPhase, native_broad_phase
from ..ik.placements import Placements
from ..qp import BRAKING_SHARE
from ..qp.collision_limit import TURNING_ZONE
from .levers import drifts

if TYPE_CHECKING:
    from .collision import CollisionAvoidance

__all__ = ["SLACK", "QuietCheck", "quiet_check"]

#: Added to every pair's threshold [m]: more than coal's distance tolerance (1e-6 m).
SLACK = 1e-5

_int_p = ctypes.POINTER(ctypes.c_int)
_double_p = ctypes.POINTER(ctypes.c_double)


def _flat(placement: pin.SE3) -> np.ndarray:
    """A placement as ``_collision_tick.c`` reads it: rotation row-major, translation."""
    return np.concatenate([placement.rotation.reshape(-1), placement.translation])


def _half(shape: coal.CollisionGeometry) -> np.ndarray:
    """A box's half sides [m] (zeros for another shape)."""
    if isinstance(shape, coal.Box):
        return np.asarray(shape.halfSide, dtype=np.float64)
    return np.zeros(3)


def _vertices(objects: Any) -> tuple[list[int], np.ndarray]:
    """The convex shapes' vertices in their joints' frames (``first[g]`` to ``first[g + 1]``
    for geometry ``g``; none for another shape)."""
    first, pieces = [0], [np.zeros((0, 3))]
    for obj in objects:
        count = 0
        if isinstance(obj.geometry, coal.ConvexBase):
            points = np.asarray(obj.geometry.points(), dtype=np.float64).reshape(-1, 3)
            pieces.append(points @ obj.placement.rotation.T + obj.placement.translation)
            count = len(points)
        first.append(first[-1] + count)
    return first, np.vstack(pieces)


class _Tick(ctypes.Structure):
    """Mirror of ``CollisionTick`` in ``_collision_tick.c`` (checked by size)."""

    _fields_ = [
        ("capsules", ctypes.c_void_p),
        ("kernel", ctypes.c_void_p),
        ("n", ctypes.c_int),
        ("nq", ctypes.c_int),
        ("nspace", ctypes.c_int),
        ("q_index", _int_p),
        ("space_q", _int_p),
        ("q_home", _double_p),
        ("velocity_limit", _double_p),
        ("lower_limit", _double_p),
        ("upper_limit", _double_p),
        ("dt", ctypes.c_double),
        ("tau", ctypes.c_double),
        ("buffer", ctypes.c_double),
        ("cap", ctypes.c_double),
        ("slack", ctypes.c_double),
        ("braking", _double_p),
        ("levers", _double_p),
        ("npatterns", ctypes.c_int),
        ("pattern", _int_p),
        ("pattern_columns", _double_p),
        ("margins", _double_p),
        ("least", _double_p),
        ("slab", _int_p),
        ("box", _int_p),
        ("box_frame", _double_p),
        ("half", _double_p),
        ("box_world", _double_p),
        ("first", _int_p),
        ("vertices", _double_p),
        ("lower", _double_p),
        ("upper", _double_p),
        ("travel", _double_p),
        ("zone", _double_p),
        ("bound", _double_p),
        ("cache", ctypes.c_int),
        ("primed", ctypes.c_int),
        ("last_q", _double_p),
        ("step", _double_p),
        ("swept", _double_p),
        ("swept_at", _double_p),
        ("pattern_zone", _double_p),
        ("rows", ctypes.c_int),
        ("slot_column", _int_p),
        ("distance", _double_p),
        ("lower_distance", _double_p),
        ("points", _double_p),
        ("normal", _double_p),
        ("row", _double_p),
        ("rhs", _double_p),
        ("direction", _double_p),
        ("flagged", _int_p),
        ("drift", _double_p),
        ("moving", _int_p),
        ("approach", _double_p),
    ]


class QuietCheck:
    """The native quiet-tick check of one controller's avoidance (module docstring), built
    for the scene's pairs and obstacle poses as they are: build another when they change.

    Use :func:`quiet_check`, which returns None where the kernel cannot run it.

    Args:
        avoidance: The controller's collision avoidance.
        broad: The kernel's capsules of the scene's pairs.
        kernel: The native shaper's kernel address, or None (a shaper without its filter:
            the box from the velocity and position limits).
        q_home: The configuration of the joints a measured joint row omits.
        buffer: Added to every influence distance [m].
        cap: Largest influence distance [m].
    """

    def __init__(
        self,
        avoidance: CollisionAvoidance,
        broad: NativeBroadPhase,
        kernel: int | None,
        *,
        q_home: np.ndarray,
        buffer: float,
        cap: float,
    ) -> None:
        self._lib = kernel_module()
        if self._lib.collision_tick_size() != ctypes.sizeof(_Tick):
            raise RuntimeError("the native kernel does not match pinkctl: rebuild it")
        scene, limit, shaper = avoidance.scene, avoidance.limit, avoidance._shaper
        joints = avoidance._joints
        every = joints.every
        model = scene.model
        margins, turns = limit.pair_margins()
        space_q = np.full(len(every.robot_joint_space), -1, dtype=np.intc)
        space_q[every.space_indices] = every.idx_q
        objects = scene.geometry_model.geometryObjects
        n = len(avoidance._columns)
        accel = getattr(avoidance, "_accel", None)
        npairs = len(margins)
        # the pairs grouped by the columns that move one shape and not the other: one
        # sweep and one influence distance per group and call
        unique, pattern = np.unique(avoidance._pair_columns(), axis=0, return_inverse=True)
        self._arrays: dict[str, np.ndarray] = {
            "q_index": np.asarray(joints.controlled.idx_q, dtype=np.intc),
            "space_q": space_q,
            "q_home": np.array(q_home, dtype=np.float64),
            "velocity_limit": np.array(shaper._velocity_limit, dtype=np.float64),
            "lower_limit": np.array(shaper._lower, dtype=np.float64),
            "upper_limit": np.array(shaper._upper, dtype=np.float64),
            "braking": BRAKING_SHARE * np.asarray(accel if shaper.smooth else np.ones(n)),
            "levers": np.array(avoidance._levers, dtype=np.float64),
            "pattern": np.asarray(pattern, dtype=np.intc).reshape(-1),
            "pattern_columns": np.ascontiguousarray(unique, dtype=np.float64),
            "margins": np.array(margins, dtype=np.float64),
            "least": np.where(turns, TURNING_ZONE, -np.inf),
            **_shape_arrays(objects),
            **_scratch_arrays(n, npairs, model.nq, len(unique)),
            "slot_column": _slot_columns(broad, joints.controlled.idx_q),
            "drift": drifts(model, scene.geometry_model, joints.controlled.idx_q),
            "moving": np.zeros(npairs, dtype=np.intc),
            "approach": np.zeros(npairs),
        }
        t = _Tick()
        t.capsules = broad.address
        t.kernel = kernel
        t.n, t.nq, t.nspace = n, model.nq, len(space_q)
        t.npatterns = len(unique)
        t.dt, t.tau = float(avoidance.dt), float(limit.time_constant)
        t.buffer, t.cap, t.slack = float(buffer), float(cap), SLACK
        t.rows = 1
        for name, array in self._arrays.items():
            kind = _int_p if array.dtype == np.intc else _double_p
            setattr(t, name, array.ctypes.data_as(kind))
        if not shaper.smooth:
            t.braking = None
        # bounds kept from call to call: every controlled joint moves one coordinate and the
        # levers cover it; a joint it does not control may be continuous (tiago's wheels:
        # any change of its cos or sin computes every bound again), not a ball or a base
        controlled = joints.controlled.is_continuous.any()
        t.cache = int(not (every.balls or controlled or joints.n_base))
        self._tick = t
        self._placements = Placements(broad, objects, scene.geometry.ngeoms)
        self._pointer = ctypes.addressof(t)
        self._owners = (broad, shaper)
        #: (P,) influence distance beyond each pair's margin [m] at the last call
        self.zone = self._arrays["zone"]
        #: (P,) the last call's lower bound of each pair's signed distance [m] (``inf`` for a
        #: pair never checked)
        self.bound = self._arrays["bound"]
        #: (P,) GJK's distance [m] of the near pairs the last call decided by their rows
        #: (module docstring), NaN for the others
        self.distance = self._arrays["distance"]
        #: (P, 2, 3) their witness points on ``a`` and on ``b`` (world frame [m])
        self.points = self._arrays["points"].reshape(npairs, 2, 3)
        #: (P, 3) their unit normals from ``a`` toward ``b``
        self.normal = self._arrays["normal"].reshape(npairs, 3)
        #: (P, n) their rows ``G = -d(distance)/dq`` over the controlled columns
        self.rows = self._arrays["row"].reshape(npairs, n)
        #: (P,) 1 for each pair the last call counted (it may have a row), 0 for the others
        #: (no row of theirs can bind inside the box: the Python path need not measure them)
        self.flagged = self._arrays["flagged"]

    @property
    def caching(self) -> bool:
        """Whether bounds are kept from call to call (``_collision_tick.c``: a pair whose
        bound, less the motion since, clears every threshold of the tick is not computed
        again); set False to compute every pair on every call."""
        return bool(self._tick.cache)

    @caching.setter
    def caching(self, value: bool) -> None:
        self._tick.cache = int(bool(value))
        self._tick.primed = 0

    def follow(self, approach: np.ndarray, moving: np.ndarray) -> None:
        """This tick's obstacle motion: ``approach`` (P,) is added to each pair's influence
        distance [m] (its obstacle's anticipated motion), and the ``moving`` pairs (P,) bool
        are never decided by their rows (the Python path tightens those by the motion)."""
        self._arrays["approach"][:] = approach
        self._arrays["moving"][:] = moving

    def place(self, objects: list[Any], placed: Sequence[int]) -> None:
        """Follow the obstacles moved since the last call (``objects``: the scene's geometry
        objects, the same pairs; ``placed``: those placed again since): their pieces'
        capsules, boxes and hulls take their new placements
        (:class:`~pinkctl.ik.placements.Placements`), and the bounds kept of their pairs are
        computed again at the next call."""
        first, vertices = self._arrays["first"], self._arrays["vertices"].reshape(-1, 3)
        for g in self._placements.follow(objects, placed):
            placement = objects[g].placement
            self._arrays["box_frame"][12 * g : 12 * g + 12] = _flat(placement)
            if first[g + 1] > first[g]:
                points = np.asarray(objects[g].geometry.points()).reshape(-1, 3)
                vertices[first[g] : first[g + 1]] = points @ placement.rotation.T
                vertices[first[g] : first[g + 1]] += placement.translation
            self.bound[self._placements.pairs_of[g]] = -np.inf

    def count(self, measured: np.ndarray, space: bool, position: np.ndarray) -> int:
        """How many pairs may have a row (0: a quiet tick), or -1 when an array is not a
        contiguous float64 vector of its length.

        Args:
            measured: The measured joint row over the controller's joint space (``space``)
                or a configuration (``model.nq``).
            space: Which of the two ``measured`` is.
            position: The shaper's last command (controlled joints).
        """
        return self._lib.collision_quiet(self._pointer, measured, space, position)


def quiet_check(avoidance: CollisionAvoidance, **numbers: Any) -> QuietCheck | None:
    """The native check of ``avoidance`` at its scene as it is now (``numbers``: the keyword
    arguments of :class:`QuietCheck`), or None where the kernel cannot run it (not built; a
    joint that carries geometry it does not handle; a controlled ball or continuous joint; a
    shaper whose filter is not the native one)."""
    shaper, controlled = avoidance._shaper, avoidance._joints.controlled
    if controlled.balls or controlled.is_continuous.any():  # positions are not coordinates
        return None
    kernel: Any = None
    if shaper._native is not None:
        kernel = shaper._native._pointer
    elif shaper._filter is not None:
        return None
    scene = avoidance.scene
    pairs = np.array([[p.geometry_a, p.geometry_b] for p in scene.pairs], dtype=np.intp)
    if not len(pairs):
        return None
    broad = native_broad_phase(scene.model, scene.geometry_model, pairs.reshape(-1, 2), 0.0)
    if broad is None:
        return None
    return QuietCheck(avoidance, broad, kernel, **numbers)


def _shape_arrays(objects: list[Any]) -> dict[str, np.ndarray]:
    """The kernel's view of each geometry object: slab (cylinder) and box flags, the box's
    frame in its joint's and its half extents, each hull's first vertex and the vertices."""
    first, vertices = _vertices(objects)
    return {
        "slab": np.array([isinstance(o.geometry, coal.Cylinder) for o in objects], np.intc),
        "box": np.array([isinstance(o.geometry, coal.Box) for o in objects], np.intc),
        "box_frame": np.array([_flat(o.placement) for o in objects]).reshape(-1),
        "half": np.array([_half(o.geometry) for o in objects]).reshape(-1),
        "box_world": np.zeros(12 * len(objects)),
        "first": np.array(first, dtype=np.intc),
        "vertices": np.ascontiguousarray(vertices, dtype=np.float64).reshape(-1),
    }


def _scratch_arrays(n: int, npairs: int, nq: int, npatterns: int) -> dict[str, np.ndarray]:
    """What the kernel writes: per column (box, travel, step), per pair (influence zone,
    bounds kept across calls, the near pairs' distances, witness points, normals, rows),
    per group of pairs (sweep, zone), the configuration of the last call."""
    return {
        "lower": np.zeros(n),
        "upper": np.zeros(n),
        "travel": np.zeros(n),
        "zone": np.zeros(npairs),
        "bound": np.zeros(npairs),
        "last_q": np.zeros(nq),
        "step": np.zeros(n),
        "swept": np.zeros(npatterns),
        "swept_at": np.zeros(npairs),
        "pattern_zone": np.zeros(npatterns),
        "distance": np.full(npairs, np.nan),
        "lower_distance": np.full(npairs, np.nan),
        "points": np.zeros(6 * npairs),
        "normal": np.zeros(3 * npairs),
        "row": np.zeros(n * npairs),
        "rhs": np.full(npairs, np.nan),
        "direction": np.zeros(3 * npairs),
        "flagged": np.zeros(npairs, dtype=np.intc),
    }


def _slot_columns(broad: NativeBroadPhase, idx_q: Any) -> np.ndarray:
    """The controlled column of each broad-phase slot's joint coordinate (-1 where that
    coordinate is not controlled, and for every slot of kind 2)."""
    column_of = {int(i): c for c, i in enumerate(idx_q)}
    slots = zip(broad._arrays["q_index"].tolist(), broad._arrays["kind"].tolist())
    columns = [column_of.get(int(i), -1) if kind != 2 else -1 for i, kind in slots]
    return np.array(columns or [-1], dtype=np.intc)
