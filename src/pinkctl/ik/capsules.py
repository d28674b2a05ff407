"""The IK's collision check in the native kernel (``_collision.c``, ``_narrow.c``).

Broad phase: every geometry of the check's pairs is held by a capsule in its joint's frame (a
sphere, a capsule and a cylinder exactly; a box, a convex mesh and any other shape by a
capsule along the principal axis of its vertices that holds all of them, or its bounding
sphere when that is smaller); a half-space obstacle stays a plane. The kernel computes the
kinematics of the joints that carry geometry, then a lower bound of each pair's distance
(segments apart minus both radii; a segment's height above a plane minus its radius), and
returns the pairs whose bound is below their threshold, nearest first: on a collision-free
configuration most pairs are then never measured.

Narrow phase (:meth:`NativeBroadPhase.free`, and the IK's native search on every converged
configuration): the pairs the capsules cannot clear are decided on coal's own shapes
(sphere, capsule, cylinder, box, convex hull; a half-space exactly) by GJK on their support
functions, and a pair is accepted only with a proof: a direction along which the lowest
point of the Minkowski difference is at least the threshold away (a lower bound of the
distance, exact to rounding). So an accepted configuration keeps every threshold; a
rejected one is closer, or within 1e-10 (relative) of a threshold, where coal's own test
(GJK tolerance 1e-6 m) cannot tell either. A pair with another shape is left to coal
(``free`` answers -1).

:func:`native_broad_phase` returns None where the kernel cannot run (it is not built, or a
joint that carries geometry is neither revolute, prismatic, continuous nor a mimic of one:
a free or ball joint); the numpy bounding spheres of :mod:`pinkctl.ik.collision` then run.
"""

from __future__ import annotations

import ctypes
import math

import coal
import numpy as np
import pinocchio as pin

from .._native import kernel_module, native_available
from ..world.broad_phase import bounding_sphere
from .narrow import flat as _flat
from .narrow import shape_arrays
from .narrow import vertices as _vertices
from .native import _AXES, _CONTINUOUS, _PRISMATIC, _REVOLUTE

__all__ = ["NativeBroadPhase", "bounding_capsule", "native_broad_phase"]

_int_p = ctypes.POINTER(ctypes.c_int)
_double_p = ctypes.POINTER(ctypes.c_double)


class _Problem(ctypes.Structure):
    """Mirror of ``CapsuleProblem`` in ``_collision.c`` (checked by size)."""

    _fields_ = [
        ("nj", ctypes.c_int),
        ("ngeom", ctypes.c_int),
        ("npairs", ctypes.c_int),
        ("margin", ctypes.c_double),
        ("parent", _int_p),
        ("kind", _int_p),
        ("q_index", _int_p),
        ("scale", _double_p),
        ("offset", _double_p),
        ("placement", _double_p),
        ("axis", _double_p),
        ("slot", _int_p),
        ("segment", _double_p),
        ("radius", _double_p),
        ("reach", _double_p),
        ("plane", _int_p),
        ("pairs", _int_p),
        ("q", _double_p),
        ("frames", _double_p),
        ("ends", _double_p),
        ("near", _int_p),
        ("bound", _double_p),
        ("pair_margin", _double_p),
        ("shape", _int_p),
        ("shape_param", _double_p),
        ("shape_placement", _double_p),
        ("vert_start", _int_p),
        ("vert_count", _int_p),
        ("vertices", _double_p),
        ("direction", _double_p),
        ("climb", _int_p),
        ("adj_start", _int_p),
        ("adj", _int_p),
        ("warm", _int_p),
        ("ngroups", ctypes.c_int),
        ("group_start", _int_p),
        ("group_slot", _int_p),
        ("group_plane", _int_p),
        ("order", _int_p),
        ("slot_sphere", _double_p),
        ("slot_centre", _double_p),
        ("hit", ctypes.c_int),
        ("reuse", _int_p),
        ("reuse_for", ctypes.c_long),
        ("given", _double_p),
    ]


