"""Exception raised when the differential-IK quadratic program has no usable solution."""

from __future__ import annotations

from ..errors import SolverError

__all__ = ["QPSolveError"]


class QPSolveError(SolverError):
    """The QP of one control tick could not be solved.

    Raised by :meth:`pinkctl.qp.CompiledQP.solve` and :func:`pinkctl.qp.reference_solve_ik` for
    runtime conditions of a tick, never for programming errors (those raise ``ValueError``):
    an infeasible problem (e.g. a lower bound above an upper bound, or a limit that conflicts
    with a barrier), a solver status other than "solved", or a solution containing NaN.

    Attributes:
        reason: Short human-readable reason, also the exception message.
        solver: Name of the solver involved.
        status: Solver-specific status (exit flag, status enum) when there is one.
    """

    reason: str
    solver: str
    status: object

    def __init__(self, reason: str, *, solver: str = "", status: object = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.solver = solver
        self.status = status
