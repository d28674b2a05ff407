"""Self pairs whose distance no command changes (both shapes moved by the same controlled
joints), which a controller need not check."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from .scene import CollisionScene

__all__ = ["still_pairs"]


def still_pairs(
    model: pin.Model, scene: CollisionScene, n_self: int, columns: np.ndarray
) -> np.ndarray:
    """Whether each of the first ``n_self`` (self) pairs keeps its distance whatever the
    controlled joints (tangent ``columns``) do: both shapes moved by the same controlled
    joints (e.g. two links of an arm the controller does not drive)."""
    controlled = set(columns.tolist())
    objects = scene.geometry_model.geometryObjects

    def moved_by(geometry: int) -> frozenset[int]:
        joints = model.supports[objects[geometry].parentJoint]
        cols = {model.joints[j].idx_v + k for j in joints for k in range(model.joints[j].nv)}
        return frozenset(cols & controlled)

    pairs = scene.pairs[:n_self]
    return np.array([moved_by(p.geometry_a) == moved_by(p.geometry_b) for p in pairs], dtype=bool)
