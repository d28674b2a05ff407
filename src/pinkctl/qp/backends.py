"""QP backends: solve a :class:`~pinkctl.qp.problem.QPWorkspace` with one solver.

Backends and their accuracy (measured against DAQP on random IK problems, see
``tests/test_qp_equivalence.py``):

- ``daqp`` (default): dual active-set, called directly (``daqp.solve``) on the workspace's
  DAQP-shaped buffers; simple bounds are DAQP simple bounds, equality rows use sense 5.
  **Exact** (active set: exact up to rounding, about 1e-11 on displacements). A warm start
  from the previous tick's active set was measured slower on 7-DoF problems, so none is used.
- ``quadprog``: Goldfarb-Idnani dual active-set, called directly. **Exact**; needs a strictly
  positive-definite Hessian (a posture or damping task gives one), else
  :class:`QPSolveError`.
- ``clarabel``: interior point, one persistent ``clarabel.DefaultSolver`` updated in place
  (re-created only when the constraint pattern changes: row count, which bounds are finite),
  tolerances ``tol_gap_abs = tol_gap_rel = tol_feas = 1e-10``, then **active-set polishing**
  (:mod:`pinkctl.qp.polish`): the KKT system on the interior point's active set is solved
  and kept when it verifies optimality. **Exact** whenever the polish verifies (every random
  test case); otherwise the interior-point solution, which on the flat directions of an IK
  objective can be off by up to ~1e-2 rad/s even at these tolerances.
- ``osqp``: ADMM, one persistent ``osqp.OSQP`` solver set up once with a fixed sparsity
  pattern (dense upper-triangular ``P``, ``A = [I; G; A_eq]``) and updated in place (``Px``,
  ``Ax``, ``q``, ``l``, ``u``, through its C solver object); set up again only when the row
  count changes; warm-started from the previous tick. ``eps_abs = eps_rel = 1e-9``,
  ``max_iter = 10000``, then the same active-set polish as Clarabel (OSQP's own polish is
  off: it prints to stdout), also tried when OSQP stops at its iteration limit. **Exact**
  when the polish verifies (every random test case), else within ~1e-8 rad/s.
- ``proxqp``: ProxQP's dense ``proxqp.dense.solve`` called directly on persistent buffers
  (bounds as rows ``[G; I]``, like qpsolvers poses them), then the same polish (guided by the
  returned multipliers). Defaults ``eps_abs = 1e-9``, ``eps_rel = 0`` (qpsolvers' default 1e-3
  makes ProxQP report feasible IK problems as primal infeasible) and
  ``primal_infeasibility_solving = True`` (even at 1e-9 it misreports some feasible degenerate
  problems, e.g. an acceleration limit plus a position barrier; it then returns the closest
  feasible point, which the polish verifies). Unpolished it is within ~1e-3 rad/s of the exact
  solution; polished, exact. ``solver_options={"backend": "sparse"}`` goes through qpsolvers.
- any other solver known to qpsolvers: through ``qpsolvers.solve_problem``, then the polish.

The polish first tries the unconstrained minimizer when the solver reports nothing active (one
LU solve: the usual tracking tick), else solves the KKT system on the reported active set: a
few microseconds to 20-40 us per tick on a 7-DoF arm. ``solver_options={"polish": False}``
trades the exactness of Clarabel/OSQP/ProxQP for that time. User ``solver_options`` override
the defaults key by key.
"""

from __future__ import annotations

import warnings
from math import isfinite
from typing import Any

import numpy as np
import qpsolvers

from ..errors import InputError
from .box_qp import native_box_qp
from .errors import QPSolveError
from .polish import polish_solution
from .problem import DAQP_INFINITY, QPWorkspace

__all__ = [
    "DEFAULT_SOLVER_OPTIONS",
    "EXACT_SOLVERS",
    "Backend",
    "available_solvers",
    "make_backend",
]

#: Solvers whose solution is exact up to rounding (Clarabel: once polished).
EXACT_SOLVERS = frozenset({"daqp", "quadprog", "clarabel"})

