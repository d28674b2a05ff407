"""The native quiet-tick check of collision avoidance (pinkctl.controllers.collision_check).

Its bounds are lower bounds of coal's signed distances (apart and in penetration, kept from
tick to tick or not), its influence distances are the Python path's, a tick it calls quiet
has no row on the Python path, and a controller that uses it gives the Python path's
commands (compiled and Python ticks alike).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import PinkIKController, World, load_pink_supported_robot
from pinkctl._native import native_available
from pinkctl.controllers.collision_check import quiet_check
from pinkctl.core.state import JointSpace, RobotState

pytestmark = pytest.mark.skipif(not native_available()[0], reason="the native kernel is off")

DT = 0.002


@pytest.fixture(scope="module")
def franka():
    return load_pink_supported_robot("franka")


def _hand(robot) -> pin.SE3:
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    return data.oMf[robot.model.getFrameId("panda_hand")].copy()


def _world(hand: np.ndarray) -> World:
    world = World()
    world.add_box("box", size=(0.1, 0.3, 0.2), position=hand + [0.12, 0.0, 0.0])
    world.add_sphere("ball", radius=0.08, position=hand + [0.0, 0.2, -0.1])
    world.add_capsule("pole", radius=0.03, length=0.6, position=(0.2, -0.35, 0.4))
    world.add_cylinder("can", radius=0.05, length=0.2, position=(0.45, -0.25, 0.1))
    return world


def _controller(robot, world, **kwargs) -> PinkIKController:
    names = list(robot.controlled_joint_names)
    controller = PinkIKController(
        robot, names, ["panda_hand"], tool_frame="panda_hand", dt=DT, world=world, **kwargs
    )
    q = robot.q0[: len(names)].copy()
    controller.reset(RobotState(joints=JointSpace(names).state(q)), None, 0.0)
    return controller


def test_bounds_are_below_coal_distances_apart_and_in_penetration(franka):
    controller = _controller(franka, _world(_hand(franka).translation))
    avoid = controller._avoid
    check = avoid.native_check()
    assert check is not None
    scene = avoid.scene
    margins = avoid.limit.pair_margins()[0]
    lower, upper = franka.model.lowerPositionLimit, franka.model.upperPositionLimit
    rng = np.random.default_rng(3)
    penetrating = tight = 0
    for caching in (False, True):
        check.caching = caching
        q = franka.q0.copy()
        for k in range(150):
            if caching:  # a path: the kept bounds less the motion since
                q[:7] = np.clip(q[:7] + rng.normal(0.0, 0.03, 7), lower[:7], upper[:7])
            else:  # anywhere: self-penetration included
                q = lower + rng.uniform(size=q.size) * (upper - lower)
            assert check.count(q, False, q[:7].copy()) >= 0
            distances = np.array([d.distance for d in scene.distances(q)])
            checked = np.isfinite(margins)
            assert np.all(check.bound[checked] <= distances[checked] + 1e-7), k
            assert np.all(np.isinf(check.bound[~checked]))
            penetrating += int(np.sum(distances[checked] < 0.0))
            tight += int(np.sum(np.abs(check.bound - distances)[checked] < 1e-6))
    assert penetrating > 20  # the bounds hold in penetration too
    assert tight > 100  # exact for spheres, capsules and cylinders end to end


def test_link_ends_are_bounded_by_their_end_planes(franka):
    """Two links meeting end to end (panda_link5 and panda_link7 at home: 43 mm apart): the
    capsules overlap their cylinders' ends, the end planes give the distance."""
    controller = _controller(franka, None, self_collision=True)
    avoid = controller._avoid
    check = avoid.native_check()
    check.caching = False
    q = franka.q0.copy()
    check.count(q, False, q[:7].copy())
    index = next(
        p.index for p in avoid.scene.pairs if (p.a, p.b) == ("panda_link5_0", "panda_link7_0")
    )
    distance = avoid.scene.distances(q)[index].distance
    assert distance == pytest.approx(0.043, abs=1e-3)
    assert check.bound[index] == pytest.approx(distance, abs=1e-6)


