"""QP backends: solve a :class:`~pinkctl.qp.problem.QPWorkspace` with one solver.

Backends and their accuracy:

- ``daqp`` (default): dual active-set, called directly (``daqp.solve``) on the workspace's
  DAQP-shaped buffers; simple bounds are DAQP simple bounds, equality rows use sense 5.
  **Exact** (active-set: the solution is exact up to floating-point rounding).
- ``quadprog``: Goldfarb-Idnani dual active-set, called directly. **Exact**; needs a strictly
  positive-definite Hessian (raises :class:`QPSolveError` otherwise).
- ``clarabel``: interior point, one persistent ``clarabel.DefaultSolver`` updated in place
  (re-created only when the constraint pattern changes: number of rows, which bounds are
  finite). Clarabel's default tolerances (gap and feasibility 1e-8) make it exact for IK
  purposes (solutions within about 1e-7 of the active-set ones).
- ``osqp``: ADMM first-order, one persistent ``osqp.OSQP`` object set up once with a fixed
  sparsity pattern (dense upper-triangular ``P``, ``A = [I; G; A_eq]``) and updated in place
  (``Px``, ``Ax``, ``q``, ``l``, ``u``); set up again only when the row count changes.
  Defaults: ``eps_abs = eps_rel = 1e-9``, ``polish = True`` (the polished solution solves the
  active set's KKT system exactly), ``max_iter = 10000``; warm-started from the previous
  tick. *Approximate*: expect about 1e-6 rad/s on velocities.
- ``proxqp`` and any other solver known to qpsolvers: through ``qpsolvers.solve_problem``.
  ProxQP defaults: ``eps_abs = 1e-9``, ``eps_rel = 0`` (qpsolvers' default 1e-3 makes ProxQP
  report feasible IK problems as primal infeasible). *Approximate*.

User ``solver_options`` override these defaults key by key.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import qpsolvers

from .errors import QPSolveError
from .polish import polish
from .problem import DAQP_INFINITY, QPWorkspace

__all__ = [
    "DEFAULT_SOLVER_OPTIONS",
    "EXACT_SOLVERS",
    "Backend",
    "available_solvers",
    "make_backend",
]

#: Solvers whose solution is exact up to rounding (or, for clarabel, to about 1e-8).
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
    "proxqp": {"eps_abs": 1e-9, "eps_rel": 0.0},
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


def available_solvers() -> list[str]:
    """QP solvers usable here (those qpsolvers finds installed)."""
    return sorted(qpsolvers.available_solvers)


#: Options handled by our backends themselves, not by the solver (stripped for qpsolvers).
#: ("polish" means our active-set polish; OSQP's native one is always turned off.)
_BACKEND_ONLY_OPTIONS: dict[str, tuple[str, ...]] = {"clarabel": ("polish",), "osqp": ("polish",)}


def solver_options(solver: str, user_options: dict[str, Any] | None) -> dict[str, Any]:
    """Default options of ``solver`` updated with ``user_options``."""
    options = dict(DEFAULT_SOLVER_OPTIONS.get(solver, {}))
    if user_options:
        options.update(user_options)
    return options


def qpsolvers_options(solver: str, user_options: dict[str, Any] | None) -> dict[str, Any]:
    """:func:`solver_options` without the backend-only keys (for ``qpsolvers.solve_problem``)."""
    options = solver_options(solver, user_options)
    for key in _BACKEND_ONLY_OPTIONS.get(solver, ()):
        options.pop(key, None)
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

    def solve(self, ws: QPWorkspace) -> np.ndarray:
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
        if exitflag < 1:
            reason = _DAQP_EXIT_FLAGS.get(int(exitflag), f"exit flag {exitflag}")
            raise QPSolveError(f"daqp: {reason}", solver=self.name, status=int(exitflag))
        return x


class QuadprogBackend(Backend):
    """quadprog's ``solve_qp`` called directly (constraints ``C^T x >= b``)."""

    name = "quadprog"
    exact = True

    def __init__(self, options: dict[str, Any]) -> None:
        import quadprog  # noqa: PLC0415

        self._solve = quadprog.solve_qp
        self._options = dict(options)

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        n = ws.n
        finite_lower = np.flatnonzero(ws.lb > -DAQP_INFINITY)
        finite_upper = np.flatnonzero(ws.ub < DAQP_INFINITY)
        n_eq = ws.n_eq
        columns = n_eq + finite_lower.size + finite_upper.size + ws.n_ineq
        C = np.zeros((n, columns))
        b = np.empty(columns)
        C[:, :n_eq] = ws.A.T
        b[:n_eq] = ws.b
        offset = n_eq
        C[finite_lower, offset + np.arange(finite_lower.size)] = 1.0
        b[offset : offset + finite_lower.size] = ws.lb[finite_lower]
        offset += finite_lower.size
        C[finite_upper, offset + np.arange(finite_upper.size)] = -1.0
        b[offset : offset + finite_upper.size] = -ws.ub[finite_upper]
        offset += finite_upper.size
        C[:, offset:] = -ws.G.T
        b[offset:] = -ws.h
        try:
            x = self._solve(ws.H, -ws.c, C, b, n_eq, **self._options)[0]
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
        self._polish = bool(self._options.pop("polish", True))
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
        self._solved = self._osqp.SolverStatus.OSQP_SOLVED

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
        if info.status_val != self._solved:
            raise QPSolveError(f"osqp: {info.status}", solver=self.name, status=info.status)
        solution = core.solution
        x = np.array(solution.x, dtype=np.float64)
        if self._polish:
            # OSQP's rule: row i is active on its upper side when u_i - a_i x < y_i, on its
            # lower side when a_i x - l_i < -y_i (rows: [I; G; A_eq]).
            y = np.asarray(solution.y)
            if ws.n_ineq:
                ax = np.concatenate((x, ws.G @ x))
            else:
                ax = x
            upper = (ws.daqp_upper[: n + ws.n_ineq] - ax) < y[: n + ws.n_ineq]
            lower = (x - ws.lb) < -y[:n]
            polished = polish(ws, upper, lower)
            if polished is not None:
                return polished
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
        self._polish = bool(self._options.pop("polish", True))
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
        finite_upper = np.flatnonzero(ws.ub < DAQP_INFINITY)
        finite_lower = np.flatnonzero(ws.lb > -DAQP_INFINITY)
        key = (ws.n_eq, ws.n_ineq, finite_upper.tobytes(), finite_lower.tobytes())
        if self._solver is None or key != self._key or not self._updatable:
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
            polished = polish(ws, upper, lower)
            if polished is not None:
                return polished
        return x


