"""Collision-free global IK (issue 25 item 4): answers keep the collision margin from every
obstacle and between the robot's own links, as :class:`~pinkctl.world.CollisionScene`
measures it independently; an obstacle on the usual answer gives another one; a target
inside an obstacle fails saying so; batches, maps and retargeting honour ``world=``; the
native broad phase only ever under-estimates distances."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from ik_collision_setup import MARGIN, busy_world, load_robot, tool_pose

import pinkctl
from pinkctl import CollisionScene, InputError, World
from pinkctl.ik import IKSolver, find_ik, find_ik_batch, local_ik, retarget_poses
from pinkctl.ik.capsules import bounding_capsule, native_broad_phase
from pinkctl.ik.collision import CollisionCheck, robot_collision_model
from pinkctl.ik.loop import LocalOutcome
from pinkctl.ik.search import REJECTED_STALL, global_search
from pinkctl.reach import reachability_map


@pytest.fixture(scope="module")
def franka() -> pinkctl.PinkRobot:
    return load_robot("franka")


@pytest.fixture(scope="module")
def reference(franka) -> CollisionScene:
    """Self pairs and the floor, as ``find_ik`` checks them by default."""
    return CollisionScene(franka, World.for_robot(franka))


def _free_targets(robot, scene, count: int, seed: int = 0) -> list[pin.SE3]:
    """Tool poses of random configurations that keep the margin."""
    solver = IKSolver(robot, world=World(), self_collision=False)
    rng = np.random.default_rng(seed)
    targets = []
    while len(targets) < count:
        q = solver.subset.sample(rng, robot.q0)
        if not scene.in_collision(q, MARGIN):
            targets.append(tool_pose(robot, q))
    return targets


def _blocking_world(robot, q_blocked: np.ndarray, target: pin.SE3) -> World:
    """The floor and a ball on the elbow (panda_link4) of ``q_blocked``, clear of the tool."""
    data = robot.model.createData()
    pin.forwardKinematics(robot.model, data, q_blocked)
    elbow = data.oMi[robot.model.getJointId("panda_joint4")].translation.copy()
    world = World.for_robot(robot)
    radius = min(0.06, float(np.linalg.norm(elbow - target.translation)) - 0.15)
    assert radius > 0.02
    world.add_sphere("ball", radius=radius, position=elbow)
    return world


# ---------------------------------------------------------------------- answers


def test_default_answers_keep_the_margin_by_the_reference_scene(franka, reference) -> None:
    blind = IKSolver(franka, world=World(), self_collision=False)
    collided = 0
    for i, target in enumerate(_free_targets(franka, reference, 40)):
        result = find_ik(franka, target, rng=i)
        assert result.success, result.reason
        assert reference.min_distance(result.q_full) >= MARGIN
        collided += reference.in_collision(blind.find(target, rng=i).q_full, MARGIN)
    assert collided > 0  # the blind search does give colliding answers on these targets


def test_an_obstacle_on_the_usual_answer_gives_another_collision_free_one(franka) -> None:
    blind = IKSolver(franka, world=World(), self_collision=False)
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = blind.subset.sample(rng, franka.q0)
        target = tool_pose(franka, q)
        usual = blind.find(target)
        data = franka.model.createData()
        pin.forwardKinematics(franka.model, data, usual.q_full)
        elbow = data.oMi[franka.model.getJointId("panda_joint4")].translation
        if usual.success and np.linalg.norm(elbow - target.translation) > 0.25:
            break
    world = _blocking_world(franka, usual.q_full, target)
    scene = CollisionScene(franka, world)
    assert scene.in_collision(usual.q_full, MARGIN)
    result = find_ik(franka, target, world=world)
    assert result.success, result.reason
    assert scene.min_distance(result.q_full) >= MARGIN
    assert np.abs(result.q - usual.q).max() > 1e-3


def test_a_target_inside_an_obstacle_fails_with_a_collision_reason(franka, reference) -> None:
    target = _free_targets(franka, reference, 1, seed=5)[0]
    world = World.for_robot(franka)
    world.add_box("crate", size=(0.2, 0.2, 0.2), position=target.translation)
    result = find_ik(franka, target, world=world, max_iterations=400)
    assert not result.success
    assert "collision" in result.reason and "crate" in result.reason
    # the blind search reaches it: the obstacle is the only reason
    assert find_ik(franka, target, world=World(), self_collision=False).success


def test_a_local_solve_converging_into_collision_is_no_success(franka) -> None:
    target = tool_pose(franka, franka.q0)
    world = World()
    world.add_box("crate", size=(0.2, 0.2, 0.2), position=target.translation)
    result = local_ik(franka, target, world=world)
    assert not result.success
    assert result.reason.startswith("in collision") and "crate" in result.reason
    assert result.position_error < 1e-5  # it converged: the reason is the collision


def test_margin_zero_and_nothing_to_check(franka, reference) -> None:
    assert IKSolver(franka, world=World(), self_collision=False).collision is not None
    target = _free_targets(franka, reference, 1, seed=7)[0]
    result = find_ik(franka, target, collision_margin=0.0)
    assert result.success
    assert reference.min_distance(result.q_full) >= 0.0


def test_self_collision_defaults_to_on_for_a_description_with_collision_elements(franka):
    solver = IKSolver(franka)
    assert solver.collision is not None
    assert solver.collision.scene.self_collision
    assert "floor" in solver.collision.scene.world
    assert not IKSolver(franka, self_collision=False).collision.scene.self_collision


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"world": "table"}, "world: expected a pinkctl.World or None"),
        ({"self_collision": "yes"}, "self_collision: expected True, False or None"),
        ({"collision_margin": -0.01}, "collision_margin: expected a non-negative"),
        ({"collision_margin": float("nan")}, "collision_margin"),
        ({"collision_margin": "1 cm"}, "collision_margin"),
    ],
)
def test_bad_collision_options_are_refused(franka, changes, match) -> None:
    with pytest.raises(InputError, match=match):
        IKSolver(franka, **changes)
    with pytest.raises(InputError, match=match):
        find_ik(franka, tool_pose(franka, franka.q0), **changes)


# ---------------------------------------------------------------------- the solver cache


def test_the_cached_solver_follows_its_world_and_keys_margin_and_self_collision(franka):
    from pinkctl.ik.cache import cached_solver
    from pinkctl.ik.options import IKOptions

    world = World.for_robot(franka)
    solver = cached_solver(franka, IKOptions(world=world))
    assert cached_solver(franka, IKOptions(world=world)) is solver
    assert cached_solver(franka, IKOptions(world=world.copy())) is not solver
    assert cached_solver(franka, IKOptions(world=world, collision_margin=0.02)) is not solver
    assert cached_solver(franka, IKOptions(world=world, self_collision=False)) is not solver
    target = tool_pose(franka, franka.q0)
    assert find_ik(franka, target, world=world).success
    world.add_box("crate", size=(0.2, 0.2, 0.2), position=target.translation)
    result = find_ik(franka, target, world=world, max_iterations=200)
    assert not result.success and "crate" in result.reason  # the change is seen
    world.remove("crate")
    assert find_ik(franka, target, world=world).success


# ---------------------------------------------------------------------- batches, maps


def test_a_batch_honours_the_world_in_this_process_and_in_a_pool(franka, reference) -> None:
    targets = _free_targets(franka, reference, 4, seed=11)
    world = World.for_robot(franka)
    world.add_sphere("ball", radius=0.08, position=(0.45, 0.0, 0.45))
    scene = CollisionScene(franka, world)
    here = find_ik_batch(franka, targets, world=world)
    pool = find_ik_batch(franka, targets, world=world, workers=2, mp_context="spawn")
    for a, b in zip(here, pool):
        assert a.success == b.success
        np.testing.assert_allclose(a.q, b.q, atol=1e-12)
        if a.success:
            assert scene.min_distance(a.q_full) >= MARGIN


@pytest.mark.xdist_group("ray")
def test_a_batch_on_ray_carries_the_world(ray_cluster, franka, reference) -> None:
    targets = _free_targets(franka, reference, 3, seed=13)
    world = World.for_robot(franka)
    world.add_sphere("ball", radius=0.08, position=(0.45, 0.0, 0.45))
    here = find_ik_batch(franka, targets, world=world)
    on_ray = find_ik_batch(franka, targets, world=world, backend="ray", workers=2)
    for a, b in zip(here, on_ray):
        assert a.success == b.success
        np.testing.assert_allclose(a.q, b.q, atol=1e-12)


def test_a_reachability_map_honours_the_world(franka) -> None:
    world = World.for_robot(franka)
    world.add_box("wall", size=(0.2, 2.0, 2.0), position=(0.5, 0.0, 0.5))
    scene = CollisionScene(franka, world)
    common = {"resolution": 0.25, "orientations": None}
    free = reachability_map(franka, world=World(), self_collision=False, **common)
    walled = reachability_map(franka, world=world, **common)
    assert walled.reachable.sum() < free.reachable.sum()
    inside = np.abs(walled.grid.centres()[..., 0] - 0.5) < 0.1
    assert not walled.reachable[inside].any()
    solver = IKSolver(franka, position_only=True)
    for q in walled.q[walled.reached]:
        assert scene.min_distance(solver.subset.parse_seed(q, franka.q0)) >= MARGIN


def test_retargeting_honours_the_world(franka, reference) -> None:
    start = tool_pose(franka, franka.q0)
    poses = [pin.SE3(start.rotation, start.translation + [0.0, 0.01 * k, 0.0]) for k in range(8)]
    world = World.for_robot(franka)
    world.add_sphere("ball", radius=0.05, position=start.translation + [0.0, 0.0, -0.25])
    scene = CollisionScene(franka, world)
    result = retarget_poses(franka, poses, world=world)
    assert result.success.all()
    solver = IKSolver(franka)
    for q in result.q:
        assert scene.min_distance(solver.subset.parse_seed(q, franka.q0)) >= MARGIN


# ---------------------------------------------------------------------- the broad phase


@pytest.mark.parametrize("name", ["franka", "ur5"])
def test_native_bounds_never_exceed_coal_distances(name) -> None:
    robot = load_robot(name)
    scene = CollisionScene(robot, busy_world(robot))
    pairs = np.array([(p.geometry_a, p.geometry_b) for p in scene.pairs])
    broad = native_broad_phase(scene.model, scene.geometry_model, pairs, 0.05)
    if broad is None:
        pytest.skip("the native kernel is not built")
    solver = IKSolver(robot, world=World(), self_collision=False)
    rng = np.random.default_rng(0)
    for _ in range(100):
        q = solver.subset.sample(rng, robot.q0)
        near = broad.near(q).copy()
        bounds = dict(zip(near.tolist(), broad.bounds[: len(near)].tolist()))
        for d in scene.distances(q):
            k = d.pair.index
            assert d.distance >= 0.05 or k in bounds, d  # every pair within 5 cm is returned
            if k in bounds:
                assert bounds[k] <= d.distance + 1e-9
        assert all(np.diff(broad.bounds[: len(near)]) >= 0)  # nearest first


def test_bounding_capsules_hold_their_shapes() -> None:
    import coal

    rng = np.random.default_rng(1)
    points = rng.normal(size=(200, 3)) * [0.3, 0.05, 0.1]
    hull = pinkctl.world.obstacle.convex_shape(points)
    for shape in (coal.Box(0.4, 0.1, 0.2), hull, coal.Cylinder(0.1, 0.5), coal.Sphere(0.2)):
        a, b, radius = bounding_capsule(shape)
        samples = rng.uniform(-1, 1, size=(4000, 3)) * 0.6
        inside = np.array([_inside(shape, p) for p in samples])
        t = np.clip((samples - a) @ (b - a) / max((b - a) @ (b - a), 1e-18), 0.0, 1.0)
        gap = np.linalg.norm(samples - (a + t[:, None] * (b - a)), axis=1)
        assert np.all(gap[inside] <= radius + 1e-9)


def _inside(shape, point) -> bool:
    import coal

    probe = coal.Sphere(1e-9)
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    coal.distance(
        shape, coal.Transform3s(), probe, coal.Transform3s(np.eye(3), point), request, result
    )
    return result.min_distance <= 0.0


def test_the_numpy_broad_phase_decides_as_the_native_one(franka) -> None:
    world = busy_world(franka)
    solver = IKSolver(franka, world=world)
    native = solver.collision
    numpy_path = CollisionCheck(CollisionScene(franka, world), solver.subset, MARGIN)
    numpy_path._native = None
    kept = [
        (k, p.first, p.second)
        for k, p in enumerate(numpy_path.scene.geometry_model.collisionPairs)
        if k in set(numpy_path._index)
    ]
    numpy_path._spheres_of(kept, np.array([(a, b) for _, a, b in kept]))
    rng = np.random.default_rng(2)
    decisions = []
    for _ in range(150):
        q = solver.subset.sample(rng, franka.q0)
        decisions.append(native.accepts(q))
        assert numpy_path.accepts(q) == decisions[-1]
    assert 0 < sum(decisions) < len(decisions)


def test_the_robot_geometry_is_built_once_per_robot(franka) -> None:
    geometry, floor = robot_collision_model(franka)
    assert robot_collision_model(franka)[0] is geometry
    assert IKSolver(franka).collision.scene.geometry is geometry
    assert "floor" in floor


def test_the_pairs_close_at_home_are_listed_with_the_margin_they_keep(franka) -> None:
    check = IKSolver(franka).collision
    assert check is not None and check.relaxed  # panda_link5-panda_link7, 12 mm at home
    scene = check.scene
    at_home = {(d.pair.a, d.pair.b): d.distance for d in scene.distances(franka.q0)}
    for a, b, kept in check.relaxed:
        assert kept < MARGIN
        assert kept == pytest.approx(0.5 * at_home[(a, b)]) or kept == -np.inf
    assert CollisionCheck(scene, IKSolver(franka).subset, MARGIN).relaxed == ()  # no home


@pytest.mark.parametrize("name, turned", [("franka", False), ("ur5", True)])
def test_a_rejection_names_the_full_turn_joints_between_its_pair(name, turned) -> None:
    robot = load_robot(name)
    solver = IKSolver(robot)
    check = solver.collision
    assert check is not None
    rng = np.random.default_rng(3)
    while True:  # a configuration the check rejects
        q = solver.subset.sample(rng, robot.q0)
        if not check.accepts(q):
            break
    far = check.far_columns()
    if not turned:
        assert far is None  # franka's joints turn less than a full turn
        return
    assert far is not None and far.any()
    span = solver.subset.sample_high - solver.subset.sample_low
    assert np.all(span[far.astype(bool)] >= 2 * np.pi)


@pytest.mark.parametrize(
    "given, restarts, after",
    [(5, None, REJECTED_STALL), (1, None, 1), (None, None, None), (5, 30, 5)],
)
def test_after_a_rejection_local_solves_stop_sooner_on_a_stall(
    franka, given, restarts, after
) -> None:
    """The seed's solve and the starts before any rejection keep the caller's stall limit;
    once a converged configuration collided, every later solve stops after
    ``REJECTED_STALL`` iterations without progress (a caller's smaller limit or None kept;
    not when ``max_restarts`` caps the starts)."""
    subset = IKSolver(franka).subset
    stalls: list[int | None] = []

    def local(q: np.ndarray, **budget: object) -> LocalOutcome:
        stalls.append(budget["stall_iterations"])  # type: ignore[arg-type]
        converged = len(stalls) in (2, 4)  # the first restart collides, the third is free
        return LocalOutcome(q.copy(), 0.0 if converged else 1.0, converged, 3, "stalled")

    verdicts = iter([False, True])
    out = global_search(
        None,  # type: ignore[arg-type]  # read only for a metric threshold
        subset,
        None,  # type: ignore[arg-type]  # the local solve is given
        subset.middle(franka.q0),
        rng=np.random.default_rng(0),
        deadline=None,
        max_restarts=restarts,
        max_iterations=100,
        iterations_per_start=30,
        stall_iterations=given,
        local=local,
        collision=lambda q: next(verdicts),
    )
    assert out.success and out.collided == 1
    assert stalls == [given, given, after, after]
