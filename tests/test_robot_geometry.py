"""The robot's collision geometry, its excluded pairs, and the reference distance queries of
a robot in a world (pinkctl.world.RobotGeometry, CollisionScene)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import CollisionScene, InputError, RobotGeometry, World, load_pink_robot
from pinkctl.errors import PinkctlWarning

URDF = Path(__file__).parent / "urdf"
RADIUS = 0.1  # of the ball_slider's ball


def _load(name: str, **kwargs):
    from pinkctl import load_pink_supported_robot

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PinkctlWarning)
        if (URDF / f"{name}.urdf").is_file():
            return load_pink_robot(URDF / f"{name}.urdf", **kwargs)
        return load_pink_supported_robot(name, **kwargs)


@pytest.fixture(scope="module")
def ball():
    return _load("ball_slider")


def _fd_row(scene: CollisionScene, q: np.ndarray, index: int, eps: float) -> np.ndarray:
    """Central finite differences of pair ``index``'s distance along each tangent axis."""
    model = scene.model
    row = np.zeros(model.nv)
    for i in range(model.nv):
        step = np.zeros(model.nv)
        step[i] = eps
        up = scene.distances(pin.integrate(model, q, step))[index].distance
        down = scene.distances(pin.integrate(model, q, -step))[index].distance
        row[i] = (up - down) / (2.0 * eps)
    return row


# ---------------------------------------------------------------------------- geometry
def test_franka_pairs_are_the_srdf_filtered_pairs(franka_robot):
    geometry = RobotGeometry.from_robot(franka_robot)
    reference = _load("franka", build_collision_model=True).collision_model
    expected = {(p.first, p.second) for p in reference.collisionPairs}
    assert len(geometry.pairs) == len(expected) == 165
    assert set(geometry.pairs) == expected
    assert geometry.exclusion("panda_link1", "panda_link0").reason == "SRDF: Adjacent"
    assert geometry.exclusion("panda_link0", "panda_link2").reason == "SRDF: Never"
    assert geometry.exclusion("panda_link7", "panda_hand").reason == "rigidly attached"
    assert geometry.exclusion("panda_link1", "panda_hand") is None
    assert "165 checked" in geometry.report() and "SRDF: Never (12)" in geometry.report()
    # the loader's own collision model gives the same geometry
    prebuilt = RobotGeometry.from_robot(_load("franka", build_collision_model=True))
    assert prebuilt.pairs == geometry.pairs and prebuilt.links == geometry.links


def test_without_srdf_adjacent_links_are_excluded_and_meshes_become_hulls():
    robot = _load("ur5")
    assert robot.srdf_path is None
    geometry = RobotGeometry.from_robot(robot)
    reasons = {(e.link_a, e.link_b): e.reason for e in geometry.exclusions}
    assert reasons[("shoulder_link", "upper_arm_link")] == "adjacent"
    assert reasons[("forearm_link", "wrist_1_link")] == "adjacent"
    assert reasons[("ee_link", "wrist_3_link")] == "rigidly attached"
    assert ("base_link", "upper_arm_link") not in reasons  # two joints apart: checked
    assert not any(r.startswith("SRDF") for r in reasons.values())
    objects = geometry.geometry_model.geometryObjects
    assert sum(type(o.geometry).__name__ == "Convex" for o in objects) == 7
    assert len(geometry.pairs) == 20


def test_pairs_in_contact_at_home_are_excluded_and_reported():
    geometry = RobotGeometry.from_robot(_load("touching_arm"))
    assert geometry.exclusion("base_link", "link2").reason == "in contact at home"
    assert geometry.exclusion("base_link", "link1").reason == "adjacent"
    assert geometry.exclusion("base_link", "link3") is None
    assert "in contact at home (1): base_link-link2" in geometry.report()
    assert "collision elements" in geometry.source
    assert len(geometry.pairs) == 2  # base-link3, link1-link3


def test_visual_elements_stand_in_for_missing_collision_elements():
    visual = RobotGeometry.from_robot(_load("touching_arm_visual"))
    collision = RobotGeometry.from_robot(_load("touching_arm"))
    assert "visual elements" in visual.source and "visual elements" in visual.report()
    assert visual.pairs == collision.pairs and visual.exclusions == collision.exclusions


