"""The IK's collision check inside the native kernel (:mod:`pinkctl.ik.capsules`,
:mod:`pinkctl.ik.query`): its narrow phase decides as coal does, the native search's answers
keep the margin by coal and are those of the Python search, and the check still works with
the kernel switched off."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
from ik_collision_setup import MARGIN, busy_world, load_robot, tool_pose

from pinkctl import CollisionScene, World
from pinkctl.ik import IKSolver, capsules, narrow
from pinkctl.ik import solver as solver_module
from pinkctl.ik.collision import CollisionCheck
from pinkctl.ik.query import NativeQuery

native_only = pytest.mark.skipif(
    os.environ.get("PINKCTL_NATIVE") == "0", reason="the native kernel is switched off"
)


@native_only
@pytest.mark.parametrize("name", ["franka", "ur5"])
def test_the_kernel_check_decides_as_coal(name: str) -> None:
    """Random configurations among every kind of obstacle: the kernel's capsules + GJK say
    "collides" exactly where coal's collision test at the same margins does."""
    robot = load_robot(name)
    check = IKSolver(robot, world=busy_world(robot)).collision
    assert check is not None and check._native is not None
    subset = IKSolver(robot).subset
    rng = np.random.default_rng(4)
    decided = {True: 0, False: 0}
    for _ in range(400):
        q = subset.sample(rng, robot.q0)
        native = check._native.free(q)
        assert native in (0, 1)  # every shape is one the kernel knows
        assert bool(native) == check._coal_accepts(q)
        decided[bool(native)] += 1
    assert decided[True] > 20 and decided[False] > 20


@native_only
def test_the_narrow_phase_proves_distances_of_each_shape_kind() -> None:
    """Two shapes of each kind placed at known distances around the margin: accepted only
    when at least the threshold apart (coal's distance the reference)."""
    robot = load_robot("franka")
    world = World()
    check = IKSolver(robot, world=world).collision
    scene = CollisionScene(robot, world)
    subset = IKSolver(robot).subset
    rng = np.random.default_rng(5)
    wrong = accepted_count = 0
    for k in range(80):
        q = subset.sample(rng, robot.q0)
        hand = tool_pose(robot, q).translation
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        centre = hand + direction * rng.uniform(0.05, 0.2)
        kind = k % 4
        if kind == 0:
            world.add_sphere("x", radius=0.04, position=centre)
        elif kind == 1:
            world.add_box("x", size=(0.05, 0.08, 0.1), position=centre)
        elif kind == 2:
            world.add_cylinder("x", radius=0.03, length=0.1, position=centre)
        else:
            world.add_capsule("x", radius=0.03, length=0.1, position=centre)
        scene.sync()
        accepted = check.accepts(q)
        reference = not scene.in_collision(q, MARGIN)
        wrong += accepted != reference
        accepted_count += accepted
        world.remove("x")
    assert wrong == 0
    assert 10 < accepted_count < 70


