"""Tasks with an identity Jacobian (posture, damping, joint velocity, low acceleration)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin
from pink.tasks import DampingTask, PostureTask, Task

from ..objective import ObjectiveAccumulator
from ..selection import ColumnSelection, as_index
from .base import GenericTaskTerm, TaskTerm
from .weights import RowWeights

__all__ = ["IdentityTaskTerm"]


class IdentityTaskTerm(TaskTerm):
    """Tasks whose Jacobian is ``[0 I]`` (posture, damping, joint velocity, low acceleration).

    The task rows are the tangent coordinates ``root_nv .. nv-1`` (pink excludes the floating
    base). Row ``t - root_nv`` only touches column ``t``, so with ``w`` the weights:
    ``H[t, t] += w**2``, ``c[t] += gain * w**2 * e[t - root_nv]`` (written as one linear row
    of the accumulator), and the LM term adds ``lm_damping * ||gain * w * e||**2`` to every
    diagonal entry (over every task row, controlled or not).

    Attributes (read by the controller's compiled tick too):
        model: The Pinocchio model.
        tangent: The controlled task rows, as tangent indices.
        weights: The task's row weights ``W``.
    """

    _ERROR_POSTURE = 0
    _ERROR_ZERO = 1
    _ERROR_CALL = 2

    def __init__(self, task: Task, model: pin.Model, selection: ColumnSelection) -> None:
        self.task = task
        self.model = model
        error_method = type(task).compute_error
        if error_method is PostureTask.compute_error:
            self._mode = self._ERROR_POSTURE
        elif error_method is DampingTask.compute_error:
            self._mode = self._ERROR_ZERO
        else:
            self._mode = self._ERROR_CALL
        nv = model.nv
        root_nv = 0  # pink's convention: the joint named "root_joint" is not in the task rows
        if model.existJointName("root_joint"):
            root_nv = int(model.joints[model.getJointId("root_joint")].nv)
        self._k = nv - root_nv
        self._root_nv = root_nv
        tangent = np.arange(root_nv, nv)
        rows, positions = selection.map_tangent_indices(tangent)
        self._n_rows = int(rows.size)
        self._positions = selection.placement(positions)
        self._row_positions = slice(None) if self._positions is None else self._positions
        self._rows = as_index(rows)  # rows of the task error that are controlled
        self.tangent = as_index(tangent[rows])  # the same, as tangent indices
        self.linear_rows = 1 if self._mode != self._ERROR_ZERO and self._n_rows else 0
        self.weights = RowWeights(self._k)
        self._fallback = GenericTaskTerm(task, selection)

    @property
    def fusable_posture(self) -> bool:
        """A posture task whose rows cover every controlled coordinate (the common arm
        problem's, :mod:`pinkctl.qp.assembly`)."""
        return self._mode == self._ERROR_POSTURE and self._positions is None and self._n_rows > 0

    def bind(self, acc: ObjectiveAccumulator, offset: int, linear_offset: int) -> None:
        if self.linear_rows:
            self._row = acc.linear_R[linear_offset]
            self._coefficient = acc.linear_s[linear_offset : linear_offset + 1]
            self._row.fill(0.0)
            self._coefficient.fill(0.0)

    def accumulate(self, configuration: Any, acc: ObjectiveAccumulator) -> None:
        task = self.task
        cost, weights = task.cost, self.weights
        # the same float cost as the cached weight: nothing to read again
        read = (type(cost) is float and cost == weights.uniform) or weights.update(cost)
        errors = self._errors(configuration) if read else None
        if errors is None:  # outside pink's formula here: pink's own computation (and errors)
            if self.linear_rows:
                self._coefficient.fill(0.0)
            self._fallback.accumulate(configuration, acc)
            return
        task_error, error_rows = errors
        if self._n_rows:
            self._add_rows(acc, error_rows, task.gain)
        lm_damping = task.lm_damping
        if lm_damping != 0.0 and task_error is not None:
            acc.diagonal_scalar += lm_damping * self._weighted_norm2(task_error, task.gain)

    def _errors(self, configuration: Any) -> tuple[np.ndarray | None, np.ndarray | None] | None:
        """``(e, e[controlled rows])`` of this tick (``e`` only when the LM damping needs it;
        both None for a task whose error is zero), or None when pink's formula does not apply
        (no posture target, an error of the wrong size)."""
        mode = self._mode
        if mode == self._ERROR_POSTURE:
            target = self.task.target_q  # type: ignore[attr-defined]
            if target is None:
                return None  # pink raises TargetNotSet
            # e = q (-) q* (pin.difference(model, q*, q)); the task rows are e[root_nv:].
            difference = pin.difference(self.model, target, configuration.q)
            task_error = difference[self._root_nv :] if self.task.lm_damping != 0.0 else None
            return task_error, difference[self.tangent]
        if mode == self._ERROR_CALL:
            task_error = np.asarray(self.task.compute_error(configuration), dtype=np.float64)
            if task_error.shape != (self._k,):
                return None  # pink's own error message
            return task_error, task_error[self._rows]
        return None, None

    def _add_rows(
        self, acc: ObjectiveAccumulator, error_rows: np.ndarray | None, gain: float
    ) -> None:
        """``H[t, t] += w_t^2`` and, with an error, the linear row ``c[t] += gain w_t^2 e_t``
        on the controlled task rows ``t``."""
        uniform = self.weights.uniform
        if uniform is not None:
            w2 = uniform * uniform
            if self._positions is None:  # H[t, t] += w^2
                acc.diagonal_scalar += w2
            else:
                acc.add_diagonal(self._positions, w2)
            if error_rows is not None:  # c[t] += (gain w^2) e[t - root_nv]
                self._row[self._row_positions] = error_rows
                self._coefficient[0] = gain * w2
            return
        w_rows = self.weights.vector[self._rows]
        w2_rows = np.multiply(w_rows, w_rows)
        acc.add_diagonal(self._positions, w2_rows)
        if error_rows is not None:  # c[t] += gain (w^2 e)[t - root_nv]
            self._row[self._row_positions] = np.multiply(w2_rows, error_rows)
            self._coefficient[0] = gain

    def _weighted_norm2(self, task_error: np.ndarray, gain: float) -> float:
        """``||W (-gain e)||^2`` over every task row (the LM damping's factor)."""
        uniform = self.weights.uniform
        if uniform is not None:
            weighted = np.multiply(task_error, -gain * uniform)
        else:
            weighted = np.multiply(task_error, self.weights.vector)
            np.multiply(weighted, -gain, out=weighted)  # W (-alpha e), every task row
        return float(weighted.dot(weighted))
