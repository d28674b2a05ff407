"""The compiled control tick: a :class:`PinkIKController` tick in one C++ call.

Most controllers solve the common arm problem (:mod:`pinkctl.qp.assembly`: a frame task, an
optional posture task, pink's configuration and velocity limits; or the same with more frame
tasks among ``extra_tasks``) with the native box QP, and
either commit the velocity (no motion limits, :attr:`TickMode.PLAIN`) or follow it under
motion limits (:attr:`TickMode.APPROACH`). For those, ``pinkctl/_native/_tick.cpp`` runs
phases 2, 4 and 5 of the tick (forward kinematics and the frame Jacobian, the QP and its
solve, the shaper's step) in one call, on the controller's own objects: the pink
configuration's ``data`` and ``q``, the compiled QP's workspace and warm start, the shaper's
kernel. The Python path stays the reference: both give the same commands to rounding
(``tests/test_compiled_tick.py``: 1e-9 over whole runs).

Whatever the compiled tick does not cover runs the Python path, per controller (tasks other
than frame tasks and one posture task, extra limits or barriers, collision distances, collision
avoidance without its native check, a floating base,
ball or continuous joints, another solver, the pink QP path, priority levels, a
``pre_step_callback``, the extension missing) or per tick (a parameter that leaves the fused
case, a box the box QP hands to DAQP, a target the controller refuses, a tick where collision
rows may bind: :meth:`~pinkctl.controllers.collision.CollisionAvoidance.quiet`).
:attr:`~pinkctl.controllers.compiled_path.CompiledTicking.compiled` says which path runs, and
:attr:`~pinkctl.controllers.compiled_path.CompiledTicking.compiled_reason` why not the compiled
one.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pinocchio as pin

from .._native import tick_module
from ..core.poses import SitePoseReader
from ..core.state import RobotState
from ..core.state._space import QUATERNION_MIN_NORM
from ..motion.native import _Kernel
from ..qp import CompiledQP
from ..qp.limit_terms import ConfigurationLimitBox, JointBox
from ..qp.task_terms import FrameTaskTerm, IdentityTaskTerm
from .frame_target import MAX_TARGET_DISTANCE
from .tick_mode import TickMode

__all__ = ["CompiledTick", "NotCovered"]


class NotCovered(Exception):
    """The compiled tick does not cover a controller (the message says why)."""


class _Parts:
    """The compiled QP's frame terms (the tool's first), posture term and joint box, when it is
    the fused arm problem or the same with more frame tasks (the generic assembly's)."""

    def __init__(
        self,
        frames: list[FrameTaskTerm],
        posture: IdentityTaskTerm | None,
        limit: Any,
        velocity_limit: Any,
        tangent: Any,
    ) -> None:
        self.frames, self.posture = frames, posture
        self.limit, self.velocity_limit, self.tangent = limit, velocity_limit, tangent

    @staticmethod
    def of(qp: CompiledQP, tool: Any) -> _Parts:
        """The parts of ``qp`` whose tool frame task is ``tool``.

        Raises:
            NotCovered: Another problem.
        """
        return _Parts._of_assembly(qp._assembly, tool)

    @staticmethod
    def _of_assembly(assembly: Any, tool: Any) -> _Parts:
        """The parts of the generic assembly's QP (:meth:`of`)."""
        terms = assembly._terms
        frames = [term for term in terms if type(term) is FrameTaskTerm]
        postures = [
            term for term in terms if type(term) is IdentityTaskTerm and term.fusable_posture
        ]
        tasks_only = len(frames) + len(postures) == len(terms) and len(postures) <= 1
        box = _joint_box(assembly, tasks_only=tasks_only)
        velocity_box = box.velocity if isinstance(box, JointBox) else None
        velocity = None if velocity_box is None else velocity_box.limit
        posture = postures[0] if postures else None
        return _Parts(_tool_first(frames, tool), posture, box.limit, velocity, box.tangent)


def _tool_first(frames: list[FrameTaskTerm], tool: Any) -> list[FrameTaskTerm]:
    """``frames`` with the term of the ``tool`` task first.

    Raises:
        NotCovered: No term of that task.
    """
    tools = [term for term in frames if term.task is tool]
    if not tools:
        raise NotCovered("the tool frame task is not in the QP")
    return [tools[0], *(term for term in frames if term is not tools[0])]


def _joint_box(assembly: Any, *, tasks_only: bool) -> Any:
    """The assembly's one box term when the compiled tick writes it (pink's configuration and
    velocity limits, or configuration limits over every joint), with no barrier or limit rows
    and (``tasks_only``) no task terms other than frame tasks and one posture task.

    Raises:
        NotCovered: Anything else.
    """
    plan = assembly.limit_plan
    box = plan.box_terms[0] if len(plan.box_terms) == 1 else None
    whole_range = isinstance(box, ConfigurationLimitBox) and not box.empty and box.positions is None
    covered = isinstance(box, JointBox) or whole_range
    if not tasks_only or assembly.barrier_terms or plan.row_terms or not covered:
        raise NotCovered("the QP has more than frame tasks, a posture task and joint limits")
    return box


def _covered_parts(controller: Any) -> _Parts:
    """The parts of the controller's QP (:class:`_Parts`), after checking the compiled tick
    covers the controller.

    Raises:
        NotCovered: What it does not cover (the first found).
    """
    if controller._configuration is None:
        raise NotCovered("no configuration before a reset")
    qp = controller._qp
    if type(qp) is not CompiledQP:
        raise NotCovered("the QP is not pinkctl's compiled QP (qp_path or priority levels)")
    parts = _Parts.of(qp, controller._problem.frame)
    if qp._native is None:
        raise NotCovered("the solver is not the native box QP")
    _check_controller(controller)
    return parts


def _check_controller(controller: Any) -> None:
    """Raise :class:`NotCovered` for a tick mode, joints or targets the compiled tick does
    not cover."""
    mode = controller._mode
    if mode is TickMode.BOXED or (mode is TickMode.APPROACH and not controller._shaper.native):
        raise NotCovered(f"tick mode {mode.name} without the native shaper")
    joints = controller._joints
    every = joints.every
    if joints.base is not None or every.balls or every.is_continuous.any():
        raise NotCovered("a floating base, a ball joint or a continuous joint")
    if controller._configuration.collision_model is not None:
        raise NotCovered("collision distances (a configuration with a collision model)")
    avoid = getattr(controller, "_avoid", None)
    if avoid is not None and avoid.native_check() is None:
        raise NotCovered("collision avoidance without its native check")
    if not controller._problem.whole_body.reads_nothing:
        raise NotCovered("whole-body targets (frames, CoM) read from the setpoint")


def _controlled_columns(qp: CompiledQP, parts: _Parts, nv: int) -> np.ndarray:
    """The QP's tangent columns (the controlled joints' velocity indices).

    Raises:
        NotCovered: Limits or a posture task over other joints.
    """
    columns = np.asarray(qp.controlled_v_indices)
    tangent = np.arange(nv)  # indices or slices of it, as arrays
    if not np.array_equal(tangent[parts.tangent], columns) or (
        parts.posture is not None and not np.array_equal(tangent[parts.posture.tangent], columns)
    ):
        raise NotCovered("the limits or posture do not cover every controlled joint")
    return columns


def _shaper_addresses(module: Any, mode: TickMode, shaper: Any) -> tuple[Any, ...]:
    """The shaper's addresses the C++ tick writes: its native kernel, ``q`` and ``v`` under
    motion limits (:attr:`TickMode.APPROACH`), else its velocity limit and position bounds.

    Raises:
        NotCovered: A C++ tick built against another kernel layout.
    """
    if mode is not TickMode.APPROACH:
        plain = (shaper._velocity_limit, shaper._lower, shaper._upper)
        return (None, None, None, *(a.ctypes.data for a in plain))
    size = getattr(module, "kernel_size", lambda: -1)()
    if size != ctypes.sizeof(_Kernel):  # built from other sources than these
        raise NotCovered("the compiled tick's kernel does not match pinkctl: rebuild it")
    arrays = shaper._native._arrays
    kernel = (shaper._native._pointer, arrays["q"].ctypes.data, arrays["v"].ctypes.data)
    return (*kernel, None, None, None)


class CompiledTick:
    """The C++ tick bound to one controller's QP, configuration and shaper.

    Raises:
        NotCovered: The controller has something the compiled tick does not cover.
    """

    def __init__(self, controller: Any) -> None:
        module, reason = tick_module()
        if module is None:
            raise NotCovered(reason)
        parts = _covered_parts(controller)
        qp: CompiledQP = controller._qp
        mode, shaper, joints = controller._mode, controller._shaper, controller._joints
        configuration = controller._configuration
        model = configuration.model
        columns = _controlled_columns(qp, parts, model.nv)
        native = qp._native
        assert native is not None  # _covered_parts checked it
        ws = qp._ws
        if native._workspace is not ws or native._generation != ws.generation:
            native._bind(ws)
        space_q = np.full(len(controller.robot_joint_space), -1, dtype=np.intp)
        space_q[joints.every.space_indices] = joints.every.idx_q
        self.q = np.array(configuration.q, dtype=np.float64)  # the C++ tick's work buffer
        self._q_home = np.array(controller.robot.q0, dtype=np.float64)
        addresses = (
            self.q.ctypes.data,
            self._q_home.ctypes.data,
            *(array.ctypes.data for array in (ws.H, ws.c, ws.lb, ws.ub, native._x)),
            native._state.ctypes.data,
            native._work.ctypes.data,
            *_shaper_addresses(module, mode, shaper),
        )
        frame = parts.frames[0]
        self._tick = module.Tick(
            model,
            configuration.data,
            int(model.getFrameId(frame.task.frame)),
            frame.task,
            None if parts.posture is None else parts.posture.task,
            parts.limit,
            parts.velocity_limit,
            columns.tolist(),
            np.asarray(joints.controlled.idx_q).tolist(),
            space_q.tolist(),
            float(controller.dt),
            float(qp.damping),
            1 if mode is TickMode.APPROACH else 0,
            addresses,
            QUATERNION_MIN_NORM,
            MAX_TARGET_DISTANCE,
            tuple((int(model.getFrameId(term.task.frame)), term.task) for term in parts.frames[1:]),
        )
        self._bind_entry_points()
        self._reader = SitePoseReader(frame.task.frame)
        self.qp = qp
        self.configuration = configuration
        self.generation = ws.generation
        self.dt = float(controller.dt)
        self.approach = mode is TickMode.APPROACH
        self.n = qp.n
        # keeps the shaper's and box QP's arrays alive with the addresses above
        self._owners = (shaper, native, ws)
        self.held_copies = (pin.SE3.Identity(), pin.SE3.Identity())
        self.flip = 0
        # the command's joint state: the controlled map's name space and validity
        self.space = joints.controlled._space
        self.valid = joints.controlled._valid_pos_vel
        self._all_valid = np.ones(len(space_q), dtype=bool).tobytes()
        self._names = list(self.space.names)
        self._read_space: Any = self.space
        # the last estimate mask with every position valid, the last setpoint mask (and row)
        # with the tool's pose valid: a state over a JointSpace / SiteSpace shares its mask
        self._read_valid: Any = None
        self._pose_valid: Any = None
        self._pose_space: Any = None
        self._pose_row = -1

    def _bind_entry_points(self) -> None:
        """Bind the C++ tick's ``run``, ``aim`` and ``aim_pose``.

        Raises:
            NotCovered: A C++ tick built from other sources than these.
        """
        try:
            self.run = self._tick.run
            self.aim = self._tick.aim
            self._aim_pose = self._tick.aim_pose
        except AttributeError as exc:  # built from other sources than these
            reason = f"the compiled tick does not match pinkctl ({exc}): rebuild it"
            raise NotCovered(reason) from exc

    def aims(self, setpoint: RobotState) -> bool:
        """Phase 3 for a setpoint of site poses alone: True when the frame's pose was read as
        :class:`~pinkctl.controllers.frame_target.FrameTarget` reads it (or the setpoint has
        no such site), False to let it read the setpoint (joints in it, no sites, a position
        without orientation, a refused target)."""
        sites = setpoint.sites
        if sites is None or setpoint.joints is not None:
            return False
        valid, space = sites.valid_array, sites.name_space
        if valid is not self._pose_valid or space is not self._pose_space:
            row = self._reader.row(sites)
            if row < 0:
                return True
            if not (valid[row, 0] and valid[row, 1]):
                return False
            # a SiteSpace's states share their (read-only) mask: looked at once
            self._pose_valid, self._pose_space, self._pose_row = valid, space, row
        positions, orientations = sites.position_data, sites.orientation_data
        if len(positions) > 1:  # (one frame: the (1, 3) and (1, 4) arrays as they are)
            row = self._pose_row
            positions, orientations = positions[row], orientations[row]
        return bool(self._aim_pose(positions, orientations))

    def measured(self, estimate: RobotState) -> np.ndarray | None:
        """The estimate's joint positions row when its joint state is over the controller's
        joint space with every position valid (then the C++ tick maps it to the
        configuration), else None."""
        joints = estimate.joints
        if joints is None:
            return None
        space, valid = joints.name_space, joints.valid_array
        if space is not self._read_space:
            if list(space.names) != self._names:
                return None
            self._read_space = space
        if valid is not self._read_valid:  # a JointSpace's states share one (read-only) mask
            if valid[0].tobytes() != self._all_valid:
                return None
            self._read_valid = valid
        return joints._position_row()  # (a JointSpace's state: its positions array)
