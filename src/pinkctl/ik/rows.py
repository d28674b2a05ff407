"""Pose targets searched row by row in the native kernel, the answers written into arrays.

The batch path, in one process (:func:`~pinkctl.ik.job.run_chains`) as in every
:class:`~pinkctl.ik.IKPool` worker (:func:`~pinkctl.ik.job.solve_chunk`), for independent
``pin.SE3`` targets (:class:`~pinkctl.ik.packed.PackedTargets`) under a global search. Per
target it does what :meth:`IKSolver.find <pinkctl.ik.IKSolver.find>` does around the kernel's
whole query (:meth:`NativeQuery.find <pinkctl.ik.query.NativeQuery.find>`), less the objects
made per target: the pose is read from the chunk's arrays (no ``pin.SE3``), a shared seed is
parsed once per chunk, and a converged answer goes straight into the chunk's rows (no
``IKResult``, no dispatch through :meth:`~pinkctl.ik.IKSolver.find`). Every other outcome keeps
its own path: a search that fails gets the query's failed result, and a query that the kernel
hands back (an argument it refuses, a step it cannot take) is left to
:meth:`~pinkctl.ik.IKSolver.find` on the same target, seed and generator (the caller's), so
the answers are those of one call per target (``tests/test_ik_rows.py``). The search itself is
:meth:`NativeQuery.search <pinkctl.ik.query.NativeQuery.search>`, the one
:meth:`NativeQuery.find <pinkctl.ik.query.NativeQuery.find>` runs.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from .packed import PackedResults, PackedTargets
from .query import NativeQuery, kernel_searches
from .result import IKResult

if TYPE_CHECKING:
    from .checked import CheckedSearch
    from .options import SearchOptions
    from .solver import IKSolver

__all__ = ["NativeRows"]

#: A pose target's type, all :meth:`IKSolver._native_query` reads of a target.
_POSE = pin.SE3.Identity()
_UNPARSED = object()


class NativeRows:
    """A chunk of ``pin.SE3`` targets' searches and its results' arrays.

    Args:
        solver: The solver (its kernel query, option checks, moved joints).
        chunk: The targets (``se3``), one row each.
    """

    def __init__(self, solver: IKSolver, chunk: PackedTargets) -> None:
        self.solver = solver
        self.poses = chunk.poses
        # read by the kernel row by row, whatever the strides; contiguous: no copy per row
        self._positions = np.ascontiguousarray(chunk.poses[:, :3, 3])
        self._rotations = np.ascontiguousarray(chunk.poses[:, :3, :3])
        n, nq = len(chunk.poses), len(solver.robot.q0)
        self.q_full = np.empty((n, nq))
        # per row: position error [m], orientation error [rad], time [s]; success,
        # iterations, restarts, solutions (tuples: stacked once, at the end)
        self._errors: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * n
        self._counts: list[tuple[int, int, int, int]] = [(0, 0, 0, 0)] * n
        self.reasons = ["converged"] * n
        self._q: dict[int, np.ndarray] = {}  # rows written from a result: its q
        self._seed: tuple[object, np.ndarray | None] = (_UNPARSED, None)
        self._query: NativeQuery | None = None  # until a row leaves the kernel's path
        self._checked: tuple[object, object, tuple[SearchOptions, CheckedSearch]] | None = None

    def pose(self, k: int) -> pin.SE3:
        """Target ``k`` as a ``pin.SE3`` (the same numbers)."""
        return pin.SE3(self.poses[k])

    def find(
        self, k: int, seed: object, options: SearchOptions | None, rng: np.random.Generator
    ) -> IKResult | bool:
        """Target ``k``'s search in the kernel: True when it converged (written into row
        ``k``), the failed result of one that did not, or False when
        :meth:`~pinkctl.ik.IKSolver.find` must answer (nothing written, the generator as it
        was). Raises what the query raises (a malformed seed)."""
        t0 = time.perf_counter()
        search, checked = self._search(options, rng)
        query = self._query or self.solver._native_query(_POSE)
        self._query = None  # kept again below, once this row stayed in the kernel
        if query is None or not kernel_searches(checked):
            return False
        full = self._parsed(query, seed)
        code = query.search(self._positions[k], self._rotations[k], full, search, checked, t0)
        if code is None:
            return False
        s = query.outcome
        if not s.success:
            return query.failed(checked, t0, code)
        self.q_full[k] = query.answer
        self._errors[k] = (s.position_error, s.orientation_error, time.perf_counter() - t0)
        self._counts[k] = (1, s.iterations, s.restarts, 1)
        self._query = query
        return True

    def _search(
        self, options: SearchOptions | None, rng: np.random.Generator
    ) -> tuple[SearchOptions, CheckedSearch]:
        """The solver's checked search for ``options`` and ``rng`` (what
        :meth:`~pinkctl.ik.IKSolver.find` asks its cache); kept while both are the same
        objects (a chunk's generator is one object, reseeded per row), as the cache does."""
        known = self._checked
        if known is not None and known[0] is options and known[1] is rng:
            return known[2]
        out = self.solver._checked.search(options, {"rng": rng})
        self._checked = (options, rng, out)
        return out

    def _parsed(self, query: NativeQuery, seed: object) -> np.ndarray:
        """:meth:`NativeQuery.full_seed` of ``seed``; the last one parsed is kept (the kernel
        copies it), so a shared seed is parsed once."""
        known, parsed = self._seed
        if known is seed and parsed is not None:
            return parsed
        parsed = query.full_seed(seed)
        self._seed = (seed, parsed)
        return parsed

    def put(self, k: int, result: IKResult) -> None:
        """Write ``result`` into row ``k``."""
        self.q_full[k] = result.q_full
        self._errors[k] = (result.position_error, result.orientation_error, result.time_s)
        self._counts[k] = (
            int(result.success),
            result.iterations,
            result.restarts,
            result.solutions,
        )
        self.reasons[k] = result.reason
        self._q[k] = result.q

    def packed(self) -> PackedResults:
        """The rows as :class:`~pinkctl.ik.packed.PackedResults`."""
        solver = self.solver
        subset = solver.subset
        if subset.simple:
            q = np.array(self.q_full[:, subset.q_cols], dtype=np.float64)
        else:
            q = np.array([subset.values(row) for row in self.q_full], dtype=np.float64)
        for k, values in self._q.items():
            q[k] = values
        return PackedResults(
            q=q,
            q_full=self.q_full,
            errors=np.array(self._errors, dtype=np.float64).reshape(-1, 3),
            counts=np.array(self._counts, dtype=np.int64).reshape(-1, 4),
            reasons=tuple(self.reasons),
            joint_names=solver._joint_names,
            method=solver.method.name,
        )
