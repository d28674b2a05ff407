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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..core.state import RobotState
from ..errors import InputError
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


def _quat_angle(q1: np.ndarray, q2: np.ndarray) -> float:
    """Rotation angle [rad] between two unit quaternions (w, x, y, z)."""
    d = abs(float(np.dot(q1, q2))) / (np.linalg.norm(q1) * np.linalg.norm(q2))
    return 2.0 * float(np.arccos(min(1.0, d)))


@dataclass
class ClosedLoopLog:
    """Per-tick record of a closed-loop run; arrays are indexed by tick.

    Attributes:
        time: Tick times [s], shape (K,).
        joint_names: Joint space of ``q`` and ``qd``.
        q: Measured joint positions at each tick [rad], (K, N).
        qd: Measured joint velocities [rad/s], (K, N).
        command_names: Joints of ``command``.
        command: Servo position command in force after the tick, (K, C); NaN before the first.
        tool_frame: Site whose pose is logged.
        tool_position: Tool position after the control period [m], (K, 3).
        tool_orientation: Tool quaternion (w, x, y, z) after the control period, (K, 4).
        target_position: Target position of the tick [m], (K, 3); NaN when there is none.
        target_orientation: Target quaternion, (K, 4); NaN when there is none.
        position_error: ‖tool − target‖ [m], (K,); NaN without a target.
        orientation_error: Rotation angle between tool and target [rad], (K,).
        tick_time: Wall time of ``controller.forward`` [s], (K,).
        returned_none: True where ``forward`` returned None, (K,).
        none_reasons: ``last_error`` of the controller for those ticks (first 20 kept).
        lower_limits, upper_limits: Position limits of ``command_names`` [rad].
    """

    time: np.ndarray
    joint_names: list[str]
    q: np.ndarray
    qd: np.ndarray
    command_names: list[str]
    command: np.ndarray
    tool_frame: str
    tool_position: np.ndarray
    tool_orientation: np.ndarray
    target_position: np.ndarray
    target_orientation: np.ndarray
    position_error: np.ndarray
    orientation_error: np.ndarray
    tick_time: np.ndarray
    returned_none: np.ndarray
    lower_limits: np.ndarray
    upper_limits: np.ndarray
    none_reasons: list[str] = field(default_factory=list)

    @property
    def limit_violations(self) -> int:
        """Number of ticks whose command puts a joint outside its position limits."""
        cmd = self.command
        with np.errstate(invalid="ignore"):
            bad = (cmd < self.lower_limits - 1e-9) | (cmd > self.upper_limits + 1e-9)
        return int(np.count_nonzero(np.any(bad, axis=1)))

    def summary(self, skip: float = 0.0) -> dict[str, float]:
        """Metrics of the run, ignoring the first ``skip`` seconds for the error statistics.

        Keys: ``rms_position_error_mm``, ``max_position_error_mm``,
        ``rms_orientation_error_mrad``, ``max_orientation_error_mrad``, ``tick_median_us``,
        ``tick_p99_us``, ``ticks``, ``ticks_none``, ``limit_violations``.
        """
        sel = self.time >= self.time[0] + skip if len(self.time) else np.zeros(0, bool)
        pos = self.position_error[sel]
        ori = self.orientation_error[sel]
        pos = pos[np.isfinite(pos)]
        ori = ori[np.isfinite(ori)]

        def rms(x: np.ndarray) -> float:
            return float(np.sqrt(np.mean(x**2))) if x.size else float("nan")

        def peak(x: np.ndarray) -> float:
            return float(np.max(x)) if x.size else float("nan")

        ticks = self.tick_time * 1e6
        return {
            "rms_position_error_mm": rms(pos) * 1e3,
            "max_position_error_mm": peak(pos) * 1e3,
            "rms_orientation_error_mrad": rms(ori) * 1e3,
            "max_orientation_error_mrad": peak(ori) * 1e3,
            "tick_median_us": float(np.median(ticks)) if ticks.size else float("nan"),
            "tick_p99_us": float(np.percentile(ticks, 99)) if ticks.size else float("nan"),
            "ticks": float(len(self.time)),
            "ticks_none": float(np.count_nonzero(self.returned_none)),
            "limit_violations": float(self.limit_violations),
        }

    def format_summary(
        self, skip: float = 0.0, extra_rows: list[tuple[str, str]] | None = None
    ) -> str:
        """The summary as an aligned two-column table (plus ``extra_rows``)."""
        s = self.summary(skip)

        def value(key: str, unit: str, digits: int = 3) -> str:
            x = s[key]
            return f"{x:.{digits}f} {unit}" if np.isfinite(x) else "n/a"

        rows = [
            ("ticks", f"{int(s['ticks'])}"),
            ("ticks returning None", f"{int(s['ticks_none'])}"),
            ("position error RMS", value("rms_position_error_mm", "mm")),
            ("position error max", value("max_position_error_mm", "mm")),
            ("orientation error RMS", value("rms_orientation_error_mrad", "mrad")),
            ("orientation error max", value("max_orientation_error_mrad", "mrad")),
            ("controller tick median", value("tick_median_us", "us", 1)),
            ("controller tick p99", value("tick_p99_us", "us", 1)),
            ("joint-limit violations", f"{int(s['limit_violations'])}"),
            *(extra_rows or []),
        ]
        width = max(len(r[0]) for r in rows)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)

    def save(self, path: str | Path) -> Path:
        """Write every array to a compressed ``.npz`` file."""
        path = Path(path)
        np.savez_compressed(
            path,
            time=self.time,
            joint_names=np.array(self.joint_names),
            q=self.q,
            qd=self.qd,
            command_names=np.array(self.command_names),
            command=self.command,
            tool_frame=np.array(self.tool_frame),
            tool_position=self.tool_position,
            tool_orientation=self.tool_orientation,
            target_position=self.target_position,
            target_orientation=self.target_orientation,
            position_error=self.position_error,
            orientation_error=self.orientation_error,
            tick_time=self.tick_time,
            returned_none=self.returned_none,
            lower_limits=self.lower_limits,
            upper_limits=self.upper_limits,
        )
        return path

    def plot(self, path: str | Path, title: str | None = None) -> Path:
        """Save a PNG: error over time and the traced path against the target (matplotlib)."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError("plot() needs matplotlib: pip install 'pinkctl[plot]'") from exc
        path = Path(path)
        fig = plt.figure(figsize=(11, 4.6))
        ax_err = fig.add_subplot(1, 2, 1)
        ax_err.plot(self.time, self.position_error * 1e3, label="position [mm]", lw=1.0)
        ax_err.plot(self.time, self.orientation_error * 1e3, label="orientation [mrad]", lw=1.0)
        ax_err.set_xlabel("time [s]")
        ax_err.set_ylabel("tracking error")
        ax_err.set_title("Tracking error (MuJoCo closed loop)")
        ax_err.grid(alpha=0.3)
        ax_err.legend()
        ax_path = fig.add_subplot(1, 2, 2)
        target = self.target_position
        tool = self.tool_position
        ok = np.all(np.isfinite(target), axis=1)
        # project on the two axes along which the target moves most
        spread = np.ptp(target[ok], axis=0) if ok.any() else np.ptp(tool, axis=0)
        a, b = np.argsort(spread)[::-1][:2]
        a, b = sorted((int(a), int(b)))
        axis = "xyz"
        ax_path.plot(target[ok, a], target[ok, b], "k--", lw=1.0, label="target")
        ax_path.plot(tool[:, a], tool[:, b], lw=1.2, alpha=0.8, label=f"tool ({self.tool_frame})")
        ax_path.set_xlabel(f"{axis[a]} [m]")
        ax_path.set_ylabel(f"{axis[b]} [m]")
        ax_path.set_aspect("equal", adjustable="datalim")
        ax_path.set_title("Traced path")
        ax_path.grid(alpha=0.3)
        ax_path.legend()
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path


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
    model = sim.model
    lower = np.array([model.jnt_range[model.joint(n).id][0] for n in commands])
    upper = np.array([model.jnt_range[model.joint(n).id][1] for n in commands])
    limited = np.array([bool(model.jnt_limited[model.joint(n).id]) for n in commands])
    lower = np.where(limited, lower, -np.inf)
    upper = np.where(limited, upper, np.inf)
    act_ids = [sim._actuator_of[n] for n in commands]

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

    have_marker = show_target and sim._mocap_id >= 0
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
        ori_err[i] = _quat_angle(tool_q[i], tgt_q[i])
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