#: Default options per solver (overridden key by key by the user's ``solver_options``).
DEFAULT_SOLVER_OPTIONS: dict[str, dict[str, Any]] = {
    "osqp": {
        "eps_abs": 1e-9,
        "eps_rel": 1e-9,
        "polish": True,  # our active-set polish (OSQP's own prints to stdout)
        "max_iter": 10000,
        "verbose": False,
    },
    "proxqp": {
        "eps_abs": 1e-9,
        "eps_rel": 0.0,
        # Solve for the closest feasible point instead of declaring primal infeasibility
        # (ProxQP misreports some feasible, degenerate IK problems; pink's too); the polish
        # then verifies feasibility and optimality.
        "primal_infeasibility_solving": True,
        "polish": True,
        # ProxQP's default (10,000 outer iterations) let one tick with a target 1e8 m away
        # run for 35 s; 1,000 bounds it to a few ms, far above what IK ticks need (< 50)
        "max_iter": 1000,
    },
    "clarabel": {
        "tol_gap_abs": 1e-10,
        "tol_gap_rel": 1e-10,
        "tol_feas": 1e-10,
        "polish": True,  # our active-set polish
        "verbose": False,
    },
}

_DAQP_EXIT_FLAGS = {
    -1: "primal infeasible",
    -2: "cycling detected",
    -3: "unbounded problem",
    -4: "iteration limit reached",
    -5: "non-convex problem",
    -6: "initial working set overdetermined",
}


#: DAQP exits retried once with a regularised Hessian: cycling, iteration limit.
_DAQP_RETRY_FLAGS = (-2, -4)
#: Relative Tikhonov term of that retry (times 1 + the largest Hessian diagonal entry).
_DAQP_REGULARIZATION = 1e-9


def available_solvers() -> list[str]:
    """QP solvers usable here (those qpsolvers finds installed)."""
    return sorted(qpsolvers.available_solvers)


#: Option handled by our backends themselves, never passed to a solver: our active-set polish
#: (OSQP's native ``polish`` is always off: it prints to stdout).
POLISH_OPTION = "polish"


def solver_options(solver: str, user_options: dict[str, Any] | None) -> dict[str, Any]:
    """Default options of ``solver`` updated with ``user_options``."""
    options = dict(DEFAULT_SOLVER_OPTIONS.get(solver, {}))
    if user_options:
        options.update(user_options)
    return options


def qpsolvers_options(solver: str, user_options: dict[str, Any] | None) -> dict[str, Any]:
    """:func:`solver_options` without the backend-only keys (for ``qpsolvers.solve_problem``)."""
    options = solver_options(solver, user_options)
    options.pop(POLISH_OPTION, None)
    return options


class Backend:
    """Base class: solves the problem held by a workspace.

    Attributes:
        name: Solver name.
        exact: Whether solutions are exact up to rounding (see module docstring).
    """

    name: str = ""
    exact: bool = False

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        """Return the minimizer ``x`` (shape (n,)) or raise :class:`QPSolveError`."""
        raise NotImplementedError