# ---------------------------------------------------------------------------- the scene
def test_scene_pairs_self_then_moving_geometry_against_each_obstacle(franka_robot):
    world = World.for_robot(franka_robot)
    world.add_sphere("ball", 0.05, (0.5, 0.0, 0.5))
    scene = CollisionScene(franka_robot, world)
    self_pairs = [p for p in scene.pairs if p.kind == "self"]
    obstacle_pairs = [p for p in scene.pairs if p.kind == "obstacle"]
    assert len(self_pairs) == 165 and scene.pairs[:165] == tuple(self_pairs)
    assert len(obstacle_pairs) == 2 * 24  # the 3 geometries of the fixed base are not paired
    assert not any(p.link_a == "panda_link0" for p in obstacle_pairs)
    assert {p.body_b for p in obstacle_pairs} == {"floor", "ball"}
    assert [p.index for p in scene.pairs] == list(range(len(scene.pairs)))
    assert len(scene.geometry_model.collisionPairs) == len(scene.pairs)
    floor = scene.geometry_model.geometryObjects[obstacle_pairs[0].geometry_b]
    assert floor.parentJoint == 0 and floor.name == "floor"
    only_obstacles = CollisionScene(franka_robot, world, self_collision=False)
    assert [p.kind for p in only_obstacles.pairs] == ["obstacle"] * 48
    assert "fixed base not paired with obstacles" in scene.report()


def test_scene_follows_the_world(ball):
    world = World()
    scene = CollisionScene(ball, world)
    q = np.zeros(2)
    assert scene.distances(q) == [] and scene.min_distance(q) == math.inf
    world.add_sphere("s", 0.2, (1.0, 0.0, 0.0))
    assert scene.min_distance(q) == pytest.approx(1.0 - 0.3)
    model = scene.geometry_model
    world.move("s", position=(0.0, 0.0, 2.0))  # a move only places the obstacle again
    assert scene.min_distance(q) == pytest.approx(2.0 - 0.3)
    assert scene.geometry_model is model
    world.add_halfspace("floor", (0, 0, 1), -0.5)
    assert scene.min_distance(q) == pytest.approx(0.4) and scene.geometry_model is not model
    world.remove("floor")
    assert [p.b for p in scene.pairs] == ["s"]


def test_a_scene_follows_moves_as_a_scene_built_at_the_new_poses(franka_robot):
    """A move places only the moved obstacle again (its pieces and their bounding spheres):
    after moves of one obstacle, two at once, and a record put in place, the scene measures
    and culls as a scene built from scratch at the same poses."""
    world = World.for_robot(franka_robot)
    world.add_box("box", (0.1, 0.3, 0.2), (0.9, 0.2, 0.15))
    world.add_sphere("ball", 0.08, (0.3, 0.5, 0.6))
    world.add_capsule("pole", 0.03, 0.6, (-0.4, -0.3, 0.4))
    scene = CollisionScene(franka_robot, world)
    q = franka_robot.q0
    steps = [
        lambda: world.move("box", position=(0.45, 0.1, 0.3)),  # into the arm's reach
        lambda: (world.move("ball", position=(0.35, 0.0, 0.5)), world.move("box", (0.9, 0, 0))),
        lambda: world.replace(world["pole"].moved((0.2, -0.1, 0.5), (1.0, 0.0, 0.0, 0.0))),
        lambda: world.move("floor", position=(0.0, 0.0, 0.3)),  # a half-space moved up
    ]
    for step in steps:
        scene.min_distance(q)  # measured before the move: the old placements are cached
        step()
        fresh = CollisionScene(franka_robot, world.copy())
        assert [d.distance for d in scene.distances(q)] == pytest.approx(
            [d.distance for d in fresh.distances(q)], abs=1e-9
        )
        for limit in (0.0, 0.1, 0.3):
            assert [d.pair.index for d in scene.pairs_within(q, limit)] == [
                d.pair.index for d in fresh.pairs_within(q, limit)
            ]


