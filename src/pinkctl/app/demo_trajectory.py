"""The demo's trajectory: its shape, its size and pace for one robot, and a check that it fits.

:func:`build_trajectory` makes a figure-eight, a circle or a square of pose waypoints starting
at the tool's home pose. :func:`demo_scale` sizes and paces it from the robot's reach and
joint limits. :func:`fit_size` then checks the result kinematically, without physics: the IK
controller of the demo follows the trajectory at :data:`FIT_RATE` with its own command as the
measurement, and the trajectory fits when the tool stays within :data:`FIT_TOLERANCE` of the
target and no link touches another link or the floor (MuJoCo's collision detection on the
commanded configurations). A robot whose home pose is near its joint limits, or whose arm
would sweep into its own body, gets a smaller curve, shrunk by :data:`SHRINK` until it fits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..controllers import PinkIKController
from ..core.poses import rotate_by_vector
from ..core.robot import PinkRobot
from ..errors import InputError
from ..sim import MujocoSimulation
from ..trajectories import (
    CircleTrajectory,
    FigureEightTrajectory,
    PlanarCurveOptions,
    PoseWaypointTrajectory,
    Trajectory,
)
from ..trajectories._cartesian import SiteTrajectory

__all__ = [
    "TRAJECTORIES",
    "DemoScale",
    "Fit",
    "build_trajectory",
    "demo_scale",
    "fit_size",
    "kinematic_check",
]

#: The demo's trajectory kinds.
TRAJECTORIES = ("figure8", "circle", "waypoints")
#: Demo sizes as fractions of the reach: figure-eight half-width, circle radius, waypoints.
SIZE_OF_REACH = {"figure8": 0.14, "circle": 0.14, "waypoints": 0.09}
#: Lag of a jerk-limited corner the waypoint moves are sized for [m].
CORNER_LAG = 2e-4
#: Fraction of the slowest joint's velocity / acceleration / jerk limit (times the reach)
#: the demo's Cartesian motion may ask for.
SHARE_OF_LIMITS = (0.25, 0.05, 0.002)
#: Tilt of the tool along the top of the waypoint square [rad] (shrunk with the size).
TILT = 0.3
#: Rate of the kinematic check [Hz].
FIT_RATE = 100.0
#: Largest tool-to-target distance of the kinematic check [m].
FIT_TOLERANCE = 5e-4
#: Factor applied to the size while it does not fit, and how many times at most.
SHRINK = 0.6
SHRINK_STEPS = 8
#: Every how many ticks of the kinematic check contacts are looked for.
CONTACT_EVERY = 4


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
    tilt: float = TILT,
) -> SiteTrajectory:
    """A demo trajectory starting at the tool pose ``(position, orientation)``.

    Figure-eight and circle lie in the vertical world y-z plane. The waypoints trace a square
    of side ``size`` in that plane, the tool tilted by ``tilt`` [rad] about world x along its
    top; ``speed`` [m/s], ``acceleration`` [m/s^2], ``angular_speed`` [rad/s] and
    ``angular_acceleration`` [rad/s^2] limit their moves.
    """
    options = PlanarCurveOptions(
        plane="yz", orientation=orientation, cycles=cycles, ramp_time=ramp_time
    )
    if kind == "figure8":
        half_width = size or 0.15
        return FigureEightTrajectory(
            frame, position, half_width=half_width, period=period, options=options
        )
    if kind == "circle":
        radius = size or 0.2
        centre = position - np.array([0.0, radius, 0.0])
        return CircleTrajectory(frame, centre, radius=radius, period=period, options=options)
    if kind == "waypoints":
        d = size or 0.1
        offsets = np.array(
            [[0, 0, 0], [0, d, 0], [0, d, d], [0, -d, d], [0, -d, 0], [0, 0, 0]], dtype=float
        )
        tilted = rotate_by_vector(orientation, [tilt, 0.0, 0.0])  # about world x
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
    raise InputError(f"trajectory must be one of {', '.join(TRAJECTORIES)}, got {kind!r}")


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


def _reach(robot: PinkRobot, tool_position: np.ndarray) -> float:
    """The arm's length at home [m]: joint origins along the controlled chain, then the
    tool (at least 5 cm)."""
    model = robot.model
    data = model.createData()
    pin.forwardKinematics(model, data, robot.q0)
    points = [data.oMi[model.getJointId(n)].translation for n in robot.controlled_joint_names]
    points.append(tool_position)
    return max(sum(float(np.linalg.norm(b - a)) for a, b in zip(points, points[1:])), 0.05)


def demo_scale(
    robot: PinkRobot, kind: str, size: float | None, period: float, tool_position: np.ndarray
) -> DemoScale:
    """Size and pace of the demo trajectory ``kind`` for ``robot``, from its reach and limits.

    The reach ``r`` is the arm's length at home (from joint origin to joint origin along the
    controlled chain, then to the tool); the size is :data:`SIZE_OF_REACH` of it (unless
    given). The Cartesian motion may ask for :data:`SHARE_OF_LIMITS` of the slowest joint's
    velocity, acceleration and jerk limits times ``r``: a figure-eight of half-width ``W`` at
    angular rate ``w`` peaks at about ``1.4 W w``, ``2.1 W w^2`` and ``4.1 W w^3``, so the
    period (at least ``period``) is lengthened until all three fit; the waypoint moves get
    that speed and acceleration.
    """
    model = robot.model
    reach = _reach(robot, tool_position)
    size = size if size is not None else SIZE_OF_REACH[kind] * reach
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
    amplitude = size if kind == "figure8" else 1.2 * size
    rate = min(
        v_c / (1.4 * amplitude), np.sqrt(a_c / (2.1 * amplitude)), np.cbrt(j_c / (4.1 * amplitude))
    )
    # a waypoint move switches its acceleration at once: a jerk-limited arm lags a corner by
    # about a^3 / (6 j^2), kept below CORNER_LAG
    corner = float(np.cbrt(6.0 * j_c * j_c * CORNER_LAG))
    # rotations turn the wrist joints by about the same angle: limits without the reach
    w_v, w_a, w_j = (v_c / reach, a_c / reach, j_c / reach)
    angular_corner = float(np.cbrt(6.0 * w_j * w_j * CORNER_LAG / reach))
    return DemoScale(
        reach=reach,
        size=size,
        period=max(period, 2.0 * np.pi / rate),
        speed=v_c,
        acceleration=min(a_c, corner),
        angular_speed=w_v,
        angular_acceleration=min(w_a, angular_corner),
    )


@dataclass(frozen=True)
class Fit:
    """Outcome of :func:`kinematic_check` (one size) or :func:`fit_size` (the size chosen).

    Attributes:
        scale: Size and pace.
        max_error: Largest tool-to-target distance of the kinematic check [m].
        contacts: Link pairs (or link and floor) that touched, sorted.
        requested: The size first tried [m].
    """

    scale: DemoScale
    max_error: float
    contacts: tuple[tuple[str, str], ...]
    requested: float

    @property
    def ok(self) -> bool:
        """Whether the tool followed the curve without any contact."""
        return self.max_error <= FIT_TOLERANCE and not self.contacts

    def why(self) -> str:
        """Why it does not fit, in a few words (empty when it does)."""
        reasons = []
        if self.max_error > FIT_TOLERANCE:
            reasons.append(f"the tool lags the target by up to {self.max_error * 1e3:.1f} mm")
        if self.contacts:
            a, b = self.contacts[0]
            reasons.append(f"{a} touches {b}")
        return "; ".join(reasons)


def _contacts(sim: MujocoSimulation) -> set[tuple[str, str]]:
    """Body pairs in contact (penetrating) in the simulation's current configuration."""
    model, data = sim.model, sim.data
    pairs = set()
    for k in range(data.ncon):
        contact = data.contact[k]
        if contact.dist >= 0.0:
            continue
        names = (
            model.body(model.geom_bodyid[contact.geom1]).name or "world",
            model.body(model.geom_bodyid[contact.geom2]).name or "world",
        )
        pairs.add((min(names), max(names)))
    return pairs


