"""Closed-loop runs: a controller against a :class:`MujocoSimulation`, logged tick by tick.

One control tick at time :math:`t_k`:

1. ``estimated = sim.get_robot_state()`` (measured joints, tool-site poses);
2. ``setpoint`` from the source (None, a fixed state, a function of time, or an upstream
   controller's ``forward``);
3. ``desired = controller.forward(estimated, setpoint, t_k)``; ``None`` keeps the previous
   servo command (the BaseController contract);
4. the simulation advances one control period.

The tracking error of tick *k* compares the tool pose **after** the control period with the target
of tick *k* (the pose that tick's command was meant to reach).

This module only needs the ``reset`` / ``forward`` interface; it imports no controller.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ..core.poses import quaternion_angle
from ..core.state import RobotState
from ..errors import InputError
from .log import ClosedLoopLog
from .simulation import MujocoSimulation

__all__ = ["ClosedLoopLog", "SetpointSource", "run_closed_loop"]


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
        controller: Anything with the BaseController ``reset`` / ``forward`` interface.
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
        progress: Show a progress bar; default: when stderr is a terminal.
        on_tick: Called as ``on_tick(t, desired)`` after each tick (e.g. for a state machine).

    Raises:
        ValueError: On a non-positive duration or a rate that is not a whole number of steps.
        RuntimeError: If ``reset`` returns False.
    """
    if not np.isfinite(duration) or duration <= 0:
        raise InputError(f"duration must be positive [s], got {duration!r}")
    steps_per_tick = 1
    if control_rate is not None:
        if not np.isfinite(control_rate) or control_rate <= 0:
            raise InputError(f"control_rate must be positive [Hz], got {control_rate!r}")
        ratio = 1.0 / (control_rate * sim.timestep)
        steps_per_tick = int(round(ratio))
        if steps_per_tick < 1 or abs(ratio - steps_per_tick) > 1e-6:
            raise InputError(
                f"control_rate {control_rate} Hz is not a whole number of {sim.timestep} s steps"
            )
    period = steps_per_tick * sim.timestep
    n_ticks = int(round(duration / period))
    frame = tool_frame if tool_frame is not None else (sim.site_names[0] if sim.site_names else "")
    if frame not in sim.site_names:
        raise InputError(f"tool_frame {frame!r} is not a site; sites are {sim.site_names}")
    joints = list(sim.joint_names if joint_space is None else joint_space)
    commands = list(sim.actuated_joint_names)
    lower, upper = sim.joint_position_limits(commands)
    act_ids = sim.actuator_ids(commands)

    upstream = setpoint if hasattr(setpoint, "forward") else None
    t0 = sim.time

    def setpoint_at(t: float, est: RobotState) -> RobotState | None:
        if setpoint is None or isinstance(setpoint, RobotState):
            return setpoint
        if upstream is not None:
            return upstream.forward(est, None, t)  # type: ignore[union-attr]
        return setpoint(t)  # type: ignore[operator]

    log_t = np.empty(n_ticks)
    log_q = np.empty((n_ticks, len(joints)))
    log_qd = np.empty((n_ticks, len(joints)))
    log_cmd = np.full((n_ticks, len(commands)), np.nan)
    tool_p = np.empty((n_ticks, 3))
    tool_q = np.empty((n_ticks, 4))
    tgt_p = np.full((n_ticks, 3), np.nan)
    tgt_q = np.full((n_ticks, 4), np.nan)
    tick_time = np.empty(n_ticks)
    none_mask = np.zeros(n_ticks, dtype=bool)
    reasons: list[str] = []

    if reset:
        est = sim.get_robot_state(joints)
        if upstream is not None and not upstream.reset(est, None, 0.0):  # type: ignore[union-attr]
            raise RuntimeError("reset of the setpoint controller returned False")
        if not controller.reset(est, setpoint_at(0.0, est) if upstream is None else None, 0.0):
            raise RuntimeError(
                f"controller reset returned False: {getattr(controller, 'last_error', None)}"
            )

    show_progress = sys.stderr.isatty() if progress is None else progress
    bar = None
    if show_progress and n_ticks > 2000:
        from tqdm import tqdm

        bar = tqdm(total=n_ticks, unit="tick", leave=False)

    have_marker = show_target and sim.has_target_marker
    for k in range(n_ticks):
        t = sim.time - t0
        est = sim.get_robot_state(joints)
        sp = setpoint_at(t, est)
        start = time.perf_counter()
        desired = controller.forward(est, sp, t)
        tick_time[k] = time.perf_counter() - start
        if desired is None:
            none_mask[k] = True
            if len(reasons) < 20:
                reasons.append(f"t={t:.4f}: {getattr(controller, 'last_error', None)}")
        else:
            sim.apply(desired)
        ref = reference(t) if reference is not None else sp
        p, qt = _target_pose(ref, frame)
        if p is not None:
            tgt_p[k] = p
            if have_marker:
                marker_q = qt if qt is not None else np.array([1.0, 0.0, 0.0, 0.0])
                sim.set_target_marker(p, marker_q)
        if qt is not None:
            tgt_q[k] = qt
        log_t[k] = t
        js = est.joints
        assert js is not None
        log_q[k] = js.data_array[0]
        log_qd[k] = js.data_array[1]
        ctrl = sim.data.ctrl[act_ids]
        # log the commanded position, not the feed-forward-shifted servo input
        if (
            desired is not None
            and desired.joints is not None
            and desired.joints.positions is not None
        ):
            cmd_now = dict(zip(desired.joints.position_names, desired.joints.positions))
            log_cmd[k] = [cmd_now.get(n, c) for n, c in zip(commands, ctrl)]
        elif k > 0:
            log_cmd[k] = log_cmd[k - 1]
        sim.step(steps_per_tick)
        tool_p[k], tool_q[k] = sim.get_site_pose(frame)
        if on_tick is not None:
            on_tick(t, desired)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()

    pos_err = np.linalg.norm(tool_p - tgt_p, axis=1)
    ori_err = np.full(n_ticks, np.nan)
    ok = np.all(np.isfinite(tgt_q), axis=1)
    for i in np.flatnonzero(ok):
        ori_err[i] = quaternion_angle(tool_q[i], tgt_q[i])
    return ClosedLoopLog(
        time=log_t,
        joint_names=joints,
        q=log_q,
        qd=log_qd,
        command_names=commands,
        command=log_cmd,
        tool_frame=frame,
        tool_position=tool_p,
        tool_orientation=tool_q,
        target_position=tgt_p,
        target_orientation=tgt_q,
        position_error=pos_err,
        orientation_error=ori_err,
        tick_time=tick_time,
        returned_none=none_mask,
        lower_limits=lower,
        upper_limits=upper,
        none_reasons=reasons,
    )
