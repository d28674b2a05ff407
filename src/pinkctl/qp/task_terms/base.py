"""The task-term interface and the generic term (a task's own ``compute_qp_objective``)."""

from __future__ import annotations

from typing import Any

from pink.tasks import Task

from ..objective import ObjectiveAccumulator
from ..selection import ColumnSelection

__all__ = ["GenericTaskTerm", "TaskTerm"]


class TaskTerm:
    """Base class of a compiled task contribution.

    Attributes:
        task: The pink task.
        rows: Number of Jacobian rows this term writes into the stacked residual.
        linear_rows: Number of linear rows (contributions to ``c`` only) it writes.
    """

    task: Task
    rows: int = 0
    linear_rows: int = 0

    def bind(self, acc: ObjectiveAccumulator, offset: int, linear_offset: int) -> None:
        """Attach the term to rows ``[offset, offset + rows)`` of ``acc.R`` and
        ``[linear_offset, linear_offset + linear_rows)`` of ``acc.linear_R``."""

    def accumulate(self, configuration: Any, acc: ObjectiveAccumulator) -> None:
        """Add the task's contribution for the current configuration to ``acc``."""
        raise NotImplementedError


class GenericTaskTerm(TaskTerm):
    """Any task: pink's own ``compute_qp_objective``, restricted to the controlled columns."""

    def __init__(self, task: Task, selection: ColumnSelection) -> None:
        self.task = task
        self._selection = selection

    def accumulate(self, configuration: Any, acc: ObjectiveAccumulator) -> None:
        acc.add_dense(
            *self._selection.restrict_objective(*self.task.compute_qp_objective(configuration))
        )
