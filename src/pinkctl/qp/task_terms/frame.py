"""Frame tasks: ``FrameTask`` and ``RelativeFrameTask`` terms, with the frame handle and
controlled-column copy they share (math in :mod:`pinkctl.qp.task_terms`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin
from pink.exceptions import FrameNotFound
from pink.tasks import FrameTask, RelativeFrameTask

from ..objective import ObjectiveAccumulator
from ..selection import ColumnSelection
from .base import GenericTaskTerm, TaskTerm
from .weights import RowWeights

__all__ = ["ControlledColumns", "FrameHandle", "FrameTaskTerm", "RelativeFrameTaskTerm"]

_LOCAL = pin.ReferenceFrame.LOCAL


class FrameHandle:
    """A frame's id and a live reference to its placement in ``data.oMf``.

    Pinocchio returns references into ``data.oMf``, which stay valid (and up to date) for the
    lifetime of ``data``; the handle is rebuilt when the data object or the frame name changes.
    """

    def __init__(self, model: pin.Model) -> None:
        self.model = model
        self.name: object = None
        self.data: object = None
        self.frame_id = -1
        self.placement: Any = None

    def current(self, data: Any, name: str) -> Any:
        """Placement of frame ``name`` in ``data`` (a live reference; pink's
        ``FrameNotFound`` for an unknown frame)."""
        if name is not self.name:
            if not self.model.existFrame(name):
                raise FrameNotFound(name, self.model.frames)
            self.frame_id = int(self.model.getFrameId(name))
            self.name, self.data = name, None
        if data is not self.data:
            self.placement = data.oMf[self.frame_id]
            self.data = data
        return self.placement


class ControlledColumns:
    """The controlled columns of a 6 x nv Jacobian: a view for a slice of columns, else
    gathered into a buffer."""

    def __init__(self, selection: ColumnSelection) -> None:
        self.index = selection.index
        self.is_slice = isinstance(self.index, slice)
        self.buffer = np.zeros((6, selection.size))

    def __call__(self, jacobian: np.ndarray) -> np.ndarray:
        if self.is_slice:
            return jacobian[:, self.index]
        np.take(jacobian, self.index, axis=1, out=self.buffer)  # type: ignore[arg-type]
        return self.buffer


class FrameTaskTerm(TaskTerm):
    """``pink.tasks.FrameTask``: pose of a frame in the world frame (see module docstring).

    Stored with the opposite sign of pink's ``W J`` (``R = W Jlog6(T_tb) bJ_0b`` and
    ``s = -alpha W e = alpha W log6(T_tb)``), which leaves ``H = R^T R`` and ``c = R^T s``
    unchanged.

    Attributes (read by the controller's compiled tick too):
        model: The Pinocchio model.
        frame_handle: The task frame's id and live placement.
        columns: The controlled columns of a frame Jacobian.
        weights: The task's row weights ``W``.
    """

    rows = 6
    #: The task's attribute holding its target.
    target_name = "transform_target_to_world"

    def __init__(self, task: FrameTask, model: pin.Model, selection: ColumnSelection) -> None:
        self.task = task
        self.model = model
        self.frame_handle = FrameHandle(model)
        self.columns = ControlledColumns(selection)
        self.weights = RowWeights(6)
        self._fallback = GenericTaskTerm(task, selection)
        self._scale = np.zeros(())  # 0-d scalar operand (cheaper in ufuncs than a float)

    def bind(self, acc: ObjectiveAccumulator, offset: int, linear_offset: int) -> None:
        self._R = acc.R[offset : offset + 6]
        self._s = acc.s[offset : offset + 6]

    def target(self) -> pin.SE3 | None:
        """The task's target when pink's formula applies this tick (a target, weights it
        reads), else None."""
        task = self.task
        target = getattr(task, self.target_name)
        weights = self.weights
        cost = task.cost
        if target is None or not (
            (cost is weights.source and cost.tobytes() == weights.source_bytes)
            or weights.update(cost)
        ):
            return None
        return target

    def accumulate(self, configuration: Any, acc: ObjectiveAccumulator) -> None:
        target = self.target()
        if target is None:
            self._R.fill(0.0)
            self._s.fill(0.0)
            self._fallback.accumulate(configuration, acc)  # raises TargetNotSet if no target
            return
        self.write_rows(configuration.data, target, self._R, self._s)
        lm_damping = self.task.lm_damping
        if lm_damping != 0.0:
            acc.diagonal_scalar += lm_damping * float(self._s.dot(self._s))

    def write_rows(self, data: Any, target: pin.SE3, R: np.ndarray, s: np.ndarray) -> None:
        """``R = W Jlog6(T_tb) bJ_0b[:, c]`` and ``s = alpha W log6(T_tb)`` of this tick, from
        the tool pose in its target frame ``T_tb``."""
        # pink: e = log6(T_bt) and J = -Jlog6(T_tb) bJ_0b. Since log6(T^-1) = -log6(T),
        # e = -log6(T_tb): one relative transform serves both.
        transform_frame_to_target = target.actInv(self.frame_handle.current(data, self.task.frame))
        jlog = pin.Jlog6(transform_frame_to_target)
        jacobian = pin.getFrameJacobian(self.model, data, self.frame_handle.frame_id, _LOCAL)
        self.weigh(jlog, pin.log6(transform_frame_to_target).vector, s, self._scale)
        np.dot(jlog, self.columns(jacobian), R)

    def weigh(self, jlog: np.ndarray, log: np.ndarray, s: np.ndarray, scale: np.ndarray) -> None:
        """``jlog <- W jlog`` in place and ``s = alpha W log`` (``alpha`` the task's gain,
        ``W`` its weights; scalar products when the weights are uniform). ``scale`` is a 0-d
        buffer (a cheaper ufunc operand than a Python float)."""
        weights = self.weights
        uniform = weights.uniform
        if uniform is None:
            np.multiply(jlog, weights.column, jlog)  # W Jlog6
            np.multiply(log, weights.vector, s)
            scale[()] = self.task.gain
            np.multiply(s, scale, s)  # -alpha W e
        else:
            if uniform != 1.0:
                scale[()] = uniform
                np.multiply(jlog, scale, jlog)
            scale[()] = self.task.gain * uniform
            np.multiply(log, scale, s)


class RelativeFrameTaskTerm(FrameTaskTerm):
    """``pink.tasks.RelativeFrameTask``: pose of a frame in another robot frame.

    ``R = W J`` and ``s = alpha W e`` with ``J = Jlog6(T_tf) (fJ_0f - Ad(T_fr) rJ_0r)``.
    """

    target_name = "transform_target_to_root"

    def __init__(
        self, task: RelativeFrameTask, model: pin.Model, selection: ColumnSelection
    ) -> None:
        super().__init__(task, model, selection)  # type: ignore[arg-type]
        self._root = FrameHandle(model)
        self._root_columns = ControlledColumns(selection)
        self._difference = np.zeros((6, selection.size))

    def write_rows(self, data: Any, target: pin.SE3, R: np.ndarray, s: np.ndarray) -> None:
        task, model, frame, root = self.task, self.model, self.frame_handle, self._root
        transform_frame_to_world = frame.current(data, task.frame)
        transform_root_to_world = root.current(data, task.root)  # type: ignore[attr-defined]
        transform_frame_to_root = transform_root_to_world.actInv(transform_frame_to_world)
        transform_frame_to_target = target.actInv(transform_frame_to_root)  # T_tf
        jacobian_frame = pin.getFrameJacobian(model, data, frame.frame_id, _LOCAL)
        jacobian_root = pin.getFrameJacobian(model, data, root.frame_id, _LOCAL)
        difference = self._difference
        np.dot(  # Ad(T_fr) rJ_0r
            transform_frame_to_root.actionInverse, self._root_columns(jacobian_root), difference
        )
        np.subtract(self.columns(jacobian_frame), difference, out=difference)
        jlog = pin.Jlog6(transform_frame_to_target)
        self.weigh(jlog, pin.log6(transform_frame_to_target).vector, s, self._scale)
        np.dot(jlog, difference, out=R)
