"""What travels between the caller and the workers of a batch, in a compact form.

A global IK query takes about 0.1 ms, so pickling its target and its result must cost much
less than that, or a pool spends its time in transport. Two forms keep it cheap, both exact
(the workers' answers are bit for bit the caller's):

- :func:`portable_chain`: ``pin.SE3`` targets travel as their (4, 4) homogeneous matrix (a
  spelling every solver accepts, parsed to the same position and rotation); pickling a
  ``pin.SE3`` costs several times more;
- :class:`PackedResults`: a chunk's results travel as a few stacked arrays instead of one
  object per target, and become :class:`~pinkctl.ik.IKResult` objects again in the caller;
- :class:`PackedTargets`: a chunk of independent pose targets (chains of one) travels as
  stacked arrays too (:func:`pack_chunk`, :func:`unpack_chunk`); a whole batch of them is
  stacked once (:func:`pack_targets`) and each chunk is a slice of it (:meth:`PackedTargets.rows`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
import pinocchio as pin

from .result import IKResult
from .targets import IKTarget

if TYPE_CHECKING:
    from .job import Chain


__all__ = [
    "PackedResults",
    "PackedTargets",
    "pack_chunk",
    "pack_targets",
    "portable_chain",
    "unpack_chunk",
]


def _portable(target: IKTarget) -> IKTarget:
    if isinstance(target, pin.SE3):
        return target.homogeneous
    if isinstance(target, Mapping):
        return {frame: _portable(t) for frame, t in target.items()}
    return target


def portable_chain(chain: Chain) -> Chain:
    """``chain`` with its ``pin.SE3`` targets (also in multi-frame mappings) as (4, 4) arrays."""
    return dataclasses.replace(chain, targets=tuple(_portable(t) for t in chain.targets))


@dataclass(frozen=True)
class PackedTargets:
    """Independent pose targets of one chunk as arrays (one row per target).

    Attributes:
        indices: ``(k,)`` each target's index in the whole batch.
        poses: ``(k, 4, 4)`` homogeneous transforms.
        seeds: ``(k, m)`` one seed per target, or None: every target's seed is ``seed``.
        seed: The shared seed (when ``seeds`` is None).
        se3: Whether the targets were ``pin.SE3`` poses (they are made so again: the same
            numbers, on the solver's fastest path).
    """

    indices: np.ndarray
    poses: np.ndarray
    seeds: np.ndarray | None
    seed: object
    se3: bool = False

    def rows(self, start: int, stop: int) -> PackedTargets:
        """Targets ``start`` to ``stop - 1`` (views: pickling copies only these rows)."""
        return PackedTargets(
            indices=self.indices[start:stop],
            poses=self.poses[start:stop],
            seeds=None if self.seeds is None else self.seeds[start:stop],
            seed=self.seed,
            se3=self.se3,
        )


def pack_targets(
    targets: Sequence[IKTarget], seed: object, seeds: Sequence[object] | None
) -> PackedTargets | None:
    """A batch of independent targets as :class:`PackedTargets` (indices from 0), when each
    is a pose (``pin.SE3`` or a (4, 4) array) and the seeds are one object or arrays of one
    size; else None. One stacking for the whole batch, no object per target."""
    if not targets:
        return None
    first = targets[0]
    if isinstance(first, pin.SE3) and all(isinstance(t, pin.SE3) for t in targets):
        poses = np.array([cast(pin.SE3, t).homogeneous for t in targets], dtype=np.float64)
        se3 = True
    else:
        matrices = _pose_rows_of(targets)
        if matrices is None:
            return None
        poses, se3 = np.array(matrices, dtype=np.float64), False
    rows = None
    if seeds is not None:
        try:
            rows = np.array(seeds, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if rows.ndim != 2:
            return None
    return PackedTargets(
        indices=np.arange(len(targets), dtype=np.int64),
        poses=poses,
        seeds=rows,
        seed=seed if seeds is None else None,
        se3=se3,
    )


def pack_chunk(chains: Sequence[Chain]) -> PackedTargets | list[Chain]:
    """``chains`` as :class:`PackedTargets` when each is one pose target (``pin.SE3`` or a
    (4, 4) array) with an array seed or the same seed object, else as portable chains."""
    poses = _pose_rows(chains)
    seeds = _seed_rows(chains) if poses is not None else None
    if poses is None or seeds is None:
        return [portable_chain(c) for c in chains]
    rows, first = seeds
    return PackedTargets(
        indices=np.array([c.indices[0] for c in chains], dtype=np.int64),
        poses=np.array(poses, dtype=np.float64),
        seeds=rows,
        seed=first,
        se3=all(isinstance(c.targets[0], pin.SE3) for c in chains),
    )


def _pose_rows(chains: Sequence[Chain]) -> list[np.ndarray] | None:
    """Each chain's one target as a (4, 4) homogeneous transform, or None when a chain has
    several targets or one of another form."""
    if not all(len(c.targets) == 1 for c in chains):
        return None
    return _pose_rows_of([c.targets[0] for c in chains])


def _pose_rows_of(targets: Sequence[IKTarget]) -> list[np.ndarray] | None:
    """Each target as a (4, 4) homogeneous transform, or None when one has another form."""
    poses = []
    for target in targets:
        matrix = target.homogeneous if isinstance(target, pin.SE3) else target
        if not (isinstance(matrix, np.ndarray) and matrix.shape == (4, 4)):
            return None
        poses.append(matrix)
    return poses


def _seed_rows(chains: Sequence[Chain]) -> tuple[np.ndarray | None, object] | None:
    """``(None, seed)`` when every chain has the same seed object, ``(seeds (k, m), None)``
    when each has an array seed, else None."""
    first = chains[0].seed
    if all(c.seed is first for c in chains):
        return None, first
    try:
        seeds = np.array([c.seed for c in chains], dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return (seeds, None) if seeds.ndim == 2 else None


def unpack_chunk(chunk: PackedTargets | Sequence[Chain]) -> list[Chain]:
    """The chains of a chunk (:func:`pack_chunk`'s inverse)."""
    from .job import Chain  # (job imports this module)

    if not isinstance(chunk, PackedTargets):
        return list(chunk)
    seeds = chunk.seeds if chunk.seeds is not None else [chunk.seed] * len(chunk.indices)
    poses = [pin.SE3(pose) for pose in chunk.poses] if chunk.se3 else chunk.poses
    return [
        Chain(indices=(int(i),), targets=(pose,), seed=seed)
        for i, pose, seed in zip(chunk.indices.tolist(), poses, seeds)
    ]


@dataclass(frozen=True)
class PackedResults:
    """Results of one chunk as stacked arrays (one row per target, in order).

    Attributes:
        q, q_full: ``(n, dof)`` and ``(n, nq)`` configurations.
        errors: ``(n, 3)`` position error, orientation error, time [s].
        counts: ``(n, 4)`` success (0/1), iterations, restarts, solutions.
        reasons: Why each solve stopped.
        joint_names: The moved joints (shared by every result).
        method: The step method (shared by every result).
    """

    q: np.ndarray
    q_full: np.ndarray
    errors: np.ndarray
    counts: np.ndarray
    reasons: tuple[str, ...]
    joint_names: tuple[str, ...]
    method: str

    @classmethod
    def pack(cls, results: Sequence[IKResult]) -> PackedResults:
        """Stack ``results`` (at least one; every result of the same solver)."""
        return cls(
            q=np.array([r.q for r in results], dtype=np.float64),
            q_full=np.array([r.q_full for r in results], dtype=np.float64),
            errors=np.array(
                [(r.position_error, r.orientation_error, r.time_s) for r in results],
                dtype=np.float64,
            ),
            counts=np.array(
                [(r.success, r.iterations, r.restarts, r.solutions) for r in results],
                dtype=np.int64,
            ),
            reasons=tuple(r.reason for r in results),
            joint_names=results[0].joint_names,
            method=results[0].method,
        )

    def __len__(self) -> int:
        return len(self.reasons)

    def unpack(self) -> list[IKResult]:
        """The results, as :class:`~pinkctl.ik.IKResult` objects again (each ``q`` and
        ``q_full`` a row of this chunk's arrays: no copy per result)."""
        names, method = self.joint_names, self.method
        return [
            IKResult(q, names, q_full, bool(ok), p, o, it, re, t, reason, method, sol)
            for q, q_full, (p, o, t), (ok, it, re, sol), reason in zip(
                self.q, self.q_full, self.errors.tolist(), self.counts.tolist(), self.reasons
            )
        ]
