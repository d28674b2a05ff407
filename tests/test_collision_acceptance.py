"""Acceptance of the controller with a world (issue 25): closed loops in MuJoCo.

The default :class:`~pinkctl.PinkIKController` plus ``world=`` on franka, ur5, so101 and the
PR2's right arm (example-robot-data, with its SRDF). One world per robot, built around its
home pose (``r``: the tool's distance from its shoulder at home):

- a **box** standing between the tool and a target behind it;
- a **table top** (a slab) beside the tool, with a target under it;
- targets **inside the robot's own body** (its shoulder) and **at its base** (on the floor);
- a **ball** moving at 0.3 m/s across the tool's home position while the target holds home.

The target jumps among these poses. At every MuJoCo step: no contact between the robot and an
obstacle (the floor included), no self-contact deeper than 0.5 mm (MuJoCo leaves out the
excluded pairs), every command within the four motion limits (:func:`check_limits`), and no
exception (``PINKCTL_DEBUG=1`` re-raises what a tick would log).
"""

from __future__ import annotations

import importlib.metadata
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from motion_check import check_limits

from pinkctl import (
    MujocoSimulation,
    PinkIKController,
    PinkRobot,
    World,
    load_pink_robot,
    load_pink_supported_robot,
)
from pinkctl.controllers.status import ControllerStatus
from pinkctl.core.state import JointSpace, RobotState, SpatialState
from pinkctl.world import CollisionScene
from pinkctl.world.floor import floor_height
from pinkctl.world.home_pairs import home_margins

DT = 0.002
#: Seconds each target holds.
HOLD = 1.5
BALL_SPEED = 0.3  # [m/s]
BALL_RADIUS = 0.05  # [m]
#: Deepest self-contact MuJoCo may report [m].
SELF_DEPTH = 5e-4
#: Smallest distance of every obstacle from the robot at home [m] (the scene is valid).
CLEARANCE = 0.03


def load(name: str) -> PinkRobot:
    """A bundled robot, or the PR2 with its right arm controlled (example-robot-data). The
    PR2's description has velocity limits only: its acceleration and jerk limits are the
    loader's inferred ones (:mod:`pinkctl.core.robot.acceleration`), its servos the default."""
    if name != "pr2":
        return load_pink_supported_robot(name)
    robots = Path(
        str(
            importlib.metadata.distribution("example-robot-data").locate_file(
                "cmeel.prefix/share/example-robot-data/robots"
            )
        )
    )
    folder = robots / "pr2_description"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_pink_robot(
            folder / "urdf" / "pr2.urdf",
            srdf_path=folder / "srdf" / "pr2.srdf",
            config={
                "planning_group": "right_arm",
                "tool_frame": "r_gripper_tool_frame",
            },
        )


@dataclass
class Scenario:
    """A robot's world and its targets (module docstring)."""

    world: World
    targets: list[tuple[str, np.ndarray]]  # (name, tool position [m]) held HOLD s each
    home: np.ndarray  # tool position at home [m]
    ball_path: tuple[np.ndarray, np.ndarray]  # the ball's start and end [m]


def _clear(robot: PinkRobot, world: World, name: str) -> bool:
    """Whether obstacle ``name`` is at least :data:`CLEARANCE` from the robot at home."""
    scene = CollisionScene(robot, world, self_collision=False)
    return all(d.distance >= CLEARANCE for d in scene.distances(robot.q0) if d.pair.body_b == name)


def _clear_of_fixed(robot: PinkRobot, position: np.ndarray) -> bool:
    """Whether the ball at ``position`` is at least :data:`CLEARANCE` from every link that no
    controlled joint moves."""
    world = World()
    world.add_sphere("ball", radius=BALL_RADIUS, position=position)
    scene = CollisionScene(robot, world, self_collision=False)
    model = robot.model
    moved = {model.getJointId(n) for n in robot.controlled_joint_names}
    objects = scene.geometry_model.geometryObjects
    for d in scene.distances(robot.q0):
        if not moved & set(model.supports[objects[d.pair.geometry_a].parentJoint].tolist()):
            if d.distance < CLEARANCE:
                return False
    return True


