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

from typing import Any

import numpy as np
import pinocchio as pin
from pink.exceptions import FrameNotFound
from pink.tasks import (
    DampingTask,
    FrameTask,
    JointVelocityTask,
    PostureTask,
    RelativeFrameTask,
    Task,
)

from .objective import ObjectiveAccumulator
from .selection import ColumnSelection, as_index

__all__ = [
    "FrameTaskTerm",
    "GenericTaskTerm",
    "IdentityTaskTerm",
    "RelativeFrameTaskTerm",
    "RowWeights",
    "TaskTerm",
    "compile_task",
]

_LOCAL = pin.ReferenceFrame.LOCAL


#: Marker for "no cached vector cost" (never the identity of a user's cost).
_NO_SOURCE = object()


class RowWeights:
    """Diagonal of pink's weight matrix ``W`` for a task of dimension ``k``, cached.

    pink's rule: identity when ``cost`` is None, ``cost * I`` for a ``float`` cost,
    ``diag(cost)`` for a vector cost. After :meth:`update`, ``uniform`` holds the common weight
    when every entry is equal (then the caller can use scalar arithmetic), else None and
    ``vector`` holds the weights. A vector cost is re-read only when its bytes change, which
    costs one ``tobytes`` per tick.
    """

    def __init__(self, k: int) -> None:
        self.k = k
        self.vector = np.ones(k)
        self.column = self.vector.reshape(k, 1)
        self.uniform: float | None = 1.0
        #: The vector cost read last (identity) and its bytes, for the unchanged-cost fast path.
        self.source: Any = _NO_SOURCE
        self.source_bytes = b""

    def update(self, cost: Any) -> bool:
        """Read ``cost``; False when pink's formula would not apply (int, wrong length...)."""
        if cost is self.source and cost.tobytes() == self.source_bytes:
            return True  # the same vector cost as last tick, unchanged
        if cost is None:
            self.uniform = 1.0
            self.source = _NO_SOURCE
            return True
        if isinstance(cost, float):
            self.uniform = cost
            self.source = _NO_SOURCE
            return True
        if isinstance(cost, np.ndarray):
            if cost.shape != (self.k,) or not np.issubdtype(cost.dtype, np.number):
                return False
            self._store(cost.astype(np.float64))
            self.source = cost
            self.source_bytes = cost.tobytes()
            return True
        if isinstance(cost, (list, tuple)) and len(cost) == self.k:
            try:
                values = np.asarray(cost, dtype=np.float64)
            except (TypeError, ValueError):
                return False
            self._store(values)
            self.source = _NO_SOURCE
            return True
        return False

    def _store(self, values: np.ndarray) -> None:
        np.copyto(self.vector, values)
        first = float(values[0]) if values.size else 1.0
        self.uniform = first if bool(np.all(values == first)) else None


def _root_nv(model: pin.Model) -> int:
    """Tangent dimension of the root joint named ``root_joint`` (pink's convention), else 0."""
    if model.existJointName("root_joint"):
        return int(model.joints[model.getJointId("root_joint")].nv)
    return 0


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
        self._full = selection.is_full
        self._index = selection.index
        self._ix = None if isinstance(self._index, slice) else np.ix_(self._index, self._index)

    def accumulate(self, configuration: Any, acc: ObjectiveAccumulator) -> None:
        H_task, c_task = self.task.compute_qp_objective(configuration)
        H_task = np.asarray(H_task, dtype=np.float64)
        c_task = np.asarray(c_task, dtype=np.float64).reshape(-1)
        if not self._full:
            if self._ix is None:
                H_task = H_task[self._index, self._index]
            else:
                H_task = H_task[self._ix]
            c_task = c_task[self._index]
        acc.add_dense(H_task, c_task)


class _FrameHandle:
    """A frame's id and a live reference to its placement in ``data.oMf``.

    Pinocchio returns references into ``data.oMf``, which stay valid (and up to date) for the
    lifetime of ``data``; the handle is rebuilt when the data object or the frame name changes.
    """

    def __init__(self, model: pin.Model) -> None:
        self._model = model
        self.name: object = None
        self.data: object = None
        self.frame_id = -1
        self.placement: Any = None

    def bind(self, data: Any, name: str) -> None:
        """Resolve ``name`` (raising pink's ``FrameNotFound``) and reference its placement."""
        if name is not self.name:
            if not self._model.existFrame(name):
                raise FrameNotFound(name, self._model.frames)
            self.frame_id = int(self._model.getFrameId(name))
            self.name = name
        self.placement = data.oMf[self.frame_id]
        self.data = data

    def current(self, data: Any, name: str) -> Any:
        """Placement of frame ``name`` in ``data`` (a live reference)."""
        if data is not self.data or name is not self.name:
            self.bind(data, name)
        return self.placement


