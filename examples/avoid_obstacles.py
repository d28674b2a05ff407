"""Reach around a box, then give way to a ball: one World shared by the controller and MuJoCo.

What it shows: a :class:`~pinkctl.World` with the floor, a box and a movable ball is handed to
the simulation (``MujocoSimulation.from_robot(robot, world=world)``: the same obstacles as
MuJoCo geoms, the ball a mocap body that follows ``world.move``) and to the controller
(``PinkIKController(..., world=world)``: collision rows in its QP). The scenario, on the
Franka in MuJoCo:

1. **Box** (``BOX_TIME`` s): the target jumps to a pose whose straight path from the tool
   runs through a box; the arm goes around it and reaches the target.
2. **Ball** (``BALL_TIME`` s): the target holds while a ball of radius ``BALL_RADIUS`` flies at
   ``BALL_SPEED`` from ``BALL_START`` away through where the arm's elbow is; the arm gives way
   as far as its limits allow.

Every tick the loop moves the ball in the world (``world.move``: the simulation and the
controller both see it) and counts MuJoCo's contacts between the robot and the obstacles
(``sim.contacts()``). The check passes when no tick has a contact deeper than
``--depth`` mm. ``--image`` saves a picture of the arm and the obstacles while the ball passes
(``docs/images/avoid_obstacles.png``). Headless machines need no display (``MUJOCO_GL=egl``).

Run::

    python examples/avoid_obstacles.py
    python examples/avoid_obstacles.py --quick
    python examples/avoid_obstacles.py --image docs/images/avoid_obstacles.png
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pinkctl import (
    MujocoSimulation,
    PinkIKController,
    RobotState,
    SpatialState,
    World,
    load_pink_supported_robot,
)

BOX_TIME = 3.0  # [s]
BALL_TIME = 3.0  # [s]
BALL_RADIUS = 0.06  # [m]
BALL_SPEED = 0.3  # [m/s]
BALL_START = 0.45  # [m] from the elbow (along +y) where the ball starts
#: Target of phase 1 relative to the tool's home position [m] (world frame): forward and
#: down, behind the box.
TARGET_OFFSET = np.array([0.25, 0.0, -0.3])
#: The box, standing on the floor: centre relative to the tool's home position [m], full edge
#: lengths [m]. Its top edge is 1 to 4 cm above the tool's straight path: without avoidance
#: the fingers run into it and the arm stays stuck there.
BOX_OFFSET = np.array([0.163, 0.0, -0.337])
BOX_SIZE = (0.06, 0.3, 0.3)
IMAGE_SIZE = (640, 480)  # [px] each of the picture's two halves
#: The picture's camera: from the robot's right (-y), slightly above, looking at the box.
SIDE_CAMERA = {"pos": [0.35, -1.565, 0.683], "xyaxes": [1.0, 0.0, 0.0, 0.0, 0.208, 0.978]}


@dataclass
class AvoidResult:
    """Outcome of :func:`run`."""

    contact_ticks: int  # ticks with a robot-obstacle contact
    max_depth_mm: float  # deepest robot-obstacle penetration [mm]
    final_error_mm: float  # tool to target at the end of phase 1 [mm]
    ticks: int
    wall_time_s: float
    avoidance: bool  # whether the controller took the world
    image: Path | None


def make_world(robot, tool_home: np.ndarray) -> World:
    """The floor, the box between the tool and the phase-1 target, and the ball (parked)."""
    world = World.for_robot(robot)
    world.add_box("box", size=BOX_SIZE, position=tool_home + BOX_OFFSET)
    world.add_sphere("ball", radius=BALL_RADIUS, position=(0.0, -1.5, 0.5), movable=True)
    return world


def make_controller(robot, sim: MujocoSimulation, dt: float, world: World):
    """The default controller, given the world when this pinkctl's controller takes one."""
    options = {}
    if "world" in inspect.signature(PinkIKController).parameters:
        options["world"] = world
    controller = PinkIKController(robot, sim.joint_names, sim.site_names, dt=dt, **options)
    return controller, bool(options)


def _setpoint(tool: str, position: np.ndarray, orientation: np.ndarray) -> RobotState:
    return RobotState(
        sites=SpatialState.from_name(
            [tool],
            positions=([tool], position[None, :]),
            orientations=([tool], orientation[None, :]),
        )
    )