def scenario(robot: PinkRobot) -> Scenario:
    """The world and targets of ``robot`` (module docstring)."""
    model, data = robot.model, robot.model.createData()
    pin.framesForwardKinematics(model, data, robot.q0)
    home = data.oMf[model.getFrameId(robot.tool_frame)].translation.copy()
    joints = [model.getJointId(n) for n in robot.controlled_joint_names]
    base = data.oMi[joints[0]].translation.copy()
    shoulder = data.oMi[joints[1]].translation.copy()
    ahead = (home - shoulder) * [1.0, 1.0, 0.0]
    u = ahead / np.linalg.norm(ahead)  # forward, horizontal
    v = np.cross([0.0, 0.0, 1.0], u)  # to the left
    r = float(np.linalg.norm(home - shoulder))
    world = World()
    lift = 0.0
    while True:  # the ball's path: from the tool's right to its home, clear of the fixed links
        ball_start, ball_end = home - 0.5 * v + [0.0, 0.0, lift], home + [0.0, 0.0, lift]
        if all(_clear_of_fixed(robot, p) for p in np.linspace(ball_start, ball_end, 11)):
            break
        lift += 0.01
    world.add_sphere("ball", radius=BALL_RADIUS, position=ball_start, movable=True)
    size = (0.04, 0.4 * r, 0.4 * r)
    gap = 0.05 * r
    while True:  # the box ahead of the tool, a little to its right
        centre = home + gap * u - 0.15 * r * v
        world.add_box("box", size=size, position=centre)
        if _clear(robot, world, "box"):
            break
        world.remove("box")
        gap += 0.01
    behind = centre + (0.02 + 0.15 * r) * u
    drop = 0.1 * r
    while True:  # the table top ahead of the tool, below it, on its left
        top = home + 0.35 * r * u + 0.35 * r * v - drop * np.array([0.0, 0.0, 1.0])
        world.add_box("table", size=(0.3 * r, 0.3 * r, 0.02), position=top)
        if _clear(robot, world, "table"):
            break
        world.remove("table")
        drop += 0.01
    under = top - [0.0, 0.0, 0.15 * r]
    targets = [
        ("behind the box", behind),
        ("under the table", under),
        ("in the body", shoulder),
        ("at the base", base * [1.0, 1.0, 0.0] + [0.0, 0.0, robot_floor(robot)]),
        ("home", home),
    ]
    return Scenario(world, targets, home, (ball_start, ball_end))


def robot_floor(robot: PinkRobot) -> float:
    """The height [m] of the robot's floor (0 without one)."""
    height = floor_height(robot)
    return 0.0 if height is None else height


@dataclass
class Outcome:
    """What :func:`run` measured."""

    obstacle_contacts: int  # MuJoCo steps with a robot-obstacle contact
    touched: dict[str, set[tuple[str, str]]]  # by target: the pairs in contact
    obstacle_depth: float  # deepest robot-obstacle penetration [m]
    self_depth: float  # deepest self-contact [m]
    errors: dict[str, float]  # tool to target at the end of each hold [m]
    statuses: set[ControllerStatus]
    ball_lift: float  # how far above the tool's home the ball's path ends [m]


def run(name: str) -> Outcome:
    """The closed loop of robot ``name`` (module docstring); asserts the limits and that no
    tick raised."""
    robot = load(name)
    plan = scenario(robot)
    world = plan.world
    sim = MujocoSimulation.from_robot(robot, world=world)
    controller = PinkIKController(robot, sim.joint_names, sim.site_names, dt=DT, world=world)
    frame = robot.tool_frame
    _, orientation = sim.get_site_pose(frame)
    assert controller.reset(sim.get_robot_state(), None, 0.0)
    hold = round(HOLD / DT)
    start, end = plan.ball_path
    flight = round(np.linalg.norm(end - start) / BALL_SPEED / DT)
    schedule = [(label, p, hold) for label, p in plan.targets]
    schedule.append(("ball", plan.home, flight + hold))
    commands = [controller.shaper.position.copy()]
    contacts, obstacle_depth, self_depth = 0, 0.0, 0.0
    errors, statuses, touched = {}, set(), {}
    k = 0
    for label, position, ticks in schedule:
        setpoint = RobotState(
            sites=SpatialState.from_name(
                [frame],
                positions=([frame], position.reshape(1, 3)),
                orientations=([frame], orientation.reshape(1, 4)),
            )
        )
        for tick in range(ticks):
            if label == "ball":
                share = min(tick * DT * BALL_SPEED / np.linalg.norm(end - start), 1.0)
                world.move("ball", position=start + share * (end - start))
            desired = controller.forward(sim.get_robot_state(), setpoint, k * DT)
            assert desired is not None
            statuses.add(controller.status)
            commands.append(controller.shaper.position.copy())
            sim.apply(desired)
            sim.step()
            report = sim.contacts()
            contacts += report.obstacle_contacts > 0
            touched.setdefault(label, set()).update((a, b) for a, b, _ in report.pairs)
            obstacle_depth = max(obstacle_depth, report.obstacle_depth)
            self_depth = max(self_depth, report.self_depth)
            k += 1
        errors[label] = float(np.linalg.norm(sim.get_site_pose(frame)[0] - position))
    check_limits(np.array(commands), controller.shaper.limits, DT)
    lift = float(end[2] - plan.home[2])
    return Outcome(contacts, touched, obstacle_depth, self_depth, errors, statuses, lift)


