"""Assembly: how one tick's QP is written into the workspace, for one set of pink objects.

Each pink object's *structure* (its class, a limit's ``indices``) is analysed once, at
compile time, into a term (:mod:`pinkctl.qp.task_terms`, :mod:`pinkctl.qp.limit_terms`,
:mod:`pinkctl.qp.barrier_terms`); its *values* (targets, costs, gains, limit values) are read
on every tick. :meth:`Assembly.write` writes, term by term, the objective ``H, c`` (tasks,
damping, barriers' objective terms, :class:`~pinkctl.qp.objective.ObjectiveAccumulator`), the
inequality rows ``G x <= h`` (limits that are not simple bounds, barriers), then the box
``lb <= x <= ub`` (configuration, velocity and acceleration limits, the caller's velocity
box). Whenever pink's configuration limit, with or without its velocity limit, covers every
controlled coordinate and there are no rows, the box is written in one pass
(:class:`~pinkctl.qp.limit_terms.JointBox`); with a frame task and an optional posture task,
that is the common arm problem (``Assembly.fused``).
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
from .limit_terms import BoxBounds, LimitPlan, compile_limit
from .objective import ObjectiveAccumulator
from .problem import QPWorkspace
from .selection import ColumnSelection
from .task_terms import FrameTaskTerm, IdentityTaskTerm, TaskTerm, compile_task

__all__ = ["Assembly"]


class Assembly:
    """The compiled terms of one set of pink tasks, limits and barriers (module docstring).

    Args:
        model: The Pinocchio model.
        selection: The controlled tangent columns (the QP variables).
        workspace: The buffers the problem is written into.
        tasks, limits, barriers: The pink objects (a task given twice counts twice).

    Attributes:
        fused: Whether these objects are the common arm problem (module docstring).
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
        #: The box's one term, written in one pass without a caller's box, or None.
        self._joint_box = None if self.has_rows else self.limit_plan.joint_box
        self.fused = self._joint_box is not None and _arm_tasks(self._terms)
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
        joint_box = self._joint_box
        if joint_box is not None and lower is None and upper is None:  # the box in one pass
            joint_box.write(configuration.q, dt, self._ws.lb, self._ws.ub)
            return True
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
        n_rows = 0
        for limit_term in self.limit_plan.row_terms:
            matvec = limit_term.rows(configuration, dt)
            if matvec is not None and matvec[1].shape[0]:
                blocks.append(matvec)
                n_rows += matvec[1].shape[0]
        for barrier_term in self.barrier_terms:  # barriers add objective terms too
            matvec = barrier_term.evaluate(configuration, dt, acc)
            if matvec is not None and matvec[1].shape[0]:
                blocks.append(matvec)
                n_rows += matvec[1].shape[0]
        ws = self._ws
        acc.finalize(ws.H, ws.c, ws.H_diagonal)
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


def _arm_tasks(terms: list[TaskTerm]) -> bool:
    """Whether the task terms are a frame task and optionally a posture task over every
    controlled coordinate (the common arm problem's)."""
    if not 0 < len(terms) <= 2 or type(terms[0]) is not FrameTaskTerm:
        return False
    return len(terms) == 1 or (type(terms[1]) is IdentityTaskTerm and terms[1].fusable_posture)
