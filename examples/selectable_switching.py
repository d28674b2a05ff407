"""Switch between a Cartesian IK controller and a joint-space trajectory at run time.

What it shows: :class:`~pinkctl.SelectableController` holding two controllers under the keys of
a small ``Enum``, and its *deferred* switch. A tiny state machine in the control loop drives
it:

1. ``Mode.REACH``: the :class:`~pinkctl.PinkIKController` moves the tool to a Cartesian goal
   15 cm forward and 10 cm down from home (the setpoint glides there over 1.5 s).
2. At ``t = 2 s`` the state machine plans the way back in joint space: a
   :class:`~pinkctl.Path` from the *measured* arm joints to the home joints, timed by
   :meth:`~pinkctl.Path.to_minimal_time_joint_trajectory` at half the Franka's velocity and
   acceleration limits, and hands it to a :class:`~pinkctl.TrajectoryFollower`. It then calls
   ``set_next_controller(Mode.HOME)``: nothing switches yet (the active key is still
   ``REACH``). The next ``forward`` makes ``Mode.HOME`` active, resets the follower with that
   call's time (so the trajectory starts there) and returns its first joint setpoint.
3. When the trajectory is over, the state machine selects ``Mode.REACH`` again; the IK
   controller is reset from the measured state on the next tick and holds the home pose.

The scenario passes when the tool reached the Cartesian goal (within 2 mm), the switch
happened in the ``forward`` right after the request, the arm ends within 0.01 rad of home and
no tick returned None.

Run::

    python examples/selectable_switching.py
    python examples/selectable_switching.py --quick
"""

from __future__ import annotations

import argparse
import enum
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pinkctl import (
    MujocoSimulation,
    Path,
    PinkIKController,
    RobotState,
    SelectableController,
    SpatialState,
    TrajectoryFollower,
    load_pink_supported_robot,
)

GOAL_OFFSET = np.array([0.15, 0.0, -0.10])  # [m], world frame, from the tool's home position
GLIDE_TIME = 1.5  # [s] the Cartesian setpoint glides from home to the goal
SWITCH_TIME = 2.0  # [s] when the state machine asks for the joint-space trajectory home
LIMIT_SCALE = 0.5  # fraction of the robot's velocity and acceleration limits


class Mode(enum.Enum):
    """Keys of the selectable controller."""

    REACH = "reach"  # Cartesian target through the IK controller
    HOME = "home"  # joint-space trajectory back to the home configuration


@dataclass
class SwitchingResult:
    """Outcome of :func:`run`."""

    reach_error_mm: float
    home_error_rad: float
    trajectory_duration: float
    switch_deferred: bool
    ticks: int
    ticks_none: int
    events: list[str] = field(default_factory=list)
    wall_time_s: float = 0.0
    ok: bool = False


