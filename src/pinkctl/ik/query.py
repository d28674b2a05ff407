"""Whole IK queries in one call of the native kernel (``pinkctl/_native/_ik_query.c``).

A :class:`NativeQuery` hands the kernel the target and the seed as they come and gets the
answer back in one call (a search's local solves run there, :mod:`pinkctl.ik.native`):

- the default frame's single target, a ``pin.SE3``, and a seed that is a full float64
  configuration (other forms of either are parsed in Python first);
- :meth:`NativeQuery.solve`: every :class:`~pinkctl.ik.LocalOptions` budget;
- :meth:`NativeQuery.find`: one solution wanted, no ``validate`` and no ``metric_threshold``.
  The random starts are drawn here, from the search's own generator in the same order, so
  both paths start from the same configurations: for an integer ``rng`` seed (the default)
  once per seed (:class:`StartCache`), for a generator one draw per restart, handed over
  when the kernel asks. The kernel checks every converged configuration itself
  (:mod:`pinkctl.ik.capsules`) and restarts after a rejection (from the seed library,
  :mod:`pinkctl.ik.seeds`, built here when it first asks); only a configuration it cannot
  decide (no native check, a shape it does not know) is handed here for
  :meth:`~pinkctl.ik.collision.CollisionCheck.accepts` and the search resumes.

When the kernel refuses the target or the seed, or its local solve would leave the kernel,
the query returns None and the caller's Python path answers (``tests/test_native_ik.py``).
"""

from __future__ import annotations

import ctypes
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from .._native import kernel_module
from .branches import toward_table
from .checked import CheckedLocal, CheckedSearch
from .native import NativeLocal
from .options import SearchOptions
from .reasons import local_reason, search_reason
from .result import IKResult
from .search import REJECTED_STALL, SearchOutcome, is_seed
from .starts import StartCache
from .targets import parse_target

if TYPE_CHECKING:
    from .solver import IKSolver

__all__ = ["NativeQuery"]

_LOCAL_REASONS = ("converged", "iterations", "time", "stalled", "numerical")
_SEARCH_REASONS = ("converged", "iterations", "restarts", "time")
_FALLBACK = 5
_MORE_STARTS = -3
_CHECK = -5  # a converged configuration for the caller's collision check
_LIBRARY = -6  # build the seed library (pinkctl.ik.seeds), then resume


def kernel_searches(checked: CheckedSearch) -> bool:
    """Whether the kernel runs the search (no validate, metric threshold or more answers)."""
    c = checked
    return c.validate is None and c.metric_threshold is None and c.max_solutions == 1


class _Query(ctypes.Structure):
    """Mirror of the ``IKQuery`` structure of ``_ik_query.c`` (checked by size)."""

    _fields_ = [
        ("problem", ctypes.c_void_p),
        ("search", ctypes.c_int),
        ("max_iterations", ctypes.c_int),
        ("max_restarts", ctypes.c_int),
        ("iterations_per_start", ctypes.c_int),
        ("stall_iterations", ctypes.c_int),
        ("has_deadline", ctypes.c_int),
        ("deadline", ctypes.c_double),
        ("keep", ctypes.c_double),
        ("max_step", ctypes.c_double),
        ("n_starts", ctypes.c_int),
        ("starts_offset", ctypes.c_int),
        ("starts", ctypes.c_void_p),
        ("resume", ctypes.c_int),
        ("seed", ctypes.c_void_p),
        ("out_q", ctypes.c_void_p),
        ("success", ctypes.c_int),
        ("iterations", ctypes.c_int),
        ("restarts", ctypes.c_int),
        ("reason", ctypes.c_int),
        ("cost", ctypes.c_double),
        ("position_error", ctypes.c_double),
        ("orientation_error", ctypes.c_double),
        ("first", ctypes.c_int),
        ("have_best", ctypes.c_int),
        ("best_cost", ctypes.c_double),
        ("check", ctypes.c_int),
        ("collision", ctypes.c_void_p),
        ("toward", ctypes.c_void_p),
        ("candidate", ctypes.c_void_p),
        ("pending", ctypes.c_int),
        ("verdict", ctypes.c_int),
        ("collided", ctypes.c_int),
        ("hit", ctypes.c_int),
        ("far", ctypes.c_void_p),
        ("rejected_stall", ctypes.c_int),
        *((name, ctypes.c_void_p) for name in ("flips", "flip_masks", "flip_base")),
        *((name, ctypes.c_int) for name in ("n_flips", "flip_allowed", "flip_combo", "from_flip")),
        *((name, ctypes.c_int) for name in ("library_wanted", "n_library")),
        *((name, ctypes.c_void_p) for name in ("library", "library_pose", "library_state")),
        *((name, ctypes.c_void_p) for name in ("library_distance", "library_order")),
        ("library_weight", ctypes.c_double),
        *((name, ctypes.c_int) for name in ("library_max", "library_count", "library_used")),
        *((name, ctypes.c_int) for name in ("library_next", "from_library", "n_buckets")),
        *((name, ctypes.c_void_p) for name in ("bucket_start", "bucket_center")),
        *((name, ctypes.c_void_p) for name in ("bucket_radius", "bucket_bound", "bucket_order")),
    ]


