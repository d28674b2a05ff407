"""DAQP called directly on the workspace buffers."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import QPSolveError
from ..problem import QPWorkspace
from .base import QPSolver

__all__ = ["DaqpSolver"]

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


class DaqpSolver(QPSolver):
    """DAQP (dual active set) called directly on the workspace buffers, on every problem.

    Simple bounds are DAQP simple bounds, rows of ``G`` general rows, equality rows sense 5.
    Cycling or stalling (exit flags -2, -4: a nearly singular Hessian) is retried once with a
    Tikhonov term of 1e-9 times the Hessian's scale.
    """

    name = "daqp"
    exact = True

    def __init__(self, options: dict[str, Any]) -> None:
        import daqp  # noqa: PLC0415

        super().__init__(options)
        self._solve = daqp.solve

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        rest = (ws.c, ws.daqp_matrix, ws.daqp_upper, ws.daqp_lower, ws.daqp_sense)
        x, _, exitflag, _ = self._solve(ws.H, *rest, **self._options)
        if exitflag in _DAQP_RETRY_FLAGS:
            # cycling or stalling on a nearly singular Hessian (e.g. no posture task and a
            # target out of reach): solve again with a regularised Hessian
            scale = _DAQP_REGULARIZATION * (1.0 + float(np.max(np.abs(ws.H_diagonal))))
            x, _, exitflag, _ = self._solve(ws.H + scale * np.eye(ws.n), *rest, **self._options)
        if exitflag < 1:
            reason = _DAQP_EXIT_FLAGS.get(int(exitflag), f"exit flag {exitflag}")
            raise QPSolveError(f"daqp: {reason}", solver=self.name, status=int(exitflag))
        return x
