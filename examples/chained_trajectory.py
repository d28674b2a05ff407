"""A Cartesian trajectory played by a TrajectoryFollower chained into the IK controller.

What it shows: composing controllers. A :class:`~pinkctl.TrajectoryFollower` turns a
time-parametrised Cartesian trajectory into a site setpoint at every tick; a
:class:`~pinkctl.ChainedController` hands that setpoint to a :class:`~pinkctl.PinkIKController`,
which turns it into joint commands. :func:`~pinkctl.run_closed_loop` runs the chain against the
MuJoCo simulation and logs every tick; the summary table is printed at the end.

Two trajectories, both starting at the tool's home pose with the tool pointing down:

* ``waypoints`` (default): a :class:`~pinkctl.PoseWaypointTrajectory` around a 16 cm square
  in a horizontal plane, turning the tool about the vertical by up to 0.6 rad and tilting it
  by 0.3 rad on the way, stopping at each corner;
* ``circle``: a :class:`~pinkctl.CircleTrajectory` of radius 0.1 m in a horizontal plane, the
  tool rocking by 0.2 rad, with a smooth start and stop.

The scenario passes when the position error stays below 1 mm RMS and 3 mm max, no tick returns
None and no command leaves the joint limits.

Run::

    python examples/chained_trajectory.py
    python examples/chained_trajectory.py --trajectory circle --plot circle.png
    python examples/chained_trajectory.py --quick
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pinkctl import (
    ChainedController,
    CircleTrajectory,
    ClosedLoopLog,
    MujocoSimulation,
    PinkIKController,
    PoseWaypointTrajectory,
    Trajectory,
    TrajectoryFollower,
    load_pink_supported_robot,
    run_closed_loop,
)

RMS_BOUND_MM = 1.0
MAX_BOUND_MM = 3.0


@dataclass
class ChainedResult:
    """Outcome of :func:`run`."""

    log: ClosedLoopLog
    summary: dict[str, float]
    duration: float
    wall_time_s: float
    ok: bool


def _about_z(angle: float) -> np.ndarray:
    """Quaternion (w, x, y, z) of a rotation by ``angle`` [rad] about the world z axis."""
    return np.array([np.cos(angle / 2.0), 0.0, 0.0, np.sin(angle / 2.0)])


def _about_x(angle: float) -> np.ndarray:
    """Quaternion (w, x, y, z) of a rotation by ``angle`` [rad] about the world x axis."""
    return np.array([np.cos(angle / 2.0), np.sin(angle / 2.0), 0.0, 0.0])


def _multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` of quaternions (w, x, y, z)."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def build_trajectory(
    kind: str, frame: str, position: np.ndarray, orientation: np.ndarray, *, quick: bool
) -> Trajectory:
    """The scenario's trajectory, starting at the tool pose ``(position, orientation)``."""
    if kind == "waypoints":
        half = 0.04 if quick else 0.08
        corners = np.array(
            [[0, 0, 0], [half, half, 0], [-half, half, 0], [-half, -half, 0], [half, -half, 0]]
        )
        if quick:
            corners = corners[:3]
        positions = np.vstack([position + corners, position])
        turns = [0.0, 0.6, -0.6, 0.0, 0.3][: len(corners)]
        orientations = [_multiply(_about_z(a), orientation) for a in turns]
        orientations[2] = _multiply(_about_x(0.3), orientations[2])
        orientations.append(orientation)
        return PoseWaypointTrajectory(
            frame,
            positions,
            np.array(orientations),
            max_linear_velocity=0.25,
            max_angular_velocity=1.0,
            max_linear_acceleration=1.0,
            max_angular_acceleration=4.0,
        )
    if kind == "circle":
        radius = 0.1
        return CircleTrajectory(
            frame,
            position - np.array([radius, 0.0, 0.0]),
            radius=radius,
            period=2.0 if quick else 4.0,
            plane="xy",
            orientation=orientation,
            cycles=1.0 if quick else 2.0,
            ramp_time=0.5,
            orientation_amplitude=0.2,
            orientation_axis=[1.0, 0.0, 0.0],
        )
    raise ValueError(f"trajectory must be 'waypoints' or 'circle', got {kind!r}")


def run(
    *, trajectory: str = "waypoints", quick: bool = False, control_rate: float = 500.0
) -> ChainedResult:
    """Build the chain, run it over the whole trajectory and check the tracking bounds."""
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot, timestep=0.002)
    tool = robot.tool_frame
    assert tool is not None
    position, orientation = sim.get_site_pose(tool)
    reference = build_trajectory(trajectory, tool, position, orientation, quick=quick)

    follower = TrajectoryFollower()
    follower.set_trajectory(reference)
    ik = PinkIKController(
        robot, sim.joint_names, sim.site_names, dt=1.0 / control_rate, integrate_from="command"
    )
    controller = ChainedController([follower, ik])

    start = time.perf_counter()
    log = run_closed_loop(
        sim,
        controller,
        duration=reference.duration,
        control_rate=control_rate,
        reference=reference.get_target_state,
        tool_frame=tool,
        progress=False,
    )
    wall = time.perf_counter() - start
    summary = log.summary()
    ok = (
        summary["rms_position_error_mm"] <= RMS_BOUND_MM
        and summary["max_position_error_mm"] <= MAX_BOUND_MM
        and summary["ticks_none"] == 0
        and summary["limit_violations"] == 0
    )
    return ChainedResult(
        log=log, summary=summary, duration=reference.duration, wall_time_s=wall, ok=bool(ok)
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0: the check passed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trajectory", choices=("waypoints", "circle"), default="waypoints")
    parser.add_argument("--quick", action="store_true", help="shorter trajectory (smoke tests)")
    parser.add_argument("--rate", type=float, default=500.0, help="control rate [Hz]")
    parser.add_argument("--plot", metavar="FILE", help="save a PNG of the run (matplotlib)")
    args = parser.parse_args(argv)
    result = run(trajectory=args.trajectory, quick=args.quick, control_rate=args.rate)
    print(f"{args.trajectory} trajectory, {result.duration:.2f} s simulated:")
    print(result.log.format_summary())
    if args.plot:
        path = result.log.plot(args.plot, title=f"follower -> IK chain, {args.trajectory}")
        print(f"plot saved to {path}")
    s = result.summary
    status = "OK" if result.ok else "FAILED"
    print(
        f"chained_trajectory [{status}]: {result.duration:.2f} s in {result.wall_time_s:.2f} s "
        f"wall, position error RMS {s['rms_position_error_mm']:.3f} mm "
        f"(bound {RMS_BOUND_MM:g}), max {s['max_position_error_mm']:.3f} mm "
        f"(bound {MAX_BOUND_MM:g}), orientation RMS {s['rms_orientation_error_mrad']:.3f} mrad"
    )
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
