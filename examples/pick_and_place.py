"""Pick up a cube and place it somewhere else, with a state machine driving IK and gripper.

What it shows: a complete manipulation task built from pinkctl pieces.

* Scene: the Franka with a free 4 cm, 0.1 kg cube on the floor in front of it, added to the
  MuJoCo model through ``MujocoSimulation.from_robot(..., spec_callback=...)``, and a flat
  (visual only) marker where the cube should go.
* Control: a :class:`~pinkctl.CombinedController` of the arm's
  :class:`~pinkctl.PinkIKController` (7 arm joints) and a small ``Gripper`` controller (the
  finger joint), so one ``forward`` per tick commands both.
* Task logic: a state machine with the phases approach, descend, grasp, lift, transport,
  place, release, retreat. Every motion phase plans a straight-line
  :class:`~pinkctl.PoseWaypointTrajectory` from the previous goal to its own, with the tool z
  axis pointing down (top-down grasp) and the fingers closing along world y; the state
  machine samples it each tick as the IK setpoint. A motion phase ends when its trajectory is
  over and the tool is within 5 mm of the goal; grasp and release end when the fingers have
  stopped moving. Each phase has a timeout.

The scenario passes when the cube was lifted at least 5 cm off the floor, ends within 2 cm
of the goal, and every phase finished before its timeout.

Run::

    python examples/pick_and_place.py
    python examples/pick_and_place.py --quick          # faster motions
    python examples/pick_and_place.py --video pick.mp4 # and a video (pinkctl[video])
"""

from __future__ import annotations

import argparse
import enum
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np

from pinkctl import (
    CombinedController,
    GripperController,
    MujocoSimulation,
    PinkIKController,
    PoseWaypointTrajectory,
    RobotState,
    SpatialState,
    load_pink_supported_robot,
)
from pinkctl.sim import VideoRecorder

CUBE_SIZE = 0.04  # [m] edge length
CUBE_MASS = 0.1  # [kg]
CUBE_START = np.array([0.45, 0.15, CUBE_SIZE / 2])  # [m] cube centre, world frame
CUBE_GOAL = np.array([0.45, -0.15, CUBE_SIZE / 2])  # [m]
FINGER = "panda_finger_joint1"
FINGER_2 = "panda_finger_joint2"  # mimics FINGER (a joint equality in MuJoCo)
FINGER_OPEN = 0.04  # [m] per finger
FINGER_CLOSED = 0.0  # [m] commanded when grasping: the cube stops the fingers at half its size
GRASP_HEIGHT = CUBE_SIZE / 2 + 0.005  # [m] tool height at the grasp (fingertips 9.5 mm lower)
HOVER_HEIGHT = 0.12  # [m] above the grasp height for approach and retreat
LIFT_HEIGHT = 0.15  # [m] above the grasp height while transporting
PLACE_CLEARANCE = 0.002  # [m] release the cube this far above its resting height
REACHED_TOLERANCE = 0.005  # [m]


def add_scene(
    cube_position: np.ndarray = CUBE_START, goal_position: np.ndarray = CUBE_GOAL
) -> Callable[[mujoco.MjSpec], None]:
    """A ``spec_callback`` adding the free cube and the goal marker to the robot's MjSpec."""

    def callback(spec: mujoco.MjSpec) -> None:
        half = CUBE_SIZE / 2
        cube = spec.worldbody.add_body(name="cube", pos=list(cube_position))
        cube.add_freejoint(name="cube_free")
        cube.add_geom(
            name="cube",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[half, half, half],
            mass=CUBE_MASS,
            rgba=[0.85, 0.2, 0.2, 1.0],
            friction=[1.5, 0.01, 0.001],  # sliding, torsional, rolling
            condim=4,  # torsional friction too: the pinched cube does not spin
        )
        spec.worldbody.add_geom(
            name="goal",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[half + 0.005, half + 0.005, 0.0005],
            pos=[goal_position[0], goal_position[1], 0.0005],
            rgba=[0.1, 0.8, 0.2, 0.5],
            contype=0,
            conaffinity=0,
        )
        # elliptic friction cones model a pinch grasp more faithfully than pyramids
        spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC

    return callback