def run(*, hold_time: float = 1.0, control_rate: float = 500.0) -> SwitchingResult:
    """Reach, switch to the joint trajectory home, hold ``hold_time`` s there, then check."""
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot, timestep=0.002)
    tool = robot.tool_frame
    assert tool is not None
    dt = 1.0 / control_rate
    steps_per_tick = max(1, round(dt / sim.timestep))
    arm = list(robot.controlled_joint_names)
    home = sim.get_joint_positions(arm)
    home_position, home_orientation = sim.get_site_pose(tool)
    goal_position = home_position + GOAL_OFFSET

    ik = PinkIKController(robot, sim.joint_names, sim.site_names, dt=dt, integrate_from="command")
    follower = TrajectoryFollower()
    selector = SelectableController({Mode.REACH: ik, Mode.HOME: follower}, Mode.REACH)

    def reach_setpoint(t: float) -> RobotState:
        """Cartesian setpoint of the REACH phase: a smoothstep glide from home to the goal."""
        s = min(t / GLIDE_TIME, 1.0)
        position = home_position + (s * s * (3.0 - 2.0 * s)) * GOAL_OFFSET
        return RobotState(
            sites=SpatialState.from_name(
                [tool],
                positions=([tool], position[None, :]),
                orientations=([tool], home_orientation[None, :]),
            )
        )

    events: list[str] = []
    reach_error = np.inf
    switch_deferred = False
    home_end: float | None = None  # time the joint trajectory ends [s]
    follower_duration = np.inf
    stop_time = np.inf
    ticks = ticks_none = 0
    start = time.perf_counter()
    t = 0.0
    selector.reset(sim.get_robot_state(), reach_setpoint(0.0), t)
    while t < stop_time:
        estimated = sim.get_robot_state()
        requested = False
        # --- state machine: decide what runs from this tick on
        active = selector.get_active_controller_enum()
        if active is Mode.REACH and home_end is None and t >= SWITCH_TIME:
            reach_error = float(np.linalg.norm(sim.get_site_pose(tool)[0] - goal_position))
            path = Path(np.vstack([sim.get_joint_positions(arm), home]))
            trajectory = path.to_minimal_time_joint_trajectory(
                [LIMIT_SCALE * robot.velocity_limits[j] for j in arm],
                [LIMIT_SCALE * robot.acceleration_limits[j] for j in arm],
                sim.joint_names,
                arm,
            )
            follower.set_trajectory(trajectory)
            selector.set_next_controller(Mode.HOME)
            home_end = t + trajectory.duration
            follower_duration = trajectory.duration
            requested = True
            events.append(
                f"t={t:.3f} s  set_next_controller(HOME) -> active "
                f"{selector.get_active_controller_enum().name}, next "
                f"{selector.get_next_controller_enum().name} (joint trajectory home "
                f"{trajectory.duration:.2f} s)"
            )
        elif (
            active is Mode.HOME
            and follower.start_time is not None
            and t - follower.start_time > follower_duration  # the follower's own end test
        ):
            selector.set_next_controller(Mode.REACH)
            stop_time = t + hold_time
            events.append(f"t={t:.3f} s  trajectory over: set_next_controller(REACH)")
        # --- control tick
        setpoint = reach_setpoint(t) if home_end is None else None
        desired = selector.forward(estimated, setpoint, t)
        if requested:
            switch_deferred = (
                selector.get_active_controller_enum() is Mode.HOME
                and follower.start_time == t  # reset by the switch, at this tick's time
            )
            events.append(
                f"t={t:.3f} s  after forward -> active "
                f"{selector.get_active_controller_enum().name} (follower started at "
                f"t={follower.start_time:.3f} s)"
            )
        ticks += 1
        if desired is None:
            ticks_none += 1
        else:
            sim.apply(desired)
        sim.step(steps_per_tick)
        t += dt
    wall = time.perf_counter() - start

    home_error = float(np.max(np.abs(sim.get_joint_positions(arm) - home)))
    trajectory_duration = 0.0 if home_end is None else home_end - SWITCH_TIME
    ok = (
        reach_error <= 2e-3
        and switch_deferred
        and home_error <= 0.01
        and ticks_none == 0
        and selector.get_active_controller_enum() is Mode.REACH
    )
    return SwitchingResult(
        reach_error_mm=reach_error * 1e3,
        home_error_rad=home_error,
        trajectory_duration=trajectory_duration,
        switch_deferred=switch_deferred,
        ticks=ticks,
        ticks_none=ticks_none,
        events=events,
        wall_time_s=wall,
        ok=bool(ok),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0: the check passed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hold", type=float, default=1.0, help="hold time at home [s]")
    parser.add_argument("--quick", action="store_true", help="short hold (smoke tests)")
    parser.add_argument("--rate", type=float, default=500.0, help="control rate [Hz]")
    args = parser.parse_args(argv)
    result = run(hold_time=0.3 if args.quick else args.hold, control_rate=args.rate)
    for line in result.events:
        print(line)
    status = "OK" if result.ok else "FAILED"
    print(
        f"selectable_switching [{status}]: reach error {result.reach_error_mm:.3f} mm, "
        f"deferred switch {'yes' if result.switch_deferred else 'NO'}, joint trajectory "
        f"{result.trajectory_duration:.2f} s, final |q - home| max {result.home_error_rad:.4f} "
        f"rad, {result.ticks} ticks ({result.ticks_none} returning None), "
        f"{result.wall_time_s:.2f} s wall"
    )
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
