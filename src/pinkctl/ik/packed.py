"""What travels between an :class:`~pinkctl.ik.IKPool` and its workers: arrays per chunk.

:class:`PackedTargets` holds a chunk's pose targets stacked (one ``(k, 4, 4)`` array) and
:class:`PackedResults` its results (a few stacked arrays): pickling either is one copy of its
arrays, with no object per target. Both are plain data; :mod:`pinkctl.ik.job` solves them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import cast

import numpy as np
import pinocchio as pin

from .result import IKResult
from .targets import IKTarget, SeedLike

__all__ = ["PackedResults", "PackedTargets", "pack_targets", "packing"]


@dataclass(frozen=True)
class PackedTargets:
    """Independent pose targets of one chunk as arrays (one row per target).

    Attributes:
        indices: ``(k,)`` each target's index in the whole batch.
        poses: ``(k, 4, 4)`` homogeneous transforms.
        seeds: ``(k, m)`` one seed per target, or None: every target's seed is ``seed``.
        seed: The shared seed (when ``seeds`` is None).
        se3: Whether the targets were ``pin.SE3`` poses (they are solved as such again: the
            same numbers, on the solver's fastest path).
    """

    indices: np.ndarray
    poses: np.ndarray
    seeds: np.ndarray | None
    seed: object
    se3: bool = False

    def rows(self, start: int, stop: int) -> PackedTargets:
        """Targets ``start`` to ``stop - 1`` (views: pickling copies only these rows)."""
        seeds = None if self.seeds is None else self.seeds[start:stop]
        return dataclasses.replace(
            self, indices=self.indices[start:stop], poses=self.poses[start:stop], seeds=seeds
        )

    def seed_list(self) -> list[SeedLike]:
        """Each target's seed, in order (the shared one repeated, or each row)."""
        if self.seeds is None:
            return [cast(SeedLike, self.seed)] * len(self.indices)
        return list(self.seeds)


def pack_targets(
    targets: Sequence[IKTarget], seed: object, seeds: Sequence[object] | None
) -> PackedTargets | None:
    """A batch of independent targets as :class:`PackedTargets` (indices from 0), when each
    is a pose (``pin.SE3`` or a (4, 4) array) and the seeds are one object or arrays of one
    size; else None. One stacking for the whole batch, no object per target."""
    rows = packing(targets, seed, seeds)
    return rows(0, len(targets)) if rows is not None else None


def packing(
    targets: Sequence[IKTarget], seed: object, seeds: Sequence[object] | None
) -> Callable[[int, int], PackedTargets] | None:
    """How to pack targets ``start`` to ``stop - 1`` of a batch as :func:`pack_targets` packs
    them (indices from ``start``), or None where it would give None. The checks are made here,
    for the whole batch; ``pin.SE3`` poses are stacked as each chunk is asked for, so a pool's
    first chunk leaves before the others are stacked (~0.5 µs a target)."""
    if not targets:
        return None
    rows = None
    if seeds is not None:
        try:
            rows = np.array(seeds, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if rows.ndim != 2:
            return None
    shared = seed if seeds is None else None
    if set(map(type, targets)) == {pin.SE3}:  # (a loop of isinstance costs more)
        return partial(_se3_rows, cast(Sequence[pin.SE3], targets), rows, shared)
    matrices = [t.homogeneous if isinstance(t, pin.SE3) else t for t in targets]
    if not all(isinstance(m, np.ndarray) and m.shape == (4, 4) for m in matrices):
        return None
    whole = PackedTargets(
        np.arange(len(targets), dtype=np.int64), np.array(matrices, dtype=np.float64), rows, shared
    )
    return whole.rows


def _se3_rows(
    targets: Sequence[pin.SE3], seeds: np.ndarray | None, seed: object, start: int, stop: int
) -> PackedTargets:
    poses = np.array([t.homogeneous for t in targets[start:stop]], dtype=np.float64)
    return PackedTargets(
        np.arange(start, stop, dtype=np.int64),
        poses,
        None if seeds is None else seeds[start:stop],
        seed,
        se3=True,
    )


_new, _set = object.__new__, object.__setattr__
#: Each tuple of joint names unpacked, kept once, so that the results of every chunk hold
#: the same one. Once a garbage collection has passed over it, it is no longer tracked, and
#: neither is a result's ``__dict__`` made after that (it holds only it, arrays, numbers and
#: strings): one object per result for the collector, not two, which on a pool's caller
#: halves its collections (the full ones walk every object of the process).
_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}


@dataclass(frozen=True)
class PackedResults:
    """Results of one chunk as stacked arrays (one row per target, in order).

    Attributes:
        q, q_full: ``(n, dof)`` and ``(n, nq)`` configurations.
        errors: ``(n, 3)`` position error [m], orientation error [rad], time [s].
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
        ``q_full`` a row of this chunk's arrays: no copy per result).

        Each result's fields are set as one dict, skipping the constructor's keyword
        handling, and the numbers are read a column at a time (a few lists per chunk, not
        two per result: fewer objects for the garbage collector to walk): this runs on the
        caller of a pool, once per target, beside the workers.
        """
        names = _NAMES.setdefault(self.joint_names, self.joint_names)
        method = self.method
        out: list[IKResult] = []
        append = out.append
        counts = self.counts.T
        for q, q_full, p, o, t, ok, it, re, sol, reason in zip(
            self.q,
            self.q_full,
            *self.errors.T.tolist(),
            (counts[0] == 1).tolist(),
            *counts[1:].tolist(),
            self.reasons,
        ):
            result = _new(IKResult)
            fields = {
                "q": q,
                "joint_names": names,
                "q_full": q_full,
                "success": ok,
                "position_error": p,
                "orientation_error": o,
                "iterations": it,
                "restarts": re,
                "time_s": t,
                "reason": reason,
                "method": method,
                "solutions": sol,
            }
            _set(result, "__dict__", fields)
            append(result)
        return out