class QpsolversBackend(Backend):
    """Any solver through ``qpsolvers.solve_problem`` (infinite bounds passed as such)."""

    exact = False

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        self.name = name
        self.exact = name in EXACT_SOLVERS
        self._options = {
            key: value
            for key, value in options.items()
            if key not in _BACKEND_ONLY_OPTIONS.get(name, ())
        }

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
        if not solution.found or solution.x is None:
            status = (solution.extras or {}).get("info", None)
            status = getattr(status, "status", status)
            raise QPSolveError(
                f"{self.name}: no solution found" + (f" ({status})" if status else ""),
                solver=self.name,
                status=status,
            )
        return np.asarray(solution.x, dtype=np.float64)


def make_backend(solver: str, n: int, user_options: dict[str, Any] | None) -> Backend:
    """Backend for ``solver`` over ``n`` variables.

    Raises:
        ValueError: If ``solver`` is not installed.
    """
    installed = available_solvers()
    if solver not in installed:
        raise ValueError(f"unknown QP solver {solver!r}; installed solvers: {installed}")
    options = solver_options(solver, user_options)
    if solver == "daqp":
        return DaqpBackend(options)
    if solver == "quadprog":
        return QuadprogBackend(options)
    if solver == "osqp":
        return OsqpBackend(n, options)
    if solver == "clarabel":
        return ClarabelBackend(n, options)
    return QpsolversBackend(solver, options)
