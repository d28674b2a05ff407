"""The assembled differential-IK quadratic program and the buffers that hold it.

One control tick solves, over the displacement :math:`x = \\Delta q_c \\in \\mathbb{R}^n` of the
``n`` controlled tangent coordinates (the commanded velocity is :math:`v_c = x / \\mathrm{d}t`):

.. math::

    \\begin{array}{ll}
    \\min_x & \\tfrac12 x^T H x + c^T x \\\\
    \\text{s.t.} & G x \\le h, \\quad A x = b, \\quad lb \\le x \\le ub
    \\end{array}

:class:`QPProblem` is an immutable view of such a problem (units: ``H`` in
[cost]² / [tangent]², ``c`` in [cost]² / [tangent], bounds in tangent displacement units,
rad or m). :class:`QPWorkspace` owns the preallocated buffers, laid out the way DAQP wants
them (simple bounds first, then the rows of ``G``, then the equality rows), so the fast path
never allocates per tick.
"""

from __future__ import annotations

from ctypes import c_int
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["QPProblem", "QPWorkspace"]

#: Value used for "no bound" in the DAQP-shaped buffers (DAQP treats |b| >= 1e30 as infinite).
DAQP_INFINITY = 1e30

#: The arrays of a problem, in :class:`QPProblem`'s field order.
_FIELDS = ("H", "c", "G", "h", "A", "b", "lb", "ub")

#: DAQP constraint-sense flag of an equality row.
_SENSE_EQUALITY = 5