# ---------------------------------------------------------------------------- distances
def test_signed_distances_of_analytic_pairs(ball):
    world = World()
    world.add_sphere("sphere", 0.2, (1.0, 0.0, 0.0))
    world.add_halfspace("floor", (0.0, 0.0, 1.0), -0.5)
    world.add_box("box", (0.4, 0.4, 0.4), (0.0, 0.0, 2.0))
    scene = CollisionScene(ball, world)
    cases = [
        # q = (x, z) puts the ball's centre at (x, 0, z)
        ((0.0, 0.0), "sphere", 1.0 - 0.3, (1.0, 0.0, 0.0)),
        ((0.85, 0.0), "sphere", 0.15 - 0.3, (1.0, 0.0, 0.0)),  # 15 cm deep
        ((0.0, -0.45), "floor", 0.05 - RADIUS, (0.0, 0.0, -1.0)),  # 5 cm deep
        ((0.0, -0.7), "floor", -0.2 - RADIUS, (0.0, 0.0, -1.0)),  # centre under the floor
        ((0.0, 1.75), "box", 0.05 - RADIUS, (0.0, 0.0, 1.0)),  # 5 cm deep into the bottom face
        ((0.15, 2.0), "box", -0.05 - RADIUS, (-1.0, 0.0, 0.0)),  # centre inside, 5 cm from +x
    ]
    for q, name, expected, normal in cases:
        (found,) = [d for d in scene.distances(np.array(q)) if d.pair.b == name]
        assert found.distance == pytest.approx(expected, abs=1e-6), (q, name)
        assert found.normal == pytest.approx(normal, abs=1e-6), (q, name)
        assert found.point_b - found.point_a == pytest.approx(found.distance * found.normal)
        centre = np.array([q[0], 0.0, q[1]])
        assert np.linalg.norm(found.point_a - centre) == pytest.approx(RADIUS, abs=1e-6)


def test_distance_jacobian_of_analytic_pairs(ball):
    world = World()
    world.add_sphere("sphere", 0.2, (1.0, 0.0, 0.5))
    world.add_halfspace("floor", (0.0, 0.0, 1.0), -0.5)
    scene = CollisionScene(ball, world)
    for q in (np.array([0.3, 0.1]), np.array([0.8, 0.45])):  # apart, then 9 cm deep
        centre = np.array([q[0], 0.0, q[1]])
        by_name = {d.pair.b: d for d in scene.distances(q)}
        direction = (centre - np.array([1.0, 0.0, 0.5])) / np.linalg.norm(
            centre - np.array([1.0, 0.0, 0.5])
        )
        row = scene.distance_jacobian(q, by_name["sphere"])
        assert row == pytest.approx(direction[[0, 2]], abs=1e-9)  # away from the sphere: +
        assert scene.distance_jacobian(q, by_name["floor"]) == pytest.approx([0.0, 1.0])
    assert by_name["sphere"].distance < -0.09  # the second configuration penetrates


def test_distance_jacobian_matches_finite_differences_on_franka(franka_robot):
    """Self and obstacle pairs, apart and in penetration: the row keeps its sign in
    penetration (pink's barrier row turns over there)."""
    robot = franka_robot
    world = World.for_robot(robot)
    world.add_sphere("ball", 0.06, (0.45, 0.1, 0.45))
    world.add_capsule("pole", 0.03, 0.6, (0.4, -0.25, 0.3))
    scene = CollisionScene(robot, world)
    rng = np.random.default_rng(7)
    lower, upper = robot.model.lowerPositionLimit, robot.model.upperPositionLimit
    checked = {"self apart": 0, "self in penetration": 0, "obstacle apart": 0}
    checked["obstacle in penetration"] = 0
    for _ in range(12):
        q = lower + rng.random(robot.model.nq) * (upper - lower)
        found = scene.distances(q)
        for kind in ("self", "obstacle"):
            closest = sorted((d for d in found if d.pair.kind == kind), key=lambda d: d.distance)
            for d in closest[:3]:
                row = scene.distance_jacobian(q, d)
                if np.linalg.norm(row) < 0.05:  # a distance q hardly moves: FD is all noise
                    continue
                # EPA (penetration) is accurate to 1e-6 m: a wider step keeps FD noise small
                eps = 1e-3 if d.distance < 0 else 1e-6
                fd = _fd_row(scene, q, d.pair.index, eps)
                cosine = row @ fd / (np.linalg.norm(row) * np.linalg.norm(fd))
                assert cosine > 0.999, (d.pair, d.distance, cosine)
                assert np.abs(row - fd).max() < 2e-2 * np.abs(fd).max(), (d.pair, d.distance)
                state = "in penetration" if d.distance < 0 else "apart"
                checked[f"{kind} {state}"] += 1
    assert all(count >= 2 for count in checked.values()), checked


