"""The seed library: collision-free starts whose tool pose is near the target.

Once a converged configuration collided, the global search (:mod:`pinkctl.ik.search`, and
the kernel's, ``_ik_query.c``) starts its next local solves, after the rejected answer's
branch flips, from configurations of this library before any further random one: the
:data:`LIBRARY_STARTS` entries nearest the target by ``|p - p_target|² + w² (2 - x·x_target
- z·z_target)`` (``x``, ``z``: the tool's axes; ``w`` = :data:`LIBRARY_WEIGHT` [m/rad], the
rotation's term is about ``w² angle²``), nearest first, those that keep the collision margin.
A solve from a collision-free configuration near the target often ends collision-free
(franka, 1,000 targets: 19.4 -> 15.3-15.9 iterations a query against the blind search's
13.1-14.2; docs/ik.md, "Collision-free IK").

The library is built once per solver, at its first rejection (a solver whose answers never
collide pays nothing; franka 60 ms, ur5 90 ms, 0.5-1 MiB): :data:`LIBRARY_SIZE`
configurations drawn uniformly within the moved joints' limits from a fixed generator seed,
the other joints at the robot's ``q0``, kept when the kernel's check accepts them, with the
tool frame's pose at each, then grouped in runs of nearby poses (:meth:`SeedLibrary._bucket`)
so that the kernel's search for the nearest entries skips the runs too far to hold one
(about a quarter of the entries are looked at; the same picks as the pass over all of them).
After the world changes, an entry is checked again (once) when it is picked, and skipped
when it no longer keeps the margin. Only a search whose check runs in the kernel
(:mod:`pinkctl.ik.capsules`) uses it, so both paths take the same verdicts.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from .joints import JointSubset

if TYPE_CHECKING:
    from .collision import CollisionCheck
    from .residual import Residual

__all__ = ["LIBRARY_SIZE", "LIBRARY_STARTS", "LIBRARY_WEIGHT", "LibraryPicks", "SeedLibrary"]

#: Entries of a library (collision-free configurations).
LIBRARY_SIZE = 4096
#: Library starts a search takes, all queued by its first rejection (not a flip's).
LIBRARY_STARTS = 16
#: The rotation's weight in the pose distance [m/rad].
LIBRARY_WEIGHT = 0.3
#: The generator seed of the draws (fixed: the same library, the same answers).
LIBRARY_SEED = 0x5EED
#: Draws at most per entry wanted (a robot whose random configurations mostly collide).
_DRAWS_PER_ENTRY = 8
#: The draws of :data:`LIBRARY_SIZE` come in this many chunks (fewer checked past the last).
_CHUNKS = 8
#: Rounds of k-means that group the entries (:meth:`SeedLibrary._bucket`).
_ROUNDS = 8


class SeedLibrary:
    """The library of one solver (module docstring), built on first use.

    Args:
        model: The robot's model.
        subset: The moved joints.
        frame_id: The tool frame (the default frame's goal).
        template: The other joints' values (the robot's ``q0``).
        check: The solver's collision check, or None (no library).
    """

    def __init__(
        self,
        model: pin.Model,
        subset: JointSubset,
        frame_id: int,
        template: np.ndarray,
        check: CollisionCheck | None,
    ) -> None:
        self._model, self._subset, self._frame = model, subset, frame_id
        self._template = template
        self._check = check
        self.rows = np.empty((0, len(template)))
        self.poses = np.empty((0, 9))
        self.state = np.empty(0, dtype=np.intc)  # 1: keeps the margin, -1: not, 0: unknown
        self.distance = np.empty(0)  # the kernel's workspaces
        self.order_rows = np.empty(0, dtype=np.intc)
        self.bucket_start = np.zeros(1, dtype=np.intc)  # the runs of entries (_bucket)
        self.bucket_center = np.empty((0, 9))
        self.bucket_radius = np.empty((0, 2))
        self.bucket_bound = np.empty(0)  # the kernel's workspaces
        self.bucket_order = np.empty(0, dtype=np.intc)
        self._built = False
        self._version = -1
        moved = [np.arange(i, i + k) for i, k in zip(subset.q_index, subset.q_size) if k > 0]
        self._moved_q = np.concatenate(moved) if moved else np.empty(0, dtype=np.intp)

    @property
    def wanted(self) -> bool:
        """Whether searches use it: the check runs in the kernel."""
        check = self._check
        return check is not None and check._native is not None and bool(check._index)

    def sync(self) -> None:
        """Forget the verdicts when the check's world changed since they were taken."""
        assert self._check is not None
        version = self._check.scene.world.version
        if version != self._version:
            self.state[:] = 0
            self._version = version

    def build(self) -> int:
        """The entries (built on the first call; 0 when no draw kept the margin)."""
        if self._built:
            return len(self.rows)
        check, subset = self._check, self._subset
        assert check is not None and check._native is not None
        native = check._native
        generator = np.random.default_rng(LIBRARY_SEED)
        kept: list[np.ndarray] = []
        for _ in range(_DRAWS_PER_ENTRY * _CHUNKS):
            drawn = subset.samples(generator, self._template, LIBRARY_SIZE // _CHUNKS)
            kept.extend(q for q in drawn if native.free(q) > 0)
            if len(kept) >= LIBRARY_SIZE:
                break
        rows = np.array(kept[:LIBRARY_SIZE]).reshape(-1, len(self._template))
        if len(rows):  # none kept: no entry, no run (searches start without the library)
            self._bucket(rows, self._poses(rows))
        self.state = np.ones(len(rows), dtype=np.intc)
        self.distance = np.zeros(LIBRARY_STARTS)
        self.order_rows = np.zeros(LIBRARY_STARTS, dtype=np.intc)
        self._version = check.scene.world.version
        self._built = True
        return len(rows)

    def _bucket(self, rows: np.ndarray, poses: np.ndarray) -> None:
        """Keep the entries in runs of nearby keys (the kernel's search skips a run that cannot
        hold a nearer entry, ``library_order`` in ``_ik_query.c``): about sqrt(n) runs from
        a few rounds of k-means on the keys (position, then ``sqrt(w² / 2)`` times the x and
        z axes: ``|key - key_target|²`` is the pose distance of :meth:`order`), started from
        evenly spaced entries; each run's centre and its radii over the keys and over the
        positions."""
        scale = np.sqrt(0.5) * LIBRARY_WEIGHT
        keys = np.hstack([poses[:, :3], scale * poses[:, 3:]])
        n = len(keys)
        k = max(1, round(np.sqrt(n)))
        centres = keys[np.linspace(0, n - 1, k).astype(int)]
        for _ in range(_ROUNDS + 1):
            gaps = (keys**2).sum(1)[:, None] - 2.0 * keys @ centres.T + (centres**2).sum(1)
            label = np.argmin(gaps, axis=1)
            sums = np.zeros_like(centres)
            np.add.at(sums, label, keys)
            counts = np.bincount(label, minlength=k)[:, None]
            centres = np.where(counts > 0, sums / np.maximum(counts, 1), centres)
        runs = np.argsort(label, kind="stable")  # the last round's runs, the centres after it
        keys, label = keys[runs], label[runs]
        self.rows = np.ascontiguousarray(rows[runs])
        self.poses = np.ascontiguousarray(poses[runs])
        spread = np.linalg.norm(keys - centres[label], axis=1)
        reach = np.linalg.norm(keys[:, :3] - centres[label, :3], axis=1)
        radius = np.zeros((k, 2))
        np.maximum.at(radius[:, 0], label, spread)
        np.maximum.at(radius[:, 1], label, reach)
        self.bucket_radius = np.ascontiguousarray(radius * (1.0 + 1e-9))
        self.bucket_center = np.ascontiguousarray(centres)
        self.bucket_start = np.searchsorted(label, np.arange(k + 1)).astype(np.intc)
        self.bucket_bound = np.zeros(k)
        self.bucket_order = np.zeros(k, dtype=np.intc)

    def _poses(self, rows: np.ndarray) -> np.ndarray:
        """The tool's position and x and z axes at each of ``rows``, (k, 9)."""
        model, data, frame = self._model, self._model.createData(), self._frame
        poses = np.empty((len(rows), 9))
        for q, pose in zip(rows, poses):
            pin.forwardKinematics(model, data, q)
            placement = pin.updateFramePlacement(model, data, frame)
            pose[:3] = placement.translation
            pose[3:] = placement.rotation[:, [0, 2]].T.ravel()  # x, then z
        return poses

    def keeps(self, e: int) -> bool:
        """Whether entry ``e`` keeps the margin in the current world (checked once)."""
        if self.state[e] == 0:
            assert self._check is not None and self._check._native is not None
            self.state[e] = 1 if self._check._native.free(self.rows[e]) > 0 else -1
        return bool(self.state[e] > 0)

    def order(self, position: np.ndarray, rt: np.ndarray | None) -> np.ndarray:
        """The :data:`LIBRARY_STARTS` entries nearest the target, nearest first (ties: the
        lower index), by ``|p - p_target|² + w² (2 - x·x_target - z·z_target)`` (the tool's
        x and z axes; ``rt``: the target's rotation transposed, None: position only) in the
        kernel's order of operations (the same doubles)."""
        p = self.poses
        dx, dy, dz = p[:, 0] - position[0], p[:, 1] - position[1], p[:, 2] - position[2]
        d = dx * dx + dy * dy + dz * dz
        if rt is not None:  # the tool's x and z axes against the target's (rt's rows)
            ax = p[:, 3] * rt[0, 0] + p[:, 4] * rt[0, 1] + p[:, 5] * rt[0, 2]
            az = p[:, 6] * rt[2, 0] + p[:, 7] * rt[2, 1] + p[:, 8] * rt[2, 2]
            d = d + LIBRARY_WEIGHT**2 * (2.0 - (ax + az))
        return np.argsort(d, kind="stable")[:LIBRARY_STARTS]

    def picks(self, residual: Residual) -> LibraryPicks | None:
        """The picks of a search on ``residual`` (its first goal's target), or None (no
        library: not wanted, or no entry)."""
        goals = residual.goals
        if not self.wanted or len(goals) != 1 or goals[0].frame_id != self._frame:
            return None
        if not self.build():
            return None
        self.sync()
        position, rt = residual.target_arrays(0)
        return LibraryPicks(self, self.order(position, rt if residual.m == 6 else None))

    def arm(self, query: Any) -> None:
        """Point the kernel's query structure at the library (built or not yet)."""
        query.library_wanted = self.wanted
        query.library_weight = LIBRARY_WEIGHT**2
        query.library_max = LIBRARY_STARTS
        if self._built:
            self.sync()
        query.n_library = len(self.rows) if self._built else 0
        if query.n_library:
            query.library = self.rows.ctypes.data
            query.library_pose = self.poses.ctypes.data
            query.library_state = self.state.ctypes.data_as(ctypes.c_void_p).value
            query.library_distance = self.distance.ctypes.data
            query.library_order = self.order_rows.ctypes.data_as(ctypes.c_void_p).value
            query.n_buckets = len(self.bucket_bound)
            query.bucket_start = self.bucket_start.ctypes.data_as(ctypes.c_void_p).value
            query.bucket_center = self.bucket_center.ctypes.data
            query.bucket_radius = self.bucket_radius.ctypes.data
            query.bucket_bound = self.bucket_bound.ctypes.data
            query.bucket_order = self.bucket_order.ctypes.data_as(ctypes.c_void_p).value
        elif self._built:
            query.library_wanted = 0  # no entry: nothing to start from

    def start(self, e: int, seed: np.ndarray) -> np.ndarray:
        """Entry ``e``'s moved coordinates, the seed's others (the kernel's copy)."""
        start = seed.copy()
        start[self._moved_q] = self.rows[e][self._moved_q]
        return start


class LibraryPicks:
    """One search's library starts: the entries of :meth:`SeedLibrary.order` in turn, those
    that no longer keep the margin skipped."""

    def __init__(self, library: SeedLibrary, order: np.ndarray) -> None:
        self._library = library
        self._order = order.tolist()

    def next(self, seed: np.ndarray) -> np.ndarray | None:
        """The next start (full ``q``, the seed's other coordinates), or None."""
        while self._order:
            e = self._order.pop(0)
            if self._library.keeps(e):
                return self._library.start(e, seed)
        return None
