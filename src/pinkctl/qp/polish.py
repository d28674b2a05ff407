"""Active-set polishing: turn an approximate QP solution into the exact one.

Interior-point (Clarabel) and first-order (OSQP, ProxQP) solvers stop at a tolerance on
residuals and duality gap; along the flat directions of an IK objective (small posture
weights) the solution itself can then be off by ~1e-4 even at tight tolerances. Their output
does tell which constraints are active at the optimum, and solving the equality-constrained
QP on that active set ``a``,

.. math::

    \\begin{bmatrix} H & A_a^T \\\\ A_a & 0 \\end{bmatrix}
    \\begin{bmatrix} x \\\\ \\lambda \\end{bmatrix} =
    \\begin{bmatrix} -c \\\\ b_a \\end{bmatrix},

gives the exact minimizer when the guess is right. :func:`polish_solution` starts from the
solver's guess (its multipliers) and from the constraints nearly active at its solution, and
repairs a guess a few times like a primal-dual active-set method (dropping active constraints
whose multiplier has the wrong sign, adding the most violated one). A point is returned only
if it satisfies the KKT conditions (stationarity by construction; feasibility and multiplier
signs to a 1e-9 relative tolerance), so a wrong guess costs time, never accuracy; otherwise
the caller keeps the solver's own solution.

Constraints are those of a :class:`~pinkctl.qp.problem.QPWorkspace`: simple bounds
``lb <= x <= ub``, rows ``G x <= h`` and equality rows ``A x = b`` (always active). Masks
"upper" cover ``[x (n), G rows]`` (upper bound or row active), masks "lower" cover ``x``.
"""

from __future__ import annotations

from math import isfinite, sqrt

import numpy as np
from scipy.linalg.lapack import dgesv as _dgesv

from .problem import QPWorkspace

__all__ = ["MAX_REPAIRS", "NEAR_ACTIVE_DISTANCE", "POLISH_TOLERANCE", "polish_solution"]

#: Relative tolerance of the acceptance test (primal feasibility and multiplier signs).
POLISH_TOLERANCE = 1e-9

#: Relative distance to its bound under which a constraint joins a guess.
NEAR_ACTIVE_DISTANCE = 1e-6

#: Active-set repairs tried per guess.
MAX_REPAIRS = 6