def _upper_triangle_csc_indices(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSC structure of a dense upper triangle, and where each entry sits in ``H.ravel()``."""
    rows: list[int] = []
    flat: list[int] = []
    indptr = [0]
    for j in range(n):
        for i in range(j + 1):
            rows.append(i)
            flat.append(i * n + j)
        indptr.append(len(rows))
    return (
        np.asarray(indptr, dtype=np.int64),
        np.asarray(rows, dtype=np.int64),
        np.asarray(flat, dtype=np.intp),
    )


class DaqpBackend(Backend):
    """DAQP called directly on the workspace buffers."""

    name = "daqp"
    exact = True

    def __init__(self, options: dict[str, Any]) -> None:
        import daqp  # noqa: PLC0415

        self._solve = daqp.solve
        self._options = dict(options)
        self._options.pop(POLISH_OPTION, None)  # DAQP is exact: nothing to polish
        # box-only problems with DAQP's default settings: the native exact solver, same minimiser
        self._box = native_box_qp() if not self._options else None

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        if self._box is not None and ws.n_ineq == 0 and ws.n_eq == 0:
            x = self._box.solve(ws)
            if x is not None:
                return x
        if self._options:
            x, _, exitflag, _ = self._solve(
                ws.H,
                ws.c,
                ws.daqp_matrix,
                ws.daqp_upper,
                ws.daqp_lower,
                ws.daqp_sense,
                **self._options,
            )
        else:
            x, _, exitflag, _ = self._solve(
                ws.H, ws.c, ws.daqp_matrix, ws.daqp_upper, ws.daqp_lower, ws.daqp_sense
            )
        if exitflag in _DAQP_RETRY_FLAGS:
            # cycling or stalling on a nearly singular Hessian (e.g. no posture task and a
            # target out of reach): solve again with a regularised Hessian
            H = ws.H + _DAQP_REGULARIZATION * (1.0 + float(np.max(np.abs(ws.H_diagonal)))) * np.eye(
                ws.n
            )
            x, _, exitflag, _ = self._solve(
                H,
                ws.c,
                ws.daqp_matrix,
                ws.daqp_upper,
                ws.daqp_lower,
                ws.daqp_sense,
                **self._options,
            )
        if exitflag < 1:
            reason = _DAQP_EXIT_FLAGS.get(int(exitflag), f"exit flag {exitflag}")
            raise QPSolveError(f"daqp: {reason}", solver=self.name, status=int(exitflag))
        return x


class QuadprogBackend(Backend):
    """quadprog's ``solve_qp`` called directly (constraints ``C^T x >= b``).

    Columns of ``C``: equality rows, finite lower bounds (``x >= lb``), finite upper bounds
    (``-x >= -ub``), then ``-G x >= -h``. The identity columns are kept between ticks while the
    pattern (row counts, which bounds are finite) does not change.
    """

    name = "quadprog"
    exact = True

    def __init__(self, options: dict[str, Any]) -> None:
        import quadprog  # noqa: PLC0415

        self._solve = quadprog.solve_qp
        self._options = dict(options)
        self._options.pop(POLISH_OPTION, None)
        self._key: tuple[Any, ...] = ()

    def _layout(self, ws: QPWorkspace, finite_lower: np.ndarray, finite_upper: np.ndarray) -> None:
        n = ws.n
        n_eq = ws.n_eq
        lower = np.flatnonzero(finite_lower)
        upper = np.flatnonzero(finite_upper)
        columns = n_eq + lower.size + upper.size + ws.n_ineq
        C = np.zeros((n, columns))
        C[lower, n_eq + np.arange(lower.size)] = 1.0
        C[upper, n_eq + lower.size + np.arange(upper.size)] = -1.0
        self._C = C
        self._b = np.empty(columns)
        all_lower = lower.size == n
        all_upper = upper.size == n
        self._lower_index: slice | np.ndarray = slice(None) if all_lower else lower
        self._upper_index: slice | np.ndarray = slice(None) if all_upper else upper
        self._lower_slots = slice(n_eq, n_eq + lower.size)
        self._upper_slots = slice(n_eq + lower.size, n_eq + lower.size + upper.size)
        self._row_slots = slice(n_eq + lower.size + upper.size, columns)

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        finite_lower = ws.lb > -DAQP_INFINITY
        finite_upper = ws.ub < DAQP_INFINITY
        key = (ws.n, ws.n_eq, ws.n_ineq, finite_lower.tobytes(), finite_upper.tobytes())
        if key != self._key:
            self._layout(ws, finite_lower, finite_upper)
            self._key = key
        C = self._C
        b = self._b
        n_eq = ws.n_eq
        if n_eq:
            C[:, :n_eq] = ws.A.T
            b[:n_eq] = ws.b
        b[self._lower_slots] = ws.lb[self._lower_index]
        np.negative(ws.ub[self._upper_index], out=b[self._upper_slots])
        if ws.n_ineq:
            np.negative(ws.G.T, out=C[:, self._row_slots])
            np.negative(ws.h, out=b[self._row_slots])
        try:
            x = self._solve(ws.H, np.negative(ws.c), C, b, n_eq, **self._options)[0]
        except ValueError as exc:
            message = str(exc)
            if "inconsistent" in message:
                reason = "quadprog: primal infeasible (constraints are inconsistent)"
            else:
                reason = f"quadprog: {message}"
            raise QPSolveError(reason, solver=self.name, status=message) from exc
        return np.asarray(x, dtype=np.float64)


class OsqpBackend(Backend):
    """One persistent OSQP solver updated in place (fixed sparsity pattern)."""

    name = "osqp"
    exact = False

    def __init__(self, n: int, options: dict[str, Any]) -> None:
        import osqp  # noqa: PLC0415
        import scipy.sparse as spa  # noqa: PLC0415

        self._osqp = osqp
        self._spa = spa
        self._options = dict(options)
        # OSQP's own polish prints to stdout when nothing is active; we polish ourselves.
        self._polish = bool(self._options.pop(POLISH_OPTION, True))
        self._options["polish"] = False
        self._n = n
        self._P_indptr, self._P_indices, self._P_flat = _upper_triangle_csc_indices(n)
        self._Px = np.zeros(self._P_flat.size)
        self._rows = -1
        self._solver: Any = None

    def _setup(self, ws: QPWorkspace) -> None:
        n = self._n
        rows = ws.n_ineq + ws.n_eq
        spa = self._spa
        P = spa.csc_matrix(
            (np.take(ws.H.reshape(-1), self._P_flat), self._P_indices, self._P_indptr),
            shape=(n, n),
        )
        # A = [I; G; A_eq] with every entry of G and A_eq structurally present.
        self._A_block = np.zeros((n, 1 + rows))  # row j = column j of A (CSC data order)
        self._A_block[:, 0] = 1.0
        self._A_block[:, 1:] = ws.daqp_matrix.T
        indices = np.empty((n, 1 + rows), dtype=np.int64)
        indices[:, 0] = np.arange(n)
        indices[:, 1:] = n + np.arange(rows)
        A = spa.csc_matrix(
            (self._A_block.reshape(-1).copy(), indices.reshape(-1), np.arange(n + 1) * (1 + rows)),
            shape=(n + rows, n),
        )
        solver = self._osqp.OSQP()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            solver.setup(
                P,
                ws.c.copy(),
                A,
                ws.daqp_lower.copy(),
                ws.daqp_upper.copy(),
                **self._options,
            )
        self._solver = solver
        self._core = solver._solver  # the C solver object behind the Python wrapper
        self._rows = rows
        statuses = self._osqp.SolverStatus
        self._solved = statuses.OSQP_SOLVED
        #: Stopped before the tolerance: the polish may still recover the exact solution.
        self._unfinished = (statuses.OSQP_SOLVED_INACCURATE, statuses.OSQP_MAX_ITER_REACHED)

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        rows = ws.n_ineq + ws.n_eq
        n = self._n
        if self._solver is None or rows != self._rows:
            self._setup(ws)
            self._lower = np.empty(n + rows)
            self._upper = np.empty(n + rows)
        else:
            # OSQP's C solver is updated directly (the Python wrapper's update and solve
            # rebuild caches and info namespaces on each call); l/u clipped to +-OSQP_INFTY.
            np.take(ws.H.reshape(-1), self._P_flat, out=self._Px)
            np.maximum(ws.daqp_lower, -DAQP_INFINITY, out=self._lower)
            np.minimum(ws.daqp_upper, DAQP_INFINITY, out=self._upper)
            core = self._core
            core.update_data_vec(ws.c, self._lower, self._upper)
            if rows:
                self._A_block[:, 1:] = ws.daqp_matrix.T
                core.update_data_mat(self._Px, None, self._A_block.reshape(-1), None)
            else:
                core.update_data_mat(self._Px, None, None, None)
        core = self._core
        core.solve()
        info = core.info
        status = info.status_val
        if status != self._solved and status not in self._unfinished:
            raise QPSolveError(f"osqp: {info.status}", solver=self.name, status=info.status)
        solution = core.solution
        x = np.array(solution.x, dtype=np.float64)
        if self._polish and isfinite(x.dot(x)):
            # OSQP's rule: row i is active on its upper side when u_i - a_i x < y_i, on its
            # lower side when a_i x - l_i < -y_i (rows: [I; G; A_eq]).
            y = np.asarray(solution.y)
            if ws.n_ineq:
                ax = np.concatenate((x, ws.G @ x))
            else:
                ax = x
            upper = (ws.daqp_upper[: n + ws.n_ineq] - ax) < y[: n + ws.n_ineq]
            lower = (x - ws.lb) < -y[:n]
            polished = polish_solution(ws, x, upper, lower)
            if polished is not None:
                return polished  # verified optimal, even if OSQP stopped early
        if status != self._solved:
            raise QPSolveError(f"osqp: {info.status}", solver=self.name, status=info.status)
        return x


class ClarabelBackend(Backend):
    """One persistent Clarabel solver updated in place (re-created when the pattern changes).

    Constraint rows, in cone order: ``A_eq x + s = b`` (zero cone), then ``x + s = ub`` (finite
    upper bounds), ``-x + s = -lb`` (finite lower bounds), ``G x + s = h`` (non-negative cone).
    """

    name = "clarabel"
    exact = True

    def __init__(self, n: int, options: dict[str, Any]) -> None:
        import clarabel  # noqa: PLC0415
        import scipy.sparse as spa  # noqa: PLC0415

        self._clarabel = clarabel
        self._spa = spa
        self._options = dict(options)
        self._polish = bool(self._options.pop(POLISH_OPTION, True))
        self._n = n
        self._P_indptr, self._P_indices, self._P_flat = _upper_triangle_csc_indices(n)
        self._Px = np.zeros(self._P_flat.size)
        self._key: tuple[Any, ...] | None = None
        self._solver: Any = None

    def _build(self, ws: QPWorkspace, finite_upper: np.ndarray, finite_lower: np.ndarray) -> None:
        clarabel = self._clarabel
        spa = self._spa
        n = self._n
        n_eq, n_ineq = ws.n_eq, ws.n_ineq
        n_up, n_low = finite_upper.size, finite_lower.size
        n_rows = n_eq + n_up + n_low + n_ineq
        dense = np.zeros((n_rows, n))
        pattern = np.zeros((n_rows, n), dtype=bool)
        pattern[:n_eq] = True
        dense[n_eq + np.arange(n_up), finite_upper] = 1.0
        pattern[n_eq + np.arange(n_up), finite_upper] = True
        offset = n_eq + n_up
        dense[offset + np.arange(n_low), finite_lower] = -1.0
        pattern[offset + np.arange(n_low), finite_lower] = True
        pattern[offset + n_low :] = True
        columns, rows = np.nonzero(pattern.T)  # column-major traversal = CSC order
        self._A_flat = (rows * n + columns).astype(np.intp)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(columns, minlength=n), out=indptr[1:])
        self._dense = dense
        self._eq_rows = slice(0, n_eq)
        self._ineq_rows = slice(offset + n_low, n_rows)
        self._b = np.zeros(n_rows)
        self._finite_upper = finite_upper
        self._finite_lower = finite_lower
        self._fill(ws)
        P = spa.csc_matrix((self._Px.copy(), self._P_indices, self._P_indptr), shape=(n, n))
        A = spa.csc_matrix(
            (np.take(dense.reshape(-1), self._A_flat), rows.astype(np.int64), indptr),
            shape=(n_rows, n),
        )
        cones = []
        if n_eq:
            cones.append(clarabel.ZeroConeT(n_eq))
        if n_rows - n_eq:
            cones.append(clarabel.NonnegativeConeT(n_rows - n_eq))
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.presolve_enable = False
        for key, value in self._options.items():
            setattr(settings, key, value)
        self._solver = clarabel.DefaultSolver(P, ws.c.copy(), A, self._b.copy(), cones, settings)
        self._updatable = bool(self._solver.is_data_update_allowed())

    def _fill(self, ws: QPWorkspace) -> None:
        np.take(ws.H.reshape(-1), self._P_flat, out=self._Px)
        dense = self._dense
        b = self._b
        n_eq = ws.n_eq
        n_up = self._finite_upper.size
        n_low = self._finite_lower.size
        if n_eq:
            dense[self._eq_rows] = ws.A
            b[:n_eq] = ws.b
        b[n_eq : n_eq + n_up] = ws.ub[self._finite_upper]
        b[n_eq + n_up : n_eq + n_up + n_low] = -ws.lb[self._finite_lower]
        if ws.n_ineq:
            dense[self._ineq_rows] = ws.G
            b[self._ineq_rows] = ws.h

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        # the constraint pattern: row counts and which bounds are finite
        key = (
            ws.n_eq,
            ws.n_ineq,
            (ws.ub < DAQP_INFINITY).tobytes(),
            (ws.lb > -DAQP_INFINITY).tobytes(),
        )
        if self._solver is None or key != self._key or not self._updatable:
            finite_upper = np.flatnonzero(ws.ub < DAQP_INFINITY)
            finite_lower = np.flatnonzero(ws.lb > -DAQP_INFINITY)
            self._build(ws, finite_upper, finite_lower)
            self._key = key
        else:
            self._fill(ws)
            update: dict[str, Any] = {"P": self._Px, "q": ws.c, "b": self._b}
            if ws.n_eq or ws.n_ineq:
                update["A"] = np.take(self._dense.reshape(-1), self._A_flat)
            self._solver.update(**update)
        result = self._solver.solve()
        if result.status != self._clarabel.SolverStatus.Solved:
            raise QPSolveError(f"clarabel: {result.status}", solver=self.name, status=result.status)
        x = np.array(result.x, dtype=np.float64)
        if self._polish:
            # Row r is active when its slack is below its multiplier.
            active = np.asarray(result.s) < np.asarray(result.z)
            n, n_eq = self._n, ws.n_eq
            n_up, n_low = self._finite_upper.size, self._finite_lower.size
            upper = np.zeros(n + ws.n_ineq, dtype=bool)
            lower = np.zeros(n, dtype=bool)
            upper[self._finite_upper] = active[n_eq : n_eq + n_up]
            lower[self._finite_lower] = active[n_eq + n_up : n_eq + n_up + n_low]
            upper[n:] = active[n_eq + n_up + n_low :]
            polished = polish_solution(ws, x, upper, lower)
            if polished is not None:
                return polished
        return x


class ProxqpBackend(Backend):
    """ProxQP's dense ``solve`` called directly on persistent row buffers.

    The simple bounds are rows of ProxQP's inequality block, ``[G; I] x`` between
    ``[-inf; lb]`` and ``[h; ub]`` (as qpsolvers poses them, minus its per-call conversions).
    The one-shot ``proxqp.dense.solve`` is used rather than a persistent ``proxqp.dense.QP``:
    with the same settings the latter stalled for tens of thousands of iterations on some
    self-collision ticks that the one-shot solve finishes in three. Multipliers
    ``z = [z_rows, z_box]`` guide the active-set polish (positive: upper side active).
    """

    name = "proxqp"
    exact = False

    def __init__(self, n: int, options: dict[str, Any]) -> None:
        from proxsuite import proxqp  # noqa: PLC0415

        self._solve = proxqp.dense.solve
        self._options = dict(options)
        self._polish = bool(self._options.pop(POLISH_OPTION, True))
        try:  # reject unknown or mistyped options here, not on the first control tick
            self._solve(np.eye(1), np.zeros(1), None, None, None, None, None, **self._options)
        except TypeError as exc:
            first_line = str(exc).splitlines()[0]
            raise InputError(f"invalid ProxQP options {self._options}: {first_line}") from exc
        self._n = n
        self._rows = -1
        statuses = proxqp.QPSolverOutput
        self._solved = statuses.PROXQP_SOLVED
        #: Stopped before the tolerance or at the closest feasible point: the polish may
        #: still find the exact solution.
        self._unfinished = (
            statuses.PROXQP_MAX_ITER_REACHED,
            statuses.PROXQP_SOLVED_CLOSEST_PRIMAL_FEASIBLE,
        )

    def _resize(self, rows: int) -> None:
        n = self._n
        self._rows = rows
        self._C = np.zeros((rows + n, n))
        self._C[rows:] = np.eye(n)
        self._l = np.full(rows + n, -np.inf)
        self._u = np.zeros(rows + n)

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        n, rows = self._n, ws.n_ineq
        if rows != self._rows:
            self._resize(rows)
        C, lower, upper = self._C, self._l, self._u
        if rows:
            C[:rows] = ws.G
            upper[:rows] = ws.h
        lower[rows:] = ws.lb
        upper[rows:] = ws.ub
        try:
            if ws.n_eq:
                results = self._solve(ws.H, ws.c, ws.A, ws.b, C, lower, upper, **self._options)
            else:
                results = self._solve(ws.H, ws.c, None, None, C, lower, upper, **self._options)
        except (TypeError, ValueError, RuntimeError) as exc:  # bad settings or data
            raise QPSolveError(f"proxqp: {exc}", solver=self.name) from exc
        status = results.info.status
        if status != self._solved and status not in self._unfinished:
            raise QPSolveError(f"proxqp: {status.name}", solver=self.name, status=status)
        x = np.array(results.x, dtype=np.float64)
        if self._polish and isfinite(x.dot(x)):
            z = np.asarray(results.z)  # [rows, box]
            hint = np.empty(n + rows, dtype=bool)
            np.greater(z[rows:], 0.0, out=hint[:n])
            np.greater(z[:rows], 0.0, out=hint[n:])
            polished = polish_solution(ws, x, hint, z[rows:] < 0.0)
            if polished is not None:
                return polished  # verified optimal, even if ProxQP stopped early
        if status != self._solved:
            raise QPSolveError(f"proxqp: {status.name}", solver=self.name, status=status)
        return x


class QpsolversBackend(Backend):
    """Any solver through ``qpsolvers.solve_problem`` (infinite bounds passed as such)."""

    exact = False

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        self.name = name
        self.exact = name in EXACT_SOLVERS
        self._options = dict(options)
        self._polish = bool(self._options.pop(POLISH_OPTION, True))

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        has_bounds = bool(np.any(ws.lb > -DAQP_INFINITY) or np.any(ws.ub < DAQP_INFINITY))
        problem = qpsolvers.Problem(
            ws.H.copy(),
            ws.c.copy(),
            ws.G.copy() if ws.n_ineq else None,
            ws.h.copy() if ws.n_ineq else None,
            ws.A.copy() if ws.n_eq else None,
            ws.b.copy() if ws.n_eq else None,
            ws.lb.copy() if has_bounds else None,
            ws.ub.copy() if has_bounds else None,
        )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                solution = qpsolvers.solve_problem(problem, solver=self.name, **self._options)
        except Exception as exc:  # a backend error is a failed tick, not a crash
            raise QPSolveError(f"{self.name}: {exc}", solver=self.name) from exc
        x = None if solution.x is None else np.asarray(solution.x, dtype=np.float64)
        if x is not None and not isfinite(x.dot(x)):
            x = None
        if x is not None and self._polish and not self.exact:
            n = ws.n
            upper = np.zeros(n + ws.n_ineq, dtype=bool)
            lower = np.zeros(n, dtype=bool)
            if solution.found:  # multipliers of a converged solve guide the first guess
                z_box = solution.z_box
                if has_bounds and z_box is not None and np.shape(z_box) == (n,):
                    upper[:n] = np.asarray(z_box) > 0.0
                    lower = np.asarray(z_box) < 0.0
                z = solution.z
                if ws.n_ineq and z is not None and np.shape(z) == (ws.n_ineq,):
                    upper[n:] = np.asarray(z) > 0.0
            # Verified optimal even when the solver gave up or misreported infeasibility
            # (ProxQP does on some feasible, degenerate problems).
            polished = polish_solution(ws, x, upper, lower)
            if polished is not None:
                return polished
        if not solution.found or x is None:
            status = (solution.extras or {}).get("info", None)
            status = getattr(status, "status", status)
            raise QPSolveError(
                f"{self.name}: no solution found" + (f" ({status})" if status else ""),
                solver=self.name,
                status=status,
            )
        return x


def make_backend(solver: str, n: int, user_options: dict[str, Any] | None) -> Backend:
    """Backend for ``solver`` over ``n`` variables, its options checked by a trial solve.

    Raises:
        ValueError: If ``solver`` is not installed, or rejects ``user_options`` (an unknown
            key or a value of the wrong type) on a trivial problem.
    """
    installed = available_solvers()
    if solver not in installed:
        raise InputError(f"unknown QP solver {solver!r}; installed solvers: {installed}")
    options = solver_options(solver, user_options)
    backend: Backend
    try:
        if solver == "daqp":
            backend = DaqpBackend(options)
        elif solver == "quadprog":
            backend = QuadprogBackend(options)
        elif solver == "osqp":
            backend = OsqpBackend(n, options)
        elif solver == "clarabel":
            backend = ClarabelBackend(n, options)
        elif solver == "proxqp" and options.get("backend", "dense") == "dense":
            options.pop("backend", None)
            backend = ProxqpBackend(n, options)
        else:
            backend = QpsolversBackend(solver, options)
        if user_options:
            _trial_solve(backend, n)
    except (TypeError, AttributeError, ValueError) as exc:
        first_line = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise InputError(
            f"solver_options {user_options} rejected by {solver}: {first_line}"
        ) from exc
    return backend


def _trial_solve(backend: Backend, n: int) -> None:
    """Solve ``min 1/2 |x|^2 - x_0`` within ``[-1, 1]`` (a failed solve is not an error:
    options such as an iteration cap of 1 are legitimate)."""
    workspace = QPWorkspace(max(n, 1))
    workspace.H_diagonal[:] = 1.0
    workspace.c[0] = -1.0
    workspace.lb[:] = -1.0
    workspace.ub[:] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            backend.solve(workspace)
        except QPSolveError as error:
            if isinstance(error.__cause__, (TypeError, AttributeError)):
                raise error.__cause__ from error
