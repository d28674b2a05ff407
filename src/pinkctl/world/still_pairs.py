"""Self pairs whose distance no command changes (both shapes moved by the same controlled
joints), which a controller need not check."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

__all__ = ["still_pairs"]


def still_pairs(
    model: pin.Model,
    geometry_model: pin.GeometryModel,
    pairs: Sequence[tuple[int, int]],
    columns: np.ndarray,
) -> np.ndarray:
    """Whether each self pair (two geometry indices of ``geometry_model``) keeps its distance
    whatever the controlled joints (tangent ``columns``) do: both shapes moved by the same
    controlled joints (e.g. two fingers of a hand the controller does not drive)."""
    controlled = set(np.asarray(columns).tolist())
    objects = geometry_model.geometryObjects

    def moved_by(geometry: int) -> frozenset[int]:
        joints = model.supports[objects[geometry].parentJoint]
        cols = {model.joints[j].idx_v + k for j in joints for k in range(model.joints[j].nv)}
        return frozenset(cols & controlled)

    return np.array([moved_by(a) == moved_by(b) for a, b in pairs], dtype=bool)