def run(
    *,
    box_time: float = BOX_TIME,
    ball_time: float = BALL_TIME,
    control_rate: float = 500.0,
    image: Path | None = None,
) -> AvoidResult:
    """Run both phases; with ``image``, save a picture of two moments side by side: the tool
    passing the box, and the ball in the middle of its flight."""
    robot = load_pink_supported_robot("franka")
    tool = robot.tool_frame
    assert tool is not None
    probe = MujocoSimulation.from_robot(robot)
    tool_home, orientation = probe.get_site_pose(tool)
    world = make_world(robot, tool_home)
    sim = MujocoSimulation.from_robot(
        robot,
        world=world,
        spec_callback=lambda spec: spec.worldbody.add_camera(name="side", **SIDE_CAMERA),
    )
    dt = 1.0 / control_rate
    steps_per_tick = max(1, round(dt / sim.timestep))
    controller, avoidance = make_controller(robot, sim, dt, world)
    target = tool_home + TARGET_OFFSET
    setpoint = _setpoint(tool, target, orientation)
    sim.set_target_marker(target, orientation)
    box_ticks, ball_ticks = round(box_time / dt), round(ball_time / dt)
    start_ball = np.zeros(3)
    contact_ticks, depth, error = 0, 0.0, float("nan")
    frames: list[np.ndarray] = []
    box_x = world["box"].position[0]
    wall = time.perf_counter()
    for k in range(box_ticks + ball_ticks):
        t = k * dt
        if k == box_ticks:  # phase 2: the ball flies along -y through the elbow
            error = float(np.linalg.norm(sim.get_site_pose(tool)[0] - target))
            start_ball = sim.get_body_pose("panda_link4")[0] + (0.0, BALL_START, 0.0)
        if k >= box_ticks:
            flown = BALL_SPEED * (k - box_ticks) * dt
            world.move("ball", position=start_ball - (0.0, flown, 0.0))
        estimated = sim.get_robot_state()
        if k == 0 and not controller.reset(estimated, setpoint, t):
            raise RuntimeError(f"reset failed: {controller.last_error}")
        desired = controller.forward(estimated, setpoint, t)
        if desired is not None:
            sim.apply(desired)
        sim.step(steps_per_tick)
        contacts = sim.contacts()
        if contacts.obstacle_contacts:
            contact_ticks += 1
            depth = max(depth, contacts.obstacle_depth)
        passing = k < box_ticks and sim.get_site_pose(tool)[0][0] >= box_x
        if image is not None and (
            (passing and not frames) or (k == box_ticks + ball_ticks // 2 and len(frames) == 1)
        ):
            frames.append(sim.render(*IMAGE_SIZE, camera="side"))
    wall = time.perf_counter() - wall
    if image is not None:
        from PIL import Image

        image.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.hstack(frames or [sim.render(*IMAGE_SIZE, camera="side")])).save(image)
    sim.close()
    return AvoidResult(
        contact_ticks=contact_ticks,
        max_depth_mm=depth * 1e3,
        final_error_mm=error * 1e3,
        ticks=box_ticks + ball_ticks,
        wall_time_s=wall,
        avoidance=avoidance,
        image=image,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0: the check passed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 s + 1.5 s, for smoke tests")
    parser.add_argument("--depth", type=float, default=0.5, help="deepest contact allowed [mm]")
    parser.add_argument("--image", type=Path, default=None, help="save a picture here (.png)")
    args = parser.parse_args(argv)
    result = run(
        box_time=1.0 if args.quick else BOX_TIME,
        ball_time=1.5 if args.quick else BALL_TIME,
        image=args.image,
    )
    ok = result.max_depth_mm <= args.depth
    status = "OK" if ok else "FAILED"
    if not result.avoidance:
        status = "NO AVOIDANCE: this pinkctl's PinkIKController takes no world="
    print(
        f"avoid_obstacles [{status}]: {result.ticks} ticks in {result.wall_time_s:.2f} s wall, "
        f"ticks in contact with an obstacle {result.contact_ticks}, deepest "
        f"{result.max_depth_mm:.2f} mm (allowed {args.depth:g} mm), tool to target after "
        f"the box phase {result.final_error_mm:.1f} mm"
        + (f", picture {result.image}" if result.image else "")
    )
    return 0 if ok or not result.avoidance else 1


if __name__ == "__main__":
    sys.exit(main())
