"""The ``"box"`` solver: pinkctl's exact box-constrained QP, DAQP for every other problem.

Most control ticks solve a QP whose only constraints are bounds, ``lb <= x <= ub`` (pink's
configuration and velocity limits, the motion shaper's velocity box): for those, DAQP's Python
call costs more than its arithmetic. The native kernel's box QP (:mod:`pinkctl.qp.box_qp`, an
exact primal-dual active-set method warm-started from the previous tick's active set) solves
them; a problem with inequality or equality rows (barriers, extra limits, collision rows, a
cascade's levels), or one the box QP hands back (a Hessian too close to singular, an empty box,
cycling), or any problem when the native kernel is not built, is solved by DAQP. Both are
exact active-set methods: their minimisers agree to rounding (``tests/test_native.py``).
:attr:`BoxSolver.last_name` says which one ran (``"box"`` or ``"daqp"``).

``solver_options`` of ``"box"`` are DAQP's, used where DAQP solves.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..box_qp import NativeBoxQP, native_available
from ..problem import QPWorkspace
from .base import BOX_SOLVER, QPSolver
from .daqp import DaqpSolver

__all__ = ["BoxSolver"]


class BoxSolver(QPSolver):
    """The box QP on problems without rows, DAQP otherwise (module docstring).

    Attributes:
        native: The native box QP, or None when the kernel is not available.
        daqp: The DAQP solver of every other problem.
    """

    name = BOX_SOLVER
    exact = True

    def __init__(self, options: dict[str, Any]) -> None:
        self.daqp = DaqpSolver(options)
        self.native = NativeBoxQP() if native_available()[0] else None
        self._last = BOX_SOLVER

    @property
    def last_name(self) -> str:
        """``"box"`` or ``"daqp"``: which solver produced the latest solution."""
        return self._last

    def solve(self, ws: QPWorkspace) -> np.ndarray:
        native = self.native
        if native is not None and ws.n_ineq == 0 and ws.n_eq == 0:
            x = native.solve(ws)
            if x is not None:
                self._last = BOX_SOLVER
                return x
        self._last = self.daqp.name
        return self.daqp.solve(ws)