def test_moved_obstacles_are_placed_as_a_new_check_would_place_them(franka, tmp_path):
    """``world.move`` keeps the check (the same pairs) and moves its obstacles' capsules,
    planes, boxes and hulls in place: its arrays are those of a check built from scratch at
    the new poses, and its bounds (kept ones included) stay below coal's distances."""
    trimesh = pytest.importorskip("trimesh")
    hand = _hand(franka).translation
    world = _world(hand)
    trimesh.creation.box((0.06, 0.1, 0.04)).export(tmp_path / "block.stl")
    world.add_mesh("block", tmp_path / "block.stl", position=hand + [0.0, -0.3, 0.0])
    world.add_halfspace("wall", normal=(0.0, -1.0, 0.0), offset=0.6)
    controller = _controller(franka, world)
    avoid = controller._avoid
    kept = avoid.native_check()
    q = franka.q0.copy()
    kept.count(q, False, q[:7].copy())  # bounds kept from this call
    turn = (np.cos(0.3), 0.0, np.sin(0.3), 0.0)
    world.move("block", position=hand + [0.05, -0.2, -0.05], orientation=turn)
    world.move("box", position=hand + [0.05, 0.05, 0.0], orientation=turn)
    world.move("can", position=hand + [0.0, 0.0, -0.25])
    world.move("wall", position=(0.0, 0.3, 0.0), orientation=(np.cos(0.2), np.sin(0.2), 0, 0))
    avoid._follow_world()
    assert avoid.native_check() is kept  # placed, not built again
    fresh = quiet_check(avoid, q_home=franka.q0, buffer=kept._tick.buffer, cap=kept._tick.cap)
    assert fresh is not None
    ours, new = kept._owners[0]._arrays, fresh._owners[0]._arrays
    for name in ("segment", "plane", "radius", "shape_placement", "vertices", "pairs"):
        np.testing.assert_array_equal(ours[name], new[name])
    # the universe's sphere unbounded (its groups never culled), the joints' the same
    np.testing.assert_array_equal(ours["slot_sphere"][4:], new["slot_sphere"][4:])
    assert ours["slot_sphere"][3] == np.inf
    for name in ("box_frame", "vertices"):
        np.testing.assert_allclose(kept._arrays[name], fresh._arrays[name], atol=1e-15)
    checked = np.isfinite(avoid.limit.pair_margins()[0])
    rng = np.random.default_rng(5)
    for k in range(20):  # the kept bounds hold at the new poses (the box now on the hand)
        q[:7] += rng.normal(0.0, 0.02, 7)
        assert kept.count(q, False, q[:7].copy()) >= 0
        distances = np.array([d.distance for d in avoid.scene.distances(q)])
        assert np.all(kept.bound[checked] <= distances[checked] + 1e-7), k
    assert distances[[p.b == "box" for p in avoid.scene.pairs]].min() < 0.0


def test_influence_distances_are_the_python_paths(franka):
    controller = _controller(franka, _world(_hand(franka).translation))
    avoid = controller._avoid
    check = avoid.native_check()
    check.caching = False
    hand = _hand(franka)
    q = franka.q0[:7].copy()
    for k in range(200):  # moving: the box changes
        target = pin.SE3(hand.rotation, hand.translation + [0.0, 0.1 * np.sin(k / 30), 0.0])
        q = controller.step(q, target, t=k * DT)
        full = np.r_[q, franka.q0[7:]]
        assert check.count(full, False, controller._shaper.position) >= 0
        lower, upper = controller._shaper.box()
        computed = np.isfinite(avoid.limit.pair_margins()[0])
        expected = avoid.influence(lower, upper)
        np.testing.assert_allclose(check.zone[computed], expected[computed], rtol=1e-12)


@pytest.mark.parametrize("caching", [True, False])
def test_a_quiet_tick_has_no_row_on_the_python_path(franka, caching):
    hand = _hand(franka)
    controller = _controller(franka, _world(hand.translation))
    controller.compiled = False
    avoid = controller._avoid
    avoid.native_check().caching = caching
    world = controller._avoid.world
    world.move("box", position=hand.translation + [0.35, 0.0, 0.0])
    target = pin.SE3(hand.rotation, hand.translation + [0.5, 0.0, 0.0])  # into the box
    names = list(franka.controlled_joint_names)
    q = franka.q0[: len(names)].copy()
    quiet = loud = 0
    for k in range(600):
        full = np.r_[q, franka.q0[len(names) :]]
        if avoid.quiet(full, False):
            quiet += 1
            lower, upper = controller._shaper.box()
            columns = np.arange(len(names))
            command = np.r_[controller._shaper.position, franka.q0[len(names) :]]
            rows = avoid.limit.evaluate(
                command,
                DT,
                zone=avoid.influence(lower, upper),
                box=(columns, lower, upper),
            )
            assert rows.h.size == 0, k
        else:
            loud += 1
        avoid._followed = None  # the tick below follows the world again, as a tick does
        q = controller.step(q, target if k >= 200 else hand, t=k * DT)
    assert quiet > 50 and loud > 50  # both kinds of ticks were checked


def _run(robot, controller, targets, world_update=None) -> np.ndarray:
    names = list(robot.controlled_joint_names)
    q = robot.q0[: len(names)].copy()
    controller.reset(RobotState(joints=JointSpace(names).state(q)), None, 0.0)
    commands = []
    for k, target in enumerate(targets):
        if world_update is not None:
            world_update(controller, k)
        q = controller.step(q, target, t=k * DT)
        commands.append(q.copy())
    return np.array(commands)


def _without_check(controller) -> PinkIKController:
    """The reference: the Python path, every tick measured with coal."""
    controller.compiled = False
    avoid = controller._avoid
    avoid.native_check = lambda: None
    return controller


