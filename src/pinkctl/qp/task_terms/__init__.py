"""Objective contributions of pink tasks, computed in place with pink's own math.

Every pink task contributes (``pink.tasks.Task.compute_qp_objective``)

.. math::

    \\tfrac12 \\| W (J \\Delta q + \\alpha e) \\|^2
    \\;\\Rightarrow\\;
    H = (W J)^T (W J) + \\mu I, \\quad c = (\\alpha W e)^T (W J),
    \\quad \\mu = \\beta \\, \\| \\alpha W e \\|^2

where :math:`J` is the task Jacobian, :math:`e` the task error, :math:`\\alpha` the task
``gain``, :math:`\\beta` the ``lm_damping`` (Levenberg-Marquardt) scale and
:math:`W = \\mathrm{diag}(w)` built from the task ``cost`` exactly as pink does: identity when
``cost`` is None, ``w_i = cost`` for a ``float`` cost, ``w = cost`` for a vector cost. The
effective weight of each error coordinate is therefore ``cost**2``. The LM term
:math:`\\mu I` is isotropic in the tangent space and :math:`\\mu` uses the *whole* task error,
including rows that only involve held coordinates.

Here ``J`` is restricted to the controlled columns. The terms below recompute ``J`` and ``e``
with the same Pinocchio calls as pink, into preallocated buffers:

- :class:`FrameTaskTerm` (``pink.tasks.FrameTask``): :math:`e = \\log_6(T_{0b}^{-1} T_{0t})`
  (body twist from the frame ``b`` to its target ``t``, linear then angular) and
  :math:`J = -\\mathrm{Jlog}_6(T_{tb}) \\, {}_bJ_{0b}` with :math:`{}_bJ_{0b}` the LOCAL frame
  Jacobian.
- :class:`RelativeFrameTaskTerm` (``pink.tasks.RelativeFrameTask``):
  :math:`e = \\log_6(T_{tf})` with :math:`T_{tf} = T_{rt}^{-1} T_{rf}` and
  :math:`J = \\mathrm{Jlog}_6(T_{tf}) ({}_fJ_{0f} - \\mathrm{Ad}_{T_{fr}} {}_rJ_{0r})`.
- :class:`IdentityTaskTerm` (``PostureTask``, ``DampingTask``, ``JointVelocityTask``,
  ``LowAccelerationTask``): :math:`J = [0 \\; I]` (floating-base columns excluded), so
  :math:`H` gains ``cost**2`` on the diagonal and :math:`c` gains
  :math:`\\alpha\\,\\mathrm{cost}^2 e` -- no identity matrix is ever formed. For the posture
  task :math:`e = q \\ominus q^*` (``pin.difference(model, q*, q)``).
- :class:`GenericTaskTerm`: any other task (unknown class, or a subclass overriding one of
  the methods above): its own ``compute_qp_objective`` restricted to the controlled columns.

A task is classified once (by the identity of its methods, so a subclass that overrides
``compute_error``, ``compute_jacobian`` or ``compute_qp_objective`` is never mistaken for its
parent); its parameters (target, cost, gain, lm_damping, frame) are read on every tick.
"""

from __future__ import annotations

import pinocchio as pin
from pink.tasks import FrameTask, JointVelocityTask, PostureTask, RelativeFrameTask, Task

from ..selection import ColumnSelection
from .base import GenericTaskTerm, TaskTerm
from .frame import FrameTaskTerm, RelativeFrameTaskTerm
from .identity import IdentityTaskTerm
from .weights import RowWeights

__all__ = [
    "FrameTaskTerm",
    "GenericTaskTerm",
    "IdentityTaskTerm",
    "RelativeFrameTaskTerm",
    "RowWeights",
    "TaskTerm",
    "compile_task",
]


def compile_task(task: Task, model: pin.Model, selection: ColumnSelection) -> TaskTerm:
    """Pick the contribution term of ``task`` (see module docstring for the rules)."""
    cls = type(task)
    if getattr(cls, "compute_qp_objective", None) is not Task.compute_qp_objective:
        return GenericTaskTerm(task, selection)
    jacobian = getattr(cls, "compute_jacobian", None)
    error = getattr(cls, "compute_error", None)
    if (
        isinstance(task, FrameTask)
        and jacobian is FrameTask.compute_jacobian
        and error is FrameTask.compute_error
    ):
        return FrameTaskTerm(task, model, selection)
    if (
        isinstance(task, RelativeFrameTask)
        and jacobian is RelativeFrameTask.compute_jacobian
        and error is RelativeFrameTask.compute_error
    ):
        return RelativeFrameTaskTerm(task, model, selection)
    if jacobian in (PostureTask.compute_jacobian, JointVelocityTask.compute_jacobian):
        return IdentityTaskTerm(task, model, selection)
    return GenericTaskTerm(task, selection)