class _ControlledColumns:
    """Copies the controlled columns of a 6 x nv Jacobian into a contiguous buffer."""

    def __init__(self, selection: ColumnSelection) -> None:
        self.full = selection.is_full
        self.index = selection.index
        self.is_slice = isinstance(self.index, slice)
        self.buffer = np.zeros((6, selection.size))

    def __call__(self, jacobian: np.ndarray) -> np.ndarray:
        if self.full:
            return jacobian
        if self.is_slice:
            buffer = self.buffer
            buffer[...] = jacobian[:, self.index]
            return buffer
        np.take(jacobian, self.index, axis=1, out=self.buffer)  # type: ignore[arg-type]
        return self.buffer


class FrameTaskTerm(TaskTerm):
    """``pink.tasks.FrameTask``: pose of a frame in the world frame (see module docstring).

    Stored with the opposite sign of pink's ``W J`` (``R = W Jlog6(T_tb) bJ_0b`` and
    ``s = -alpha W e = alpha W log6(T_tb)``), which leaves ``H = R^T R`` and ``c = R^T s``
    unchanged.
    """

    rows = 6

    def __init__(self, task: FrameTask, model: pin.Model, selection: ColumnSelection) -> None:
        self.task = task
        self._model = model
        self._frame = _FrameHandle(model)
        self._columns = _ControlledColumns(selection)
        self._weights = RowWeights(6)
        self._fallback = GenericTaskTerm(task, selection)
        self._scale = np.zeros(())  # 0-d scalar operand (cheaper in ufuncs than a float)

    def bind(self, acc: ObjectiveAccumulator, offset: int, linear_offset: int) -> None:
        self._R = acc.R[offset : offset + 6]
        self._s = acc.s[offset : offset + 6]

    def accumulate(self, configuration: Any, acc: ObjectiveAccumulator) -> None:
        task = self.task
        target = task.transform_target_to_world
        weights = self._weights
        cost = task.cost
        if target is None or not (
            (cost is weights.source and cost.tobytes() == weights.source_bytes)
            or weights.update(cost)
        ):
            self._R.fill(0.0)
            self._s.fill(0.0)
            self._fallback.accumulate(configuration, acc)  # raises TargetNotSet if no target
            return
        data = configuration.data
        frame = self._frame
        if data is not frame.data or task.frame is not frame.name:
            frame.bind(data, task.frame)
        transform_frame_to_world = frame.placement
        # pink: e = log6(T_bt) and J = -Jlog6(T_tb) bJ_0b. Since log6(T^-1) = -log6(T),
        # e = -log6(T_tb): one relative transform serves both.
        transform_frame_to_target = target.actInv(transform_frame_to_world)  # T_tb
        minus_error = pin.log6(transform_frame_to_target).vector  # -e
        jlog = pin.Jlog6(transform_frame_to_target)
        jacobian = pin.getFrameJacobian(self._model, data, frame.frame_id, _LOCAL)
        s = self._s
        scale = self._scale
        uniform = weights.uniform
        if uniform is None:
            np.multiply(jlog, weights.column, jlog)  # W Jlog6
            np.multiply(minus_error, weights.vector, s)
            scale[()] = task.gain
            np.multiply(s, scale, s)  # -alpha W e
        else:
            if uniform != 1.0:
                scale[()] = uniform
                np.multiply(jlog, scale, jlog)
            scale[()] = task.gain * uniform
            np.multiply(minus_error, scale, s)
        columns = self._columns
        if columns.full:
            np.dot(jlog, jacobian, self._R)
        else:
            np.dot(jlog, columns(jacobian), self._R)
        lm_damping = task.lm_damping
        if lm_damping != 0.0:
            acc.diagonal_scalar += lm_damping * float(s.dot(s))


