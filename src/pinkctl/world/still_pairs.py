"""Pairs whose distance no command changes, which a controller need not check: self pairs
whose two shapes the same controlled joints move, and a shape no controlled joint moves
against any obstacle."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

if TYPE_CHECKING:
    from .robot_geometry import RobotGeometry

__all__ = ["drop_still_pairs", "still_geometries", "still_pairs"]


def still_pairs(geometry: RobotGeometry, columns: np.ndarray) -> np.ndarray:
    """Whether each self pair of ``geometry`` (:attr:`RobotGeometry.pairs` order) keeps its
    distance whatever the controlled joints (tangent ``columns``) do: both shapes moved by the
    same controlled joints (e.g. two fingers of a hand the controller does not drive)."""
    model = geometry.model
    controlled = set(np.asarray(columns).tolist())
    objects = geometry.geometry_model.geometryObjects

    def moved_by(index: int) -> frozenset[int]:
        joints = model.supports[objects[index].parentJoint]
        cols = {model.joints[j].idx_v + k for j in joints for k in range(model.joints[j].nv)}
        return frozenset(cols & controlled)

    moved = [moved_by(g) for g in range(len(objects))]  # once per shape, not per pair
    return np.array([moved[a] == moved[b] for a, b in geometry.pairs], dtype=bool)


def drop_still_pairs(geometry: RobotGeometry, columns: np.ndarray) -> int:
    """Remove the :func:`still_pairs` of ``geometry`` from its active pairs; how many."""
    pairs = geometry.pairs
    still = still_pairs(geometry, columns)
    for (a, b), drop in zip(pairs, still.tolist()):
        if drop:
            geometry.geometry_model.removeCollisionPair(pin.CollisionPair(a, b))
    return int(still.sum())


def still_geometries(geometry: RobotGeometry, columns: np.ndarray) -> np.ndarray:
    """Whether each geometry object of ``geometry`` stays where it is whatever the controlled
    joints (tangent ``columns``) do (a fixed base's wheels): its distance to a still obstacle
    never changes, and no command can move it away from a moving one."""
    model = geometry.model
    controlled = set(np.asarray(columns).tolist())
    return np.array(
        [
            not any(
                model.joints[j].idx_v + k in controlled
                for j in model.supports[obj.parentJoint]
                for k in range(model.joints[j].nv)
            )
            for obj in geometry.geometry_model.geometryObjects
        ],
        dtype=bool,
    )
