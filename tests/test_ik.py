"""One-shot and global IK (pinkctl.ik): success, limits, purity, validation, determinism."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl import InputError, load_pink_robot, load_pink_supported_robot
from pinkctl.ik import (
    IKOptions,
    IKResult,
    IKSolver,
    LocalOptions,
    SearchOptions,
    available_methods,
    find_ik,
    find_ik_batch,
    local_ik,
    make_method,
)
from pinkctl.ik.qp_method import QPMethod

URDF_DIR = Path(__file__).parent / "urdf"
TOL = 1e-5
# Deterministic stand-in for TRAC-IK's 5 ms budget: about as many iterations as fit in 5 ms.
ITERATION_BUDGET = 300


@pytest.fixture(scope="module")
def robots():
    return {name: load_pink_supported_robot(name) for name in ("franka", "ur10", "so101")}


def _fk(robot, q_full, frame):
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q_full)
    return data.oMf[robot.model.getFrameId(frame)].copy()


def _random_q(robot, rng, solver):
    """A random configuration within the limits that keeps the solver's collision margin
    (so the default, collision-free search has an answer)."""
    while True:
        q = solver.subset.sample(rng, robot.q0)
        if solver.collision is None or solver.collision.accepts(q):
            return q


def _pose_errors(reached, target):
    pos = reached.translation - target.translation
    rot = pin.log3(reached.rotation @ target.rotation.T)
    return np.abs(pos).max(), np.abs(rot).max()


def _within_limits(robot, solver, q_full):
    values = solver.subset.values(q_full)
    return bool(
        np.all(values >= solver.subset.lower - 1e-12)
        and np.all(values <= solver.subset.upper + 1e-12)
    )


def _snapshot(robot):
    data = robot.data
    return (
        robot.q0.copy(),
        [m.homogeneous.copy() for m in data.oMi],
        [m.homogeneous.copy() for m in data.oMf],
        np.array(data.J).copy(),
        robot.model.lowerPositionLimit.copy(),
        robot.model.upperPositionLimit.copy(),
    )


def _same_snapshot(a, b):
    return all(
        np.array_equal(x, y)
        if isinstance(x, np.ndarray)
        else all(np.array_equal(u, v) for u, v in zip(x, y))
        for x, y in zip(a, b)
    )


# ---------------------------------------------------------------------- global search
@pytest.mark.parametrize("name", ["franka", "ur10"])
def test_random_reachable_targets_trac_ik_protocol(robots, name):
    """TRAC-IK protocol (nominal seed, 1e-5 per axis) on 200 targets: >= 99 % succeed. The
    kinematic search on its own (no collision check: the budget stands for TRAC-IK's 5 ms;
    tests/test_ik_collision.py and bench/ik_collision.py measure the collision-free one)."""
    robot = robots[name]
    solver = IKSolver(
        robot,
        position_tolerance=TOL,
        orientation_tolerance=TOL,
        world=pinkctl.World(),
        self_collision=False,
    )
    rng = np.random.default_rng(1)
    nominal = solver.subset.middle(robot.q0)
    n, successes = 200, 0
    for i in range(n):
        target = _fk(robot, _random_q(robot, rng, solver), robot.tool_frame)
        result = solver.find(
            target, seed=nominal, time_budget_ms=None, max_iterations=ITERATION_BUDGET, rng=i
        )
        assert isinstance(result, IKResult)
        assert _within_limits(robot, solver, result.q_full)
        assert result.q.shape == (len(robot.controlled_joint_names),)
        assert result.joint_names == tuple(robot.controlled_joint_names)
        if result.success:
            successes += 1
            pos_err, rot_err = _pose_errors(_fk(robot, result.q_full, robot.tool_frame), target)
            assert pos_err <= TOL and rot_err <= TOL
            assert result.reason == "converged"
            assert result.position_error <= np.sqrt(3) * TOL
        assert result.iterations <= ITERATION_BUDGET
    assert successes >= 0.99 * n


def test_unreachable_target_reports_best_effort_and_mutates_nothing(robots):
    robot = robots["franka"]
    pin.framesForwardKinematics(robot.model, robot.data, robot.q0)
    pin.computeJointJacobians(robot.model, robot.data, robot.q0)
    before = _snapshot(robot)
    target = pin.SE3(np.eye(3), np.array([3.0, 0.0, 0.5]))  # far outside the workspace
    for result in (
        find_ik(robot, target, time_budget_ms=None, max_restarts=5, rng=0),
        local_ik(robot, target, max_iterations=50),
        local_ik(robot, target, max_iterations=20, method="qp"),
    ):
        assert not result.success
        assert result.q is not None and np.all(np.isfinite(result.q))
        assert result.position_error > 1.5  # the arm reaches about 0.85 m
        assert result.reason and result.reason != "converged"
        solver = IKSolver(robot)
        assert _within_limits(robot, solver, result.q_full)
        # The best effort points the arm at the target: closer than from the home pose.
        home_err = np.linalg.norm(
            _fk(robot, robot.q0, robot.tool_frame).translation - target.translation
        )
        assert result.position_error < home_err
    assert _same_snapshot(before, _snapshot(robot))
    assert not hasattr(robot.model, "tangent")  # pink decorated a copy, not the robot's model


def test_every_iterate_within_limits(robots):
    """Far targets from seeds at the limits: each iterate the method sees is inside."""

    class Recording(QPMethod):
        seen: list[np.ndarray] = []

        def step(self, J, e, cost, q):
            self.seen.append(q.copy())
            return super().step(J, e, cost, q)

    from pinkctl.ik.methods import LevenbergMarquardt

    class RecordingLM(LevenbergMarquardt):
        seen: list[np.ndarray] = []

        def step(self, J, e, cost, q):
            self.seen.append(q.copy())
            return super().step(J, e, cost, q)

    robot = robots["franka"]
    rng = np.random.default_rng(2)
    for method in (RecordingLM(), Recording()):
        solver = IKSolver(robot, method=method)
        for _ in range(3):
            target = _fk(robot, _random_q(robot, rng, solver), robot.tool_frame)
            seed = np.where(rng.random(7) < 0.5, solver.subset.lower, solver.subset.upper)
            result = solver.solve(target, seed=seed, max_iterations=40)
            assert _within_limits(robot, solver, result.q_full)
        assert len(method.seen) > 30
        assert all(_within_limits(robot, solver, q) for q in method.seen)


def test_seed_outside_limits_is_clamped(robots):
    robot = robots["ur10"]
    solver = IKSolver(robot)
    target = _fk(robot, robot.q0, robot.tool_frame)
    seed = solver.subset.upper + 1.0
    result = solver.solve(target, seed=seed, max_iterations=1)
    assert np.allclose(result.q, solver.subset.upper)


def test_validation_callback_is_respected(robots):
    """A callback rejecting half of joint 1's range never lets such a q through."""
    robot = robots["ur10"]
    solver = IKSolver(robot)
    middle = 0.5 * (solver.subset.lower[0] + solver.subset.upper[0])
    calls = []

    def upper_half(q: np.ndarray) -> bool:
        calls.append(q.copy())
        return bool(q[0] >= middle)

    rng = np.random.default_rng(3)
    successes = 0
    for i in range(12):
        target = _fk(robot, _random_q(robot, rng, solver), robot.tool_frame)
        result = solver.find(
            target, time_budget_ms=None, max_restarts=40, rng=i, validate=upper_half
        )
        if result.success:
            successes += 1
            assert result.q[0] >= middle
        else:
            seed_values = solver.subset.values(solver.subset.parse_seed(None, robot.q0))
            assert result.q[0] >= middle or np.array_equal(result.q, seed_values)
    assert successes >= 6
    assert calls  # the callback was consulted


