"""Fast differential-IK QP over the controlled joints: pink's problem, assembled in place.

:class:`DiffIKQP` builds, on each control tick, exactly the quadratic program of
``pink.build_ik`` restricted to the controlled tangent coordinates ``c`` (the other
coordinates are held: zero velocity), and solves it:

.. math::

    \\begin{array}{ll}
    \\min_{x = \\Delta q_c} & \\tfrac12 x^T H x + c^T x \\\\
    \\text{s.t.} & G x \\le h, \\quad lb \\le x \\le ub
    \\end{array}
    \\qquad v_c = x / \\mathrm{d}t

- ``H, c``: the sum of the tasks' ``compute_qp_objective`` (see
  :mod:`pinkctl.qp.task_terms`), ``damping * I`` and the barriers' objective terms
  (:mod:`pinkctl.qp.barrier_terms`), restricted to ``c``.
- ``lb, ub``: pink's configuration, velocity and acceleration limits (whose projection is the
  identity on their joints) intersected into simple bounds (:mod:`pinkctl.qp.limit_terms`),
  intersected again with the optional ``dt * v_lower <= x <= dt * v_upper``.
- ``G, h``: the rows of every other limit and of the barriers, restricted to ``c`` (rows that
  only involve held coordinates are dropped).

Same problem as pink, so with an exact backend the same solution (see
:mod:`pinkctl.qp.backends` for the backends and their accuracy); it is several times faster
because nothing is rebuilt from scratch: buffers are preallocated, each pink object is
classified once (by identity) and its contribution computed with a handful of numpy calls,
and the solver is called directly (or kept alive and updated in place for OSQP/Clarabel).

The split :meth:`DiffIKQP.assemble` / :meth:`DiffIKQP.solve_assembled` lets a caller inspect
or modify the problem (e.g. a lexicographic cascade adding the equality constraints of higher
priority levels) and reuse the same solver.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import isfinite
from typing import Any

import numpy as np
import pinocchio as pin

from .backends import Backend, make_backend
from .barrier_terms import BarrierTerm, compile_barrier
from .errors import QPSolveError
from .fused import FramePostureBox
from .limit_terms import BoxBounds, LimitPlan, LimitTerm, compile_limit
from .objective import ObjectiveAccumulator
from .problem import QPProblem, QPWorkspace
from .selection import ColumnSelection
from .task_terms import TaskTerm, compile_task

__all__ = ["DiffIKQP"]

_INFINITY = float("inf")

#: Compiled-term caches are cleared when they grow beyond this many objects.
_CACHE_LIMIT = 512


class _TaskPlan:
    """Compiled terms of one task sequence and the residual buffer they share."""

    def __init__(self, terms: list[TaskTerm], n: int) -> None:
        rows = sum(term.rows for term in terms)
        linear_rows = sum(term.linear_rows for term in terms)
        self.terms = terms
        self.accumulator = ObjectiveAccumulator(n, rows, linear_rows)
        offset = linear_offset = 0
        for term in terms:
            term.bind(self.accumulator, offset, linear_offset)
            offset += term.rows
            linear_offset += term.linear_rows


class DiffIKQP:
    """pink's differential-IK QP over the controlled joints, assembled in place and solved.

    Args:
        model: Pinocchio model (the one of the configurations passed to :meth:`solve`).
        controlled_v_indices: Tangent (velocity) indices of the controlled coordinates, in the
            order of the QP variables. Other coordinates are held (velocity 0).
        solver: QP backend: ``"daqp"`` (default, exact and fastest), ``"quadprog"``,
            ``"clarabel"``, ``"osqp"``, ``"proxqp"`` or any solver qpsolvers knows.
        damping: Tikhonov regularization added to the diagonal of ``H``
            ([cost]² / [tangent]², same meaning as pink's ``damping``), ``>= 0``.
        solver_options: Backend settings overriding the defaults of
            :data:`pinkctl.qp.backends.DEFAULT_SOLVER_OPTIONS`.
        recover_outside_range: When the position-range bound conflicts with the motion
            bounds (a start outside the range, or braking that cannot stop as early as the
            range's gain asks), follow the motion bounds instead of reporting the empty box
            (see :meth:`_recover`). False gives pink's behaviour (infeasible).

    Raises:
        ValueError: Unknown (not installed) solver, negative or non-finite damping, indices
            out of range or repeated.
    """

    def __init__(
        self,
        model: pin.Model,
        controlled_v_indices: Sequence[int] | np.ndarray,
        *,
        solver: str = "daqp",
        damping: float = 1e-12,
        solver_options: dict[str, Any] | None = None,
        recover_outside_range: bool = True,
    ) -> None:
        nv = getattr(model, "nv", None)
        if not isinstance(nv, int):
            raise ValueError(f"model must be a pinocchio.Model, got {type(model).__name__}")
        if not isinstance(solver, str):
            raise ValueError(f"solver must be a string, got {solver!r}")
        try:
            damping_value = float(damping)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"damping must be a finite float >= 0, got {damping!r}") from exc
        if not np.isfinite(damping_value) or damping_value < 0.0:
            raise ValueError(f"damping must be a finite float >= 0, got {damping!r}")
        if solver_options is not None and not isinstance(solver_options, dict):
            raise ValueError(f"solver_options must be a dict or None, got {solver_options!r}")
        selection = ColumnSelection(nv, controlled_v_indices)
        backend = make_backend(solver, selection.size, solver_options)
        self._model = model
        self._nv = nv
        self._recover_outside_range = bool(recover_outside_range)
        self._selection = selection
        self._solver = solver
        self._damping = damping_value
        self._backend: Backend = backend
        self._exact = backend.exact
        self._workspace = QPWorkspace(selection.size)
        self._box = BoxBounds(self._workspace.lb, self._workspace.ub)
        self._box_generation = self._workspace.generation
        self._v_bound = np.zeros(selection.size)
        self._bounds_ok = np.zeros(selection.size, dtype=bool)
        self._slice = isinstance(selection.index, slice)
        self._period = np.zeros(())  # 0-d dt (cheaper in ufuncs than a float)
        self._task_terms: dict[int, tuple[Any, TaskTerm]] = {}
        self._limit_terms: dict[int, tuple[Any, LimitTerm]] = {}
        self._barrier_terms: dict[int, tuple[Any, BarrierTerm]] = {}
        self._plan_key: tuple[Any, ...] = ()
        self._plan = _TaskPlan([], selection.size)
        self._limit_key: tuple[Any, ...] = ()
        self._limit_plan = LimitPlan([])
        self._barrier_key: tuple[Any, ...] = ()
        self._barrier_plan: list[BarrierTerm] = []
        self._row_blocks: list[tuple[np.ndarray, np.ndarray]] = []
        self._has_problem = False
        self._check_bounds = True
        self._fused_plan: _TaskPlan | None = None
        self._fused_limits: LimitPlan | None = None
        self._fused: FramePostureBox | None = None
        #: set by a fused assembly on an exact backend: an empty box (a start far outside the
        #: range) is left to the solver to report, and recovered from then (see _recover)
        self._recover_on_failure = False
        self._bound_args: tuple[Any, float, Any, Any] = (model, 0.0, None, None)

    # ------------------------------------------------------------------ properties

    @property
    def model(self) -> pin.Model:
        """Pinocchio model."""
        return self._model

    @property
    def controlled_v_indices(self) -> np.ndarray:
        """Controlled tangent indices (read-only), in QP variable order."""
        return self._selection.indices

    @property
    def n(self) -> int:
        """Number of QP variables (controlled coordinates)."""
        return self._selection.size

    @property
    def solver(self) -> str:
        """Backend solver name."""
        return self._solver

    @property
    def damping(self) -> float:
        """Tikhonov damping on the diagonal of ``H``."""
        return self._damping

    @property
    def exact(self) -> bool:
        """Whether the backend's solutions are exact up to rounding."""
        return self._backend.exact

    # ------------------------------------------------------------------ compilation

    def clear_cache(self) -> None:
        """Forget how each task, limit and barrier was classified.

        Call after changing the *structure* of a pink object in place (a limit's ``indices``
        or projection, a task's class); parameters (targets, costs, gains, limit values) are
        read on every tick and need no invalidation.
        """
        self._task_terms.clear()
        self._limit_terms.clear()
        self._barrier_terms.clear()
        self._plan_key = ()
        self._plan = _TaskPlan([], self.n)
        self._limit_key = ()
        self._limit_plan = LimitPlan([])
        self._barrier_key = ()
        self._barrier_plan = []
        self._fused_plan = None
        self._fused_limits = None
        self._fused = None

    @staticmethod
    def _cached(cache: dict[int, tuple[Any, Any]], obj: Any, factory: Any) -> Any:
        entry = cache.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        term = factory(obj)
        cache[id(obj)] = (obj, term)  # holding obj keeps its id from being reused
        return term

    def _task_plan(self, tasks: tuple[Any, ...]) -> _TaskPlan:
        if tasks == self._plan_key:
            return self._plan
        model, selection = self._model, self._selection
        terms: list[TaskTerm] = []
        seen: set[int] = set()
        for task in tasks:
            if id(task) in seen:  # a repeated task counts twice: it needs its own rows
                terms.append(compile_task(task, model, selection))
                continue
            seen.add(id(task))
            terms.append(
                self._cached(self._task_terms, task, lambda t: compile_task(t, model, selection))
            )
        self._plan = _TaskPlan(terms, selection.size)
        self._plan_key = tasks
        return self._plan

    def _limits_plan(self, limits: tuple[Any, ...]) -> LimitPlan:
        if limits == self._limit_key:
            return self._limit_plan
        nv, selection = self._nv, self._selection
        terms = [
            self._cached(self._limit_terms, limit, lambda x: compile_limit(x, nv, selection))
            for limit in limits
        ]
        self._limit_plan = LimitPlan(terms)
        self._limit_key = limits
        return self._limit_plan

    def _barriers_plan(self, barriers: tuple[Any, ...]) -> list[BarrierTerm]:
        if barriers == self._barrier_key:
            return self._barrier_plan
        selection = self._selection
        self._barrier_plan = [
            self._cached(self._barrier_terms, barrier, lambda b: compile_barrier(b, selection))
            for barrier in barriers
        ]
        self._barrier_key = barriers
        return self._barrier_plan

    # ------------------------------------------------------------------ assembly

    def _check_velocity_bound(self, bound: Any, name: str) -> np.ndarray:
        array = np.asarray(bound, dtype=np.float64)
        if array.shape != (self.n,):
            raise ValueError(
                f"{name} must have shape ({self.n},) (one entry per controlled coordinate), "
                f"got {array.shape}"
            )
        return array

    def _assemble(
        self,
        configuration: Any,
        tasks: Iterable[Any],
        dt: float,
        limits: Iterable[Any],
        barriers: Iterable[Any],
        v_lower: Any,
        v_upper: Any,
    ) -> None:
        if not 0.0 < dt < _INFINITY:
            raise ValueError(f"dt must be a finite positive number of seconds, got {dt!r}")
        model = configuration.model
        fused = self._fused
        if (
            fused is not None
            and tasks is self._plan_key
            and limits is self._limit_key
            and not barriers
            and v_lower is None
            and v_upper is None
            and model is self._model
            and self._fused_plan is self._plan
            and self._fused_limits is self._limit_plan
            and self._workspace.generation == self._box_generation
        ):
            # the same (immutable) task and limit tuples as the fused plan's: skip the checks
            if fused.assemble(configuration, dt, self._damping):
                self._finish_fused(model, dt)
                return
        if model is not self._model and getattr(model, "nv", None) != self._nv:
            raise ValueError(
                f"configuration.model has nv={getattr(model, 'nv', None)}, expected {self._nv}"
            )
        if v_lower is not None:
            v_lower = self._check_velocity_bound(v_lower, "v_lower")
        if v_upper is not None:
            v_upper = self._check_velocity_bound(v_upper, "v_upper")
        self._has_problem = False
        task_tuple = tasks if type(tasks) is tuple else tuple(tasks)
        limit_tuple = limits if type(limits) is tuple else tuple(limits)
        barrier_tuple = barriers if type(barriers) is tuple else tuple(barriers)
        # Plans are cached by the identity of the objects (tuple equality checks `is` first).
        plan = self._plan if task_tuple == self._plan_key else self._task_plan(task_tuple)
        limit_plan = (
            self._limit_plan if limit_tuple == self._limit_key else self._limits_plan(limit_tuple)
        )
        barrier_terms = self._barriers_plan(barrier_tuple) if barrier_tuple else ()
        # crossed or NaN bounds are checked before solving unless the box can only come from
        # configuration/velocity limits and an exact backend reports an empty one itself
        self._check_bounds = (
            not limit_plan.nan_free or v_lower is not None or v_upper is not None or not self._exact
        )
        self._bound_args = (model, dt, v_lower, v_upper)

        ws = self._workspace
        box = self._box
        if ws.generation != self._box_generation:
            box.bind(ws.lb, ws.ub)
            self._box_generation = ws.generation
        if not barrier_terms and v_lower is None and v_upper is None:
            # the common arm problem (frame + posture + joint box): one pass, see qp.fused
            if self._fused_plan is not plan or self._fused_limits is not limit_plan:
                self._fused = FramePostureBox.compile(plan.terms, limit_plan, ws, box)
                self._fused_plan = plan
                self._fused_limits = limit_plan
            fused = self._fused
            if fused is not None and fused.assemble(configuration, dt, self._damping):
                self._finish_fused(model, dt)
                return
        self._recover_on_failure = False
        acc = plan.accumulator
        acc.reset(self._damping)
        for term in plan.terms:
            term.accumulate(configuration, acc)

        # Inequality rows (other limits, barriers); barriers also add objective terms.
        blocks = self._row_blocks
        if blocks:
            blocks.clear()
        for limit_term in limit_plan.row_terms:
            matvec = limit_term.rows(configuration, dt)
            if matvec is not None and matvec[1].shape[0]:
                blocks.append(matvec)
        for barrier_term in barrier_terms:
            matvec = barrier_term.evaluate(configuration, dt, acc)
            if matvec is not None and matvec[1].shape[0]:
                blocks.append(matvec)
        acc.finalize(ws.H, ws.c, ws.H_diagonal)
        if blocks:
            n_rows = sum(block[1].shape[0] for block in blocks)
            ws.set_row_counts(n_rows, 0)
            offset = 0
            for G_block, h_block in blocks:
                rows = h_block.shape[0]
                ws.G[offset : offset + rows] = G_block
                ws.h[offset : offset + rows] = h_block
                offset += rows
        elif ws.n_ineq or ws.n_eq:
            ws.set_row_counts(0, 0)

        # Simple bounds (after sizing the rows: the workspace may have reallocated).
        if ws.generation != self._box_generation:
            box.bind(ws.lb, ws.ub)
            self._box_generation = ws.generation
        box.reset()
        for limit_term in limit_plan.box_terms:
            limit_term.apply(configuration, dt, box)
        if v_upper is not None:
            np.multiply(v_upper, dt, out=self._v_bound)
            box.tighten_upper(None, self._v_bound)
        if v_lower is not None:
            np.multiply(v_lower, dt, out=self._v_bound)
            box.tighten_lower(None, self._v_bound)
        box.finish()
        if self._recover_outside_range:
            self._recover_if_empty(model, dt, v_lower, v_upper)
        self._has_problem = True

    def _finish_fused(self, model: Any, dt: float) -> None:
        """Bookkeeping after a fused assembly (no rows, no velocity bounds)."""
        ws = self._workspace
        if ws.n_ineq or ws.n_eq:
            ws.set_row_counts(0, 0)  # no G rows (shrinking keeps lb and ub)
        self._check_bounds = not self._exact
        self._bound_args = (model, dt, None, None)
        self._recover_on_failure = self._recover_outside_range and self._exact
        if self._recover_outside_range and not self._exact:
            self._recover_if_empty(model, dt, None, None)
        self._has_problem = True

    def _recover_if_empty(self, model: Any, dt: float, v_lower: Any, v_upper: Any) -> bool:
        """Apply :meth:`_recover` when the box is empty somewhere; whether it was."""
        ws = self._workspace
        if not np.count_nonzero(np.greater(ws.lb, ws.ub)):
            return False
        self._recover(model, dt, v_lower, v_upper)
        return True

    def _recover(self, model: Any, dt: float, v_lower: Any, v_upper: Any) -> None:
        """Let the position-range bound yield to the motion bounds when they conflict.

        pink's configuration limit asks for at most ``gain * (q_max - q)`` of motion toward a
        limit (and, outside the range, for a return of ``gain * (q - q_max)`` in one tick).
        The motion bounds, the velocity limit and ``v_lower``/``v_upper`` (acceleration and
        jerk limits, which cannot brake or return faster), may not allow that: the box is
        empty and pink reports infeasibility. Motion limits are what the hardware enforces,
        so for those coordinates the box collapses to the point of the motion box nearest to
        the configuration bound: ``x = max(-dt v_max, dt v_lower)`` when the range asks for
        less, ``x = min(dt v_max, dt v_upper)`` when it asks for more. A conflict among the
        motion bounds themselves is left as it is (reported by the solver).
        """
        ws = self._workspace
        crossing = np.flatnonzero(ws.lb > ws.ub)
        tangent = self._selection.indices[crossing]
        v_max = np.asarray(model.velocityLimit, dtype=np.float64)[tangent] * dt
        low = -v_max if v_lower is None else np.maximum(-v_max, v_lower[crossing] * dt)
        high = v_max if v_upper is None else np.minimum(v_max, v_upper[crossing] * dt)
        # the box is empty either because its upper side fell below the motion box or its
        # lower side rose above it
        value = np.where(ws.ub[crossing] < low, low, high)
        usable = (low <= high) & np.isfinite(value)
        ws.lb[crossing[usable]] = value[usable]
        ws.ub[crossing[usable]] = value[usable]

    def assemble(
        self,
        configuration: Any,
        tasks: Iterable[Any],
        dt: float,
        *,
        limits: Iterable[Any] = (),
        barriers: Iterable[Any] = (),
        v_lower: np.ndarray | None = None,
        v_upper: np.ndarray | None = None,
    ) -> QPProblem:
        """Fill the buffers with the QP of this tick and return a read-only view of it.

        Args:
            configuration: ``pink.Configuration`` updated at the current ``q`` (forward
                kinematics, Jacobians, and collision distances when barriers need them).
            tasks: pink tasks (objective).
            dt: Control period [s], > 0.
            limits: pink limits (an empty sequence means no limit, unlike pink's ``None``).
            barriers: pink barriers.
            v_lower: Optional lower bounds on the controlled velocities [rad/s or m/s],
                shape (n,); ``-inf`` entries are unbounded.
            v_upper: Optional upper bounds on the controlled velocities, shape (n,).

        Returns:
            The problem over ``x = dt * v_c`` (views valid until the next assembly).

        Raises:
            ValueError: Bad ``dt``, ``v_lower``/``v_upper`` shape, or a configuration of
                another model. Errors of pink objects (e.g. ``TargetNotSet``) propagate.
        """
        self._assemble(configuration, tasks, dt, limits, barriers, v_lower, v_upper)
        return self._workspace.problem()

    def last_problem(self) -> QPProblem | None:
        """The latest assembled problem (read-only views), or None before the first one."""
        if not self._has_problem:
            return None
        return self._workspace.problem()

    # ------------------------------------------------------------------ solving

    def _diagnose(self, error: QPSolveError) -> QPSolveError:
        """Turn a backend failure into the most specific reason we can name."""
        ws = self._workspace
        lb, ub = ws.lb, ws.ub
        index = self._selection.indices
        bad = np.flatnonzero(np.isnan(lb) | np.isnan(ub))
        if bad.size:
            reason = f"NaN in the bounds of tangent coordinates {index[bad].tolist()}"
        elif np.any(lb > ub):
            bad = np.flatnonzero(lb > ub)
            reason = (
                f"infeasible: lower bound above upper bound for tangent coordinates "
                f"{index[bad].tolist()} (lb={lb[bad].tolist()}, ub={ub[bad].tolist()}, "
                "displacements over dt)"
            )
        elif not np.all(np.isfinite(ws.H)) or not np.all(np.isfinite(ws.c)):
            reason = "NaN or infinite value in the objective (H, c)"
        elif ws.n_ineq and np.isnan(ws.h).any():
            reason = "NaN in the inequality vector h (limits or barriers)"
        else:
            return error
        return QPSolveError(f"{reason} [{error.reason}]", solver=error.solver, status=error.status)

    def _solve_workspace(self) -> np.ndarray:
        ws = self._workspace
        # lb <= ub everywhere; also catches NaN bounds (DAQP would silently ignore them).
        # Skipped when only configuration/velocity limits wrote the box: then lb > ub makes
        # the solver report infeasibility, diagnosed below, and NaN needs a NaN configuration.
        if (
            self._check_bounds
            and np.count_nonzero(np.less_equal(ws.lb, ws.ub, out=self._bounds_ok)) != self.n
        ) or (ws.n_ineq and np.count_nonzero(np.isnan(ws.h))):
            raise self._diagnose(
                QPSolveError("inconsistent bounds", solver=self._solver, status=None)
            )
        try:
            x = self._backend.solve(ws)
        except QPSolveError as error:
            if not (self._recover_on_failure and self._recover_if_empty(*self._bound_args)):
                raise self._diagnose(error) from error
            try:
                x = self._backend.solve(ws)
            except QPSolveError as retry_error:
                raise self._diagnose(retry_error) from retry_error
        if not isfinite(x.dot(x)):
            raise QPSolveError(
                f"{self._solver}: solution contains NaN or infinite values",
                solver=self._solver,
                status="nan",
            )
        return x

    def solve_assembled(self, problem: QPProblem | None = None) -> np.ndarray:
        """Solve an assembled problem and return its minimizer ``x`` (displacements).

        Args:
            problem: Problem to solve; None (default) solves the latest assembled one. A
                problem built elsewhere (e.g. the latest one plus equality rows ``A x = b``)
                is copied into the buffers first.

        Returns:
            ``x = dt * v_c``, shape (n,), a new array.

        Raises:
            QPSolveError: Infeasible problem, backend failure or NaN solution.
            ValueError: No problem assembled yet, or ``problem`` of the wrong size.
        """
        ws = self._workspace
        if problem is None:
            if not self._has_problem:
                raise ValueError("no problem assembled yet: call assemble() first")
        elif not ws.owns(problem):
            ws.load(problem)
            self._has_problem = True
            self._recover_on_failure = False
            self._check_bounds = True  # bounds from elsewhere: check them
        return self._solve_workspace()

    def solve_displacement(
        self,
        configuration: Any,
        tasks: Iterable[Any],
        dt: float,
        *,
        limits: Iterable[Any] = (),
        barriers: Iterable[Any] = (),
        v_lower: np.ndarray | None = None,
        v_upper: np.ndarray | None = None,
    ) -> np.ndarray:
        """Minimizer ``x = dt v_c`` of this tick's QP: the controlled displacements.

        :meth:`assemble` followed by :meth:`solve_assembled`, without the read-only problem
        views (the controller's per-tick call).

        Args: see :meth:`assemble`.

        Returns:
            ``x``, shape (n,), in controlled-coordinate order [rad or m]. A new array.

        Raises:
            QPSolveError: Infeasible problem, backend failure or NaN solution.
            ValueError: Bad arguments (see :meth:`assemble`).
        """
        self._assemble(configuration, tasks, dt, limits, barriers, v_lower, v_upper)
        return self._solve_workspace()

    def clip_to_bounds(self, x: np.ndarray) -> np.ndarray:
        """Clip ``x`` in place into the simple bounds ``lb <= x <= ub`` of the latest problem.

        Active-set solvers meet *active* bounds exactly but accept inactive ones violated by
        up to their feasibility tolerance (DAQP: 1e-6), first-order solvers by up to theirs:
        the clip makes the configuration, velocity and user box limits hold exactly. (The
        ``G`` rows are left as the solver met them.)

        Returns:
            ``x`` itself.
        """
        ws = self._workspace
        np.maximum(x, ws.lb, out=x)
        return np.minimum(x, ws.ub, out=x)

    def solve(
        self,
        configuration: Any,
        tasks: Iterable[Any],
        dt: float,
        *,
        limits: Iterable[Any] = (),
        barriers: Iterable[Any] = (),
        v_lower: np.ndarray | None = None,
        v_upper: np.ndarray | None = None,
    ) -> np.ndarray:
        """Velocity of this control tick (pink's ``solve_ik`` on the controlled joints).

        Args: see :meth:`assemble`.

        Returns:
            Velocity ``v`` in the tangent space, shape (model.nv,): ``x / dt`` on the
            controlled coordinates, exactly 0 elsewhere. A new array.

        Raises:
            QPSolveError: Infeasible problem, backend failure or NaN solution (reason in the
                message).
            ValueError: Bad arguments (see :meth:`assemble`).
        """
        x = self.solve_displacement(
            configuration,
            tasks,
            dt,
            limits=limits,
            barriers=barriers,
            v_lower=v_lower,
            v_upper=v_upper,
        )
        period = self._period
        period[()] = dt
        if self._selection.is_full:
            return np.divide(x, period, x)
        v = np.zeros(self._nv)
        if self._slice:
            np.divide(x, period, v[self._selection.index])
        else:
            v[self._selection.index] = np.divide(x, period, x)
        return v

    def primal_residual(self, x: np.ndarray) -> float:
        """Largest constraint violation of ``x`` for the latest problem (tangent units)."""
        problem = self.last_problem()
        if problem is None:
            raise ValueError("no problem assembled yet")
        return problem.max_violation(np.asarray(x, dtype=np.float64))
