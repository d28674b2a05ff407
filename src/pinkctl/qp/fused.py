"""The common arm problem in one pass: frame task, posture task and a joint box.

Most control ticks solve the same problem: a :class:`pink.tasks.FrameTask` on the tool, an
optional :class:`pink.tasks.PostureTask`, pink's configuration and velocity limits on every
controlled joint (or the configuration limit alone), no other limit and no barrier.
:class:`FramePostureBox` writes that QP straight into the workspace, with the math of
:class:`~pinkctl.qp.task_terms.FrameTaskTerm` and
:class:`~pinkctl.qp.task_terms.IdentityTaskTerm` but without the accumulator between them (a
third of the assembly time went into the generic plumbing):

.. math::

    R = W\\,\\mathrm{Jlog}_6(T_{tb})\\,{}_bJ_{0b}[:, c], \\quad
    s = \\alpha\\, W \\log_6(T_{tb}), \\qquad
    H = R^T R + (\\lambda + w_p^2) I, \\quad
    c = R^T s + \\alpha_p w_p^2\\, (q \\ominus q^*)[c]

with :math:`T_{tb}` the tool pose in its target frame, ``W`` the frame task's weights,
:math:`\\lambda` the Tikhonov damping, :math:`w_p, \\alpha_p` the posture cost and gain, and the
box of :class:`~pinkctl.qp.limit_terms.JointBox` (or of
:class:`~pinkctl.qp.limit_terms.ConfigurationLimitBox`). (pink's ``H = (WJ)^T (WJ)`` and
``c = -(W \\alpha e)^T (WJ)`` with ``e = -\\log_6(T_{tb})`` and ``J = -\\mathrm{Jlog}_6 \\, J_b``:
the two signs cancel.)

The box is written directly too: ``gain (q_max \\ominus q)`` and ``gain (q_min \\ominus q)`` on
the controlled coordinates, within ``dt v_max`` when the velocity limit is part of it (pink's
configuration limit alone is the QP of a motion-limited controller, whose shaper enforces the
velocity). A tick whose parameters leave that case (a Levenberg-Marquardt damping, no target,
a cost pink's formula does not cover) is reported to the caller, which assembles it the generic
way (:mod:`pinkctl.qp.assembly`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin

from .limit_terms import ConfigurationLimitBox, JointBox, LimitPlan, LimitTerm
from .problem import QPWorkspace
from .task_terms import FrameTaskTerm, IdentityTaskTerm, TaskTerm

__all__ = ["FramePostureBox"]


def _covers_all(term: LimitTerm) -> bool:
    """A configuration limit alone on every controlled coordinate (the range of a motion-
    limited controller's first solve)."""
    return isinstance(term, ConfigurationLimitBox) and not term.empty and term.positions is None


def _single_joint_box(plan: LimitPlan) -> JointBox | ConfigurationLimitBox | None:
    """The plan's only limit when it is a joint box (or a configuration limit alone on every
    controlled coordinate) and there are no rows, else None."""
    if plan.row_terms or len(plan.box_terms) != 1:
        return None
    box = plan.box_terms[0]
    return box if isinstance(box, JointBox) or _covers_all(box) else None  # type: ignore[return-value]


def _posture_ready(posture: IdentityTaskTerm) -> bool:
    """Whether the posture task is in pink's formula this tick: a target, no
    Levenberg-Marquardt damping, one weight for every coordinate (its weights read)."""
    task = posture.task
    weights = posture.weights
    cost = task.cost
    return (
        task.target_q is not None  # type: ignore[attr-defined]
        and task.lm_damping == 0.0
        # the same float cost as the cached weight: nothing to read again
        and ((type(cost) is float and cost == weights.uniform) or weights.update(cost))
        and weights.uniform is not None
    )


class FramePostureBox:
    """Frame task + optional posture task + joint box, assembled in one pass.

    Built by :meth:`compile` from compiled terms (it reuses their frame handle, weights and
    index maps), so it sees every change of the tasks' parameters the terms would see.
    """

    def __init__(
        self,
        frame: FrameTaskTerm,
        posture: IdentityTaskTerm | None,
        joint_box: JointBox | ConfigurationLimitBox,
        workspace: QPWorkspace,
    ) -> None:
        self._frame = frame
        self._posture = posture
        self._box = joint_box if isinstance(joint_box, JointBox) else JointBox(joint_box, None)
        self._limit = joint_box.limit  # the pink ConfigurationLimit
        self._tangent = joint_box.tangent
        self._velocity = self._box.velocity
        self._ws = workspace
        n = workspace.n
        # [R; r] and [s; 1]: the frame rows, then the posture's linear row r = a_p w_p^2 e,
        # so that c = [R; r]^T [s; 1] is one product (r enters c, not H)
        self._rows = np.zeros((7, n))
        self._R = self._rows[:6]
        self._RT = self._R.T
        self._posture_row = self._rows[6]
        self._coefficients = np.zeros(7)
        self._coefficients[6] = 1.0
        self._s = self._coefficients[:6]
        self._scalar = np.zeros(())  # 0-d operand: cheaper in ufuncs than a Python float

    @staticmethod
    def compile(
        terms: list[TaskTerm], limit_plan: LimitPlan, workspace: QPWorkspace
    ) -> FramePostureBox | None:
        """The fused assembly of a plan, or None when the plan is not the common case."""
        joint_box = _single_joint_box(limit_plan)
        if joint_box is None or not 0 < len(terms) <= 2 or type(terms[0]) is not FrameTaskTerm:
            return None
        frame = terms[0]
        posture = terms[1] if len(terms) == 2 else None
        if posture is not None and (
            type(posture) is not IdentityTaskTerm or not posture.fusable_posture or posture is frame
        ):
            return None
        return FramePostureBox(frame, posture, joint_box, workspace)  # type: ignore[arg-type]

    def assemble(self, configuration: Any, dt: float, damping: float) -> bool:
        """Write this tick's ``H, c, lb, ub`` into the workspace (no rows); False, with
        nothing written, when a parameter takes the tick out of the fused case (the caller
        then assembles it the generic way, which also raises pink's errors)."""
        frame = self._frame
        target = frame.target()
        if target is None or frame.task.lm_damping != 0.0:
            return False
        posture = self._posture
        if posture is not None and not _posture_ready(posture):
            return False
        frame.write_rows(configuration.data, target, self._R, self._s)
        self._write_objective(configuration.q, damping)
        ws = self._ws
        self._box.write(configuration.q, dt, ws.lb, ws.ub)
        return True

    def _write_objective(self, q: np.ndarray, damping: float) -> None:
        """``H = R^T R + (lambda + w_p^2) I`` and ``c = R^T s + alpha_p w_p^2 (q - q*)[c]``
        (no posture: ``w_p = 0``); the workspace is left without rows."""
        ws = self._ws
        if ws.n_ineq or ws.n_eq:
            ws.set_row_counts(0, 0)  # no rows (shrinking keeps lb and ub)
        R = self._R
        np.dot(self._RT, R, ws.H)
        diagonal = damping
        posture = self._posture
        scalar = self._scalar
        if posture is not None:
            posture_task = posture.task
            w2 = posture.weights.uniform * posture.weights.uniform  # type: ignore[operator]
            diagonal += w2
            # r = gain w^2 (q (-) q*) on the controlled coordinates
            error = pin.difference(posture.model, posture_task.target_q, q)  # type: ignore[attr-defined]
            scalar[()] = posture_task.gain * w2
            np.multiply(error[posture.tangent], scalar, self._posture_row)
            np.dot(self._coefficients, self._rows, ws.c)
        else:
            np.dot(self._s, R, ws.c)
        scalar[()] = diagonal
        np.add(ws.H_diagonal, scalar, ws.H_diagonal)
