"""Assembly: how one tick's QP is written into the workspace, for one set of pink objects.

Each pink object's *structure* (its class, a limit's ``indices``) is analysed once, at
compile time, into a term (:mod:`pinkctl.qp.task_terms`, :mod:`pinkctl.qp.limit_terms`,
:mod:`pinkctl.qp.barrier_terms`); its *values* (targets, costs, gains, limit values) are read
on every tick. Two assemblies write the same problem:

- **fused** (:class:`~pinkctl.qp.fused.FramePostureBox`): the common arm problem (a frame task,
  an optional posture task, the joint box, no rows) in one pass, when compile time recognises
  it and the tick's parameters stay in it;
- **generic** (:meth:`Assembly.write`): any mix of tasks, limits and barriers, term by term:
  the objective ``H, c`` (tasks, damping, barriers' objective terms), the inequality rows
  ``G x <= h`` (limits that are not simple bounds, barriers), then the box ``lb <= x <= ub``
  (configuration, velocity and acceleration limits, the caller's velocity box).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pinocchio as pin
from pink import Configuration
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

__all__ = ["Assembly"]


class Assembly:
    """The compiled terms of one set of pink tasks, limits and barriers (module docstring).

    Args:
        model: The Pinocchio model.
        selection: The controlled tangent columns (the QP variables).
        workspace: The buffers the problem is written into.
        tasks, limits, barriers: The pink objects (a task given twice counts twice).

    Attributes:
        fused: The one-pass assembly of the common arm problem, or None when these objects
            are not it.
    """

    def __init__(
        self,
        model: pin.Model,
        selection: ColumnSelection,
        workspace: QPWorkspace,
        *,
        tasks: Iterable[Task],
        limits: Iterable[Limit],
        barriers: Iterable[Barrier],
    ) -> None:
        self._ws = workspace
        self._terms: list[TaskTerm] = [compile_task(task, model, selection) for task in tasks]
        rows = sum(term.rows for term in self._terms)
        linear_rows = sum(term.linear_rows for term in self._terms)
        self._accumulator = ObjectiveAccumulator(selection.size, rows, linear_rows)
        offset = linear_offset = 0
        for term in self._terms:
            term.bind(self._accumulator, offset, linear_offset)
            offset += term.rows
            linear_offset += term.linear_rows
        self.limit_plan = LimitPlan([compile_limit(limit, model.nv, selection) for limit in limits])
        self.barrier_terms = [compile_barrier(b, selection) for b in barriers]
        self.fused: FramePostureBox | None = None
        if not self.barrier_terms:
            self.fused = FramePostureBox.compile(self._terms, self.limit_plan, workspace)
        self._box = BoxBounds(workspace.lb, workspace.ub)
        self._v_bound = np.zeros(selection.size)
        self._blocks: list[tuple[np.ndarray, np.ndarray]] = []

    @property
    def has_rows(self) -> bool:
        """Whether the problem can have inequality rows (a limit that is not a box, a
        barrier)."""
        return bool(self.limit_plan.row_terms or self.barrier_terms)

    def write(
        self,
        configuration: Configuration,
        dt: float,
        damping: float,
        lower: np.ndarray | None = None,
        upper: np.ndarray | None = None,
    ) -> bool:
        """Write this tick's problem, generic assembly (the caller checked the arguments).

        Args:
            configuration: pink configuration at the tick's ``q``.
            dt: Control period [s].
            damping: Tikhonov damping on the diagonal of ``H``.
            lower: The lower side of the caller's velocity box [rad/s or m/s] on the QP
                variables, or None.
            upper: Its upper side, or None.

        Returns:
            Whether the box can only come from configuration and velocity limits (no NaN
            for a finite configuration, no caller's box): then an exact solver reports an
            empty box itself and the bounds need no check before solving.

        Raises:
            pink.exceptions.PinkError: A task or limit of pink failing at this configuration
                (e.g. ``TargetNotSet``).
        """
        self._objective_and_rows(configuration, dt, damping)
        self._bounds(configuration, dt, lower, upper)
        return self.limit_plan.nan_free and lower is None and upper is None

    def _objective_and_rows(self, configuration: Configuration, dt: float, damping: float) -> None:
        """``H, c`` of the tasks and barriers, and the rows of limits and barriers."""
        acc = self._accumulator
        acc.reset(damping)
        for term in self._terms:
            term.accumulate(configuration, acc)
        blocks = self._blocks  # loops, not comprehensions: no call per tick
        blocks.clear()
        for limit_term in self.limit_plan.row_terms:
            matvec = limit_term.rows(configuration, dt)
            if matvec is not None and matvec[1].shape[0]:
                blocks.append(matvec)
        for barrier_term in self.barrier_terms:  # barriers add objective terms too
            matvec = barrier_term.evaluate(configuration, dt, acc)
            if matvec is not None and matvec[1].shape[0]:
                blocks.append(matvec)
        ws = self._ws
        acc.finalize(ws.H, ws.c, ws.H_diagonal)
        n_rows = sum(block[1].shape[0] for block in blocks)
        ws.set_row_counts(n_rows, 0)
        offset = 0
        for G_block, h_block in blocks:
            rows = h_block.shape[0]
            ws.G[offset : offset + rows] = G_block
            ws.h[offset : offset + rows] = h_block
            offset += rows

    def _bounds(
        self,
        configuration: Configuration,
        dt: float,
        lower: np.ndarray | None,
        upper: np.ndarray | None,
    ) -> None:
        """The box: every box limit, then ``dt [lower, upper]`` (after the rows are sized:
        growing them reallocates the workspace's buffers)."""
        ws = self._ws
        box = self._box
        if box.lb is not ws.lb:
            box.bind(ws.lb, ws.ub)
        box.reset()
        for limit_term in self.limit_plan.box_terms:
            limit_term.apply(configuration, dt, box)
        if upper is not None:
            np.multiply(upper, dt, out=self._v_bound)
            box.tighten_upper(None, self._v_bound)
        if lower is not None:
            np.multiply(lower, dt, out=self._v_bound)
            box.tighten_lower(None, self._v_bound)
        box.finish()