def _readonly(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.setflags(write=False)
    return view


@dataclass(frozen=True)
class QPProblem:
    """A differential-IK QP over the controlled displacements ``x`` (see module docstring).

    The arrays are read-only. When the problem comes from :meth:`CompiledQP.build` they are
    views of the compiled QP's buffers: they stay valid until its next ``build``/``solve`` call
    (copy them to keep them longer).

    Attributes:
        H: Hessian, shape (n, n), symmetric positive semi-definite.
        c: Linear cost, shape (n,).
        G: Inequality matrix, shape (r, n); the rows that are not simple bounds.
        h: Inequality vector, shape (r,).
        A: Equality matrix, shape (e, n) (empty for a plain IK tick; used by cascades).
        b: Equality vector, shape (e,).
        lb: Lower bounds on x, shape (n,), ``-inf`` where unbounded.
        ub: Upper bounds on x, shape (n,), ``+inf`` where unbounded.
    """

    H: np.ndarray
    c: np.ndarray
    G: np.ndarray
    h: np.ndarray
    A: np.ndarray
    b: np.ndarray
    lb: np.ndarray
    ub: np.ndarray

    @property
    def n(self) -> int:
        """Number of decision variables."""
        return int(self.c.shape[0])

    def copy(self) -> QPProblem:
        """Independent copy of the problem (owning its arrays, still read-only)."""
        return QPProblem(*(_readonly(np.array(getattr(self, a), np.float64)) for a in _FIELDS))

    def max_violation(self, x: np.ndarray) -> float:
        """Largest constraint violation of ``x`` (0 when ``x`` is feasible), in units of x."""
        viol = 0.0
        if self.lb.size:
            viol = max(viol, float(np.max(self.lb - x)), float(np.max(x - self.ub)))
        if self.h.size:
            viol = max(viol, float(np.max(self.G @ x - self.h)))
        if self.b.size:
            viol = max(viol, float(np.max(np.abs(self.A @ x - self.b))))
        return max(viol, 0.0)


class QPWorkspace:
    """Preallocated buffers of a QP with ``n`` variables, in DAQP's layout.

    ``upper``/``lower`` hold ``[ub, h, b]`` / ``[lb, -inf, b]``; ``matrix`` holds ``[G; A]``;
    ``sense`` flags the equality rows. Row capacity grows on demand (amortised; no per-tick
    allocation once the largest row count has been seen).

    Attributes:
        n: Number of variables.
        H: Hessian buffer (n, n).
        c: Linear cost buffer (n,).
        H_diagonal: Writable view of the diagonal of ``H``.
        lb: Lower-bound view (n,) into ``lower``.
        ub: Upper-bound view (n,) into ``upper``.
        n_ineq: Current number of rows of ``G``.
        n_eq: Current number of equality rows.
    """

    n: int
    H: np.ndarray
    c: np.ndarray
    H_diagonal: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    n_ineq: int
    n_eq: int

    def __init__(self, n: int, row_capacity: int = 0) -> None:
        self.n = int(n)
        self.H = np.zeros((n, n))
        self.c = np.zeros(n)
        self.H_diagonal = self.H.reshape(-1)[:: n + 1]
        self._capacity = -1
        self.n_ineq = -1
        self.n_eq = -1
        #: Incremented whenever the buffers are reallocated (row capacity grown).
        self.generation = 0
        self._reserve(max(int(row_capacity), 0))
        self.set_row_counts(0, 0)

    def _reserve(self, rows: int) -> None:
        if rows <= self._capacity:
            return
        capacity = max(rows, 2 * self._capacity, 8)
        n = self.n
        self._matrix = np.zeros((capacity, n))
        self._upper = np.full(n + capacity, DAQP_INFINITY)
        self._lower = np.full(n + capacity, -DAQP_INFINITY)
        self._sense = np.zeros(n + capacity, dtype=c_int)
        self.lb = self._lower[:n]
        self.ub = self._upper[:n]
        self._capacity = capacity
        self.generation += 1  # lb/ub/G/h are new arrays: holders of the old ones must rebind
        self.n_ineq = -1  # force the views to be rebuilt

    def set_row_counts(self, n_ineq: int, n_eq: int) -> None:
        """Size the ``G`` and ``A`` blocks (contents of new rows are unspecified)."""
        if n_ineq == self.n_ineq and n_eq == self.n_eq:
            return
        self._reserve(n_ineq + n_eq)
        n = self.n
        m = n + n_ineq + n_eq
        self.n_ineq = n_ineq
        self.n_eq = n_eq
        self.G = self._matrix[:n_ineq]
        self.A = self._matrix[n_ineq : n_ineq + n_eq]
        self.h = self._upper[n : n + n_ineq]
        self.b = self._upper[n + n_ineq : m]
        self._lower[n : n + n_ineq] = -DAQP_INFINITY
        self._sense[:m] = 0
        self._sense[n + n_ineq : m] = _SENSE_EQUALITY
        #: DAQP-shaped views: constraint matrix [G; A], bounds [ub, h, b] / [lb, -inf, b].
        self.daqp_matrix = self._matrix[: n_ineq + n_eq]
        self.daqp_upper = self._upper[:m]
        self.daqp_lower = self._lower[:m]
        self.daqp_sense = self._sense[:m]
        self._b_lower = self._lower[n + n_ineq : m]

    def sync_equality_lower(self) -> None:
        """Copy ``b`` into the lower half of the equality rows (DAQP needs both)."""
        if self.n_eq:
            self._b_lower[:] = self.b

    def problem(self) -> QPProblem:
        """Read-only views of the current problem."""
        return QPProblem(*(_readonly(getattr(self, name)) for name in _FIELDS))

    def load(self, problem: QPProblem) -> None:
        """Copy ``problem`` into the buffers.

        Raises:
            ValueError: If the shapes do not match ``n`` variables.
        """
        n = self.n
        for name, want in (("H", (n, n)), ("c", (n,)), ("lb", (n,)), ("ub", (n,))):
            got = getattr(problem, name).shape
            if got != want:
                raise InputError(f"problem.{name} must have shape {want}, got {got}")
        r = _row_count(problem.G, problem.h, n, "G", "h", "r")
        e = _row_count(problem.A, problem.b, n, "A", "b", "e")
        self.set_row_counts(r, e)
        for name in _FIELDS:
            getattr(self, name)[...] = getattr(problem, name)
        self.sync_equality_lower()


def _row_count(
    matrix: np.ndarray, vector: np.ndarray, n: int, matrix_name: str, vector_name: str, rows: str
) -> int:
    """The number of rows of a ``(matrix, vector)`` pair over ``n`` variables.

    Raises:
        ValueError: ``matrix`` is not ``(rows, n)`` or ``vector`` not ``(rows,)``.
    """
    count = matrix.shape[0] if matrix.ndim == 2 else -1
    if count < 0 or matrix.shape[1] != n or vector.shape != (count,):
        raise InputError(
            f"problem.{matrix_name} must have shape ({rows}, {n}) and problem.{vector_name} "
            f"shape ({rows},), got {matrix.shape} and {vector.shape}"
        )
    return count