def _kkt_step(
    ws: QPWorkspace, upper: np.ndarray, lower: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The minimiser on the active set ``(upper, lower)`` (the KKT system; equality rows
    always active), and the active constraints whose multiplier is negative ``(x,
    wrong_upper, wrong_lower)``; None when the system has no solution.

    Multipliers are scattered over the masks (zero where inactive) and signed so that a
    valid active constraint has a non-negative one. Dependent active constraints (a row
    duplicating a bound) make the KKT matrix singular; ``x`` is then still unique if ``H`` is
    positive definite on their null space, and least squares splits the multipliers.
    """
    n = ws.n
    n_eq = ws.n_eq
    bounds = upper[:n] | lower
    rows = upper[n:]
    bound_index = np.flatnonzero(bounds)
    n_bounds = bound_index.size
    n_rows = int(np.count_nonzero(rows))
    k = n_bounds + n_rows + n_eq
    kkt = np.zeros((n + k, n + k))
    rhs = np.empty(n + k)
    kkt[:n, :n] = ws.H
    np.negative(ws.c, out=rhs[:n])
    kkt[n + np.arange(n_bounds), bound_index] = 1.0
    rhs[n : n + n_bounds] = np.where(upper[:n], ws.ub, ws.lb)[bound_index]
    if n_rows:
        kkt[n + n_bounds : n + n_bounds + n_rows, :n] = ws.G[rows]
        rhs[n + n_bounds : n + n_bounds + n_rows] = ws.h[rows]
    if n_eq:
        kkt[n + k - n_eq :, :n] = ws.A
        rhs[n + k - n_eq :] = ws.b
    kkt[:n, n:] = kkt[n:, :n].T
    _, _, solution, info = _dgesv(kkt, rhs)
    if info != 0:
        solution = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
        residual = kkt @ solution - rhs
        if not residual.dot(residual) <= (POLISH_TOLERANCE**2) * (1.0 + rhs.dot(rhs)):
            return None
    x = solution[:n]
    if not isfinite(solution.dot(solution)) or (
        n_eq and np.count_nonzero(np.abs(ws.A @ x - ws.b) > tolerance_of(x))
    ):
        return None  # no finite solution, or one missing the equality rows (least squares)
    multipliers = solution[n:]
    lambda_upper = np.zeros(n + ws.n_ineq)
    lambda_lower = np.zeros(n)
    is_upper = upper[bound_index]
    lambda_upper[bound_index[is_upper]] = multipliers[:n_bounds][is_upper]
    lambda_lower[bound_index[~is_upper]] = -multipliers[:n_bounds][~is_upper]
    lambda_upper[n:][rows] = multipliers[n_bounds : n_bounds + n_rows]
    dual_tolerance = POLISH_TOLERANCE * (
        1.0 + sqrt(lambda_upper.dot(lambda_upper) + lambda_lower.dot(lambda_lower))
    )
    wrong_upper = upper & (lambda_upper < -dual_tolerance)
    return x, wrong_upper, lower & (lambda_lower < -dual_tolerance)


def _polish(
    ws: QPWorkspace, upper: np.ndarray, lower: np.ndarray, repairs: int
) -> np.ndarray | None:
    """Solve on the active set ``(upper, lower)``, repairing it up to ``repairs`` times: drop
    the active constraints whose multiplier has the wrong sign, else add the most violated
    one, until the solution is feasible and optimal (KKT conditions to
    :data:`POLISH_TOLERANCE`)."""
    for _ in range(repairs + 1):
        solved = _kkt_step(ws, upper, lower)
        if solved is None:
            return None
        x, wrong_upper, wrong_lower = solved
        if np.count_nonzero(wrong_upper) or np.count_nonzero(wrong_lower):
            upper = upper & ~wrong_upper  # the multiplier has the wrong sign: not active
            lower = lower & ~wrong_lower
            continue
        tolerance = tolerance_of(x)
        row_gaps = (ws.h - ws.G @ x) if ws.n_ineq else None
        if not _violates(ws, x, tolerance, row_gaps):
            return x
        upper = upper.copy()
        lower = lower.copy()
        if not _add_most_violated(ws, x, upper, lower, tolerance, row_gaps):
            return None  # violations only on constraints already active: numerical trouble
    return None


def _violates(
    ws: QPWorkspace, x: np.ndarray, tolerance: float, row_gaps: np.ndarray | None
) -> bool:
    """Whether ``x`` leaves its bounds, or its rows (``row_gaps = h - G x``), by more than
    ``tolerance``."""
    if np.count_nonzero(x > ws.ub + tolerance) or np.count_nonzero(x < ws.lb - tolerance):
        return True
    return row_gaps is not None and bool(np.count_nonzero(row_gaps < -tolerance))


def _add_most_violated(
    ws: QPWorkspace,
    x: np.ndarray,
    upper: np.ndarray,
    lower: np.ndarray,
    tolerance: float,
    row_gaps: np.ndarray | None,
) -> bool:
    """Add the constraint ``x`` violates most to the guess ``(upper, lower)``, in place;
    False when every violated constraint is already active."""
    n = ws.n
    upper_gap, lower_gap = _gaps(ws, x, row_gaps)
    violated_upper = (upper_gap < -tolerance) & ~upper
    violated_lower = (lower_gap < -tolerance) & ~lower
    worst_upper = int(np.argmin(np.where(violated_upper, upper_gap, np.inf)))
    worst_lower = int(np.argmin(np.where(violated_lower, lower_gap, np.inf)))
    if violated_lower[worst_lower] and (
        not violated_upper[worst_upper] or lower_gap[worst_lower] < upper_gap[worst_upper]
    ):
        lower[worst_lower] = True
        upper[worst_lower] = False
    elif violated_upper[worst_upper]:
        upper[worst_upper] = True
        if worst_upper < n:
            lower[worst_upper] = False
    else:
        return False
    return True


def _gaps(
    ws: QPWorkspace, x: np.ndarray, row_gaps: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """How far ``x`` is inside each constraint: ``([ub - x, row_gaps], x - lb)``, with
    ``row_gaps = h - G x`` (None without rows)."""
    n = ws.n
    upper_gap = np.empty(n + ws.n_ineq)
    np.subtract(ws.ub, x, out=upper_gap[:n])
    if row_gaps is not None:
        upper_gap[n:] = row_gaps
    return upper_gap, x - ws.lb


def tolerance_of(x: np.ndarray) -> float:
    """Primal acceptance tolerance at ``x``."""
    return POLISH_TOLERANCE * (1.0 + sqrt(x.dot(x)))


def polish_solution(
    ws: QPWorkspace,
    x: np.ndarray,
    upper_hint: np.ndarray | None = None,
    lower_hint: np.ndarray | None = None,
) -> np.ndarray | None:
    """Exact minimizer of the workspace's QP from an approximate one, or None.

    Guesses tried in order (each repaired up to :data:`MAX_REPAIRS` times): the solver's
    hint; the constraints within :data:`NEAR_ACTIVE_DISTANCE` (relative) of their bound at
    ``x``; both together.

    Args:
        ws: The problem.
        x: The solver's approximate minimizer.
        upper_hint: Optional solver guess of the active upper sides over ``[x, G rows]``
            (e.g. from its multipliers).
        lower_hint: Optional solver guess of the active lower bounds over ``x``.
    """
    n = ws.n
    finite_upper = ws.ub < np.inf
    finite_lower = ws.lb > -np.inf
    if upper_hint is not None and lower_hint is not None:
        upper_hint = upper_hint.copy()
        upper_hint[:n] &= finite_upper
        lower_hint = lower_hint & finite_lower & ~upper_hint[:n]
        polished = _polish(ws, upper_hint, lower_hint, MAX_REPAIRS)
        if polished is not None:
            return polished
    near = NEAR_ACTIVE_DISTANCE * (1.0 + sqrt(x.dot(x)))
    upper_gap, lower_gap = _gaps(ws, x, (ws.h - ws.G @ x) if ws.n_ineq else None)
    near_upper = upper_gap < near
    near_upper[:n] &= finite_upper
    near_lower = (lower_gap < near) & finite_lower
    near_lower &= ~(near_upper[:n] & (upper_gap[:n] <= lower_gap))
    near_upper[:n] &= ~near_lower
    guesses = [(near_upper, near_lower)]
    if upper_hint is not None and lower_hint is not None:
        guesses.append((near_upper | upper_hint, near_lower | lower_hint))
    for upper, lower in guesses:
        lower = lower & ~upper[:n]
        polished = _polish(ws, upper, lower, MAX_REPAIRS)
        if polished is not None:
            return polished
    return None