class NativeQuery:
    """Whole queries on one single-frame residual whose local solve is native.

    Args:
        local: The residual's native local solve.
        solver: The solver it belongs to (its moved joints, seeds' template, joint and
            method names, collision check, and result builder for a failed query, which
            evaluates the answer).
        starts: The solver's cache of random starts.
    """

    @classmethod
    def of(cls, local: object, solver: IKSolver, starts: StartCache) -> NativeQuery | None:
        """The whole-query kernel of the residual of ``local``, or None (not the native loop)."""
        return cls(local, solver, starts) if isinstance(local, NativeLocal) else None

    def __init__(self, local: NativeLocal, solver: IKSolver, starts: StartCache) -> None:
        self._lib = kernel_module()
        if self._lib.ik_query_size() != ctypes.sizeof(_Query):
            raise RuntimeError("the native kernel does not match pinkctl: rebuild it")
        self.local = local
        self.residual = local.residual
        self._pose = self.residual.m == 6
        subset = solver.subset
        self._subset = subset
        template = solver.robot.q0
        self._template = template
        self._starts = starts
        self._result = solver._result
        self._check = solver.collision
        self._seeds = solver._seeds
        self._names = tuple(solver.joint_names)
        self._method = solver.method.name
        self._full = subset._full_seed_fast  # an (nq,) seed is a full configuration
        nq = len(template)
        self._seed = np.zeros(nq)
        self._out = np.zeros(nq)
        self._candidate = np.zeros(nq)
        self._flip_base = np.zeros(nq)
        self._toward = toward_table(subset)
        s = _Query()
        s.problem = local.address
        s.seed = self._seed.ctypes.data
        s.out_q = self._out.ctypes.data
        s.candidate = self._candidate.ctypes.data
        s.flip_base = self._flip_base.ctypes.data
        s.toward = self._toward.ctypes.data
        s.keep = 0.99  # run_local's default progress_ratio (0.01), the searches' too
        s.rejected_stall = REJECTED_STALL
        s.check, self._armed = self._check is not None, -1  # _armed: the world version armed
        self._query = s
        self._address = ctypes.addressof(s)
        self._configured: CheckedLocal | CheckedSearch | None = None
        self._rows: tuple[int, np.ndarray] | None = None  # the starts pointed at, and their seed
        self._row: np.ndarray | None = None  # a generator's start pointed at
        self._draw: Any = None  # a search's generator (or factory), when not an int seed
        self._rewind: Any = None  # that generator's state before the query's first draw

    def _configure(self, checked: CheckedLocal | CheckedSearch, t0: float) -> None:
        """The structure's budget from ``checked`` (kept while the same one comes back)."""
        budget = checked.time_budget_ms
        if checked is self._configured and budget is None:
            return
        s = self._query
        search = isinstance(checked, CheckedSearch)
        s.search = search
        it = checked.max_iterations
        s.max_iterations = it if it is not None else -1
        if isinstance(checked, CheckedSearch):
            s.max_restarts = checked.max_restarts if checked.max_restarts is not None else -1
            s.iterations_per_start = checked.iterations_per_start
        stall = checked.stall_iterations
        s.stall_iterations = stall if stall is not None else 0
        s.has_deadline = budget is not None
        s.deadline = t0 + budget * 1e-3 if budget is not None else 0.0
        s.max_step = checked.max_step if checked.max_step is not None else 0.0
        self._configured = checked

    def _run(
        self, position: np.ndarray, rotation: np.ndarray | None, seed: np.ndarray
    ) -> int | None:
        """The kernel's first code for the pose from the full configuration ``seed``
        (``rotation`` read only for a pose residual): a request, a reason, or None when the
        Python path must answer."""
        self.local.sync_targets()
        rotation = rotation if self._pose else None
        code = self._lib.ik_query(self._address, position, rotation, seed)
        if code in (_MORE_STARTS, _CHECK, _LIBRARY):
            return code
        return None if code < 0 or code == _FALLBACK else code

    def full_seed(self, seed: object) -> np.ndarray:
        """``seed`` as the kernel reads it, a full configuration (parsed unless it is one)."""
        if self._full and type(seed) is np.ndarray and seed.shape == self._seed.shape:
            return seed
        return self._subset.parse_seed(seed, self._template, clamp=False)

    def _pose_of(self, target: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """``target``'s position [m] and rotation (world frame; None for a position target)."""
        if type(target) is pin.SE3:
            return target.translation, target.rotation
        return parse_target(target, orientation=self._pose)

    def solve(
        self, target: object, seed: object, checked: CheckedLocal, t0: float
    ) -> IKResult | None:
        """:meth:`IKSolver.solve`'s answer, or None (the caller's Python path answers)."""
        self._configure(checked, t0)
        code = self._run(*self._pose_of(target), self.full_seed(seed))
        if code is None:
            return None
        s = self._query
        if s.success:
            return self.converged(t0)
        reason = local_reason(
            _LOCAL_REASONS[code],
            checked.max_iterations,
            checked.time_budget_ms,
            checked.stall_iterations,
        )
        return self._result(
            self.residual,
            self._out.copy(),
            success=False,
            iterations=s.iterations,
            restarts=0,
            t0=t0,
            reason=reason,
            solutions=0,
        )

    def find(
        self,
        target: object,
        seed: object,
        search: SearchOptions,
        checked: CheckedSearch,
        t0: float,
    ) -> IKResult | None:
        """:meth:`IKSolver.find`'s answer (the simple searches of the module docstring), or
        None (the caller's Python path answers)."""
        if not kernel_searches(checked):
            return None
        code = self.search(*self._pose_of(target), self.full_seed(seed), search, checked, t0)
        if code is None:
            return None
        if self._query.success:
            answer = self.converged(t0)
            if self._check is not None:
                self._check.vouch(answer.q_full)
            return answer
        return self.failed(checked, t0, code)

    def search(
        self,
        position: np.ndarray,
        rotation: np.ndarray | None,
        seed: np.ndarray,
        search: SearchOptions,
        checked: CheckedSearch,
        t0: float,
    ) -> int | None:
        """:meth:`find`'s search, one the kernel runs (:func:`kernel_searches`), for the pose
        ``position`` [m], ``rotation`` (world frame, read only for a pose residual) from the
        full configuration ``seed`` (:meth:`full_seed`), without the result: the search's
        reason (its answer in :attr:`answer` and :attr:`outcome`), or None (the caller's
        Python path answers)."""
        self._configure(checked, t0)
        self._arm(search, checked)
        return self._resumed(self._run(position, rotation, seed))

    @property
    def answer(self) -> np.ndarray:
        """The last query's configuration (full; overwritten by the next query)."""
        return self._out

    @property
    def outcome(self) -> _Query:
        """The last query's outcome: ``success``, ``iterations``, ``restarts``,
        ``position_error`` [m] and ``orientation_error`` [rad] (the kernel's structure)."""
        return self._query

    def _arm(self, search: SearchOptions, checked: CheckedSearch) -> None:
        """Point the structure at the search's starts and at the collision check."""
        s = self._query
        s.resume, check = 0, self._check
        # its addresses change only with its world (CollisionCheck rebuilds then): ~0.3 us
        if check is not None and check.scene.world.version != self._armed:
            s.collision = check.native_address()
            s.far = check.far_address
            s.flips, s.flip_masks, s.n_flips = check.flips.native()
            self._seeds.arm(s)
            self._armed = check.scene.world.version
        rng = search.rng
        if is_seed(rng):  # the cached starts of this seed
            self._draw = None
            if self._rows is None or self._rows[0] != rng:
                self._point_at(int(rng), 256)  # type: ignore[arg-type]
            return
        # the generator's draws, one per restart, as the Python path makes them
        s.n_starts = 0
        self._rows = None
        self._draw = checked.generator
        self._rewind = None  # the generator's state, read before its first draw (~2 µs)

    def _resumed(self, code: int | None) -> int | None:
        """Answer the kernel's requests (more starts, a collision verdict) until it ends."""
        s = self._query
        while code in (_MORE_STARTS, _CHECK, _LIBRARY):
            if code == _CHECK:
                assert self._check is not None
                s.verdict = self._check.accepts(self._candidate)
                s.hit = -1 if s.verdict else self._check.last_pair
            elif code == _LIBRARY:  # the first rejection of the solver's searches
                self._seeds.build()
                self._seeds.arm(s)
            else:
                self._more_starts()
            s.resume = 1
            code = self._lib.ik_resume(self._address)
            s.resume = 0
            if code == _FALLBACK:  # the Python path answers, from the same draws
                if self._rewind and self._draw is not None:  # the caller's, drawn from
                    self._draw.bit_generator.state = self._rewind
                return None
        return code

    def _more_starts(self) -> None:
        """Twice the cached starts of the seed, or the generator's next draw."""
        s = self._query
        if self._draw is None:
            assert self._rows is not None
            self._point_at(self._rows[0], 2 * len(self._rows[1]))
            return
        if not isinstance(self._draw, np.random.Generator):
            self._draw = self._draw()  # a factory: the generator of a fresh seed
            self._rewind = ()  # (its own: the Python path makes another, nothing to rewind)
        elif self._rewind is None:  # the caller's generator: how to rewind it on a fallback
            self._rewind = self._draw.bit_generator.state
        row = self._subset.sample(self._draw, self._template)
        self._row = row  # kept alive while the kernel reads it
        s.starts, s.starts_offset, s.n_starts = row.ctypes.data, s.restarts, s.restarts + 1

    def failed(self, checked: CheckedSearch, t0: float, code: int) -> IKResult:
        """The result of a search that found no answer (its best failed iterate)."""
        s = self._query
        if s.collided and s.hit >= 0:
            assert self._check is not None
            self._check.native_rejection(s.hit, self._candidate)
        q = self._out.copy()
        out = SearchOutcome(
            q, False, [], s.iterations, s.restarts, 0, 0, _SEARCH_REASONS[code], s.collided
        )
        budget = checked.time_budget_ms
        reason = search_reason(
            out, budget, checked.max_restarts, checked.max_iterations, [], self._check
        )
        return self._result(
            self.residual,
            q,
            success=False,
            iterations=s.iterations,
            restarts=s.restarts,
            t0=t0,
            reason=reason,
            solutions=0,
        )

    def _point_at(self, seed: int, at_least: int) -> tuple[int, np.ndarray]:
        """Point the structure at ``at_least`` starts of the generator seed ``seed``."""
        rows = self._starts.rows(seed, at_least)
        self._query.starts = rows.ctypes.data
        self._query.n_starts = len(rows)
        self._query.starts_offset = 0
        self._rows = (seed, rows)
        return self._rows

    def converged(self, t0: float) -> IKResult:
        """The result of the last query, which converged."""
        s = self._query
        q = self._out.copy()
        return IKResult(
            *(self._subset.values(q), self._names, q, True, s.position_error),
            *(s.orientation_error, s.iterations, s.restarts, time.perf_counter() - t0),
            *("converged", self._method, 1),
        )