def test_validation_rejecting_everything_fails_cleanly(robots):
    robot = robots["franka"]
    target = _fk(robot, robot.q0, robot.tool_frame)
    result = find_ik(robot, target, time_budget_ms=None, max_restarts=3, validate=lambda q: False)
    assert not result.success
    assert "rejected by validate" in result.reason
    assert np.array_equal(result.q_full, robot.q0)  # nothing valid: the seed comes back


def test_determinism_same_seed_same_answer(robots):
    robot = robots["franka"]
    solver = IKSolver(robot)
    rng = np.random.default_rng(4)
    nominal = solver.subset.middle(robot.q0)
    targets = [_fk(robot, _random_q(robot, rng, solver), robot.tool_frame) for _ in range(8)]
    kwargs = {"seed": nominal, "time_budget_ms": None, "max_restarts": 30}
    first = [solver.find(t, rng=7, **kwargs) for t in targets]
    again = [IKSolver(robot).find(t, rng=7, **kwargs) for t in targets]
    for a, b in zip(first, again):
        assert a.success == b.success
        assert np.array_equal(a.q, b.q)
        assert a.iterations == b.iterations and a.restarts == b.restarts
    assert any(r.restarts > 0 for r in first)  # the random starts were exercised


def test_closest_to_seed_selection(robots):
    robot = robots["ur10"]
    solver = IKSolver(robot)
    rng = np.random.default_rng(5)
    target = _fk(robot, _random_q(robot, rng, solver), robot.tool_frame)
    seed = solver.subset.middle(robot.q0)
    common = {
        "seed": seed,
        "time_budget_ms": None,
        "max_restarts": 60,
        "rng": 1,
        "max_solutions": 4,
    }
    closest = solver.find(target, closest_to_seed=True, **common)
    first = solver.find(target, closest_to_seed=False, **common)
    assert closest.success and first.success
    assert closest.solutions >= 2
    d_closest = solver.subset.distance(closest.q_full, seed)
    d_first = solver.subset.distance(first.q_full, seed)
    assert d_closest <= d_first + 1e-12


