"""Collision avoidance in the controller (issue 25 item 3): kinematic closed loops on franka.

Every loop integrates the controller's own commands (the measured configuration is the last
command), checks every command against the four motion limits with the checker below, and
measures the distance of every pair at every tick with an independent scene.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from motion_check import check_limits

from pinkctl import PinkIKController, load_pink_supported_robot
from pinkctl.controllers.status import ControllerStatus, combined_status
from pinkctl.core.state import JointSpace, RobotState
from pinkctl.errors import InputError
from pinkctl.qp import CollisionLimit
from pinkctl.world import CollisionScene, RobotGeometry, World
from pinkctl.world.still_pairs import still_geometries

DT = 0.002
MARGIN = 0.01
#: How far below the margin a pair may come (linearisation between ticks) [m].
TOLERANCE = 5e-3


@pytest.fixture(scope="module")
def franka():
    return load_pink_supported_robot("franka")


def _hand(robot, q=None) -> pin.SE3:
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0 if q is None else q)
    return data.oMf[robot.model.getFrameId("panda_hand")].copy()


def _full(robot, q: np.ndarray) -> np.ndarray:
    return np.r_[q, robot.q0[q.size :]]


def _controller(robot, world, **kwargs) -> PinkIKController:
    names = list(robot.controlled_joint_names)
    controller = PinkIKController(
        robot, names, ["panda_hand"], tool_frame="panda_hand", dt=DT, world=world, **kwargs
    )
    return controller


def run(robot, controller, target, ticks, q=None, world_update=None):
    """Integrate ``ticks`` commands toward ``target`` (pin.SE3, or a function of the tick);
    returns the commands (ticks, 7), the smallest distance of every tick and the statuses."""
    names = list(robot.controlled_joint_names)
    q = robot.q0[: len(names)].copy() if q is None else q.copy()
    controller.reset(RobotState(joints=JointSpace(names).state(q)), None, 0.0)
    scene = CollisionScene(robot, controller.collision.scene.world)
    commands, smallest, statuses = [q.copy()], [], []
    for k in range(ticks):
        if world_update is not None:
            world_update(k)
        goal = target(k) if callable(target) else target
        q = controller.step(q, goal, t=k * DT)
        commands.append(q.copy())
        smallest.append(scene.min_distance(_full(robot, q)))
        statuses.append(controller.status)
    return np.array(commands), np.array(smallest), statuses


# ---------------------------------------------------------------------- the distance row
def test_distance_jacobian_matches_finite_differences_in_penetration(franka):
    hand = _hand(franka).translation
    world = World()
    world.add_box("box", size=(0.1, 0.1, 0.1), position=hand + [0.06, 0.0, 0.0])
    world.add_sphere("ball", radius=0.05, position=hand + [0.0, 0.05, -0.05])
    scene = CollisionScene(franka, world)
    q = franka.q0 + np.r_[np.random.default_rng(0).normal(0.0, 0.05, 7), 0.0]
    found = scene.pairs_within(q, 0.05)
    rows = scene.distance_jacobians(q, found)
    penetrating = 0
    for d, row in zip(found, rows):
        numeric = np.zeros(franka.model.nv)
        for i in range(franka.model.nv):
            step = np.zeros(franka.model.nv)
            step[i] = 1e-4
            plus = scene.distances(pin.integrate(franka.model, q, step))[d.pair.index]
            minus = scene.distances(pin.integrate(franka.model, q, -step))[d.pair.index]
            numeric[i] = (plus.distance - minus.distance) / 2e-4
        if np.linalg.norm(numeric) < 0.05:  # a pair its joints barely move (coaxial links)
            continue
        penetrating += d.distance < 0.0
        cosine = numeric @ row / (np.linalg.norm(numeric) * np.linalg.norm(row))
        assert cosine > 0.999, (d.pair, d.distance, cosine)
        assert np.abs(numeric - row).max() < 5e-3
    assert penetrating >= 3


# ---------------------------------------------------------------------- closed loops
@pytest.mark.parametrize("motion_limits", [None, False])
def test_box_between_tool_and_target_holds_at_the_margin(franka, motion_limits):
    hand = _hand(franka)
    world = World()
    world.add_box("box", size=(0.05, 0.3, 0.3), position=hand.translation + [0.12, 0.0, 0.0])
    controller = _controller(franka, world, motion_limits=motion_limits)
    target = pin.SE3(hand.rotation, hand.translation + [0.3, 0.0, 0.0])
    commands, smallest, statuses = run(franka, controller, target, 1000)
    assert smallest.min() >= MARGIN - TOLERANCE
    check_limits(commands, controller.shaper.limits, DT)
    assert statuses[-1] is ControllerStatus.BLOCKED
    assert "box" in controller.last_error and "mm apart" in controller.last_error
    # stopped at the margin, not short of it
    assert smallest[-1] < MARGIN + 2e-3


def test_reachable_target_beside_a_box_is_reached(franka):
    """Issue 25's bar: a reachable target with a collision-free route around a single box is
    reached within 1 mm (panda_link5 slides along the box: corner rows; the ticks with rows
    approach the target within the braking envelope: boxed_approach; measured 0.0 mm)."""
    hand = _hand(franka)
    world = World()
    world.add_box("box", size=(0.1, 0.1, 0.1), position=hand.translation + [0.15, 0.15, 0.0])
    controller = _controller(franka, world)
    target = pin.SE3(hand.rotation, hand.translation + [0.15, 0.0, -0.1])
    commands, smallest, statuses = run(franka, controller, target, 1500)
    assert smallest.min() >= MARGIN - TOLERANCE
    check_limits(commands, controller.shaper.limits, DT)
    reached = _hand(franka, _full(franka, commands[-1])).translation
    assert np.linalg.norm(reached - target.translation) < 1e-3
    # panda_link5 rests on the box's margin: its row holds back the posture task (BLOCKED)
    assert statuses[-1] in (ControllerStatus.OK, ControllerStatus.BLOCKED)


def test_pair_starting_in_penetration_is_pushed_out(franka):
    hand = _hand(franka)
    world = World()
    world.add_sphere("ball", radius=0.04, position=hand.translation + [0.0, 0.05, 0.06])
    scene = CollisionScene(franka, world)
    start = scene.min_distance(franka.q0)
    assert start < 0.0
    controller = _controller(franka, world)
    commands, smallest, _ = run(franka, controller, hand, 1000)
    assert smallest.min() >= start - 1e-4  # never deeper
    assert smallest[-1] >= MARGIN - TOLERANCE  # out, at the margin
    check_limits(commands, controller.shaper.limits, DT)


@pytest.mark.parametrize(
    "offset",
    [
        (-0.25, 0.0, -0.3),
        (-0.3, 0.1, 0.0),
        (-0.2, 0.0, -0.5),
    ],
    ids=["low", "back", "base"],
)
def test_hand_pulled_into_its_own_links_keeps_the_margin(franka, offset):
    hand = _hand(franka)
    controller = _controller(franka, None, self_collision=True)
    assert controller.collision is not None
    target = pin.SE3(hand.rotation, hand.translation + np.array(offset))
    commands, smallest, _ = run(franka, controller, target, 1000)
    assert smallest.min() >= MARGIN - TOLERANCE
    check_limits(commands, controller.shaper.limits, DT)


def test_moving_sphere_makes_the_arm_give_way(franka):
    hand = _hand(franka)
    world = World()
    start = hand.translation + [0.25, 0.0, 0.0]
    world.add_sphere("ball", radius=0.05, position=start, movable=True)
    speed = 0.3  # m/s, toward the hand and 0.1 m past its start

    def move(k: int) -> None:
        x = max(start[0] - speed * k * DT, hand.translation[0] - 0.1)
        world.move("ball", position=(x, start[1], start[2]))

    controller = _controller(franka, world)
    commands, smallest, _ = run(franka, controller, hand, 1200, world_update=move)
    # the rows count the ball's own motion: the margin holds (measured 10.0 mm)
    assert smallest.min() >= MARGIN - 1e-3
    check_limits(commands, controller.shaper.limits, DT)
    moved = _hand(franka, _full(franka, commands[-1])).translation
    assert np.linalg.norm(moved - hand.translation) > 0.05  # it gave way


# ---------------------------------------------------------------------- arguments, defaults
def test_arguments_are_checked(franka):
    names = list(franka.controlled_joint_names)
    for kwargs, name in [
        ({"world": "scene.toml"}, "world"),
        ({"self_collision": 1}, "self_collision"),
        ({"collision_margin": -0.01, "self_collision": True}, "collision_margin"),
        ({"collision_margin": "1 cm", "self_collision": True}, "collision_margin"),
    ]:
        with pytest.raises(InputError, match=name):
            PinkIKController(franka, names, ["panda_hand_tcp"], dt=DT, **kwargs)


def test_defaults_and_status(franka):
    names = list(franka.controlled_joint_names)
    # on by default without a world: a fixed base with collision elements (and the floor)
    default = PinkIKController(franka, names, ["panda_hand_tcp"], dt=DT)
    assert default.collision is not None and default.collision.scene.self_collision
    assert "floor" in default.collision.scene.world
    off = PinkIKController(franka, names, ["panda_hand_tcp"], dt=DT, self_collision=False)
    assert off.collision is None  # nothing to avoid
    asked = PinkIKController(franka, names, ["panda_hand_tcp"], dt=DT, self_collision=True)
    assert asked.collision is not None and asked.collision.scene.self_collision
    assert "floor" in asked.collision.scene.world
    world = World()
    world.add_sphere("ball", radius=0.05, position=(0.5, 0.5, 0.5))
    with_world = PinkIKController(franka, names, ["panda_hand_tcp"], dt=DT, world=world)
    assert with_world.collision is not None and with_world.collision.scene.self_collision
    only_world = PinkIKController(
        franka, names, ["panda_hand_tcp"], dt=DT, self_collision=False, world=world
    )
    pairs = only_world.collision.scene.pairs
    assert pairs and all(p.kind == "obstacle" for p in pairs)
    assert "floor" not in world  # the user's world is not changed
    assert combined_status([ControllerStatus.OK, ControllerStatus.BLOCKED]) is (
        ControllerStatus.BLOCKED
    )
    assert combined_status([ControllerStatus.BRAKING, ControllerStatus.BLOCKED]) is (
        ControllerStatus.BRAKING
    )


def test_collision_limit_works_as_a_plain_pink_limit(franka):
    hand = _hand(franka).translation
    world = World()
    world.add_sphere("ball", radius=0.05, position=hand + [0.0, 0.0, 0.07])
    limit = CollisionLimit(CollisionScene(franka, world, self_collision=False), margin=MARGIN)
    from pink import Configuration

    configuration = Configuration(franka.model, franka.model.createData(), franka.q0)
    G, h = limit.compute_qp_inequalities(configuration, DT)
    assert G.shape[1] == franka.model.nv and G.shape[0] == h.size >= 1
    close = [d.distance < MARGIN for d in limit.evaluate(franka.q0, DT).distances]
    assert any(close) and np.all(h[close] < 0.0)  # closer than the margin: asked to open
    with pytest.raises(InputError, match="influence_distance"):
        CollisionLimit(limit.scene, margin=0.05, influence_distance=0.01)


# ---------------------------------------------------------------------- MuJoCo
def test_mujoco_box_between_tool_and_target_no_contact(franka):
    """The box in MuJoCo (``from_robot(world=)``): the default controller plus ``world=``
    stops the arm before it; no contact with the box at any step."""
    from pinkctl import MujocoSimulation  # noqa: PLC0415
    from pinkctl.core.state import SpatialState  # noqa: PLC0415

    hand = _hand(franka)
    world = World()
    world.add_box("box", size=(0.05, 0.3, 0.3), position=hand.translation + [0.12, 0.0, 0.0])
    sim = MujocoSimulation.from_robot(franka, world=world)
    controller = PinkIKController(franka, sim.joint_names, sim.site_names, dt=DT, world=world)
    frame = franka.tool_frame
    start, orientation = sim.get_site_pose(frame)
    setpoint = RobotState(
        sites=SpatialState.from_name(
            [frame],
            positions=([frame], (start + [0.3, 0.0, 0.0]).reshape(1, 3)),
            orientations=([frame], orientation.reshape(1, 4)),
        )
    )
    assert controller.reset(sim.get_robot_state(), None, 0.0)
    deepest = 0.0
    late_blocked = 0
    for k in range(1500):
        desired = controller.forward(sim.get_robot_state(), setpoint, k * DT)
        sim.apply(desired)
        sim.step()
        report = sim.contacts()
        assert report.obstacle_contacts == 0, report.pairs
        deepest = max(deepest, report.depth)
        # Held at the margin, the arm's status alternates between BLOCKED (a row holds the
        # command) and OK (a tick whose command the row leaves alone): what matters is that it
        # says so while it stands short of the target, not which of the two the last tick was.
        if k >= 1300 and controller.status is ControllerStatus.BLOCKED:
            late_blocked += 1
            assert "box" in (controller.last_error or ""), controller.last_error
    assert late_blocked >= 100, late_blocked
    reached, _ = sim.get_site_pose(frame)
    assert np.linalg.norm(reached - (start + [0.3, 0.0, 0.0])) > 0.1
    assert deepest == 0.0


def test_mujoco_moving_sphere_no_contact(franka):
    """A sphere moving at 0.3 m/s into the hand in MuJoCo: the arm gives way, the ball never
    0.5 mm deep."""
    from pinkctl import MujocoSimulation  # noqa: PLC0415
    from pinkctl.core.state import SpatialState  # noqa: PLC0415

    hand = _hand(franka)
    world = World()
    start = hand.translation + [0.25, 0.0, 0.0]
    world.add_sphere("ball", radius=0.05, position=start, movable=True)
    sim = MujocoSimulation.from_robot(franka, world=world)
    controller = PinkIKController(franka, sim.joint_names, sim.site_names, dt=DT, world=world)
    frame = franka.tool_frame
    position, orientation = sim.get_site_pose(frame)
    setpoint = RobotState(
        sites=SpatialState.from_name(
            [frame],
            positions=([frame], position.reshape(1, 3)),
            orientations=([frame], orientation.reshape(1, 4)),
        )
    )
    assert controller.reset(sim.get_robot_state(), None, 0.0)
    deepest = 0.0
    for k in range(1200):
        x = max(start[0] - 0.3 * k * DT, hand.translation[0] - 0.1)
        world.move("ball", position=(x, start[1], start[2]))
        desired = controller.forward(sim.get_robot_state(), setpoint, k * DT)
        sim.apply(desired)
        sim.step()
        deepest = max(deepest, sim.contacts().obstacle_depth)
    assert deepest <= 5e-4
    moved = sim.get_site_pose(frame)[0]
    assert np.linalg.norm(moved - position) > 0.05


def test_conflicting_rows_are_relaxed_to_what_the_box_allows(franka):
    """Two rows each met inside the box but not together: the relaxed rows are met by a
    velocity of the box, and a row that was met together with the others is not touched."""
    from pinkctl.qp import CollisionRows  # noqa: PLC0415

    limit = CollisionLimit(CollisionScene(franka, World(), self_collision=False), margin=MARGIN)
    nv = franka.model.nv
    G = np.zeros((3, nv))
    G[0, 0], G[1, 0], G[2, 1] = 1.0, -1.0, 1.0  # dq0 <= -1e-3 and -dq0 <= -1e-3 conflict
    h = np.array([-1e-3, -1e-3, 1e-3])
    rows = CollisionRows(G, h, (), np.full(3, MARGIN))
    columns = np.arange(7)
    lower, upper = np.full(7, -1.0), np.full(7, 1.0)
    relaxed = limit.relaxed(rows, (columns, lower, upper), DT)
    assert relaxed.h[2] == h[2]
    # raised by 2 mm in total, the least that lets dq0 meet both
    assert relaxed.h[0] + relaxed.h[1] == pytest.approx(0.0, abs=1e-8)
    from scipy.optimize import linprog  # noqa: PLC0415

    check = linprog(
        np.zeros(7),
        A_ub=DT * relaxed.G[:, columns],
        b_ub=relaxed.h,
        bounds=list(zip(lower, upper)),
        method="highs",
    )
    assert check.status == 0  # some velocity of the box meets every relaxed row


def test_reachable_target_beside_a_box_is_reached_without_motion_limits(franka):
    """The corner rows let panda_link5 slide along the box to the target (a bound of its
    turning rate held it at the box's margin 16 mm from the target)."""
    hand = _hand(franka)
    world = World()
    world.add_box("box", size=(0.1, 0.1, 0.1), position=hand.translation + [0.15, 0.15, 0.0])
    controller = _controller(franka, world, motion_limits=False)
    target = pin.SE3(hand.rotation, hand.translation + [0.15, 0.0, -0.1])
    commands, smallest, _ = run(franka, controller, target, 600)
    assert smallest.min() >= MARGIN - TOLERANCE
    reached = _hand(franka, _full(franka, commands[-1]))
    assert np.linalg.norm(reached.translation - target.translation) < 1e-3
    assert np.linalg.norm(pin.log3(reached.rotation.T @ target.rotation)) < 1e-3


def test_avoidance_changes_no_command_away_from_collisions(franka):
    """Where no pair is within its influence distance the tick with self-collision
    avoidance is the one without it, command for command (a 4 cm circle at home)."""
    home = _hand(franka)

    def circle(k):
        angle = 2.0 * np.pi * k * DT / 2.0
        return pin.SE3(
            home.rotation,
            home.translation + 0.04 * np.array([0.0, np.sin(angle), 1.0 - np.cos(angle)]),
        )

    names = list(franka.controlled_joint_names)
    runs = []
    for self_collision in (True, False):
        controller = PinkIKController(
            franka,
            names,
            ["panda_hand"],
            tool_frame="panda_hand",
            dt=DT,
            self_collision=self_collision,
        )
        q = franka.q0[: len(names)].copy()
        controller.reset(RobotState(joints=JointSpace(names).state(q)), None, 0.0)
        commands = []
        for k in range(500):
            q = controller.step(q, circle(k), t=k * DT)
            commands.append(q.copy())
        runs.append(np.array(commands))
    assert np.abs(runs[0] - runs[1]).max() == 0.0


def test_pairs_no_command_moves_are_left_out(franka):
    """A shape no controlled joint moves is not checked against obstacles (the base on the
    floor), and self pairs the same controlled joints move (the two fingers) are not in the
    controller's scene."""
    names = list(franka.controlled_joint_names)
    controller = PinkIKController(franka, names, ["panda_hand_tcp"], dt=DT, self_collision=True)
    avoidance = controller.collision
    assert avoidance is not None
    pairs = avoidance.scene.pairs
    geometry = RobotGeometry.from_robot(franka)
    still = still_geometries(geometry, np.arange(len(names)))
    assert {link for link, s in zip(geometry.links, still) if s} == {"panda_link0"}
    fingers = {"panda_leftfinger", "panda_rightfinger"}
    assert not any(p.kind == "self" and {p.link_a, p.body_b} == fingers for p in pairs)


def test_distances_do_not_depend_on_earlier_queries(franka):
    """The same configuration gives the same distances and witness points whatever was
    measured before (coal's support hints are reset before every query)."""
    scene = CollisionScene(franka, World.for_robot(franka))
    rng = np.random.default_rng(0)
    q = franka.q0.copy()
    first = scene.pairs_within(q, 0.1)
    for _ in range(5):
        scene.pairs_within(q + 0.3 * rng.standard_normal(q.size), 0.1)
    again = scene.pairs_within(q, 0.1)
    assert [d.pair.index for d in first] == [d.pair.index for d in again]
    for a, b in zip(first, again):
        assert a.distance == b.distance
        assert np.array_equal(a.point_a, b.point_a) and np.array_equal(a.point_b, b.point_b)
