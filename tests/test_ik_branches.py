"""Branch flips of a rejected IK answer (:mod:`pinkctl.ik.branches`): the UR arm's elbow flip
and a spherical wrist's flip keep the tool pose exactly, a flip is offered only for a pair it
can change, and the search tries them (fewer iterations than without them, every answer
keeping the margin)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from ik_collision_setup import MARGIN, load_robot, tool_pose

from pinkctl import CollisionScene, World
from pinkctl.ik import IKSolver


def _pose_error(robot, solver: IKSolver, a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(pin.log6(tool_pose(robot, a).actInv(tool_pose(robot, b))).vector))


def test_the_ur5_elbow_flip_keeps_the_tool_pose_and_the_wrist_flip_nearly() -> None:
    robot = load_robot("ur5")
    solver = IKSolver(robot)
    flips = solver.collision.flips
    assert flips.count == 2 and list(flips.table[:, 0]) == [1.0, 0.0]  # elbow, wrist
    rng = np.random.default_rng(1)
    for _ in range(50):
        q = solver.subset.sample(rng, robot.q0)
        elbow, wrist = q.copy(), q.copy()
        assert flips.apply(0, elbow) and flips.apply(1, wrist)
        assert _pose_error(robot, solver, q, elbow) < 1e-12
        assert abs(elbow[2] + q[2]) < 1e-12  # the elbow bent the other way
        assert 0.0 < _pose_error(robot, solver, q, wrist) < 0.3  # the wrist is offset
        assert solver.subset.within_limits(elbow) and solver.subset.within_limits(wrist)


def test_the_franka_shoulder_flip_is_exact_and_only_offered_for_pairs_it_changes() -> None:
    robot = load_robot("franka")
    solver = IKSolver(robot)
    check = solver.collision
    flips = check.flips
    rng = np.random.default_rng(2)
    done = 0
    for _ in range(60):
        q = solver.subset.sample(rng, robot.q0)
        flipped = q.copy()
        if flips.apply(0, flipped):  # joints 1-3 meet at the shoulder
            done += 1
            assert _pose_error(robot, solver, q, flipped) < 1e-12
            assert np.abs(flipped - q).max() > 1.0
    assert done > 10
    objects = check.scene.geometry_model.geometryObjects
    pairs = check.scene.geometry_model.collisionPairs
    for row, k in enumerate(check._index):
        names = objects[pairs[k].first].name, objects[pairs[k].second].name
        if all(
            n.startswith(("panda_link5", "panda_link6", "panda_link7", "panda_hand")) for n in names
        ):
            assert not flips.masks[row] & 1  # the shoulder moves neither link


def test_the_search_tries_the_flips_first_and_keeps_the_margin() -> None:
    robot = load_robot("ur5")
    reference = CollisionScene(robot, World.for_robot(robot))
    with_flips, without = IKSolver(robot), IKSolver(robot)
    without.collision.flips.count = 0
    rng = np.random.default_rng(3)
    nominal = with_flips.subset.middle(robot.q0)
    relaxed = {(a, b): kept for a, b, kept in with_flips.collision.relaxed}  # close at home
    totals = [0, 0]
    for k in range(60):
        q = with_flips.subset.sample(rng, robot.q0)
        if reference.in_collision(q, MARGIN):
            continue
        target = tool_pose(robot, q)
        for i, solver in enumerate((with_flips, without)):
            result = solver.find(target, seed=nominal, rng=k)
            assert result.success
            hits = reference.pairs_within(result.q_full, MARGIN)
            assert all(h.distance >= relaxed.get((h.pair.a, h.pair.b), MARGIN) for h in hits)
            totals[i] += result.iterations
    assert totals[0] < 0.9 * totals[1]
