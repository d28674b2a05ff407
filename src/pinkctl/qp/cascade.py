"""Strict task priorities: a lexicographic cascade of QPs, and null-space projection.

Levels ``1..K`` share the decision variables ``x`` (``n`` of them) and the inequality
constraints ``G x <= h, lb <= x <= ub``; level ``k`` has the convex quadratic objective

.. math::

    f_k(x) = \\tfrac12 x^T H_k x + c_k^T x
           = \\tfrac12 \\| J_k x - r_k \\|^2 + \\text{const},
    \\qquad H_k = J_k^T J_k,\\; c_k = -J_k^T r_k

(every pink task and every IK-group level is of this least-squares form).

**Cascade** (:func:`lexicographic_solve`, exact). ``x_1`` minimises ``f_1`` under the
constraints; ``x_k`` minimises ``f_k`` under the constraints *and*
``A_{<k} x = A_{<k} x_{k-1}``, where the rows of ``A_{<k}`` are an orthonormal basis of the row
space of ``H_1, ..., H_{k-1}`` (grown level by level by a pivoted Cholesky factorisation of
the part of ``H_k`` outside it). Every minimiser of ``f_j`` over a convex set has the same image
``J_j x`` (``f_j`` is strictly convex in ``J_j x``), and ``c_j^T x = -r_j^T J_j x`` is then fixed
too, so the equality keeps ``f_j`` exactly at its optimum: level ``k`` never increases a level
above it, and the inequality constraints hold at every level. Each level's Hessian gets the
Tikhonov term ``damping * I`` (DAQP needs it positive definite: at least
:data:`MIN_LEVEL_DAMPING`); the rows of
``A_{<k}`` are taken from the undamped ``H_j``, so the damping picks the minimum-norm optimum
of a level without taking freedom away from the levels below it.

**Null-space projection** (:func:`nullspace_solve`, Siciliano & Slotine 1991), the cheaper
alternative: no QP, each level solved by a pseudo-inverse inside the null space of the levels
above it,

.. math::

    x \\leftarrow x + P (J_k P)^{+} (r_k - J_k x), \\qquad
    P \\leftarrow P - (J_k P)^{+} (J_k P), \\qquad x_0 = 0,\\; P_0 = I,

then ``x`` is clipped into ``[lb, ub]``. It equals the cascade when no bound is active (the clip
changes nothing), no ``G`` row is present, and the pseudo-inverses are undamped; a clipped
coordinate breaks the priorities, and damped pseudo-inverses (``dls``) trade the higher
level's accuracy near singularities for bounded steps.

Rank decisions use singular values relative to the largest one (``rank_tolerance``):
directions weaker than that are treated as free.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.linalg.lapack import dpotrf, dpstrf, dsyev, dtrtri

from ..errors import InputError
from .errors import QPSolveError
from .problem import QPProblem
from .solvers.generic import qpsolvers_problem, qpsolvers_solution

__all__ = [
    "MIN_LEVEL_DAMPING",
    "RANK_TOLERANCE",
    "CascadeSolution",
    "box_constraints",
    "least_squares_form",
    "lexicographic_solve",
    "nullspace_solve",
    "qpsolvers_solve",
]

#: Default relative singular-value threshold of the rank decisions.
RANK_TOLERANCE = 1e-6

#: Smallest Tikhonov term of a level's Hessian: DAQP reports rank-deficient levels (a 6-row
#: frame task over 7 joints) as infeasible about half the time with 1e-12, never with 1e-10.
MIN_LEVEL_DAMPING = 1e-9

#: A level's least-squares solve for the null-space method: ``(J, r) -> z`` approximately
#: minimising ``||J z - r||`` (the undamped pseudo-inverse when none is given).
LevelStep = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class CascadeSolution:
    """The result of a prioritised solve.

    Attributes:
        x: The solution, shape (n,).
        levels: The solution after each level (``levels[-1]`` is ``x`` before any final clip).
        failed_level: Index of the first level whose QP had no solution (its solution and the
            following ones are then those of the level above), or None.
    """

    x: np.ndarray
    levels: tuple[np.ndarray, ...]
    failed_level: int | None = None


def _range(H: np.ndarray, rank_tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """Square roots of the kept eigenvalues of ``H`` and their orthonormal eigenvectors (rows);
    eigenvalues below ``rank_tolerance² λ_max`` are dropped."""
    w, U, _ = dsyev(H)  # LAPACK directly: half the time of numpy.linalg.eigh on 7 x 7
    top = float(w[-1]) if w.size else 0.0
    keep = w > (rank_tolerance * rank_tolerance) * top if top > 0.0 else np.zeros(w.size, bool)
    return np.sqrt(w[keep]), U[:, keep].T


def _extend_basis(basis: np.ndarray, H: np.ndarray, rank_tolerance: float) -> np.ndarray:
    """Orthonormal rows spanning the rows of ``basis`` (orthonormal) and the range of ``H``.

    The part of ``H`` outside ``basis`` (``P H P``, ``P = I - basis^T basis``) is factored by
    LAPACK's pivoted Cholesky, pivots below ``rank_tolerance² max(diag H)`` dropped, and the
    new rows orthonormalised by a Cholesky QR: a few microseconds on 35 x 35 where an
    eigen-decomposition and an SVD of the stacked rows took half a millisecond.
    """
    top = float(np.max(np.diagonal(H))) if H.size else 0.0
    if top <= 0.0:
        return basis
    if basis.shape[0]:
        HB = H @ basis.T
        BHB = basis @ HB
        H = H - HB @ basis - basis.T @ HB.T + basis.T @ BHB @ basis
    factor, pivots, rank, _ = dpstrf(H, lower=1, tol=rank_tolerance * rank_tolerance * top)
    if rank == 0:
        return basis
    rows = np.zeros((rank, H.shape[0]))
    rows[:, pivots - 1] = np.tril(factor)[:, :rank].T
    if basis.shape[0]:
        rows -= (rows @ basis.T) @ basis
    gram_factor = dpotrf(rows @ rows.T, lower=1, clean=1)[0]
    new = dtrtri(gram_factor, lower=1)[0] @ rows
    return np.vstack([basis, new]) if basis.shape[0] else new


def box_constraints(lb: npt.ArrayLike, ub: npt.ArrayLike) -> QPProblem:
    """The constraints ``lb <= x <= ub`` alone, for :func:`lexicographic_solve`."""
    lower = np.asarray(lb, dtype=np.float64)
    n = lower.size
    empty = np.zeros((0, n))
    return QPProblem(
        H=np.zeros((n, n)),
        c=np.zeros(n),
        G=empty,
        h=empty[:, 0],
        A=empty,
        b=empty[:, 0],
        lb=lower,
        ub=np.asarray(ub, dtype=np.float64),
    )


def least_squares_form(
    H: np.ndarray, c: np.ndarray, *, rank_tolerance: float = RANK_TOLERANCE
) -> tuple[np.ndarray, np.ndarray]:
    """``(J, r)`` with ``J^T J = H`` and ``-J^T r`` = the part of ``c`` in the range of ``H``.

    ``J = Λ^{1/2} U^T`` from the eigen-decomposition ``H = U Λ U^T`` (eigenvalues below
    ``rank_tolerance² λ_max`` dropped), so ``½ x^T H x + c^T x = ½ ||J x - r||² + const``.
    """
    s, basis = _range(H, rank_tolerance)
    return s[:, None] * basis, -(basis @ c) / s


def _check_levels(levels: Sequence[tuple[np.ndarray, np.ndarray]], n: int) -> None:
    if not levels:
        raise InputError("levels: at least one level is needed")
    for k, (first, second) in enumerate(levels):
        if first.ndim != 2 or first.shape[1] != n or second.shape != (first.shape[0],):
            raise InputError(
                f"levels[{k}]: expected a matrix with {n} columns and a matching vector, got "
                f"shapes {first.shape} and {second.shape}"
            )


def lexicographic_solve(
    objectives: Sequence[tuple[np.ndarray, np.ndarray]],
    constraints: QPProblem,
    solve: Callable[[QPProblem], np.ndarray],
    *,
    damping: float | Sequence[float],
    rank_tolerance: float = RANK_TOLERANCE,
) -> CascadeSolution:
    """The cascade (module docstring): level ``k`` minimised without increasing levels < k.

    Args:
        objectives: ``(H_k, c_k)`` per level, highest priority first; ``H_k`` (n, n) positive
            semi-definite, ``c_k`` (n,) in its range.
        constraints: The shared constraints ``G, h, lb, ub`` (its ``H, c, A, b`` are ignored).
        solve: A QP solver for one level's problem (e.g. ``SolverChain.solve_problem``);
            raises :class:`~pinkctl.qp.QPSolveError` when it finds no solution.
        damping: Tikhonov term added to every level's Hessian, or one per level (at least
            :data:`MIN_LEVEL_DAMPING`).
        rank_tolerance: Relative singular-value threshold of the equality rows.

    Returns:
        The solution and the one of every level. A level below the first whose QP fails
        (e.g. a degenerate active set) keeps the solution of the level above it
        (``failed_level`` says which), so the priorities still hold.

    Raises:
        QPSolveError: When the first level has no solution (infeasible constraints).
        ValueError: Objectives of the wrong shape.
    """
    n = constraints.n
    _check_levels([(H, c) for H, c in objectives], n)
    dampings = (
        [float(damping)] * len(objectives)
        if isinstance(damping, (int, float))
        else [float(d) for d in damping]
    )
    if len(dampings) != len(objectives):
        raise InputError(f"damping: expected one value per level ({len(objectives)})")
    identity = np.eye(n)
    empty = np.zeros((0, n))
    A = empty
    x: np.ndarray | None = None
    solutions: list[np.ndarray] = []
    failed: int | None = None
    for k, (H, c) in enumerate(objectives):
        if x is not None and (failed is not None or A.shape[0] == n):
            solutions.append(x)  # nothing left to optimise (or a level above failed)
            continue
        problem = QPProblem(
            H=H + max(dampings[k], MIN_LEVEL_DAMPING) * identity,
            c=c,
            G=constraints.G,
            h=constraints.h,
            A=A,
            b=empty[:, 0] if x is None else A @ x,
            lb=constraints.lb,
            ub=constraints.ub,
        )
        try:
            x = solve(problem)
        except QPSolveError:
            if x is None:
                raise
            failed = k
        assert x is not None
        solutions.append(x)
        if k + 1 < len(objectives):
            A = _extend_basis(A, H, rank_tolerance)  # orthonormal: scale-free
    assert x is not None
    return CascadeSolution(x=x, levels=tuple(solutions), failed_level=failed)


def qpsolvers_solve(problem: QPProblem, solver: str = "daqp") -> np.ndarray:
    """Solve one level's problem with ``qpsolvers`` (for :func:`lexicographic_solve` callers
    without a :class:`~pinkctl.qp.solving.SolverChain`).

    Raises:
        QPSolveError: No (finite) solution.
    """
    rows, equalities = problem.h.shape[0], problem.b.shape[0]
    return qpsolvers_solution(qpsolvers_problem(problem, rows, equalities, True), solver, {})


def nullspace_solve(
    levels: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    lb: np.ndarray | None = None,
    ub: np.ndarray | None = None,
    steps: Sequence[LevelStep | None] | None = None,
    rank_tolerance: float = RANK_TOLERANCE,
) -> CascadeSolution:
    """The null-space projection (module docstring) of least-squares levels ``(J_k, r_k)``.

    Args:
        levels: ``(J_k, r_k)`` per level, highest priority first (``J_k`` (m_k, n)).
        lb: Lower bounds the result is clipped to, shape (n,), or None.
        ub: Upper bounds, or None.
        steps: Per level, the solve of ``min ||J z - r||`` on the projected Jacobian (e.g. a
            damped least squares); None entries (or None) use the truncated pseudo-inverse.
            The projector always uses the truncated pseudo-inverse.
        rank_tolerance: Relative singular-value cutoff of the pseudo-inverses.

    Returns:
        The clipped solution, and each level's (unclipped) one.
    """
    n = levels[0][0].shape[1] if levels else 0
    _check_levels(levels, n)
    if steps is not None and len(steps) != len(levels):
        raise InputError(f"steps: expected {len(levels)} entries, got {len(steps)}")
    x = np.zeros(n)
    P = np.eye(n)
    solutions: list[np.ndarray] = []
    for k, (J, r) in enumerate(levels):
        JP = J @ P
        # (JP)^+ = V Σ^-2 V^T (JP)^T and (JP)^+ JP = V V^T from the eigen-decomposition of
        # (JP)^T JP: one small symmetric eigenproblem instead of an SVD
        s, basis = _range(JP.T @ JP, rank_tolerance)
        residual = r - J @ x
        step = None if steps is None else steps[k]
        if step is None:
            z = basis.T @ ((basis @ (JP.T @ residual)) / (s * s))
        else:
            z = P @ step(JP, residual)
        x = x + z
        solutions.append(x.copy())
        P = P - basis.T @ basis
    if lb is not None:
        np.maximum(x, lb, out=x)
    if ub is not None:
        np.minimum(x, ub, out=x)
    return CascadeSolution(x=x, levels=tuple(solutions))
