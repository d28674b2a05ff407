"""The demo scenario of ``pinkctl demo``: a trajectory follower chained into the IK controller.

A Cartesian trajectory (figure-eight, circle or pose waypoints) starts at the tool's home pose;
a :class:`~pinkctl.controllers.TrajectoryFollower` emits its site setpoints, a
:class:`~pinkctl.controllers.ChainedController` feeds them to a
:class:`~pinkctl.controllers.PinkIKController` that integrates its own command
(``integrate_from="command"``), and the MuJoCo servos (gravity-compensated, velocity
feed-forward) track the command. This module puts the pieces together for the CLI; the tests
use it to check the tracking bounds the README quotes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .controllers import ChainedController, PinkIKController, TrajectoryFollower
from .motion_limits import LimitReport, MotionLimits, check_trajectory
from .robot import PinkRobot, load_pink_supported_robot
from .sim import ClosedLoopLog, MujocoSimulation, run_closed_loop
from .state import RobotState, SpatialState
from .trajectories import (
    CircleTrajectory,
    FigureEightTrajectory,
    PoseWaypointTrajectory,
    Trajectory,
)

__all__ = [
    "DemoConfig",
    "DemoResult",
    "build_trajectory",
    "command_limit_report",
    "robot_limits",
    "run_demo",
]

#: Bounds the demo checks (and the README quotes): RMS and max position error [mm].
RMS_BOUND_MM = 1.0
MAX_BOUND_MM = 3.0


@dataclass
class DemoConfig:
    """What ``pinkctl demo`` runs.

    Attributes:
        robot: Bundled robot name.
        trajectory: ``"figure8"``, ``"circle"`` or ``"waypoints"``.
        period: Period of the figure-eight / circle [s].
        duration: Run time [s]; default: two periods plus the ramp-in.
        solver: QP backend.
        control_rate: Control frequency [Hz].
        size: Figure-eight half-width / circle radius / waypoint square [m]; default 0.15 /
            0.2 / 0.1, and a quarter of the tool's distance from the base for arms with fewer
            than six joints (which track the tool position only).
        ramp_time: Smooth start from rest [s].
    """

    robot: str = "franka"
    trajectory: str = "figure8"
    period: float = 8.0
    duration: float | None = None
    solver: str = "daqp"
    control_rate: float = 500.0
    size: float | None = None
    ramp_time: float = 1.0


@dataclass
class DemoResult:
    """Outcome of :func:`run_demo`: the log, its summary and the printed table."""

    config: DemoConfig
    log: ClosedLoopLog
    summary: dict[str, float]
    title: str
    header: str
    table: str
    limit_report: LimitReport
    ok: bool = field(default=False)


def build_trajectory(
    kind: str,
    frame: str,
    position: np.ndarray,
    orientation: np.ndarray,
    *,
    period: float,
    size: float | None,
    ramp_time: float,
    cycles: float = 2.0,
) -> Trajectory:
    """A demo trajectory starting at the tool pose ``(position, orientation)``.

    Figure-eight and circle lie in the vertical world y-z plane.
    """
    if kind == "figure8":
        return FigureEightTrajectory(
            frame,
            position,
            half_width=size or 0.15,
            period=period,
            plane="yz",
            orientation=orientation,
            cycles=cycles,
            ramp_time=ramp_time,
        )
    if kind == "circle":
        radius = size or 0.2
        return CircleTrajectory(
            frame,
            position - np.array([0.0, radius, 0.0]),
            radius=radius,
            period=period,
            plane="yz",
            orientation=orientation,
            cycles=cycles,
            ramp_time=ramp_time,
        )
    if kind == "waypoints":
        d = size or 0.1
        offsets = np.array(
            [[0, 0, 0], [0, d, 0], [0, d, d], [0, -d, d], [0, -d, 0], [0, 0, 0]], dtype=float
        )
        tilt = np.array([np.cos(0.15), np.sin(0.15), 0.0, 0.0])  # 0.3 rad about world x
        w1, x1, y1, z1 = tilt
        w2, x2, y2, z2 = orientation
        tilted = np.array(
            [
                w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
            ]
        )
        orientations = np.array(
            [orientation, orientation, tilted, tilted, orientation, orientation]
        )
        return PoseWaypointTrajectory(
            frame,
            position + offsets,
            orientations,
            max_linear_velocity=0.25,
            max_angular_velocity=0.8,
            max_linear_acceleration=1.0,
            max_angular_acceleration=3.0,
        )
    raise ValueError(f"trajectory must be 'figure8', 'circle' or 'waypoints', got {kind!r}")


def run_demo(config: DemoConfig, *, progress: bool | None = None) -> DemoResult:
    """Build the scenario of ``config``, run it in MuJoCo and summarise it."""
    robot = load_pink_supported_robot(config.robot)
    timestep = 0.002 if 500.0 % config.control_rate == 0 or config.control_rate <= 500 else 0.001
    sim = MujocoSimulation.from_robot(robot, timestep=timestep)
    assert robot.tool_frame is not None
    frame = robot.tool_frame
    start_position, start_orientation = sim.get_site_pose(frame)
    # an arm with fewer than six joints cannot hold an orientation along a curve: it tracks
    # the tool position only, on a curve scaled to its reach
    position_only = len(robot.controlled_joint_names) < 6
    size = config.size
    if size is None:
        if position_only:
            size = round(0.25 * float(np.linalg.norm(start_position)), 3)
        else:
            size = {"circle": 0.2, "waypoints": 0.1}.get(config.trajectory, 0.15)
    cycles = 2.0
    if config.duration is not None and config.trajectory != "waypoints":
        cycles = max((config.duration - config.ramp_time) / config.period, 0.25)
    trajectory = build_trajectory(
        config.trajectory,
        frame,
        start_position,
        start_orientation,
        period=config.period,
        size=size,
        ramp_time=config.ramp_time,
        cycles=cycles,
    )
    ik = PinkIKController(
        robot,
        sim.joint_names,
        sim.site_names,
        solver=config.solver,
        dt=1.0 / config.control_rate,
        integrate_from="command",
        orientation_cost=0.0 if position_only else 1.0,
    )
    follower = TrajectoryFollower()
    follower.set_trajectory(trajectory)
    controller = ChainedController([follower, ik])
    duration = trajectory.duration if config.duration is None else config.duration
    duration = min(duration, trajectory.duration)
    log = run_closed_loop(
        sim,
        controller,
        duration=duration,
        control_rate=config.control_rate,
        reference=_positions_only(trajectory, frame)
        if position_only
        else trajectory.get_target_state,
        tool_frame=frame,
        progress=progress,
    )
    summary = log.summary()
    report = command_limit_report(log, robot_limits(robot), 1.0 / config.control_rate)
    ok = (
        summary["rms_position_error_mm"] <= RMS_BOUND_MM
        and summary["max_position_error_mm"] <= MAX_BOUND_MM
        and summary["ticks_none"] == 0
        and summary["limit_violations"] == 0
        and report.ok
    )
    title = (
        f"pinkctl demo: {config.robot}, {config.trajectory} "
        f"({size:.2f} m, period {config.period:g} s), {config.control_rate:g} Hz, {config.solver}"
    )
    header = f"{title}\nsimulated {duration:.2f} s in MuJoCo"
    return DemoResult(
        config=config,
        log=log,
        summary=summary,
        title=title,
        header=header,
        table=log.format_summary(extra_rows=report.summary_rows()),
        limit_report=report,
        ok=ok,
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