class RelativeFrameTaskTerm(TaskTerm):
    """``pink.tasks.RelativeFrameTask``: pose of a frame in another robot frame.

    ``R = W J`` and ``s = alpha W e`` with ``J = Jlog6(T_tf) (fJ_0f - Ad(T_fr) rJ_0r)``.
    """

    rows = 6

    def __init__(
        self, task: RelativeFrameTask, model: pin.Model, selection: ColumnSelection
    ) -> None:
        self.task = task
        self._model = model
        self._frame = _FrameHandle(model)
        self._root = _FrameHandle(model)
        self._frame_columns = _ControlledColumns(selection)
        self._root_columns = _ControlledColumns(selection)
        self._weights = RowWeights(6)
        self._fallback = GenericTaskTerm(task, selection)
        self._difference = np.zeros((6, selection.size))

    def bind(self, acc: ObjectiveAccumulator, offset: int, linear_offset: int) -> None:
        self._R = acc.R[offset : offset + 6]
        self._s = acc.s[offset : offset + 6]

    def accumulate(self, configuration: Any, acc: ObjectiveAccumulator) -> None:
        task = self.task
        target = task.transform_target_to_root
        weights = self._weights
        if target is None or not weights.update(task.cost):
            self._R.fill(0.0)
            self._s.fill(0.0)
            self._fallback.accumulate(configuration, acc)  # raises TargetNotSet if no target
            return
        model = self._model
        data = configuration.data
        frame = self._frame
        root = self._root
        transform_frame_to_world = frame.current(data, task.frame)
        transform_root_to_world = root.current(data, task.root)
        transform_frame_to_root = transform_root_to_world.actInv(transform_frame_to_world)
        transform_frame_to_target = target.actInv(transform_frame_to_root)  # T_tf
        error = pin.log6(transform_frame_to_target).vector
        jacobian_frame = pin.getFrameJacobian(model, data, frame.frame_id, _LOCAL)
        jacobian_root = pin.getFrameJacobian(model, data, root.frame_id, _LOCAL)
        difference = self._difference
        np.dot(
            transform_frame_to_root.actionInverse,  # Ad(T_fr)
            self._root_columns(jacobian_root),
            out=difference,
        )
        np.subtract(self._frame_columns(jacobian_frame), difference, out=difference)
        jlog = pin.Jlog6(transform_frame_to_target)
        R = self._R
        s = self._s
        uniform = weights.uniform
        if uniform is None:
            np.multiply(jlog, weights.column, out=jlog)
            np.multiply(error, weights.vector, out=s)
            np.multiply(s, task.gain, out=s)
        else:
            if uniform != 1.0:
                np.multiply(jlog, uniform, out=jlog)
            np.multiply(error, task.gain * uniform, out=s)
        np.dot(jlog, difference, out=R)
        lm_damping = task.lm_damping
        if lm_damping != 0.0:
            acc.diagonal_scalar += lm_damping * float(s.dot(s))