def test_metric_threshold_skips_starts_and_counts_them(robots):
    robot = robots["franka"]
    solver = IKSolver(robot)
    target = pin.SE3(np.eye(3), np.array([2.0, 0.0, 0.5]))  # unreachable: starts get skipped
    result = solver.find(target, time_budget_ms=None, max_restarts=20, metric_threshold=0.05)
    assert not result.success
    assert result.restarts == 20
    assert "skipped by metric_threshold" in result.reason


def test_batch_matches_serial_and_parallel(robots):
    robot = robots["ur10"]
    solver = IKSolver(robot)
    rng = np.random.default_rng(6)
    targets = [_fk(robot, _random_q(robot, rng, solver), robot.tool_frame) for _ in range(6)]
    opts = {"time_budget_ms": None, "max_restarts": 20, "rng": 3}
    serial = find_ik_batch(robot, targets, workers=1, **opts)
    parallel = find_ik_batch(robot, targets, workers=2, **opts)
    assert len(serial) == len(parallel) == len(targets)
    for a, b in zip(serial, parallel):
        assert a.success and b.success
        assert np.array_equal(a.q, b.q)
    local = find_ik_batch(
        robot, targets, search=False, seeds=[r.q for r in serial], max_iterations=5
    )
    assert all(r.success and r.iterations == 1 for r in local)


# ---------------------------------------------------------------------- local solves
@pytest.mark.parametrize("method", available_methods())
def test_every_method_converges_near_the_seed(robots, method):
    robot = robots["franka"]
    rng = np.random.default_rng(7)
    solver = IKSolver(
        robot,
        method=method,
        position_tolerance=1e-3 if method == "transpose" else TOL,
        orientation_tolerance=1e-3 if method == "transpose" else TOL,
    )
    for _ in range(3):
        q = _random_q(robot, rng, solver)
        target = _fk(robot, q, robot.tool_frame)
        seed = solver.subset.values(q) + rng.uniform(-0.05, 0.05, solver.subset.n)
        result = solver.solve(target, seed=seed, max_iterations=3000)
        assert result.success, (method, result.reason)
        assert result.method == method
        assert _within_limits(robot, solver, result.q_full)


def test_warm_started_tracking_converges_in_few_iterations(robots):
    robot = robots["franka"]
    solver = IKSolver(robot)
    start = _fk(robot, robot.q0, robot.tool_frame)
    seed = robot.q0
    for k in range(1, 40):
        angle = 2 * np.pi * k / 63  # 1 cm chords on a 10 cm circle
        offset = 0.1 * np.array([0.0, np.cos(angle) - 1.0, np.sin(angle)])
        result = solver.solve(pin.SE3(start.rotation, start.translation + offset), seed=seed)
        assert result.success and result.iterations <= 5
        seed = result.q_full