@pytest.mark.parametrize(
    "scenario",
    [
        "figure eight",
        "into the box",
        "moving ball",
    ],
)
def test_commands_are_the_python_paths(franka, scenario):
    hand = _hand(franka)
    targets = []
    for k in range(700):
        if scenario == "figure eight":
            phase = 2.0 * np.pi * k * DT / 4.0
            offset = 0.1 * np.array([0.0, np.sin(phase), np.sin(phase) * np.cos(phase)])
        else:
            offset = np.array([0.3, 0.04, 0.02]) if scenario == "into the box" else np.zeros(3)
        targets.append(pin.SE3(hand.rotation, hand.translation + offset))

    in_motion = []  # the compiled ticks while the ball moves

    def moving(controller, k):
        if scenario == "moving ball":
            position = hand.translation + [0.0, 0.4 - 0.3 * min(k, 400) * DT, -0.1]
            controller._avoid.world.move("ball", position=position)
            if k == 400:
                in_motion.append(controller.compiled_ticks)

    runs = []
    for reference in (False, True):
        controller = _controller(franka, _world(hand.translation))
        if scenario == "figure eight":  # the box and the ball aside: mostly quiet ticks
            controller._avoid.world.move("box", position=hand.translation + [0.35, 0.0, 0.0])
            controller._avoid.world.move("ball", position=hand.translation + [0.0, 0.35, -0.1])
        if reference:
            _without_check(controller)
        runs.append((_run(franka, controller, targets, moving), controller.compiled_ticks))
    (fast, compiled), (slow, _) = runs
    # the compiled tick rounds as the Python path to the last bits, and no state leaks
    # between the runs: they part only by round-off the loop carries (measured 3.5e-8 rad
    # over 450 ticks "into the box"; 1e-14 rad of noise on every tick's input: 1.2e-6);
    # pressed into the box (from tick ~490) conflicting rows are relaxed by a linear
    # program and the runs part further: compared up to there
    np.testing.assert_allclose(fast[:450], slow[:450], rtol=0.0, atol=1e-5)
    least = {"figure eight": 500, "into the box": 5, "moving ball": 100}[scenario]
    assert compiled >= least  # the quiet ticks ran compiled
    if scenario == "moving ball":  # a moving obstacle far enough: compiled ticks too
        assert in_motion[0] >= 100


def test_levers_bound_how_fast_distances_change(franka):
    """The motion bound the kept bounds rely on (``sum_c R_c |dq_c|`` over the columns that
    move one shape of the pair and not the other, finite differences of coal's distances): no
    pair's distance changes faster, apart or in penetration."""
    world = _world(_hand(franka).translation)
    controller = _controller(franka, world)
    avoid = controller._avoid
    scene = avoid.scene
    checked = np.isfinite(avoid.limit.pair_margins()[0])
    lower, upper = franka.model.lowerPositionLimit, franka.model.upperPositionLimit
    rng = np.random.default_rng(7)
    for _ in range(40):
        q = lower + rng.uniform(size=lower.size) * (upper - lower)
        step = np.zeros_like(q)
        step[:7] = rng.normal(0.0, 0.02, 7)
        before = np.array([d.distance for d in scene.distances(q)])
        after = np.array([d.distance for d in scene.distances(q + step)])
        moved = avoid._pair_columns() @ (avoid._levers * np.abs(step[:7]))
        assert np.all((np.abs(after - before) <= moved + 2e-6)[checked])


def test_kept_bounds_give_the_commands_of_bounds_computed_every_tick(franka):
    """A pair decided from its kept bound (less the sweep since) or computed again gives the
    same commands: the cache changes only which ticks ask coal, never a command. A 5 ms
    period (the wrist's pairs within their braking distance on most ticks, as in
    ``bench.collision``), a circle with roll, then a target inside the box."""
    hand = _hand(franka)
    names = list(franka.controlled_joint_names)
    period = 0.005
    targets = []
    for k in range(500):
        phase = 2.0 * np.pi * k * period
        rotation = hand.rotation @ pin.exp3(np.array([0.3 * np.sin(phase), 0.0, 0.0]))
        offset = 0.1 * np.array([0.0, np.cos(phase) - 1.0, np.sin(phase)])
        if k >= 400:
            offset = np.array([0.3, 0.04, 0.02])
        targets.append(pin.SE3(rotation, hand.translation + offset))
    runs = []
    for caching in (True, False):
        controller = PinkIKController(
            franka, names, ["panda_hand"], tool_frame="panda_hand", dt=period,
            world=_world(hand.translation), self_collision=True,
        )  # fmt: skip
        q = franka.q0[: len(names)].copy()
        controller.reset(RobotState(joints=JointSpace(names).state(q)), None, 0.0)
        controller._avoid.native_check().caching = caching
        commands = []
        for k, target in enumerate(targets):
            q = controller.step(q, target, t=k * period)
            commands.append(q.copy())
        runs.append((np.array(commands), controller.compiled_ticks))
    (kept, compiled), (computed, _) = runs
    np.testing.assert_array_equal(kept, computed)
    assert 300 < compiled < len(targets)  # quiet ticks compiled, rows in the box