class IdentityTaskTerm(TaskTerm):
    """Tasks whose Jacobian is ``[0 I]`` (posture, damping, joint velocity, low acceleration).

    The task rows are the tangent coordinates ``root_nv .. nv-1`` (pink excludes the floating
    base). Row ``t - root_nv`` only touches column ``t``, so with ``w`` the weights:
    ``H[t, t] += w**2``, ``c[t] += gain * w**2 * e[t - root_nv]`` (written as one linear row
    of the accumulator), and the LM term adds ``lm_damping * ||gain * w * e||**2`` to every
    diagonal entry (over every task row, controlled or not).
    """

    _ERROR_POSTURE = 0
    _ERROR_ZERO = 1
    _ERROR_CALL = 2

    def __init__(self, task: Task, model: pin.Model, selection: ColumnSelection) -> None:
        self.task = task
        self._model = model
        error_method = type(task).compute_error
        if error_method is PostureTask.compute_error:
            self._mode = self._ERROR_POSTURE
        elif error_method is DampingTask.compute_error:
            self._mode = self._ERROR_ZERO
        else:
            self._mode = self._ERROR_CALL
        nv = model.nv
        root_nv = _root_nv(model)
        self._k = nv - root_nv
        self._root_nv = root_nv
        tangent = np.arange(root_nv, nv)
        rows, positions = selection.map_tangent_indices(tangent)
        self._n_rows = int(rows.size)
        all_positions = rows.size == selection.size and np.array_equal(
            positions, np.arange(selection.size)
        )
        self._positions: slice | np.ndarray | None = None if all_positions else as_index(positions)
        self._row_positions: slice | np.ndarray = (
            slice(None) if all_positions else as_index(positions)
        )
        self._rows = as_index(rows)  # rows of the task error that are controlled
        self._tangent = as_index(tangent[rows])  # the same, as tangent indices
        self.linear_rows = 1 if self._mode != self._ERROR_ZERO and self._n_rows else 0
        self._weights = RowWeights(self._k)
        self._fallback = GenericTaskTerm(task, selection)

    @property
    def fusable_posture(self) -> bool:
        """A posture task whose rows cover every controlled coordinate (see ``qp.fused``)."""
        return self._mode == self._ERROR_POSTURE and self._positions is None and self._n_rows > 0

    def bind(self, acc: ObjectiveAccumulator, offset: int, linear_offset: int) -> None:
        if self.linear_rows:
            self._row = acc.linear_R[linear_offset]
            self._coefficient = acc.linear_s[linear_offset : linear_offset + 1]
            self._row.fill(0.0)
            self._coefficient.fill(0.0)

    def _skip_linear(self) -> None:
        if self.linear_rows:
            self._coefficient.fill(0.0)

    def accumulate(self, configuration: Any, acc: ObjectiveAccumulator) -> None:
        task = self.task
        weights = self._weights
        if not weights.update(task.cost):
            self._skip_linear()
            self._fallback.accumulate(configuration, acc)
            return
        mode = self._mode
        task_error: np.ndarray | None = None
        error_rows: np.ndarray | None = None
        if mode == self._ERROR_POSTURE:
            target = task.target_q  # type: ignore[attr-defined]
            if target is None:
                self._skip_linear()
                self._fallback.accumulate(configuration, acc)  # raises TargetNotSet
                return
            # e = q (-) q* (pin.difference(model, q*, q)); the task rows are e[root_nv:].
            difference = pin.difference(self._model, target, configuration.q)
            error_rows = difference[self._tangent]
            if task.lm_damping != 0.0:
                task_error = difference[self._root_nv :]
        elif mode == self._ERROR_CALL:
            task_error = np.asarray(task.compute_error(configuration), dtype=np.float64)
            if task_error.shape != (self._k,):
                self._skip_linear()
                self._fallback.accumulate(configuration, acc)  # pink's own error message
                return
            error_rows = task_error[self._rows]
        gain = task.gain
        uniform = weights.uniform
        if self._n_rows:
            if uniform is not None:
                w2 = uniform * uniform
                acc.add_diagonal(self._positions, w2)  # H[t, t] += w^2
                if error_rows is not None:  # c[t] += (gain w^2) e[t - root_nv]
                    self._row[self._row_positions] = error_rows
                    self._coefficient[0] = gain * w2
            else:
                w_rows = weights.vector[self._rows]
                w2_rows = np.multiply(w_rows, w_rows)
                acc.add_diagonal(self._positions, w2_rows)
                if error_rows is not None:  # c[t] += gain (w^2 e)[t - root_nv]
                    self._row[self._row_positions] = np.multiply(w2_rows, error_rows)
                    self._coefficient[0] = gain
        lm_damping = task.lm_damping
        if lm_damping != 0.0 and task_error is not None:
            if uniform is not None:
                weighted = np.multiply(task_error, -gain * uniform)
            else:
                weighted = np.multiply(task_error, weights.vector)
                np.multiply(weighted, -gain, out=weighted)  # W (-alpha e), every task row
            acc.diagonal_scalar += lm_damping * float(weighted.dot(weighted))


def _same(method: Any, reference: Any) -> bool:
    return method is reference


def compile_task(task: Task, model: pin.Model, selection: ColumnSelection) -> TaskTerm:
    """Pick the contribution term of ``task`` (see module docstring for the rules)."""
    cls = type(task)
    if not _same(getattr(cls, "compute_qp_objective", None), Task.compute_qp_objective):
        return GenericTaskTerm(task, selection)
    jacobian = getattr(cls, "compute_jacobian", None)
    error = getattr(cls, "compute_error", None)
    if (
        isinstance(task, FrameTask)
        and _same(jacobian, FrameTask.compute_jacobian)
        and _same(error, FrameTask.compute_error)
    ):
        return FrameTaskTerm(task, model, selection)
    if (
        isinstance(task, RelativeFrameTask)
        and _same(jacobian, RelativeFrameTask.compute_jacobian)
        and _same(error, RelativeFrameTask.compute_error)
    ):
        return RelativeFrameTaskTerm(task, model, selection)
    if _same(jacobian, PostureTask.compute_jacobian) or _same(
        jacobian, JointVelocityTask.compute_jacobian
    ):
        return IdentityTaskTerm(task, model, selection)
    return GenericTaskTerm(task, selection)
