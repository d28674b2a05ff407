"""The compiled control tick: a :class:`PinkIKController` tick in one C++ call.

Most controllers solve the fused arm problem (:mod:`pinkctl.qp.fused`: a frame task, an
optional posture task, pink's configuration and velocity limits; or the same with more frame
tasks among ``extra_tasks``, which the generic assembly writes) with the native box QP, and
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
from ..core.state import JointState, SpatialState
from ..core.state._space import QUATERNION_MIN_NORM
from ..motion.native import _Kernel
from ..qp import CompiledQP
from ..qp.box_qp import NativeBoxQP
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
        fused = qp._fused
        if fused is not None:
            velocity = None if fused._velocity is None else fused._velocity.limit
            return _Parts([fused._frame], fused._posture, fused._limit, velocity, fused._tangent)
        assembly = qp._assembly
        terms = assembly._terms
        frames = [term for term in terms if type(term) is FrameTaskTerm]
        postures = [
            term for term in terms if type(term) is IdentityTaskTerm and term.fusable_posture
        ]
        plan = assembly.limit_plan
        box = plan.box_terms[0] if len(plan.box_terms) == 1 else None
        if (
            len(frames) + len(postures) != len(terms)
            or len(postures) > 1
            or assembly.barrier_terms
            or plan.row_terms
            or not (
                isinstance(box, JointBox)
                or (
                    isinstance(box, ConfigurationLimitBox)
                    and not box.empty
                    and box.positions is None
                )
            )
        ):
            raise NotCovered("the QP has more than frame tasks, a posture task and joint limits")
        tools = [term for term in frames if term.task is tool]
        if not tools:
            raise NotCovered("the tool frame task is not in the QP")
        frames.remove(tools[0])
        velocity = box.velocity.limit if isinstance(box, JointBox) else None
        return _Parts(
            [tools[0], *frames], postures[0] if postures else None, box.limit, velocity, box.tangent
        )


class CompiledTick:
    """The C++ tick bound to one controller's QP, configuration and shaper.

    Raises:
        NotCovered: The controller has something the compiled tick does not cover.
    """

    def __init__(self, controller: Any) -> None:
        module, reason = tick_module()
        if module is None:
            raise NotCovered(reason)
        qp, mode, shaper, joints = (
            controller._qp,
            controller._mode,
            controller._shaper,
            controller._joints,
        )
        configuration = controller._configuration
        if configuration is None:
            raise NotCovered("no configuration before a reset")
        if type(qp) is not CompiledQP:
            raise NotCovered("the QP is not pinkctl's compiled QP (qp_path or priority levels)")
        native: NativeBoxQP | None = qp._native
        parts = _Parts.of(qp, controller._problem.frame)
        if native is None:
            raise NotCovered("the solver is not the native box QP")
        if mode is TickMode.BOXED or (mode is TickMode.APPROACH and not shaper.native):
            raise NotCovered(f"tick mode {mode.name} without the native shaper")
        every = joints.every
        if joints.base is not None or every.balls or every.is_continuous.any():
            raise NotCovered("a floating base, a ball joint or a continuous joint")
        avoid = getattr(controller, "_avoid", None)
        if configuration.collision_model is not None:
            raise NotCovered("collision distances (a configuration with a collision model)")
        if avoid is not None and avoid.native_check() is None:
            raise NotCovered("collision avoidance without its native check")
        if not controller._problem.whole_body.reads_nothing:
            raise NotCovered("whole-body targets (frames, CoM) read from the setpoint")
        columns = np.asarray(qp.controlled_v_indices)
        tangent = np.arange(configuration.model.nv)  # indices or slices of it, as arrays
        if not np.array_equal(tangent[parts.tangent], columns) or (
            parts.posture is not None
            and not np.array_equal(tangent[parts.posture.tangent], columns)
        ):
            raise NotCovered("the limits or posture do not cover every controlled joint")
        model = configuration.model
        ws = qp._ws
        if native._workspace is not ws or native._generation != ws.generation:
            native._bind(ws)
        space_q = np.full(len(controller.robot_joint_space), -1, dtype=np.intp)
        space_q[every.space_indices] = every.idx_q
        n = qp.n
        self.q = np.array(configuration.q, dtype=np.float64)  # the C++ tick's work buffer
        self._q_home = np.array(controller.robot.q0, dtype=np.float64)
        if mode is TickMode.APPROACH:
            size = getattr(module, "kernel_size", lambda: -1)()
            if size != ctypes.sizeof(_Kernel):  # built from other sources than these
                raise NotCovered("the compiled tick's kernel does not match pinkctl: rebuild it")
            arrays = shaper._native._arrays
            kernel = (shaper._native._pointer, arrays["q"].ctypes.data, arrays["v"].ctypes.data)
            plain: tuple[Any, ...] = (None, None, None)
        else:
            kernel = (None, None, None)
            plain = tuple(
                a.ctypes.data for a in (shaper._velocity_limit, shaper._lower, shaper._upper)
            )
        addresses = (
            self.q.ctypes.data,
            self._q_home.ctypes.data,
            *(array.ctypes.data for array in (ws.H, ws.c, ws.lb, ws.ub, native._x)),
            native._state.ctypes.data,
            native._work.ctypes.data,
            *kernel,
            *plain,
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
        try:
            self.run = self._tick.run
            self.aim = self._tick.aim
            self._aim_pose = self._tick.aim_pose
        except AttributeError as exc:  # built from other sources than these
            reason = f"the compiled tick does not match pinkctl ({exc}): rebuild it"
            raise NotCovered(reason) from exc
        self._frame = frame.task.frame
        self._site_space: Any = None
        self._site_row = -1
        self.qp = qp
        self.configuration = configuration
        self.generation = ws.generation
        self.dt = float(controller.dt)
        self.approach = mode is TickMode.APPROACH
        self.n = n
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

    def aims(self, sites: SpatialState) -> bool:
        """Phase 3 for a setpoint of site poses alone: True when the frame's pose was read as
        :class:`~pinkctl.controllers.frame_target.FrameTarget` reads it (or the setpoint has
        no such site), False to let it read the setpoint (a position without orientation, a
        refused target)."""
        space = sites.name_space
        if space is not self._site_space:
            self._site_row = space.index.get(self._frame, -1)
            self._site_space = space
        row = self._site_row
        if row < 0:
            return True
        valid = sites.valid_array[row]
        if not (valid[0] and valid[1]):
            return False
        return bool(self._aim_pose(sites.position_data[row], sites.orientation_data[row]))

    def reads(self, joints: JointState) -> bool:
        """Whether the estimate's joint state is over the controller's joint space with every
        position valid (then the C++ tick maps it to the configuration)."""
        space = joints.name_space
        if space is not self._read_space:
            if list(space.names) != self._names:
                return False
            self._read_space = space
        return bool(joints.valid_array[0].tobytes() == self._all_valid)
