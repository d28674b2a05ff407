"""The demo scenario of ``pinkctl demo``: a trajectory follower chained into the IK controller.

A Cartesian trajectory (figure-eight, circle or pose waypoints) starts at the tool's home pose,
sized and paced for the robot and checked kinematically first
(:mod:`pinkctl.app.demo_trajectory`); a :class:`~pinkctl.controllers.TrajectoryFollower`
emits its site setpoints, a :class:`~pinkctl.controllers.ChainedController` feeds them to a
:class:`~pinkctl.controllers.PinkIKController` that integrates its own command
(``integrate_from="command"``), and the MuJoCo servos (gravity-compensated, velocity
feed-forward) track the command. The run passes when it stays within the bounds the tests
hold it to (:data:`RMS_BOUND_MM`, :data:`MAX_BOUND_MM`, every tick solved: none braking and
none without output, no limit violation); :attr:`DemoResult.failures` names every row that missed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._progress import progress_bar
from .._validation import choice, name_list, positive_number
from ..controllers import ChainedController, TrajectoryFollower
from ..core.robot import PinkRobot
from ..core.state import RobotState, SpatialState
from ..errors import InputError
from ..motion.check import LimitReport, check_trajectory
from ..motion.limits import MotionLimits
from ..qp import available_solvers, missing_solver_message
from ..sim import ClosedLoopLog, MujocoSimulation, VideoRecorder, run_closed_loop
from ..sim.video import check_writer
from ..trajectories import Trajectory
from .demo_trajectory import TRAJECTORIES, Fit, build_trajectory, demo_controller, fit_size
from .demo_video import demo_recorder, write_outputs

__all__ = [
    "DemoConfig",
    "DemoResult",
    "build_trajectory",
    "command_limit_report",
    "robot_limits",
    "run_demo",
    "tick_failures",
]

#: Bounds the demo checks (and the README quotes): RMS and max position error [mm].
RMS_BOUND_MM = 1.0
MAX_BOUND_MM = 3.0
#: Physics steps [s], the longest first: the demo takes the first one that divides the
#: control period.
TIMESTEPS = (0.002, 0.001)


@dataclass
class DemoConfig:
    """What ``pinkctl demo`` runs.

    Attributes:
        robot: Catalog robot name, or a URDF / MJCF / ``robot.toml`` path.
        trajectory: ``"figure8"``, ``"circle"`` or ``"waypoints"``.
        period: Period of the figure-eight / circle [s]; lengthened when the robot's reach and
            joint limits ask for a slower curve (see
            :func:`~pinkctl.app.demo_trajectory.demo_scale`).
        duration: Run time [s]; default: two periods plus the ramp-in.
        solver: QP solver (``"box"``: pinkctl's box QP, DAQP when rows bind).
        control_rate: Control frequency [Hz].
        size: Figure-eight half-width / circle radius / waypoint square [m]; default: a
            fraction of the robot's reach, shrunk until the kinematic check passes. A given
            size that does not pass is an :class:`~pinkctl.errors.InputError`.
        ramp_time: Smooth start from rest [s].
        tool_frame: The frame that traces the curve (default: the robot's); alone, it also
            names the joints that move (the chain from the root to it): one arm of a robot
            with branches.
        controlled_joints: The joints that move (default: the robot's, or inferred).
    """

    robot: str = "franka"
    trajectory: str = "figure8"
    period: float = 8.0
    duration: float | None = None
    solver: str = "box"
    control_rate: float = 500.0
    size: float | None = None
    ramp_time: float = 1.0
    tool_frame: str | None = None
    controlled_joints: Sequence[str] | None = None

    def load_options(self) -> dict[str, Any]:
        """The loader's keywords this configuration sets (tool frame, controlled joints)."""
        options: dict[str, Any] = {}
        if self.tool_frame is not None:
            options["tool_frame"] = self.tool_frame
        if self.controlled_joints is not None:
            options["controlled_joint_names"] = list(self.controlled_joints)
        return options

    def check(self) -> None:
        """Reject what cannot run, before anything is loaded or simulated.

        Raises:
            InputError: Unknown trajectory or solver, a rate that is not a whole number of
                physics steps, a non-positive period, duration or size, a tool frame or
                joint list that is not names.
            FileNotFoundError: A robot that is neither a catalog name nor a file.
        """
        from .inspect import check_robot_name  # noqa: PLC0415

        check_robot_name(self.robot)
        choice(self.trajectory, "trajectory", TRAJECTORIES)
        if self.solver not in available_solvers():
            raise InputError(missing_solver_message(self.solver))
        for name in ("period", "duration", "size", "control_rate", "ramp_time"):
            if getattr(self, name) is not None:
                positive_number(getattr(self, name), name)
        if self.tool_frame is not None and (
            not isinstance(self.tool_frame, str) or not self.tool_frame
        ):
            raise InputError(f"tool_frame must be a frame name, got {self.tool_frame!r}")
        if self.controlled_joints is not None:
            name_list(self.controlled_joints, "controlled_joints", allow_empty=False)
        self.timestep()

    def timestep(self) -> float:
        """The physics step [s]: the longest of :data:`TIMESTEPS` that divides the control
        period.

        Raises:
            InputError: None does.
        """
        for step in TIMESTEPS:
            ratio = 1.0 / (self.control_rate * step)
            if round(ratio) >= 1 and abs(ratio - round(ratio)) < 1e-9:
                return step
        rates = ", ".join(f"{1.0 / (k * TIMESTEPS[-1]):g}" for k in (1, 2, 4, 5, 10))
        raise InputError(
            f"control rate {self.control_rate:g} Hz is not a whole number of "
            f"{TIMESTEPS[-1] * 1e3:g} ms physics steps; try {rates} Hz"
        )


@dataclass
class DemoResult:
    """Outcome of :func:`run_demo`.

    Attributes:
        config: What ran.
        log: The closed-loop record.
        summary: ``log.summary()``.
        title: One line: robot, trajectory, size, period, rate, solver.
        header: The title and what was simulated (and a note when the size was shrunk).
        table: The summary table (errors, tick times, one row per limit type).
        limit_report: Command sequence against the robot's motion limits.
        fit: The kinematic check of the trajectory that ran.
        failures: One line per bound the run missed (empty: it passed).
    """

    config: DemoConfig
    log: ClosedLoopLog
    summary: dict[str, float]
    title: str
    header: str
    table: str
    limit_report: LimitReport
    fit: Fit
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the run stayed within every bound."""
        return not self.failures

    @property
    def verdict(self) -> str:
        """One line: ``passed:`` and the bounds, or ``FAILED:`` and every row that missed."""
        if self.failures:
            return "FAILED: " + "; ".join(self.failures)
        return (
            f"passed: RMS <= {RMS_BOUND_MM:g} mm, max <= {MAX_BOUND_MM:g} mm, "
            "every tick solved (none braking, none without output), no limit violation"
        )


def run_demo(
    config: DemoConfig,
    *,
    progress: bool | None = None,
    say: Callable[[str], None] | None = None,
    video: str | Path | None = None,
    picture: str | Path | None = None,
) -> DemoResult:
    """Build the scenario of ``config``, run it in MuJoCo and check it.

    Args:
        config: The scenario.
        progress: Show the simulation's (and the video's) progress on stderr: a bar on a
            terminal, a line per 10 % otherwise (default: only on a terminal).
        say: Called with a line before each stage (loading, checking, simulating).
        video: Record the run to this ``.mp4`` (or ``.gif``) file (``pinkctl[video]``).
        picture: Write the last frame, with the traced path, to this ``.png`` file.

    Raises:
        InputError: A bad ``config`` (see :meth:`DemoConfig.check`), a trajectory the robot
            cannot follow from home (see :func:`~pinkctl.app.demo_trajectory.fit_size`), or
            an output file that cannot be written.
        MissingDependencyError: The video writer is not installed.
        FileNotFoundError: An unknown robot.
    """
    from .inspect import load_robot  # noqa: PLC0415

    tell = say or (lambda line: None)
    config.check()
    for path in (video, picture):
        if path is not None:
            check_writer(path)
    tell(f"loading {config.robot}")
    robot = load_robot(config.robot, **config.load_options())
    if robot.tool_frame is None:
        raise InputError(f"{robot.name}: no tool frame to move; give one in its robot.toml")
    sim = MujocoSimulation.from_robot(robot, timestep=config.timestep())
    recorder = demo_recorder(sim, robot.tool_frame, video, picture)
    # an arm with fewer than six joints cannot hold an orientation along a curve: it tracks
    # the tool position only
    position_only = len(robot.controlled_joint_names) < 6
    tell(f"checking the {config.trajectory} against {robot.name}'s reach and limits")
    fit, trajectory = fit_size(
        robot,
        sim,
        config.trajectory,
        size=config.size,
        period=config.period,
        ramp_time=config.ramp_time,
        duration=config.duration,
        solver=config.solver,
        position_only=position_only,
    )
    if recorder is not None:
        recorder.trail_width = fit.scale.size / 20.0
    duration = min(trajectory.duration, config.duration or np.inf)  # [s]
    tell(f"simulating {duration:.1f} s at {config.control_rate:g} Hz in MuJoCo")
    log = _simulate(robot, sim, trajectory, config, duration, position_only, progress, recorder)
    if recorder is not None:
        write_outputs(recorder, video, picture, progress, tell)
    return _result(config, robot, log, fit, duration)


def _simulate(
    robot: PinkRobot,
    sim: MujocoSimulation,
    trajectory: Trajectory,
    config: DemoConfig,
    duration: float,
    position_only: bool,
    progress: bool | None,
    recorder: VideoRecorder | None,
) -> ClosedLoopLog:
    assert robot.tool_frame is not None
    frame = robot.tool_frame
    period = 1.0 / config.control_rate
    ik = demo_controller(robot, sim, solver=config.solver, dt=period, position_only=position_only)
    follower = TrajectoryFollower()
    follower.set_trajectory(trajectory)
    label = "pinkctl demo: simulating" + ("" if recorder is None else " and rendering")
    with progress_bar(duration, label, enabled=progress, unit="s") as bar:

        def on_tick(t: float, desired: RobotState | None) -> None:
            if recorder is not None:
                recorder.capture(t, desired)
            bar.update(period)

        return run_closed_loop(
            sim,
            ChainedController([follower, ik]),
            duration=duration,
            control_rate=config.control_rate,
            reference=_positions_only(trajectory, frame)
            if position_only
            else trajectory.get_target_state,
            tool_frame=frame,
            progress=False,  # shown here, with the rendering
            on_tick=on_tick,
        )


def tick_failures(summary: dict[str, float]) -> list[str]:
    """The demo's "every tick solved" check on a run's summary (``ClosedLoopLog.summary``):
    one line per kind of tick that failed it (braking, not ready, without output)."""
    rows = (
        ("ticks_braking", "braking ticks"),
        ("ticks_not_ready", "ticks not ready"),
        ("ticks_none", "ticks returning None"),
    )
    return [f"{label}: {int(summary[key])}" for key, label in rows if summary[key]]


def _length(size: float) -> str:
    """A curve's size [m] as the header writes it (millimetres below 1 cm)."""
    return f"{size:.2f} m" if size >= 0.01 else f"{size * 1e3:.1f} mm"


def _result(
    config: DemoConfig, robot: PinkRobot, log: ClosedLoopLog, fit: Fit, duration: float
) -> DemoResult:
    summary = log.summary()
    report = command_limit_report(log, robot_limits(robot), 1.0 / config.control_rate)
    failures = []
    for key, row, bound in (
        ("rms_position_error_mm", "position error RMS", RMS_BOUND_MM),
        ("max_position_error_mm", "position error max", MAX_BOUND_MM),
    ):
        if not summary[key] <= bound:
            failures.append(f"{row} {summary[key]:.3f} mm > {bound:g} mm")
    failures += tick_failures(summary)
    if summary["limit_violations"]:
        failures.append(f"commands outside the joint range: {int(summary['limit_violations'])}")
    rows = dict(report.summary_rows())
    for kind, count in report.counts().items():
        if count:
            label = f"limit violations: {kind}"
            failures.append(f"{label} {rows[label]}")
    scale = fit.scale
    shape = _length(scale.size) + (
        "" if config.trajectory == "waypoints" else f", period {scale.period:.3g} s"
    )
    title = (
        f"pinkctl demo: {robot.name}, {config.trajectory} ({shape}), "
        f"{config.control_rate:g} Hz, {config.solver}"
    )
    header = f"{title}\nsimulated {duration:.2f} s in MuJoCo"
    if scale.size < fit.requested:
        header += (
            f" (size shrunk from {_length(fit.requested)} to fit {robot.name}'s limits and "
            "collision margins from home)"
        )
    return DemoResult(
        config=config,
        log=log,
        summary=summary,
        title=title,
        header=header,
        table=log.format_summary(limit_rows=report.summary_rows()),
        limit_report=report,
        fit=fit,
        failures=failures,
    )


def _positions_only(trajectory: Trajectory, frame: str) -> Callable[[float], RobotState | None]:
    """The trajectory's target positions without orientations (for position-only tracking)."""

    def reference(t: float) -> RobotState | None:
        state = trajectory.get_target_state(t)
        position = None if state is None or state.sites is None else state.sites.get_position(frame)
        if position is None:
            return None
        return RobotState(
            sites=SpatialState.from_name([frame], positions=([frame], position.reshape(1, 3)))
        )

    return reference


def robot_limits(robot: PinkRobot) -> MotionLimits:
    """Position, velocity, acceleration and jerk limits of the robot's controlled joints."""
    return MotionLimits.from_robot(robot)


def command_limit_report(log: ClosedLoopLog, limits: MotionLimits, dt: float) -> LimitReport:
    """Check the command sequence of a run against ``limits`` at the controller rate.

    Sample 0 is the measured start (the robot at rest), then one command per tick.
    """
    joints = list(limits.joint_names)
    start = log.q[0, [log.joint_names.index(j) for j in joints]]
    commands = log.command[:, [log.command_names.index(j) for j in joints]]
    return check_trajectory(np.vstack([start, commands]), dt, limits)
