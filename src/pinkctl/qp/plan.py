"""Compiled plans: the terms of one set of pink tasks, limits and barriers."""

from __future__ import annotations

from collections.abc import Iterable

import pinocchio as pin
from pink.barriers import Barrier
from pink.limits import Limit
from pink.tasks import Task

from .barrier_terms import compile_barrier
from .fused import FramePostureBox
from .limit_terms import BoxBounds, LimitPlan, compile_limit
from .objective import ObjectiveAccumulator
from .problem import QPWorkspace
from .selection import ColumnSelection
from .task_terms import TaskTerm, compile_task

__all__ = ["QPPlan", "TaskPlan"]


class TaskPlan:
    """Compiled terms of one task sequence and the residual buffer they share."""

    def __init__(self, terms: list[TaskTerm], n: int) -> None:
        rows = sum(term.rows for term in terms)
        linear_rows = sum(term.linear_rows for term in terms)
        self.terms = terms
        self.accumulator = ObjectiveAccumulator(n, rows, linear_rows)
        offset = linear_offset = 0
        for term in terms:
            term.bind(self.accumulator, offset, linear_offset)
            offset += term.rows
            linear_offset += term.linear_rows


class QPPlan:
    """The compiled contributions of one set of tasks, limits and barriers.

    Made by :meth:`~pinkctl.qp.DiffIKQP.compile`; each pink object's *structure* (its class, a
    limit's ``indices``) is analysed here once, its *values* (targets, costs, gains, limit
    values) are read on every tick. Compile again after changing the structure of an object or
    the set of objects.

    Attributes:
        tasks, limits, barriers: The pink objects, as tuples.
        fused: The one-pass assembly of the common arm problem (frame task, optional posture
            task, joint box; see :mod:`pinkctl.qp.fused`), or None when the plan is not it.
    """

    def __init__(
        self,
        model: pin.Model,
        selection: ColumnSelection,
        workspace: QPWorkspace,
        box: BoxBounds,
        *,
        tasks: Iterable[Task],
        limits: Iterable[Limit],
        barriers: Iterable[Barrier],
    ) -> None:
        self.tasks = tuple(tasks)
        self.limits = tuple(limits)
        self.barriers = tuple(barriers)
        # a task given twice counts twice: every entry gets its own compiled term
        self.task_plan = TaskPlan(
            [compile_task(task, model, selection) for task in self.tasks], selection.size
        )
        self.limit_plan = LimitPlan(
            [compile_limit(limit, model.nv, selection) for limit in self.limits]
        )
        self.barrier_terms = [compile_barrier(b, selection) for b in self.barriers]
        self.fused: FramePostureBox | None = None
        if not self.barrier_terms:
            self.fused = FramePostureBox.compile(
                self.task_plan.terms, self.limit_plan, workspace, box
            )
