"""How fast a robot's geometry can move: lever bounds per joint column [m/rad] or [m/m].

The collision avoidance's influence distances and the quiet-tick check's kept bounds
(:mod:`~pinkctl.controllers.collision_check`) rely on them: no point a column moves goes
faster than its lever times the column's rate, at any configuration.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

__all__ = ["drifts", "levers"]


def levers(model: pin.Model, geometry: pin.GeometryModel, columns: np.ndarray) -> np.ndarray:
    """(len(columns),) bound [m] of ``|d(point)/dq_c|`` over every geometry point that
    tangent column ``c`` moves, at any configuration: the chain's joint offsets from the
    column's joint to the geometry's, plus the geometry's reach from its own joint (1 for a
    translation)."""
    joint_of = np.zeros(model.nv, dtype=np.intp)
    for j in range(1, model.njoints):
        joint_of[model.idx_vs[j] : model.idx_vs[j] + model.nvs[j]] = j
    reach = np.zeros(model.njoints)  # farthest geometry point from each joint, along the chain
    for obj in geometry.geometryObjects:
        shape = obj.geometry
        shape.computeLocalAABB()
        extent = np.linalg.norm(obj.placement.translation) + float(shape.aabb_radius)
        j, path = obj.parentJoint, 0.0
        while j > 0:
            reach[j] = max(reach[j], path + extent)
            path += float(np.linalg.norm(model.jointPlacements[j].translation))
            j = model.parents[j]
    levers = np.empty(len(columns))
    for k, c in enumerate(columns.tolist()):
        j = int(joint_of[c])
        shortname = model.joints[j].shortname()
        translation = "Prismatic" in shortname or shortname.startswith("JointModelP")
        free = shortname in ("JointModelFreeFlyer", "JointModelPlanar")
        levers[k] = 1.0 if translation or (free and c - model.idx_vs[j] < 3) else reach[j]
    return levers


def drifts(model: pin.Model, geometry: pin.GeometryModel, controlled: Any) -> np.ndarray:
    """(nq,) bound [m] of how far a geometry point moves per unit change of each
    configuration coordinate that ``controlled`` (configuration indices) leaves out: a
    one-coordinate joint's lever (:func:`levers`), a continuous joint's lever times pi / 2 on
    each of its cos and sin (the angle is at most pi / 2 the chord, the chord at most the
    two changes); ``inf`` for another joint (ball, free: any change computes every bound
    again); 0 for the controlled coordinates (their columns' sweep counts them)."""
    drift = np.full(model.nq, np.inf)
    every = levers(model, geometry, np.arange(model.nv))
    for j in range(1, model.njoints):
        q0, nq, nv = model.idx_qs[j], model.nqs[j], model.nvs[j]
        if nv == 1 and nq in (1, 2):  # revolute, prismatic, continuous
            lever = float(every[model.idx_vs[j]])
            drift[q0 : q0 + nq] = lever if nq == 1 else lever * np.pi / 2.0
    drift[np.asarray(controlled, dtype=np.intp)] = 0.0
    return drift
