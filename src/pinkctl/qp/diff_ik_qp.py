"""Fast differential-IK QP over the controlled joints: pink's problem, assembled in place.

(This module is long because :class:`DiffIKQP` keeps its one-shot entry points beside the
compiled path, each documenting the same problem; the assembly itself lives in
:mod:`~pinkctl.qp.plan`, :mod:`~pinkctl.qp.fused` and the term modules.)

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

from ..errors import InputError
from .backends import Backend, make_backend
from .errors import QPSolveError
from .limit_terms import BoxBounds
from .plan import QPPlan
from .problem import QPProblem, QPWorkspace
from .recovery import diagnose, recover_empty_box
from .selection import ColumnSelection

__all__ = ["DiffIKQP", "QPPlan"]

_INFINITY = float("inf")


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
            (see :func:`~pinkctl.qp.recovery.recover_empty_box`). False gives pink's
            behaviour (infeasible).

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
            raise InputError(f"model must be a pinocchio.Model, got {type(model).__name__}")
        if not isinstance(solver, str):
            raise InputError(f"solver must be a string, got {solver!r}")
        try:
            damping_value = float(damping)
        except (TypeError, ValueError) as exc:
            raise InputError(f"damping must be a finite float >= 0, got {damping!r}") from exc
        if not np.isfinite(damping_value) or damping_value < 0.0:
            raise InputError(f"damping must be a finite float >= 0, got {damping!r}")
        if solver_options is not None and not isinstance(solver_options, dict):
            raise InputError(f"solver_options must be a dict or None, got {solver_options!r}")
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
        self._row_blocks: list[tuple[np.ndarray, np.ndarray]] = []
        self._has_problem = False
        #: crossed or NaN bounds are checked before solving (see _solve_workspace)
        self._check_bounds = True
        #: (dt, v_lower, v_upper) of the latest assembly when an empty box (a start far
        #: outside the range) is left to an exact solver to report and recovered then
        self._recovery: tuple[float, Any, Any] | None = None

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

    def compile(
        self, tasks: Iterable[Any], limits: Iterable[Any] = (), barriers: Iterable[Any] = ()
    ) -> QPPlan:
        """Analyse pink tasks, limits and barriers once (see :class:`QPPlan`).

        Raises:
            ValueError: A limit or barrier that does not fit the model.
        """
        return QPPlan(
            self._model,
            self._selection,
            self._workspace,
            self._box,
            tasks=tasks,
            limits=limits,
            barriers=barriers,
        )

    # ------------------------------------------------------------------ assembly

    def _check_velocity_bound(self, bound: Any, name: str) -> np.ndarray:
        array = np.asarray(bound, dtype=np.float64)
        if array.shape != (self.n,):
            raise InputError(
                f"{name} must have shape ({self.n},) (one entry per controlled coordinate), "
                f"got {array.shape}"
            )
        return array

    def assemble_plan(
        self,
        plan: QPPlan,
        configuration: Any,
        dt: float,
        v_lower: np.ndarray | None = None,
        v_upper: np.ndarray | None = None,
    ) -> None:
        """Fill the buffers with this tick's QP of ``plan`` (see :meth:`assemble`).

        Raises:
            ValueError: Bad ``dt``, ``v_lower``/``v_upper`` shape, or a configuration of
                another model. Errors of pink objects (e.g. ``TargetNotSet``) propagate.
        """
        if not 0.0 < dt < _INFINITY:
            raise InputError(f"dt must be a finite positive number of seconds, got {dt!r}")
        model = configuration.model
        ws = self._workspace
        box = self._box
        if ws.generation != self._box_generation:
            box.bind(ws.lb, ws.ub)
            self._box_generation = ws.generation
        fused = plan.fused
        if fused is not None and v_lower is None and v_upper is None:
            # the common arm problem (frame + posture + joint box): one pass, see qp.fused
            if (model is self._model or model.nv == self._nv) and fused.assemble(
                configuration, dt, self._damping
            ):
                if ws.n_ineq or ws.n_eq:
                    ws.set_row_counts(0, 0)  # no G rows (shrinking keeps lb and ub)
                self._check_bounds = not self._exact
                self._recovery = None
                if self._recover_outside_range:
                    if self._exact:  # left to the solver to report, recovered then
                        self._recovery = (dt, None, None)
                    else:
                        recover_empty_box(
                            self._workspace, self._selection.indices, model, dt, None, None
                        )
                self._has_problem = True
                return
        if model is not self._model and getattr(model, "nv", None) != self._nv:
            raise InputError(
                f"configuration.model has nv={getattr(model, 'nv', None)}, expected {self._nv}"
            )
        if v_lower is not None:
            v_lower = self._check_velocity_bound(v_lower, "v_lower")
        if v_upper is not None:
            v_upper = self._check_velocity_bound(v_upper, "v_upper")
        self._has_problem = False
        self._recovery = None
        limit_plan = plan.limit_plan
        # crossed or NaN bounds are checked before solving unless the box can only come from
        # configuration/velocity limits and an exact backend reports an empty one itself
        self._check_bounds = (
            not limit_plan.nan_free or v_lower is not None or v_upper is not None or not self._exact
        )
        acc = plan.task_plan.accumulator
        acc.reset(self._damping)
        for term in plan.task_plan.terms:
            term.accumulate(configuration, acc)

        # Inequality rows (other limits, barriers); barriers also add objective terms.
        blocks = self._row_blocks
        if blocks:
            blocks.clear()
        for limit_term in limit_plan.row_terms:
            matvec = limit_term.rows(configuration, dt)
            if matvec is not None and matvec[1].shape[0]:
                blocks.append(matvec)
        for barrier_term in plan.barrier_terms:
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
            self._recover(model, dt, v_lower, v_upper)
        self._has_problem = True

    def _recover(
        self, model: pin.Model, dt: float, v_lower: np.ndarray | None, v_upper: np.ndarray | None
    ) -> bool:
        """:func:`~pinkctl.qp.recovery.recover_empty_box` on this QP's box."""
        return recover_empty_box(
            self._workspace, self._selection.indices, model, dt, v_lower, v_upper
        )

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
        """Compile ``tasks``, ``limits`` and ``barriers`` and fill the buffers with this tick's
        QP; return a read-only view of it (:meth:`compile` + :meth:`assemble_plan`).

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
        self.assemble_plan(
            self.compile(tasks, limits, barriers), configuration, dt, v_lower, v_upper
        )
        return self._workspace.problem()

    def last_problem(self) -> QPProblem | None:
        """The latest assembled problem (read-only views), or None before the first one."""
        if not self._has_problem:
            return None
        return self._workspace.problem()

    # ------------------------------------------------------------------ solving

    def _solve_workspace(self) -> np.ndarray:
        ws = self._workspace
        # lb <= ub everywhere; also catches NaN bounds (DAQP would silently ignore them).
        # Skipped when only configuration/velocity limits wrote the box: then lb > ub makes
        # the solver report infeasibility, diagnosed below, and NaN needs a NaN configuration.
        if (
            self._check_bounds
            and np.count_nonzero(np.less_equal(ws.lb, ws.ub, out=self._bounds_ok)) != self.n
        ) or (ws.n_ineq and np.count_nonzero(np.isnan(ws.h))):
            raise diagnose(
                self._workspace,
                self._selection.indices,
                QPSolveError("inconsistent bounds", solver=self._solver, status=None),
            )
        try:
            x = self._backend.solve(ws)
        except QPSolveError as error:
            recovery = self._recovery
            if recovery is None or not recover_empty_box(
                self._workspace, self._selection.indices, self._model, *recovery
            ):
                raise diagnose(ws, self._selection.indices, error) from error
            try:
                x = self._backend.solve(ws)
            except QPSolveError as retry_error:
                raise diagnose(
                    self._workspace, self._selection.indices, retry_error
                ) from retry_error
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
                raise InputError("no problem assembled yet: call assemble() first")
        elif not ws.owns(problem):
            ws.load(problem)
            self._has_problem = True
            self._recovery = None
            self._check_bounds = True  # bounds from elsewhere: check them
        return self._solve_workspace()

    def step(
        self,
        plan: QPPlan,
        configuration: Any,
        dt: float,
        v_lower: np.ndarray | None = None,
        v_upper: np.ndarray | None = None,
    ) -> np.ndarray:
        """Minimizer ``x = dt v_c`` of this tick's QP of ``plan``: the controlled displacements
        [rad or m], a new array (not yet clipped: see :meth:`clip_to_bounds`).

        Raises:
            QPSolveError: Infeasible problem, backend failure or NaN solution.
            ValueError: Bad arguments (see :meth:`assemble_plan`).
        """
        self.assemble_plan(plan, configuration, dt, v_lower, v_upper)
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
        """Minimizer ``x = dt v_c`` for these tasks, limits and barriers (:meth:`compile` +
        :meth:`step`). A control loop compiles once and calls :meth:`step`.

        Args: see :meth:`assemble`.

        Returns:
            ``x``, shape (n,), in controlled-coordinate order [rad or m]. A new array.

        Raises:
            QPSolveError: Infeasible problem, backend failure or NaN solution.
            ValueError: Bad arguments (see :meth:`assemble`).
        """
        return self.step(self.compile(tasks, limits, barriers), configuration, dt, v_lower, v_upper)

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
            raise InputError("no problem assembled yet")
        return problem.max_violation(np.asarray(x, dtype=np.float64))
