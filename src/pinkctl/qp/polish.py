"""Active-set polishing: turn an approximate QP solution into the exact one.

Interior-point (Clarabel) and first-order (OSQP) solvers stop at a tolerance. Their output
tells which constraints are active at the optimum; solving the equality-constrained QP on
that active set,

.. math::

    \\begin{bmatrix} H & A_a^T \\\\ A_a & 0 \\end{bmatrix}
    \\begin{bmatrix} x \\\\ \\lambda \\end{bmatrix} =
    \\begin{bmatrix} -c \\\\ b_a \\end{bmatrix},

gives the exact minimizer provided the guess was right. The result is accepted only if it
verifies the optimality conditions: every constraint satisfied and every multiplier of an
active inequality of the right sign (both to a small relative tolerance). Otherwise the caller
keeps the solver's own solution.
"""

from __future__ import annotations

from math import isfinite, sqrt

import numpy as np
from scipy.linalg.lapack import dgesv as _dgesv

from .problem import QPWorkspace

__all__ = ["POLISH_TOLERANCE", "polish"]

#: Relative tolerance of the acceptance test (primal feasibility and multiplier signs).
POLISH_TOLERANCE = 1e-9


def polish(
    ws: QPWorkspace,
    upper_active: np.ndarray,
    lower_active: np.ndarray,
) -> np.ndarray | None:
    """Exact minimizer of the workspace's QP on a guessed active set.

    Args:
        ws: Workspace holding ``H, c``, bounds ``lb <= x <= ub``, rows ``G x <= h`` and
            equality rows ``A x = b``.
        upper_active: Boolean mask over ``[x (n), G rows]``: upper side active
            (``x_j = ub_j`` or ``G_i x = h_i``); entries with an infinite bound are ignored.
        lower_active: Boolean mask over ``x (n)``: lower bound active (``x_j = lb_j``).

    Returns:
        The polished ``x`` (shape (n,)), or None when the guess does not verify.
    """
    n = ws.n
    n_eq = ws.n_eq
    lb, ub = ws.lb, ws.ub
    upper_bounds = upper_active[:n] & (ub < np.inf)
    lower_bounds = lower_active & (lb > -np.inf)
    if np.count_nonzero(upper_bounds & lower_bounds):
        return None
    bounds = upper_bounds | lower_bounds
    rows = upper_active[n:]
    n_bounds = int(np.count_nonzero(bounds))
    n_rows = int(np.count_nonzero(rows))
    k = n_bounds + n_rows + n_eq
    if k > n:
        return None
    kkt = np.zeros((n + k, n + k))
    rhs = np.empty(n + k)
    kkt[:n, :n] = ws.H
    np.negative(ws.c, out=rhs[:n])
    kkt[n + np.arange(n_bounds), np.flatnonzero(bounds)] = 1.0
    rhs[n : n + n_bounds] = np.where(upper_bounds, ub, lb)[bounds]
    if n_rows:
        kkt[n + n_bounds : n + n_bounds + n_rows, :n] = ws.G[rows]
        rhs[n + n_bounds : n + n_bounds + n_rows] = ws.h[rows]
    if n_eq:
        kkt[n + k - n_eq :, :n] = ws.A
        rhs[n + k - n_eq :] = ws.b
    kkt[:n, n:] = kkt[n:, :n].T
    _, _, solution, info = _dgesv(kkt, rhs)
    if info != 0 or not isfinite(solution.dot(solution)):
        return None
    x = solution[:n]
    tolerance = POLISH_TOLERANCE * (1.0 + sqrt(rhs.dot(rhs)))
    if np.count_nonzero(x > ub + tolerance) or np.count_nonzero(x < lb - tolerance):
        return None
    if ws.n_ineq and np.count_nonzero(ws.G @ x > ws.h + tolerance):
        return None
    if n_eq and np.count_nonzero(np.abs(ws.A @ x - ws.b) > tolerance):
        return None
    # Stationarity H x + c + A_a^T lambda = 0: an active upper side (a x <= u) needs
    # lambda >= 0, an active lower bound (x >= l, written x = l) needs lambda <= 0.
    multipliers = solution[n:]
    dual_tolerance = POLISH_TOLERANCE * (1.0 + sqrt(multipliers.dot(multipliers)))
    signed = multipliers[: n_bounds + n_rows].copy()
    signed[:n_bounds] *= np.where(lower_bounds, -1.0, 1.0)[bounds]
    if np.count_nonzero(signed < -dual_tolerance):
        return None
    return x
