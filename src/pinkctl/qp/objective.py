"""Accumulation of the QP objective from task and barrier contributions.

pink's objective is a sum over tasks of weighted least-squares terms plus diagonal terms:

.. math::

    H = \\sum_i (W_i J_i)^T (W_i J_i) + \\Big(\\lambda + \\sum_i \\mu_i\\Big) I + \\ldots,
    \\qquad c = \\sum_i (W_i J_i)^T (\\alpha_i W_i e_i) + \\ldots

with :math:`W_i = \\mathrm{diag}(\\mathrm{cost}_i)` (so the effective weight is the squared
cost), :math:`\\alpha_i` the task gain, :math:`e_i` the task error, :math:`\\lambda` the
global Tikhonov damping and :math:`\\mu_i` the Levenberg-Marquardt terms.

:class:`ObjectiveAccumulator` gathers these with as few matrix operations as possible:

- tasks with a dense Jacobian (frame tasks) write their weighted rows :math:`R_i = W_i J_i`
  and :math:`s_i = \\alpha_i W_i e_i` into one stacked residual ``(R, s)``;
- identity-Jacobian tasks (posture, damping) add ``w**2`` to the diagonal of ``H`` and write
  their linear term :math:`\\alpha w^2 e` as one extra *linear row* ``r`` with coefficient
  ``sigma`` (``r sigma`` is added to ``c``; linear rows never enter ``H``);
- anything else adds a dense ``(H_i, c_i)`` pair.

Then :math:`H = R^T R + \\mathrm{diag}(d) + H_{\\mathrm{dense}}` and
:math:`c = [R; r]^T [s; \\sigma] + c_{\\mathrm{dense}}`: two matrix products in total.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ObjectiveAccumulator"]


class ObjectiveAccumulator:
    """Buffers of the objective of one tick over ``n`` controlled variables.

    Attributes:
        n: Number of variables.
        rows: Number of stacked Jacobian rows (they enter ``H`` and ``c``).
        linear_rows: Number of linear rows (they enter ``c`` only).
        R: Stacked weighted Jacobian rows, shape (rows, n).
        s: Stacked weighted, gain-scaled errors, shape (rows,).
        linear_R: Linear rows, shape (linear_rows, n).
        linear_s: Their coefficients, shape (linear_rows,).
        diagonal_scalar: Amount added to every diagonal entry of ``H`` (damping, LM terms).
        diagonal: Per-variable diagonal additions (used when ``diagonal_used``).
        H_dense: Dense Hessian additions (used when ``dense_used``).
        c_dense: Dense linear-cost additions (used when ``dense_used``).
    """

    n: int
    rows: int
    linear_rows: int
    R: np.ndarray
    s: np.ndarray
    linear_R: np.ndarray
    linear_s: np.ndarray
    diagonal_scalar: float
    diagonal: np.ndarray
    diagonal_used: bool
    H_dense: np.ndarray
    c_dense: np.ndarray
    dense_used: bool

    def __init__(self, n: int, rows: int, linear_rows: int = 0) -> None:
        self.n = n
        self.rows = rows
        self.linear_rows = linear_rows
        self._all_R = np.zeros((rows + linear_rows, n))
        self._all_s = np.zeros(rows + linear_rows)
        self.R = self._all_R[:rows]
        self.s = self._all_s[:rows]
        self._RT = self.R.T
        self.linear_R = self._all_R[rows:]
        self.linear_s = self._all_s[rows:]
        self.diagonal = np.zeros(n)
        self.H_dense = np.zeros((n, n))
        self.c_dense = np.zeros(n)
        self._scalar = np.zeros(())  # 0-d operand: cheaper in ufuncs than a Python float
        self.reset(0.0)

    def reset(self, damping: float) -> None:
        """Start a new tick with the global Tikhonov ``damping`` on the diagonal."""
        self.diagonal_scalar = damping
        self.diagonal_used = False
        self.dense_used = False

    def add_diagonal(
        self, positions: slice | np.ndarray | None, values: float | np.ndarray
    ) -> None:
        """Add ``values`` to the diagonal entries ``positions`` of H (None: every entry)."""
        if positions is None and isinstance(values, float):
            self.diagonal_scalar += values
            return
        if not self.diagonal_used:
            self.diagonal.fill(0.0)
            self.diagonal_used = True
        if positions is None:
            np.add(self.diagonal, values, self.diagonal)
        else:
            self.diagonal[positions] += values

    def add_linear(self, values: np.ndarray) -> None:
        """Add ``values`` (one per variable) to c."""
        if not self.dense_used:
            self.H_dense.fill(0.0)
            self.c_dense.fill(0.0)
            self.dense_used = True
        np.add(self.c_dense, values, self.c_dense)

    def add_dense(self, H: np.ndarray, c: np.ndarray) -> None:
        """Add a dense pair ``(H, c)`` already restricted to the controlled variables."""
        if self.dense_used:
            np.add(self.H_dense, H, self.H_dense)
            np.add(self.c_dense, c, self.c_dense)
        else:
            np.copyto(self.H_dense, H)
            np.copyto(self.c_dense, c)
            self.dense_used = True

    def finalize(self, H: np.ndarray, c: np.ndarray, H_diagonal: np.ndarray) -> None:
        """Write the accumulated objective into ``H`` and ``c``.

        Args:
            H: Output Hessian (n, n), C-contiguous.
            c: Output linear cost (n,).
            H_diagonal: Writable view of the diagonal of ``H``.
        """
        if self.rows:
            np.dot(self._RT, self.R, H)
        else:
            H.fill(0.0)
        if self.rows or self.linear_rows:
            np.dot(self._all_s, self._all_R, c)
        else:
            c.fill(0.0)
        if self.dense_used:
            np.add(H, self.H_dense, H)
            np.add(c, self.c_dense, c)
        scalar = self._scalar
        scalar[()] = self.diagonal_scalar
        if self.diagonal_used:
            diagonal = self.diagonal
            np.add(diagonal, scalar, diagonal)
            np.add(H_diagonal, diagonal, H_diagonal)
        else:
            np.add(H_diagonal, scalar, H_diagonal)
