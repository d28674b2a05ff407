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

from ..controllers import ChainedController, PinkIKController, TrajectoryFollower
from ..core.robot import PinkRobot
from ..core.state import RobotState, SpatialState
from ..errors import InputError
from ..motion.check import LimitReport, check_trajectory
from ..motion.limits import MotionLimits
from ..sim import ClosedLoopLog, MujocoSimulation, run_closed_loop
from ..trajectories import (
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
        robot: Catalog robot name, or a URDF / MJCF / ``robot.toml`` path.
        trajectory: ``"figure8"``, ``"circle"`` or ``"waypoints"``.
        period: Period of the figure-eight / circle [s]; lengthened when the robot's reach and
            joint limits ask for a slower curve (see :func:`demo_scale`).
        duration: Run time [s]; default: two periods plus the ramp-in.
        solver: QP backend.
        control_rate: Control frequency [Hz].
        size: Figure-eight half-width / circle radius / waypoint square [m]; default: a
            fraction of the robot's reach (see :func:`demo_scale`).
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
    speed: float = 0.25,
    acceleration: float = 1.0,
    angular_speed: float = 0.8,
    angular_acceleration: float = 3.0,
) -> Trajectory:
    """A demo trajectory starting at the tool pose ``(position, orientation)``.

    Figure-eight and circle lie in the vertical world y-z plane; ``speed`` [m/s],
    ``acceleration`` [m/s^2], ``angular_speed`` [rad/s] and ``angular_acceleration``
    [rad/s^2] limit the waypoint moves.
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
            max_linear_velocity=speed,
            max_angular_velocity=angular_speed,
            max_linear_acceleration=acceleration,
            max_angular_acceleration=angular_acceleration,
        )
    raise InputError(f"trajectory must be 'figure8', 'circle' or 'waypoints', got {kind!r}")


@dataclass(frozen=True)
class DemoScale:
    """The demo's size and pace for one robot (see :func:`demo_scale`)."""

    reach: float
    size: float
    period: float
    speed: float
    acceleration: float
    angular_speed: float
    angular_acceleration: float


#: Demo sizes as fractions of the reach: figure-eight half-width, circle radius, waypoints.
SIZE_OF_REACH = {"figure8": 0.14, "circle": 0.14, "waypoints": 0.09}
#: Lag of a jerk-limited corner the waypoint moves are sized for [m].
CORNER_LAG = 2e-4
#: Fraction of the slowest joint's velocity / acceleration / jerk limit (times the reach)
#: the demo's Cartesian motion may ask for.
SHARE_OF_LIMITS = (0.25, 0.05, 0.002)


def demo_scale(robot: PinkRobot, config: DemoConfig, tool_position: np.ndarray) -> DemoScale:
    """Size and pace of the demo for ``robot``, scaled to its reach and joint limits.

    The reach ``r`` is the arm's length at home (from joint origin to joint origin along the
    controlled chain, then to the tool); the size is :data:`SIZE_OF_REACH` of it (unless
    given). The Cartesian motion may ask for
    :data:`SHARE_OF_LIMITS` of the slowest joint's velocity, acceleration and jerk limits
    times ``r``: a figure-eight of half-width ``W`` at angular rate ``w`` peaks at about
    ``1.4 W w``, ``2.1 W w^2`` and ``4.1 W w^3``, so the period is lengthened until all three
    fit; the waypoint moves get that speed and acceleration.
    """
    model = robot.model
    data = model.createData()
    import pinocchio as pin  # noqa: PLC0415

    pin.forwardKinematics(model, data, robot.q0)
    # the arm's length: joint origins along the chain, then the tool, at home
    points = [data.oMi[model.getJointId(n)].translation for n in robot.controlled_joint_names]
    points.append(tool_position)
    reach = max(sum(float(np.linalg.norm(b - a)) for a, b in zip(points, points[1:])), 0.05)
    size = config.size if config.size is not None else SIZE_OF_REACH[config.trajectory] * reach
    # revolute joints only: a slow prismatic torso (m/s) says nothing about the arm's reach
    names = [
        n
        for n in robot.controlled_joint_names
        if not model.joints[model.getJointId(n)].shortname().startswith("JointModelP")
    ] or robot.controlled_joint_names
    velocity = min(robot.velocity_limits[n] for n in names)
    acceleration = min(robot.acceleration_limits.get(n, 10.0 * velocity) for n in names)
    jerk = min(robot.jerk_limits.get(n, 100.0 * acceleration) for n in names)
    v_c, a_c, j_c = (
        share * limit * reach
        for share, limit in zip(SHARE_OF_LIMITS, (velocity, acceleration, jerk))
    )
    amplitude = size if config.trajectory == "figure8" else 1.2 * size
    rate = min(
        v_c / (1.4 * amplitude), np.sqrt(a_c / (2.1 * amplitude)), np.cbrt(j_c / (4.1 * amplitude))
    )
    period = max(config.period, 2.0 * np.pi / rate)
    # a waypoint move switches its acceleration at once: a jerk-limited arm lags a corner by
    # about a^3 / (6 j^2), kept below CORNER_LAG
    corner = float(np.cbrt(6.0 * j_c * j_c * CORNER_LAG))
    # rotations turn the wrist joints by about the same angle: limits without the reach
    w_v, w_a, w_j = (v_c / reach, a_c / reach, j_c / reach)
    angular_corner = float(np.cbrt(6.0 * w_j * w_j * CORNER_LAG / reach))
    return DemoScale(
        reach=reach,
        size=size,
        period=period,
        speed=v_c,
        acceleration=min(a_c, corner),
        angular_speed=w_v,
        angular_acceleration=min(w_a, angular_corner),
    )


def run_demo(config: DemoConfig, *, progress: bool | None = None) -> DemoResult:
    """Build the scenario of ``config``, run it in MuJoCo and summarise it."""
    from .inspect import load_robot  # noqa: PLC0415

    robot = load_robot(config.robot)
    timestep = 0.002 if 500.0 % config.control_rate == 0 or config.control_rate <= 500 else 0.001
    sim = MujocoSimulation.from_robot(robot, timestep=timestep)
    assert robot.tool_frame is not None
    frame = robot.tool_frame
    start_position, start_orientation = sim.get_site_pose(frame)
    # an arm with fewer than six joints cannot hold an orientation along a curve: it tracks
    # the tool position only
    position_only = len(robot.controlled_joint_names) < 6
    scale = demo_scale(robot, config, start_position)
    size, period = scale.size, scale.period
    cycles = 2.0
    if config.duration is not None and config.trajectory != "waypoints":
        cycles = max((config.duration - config.ramp_time) / period, 0.25)
    trajectory = build_trajectory(
        config.trajectory,
        frame,
        start_position,
        start_orientation,
        period=period,
        size=size,
        ramp_time=config.ramp_time,
        cycles=cycles,
        speed=scale.speed,
        acceleration=scale.acceleration,
        angular_speed=scale.angular_speed,
        angular_acceleration=scale.angular_acceleration,
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
    shape = f"{size:.2f} m" + (
        "" if config.trajectory == "waypoints" else f", period {period:.3g} s"
    )
    title = (
        f"pinkctl demo: {robot.name}, {config.trajectory} ({shape}), "
        f"{config.control_rate:g} Hz, {config.solver}"
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