def test_joint_subset_keeps_other_joints_at_the_seed(robots):
    robot = robots["franka"]
    moved = robot.controlled_joint_names[:4]
    solver = IKSolver(robot, joint_names=moved, position_only=True)
    full = IKSolver(robot)
    rng = np.random.default_rng(8)
    q = robot.q0.copy()
    values = full.subset.values(q)
    values[:4] += rng.uniform(-0.3, 0.3, 4)
    full.subset.write(q, values)
    full.subset.clamp(q)
    target = _fk(robot, q, robot.tool_frame).translation
    result = solver.solve(target, seed=robot.q0, max_iterations=100)
    assert result.success
    assert result.joint_names == tuple(moved)
    assert np.array_equal(result.q_full[4:], robot.q0[4:])


def test_continuous_joint_uses_its_angle():
    robot = load_pink_robot(URDF_DIR / "continuous_arm.urdf")
    solver = IKSolver(robot, frame="tool", position_only=True)
    q = robot.q0.copy()
    solver.subset.write(q, np.array([2.5, 0.6, -0.8]))  # base angle beyond ±π/2
    target = _fk(robot, q, "tool").translation
    result = solver.find(target, time_budget_ms=None, max_restarts=20)
    assert result.success
    assert result.q.shape == (3,)
    c, s = result.q_full[0], result.q_full[1]
    assert np.isclose(c * c + s * s, 1.0)
    assert np.isclose(np.arctan2(s, c), result.q[0])
    assert np.linalg.norm(_fk(robot, result.q_full, "tool").translation - target) <= 2e-5


def test_several_frames_at_once(robots):
    robot = robots["franka"]
    solver = IKSolver(robot, position_only=True)
    rng = np.random.default_rng(9)
    q = _random_q(robot, rng, solver)
    targets = {
        "panda_link4": _fk(robot, q, "panda_link4").translation,
        robot.tool_frame: _fk(robot, q, robot.tool_frame).translation,
    }
    result = solver.find(targets, time_budget_ms=None, max_restarts=50)
    assert result.success
    for frame, position in targets.items():
        assert np.abs(_fk(robot, result.q_full, frame).translation - position).max() <= TOL


# ---------------------------------------------------------------------- SO-101 goal modes
def test_so101_position_only_reaches_within_1mm(robots):
    robot = robots["so101"]
    solver = IKSolver(robot, position_only=True, position_tolerance=1e-4)
    rng = np.random.default_rng(10)
    for i in range(20):
        position = _fk(robot, _random_q(robot, rng, solver), robot.tool_frame).translation
        result = solver.find(position, time_budget_ms=None, max_restarts=30, rng=i)
        assert result.success
        reached = _fk(robot, result.q_full, robot.tool_frame).translation
        assert np.linalg.norm(reached - position) <= 1e-3
        assert result.orientation_error == 0.0


def _top_down_targets(robot, solver, rng, n):
    """Positions the SO-101 reaches with its tool z axis straight down (found by a scan of
    wrist_flex, which tilts the tool in the arm's plane)."""
    data = robot.model.createData()
    fid = robot.model.getFrameId(robot.tool_frame)
    k = robot.controlled_joint_names.index("wrist_flex")
    lo, hi = solver.subset.lower[k], solver.subset.upper[k]
    out = []
    while len(out) < n:
        q = _random_q(robot, rng, solver)
        values = solver.subset.values(q)
        best = None
        grid = np.linspace(lo, hi, 401)
        for _ in range(3):  # coarse-to-fine scan
            tilts = []
            for w in grid:
                values[k] = w
                solver.subset.write(q, values)
                pin.framesForwardKinematics(robot.model, data, q)
                tilts.append(1.0 + data.oMf[fid].rotation[2, 2])  # 0 when z points down
            i = int(np.argmin(tilts))
            best = (tilts[i], grid[i])
            step = grid[1] - grid[0]
            grid = np.linspace(max(lo, grid[i] - step), min(hi, grid[i] + step), 201)
        if best[0] < 1e-10 and lo + 0.05 < best[1] < hi - 0.05:
            values[k] = best[1]
            solver.subset.write(q, values)
            if solver.collision is not None and not solver.collision.accepts(q):
                continue  # the jaw in the floor: no collision-free answer
            pin.framesForwardKinematics(robot.model, data, q)
            out.append(data.oMf[fid].translation.copy())
    return out