@native_only
@pytest.mark.parametrize("name", ["franka", "ur5"])
def test_native_search_answers_keep_the_margin_and_match_the_python_search(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    robot = load_robot(name)
    world = World.for_robot(robot)
    reference = CollisionScene(robot, world)
    native = IKSolver(robot)
    assert isinstance(native._native_query(pin.SE3.Identity()), NativeQuery)
    blind = IKSolver(robot, world=World(), self_collision=False)
    monkeypatch.setattr(solver_module, "native_local", lambda *args: None)
    python = IKSolver(robot)
    assert python._native_query(pin.SE3.Identity()) is None
    rng = np.random.default_rng(6)
    nominal = native.subset.middle(robot.q0)
    collided = 0
    for k in range(40):
        q = native.subset.sample(rng, robot.q0)
        if reference.in_collision(q, MARGIN):
            continue
        target = tool_pose(robot, q)
        a = native.find(target, seed=nominal, rng=k)
        b = python.find(target, seed=nominal, rng=k)
        assert (a.success, a.iterations, a.restarts, a.reason) == (
            b.success,
            b.iterations,
            b.restarts,
            b.reason,
        )
        if a.success:
            assert np.abs(a.q_full - b.q_full).max() <= 1e-9
            assert reference.min_distance(a.q_full) >= MARGIN
        collided += reference.in_collision(blind.find(target, seed=nominal, rng=k).q_full, MARGIN)
    assert collided > 0  # the kernel did reject colliding answers


@native_only
def test_a_native_search_that_only_finds_collisions_says_so() -> None:
    robot = load_robot("franka")
    target = tool_pose(robot, robot.q0)
    world = World.for_robot(robot)
    world.add_box("crate", size=(0.2, 0.2, 0.2), position=target.translation)
    solver = IKSolver(robot, world=world)
    result = solver.find(target, max_iterations=300, rng=0)
    assert not result.success
    assert "rejected in collision" in result.reason and "crate" in result.reason


@native_only
def test_a_shape_the_kernel_does_not_know_is_left_to_coal(monkeypatch) -> None:
    """With the narrow phase unable to decide, the native search hands each converged
    configuration to :meth:`CollisionCheck.accepts` (coal) and resumes with the verdict."""
    robot = load_robot("franka")
    reference = CollisionScene(robot, World.for_robot(robot))
    solver = IKSolver(robot)
    check = solver.collision
    shapes = check._native._arrays["shape"]
    shapes[:] = 5  # SHAPE_OTHER: the kernel defers every near pair
    asked = []
    accepts = CollisionCheck.accepts

    def counting(self, q):
        asked.append(q.copy())
        return accepts(self, q)

    monkeypatch.setattr(CollisionCheck, "accepts", counting)
    rng = np.random.default_rng(8)
    for k in range(10):
        q = solver.subset.sample(rng, robot.q0)
        if reference.in_collision(q, MARGIN):
            continue
        result = solver.find(tool_pose(robot, q), rng=k)
        assert result.success
        assert reference.min_distance(result.q_full) >= MARGIN
    assert asked


def test_the_check_works_with_the_kernel_switched_off() -> None:
    code = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "import numpy as np, pinocchio as pin, pinkctl\n"
        "from pinkctl import CollisionScene, World\n"
        "from pinkctl.ik import IKSolver, find_ik\n"
        "r = pinkctl.load_pink_supported_robot('franka')\n"
        "s = IKSolver(r)\n"
        "assert s.collision._native is None and s._native_query(pin.SE3.Identity()) is None\n"
        "scene = CollisionScene(r, World.for_robot(r))\n"
        "rng = np.random.default_rng(0); data = r.model.createData(); ok = 0\n"
        "frame = r.model.getFrameId(r.tool_frame)\n"
        "for k in range(8):\n"
        "    q = s.subset.sample(rng, r.q0)\n"
        "    if scene.in_collision(q, 0.01): continue\n"
        "    pin.framesForwardKinematics(r.model, data, q)\n"
        "    res = find_ik(r, data.oMf[frame].copy(), rng=k)\n"
        "    assert res.success and scene.min_distance(res.q_full) >= 0.01\n"
        "    ok += 1\n"
        "print(ok > 0)\n"
    )
    env = {**os.environ, "PINKCTL_NATIVE": "0"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["True"]


@native_only
def test_a_native_solver_sees_an_obstacle_moved_between_two_queries() -> None:
    """The native query points at the check's arrays only when the world changes: an
    obstacle moved onto the answer, then away, is seen by the next query each time."""
    robot = load_robot("franka")
    target = tool_pose(robot, robot.q0)
    world = World.for_robot(robot)
    world.add_box("crate", size=(0.2, 0.2, 0.2), position=(2.0, 2.0, 0.5))
    solver = IKSolver(robot, world=world)
    free = solver.find(target, rng=0)
    assert free.success and isinstance(solver._native_query(target), NativeQuery)
    world.move("crate", position=target.translation)
    blocked = solver.find(target, max_iterations=300, rng=0)
    assert not blocked.success and "crate" in blocked.reason
    world.move("crate", position=(2.0, 2.0, 0.5))
    again = solver.find(target, rng=0)
    assert again.success and np.array_equal(again.q_full, free.q_full)


@native_only
def test_a_check_rebuilt_after_a_world_change_is_the_one_built_afresh(monkeypatch) -> None:
    """Every change of the world rebuilds the kernel's check; the robot's hull graphs and
    capsules, the same at every rebuild, come from what the last build worked out. The
    arrays of a rebuild after a move are those of a build with nothing kept."""
    robot = load_robot("ur5")  # its collision meshes are convex hulls with vertex graphs
    world = busy_world(robot)
    scene = CollisionScene(robot, world)
    pairs = np.array([[p.geometry_a, p.geometry_b] for p in scene.pairs], dtype=np.intp)

    def arrays() -> dict[str, np.ndarray]:
        scene.sync()
        check = capsules.native_broad_phase(scene.model, scene.geometry_model, pairs, MARGIN)
        assert check is not None
        return check._arrays

    arrays()  # the robot's shapes are now kept
    world.move("rock", position=(-0.3, 0.2, 0.4))
    rebuilt = arrays()
    kept = capsules.bounding_capsule

    def worked_out(shape: object) -> object:  # each capsule computed, nothing kept
        capsules._CAPSULES.clear()
        return kept(shape)

    monkeypatch.setattr(capsules, "bounding_capsule", worked_out)
    monkeypatch.setattr(narrow, "_hull_graph", narrow._checked_graph)
    afresh = arrays()
    assert rebuilt.keys() == afresh.keys()
    for name, values in afresh.items():
        assert np.array_equal(rebuilt[name], values), name
    assert rebuilt["climb"].sum() > 0  # graphs were kept, not only "try every vertex"


@native_only
@pytest.mark.parametrize("name", ["franka", "ur5"])
def test_the_check_takes_the_placements_of_the_ik_chain_exactly(name: str) -> None:
    """The kernel's check of a converged configuration takes the placements of the IK's chain
    joints from the IK's last evaluation (``_collision.c``'s ``match_chain``): after a search
    every chain joint is matched, and at random configurations those placements equal the
    ones the check computes itself, so its verdicts are the same."""
    robot = load_robot(name)
    solver = IKSolver(robot, world=World.for_robot(robot))
    rng = np.random.default_rng(8)
    assert solver.find(tool_pose(robot, robot.q0), seed=robot.q0, rng=0).success
    local = solver._local(solver._query[0])
    check = solver.collision
    assert check is not None and check._native is not None
    reuse = check._native._arrays["reuse"]
    matched = np.flatnonzero(reuse >= 0)
    assert sorted(reuse[matched]) == list(range(local._problem.nj))
    ik_frames = local._arrays["frames"].reshape(-1, 12)
    check_frames = check._native._arrays["frames"].reshape(-1, 12)
    for _ in range(200):
        q = solver.subset.sample(rng, robot.q0)
        local(q, max_iterations=1)  # one evaluation at q (inside the limits)
        check._native.near(q)
        assert np.array_equal(check_frames[matched + 1], ik_frames[reuse[matched]])
