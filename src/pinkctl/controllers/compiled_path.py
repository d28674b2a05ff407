"""How :class:`~pinkctl.controllers.PinkIKController` runs the compiled tick where it applies.

:class:`CompiledTicking` is mixed into the controller: ``forward`` and ``step`` hand their tick
to :class:`~pinkctl.controllers.compiled_tick.CompiledTick` (phases 2, 4 and 5 in one C++ call,
the estimate's joint row and a site-pose target read there too) when it covers the controller,
and record what the Python path would have recorded (the shaper's command, the held target, the
QP's last solver, the status). Anything else runs the Python path: the reference.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pinocchio as pin

from ..core.state import JointState, RobotState
from ..core.state._space import QUATERNION_MIN_NORM
from ..errors import InputError
from .compiled_tick import CompiledTick, NotCovered
from .frame_target import MAX_TARGET_DISTANCE
from .status import ControllerStatus

__all__ = ["CompiledTicking"]

_BOX = "box"
_OK = ControllerStatus.OK


def _target(pose: Any) -> pin.SE3 | None:
    """The tool target of a ``target_pose`` of
    :meth:`~pinkctl.controllers.array_step.ArrayStep.step` as the Python path reads it (a
    pin.SE3 or ``(position, quaternion wxyz)``, through a normalised quaternion), or None when
    it is another form, malformed or refused: the Python path then says why. (The C++ tick's
    ``aim`` does the same for a pin.SE3.)"""
    if type(pose) is pin.SE3:
        px, py, pz, x, y, z, w = pin.SE3ToXYZQUAT(pose).tolist()
    elif type(pose) is tuple and len(pose) == 2:
        try:
            px, py, pz = np.asarray(pose[0], dtype=np.float64).tolist()
            w, x, y, z = np.asarray(pose[1], dtype=np.float64).tolist()
        except (TypeError, ValueError):
            return None
    else:
        return None
    squared = w * w + x * x + y * y + z * z
    distance = px * px + py * py + pz * pz
    if (
        not math.isfinite(squared + distance)
        or not 1e-200 < squared < 1e200
        or max(abs(w), abs(x), abs(y), abs(z)) < QUATERNION_MIN_NORM
        or distance > MAX_TARGET_DISTANCE**2
    ):
        return None
    scale = 1.0 / math.sqrt(squared)
    return pin.XYZQUATToSE3((px, py, pz, x * scale, y * scale, z * scale, w * scale))


class CompiledTicking:
    """Mixed into :class:`~pinkctl.controllers.PinkIKController`: the compiled tick
    (module docstring), used wherever it covers the controller."""

    _compiled_tick: CompiledTick | None = None
    _compiled_wanted = True
    _compiled_reason = "no tick yet"
    _compiled_refused: tuple[Any, ...] | None = None
    #: ticks run compiled (for tests and benchmarks)
    compiled_ticks = 0

    @property
    def compiled(self) -> bool:
        """Whether the next tick runs compiled (as far as the controller's structure tells:
        a tick whose parameters leave the fused case runs the Python path). Set False to run
        the Python path (the reference), True to use the compiled tick where it applies."""
        return self._bound_tick() is not None

    @compiled.setter
    def compiled(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise InputError(f"compiled must be True or False, got {value!r}")
        self._compiled_wanted = value
        self._compiled_tick = None
        self._compiled_refused = None
        self._compiled_reason = "switched off" if not value else "no tick yet"

    @property
    def compiled_reason(self) -> str:
        """Why the compiled tick does not run ("" when it does)."""
        return "" if self._bound_tick() is not None else self._compiled_reason

    def _bound_tick(self) -> CompiledTick | None:
        """The compiled tick for the controller as it is now, or None (reason recorded)."""
        tick = self._compiled_tick
        controller: Any = self
        if (
            tick is not None
            and tick.qp is controller._qp
            and tick.configuration is controller._configuration
            and tick.generation == tick.qp._ws.generation
            and tick.dt == controller.dt
        ):
            return tick if controller._pre_step_callback is None else None
        self._compiled_tick = None
        if not self._compiled_wanted:
            return None
        tick = self._new_tick()
        return tick if controller._pre_step_callback is None else None

    def _new_tick(self) -> CompiledTick | None:
        """A compiled tick bound to the controller as it is now, or None with the reason
        recorded (a controller state refused before is not examined again)."""
        controller: Any = self
        key = (controller._qp, controller._configuration, controller.dt)
        refused = self._compiled_refused
        if refused is not None and refused[0] is key[0] and refused[1] is key[1]:
            if refused[2] == key[2]:
                return None
        self._compiled_refused = None
        if controller._configuration is None:
            self._compiled_reason = "no configuration before a reset"
            return None
        try:
            tick = CompiledTick(controller)
        except NotCovered as exc:
            self._compiled_reason = str(exc)
            self._compiled_refused = key
            return None
        self._compiled_tick = tick
        self._compiled_reason = ""
        return tick

    def _compiled_run(
        self, tick: CompiledTick, measured: np.ndarray, space: bool, output: int
    ) -> Any:
        """Phases 2, 4 and 5 in C++: the command ``(positions, velocities, q[, over the joint
        space])`` (``output``: see ``_tick.cpp``), or None (the Python path runs the tick)."""
        controller: Any = self
        avoid = getattr(controller, "_avoid", None)
        if avoid is not None and not avoid.quiet(measured, space):
            return None  # collision rows may bind: the Python path measures them
        shaper = controller._shaper
        held = tick.held_copies[tick.flip]
        command = tick.run(
            measured,
            space,
            controller._integrate_from == "command",
            shaper._position,
            controller._held_target,
            held,
            shaper._follows,
            output,
        )
        if command is None:
            return None
        controller._configuration.q = command[2]  # a new array per tick, as on the Python path
        shaper._position, shaper._velocity = command[0], command[1]
        if tick.approach:
            shaper._follows = True
            controller._held_target = held
            tick.flip ^= 1  # the other copy is written next tick: this one stays as it is
        else:
            shaper._follows = False
        qp = tick.qp
        qp._has_problem = True
        qp._last_solver = _BOX
        controller._status = _OK
        controller.last_error = None
        self.compiled_ticks += 1
        return command

    def _compiled_forward(
        self, estimate: RobotState, setpoint: RobotState | None
    ) -> RobotState | None:
        """The tick of :meth:`~pinkctl.controllers.PinkIKController.forward` (after its
        checks), or None: the Python path runs it (phases 1 and 3 included, again: they are
        idempotent)."""
        refused = self._compiled_refused  # not covered, and nothing changed since: no call
        if refused is not None and self._refusal_stands(refused):
            return None
        tick = self._bound_tick()
        if tick is None:
            return None
        controller: Any = self
        q, space = tick.measured(estimate), True  # every position there: C++ maps them
        if q is None:
            read = controller.read_estimate(estimate)
            if read is None:
                return None
            q, space = read[1], False
        if not (setpoint is None or tick.aims(setpoint) or controller.update_targets(setpoint)):
            return None
        command = self._compiled_run(tick, q, space, 2)
        if command is None:
            return None
        return RobotState(joints=JointState.from_trusted(tick.space, command[3], tick.valid))

    def _refusal_stands(self, refused: tuple[Any, ...]) -> bool:
        """Whether the compiled tick was refused for the controller's present QP and
        configuration (then :meth:`_compiled_forward` does not ask again)."""
        return refused[0] is getattr(self, "_qp", None) and refused[1] is getattr(
            self, "_configuration", None
        )

    def _compiled_step(self, q_measured: Any, target_pose: Any) -> np.ndarray | None:
        """:meth:`~pinkctl.controllers.array_step.ArrayStep.step` without states, or None: the
        Python path runs it."""
        tick = self._bound_tick()
        if tick is None or type(q_measured) is not np.ndarray:
            return None
        if not tick.aim(target_pose):  # a pin.SE3 as the Python path reads it, else:
            target = _target(target_pose)
            if target is None:
                return None
            controller: Any = self
            controller._problem.frame.set_target(target)
        command = self._compiled_run(tick, q_measured, True, 1)
        return None if command is None else command[3]
