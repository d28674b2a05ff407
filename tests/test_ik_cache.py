"""find_ik / local_ik reuse one solver per (robot, options): same answers as a fresh solver,
one construction for a loop of calls, rebuilt when the robot changes under it."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl.ik import IKSolver, cache, clear_solver_cache, find_ik, local_ik


@pytest.fixture
def franka() -> pinkctl.PinkRobot:
    clear_solver_cache()
    return pinkctl.load_pink_supported_robot("franka")


def _targets(robot: pinkctl.PinkRobot, n: int) -> list[pin.SE3]:
    rng = np.random.default_rng(3)
    model, data = robot.model, robot.model.createData()
    frame = model.getFrameId(robot.tool_frame)
    lower, upper = model.lowerPositionLimit, model.upperPositionLimit
    out = []
    for _ in range(n):
        pin.framesForwardKinematics(model, data, rng.uniform(lower, upper))
        out.append(data.oMf[frame].copy())
    return out


def _count_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    builds = [0]
    original = cache.IKSolver

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        builds[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(cache, "IKSolver", counting)
    return builds


def test_cached_answers_equal_a_fresh_solvers(franka):
    fresh = IKSolver(franka)
    for target in _targets(franka, 10):
        a = find_ik(franka, target, rng=1)
        b = fresh.find(target, rng=1)
        assert a.success == b.success
        np.testing.assert_array_equal(a.q, b.q)
        c = local_ik(franka, target, seed=franka.q0)
        d = IKSolver(franka).solve(target, seed=franka.q0)
        np.testing.assert_array_equal(c.q, d.q)


def test_a_loop_builds_one_solver(franka, monkeypatch):
    builds = _count_builds(monkeypatch)
    for target in _targets(franka, 50):
        find_ik(franka, target)
        local_ik(franka, target)
    assert builds[0] == 1  # find_ik and local_ik share the solver of the same options
    find_ik(franka, _targets(franka, 1)[0], position_only=True)
    assert builds[0] == 2  # other options, another solver


def test_rebuilt_when_the_robot_changes(franka, monkeypatch):
    builds = _count_builds(monkeypatch)
    target = _targets(franka, 1)[0]
    find_ik(franka, target)
    franka.model.upperPositionLimit[0] -= 0.1  # the limits the solver copied
    find_ik(franka, target)
    assert builds[0] == 2
    clear_solver_cache()
    find_ik(franka, target)
    assert builds[0] == 3


def test_the_cache_is_bounded_and_clear_releases_robots():
    clear_solver_cache()
    robot = pinkctl.load_pink_supported_robot("so101")
    alive = weakref.ref(robot)
    find_ik(robot, np.array([0.2, 0.0, 0.15]), position_only=True)
    del robot
    gc.collect()
    assert alive() is not None  # its solver is kept for the next call
    for tolerance in np.linspace(1e-5, 1e-4, cache.MAX_CACHED_SOLVERS + 1):
        local_ik(
            alive(), np.array([0.2, 0.0, 0.15]), position_only=True, position_tolerance=tolerance
        )
    assert len(cache._entries()) == cache.MAX_CACHED_SOLVERS
    clear_solver_cache()
    gc.collect()
    assert alive() is None