class Phase(enum.Enum):
    """States of the pick-and-place state machine, in order."""

    APPROACH = enum.auto()
    DESCEND = enum.auto()
    GRASP = enum.auto()
    LIFT = enum.auto()
    TRANSPORT = enum.auto()
    PLACE = enum.auto()
    RELEASE = enum.auto()
    RETREAT = enum.auto()
    DONE = enum.auto()


@dataclass
class PickPlaceResult:
    """Outcome of :func:`run`: distances in m, times in s."""

    lift: float
    place_error: float
    phase_times: dict[str, float]
    timed_out: str | None
    ticks_none: int
    sim_time: float
    wall_time_s: float
    ok: bool
    events: list[str] = field(default_factory=list)


def run(
    *, quick: bool = False, control_rate: float = 500.0, video: Path | None = None
) -> PickPlaceResult:
    """Run the pick-and-place task to the end (or to a phase timeout) and measure it;
    ``video``: record it to this .mp4 file (``pip install 'pinkctl[video]'``)."""
    robot = load_pink_supported_robot("franka")
    sim = MujocoSimulation.from_robot(robot, timestep=0.002, spec_callback=add_scene())
    tool = robot.tool_frame
    assert tool is not None
    recorder = None if video is None else VideoRecorder(sim, video, tool_frame=tool)
    dt = 1.0 / control_rate
    steps_per_tick = max(1, round(dt / sim.timestep))
    down = sim.get_site_pose(tool)[1]  # home orientation: tool z down, fingers along world y

    ik = PinkIKController(robot, sim.joint_names, sim.site_names, dt=dt, integrate_from="command")
    gripper = GripperController(
        sim.joint_names,
        joint=FINGER,
        open_position=FINGER_OPEN,
        closed_position=FINGER_CLOSED,
        speed=0.1,
    )
    controller = CombinedController([ik, gripper])

    speed, accel = (0.5, 2.0) if quick else (0.3, 1.0)  # tool limits [m/s], [m/s^2]
    grasp = np.array([CUBE_START[0], CUBE_START[1], GRASP_HEIGHT])
    place = np.array([CUBE_GOAL[0], CUBE_GOAL[1], GRASP_HEIGHT + PLACE_CLEARANCE])
    lift = np.array([0.0, 0.0, LIFT_HEIGHT])
    hover = np.array([0.0, 0.0, HOVER_HEIGHT])
    goals = {
        Phase.APPROACH: grasp + hover,
        Phase.DESCEND: grasp,
        Phase.LIFT: grasp + lift,
        Phase.TRANSPORT: place + lift,
        Phase.PLACE: place,
        Phase.RETREAT: place + hover,
    }
    timeouts = {p: 4.0 for p in Phase}

    def plan(start_position: np.ndarray, goal_position: np.ndarray) -> PoseWaypointTrajectory:
        """Straight line between two tool positions, tool pointing down, rest to rest."""
        return PoseWaypointTrajectory(
            tool,
            np.array([start_position, goal_position]),
            np.array([down, down]),
            max_linear_velocity=speed,
            max_angular_velocity=1.0,
            max_linear_acceleration=accel,
            max_angular_acceleration=4.0,
        )

    def setpoint_of(position: np.ndarray) -> RobotState:
        return RobotState(
            sites=SpatialState.from_name(
                [tool],
                positions=([tool], position[None, :]),
                orientations=([tool], down[None, :]),
            )
        )

    cube_z0 = float(sim.get_body_pose("cube")[0][2])
    phase = Phase.APPROACH
    phase_start = 0.0
    last_goal = sim.get_site_pose(tool)[0]
    trajectory: PoseWaypointTrajectory | None = None
    finger_history: list[float] = []
    max_lift = 0.0
    phase_times: dict[str, float] = {}
    events: list[str] = []
    timed_out: str | None = None
    ticks_none = 0

    def enter(next_phase: Phase, t: float) -> None:
        nonlocal phase, phase_start, trajectory, last_goal
        phase_times[phase.name] = t - phase_start
        events.append(f"t={t:6.3f} s  {phase.name:<9} done -> {next_phase.name}")
        if trajectory is not None:
            last_goal = goals[phase]
        phase, phase_start, trajectory = next_phase, t, None
        finger_history.clear()
        if next_phase in goals:
            trajectory = plan(last_goal, goals[next_phase])
        elif next_phase is Phase.GRASP:
            gripper.close()
        elif next_phase is Phase.RELEASE:
            gripper.open()

    trajectory = plan(last_goal, goals[Phase.APPROACH])  # first phase: from the home pose
    t = 0.0
    start = time.perf_counter()
    if not controller.reset(sim.get_robot_state(), None, t):
        raise RuntimeError(f"controller reset failed: {controller.last_error}")
    while phase is not Phase.DONE:
        estimated = sim.get_robot_state()
        elapsed = t - phase_start
        tool_position = sim.get_site_pose(tool)[0]
        finger = float(sim.get_joint_positions([FINGER])[0])
        # ---- state machine: is the current phase over?
        if trajectory is not None:
            goal = goals[phase]
            if (
                elapsed >= trajectory.duration
                and np.linalg.norm(tool_position - goal) < REACHED_TOLERANCE
            ):
                enter(Phase(phase.value + 1), t)
                elapsed = 0.0
        else:  # grasp / release: wait until the fingers stop moving
            finger_history.append(finger)
            window = round(0.1 / dt)
            settled = (
                elapsed >= 0.3
                and len(finger_history) > window
                and abs(finger_history[-1] - finger_history[-1 - window]) < 2e-4
            )
            if settled:
                if phase is Phase.GRASP:
                    f1, f2 = sim.get_joint_positions([FINGER, FINGER_2])
                    events.append(
                        f"t={t:6.3f} s  fingers stopped at {f1 * 1e3:.1f} / {f2 * 1e3:.1f} mm "
                        f"(cube half-size {CUBE_SIZE / 2 * 1e3:.0f} mm)"
                    )
                enter(Phase(phase.value + 1), t)
                elapsed = 0.0
        if phase is Phase.DONE:
            break
        if elapsed > timeouts[phase]:
            timed_out = phase.name
            events.append(f"t={t:6.3f} s  {phase.name} timed out")
            break
        # ---- setpoint of this tick and one control step
        if trajectory is not None:
            target = trajectory.get_target_state(min(elapsed, trajectory.duration))
        else:
            target = setpoint_of(last_goal)
        if target is not None and target.sites is not None:
            pose = target.sites.get_pose(tool)
            if pose is not None:
                sim.set_target_marker(*pose)
        desired = controller.forward(estimated, target, t)
        if desired is None:
            ticks_none += 1
        else:
            sim.apply(desired)
        sim.step(steps_per_tick)
        t += dt
        if recorder is not None:
            recorder.capture(t)
        if phase in (Phase.LIFT, Phase.TRANSPORT):
            max_lift = max(max_lift, float(sim.get_body_pose("cube")[0][2]) - cube_z0)
    # let the cube come to rest before measuring where it is
    for _ in range(round(0.3 / dt)):
        sim.step(steps_per_tick)
        t += dt
        if recorder is not None:
            recorder.capture(t)
    wall = time.perf_counter() - start
    if recorder is not None:
        events.append(f"video written to {recorder.close()}")
    cube_position = sim.get_body_pose("cube")[0]
    place_error = float(np.linalg.norm(cube_position - CUBE_GOAL))
    ok = timed_out is None and max_lift >= 0.05 and place_error <= 0.02
    return PickPlaceResult(
        lift=max_lift,
        place_error=place_error,
        phase_times=phase_times,
        timed_out=timed_out,
        ticks_none=ticks_none,
        sim_time=t,
        wall_time_s=wall,
        ok=bool(ok),
        events=events,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0: the check passed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="faster motions (smoke tests)")
    parser.add_argument("--rate", type=float, default=500.0, help="control rate [Hz]")
    parser.add_argument(
        "--video", type=Path, default=None, help="record the run to this .mp4 ('pinkctl[video]')"
    )
    args = parser.parse_args(argv)
    result = run(quick=args.quick, control_rate=args.rate, video=args.video)
    for line in result.events:
        print(line)
    status = "OK" if result.ok else "FAILED"
    print(
        f"pick_and_place [{status}]: lift {result.lift * 100:.1f} cm (need >= 5), placement "
        f"error {result.place_error * 100:.2f} cm (need <= 2), {result.sim_time:.2f} s "
        f"simulated in {result.wall_time_s:.2f} s wall"
        + (f", {result.timed_out} timed out" if result.timed_out else "")
    )
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