def test_so101_top_down_approach_axis(robots):
    robot = robots["so101"]
    solver = IKSolver(
        robot,
        approach_axis="z",
        approach_direction=(0, 0, -1),
        position_tolerance=1e-4,
        orientation_tolerance=1e-4,
    )
    rng = np.random.default_rng(11)
    for i, position in enumerate(_top_down_targets(robot, solver, rng, 10)):
        result = solver.find(position, time_budget_ms=None, max_restarts=50, rng=i)
        assert result.success
        reached = _fk(robot, result.q_full, robot.tool_frame)
        assert np.linalg.norm(reached.translation - position) <= 1e-3
        assert reached.rotation[2, 2] <= -np.cos(1e-3)  # tool z within 1 mrad of down
        assert result.orientation_error <= 1e-4


def test_point_offset_moves_the_controlled_point(robots):
    robot = robots["so101"]
    offset = np.array([0.0, 0.0, 0.02])  # 2 cm further along the tool axis
    solver = IKSolver(robot, position_only=True, point_offset=offset)
    rng = np.random.default_rng(12)
    q = _random_q(robot, rng, solver)
    target = _fk(robot, q, robot.tool_frame).act(offset)
    result = solver.find(target, time_budget_ms=None, max_restarts=30)
    assert result.success
    reached = _fk(robot, result.q_full, robot.tool_frame).act(offset)
    assert np.abs(reached - target).max() <= TOL


# ---------------------------------------------------------------------- target spellings
def test_target_spellings_agree(robots):
    robot = robots["franka"]
    solver = IKSolver(robot)
    pose = _fk(robot, robot.q0, robot.tool_frame)
    quat = pin.Quaternion(pose.rotation)
    wxyz = np.array([quat.w, quat.x, quat.y, quat.z])
    seed = solver.subset.values(robot.q0) + 0.05
    spellings = [
        pose,
        (pose.translation, wxyz),
        pose.homogeneous,
        np.concatenate([pose.translation, wxyz]),
    ]
    results = [solver.solve(t, seed=seed) for t in spellings]
    assert all(r.success for r in results)
    for r in results[1:]:
        assert np.allclose(r.q, results[0].q, atol=1e-8)
    assert results[0].positions == dict(zip(robot.controlled_joint_names, results[0].q))


# ---------------------------------------------------------------------- errors
def test_errors_name_the_argument(robots):
    robot = robots["franka"]
    pose = _fk(robot, robot.q0, robot.tool_frame)
    with pytest.raises(ValueError, match="frame"):
        local_ik(robot, pose, frame="no_such_frame")
    with pytest.raises(ValueError, match="method"):
        local_ik(robot, pose, method="newton_raphson_deluxe")
    with pytest.raises(ValueError, match="target"):
        local_ik(robot, pin.SE3(np.eye(3), np.array([np.nan, 0.0, 0.0])))
    with pytest.raises(ValueError, match="target"):
        local_ik(robot, (np.array([0.3, 0.0, np.inf]), np.array([1.0, 0.0, 0.0, 0.0])))
    with pytest.raises(ValueError, match="target"):
        local_ik(robot, np.array([0.3, 0.0, 0.5]))  # a bare position needs position_only
    with pytest.raises(ValueError, match="seed"):
        local_ik(robot, pose, seed=np.zeros(3))
    with pytest.raises(ValueError, match="seed"):
        local_ik(robot, pose, seed=np.full(7, np.nan))
    with pytest.raises(ValueError, match="joint_names"):
        local_ik(robot, pose, joint_names=["panda_joint1", "elbow_of_doom"])
    with pytest.raises(ValueError, match="position_tolerance"):
        local_ik(robot, pose, position_tolerance=-1.0)
    with pytest.raises(ValueError, match="max_iterations"):
        local_ik(robot, pose, max_iterations=0)
    with pytest.raises(ValueError, match="time_budget_ms"):
        find_ik(robot, pose, time_budget_ms=None, max_iterations=None)  # no budget at all
    with pytest.raises(ValueError, match="max_iterations: at most 10,000,000"):
        local_ik(robot, pose, max_iterations=10**15)  # a solve of years
    with pytest.raises(ValueError, match="max_iterations: at most"):
        find_ik(robot, pose, max_iterations=10**15)
    with pytest.raises(ValueError, match="max_restarts: at most"):
        find_ik(robot, pose, max_restarts=10**12)
    with pytest.raises(ValueError, match="max_solutions: at most"):
        find_ik(robot, pose, max_solutions=10**9)
    with pytest.raises(ValueError, match="target"):
        local_ik(robot, {"panda_link4": pose, "nope": pose})
    with pytest.raises(ValueError, match="approach_axis"):
        local_ik(robot, pose, approach_axis="w")
    with pytest.raises(ValueError, match="rng"):
        find_ik(robot, pose, rng="seven")
    with pytest.raises(ValueError, match="method_options"):
        make_method("dls", damping_factor=0.1)


