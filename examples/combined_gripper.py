"""Drive the arm and the gripper with two controllers whose outputs are merged.

What it shows: :class:`~pinkctl.CombinedController` running two controllers on the same input
and merging their outputs. The Franka's :class:`~pinkctl.PinkIKController` commands only the
robot's controlled joints (the 7 arm joints, from ``robot.toml``), so the fingers are free for
a second controller:

* arm: a :class:`~pinkctl.TrajectoryFollower` chained into the IK controller (composites
  nest), tracing a horizontal circle of radius 8 cm;
* gripper: ``FingerController`` below, a small :class:`~pinkctl.BaseController` written for
  this example, which commands ``panda_finger_joint1`` (``panda_finger_joint2`` mimics it in
  MuJoCo) from open (0.04 m) to closed (0 m) at a limited speed, starting at ``--close-at``
  seconds, and optionally open again at ``--open-at``.

Both outputs live in the simulation's joint space and command different joints, so
:func:`~pinkctl.combine_robot_states` merges them into one state with 8 commanded positions.
Had they overlapped (the same joint commanded twice), the combined controller would return
None for that tick.

The scenario passes when the fingers start open and end closed (within 2 mm), the merged
command holds the 7 arm joints plus the finger, the arm tracks within 1 mm RMS while the
fingers move, and no tick returned None.

Run::

    python examples/combined_gripper.py
    python examples/combined_gripper.py --quick
    python examples/combined_gripper.py --close-at 0.5 --open-at 2.5 --duration 4
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pinkctl import (
    ChainedController,
    CircleTrajectory,
    CombinedController,
    GripperController,
    MujocoSimulation,
    PinkIKController,
    RobotState,
    TrajectoryFollower,
    load_pink_supported_robot,
    run_closed_loop,
)

FINGER = "panda_finger_joint1"
OPEN = 0.04  # [m] finger opening of panda_finger_joint1 (each finger; the gap is twice this)
CLOSED = 0.0  # [m]


class FingerController(GripperController):
    """Opens and closes a one-joint gripper on a time schedule.

    A :class:`~pinkctl.controllers.GripperController` whose goal follows the schedule:
    ``open_position`` before ``close_at`` and after ``open_at``, ``closed_position`` in between.
    Times are seconds since :meth:`reset`.

    Args:
        robot_joint_space: Joint space of the output (the simulation's ``joint_names``).
        joint: The finger joint to command.
        close_at: When to start closing [s].
        open_at: When to start opening again [s]; None: stay closed.
        speed: Finger speed [m/s], > 0.
    """

    def __init__(
        self,
        robot_joint_space: Sequence[str],
        *,
        joint: str = FINGER,
        close_at: float,
        open_at: float | None = None,
        speed: float = 0.05,
        open_position: float = OPEN,
        closed_position: float = CLOSED,
    ) -> None:
        super().__init__(
            robot_joint_space,
            joint=joint,
            open_position=open_position,
            closed_position=closed_position,
            speed=speed,
        )
        self.close_at = float(close_at)
        self.open_at = None if open_at is None else float(open_at)
        self._t0 = 0.0

    def scheduled_goal(self, elapsed: float) -> float:
        """Finger position the schedule asks for ``elapsed`` seconds after reset [m]."""
        closing = elapsed >= self.close_at and (self.open_at is None or elapsed < self.open_at)
        return self.closed_position if closing else self.open_position

    def reset(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> bool:
        """Start the schedule at ``t`` from the measured finger position."""
        self._t0 = float(t)
        return super().reset(estimated_state, setpoint_state, t, **kwargs)

    def forward(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> RobotState | None:
        """The finger command of time ``t``: one step towards the schedule's goal."""
        self.goal = self.scheduled_goal(float(t) - self._t0)
        return super().forward(estimated_state, setpoint_state, t, **kwargs)


@dataclass
class GripperResult:
    """Outcome of :func:`run`."""

    finger_start: float
    finger_end: float
    finger_min: float
    commanded_joints: list[str]
    summary: dict[str, float]
    duration: float
    wall_time_s: float
    ok: bool


def run(
    *,
    duration: float = 4.0,
    close_at: float = 1.0,
    open_at: float | None = None,
    control_rate: float = 500.0,
) -> GripperResult:
    """Circle with the arm while the gripper follows its schedule; check both."""
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot, timestep=0.002)
    tool = robot.tool_frame
    assert tool is not None
    position, orientation = sim.get_site_pose(tool)
    radius = 0.08
    circle = CircleTrajectory(
        tool,
        position - np.array([radius, 0.0, 0.0]),
        radius=radius,
        period=max(duration - 0.5, 1.0),
        plane="xy",
        orientation=orientation,
        cycles=1.0,
        ramp_time=0.5,
    )
    follower = TrajectoryFollower()
    follower.set_trajectory(circle)
    ik = PinkIKController(
        robot, sim.joint_names, sim.site_names, dt=1.0 / control_rate, integrate_from="command"
    )
    gripper = FingerController(sim.joint_names, close_at=close_at, open_at=open_at)
    controller = CombinedController([ChainedController([follower, ik]), gripper])
    print(f"controller: {controller!r}")

    commanded: list[str] = []

    def on_tick(t: float, desired: RobotState | None) -> None:
        if not commanded and desired is not None and desired.joints is not None:
            commanded.extend(desired.joints.position_names)

    finger_start = float(sim.get_joint_positions([FINGER])[0])
    run_time = min(duration, circle.duration)
    start = time.perf_counter()
    log = run_closed_loop(
        sim,
        controller,
        duration=run_time,
        control_rate=control_rate,
        reference=circle.get_target_state,
        tool_frame=tool,
        progress=False,
        on_tick=on_tick,
    )
    wall = time.perf_counter() - start
    finger = log.q[:, log.joint_names.index(FINGER)]
    summary = log.summary()
    expected_end = gripper.scheduled_goal(run_time)
    arm = list(robot.controlled_joint_names)
    ok = (
        abs(finger_start - OPEN) <= 2e-3
        and abs(float(finger[-1]) - expected_end) <= 2e-3
        and float(np.min(finger)) <= CLOSED + 2e-3
        and sorted(commanded) == sorted([*arm, FINGER])
        and summary["rms_position_error_mm"] <= 1.0
        and summary["ticks_none"] == 0
    )
    return GripperResult(
        finger_start=finger_start,
        finger_end=float(finger[-1]),
        finger_min=float(np.min(finger)),
        commanded_joints=commanded,
        summary=summary,
        duration=run_time,
        wall_time_s=wall,
        ok=bool(ok),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0: the check passed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=4.0, help="simulated time [s]")
    parser.add_argument("--quick", action="store_true", help="short run (2 s) for smoke tests")
    parser.add_argument("--close-at", type=float, default=None, help="start closing [s]")
    parser.add_argument("--open-at", type=float, default=None, help="start opening again [s]")
    parser.add_argument("--rate", type=float, default=500.0, help="control rate [Hz]")
    args = parser.parse_args(argv)
    duration = 2.0 if args.quick else args.duration
    close_at = args.close_at if args.close_at is not None else 0.25 * duration
    result = run(duration=duration, close_at=close_at, open_at=args.open_at, control_rate=args.rate)
    s = result.summary
    status = "OK" if result.ok else "FAILED"
    print(f"merged command: {len(result.commanded_joints)} joints {result.commanded_joints}")
    print(
        f"combined_gripper [{status}]: {result.duration:.2f} s in {result.wall_time_s:.2f} s wall, "
        f"finger {result.finger_start * 1e3:.1f} mm -> {result.finger_end * 1e3:.1f} mm "
        f"(min {result.finger_min * 1e3:.1f} mm), arm error RMS "
        f"{s['rms_position_error_mm']:.3f} mm, max {s['max_position_error_mm']:.3f} mm, "
        f"ticks returning None {int(s['ticks_none'])}"
    )
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