def demo_controller(
    robot: PinkRobot, sim: MujocoSimulation, *, solver: str, dt: float, position_only: bool
) -> PinkIKController:
    """The demo's IK controller: it integrates its own command, with the orientation cost
    off when ``position_only``."""
    orientation_cost = 0.0 if position_only else 1.0
    return PinkIKController(
        robot,
        sim.joint_names,
        sim.site_names,
        solver=solver,
        dt=dt,
        integrate_from="command",
        orientation_cost=orientation_cost,
    )


def kinematic_check(
    robot: PinkRobot,
    sim: MujocoSimulation,
    trajectory: Trajectory,
    scale: DemoScale,
    *,
    frame: str,
    solver: str,
    position_only: bool,
    duration: float,
) -> Fit:
    """Follow ``trajectory`` (which moves the site ``frame``) for ``duration`` seconds
    kinematically (no physics) at :data:`FIT_RATE`; the simulation is back at home afterwards."""
    dt = 1.0 / FIT_RATE
    controller = demo_controller(robot, sim, solver=solver, dt=dt, position_only=position_only)
    joints = list(robot.controlled_joint_names)
    sim.reset()
    estimated = sim.get_robot_state()  # the command is integrated: the measurement stays
    if not controller.reset(estimated, None, 0.0):
        raise InputError(f"{robot.name}: the IK controller cannot start: {controller.last_error}")
    at_home = _contacts(sim)
    worst = 0.0
    touching: set[tuple[str, str]] = set()
    try:
        for k in range(int(duration * FIT_RATE) + 1):
            t = k * dt
            setpoint = trajectory.get_target_state(t)
            desired = controller.forward(estimated, setpoint, t)
            if desired is None or desired.joints is None or setpoint is None:
                continue
            sim.set_joint_positions(joints, desired.joints.get_positions(joints))
            assert setpoint.sites is not None
            target = setpoint.sites.get_position(frame)
            if target is not None:
                error = float(np.linalg.norm(sim.get_site_pose(frame)[0] - target))
                worst = max(worst, error)
            if k % CONTACT_EVERY == 0:
                touching |= _contacts(sim) - at_home
    finally:
        sim.reset()
    return Fit(scale, worst, tuple(sorted(touching)), scale.size)


