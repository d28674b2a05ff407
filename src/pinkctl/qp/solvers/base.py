"""The solver interface, the solvers' default options and the option helpers."""

from __future__ import annotations

from collections.abc import Callable
from math import isfinite
from typing import Any

import numpy as np
import qpsolvers
from qpsolvers.exceptions import QPError

from ..errors import QPSolveError
from ..polish import polish_solution
from ..problem import QPWorkspace

__all__ = [
    "BOX_SOLVER",
    "DEFAULT_SOLVER",
    "DEFAULT_SOLVER_OPTIONS",
    "EXACT_SOLVERS",
    "SOLVER_ERRORS",
    "POLISH_OPTION",
    "QPSolver",
    "available_solvers",
    "missing_solver_message",
    "qpsolvers_options",
    "solver_options",
    "upper_triangle_csc_indices",
]

#: pinkctl's own solver: the exact box-constrained QP of the native kernel for problems whose
#: only constraints are bounds, DAQP for every other problem (see :mod:`pinkctl.qp.solvers.box`).
BOX_SOLVER = "box"

#: The solver of a compiled QP and of the controller when none is named.
DEFAULT_SOLVER = BOX_SOLVER

#: Solvers whose solution is exact up to rounding (Clarabel: once polished).
EXACT_SOLVERS = frozenset({BOX_SOLVER, "daqp", "quadprog", "clarabel"})

#: What solver libraries raise for a problem they cannot solve (qpsolvers' own errors, and the
#: ``ValueError`` / ``ArithmeticError`` of numerical failures, e.g. quadprog's "constraints are
#: inconsistent"). A solver turns them into :class:`~pinkctl.qp.QPSolveError`; any other
#: exception is a bug and propagates.
SOLVER_ERRORS: tuple[type[Exception], ...] = (QPError, ValueError, ArithmeticError)

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


def available_solvers() -> list[str]:
    """QP solvers usable here: ``"box"`` (when DAQP, its fallback, is installed) and those
    qpsolvers finds installed."""
    installed = set(qpsolvers.available_solvers)
    if "daqp" in installed:
        installed.add(BOX_SOLVER)
    return sorted(installed)


#: Solvers that pinkctl installs only with one of its extras: solver -> extra.
SOLVER_EXTRAS = {"quadprog": "solvers", "proxqp": "solvers"}


def missing_solver_message(solver: object, name: str = "solver") -> str:
    """Why ``solver`` (the argument ``name``) cannot be used here: not installed (with the
    extra that brings it) or not a QP solver at all, and which ones are installed."""
    installed = ", ".join(available_solvers())
    extra = SOLVER_EXTRAS.get(solver) if isinstance(solver, str) else None
    if extra is not None:
        return (
            f"{name} {solver!r} is not installed: pip install 'pinkctl[{extra}]' "
            f"(installed solvers: {installed})"
        )
    return f"{name} {solver!r} is not an installed QP solver; installed solvers: {installed}"


#: Option handled by our solver classes themselves, never passed to a solver: our active-set polish
#: (OSQP's native ``polish`` is always off: it prints to stdout).
POLISH_OPTION = "polish"


def solver_options(solver: str, user_options: dict[str, Any] | None) -> dict[str, Any]:
    """Default options of ``solver`` updated with ``user_options``."""
    options = dict(DEFAULT_SOLVER_OPTIONS.get(solver, {}))
    if user_options:
        options.update(user_options)
    return options


def qpsolvers_options(solver: str, user_options: dict[str, Any] | None) -> dict[str, Any]:
    """:func:`solver_options` without the keys our solver classes handle (for
    ``qpsolvers.solve_problem``)."""
    options = solver_options(solver, user_options)
    options.pop(POLISH_OPTION, None)
    return options


class QPSolver:
    """Base class: solves the problem held by a workspace.

    Args:
        options: The solver's options; :data:`POLISH_OPTION` (default True) switches our
            active-set polish of an inexact solver's solutions (:mod:`pinkctl.qp.polish`).

    Attributes:
        name: Solver name.
        exact: Whether solutions are exact up to rounding (see module docstring).
    """

    name: str = ""
    exact: bool = False

    def __init__(self, options: dict[str, Any]) -> None:
        self._options = dict(options)
        self._polish = bool(self._options.pop(POLISH_OPTION, True)) and not self.exact

    @property
    def last_name(self) -> str:
        """The solver that produced the latest solution."""
        return self.name

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        """Return the minimizer ``x`` (shape (n,)) or raise :class:`QPSolveError`."""
        raise NotImplementedError

    def _polished(
        self,
        ws: QPWorkspace,
        x: np.ndarray,
        guess: Callable[[], tuple[np.ndarray, np.ndarray]],
        failure: QPSolveError | None = None,
    ) -> np.ndarray:
        """``x`` polished (verified optimal even when the solver stopped early) from the
        active set ``guess()`` when the polish is on and verifies; else ``x``, or ``failure``
        raised (the solver did not finish)."""
        if self._polish and isfinite(x.dot(x)):
            polished = polish_solution(ws, x, *guess())
            if polished is not None:
                return polished
        if failure is not None:
            raise failure
        return x


def upper_triangle_csc_indices(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSC structure of a dense upper triangle, and where each entry sits in ``H.ravel()``."""
    columns, rows = np.tril_indices(n)  # column by column, rows 0..j: CSC order
    indptr = np.concatenate(([0], np.cumsum(np.arange(1, n + 1))))
    return indptr.astype(np.int64), rows.astype(np.int64), (rows * n + columns).astype(np.intp)