def test_rejected_call_leaves_solver_usable(robots):
    robot = robots["franka"]
    solver = IKSolver(robot)
    pose = _fk(robot, robot.q0, robot.tool_frame)
    before = copy.deepcopy(solver.subset.values(robot.q0))
    with pytest.raises(ValueError):
        solver.solve(pin.SE3(np.eye(3), np.array([np.nan, 0.0, 0.0])))
    result = solver.solve(pose, seed=robot.q0)
    assert result.success and result.iterations == 1
    assert np.array_equal(solver.subset.values(robot.q0), before)


# ----------------------------------------------------------------- options and old names
def test_option_dataclasses_equal_keywords(robots) -> None:
    franka = robots["franka"]
    q = franka.q0.copy()
    q[:7] += 0.3
    target = _fk(franka, q, franka.tool_frame)
    search = SearchOptions(time_budget_ms=None, max_restarts=5, rng=1)
    by_object = find_ik(franka, target, options=IKOptions(method="dls"), search=search)
    by_keyword = find_ik(franka, target, method="dls", time_budget_ms=None, max_restarts=5, rng=1)
    np.testing.assert_array_equal(by_object.q, by_keyword.q)
    # a keyword overrides the object's field
    overridden = local_ik(franka, target, local=LocalOptions(max_iterations=1), max_iterations=80)
    assert overridden.iterations > 1


def test_unknown_option_names_the_closest(robots) -> None:
    robot = robots["franka"]
    with pytest.raises(InputError, match="time_budget_ms"):
        find_ik(robot, np.array([0.4, 0.0, 0.4]), position_only=True, time_budget=5)


def test_keyword_types_mirror_the_option_fields() -> None:
    """Issue 24: the entry points' ``**changes`` are typed (``Unpack`` of a TypedDict) with
    exactly the fields of the option dataclasses, so a type checker sees every option."""
    from pinkctl.ik import api, options, solver

    def fields(*classes: type) -> set[str]:
        return {f.name for cls in classes for f in dataclasses.fields(cls)}

    ik, local, search = options.IKOptions, options.LocalOptions, options.SearchOptions
    assert set(options.IKKeywords.__annotations__) == fields(ik)
    assert set(options.LocalKeywords.__annotations__) == fields(local)
    assert set(options.SearchKeywords.__annotations__) == fields(search)
    assert set(options.LocalIKKeywords.__optional_keys__) == fields(ik, local)
    assert set(options.FindIKKeywords.__optional_keys__) == fields(ik, search)
    for function in (api.local_ik, api.find_ik, solver.IKSolver.__init__):
        assert "Unpack[" in function.__annotations__["changes"]


def test_the_old_names_are_gone() -> None:
    """Issue 24: solve_ik / solve_ik_batch (renamed local_ik / find_ik_batch, apart from
    pink's solve_ik, one differential step) are removed, not aliased."""
    assert not hasattr(pinkctl, "solve_ik") and not hasattr(pinkctl, "solve_ik_batch")
    assert not hasattr(pinkctl.ik, "solve_ik") and not hasattr(pinkctl.ik, "solve_ik_batch")


@pytest.mark.parametrize(
    "position",
    [[0.2 + 1j, 0.0, 0.1], ["0.2", "0", "0.1"], None, [0.2, None, 0.1], [True, False, True]],
    ids=["complex", "strings", "None", "None-inside", "booleans"],
)
def test_batch_positions_must_be_real_numbers(robots, position):
    """Issue 23: find_ik_batch(position_only=True) used to accept strings (converted),
    complex numbers (imaginary part dropped) and None (said "values must be finite, got
    nan"); each is now refused naming the target."""
    from pinkctl.ik import find_ik_batch

    with pytest.raises(ValueError, match=r"targets\[1\]"):
        find_ik_batch(robots["franka"], [[0.4, 0.0, 0.4], position], position_only=True)
    with pytest.raises(ValueError, match="target"):
        local_ik(robots["franka"], (position, [1.0, 0.0, 0.0, 0.0]))
