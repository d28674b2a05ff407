"""Obstacles moved in place in the kernel's collision check.

A moved obstacle changes no pair, only where its pieces are. The native check built for a
scene (:class:`~pinkctl.ik.capsules.NativeBroadPhase`, and the controller's quiet-tick
check over it) takes the pieces' new placements into its arrays instead of being built
again (franka: 3.7 ms a build): each moved piece's capsule (or a half-space's plane) in the
world frame and the placement of its exact shape for the narrow phase. The sphere of the
universe's slot, which held every capsule on it for the broad phase's first cull
(:meth:`~pinkctl.ik.capsules.NativeBroadPhase.near`), becomes unbounded: a group of pairs
with a piece is then always looked at pair by pair (the quiet-tick check does so anyway).
"""

from __future__ import annotations

from collections.abc import Sequence

import coal
import numpy as np
import pinocchio as pin

from .capsules import NativeBroadPhase, bounding_capsule
from .narrow import flat

__all__ = ["Placements"]


class Placements:
    """The placements of a native check's obstacle pieces (its geometries on the universe
    joint from ``first`` on), followed in its arrays.

    Args:
        broad: The kernel's check.
        objects: The geometry model's objects it was built from.
        first: The first obstacle piece (the robot's own geometries come before it).
    """

    def __init__(
        self, broad: NativeBroadPhase, objects: Sequence[pin.GeometryObject], first: int
    ) -> None:
        arrays = broad._arrays
        pairs = arrays["pairs"].reshape(-1, 2)
        self._broad = broad
        used = np.unique(pairs).tolist()
        #: the obstacle pieces of the check's pairs (on slot 0, capsules._joint_arrays)
        self.pieces = [g for g in used if g >= first and objects[g].parentJoint == 0]
        #: the positions in ``pairs`` of each piece's pairs
        self.pairs_of = {g: np.flatnonzero((pairs == g).any(axis=1)) for g in self.pieces}
        # each piece's capsule ends in its own frame (None: a half-space, whose plane comes
        # from its placement alone)
        self._local: dict[int, np.ndarray | None] = {}
        for g in self.pieces:
            shape = objects[g].geometry
            held = not isinstance(shape, coal.Halfspace)
            self._local[g] = np.array(bounding_capsule(shape)[:2]) if held else None

    def follow(self, objects: Sequence[pin.GeometryObject], placed: Sequence[int]) -> list[int]:
        """Take the current placements of the ``placed`` geometries (those placed again since
        the last call: a ``CollisionScene``'s ``placed`` versions) into the check's arrays;
        those of them that are the check's pieces."""
        arrays = self._broad._arrays
        placement = arrays["shape_placement"].reshape(-1, 12)
        segment = arrays["segment"].reshape(-1, 6)
        moved = []
        for g in placed:
            if g not in self._local:  # a piece in no pair of the check
                continue
            now = objects[g].placement
            placement[g] = flat(now)
            local = self._local[g]
            if local is None:  # a half-space: its normal (the frame's z axis) and offset
                normal = now.rotation[:, 2]
                segment[g, :3], segment[g, 3] = normal, normal @ now.translation
            else:  # the capsule's ends (its radius stays)
                segment[g, :3], segment[g, 3:] = now.act(local[0]), now.act(local[1])
            moved.append(g)
        if moved:  # the universe's sphere unbounded: its groups are never culled
            arrays["slot_sphere"][3] = np.inf
        return moved