def test_pairs_within_finds_every_close_pair(franka_robot):
    """The broad phase never drops a pair within the distance: same pairs as measuring all."""
    world = World.for_robot(franka_robot)
    world.add_box("box", (0.1, 0.3, 0.2), (0.55, 0.2, 0.15))
    world.add_cylinder("can", 0.04, 0.3, (0.3, -0.3, 0.4), (0.9, 0.3, 0.0, 0.1))
    world.add_halfspace("wall", (0.0, -1.0, 0.0), -0.45)  # solid beyond y = 0.45
    scene = CollisionScene(franka_robot, world)
    rng = np.random.default_rng(3)
    model = franka_robot.model
    # coal warm-starts from its previous answers: a pair measured twice agrees to coal's
    # tolerance, 1e-9 m apart (GJK) and 1e-6 m in penetration (EPA)
    tolerance = 2e-6
    culled = []
    for _ in range(20):
        q = model.lowerPositionLimit + rng.random(model.nq) * (
            model.upperPositionLimit - model.lowerPositionLimit
        )
        every = scene.distances(q)
        for limit in (0.0, 0.05, 0.2):
            near = scene.pairs_within(q, limit)
            assert [d.pair.index for d in near] == [
                d.pair.index for d in every if d.distance < limit
            ]
            for d in near:
                assert d.distance == pytest.approx(every[d.pair.index].distance, abs=tolerance)
            assert scene.in_collision(q, margin=limit) == bool(near)
            culled.append(scene.measured < len(scene.pairs))
        closest = scene.closest(q)
        assert closest is not None
        assert closest.distance == pytest.approx(min(d.distance for d in every), abs=tolerance)
        assert scene.min_distance(q) == pytest.approx(closest.distance, abs=tolerance)
    assert all(culled)  # the broad phase spared coal some pairs every time


def test_a_failed_coal_measure_is_measured_again(franka_robot):
    """With EPA asked for 1e-9 m, coal fails on this configuration (it reports -1.8e308);
    the scene measures that pair again instead of returning the failure."""
    scene = CollisionScene(franka_robot)
    q = np.array([2.1282, 1.3854, -1.9614, -2.9916, 0.8739, 0.7918, 0.3692, 0.0378])
    reference = [d.distance for d in scene.distances(q)]
    for request in scene.geometry_data.distanceRequests:
        request.epa_tolerance, request.epa_max_iterations = 1e-9, 1000
    pin.computeDistances(scene.model, scene.data, scene.geometry_model, scene.geometry_data, q)
    failed = [r.min_distance < -1e300 for r in scene.geometry_data.distanceResults]
    assert any(failed)  # the situation the scene guards against
    again = [d.distance for d in scene.distances(q)]
    assert again == pytest.approx(reference, abs=1e-5)


def test_queries_check_their_arguments(ball):
    scene = CollisionScene(ball, World())
    with pytest.raises(InputError, match=r"q must have shape \(2,\)"):
        scene.distances(np.zeros(3))
    with pytest.raises(InputError, match="q must be finite"):
        scene.min_distance([0.0, math.nan])
    with pytest.raises(InputError, match="distance"):
        scene.pairs_within(np.zeros(2), math.nan)
    with pytest.raises(InputError, match="world"):
        CollisionScene(ball, world="floor")
    with pytest.raises(InputError, match="robot must be a PinkRobot"):
        CollisionScene("franka")
    with pytest.raises(InputError, match="distances"):
        scene.distance_jacobians(np.zeros(2), ["pair"])


def test_results_are_not_changed_by_later_queries(franka_robot):
    scene = CollisionScene(franka_robot, World.for_robot(franka_robot))
    first = scene.distances(franka_robot.q0)
    kept = [(d.distance, d.point_a.copy(), d.point_b.copy(), d.normal.copy()) for d in first]
    scene.distances(franka_robot.q0 + 0.3)
    scene.pairs_within(franka_robot.q0 - 0.3, 0.1)
    for d, (distance, point_a, point_b, normal) in zip(first, kept):
        assert d.distance == distance
        assert np.array_equal(d.point_a, point_a) and np.array_equal(d.point_b, point_b)
        assert np.array_equal(d.normal, normal)