def fit_size(
    robot: PinkRobot,
    sim: MujocoSimulation,
    kind: str,
    *,
    size: float | None,
    period: float,
    ramp_time: float,
    duration: float | None,
    solver: str,
    position_only: bool,
) -> tuple[Fit, Trajectory]:
    """The demo trajectory ``kind`` for ``robot`` and its kinematic check.

    With ``size=None`` the size from :func:`demo_scale` is shrunk by :data:`SHRINK` (at most
    :data:`SHRINK_STEPS` times, the waypoints' tilt with it) until :func:`kinematic_check`
    passes; a given size is checked as it is.

    Raises:
        InputError: No size tried passes (the message says why the smallest did not).
    """
    frame = robot.tool_frame
    if frame is None:
        raise InputError(f"{robot.name}: no tool frame to move")
    start_position, start_orientation = sim.get_site_pose(frame)
    scale = demo_scale(robot, kind, size, period, start_position)
    requested = scale.size
    steps = SHRINK_STEPS if size is None else 0
    for step in range(steps + 1):
        if step:
            scale = demo_scale(robot, kind, scale.size * SHRINK, period, start_position)
        cycles = 2.0
        if duration is not None and kind != "waypoints":
            cycles = max((duration - ramp_time) / scale.period, 0.25)
        trajectory = build_trajectory(
            kind,
            frame,
            start_position,
            start_orientation,
            period=scale.period,
            size=scale.size,
            ramp_time=ramp_time,
            cycles=cycles,
            speed=scale.speed,
            acceleration=scale.acceleration,
            angular_speed=scale.angular_speed,
            angular_acceleration=scale.angular_acceleration,
            tilt=TILT * scale.size / requested,
        )
        run_time = trajectory.duration if duration is None else min(duration, trajectory.duration)
        fit = kinematic_check(
            robot,
            sim,
            trajectory,
            scale,
            frame=frame,
            solver=solver,
            position_only=position_only,
            duration=run_time,
        )
        fit = Fit(fit.scale, fit.max_error, fit.contacts, requested)
        if fit.ok:
            return fit, trajectory
    if size is not None:
        raise InputError(
            f"size {size:g} m: {robot.name} cannot follow this {kind} from its home pose "
            f"({fit.why()}); leave the size out to get one that fits"
        )
    raise InputError(
        f"{robot.name} cannot follow a {kind} from its home pose, even {scale.size * 1e3:.0f} mm "
        f"wide ({fit.why()})"
    )