def _setpoint(frame: str, position: np.ndarray, orientation: np.ndarray) -> RobotState:
    """The tool's pose setpoint (position [m], orientation (w, x, y, z))."""
    return RobotState(
        sites=SpatialState.from_name(
            [frame],
            positions=([frame], position.reshape(1, 3)),
            orientations=([frame], orientation.reshape(1, 4)),
        )
    )


def kinematic_gaps(name: str) -> dict[tuple[str, str], float]:
    """The same scenario in a kinematic loop (each command fed back as the measurement): the
    smallest ``distance - margin`` [m] of every pair that came below its margin (margins of
    :func:`~pinkctl.world.home_pairs.home_margins`), measured by an independent scene on the
    full configuration (continuous joints as (cos, sin): ``JointSpaceMap.to_configuration``)."""
    robot = load(name)
    plan = scenario(robot)
    world = plan.world
    frame, names = robot.tool_frame, list(robot.controlled_joint_names)
    controller = PinkIKController(robot, names, [frame], tool_frame=frame, dt=DT, world=world)
    controlled = controller._joints.controlled
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    rotation = pin.Quaternion(data.oMf[robot.model.getFrameId(frame)].rotation)
    orientation = np.array([rotation.w, rotation.x, rotation.y, rotation.z])
    q = controlled.configuration_to_positions(robot.q0)
    assert controller.reset(RobotState(joints=JointSpace(names).state(q)), None, 0.0)
    scene = CollisionScene(robot, controller.collision.scene.world)
    margins = home_margins(scene, robot.q0, controller.collision.limit.margin)
    start, end = plan.ball_path
    flight = round(np.linalg.norm(end - start) / BALL_SPEED / DT)
    hold = round(HOLD / DT)
    schedule = [(label, p, hold) for label, p in plan.targets]
    schedule.append(("ball", plan.home, flight + hold))
    below: dict[tuple[str, str], float] = {}
    k = 0
    for label, position, ticks in schedule:
        setpoint = _setpoint(frame, position, orientation)
        for tick in range(ticks):
            if label == "ball":
                share = min(tick * DT * BALL_SPEED / np.linalg.norm(end - start), 1.0)
                world.move("ball", position=start + share * (end - start))
            controller.forward(RobotState(joints=JointSpace(names).state(q)), setpoint, k * DT)
            q = np.array(controller.shaper.position)
            full = controlled.to_configuration(q, robot.q0.copy())
            for d, m in zip(scene.distances(full), margins):
                if d.distance < m:
                    key = (d.pair.a, d.pair.b)
                    below[key] = min(below.get(key, 0.0), d.distance - m)
            k += 1
    return below


@pytest.mark.slow
def test_pr2_commands_keep_their_margins_in_a_kinematic_loop(monkeypatch):
    """The PR2's commands themselves never go into its body (an earlier check that wrote
    each continuous joint's angle into its cos slot measured 53 mm of penetration that no
    command had): a self-contact in MuJoCo is the simulated arm lagging its commands."""
    monkeypatch.setenv("PINKCTL_DEBUG", "1")
    below = kinematic_gaps("pr2")
    # the linearisation between ticks: a pair may dip a fraction of a millimetre
    assert all(gap > -5e-4 for gap in below.values()), below


@pytest.mark.parametrize(
    "name",
    [
        "ur5",  # the quickest (~20 s): the others sit behind the slow marker
        pytest.param("franka", marks=pytest.mark.slow),
        pytest.param("so101", marks=pytest.mark.slow),
        pytest.param("pr2", marks=pytest.mark.slow),
    ],
)
def test_robot_in_a_world_touches_nothing(name, monkeypatch):
    monkeypatch.setenv("PINKCTL_DEBUG", "1")
    outcome = run(name)
    assert outcome.obstacle_contacts == 0, outcome
    assert outcome.self_depth <= SELF_DEPTH, outcome
    if outcome.ball_lift == 0.0:
        # the ball ends on the home target: the arm gave way and stays at its margin
        assert outcome.errors["ball"] > BALL_RADIUS, outcome