def _from_points(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """A capsule holding ``points`` (N, 3): along their principal axis, through their mean."""
    mean = points.mean(axis=0)
    centred = points - mean
    axis = np.linalg.svd(centred, full_matrices=False)[2][0]
    along = centred @ axis
    radial = np.linalg.norm(centred - np.outer(along, axis), axis=1)
    radius = float(radial.max()) * (1.0 + 1e-9) + 1e-12
    reach = np.sqrt(np.maximum(radius**2 - radial**2, 0.0))
    # each point needs a segment point within ``reach`` of its own along the axis: the
    # segment must start before min(along + reach) and end after max(along - reach)
    start, end = float(np.min(along + reach)), float(np.max(along - reach))
    if start > end:  # one point holds them all: any value between the two
        start = end = 0.5 * (start + end)
    return mean + start * axis, mean + end * axis, radius


def _smaller_capsule(
    points: np.ndarray | None, centre: np.ndarray, sphere: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """The capsule of ``points`` when its volume is below the bounding sphere's, else the
    sphere (a capsule of length 0)."""
    if points is not None and len(points) > 1:
        a, b, radius = _from_points(points)
        capsule = math.pi * radius**2 * (4.0 / 3.0 * radius + float(np.linalg.norm(b - a)))
        if capsule < 4.0 / 3.0 * math.pi * sphere**3:
            return a, b, radius
    return centre, centre.copy(), float(sphere)


#: Capsules of boxes and hulls worked out, by shape type and vertices (a robot's come back at
#: every rebuild of a check, after each change of the world).
_CAPSULES: dict[tuple[type, bytes], tuple[np.ndarray, np.ndarray, float]] = {}
_CAPSULES_KEPT = 4096


def bounding_capsule(shape: coal.CollisionGeometry) -> tuple[np.ndarray, np.ndarray, float]:
    """Ends (3,), (3,) and radius [m] of a capsule holding ``shape``, in the shape's frame
    (module docstring); a half-space has none (ValueError)."""
    if isinstance(shape, coal.Halfspace):
        raise ValueError("a half-space has no bounding capsule")
    if isinstance(shape, coal.Sphere):
        return np.zeros(3), np.zeros(3), float(shape.radius)
    if isinstance(shape, (coal.Capsule, coal.Cylinder)):  # a cylinder inside its capsule
        h = float(shape.halfLength)
        return np.array([0.0, 0.0, -h]), np.array([0.0, 0.0, h]), float(shape.radius)
    points = _vertices(shape)
    key = None if points is None else (type(shape), points.tobytes())
    known = _CAPSULES.get(key) if key is not None else None
    if known is None:
        centre, sphere = bounding_sphere(shape)
        known = _smaller_capsule(points, centre, sphere)
        if key is not None:
            if len(_CAPSULES) >= _CAPSULES_KEPT:
                _CAPSULES.clear()
            _CAPSULES[key] = known
    a, b, radius = known
    return a.copy(), b.copy(), radius


def _motion(model: pin.Model, joint: int) -> tuple[int, np.ndarray, int, float, float, pin.SE3]:
    """``(kind, axis, q index, scale, offset, placement)`` of a 1-DoF joint (ValueError for
    another): kind 0 revolute, 1 prismatic, 2 continuous; a mimic joint's motion is found
    from two configurations of its primary."""
    jm = model.joints[joint]
    name = jm.shortname()
    if name in _REVOLUTE or name in _PRISMATIC or name in _CONTINUOUS:
        kind = 0 if name in _REVOLUTE else (1 if name in _PRISMATIC else 2)
        named = _AXES.get(name[-1]) if not name.endswith("Unaligned") else None
        axis = np.array(named if named is not None else jm.extract().axis, dtype=np.float64)
        return kind, axis, jm.idx_q, 1.0, 0.0, model.jointPlacements[joint]
    if name != "JointModelMimic":
        raise ValueError(name)
    return _mimic_motion(model, joint)


def _mimic_motion(
    model: pin.Model, joint: int
) -> tuple[int, np.ndarray, int, float, float, pin.SE3]:
    """:func:`_motion` of a mimic joint, from two configurations of its primary."""
    jm = model.joints[joint]
    mimic = jm.extract()
    scale, offset, index = float(mimic.scaling), float(mimic.offset), int(jm.idx_q)
    data = model.createData()
    local = []
    for value in (0.0, 0.5):
        q = pin.neutral(model)
        q[index] = value
        pin.forwardKinematics(model, data, q)
        local.append(data.liMi[joint].copy())
    if scale == 0.0:
        return 0, np.array([0.0, 0.0, 1.0]), index, 0.0, 0.0, local[0]
    twist = pin.log6(local[0].inverse() * local[1]).vector / (0.5 * scale)
    linear, angular = twist[:3], twist[3:]
    if np.linalg.norm(angular) > 0.5:
        kind, axis = 0, angular / np.linalg.norm(angular)
        if np.linalg.norm(linear) > 1e-9:
            raise ValueError("a mimic joint whose axis is off its origin")
    else:
        kind, axis = 1, linear / np.linalg.norm(linear)
    at_zero = pin.exp6(pin.Motion(np.concatenate([linear, angular]) * offset))
    return kind, axis, index, scale, offset, local[0] * at_zero.inverse()


def _motion_arrays(motions: list[tuple]) -> dict[str, np.ndarray]:
    """The joints' :func:`_motion` tuples as the structure's arrays."""
    kind, axis, index, scale, offset, placement = zip(*motions) if motions else ([],) * 6
    return {
        "kind": np.array(kind, dtype=np.intc),
        "q_index": np.array(index, dtype=np.intc),
        "scale": np.array(scale, dtype=np.float64),
        "offset": np.array(offset, dtype=np.float64),
        "placement": np.array([_flat(m) for m in placement]).reshape(-1),
        "axis": np.array(axis, dtype=np.float64).reshape(-1),
    }


def _joint_arrays(model: pin.Model, objects: list, used: list[int]) -> dict[str, np.ndarray]:
    """The kinematics of the joints that carry the ``used`` geometries (root side first)."""
    joints = sorted({j for g in used for j in model.supports[objects[g].parentJoint]} - {0})
    slot = {0: 0, **{j: s + 1 for s, j in enumerate(joints)}}
    return {
        **_motion_arrays([_motion(model, j) for j in joints]),
        "parent": np.array([slot[model.parents[j]] for j in joints], dtype=np.intc),
        "slot": np.array([slot.get(o.parentJoint, 0) for o in objects], dtype=np.intc),
        "frames": np.zeros(12 * (len(joints) + 1)),
        # the IK chain joint whose placement each slot takes (_collision.c's match_chain)
        "reuse": np.full(len(joints), -1, dtype=np.intc),
    }


def _capsule_arrays(objects: list, used: list[int]) -> dict[str, np.ndarray]:
    """Each used geometry's capsule in its joint's frame, or its plane (a half-space)."""
    count = len(objects)
    segment = np.zeros((count, 6))
    radius = np.zeros(count)
    plane = np.zeros(count, dtype=np.intc)
    for g in used:
        obj = objects[g]
        if isinstance(obj.geometry, coal.Halfspace):
            normal = obj.placement.rotation[:, 2]
            segment[g, :3] = normal
            segment[g, 3] = float(normal @ obj.placement.translation)
            plane[g] = 1
            continue
        a, b, radius[g] = bounding_capsule(obj.geometry)
        segment[g] = np.concatenate([obj.placement.act(a), obj.placement.act(b)])
    return {
        "segment": segment.reshape(-1),
        "radius": radius,
        "reach": radius + 0.5 * np.linalg.norm(segment[:, 3:] - segment[:, :3], axis=1),
        "plane": plane,
        "ends": np.zeros(6 * count),
    }


def _slot_spheres(arrays: dict[str, np.ndarray], pairs: np.ndarray, nslots: int) -> np.ndarray:
    """(nslots, 4): a sphere in each joint's frame holding the capsules of all its
    geometries in ``pairs``."""
    spheres = np.zeros((nslots, 4))
    ends = arrays["segment"].reshape(-1, 2, 3)
    held = arrays["plane"] == 0
    held[np.setdiff1d(np.arange(len(held)), pairs.reshape(-1))] = False
    for slot in range(nslots):
        mine = np.flatnonzero(held & (arrays["slot"] == slot))
        if not len(mine):
            continue
        points = ends[mine].reshape(-1, 3)
        centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
        gaps = np.linalg.norm(ends[mine] - centre, axis=2).max(axis=1) + arrays["radius"][mine]
        spheres[slot, :3], spheres[slot, 3] = centre, float(gaps.max()) * (1.0 + 1e-12)
    return spheres


def _groups(pairs: np.ndarray, slot: np.ndarray, plane: np.ndarray) -> dict[tuple, list[int]]:
    """Pair positions by ``(slot a, slot b, -1)``, or ``(slot a, -1, plane b)``."""
    groups: dict[tuple[int, int, int], list[int]] = {}
    for k, (a, b) in enumerate(pairs):
        key = (int(slot[a]), -1, int(b)) if plane[b] else (int(slot[a]), int(slot[b]), -1)
        groups.setdefault(key, []).append(k)
    return groups


def _group_arrays(pairs: np.ndarray, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The pairs grouped by their two joints' slots (a half-space pair: by its slot and
    plane), and each slot's sphere (``_collision.c``)."""
    nslots = len(arrays["parent"]) + 1
    pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
    groups = _groups(pairs, arrays["slot"], arrays["plane"])
    keys = list(groups)
    return {
        "group_start": np.cumsum([0] + [len(groups[g]) for g in keys]).astype(np.intc),
        "group_slot": np.array([(g[0], max(g[1], 0)) for g in keys] or [(0, 0)], dtype=np.intc),
        "group_plane": np.array([g[2] for g in keys] or [-1], dtype=np.intc),
        "order": np.array([k for g in keys for k in groups[g]] or [0], dtype=np.intc),
        "slot_sphere": _slot_spheres(arrays, pairs, nslots).reshape(-1),
        "slot_centre": np.zeros(3 * nslots),
    }


class NativeBroadPhase:
    """The kernel's collision check over ``pairs`` of a geometry model (module docstring).

    Args:
        model: The kinematic model.
        geometry: The geometry model (robot objects, then obstacle pieces).
        pairs: (P, 2) geometry indices; a half-space only second.
        margin: Pairs whose bound is below this [m] are returned.
        thresholds: Each pair's own threshold [m] (P,), at most ``margin``; None: ``margin``.

    Raises:
        ValueError: A joint that carries geometry is not one the kernel handles.
    """

    def __init__(
        self,
        model: pin.Model,
        geometry: pin.GeometryModel,
        pairs: np.ndarray,
        margin: float,
        thresholds: np.ndarray | None = None,
    ) -> None:
        self._lib = kernel_module()
        if self._lib.capsule_problem_size() != ctypes.sizeof(_Problem):
            raise RuntimeError("the native kernel does not match pinkctl: rebuild it")
        objects = list(geometry.geometryObjects)
        used = sorted({int(g) for g in np.asarray(pairs).reshape(-1)})
        count = max(len(pairs), 1)
        if thresholds is None:
            thresholds = np.full(len(pairs), float(margin))
        arrays = {**_joint_arrays(model, objects, used), **_capsule_arrays(objects, used)}
        self._arrays: dict[str, np.ndarray] = {
            **arrays,
            **_group_arrays(pairs, arrays),
            **shape_arrays(objects, used),
            "pairs": np.ascontiguousarray(pairs, dtype=np.intc).reshape(-1),
            "pair_margin": np.ascontiguousarray(thresholds, dtype=np.float64).reshape(-1),
            "q": np.zeros(model.nq),
            "near": np.zeros(count, dtype=np.intc),
            "bound": np.zeros(count),
            "direction": np.zeros(3 * count),
        }
        p = _Problem()
        p.nj, p.ngeom, p.npairs = len(self._arrays["parent"]), len(objects), len(pairs)
        p.ngroups = len(self._arrays["group_start"]) - 1
        p.margin = max(float(margin), *self._arrays["pair_margin"].tolist(), 0.0)
        for name, array in self._arrays.items():
            setattr(p, name, array.ctypes.data_as(_int_p if array.dtype == np.intc else _double_p))
        self._problem = p
        self.address = ctypes.addressof(p)
        self._q = self._arrays["q"]
        self._q_address = self._q.ctypes.data
        self._near = self._arrays["near"]
        self.bounds = self._arrays["bound"]

    def near(self, q: np.ndarray) -> np.ndarray:
        """Positions in ``pairs`` of the pairs whose bound is below their threshold at the
        full configuration ``q``, nearest first (a view, valid until the next call)."""
        self._q[:] = q
        return self._near[: self._lib.capsule_near(self.address)]

    def free(self, q: np.ndarray) -> int:
        """Whether every pair keeps its threshold at the full configuration ``q``: 1 yes,
        0 no (:attr:`hit` names the pair), -1 undecided (a near pair has a shape the kernel
        does not know)."""
        self._q[:] = q
        return self._lib.capsule_free(self.address, self._q_address)

    @property
    def hit(self) -> int:
        """The position in ``pairs`` of the pair :meth:`free` last found too close."""
        return int(self._problem.hit)


def native_broad_phase(
    model: pin.Model,
    geometry: pin.GeometryModel,
    pairs: np.ndarray,
    margin: float,
    thresholds: np.ndarray | None = None,
) -> NativeBroadPhase | None:
    """The kernel's check, or None where it cannot run (module docstring)."""
    if not native_available()[0]:
        return None
    try:
        return NativeBroadPhase(model, geometry, pairs, margin, thresholds)
    except ValueError:
        return None
