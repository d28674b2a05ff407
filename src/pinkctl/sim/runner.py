"""Closed-loop runs: a controller against a :class:`MujocoSimulation`, logged tick by tick.

One control tick at time :math:`t_k`:

1. ``estimated = sim.get_robot_state()`` (measured joints, tool-site poses);
2. ``setpoint`` from the source (None, a fixed state, a function of time, or an upstream
   controller's ``forward``);
3. ``desired = controller.forward(estimated, setpoint, t_k)``; ``None`` keeps the previous
   servo command (the BaseController contract); the controller's ``status`` (OK, BRAKING,
   NOT_READY) and, when not OK, its ``last_error`` are logged every tick;
4. the simulation advances one control period.

The tracking error of tick *k* compares the tool pose **after** the control period with the target
of tick *k* (the pose that tick's command was meant to reach).

This module only needs the ``reset`` / ``forward`` interface; it imports no controller.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from .._progress import progress_bar
from .._validation import positive_number
from ..core.state import RobotState
from ..errors import InputError
from .log import ClosedLoopLog
from .recorder import TickRecorder, tick_status
from .simulation import MujocoSimulation

__all__ = ["ClosedLoopLog", "SetpointSource", "run_closed_loop"]

#: Runs of more ticks than this show progress (see ``run_closed_loop``'s ``progress``).
LONG_RUN = 2000
#: The target marker's orientation when the target has none (w, x, y, z).
_IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


class _Controller(Protocol):
    def reset(
        self, estimated_state: RobotState, setpoint_state: RobotState | None, t: float, **kw: Any
    ) -> bool: ...

    def forward(
        self, estimated_state: RobotState, setpoint_state: RobotState | None, t: float, **kw: Any
    ) -> RobotState | None: ...


SetpointSource = RobotState | Callable[[float], RobotState | None] | _Controller | None


def _target_pose(
    setpoint: RobotState | None, frame: str
) -> tuple[np.ndarray | None, np.ndarray | None]:
    if setpoint is None or setpoint.sites is None:
        return None, None
    sites = setpoint.sites
    return sites.get_position(frame), sites.get_orientation(frame)


def _steps_per_tick(sim: MujocoSimulation, duration: float, control_rate: float | None) -> int:
    """Physics steps per control tick (checked arguments)."""
    positive_number(duration, "duration [s]")
    if control_rate is None:
        return 1
    control_rate = positive_number(control_rate, "control_rate [Hz]")
    ratio = 1.0 / (control_rate * sim.timestep)
    steps = int(round(ratio))
    if steps < 1 or abs(ratio - steps) > 1e-6:
        raise InputError(
            f"control_rate {control_rate} Hz is not a whole number of {sim.timestep} s steps"
        )
    return steps


def _tool_frame(sim: MujocoSimulation, tool_frame: str | None) -> str:
    """The site whose pose is logged: ``tool_frame``, else the first site (checked)."""
    frame = tool_frame if tool_frame is not None else (sim.site_names[0] if sim.site_names else "")
    if frame not in sim.site_names:
        raise InputError(f"tool_frame {frame!r} is not a site; sites are {sim.site_names}")
    return frame


class _Setpoints:
    """The setpoint of each tick from a :data:`SetpointSource`, and the target logged with
    it (``reference``'s when given, else the setpoint)."""

    def __init__(
        self, source: SetpointSource, reference: Callable[[float], RobotState | None] | None
    ) -> None:
        self.source = source
        self.upstream: Any = source if hasattr(source, "forward") else None
        self.reference = reference

    def target(self, t: float, setpoint: RobotState | None) -> RobotState | None:
        """The state showing the target at run time ``t`` [s] (tick's ``setpoint`` given)."""
        return setpoint if self.reference is None else self.reference(t)

    def at(self, t: float, estimated: RobotState) -> RobotState | None:
        source = self.source
        if source is None or isinstance(source, RobotState):
            return source
        if self.upstream is not None:
            return self.upstream.forward(estimated, None, t)  # type: ignore[no-any-return]
        return source(t)  # type: ignore[operator]

    def reset(self, controller: _Controller, estimated: RobotState) -> None:
        """Reset the upstream controller, then ``controller`` (RuntimeError when one fails)."""
        upstream = self.upstream
        if upstream is not None and not upstream.reset(estimated, None, 0.0):
            raise RuntimeError("reset of the setpoint controller returned False")
        setpoint = self.at(0.0, estimated) if upstream is None else None
        if not controller.reset(estimated, setpoint, 0.0):
            raise RuntimeError(
                f"controller reset returned False: {getattr(controller, 'last_error', None)}"
            )


def run_closed_loop(
    sim: MujocoSimulation,
    controller: _Controller,
    *,
    duration: float,
    control_rate: float | None = None,
    setpoint: SetpointSource = None,
    reference: Callable[[float], RobotState | None] | None = None,
    tool_frame: str | None = None,
    joint_space: Sequence[str] | None = None,
    reset: bool = True,
    show_target: bool = True,
    progress: bool | None = None,
    on_tick: Callable[[float, RobotState | None], None] | None = None,
) -> ClosedLoopLog:
    """Run ``controller`` against ``sim`` for ``duration`` seconds and log every tick.

    Args:
        sim: The simulation (its current state is the start state).
        controller: Anything with the BaseController ``reset`` / ``forward`` interface; its
            ``status`` and ``last_error`` are logged when it has them.
        duration: Simulated time to run [s].
        control_rate: Control frequency [Hz]; a whole number of physics steps per tick.
            Default: one tick per physics step.
        setpoint: None, a fixed ``RobotState``, a function of the run time ``t`` [s], or an
            upstream controller whose ``forward(estimated, None, t)`` output is the setpoint.
        reference: Function of ``t`` giving the target for error logging when the setpoint does
            not show it (e.g. a follower chained inside ``controller``). Default: the setpoint.
        tool_frame: Site whose pose is compared with the target; default: the first site.
        joint_space: Joint space of the estimated state; default: ``sim.joint_names``.
        reset: Call ``reset`` on the controller (and an upstream setpoint controller) at t = 0.
        show_target: Move the simulation's target marker to the target each tick.
        progress: Show the progress of a run of more than :data:`LONG_RUN` ticks on stderr
            (a bar on a terminal, a line per 10 % otherwise); default: on a terminal only.
        on_tick: Called as ``on_tick(t, desired)`` after each tick (e.g. for a state machine).

    Raises:
        ValueError: On a non-positive duration or a rate that is not a whole number of steps.
        RuntimeError: If ``reset`` returns False.
    """
    steps_per_tick = _steps_per_tick(sim, duration, control_rate)
    n_ticks = int(round(duration / (steps_per_tick * sim.timestep)))
    frame = _tool_frame(sim, tool_frame)
    joints = list(sim.joint_names if joint_space is None else joint_space)
    commands = list(sim.actuated_joint_names)
    act_ids = sim.actuator_ids(commands)
    setpoints = _Setpoints(setpoint, reference)
    if reset:
        setpoints.reset(controller, sim.get_robot_state(joints))
    recorder = TickRecorder(joints, commands, frame)
    marker = show_target and sim.has_target_marker
    t0 = sim.time
    shown = progress if n_ticks > LONG_RUN else False
    with progress_bar(n_ticks, "closed loop", enabled=shown, unit="tick") as bar:
        for _ in range(n_ticks):
            t = sim.time - t0
            estimated = sim.get_robot_state(joints)
            sp = setpoints.at(t, estimated)
            start = time.perf_counter()
            desired = controller.forward(estimated, sp, t)
            elapsed = time.perf_counter() - start
            if desired is not None:
                sim.apply(desired)
            position, orientation = _target_pose(setpoints.target(t, sp), frame)
            if marker:
                _move_marker(sim, position, orientation)
            status = tick_status(controller, desired)
            reason = getattr(controller, "last_error", None)
            servo = sim.data.ctrl[act_ids]
            recorder.record(
                t, estimated, desired, servo, elapsed, status, reason, (position, orientation)
            )
            sim.step(steps_per_tick)
            recorder.tool(*sim.get_site_pose(frame))
            if on_tick is not None:
                on_tick(t, desired)
            bar.update(1)
    return recorder.log(*sim.joint_position_limits(commands))


def _move_marker(
    sim: MujocoSimulation, position: np.ndarray | None, orientation: np.ndarray | None
) -> None:
    """Move the target marker to a target (orientation None: identity); a target without a
    position leaves it where it is."""
    if position is not None:
        sim.set_target_marker(position, _IDENTITY if orientation is None else orientation)
