"""Strict task priorities: the lexicographic cascade, the null-space projection, CascadeQP
and ``PinkIKController(priority_levels=...)``.

The acceptance case: on the Franka, level 1 a tool pose and level 2 a posture far from it. The
level-1 residual with level 2 present equals the residual of level 1 alone (within 1e-6,
200 random cases), while the weighted sum of both degrades it; the position and velocity
limits hold at the solution of every level.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from pink import Configuration
from pink.barriers import PositionBarrier
from pink.limits import ConfigurationLimit, VelocityLimit
from pink.tasks import FrameTask, PostureTask

from pinkctl import JointState, PinkIKController, RobotState, SpatialState
from pinkctl.errors import InputError
from pinkctl.qp import CascadeQP, CompiledQP, QPProblem, QPSolveError, compile_cascade, compile_qp
from pinkctl.qp.cascade import (
    MIN_LEVEL_DAMPING,
    box_constraints,
    least_squares_form,
    lexicographic_solve,
    nullspace_solve,
    qpsolvers_solve,
)

DT = 0.01
CASES = 200
TOOL = "panda_hand_tcp"
ARM = np.arange(7)


@pytest.fixture
def franka(franka_robot):
    return franka_robot


def _objective(J: list[list[float]], r: list[float]) -> tuple[np.ndarray, np.ndarray]:
    J_, r_ = np.array(J), np.array(r)
    return J_.T @ J_, -J_.T @ r_


# ---------------------------------------------------------------------- the math on a toy


def test_cascade_keeps_level_one_and_gives_level_two_what_the_bounds_allow():
    # level 1: x0 + x1 = 1; level 2: x0 = 3; bound x1 >= -1 -> (2, -1)
    levels = [_objective([[1.0, 1.0]], [1.0]), _objective([[1.0, 0.0]], [3.0])]
    solution = lexicographic_solve(
        levels, box_constraints([-10, -1], [10, 10]), qpsolvers_solve, damping=0.0
    )
    np.testing.assert_allclose(solution.x, [2.0, -1.0], atol=1e-7)
    assert solution.failed_level is None and len(solution.levels) == 2
    np.testing.assert_allclose(solution.levels[0].sum(), 1.0, atol=1e-9)


def test_nullspace_projection_is_exact_only_without_active_bounds():
    least_squares = [(np.array([[1.0, 1.0]]), np.array([1.0])), (np.array([[1.0, 0.0]]), [3.0])]
    levels = [(J, np.asarray(r, dtype=float)) for J, r in least_squares]
    free = nullspace_solve(levels)
    np.testing.assert_allclose(free.x, [3.0, -2.0], atol=1e-12)  # the cascade without bounds
    clipped = nullspace_solve(levels, lb=np.array([-10.0, -1.0]), ub=np.array([10.0, 10.0]))
    np.testing.assert_allclose(clipped.x, [3.0, -1.0])  # the clip breaks level 1: sum is 2
    assert clipped.x.sum() != pytest.approx(1.0)


def test_nullspace_levels_use_the_given_step_rules():
    levels = [(np.array([[1.0, 0.0]]), np.array([2.0])), (np.eye(2), np.array([5.0, 7.0]))]
    half = nullspace_solve(levels, steps=[lambda J, r: 0.5 * np.linalg.pinv(J) @ r, None])
    np.testing.assert_allclose(half.levels[0], [1.0, 0.0])
    np.testing.assert_allclose(half.x, [1.0, 7.0])  # level 2 cannot touch x0
    with pytest.raises(InputError, match="steps"):
        nullspace_solve(levels, steps=[None])


def test_a_failing_lower_level_keeps_the_solution_above_it():
    calls = []

    def solve(problem: QPProblem) -> np.ndarray:
        calls.append(problem.A.shape[0])
        if len(calls) == 2:
            raise QPSolveError("degenerate", solver="test")
        return qpsolvers_solve(problem)

    levels = [_objective([[1.0, 1.0, 0.0]], [1.0]), _objective([[1.0, 0.0, 0.0]], [3.0])]
    levels.append(_objective([[0.0, 0.0, 1.0]], [4.0]))
    solution = lexicographic_solve(levels, box_constraints([-9] * 3, [9] * 3), solve, damping=0.0)
    assert solution.failed_level == 1
    assert calls == [0, 1]  # the third level is not tried
    np.testing.assert_array_equal(solution.x, solution.levels[0])
    with pytest.raises(QPSolveError):
        lexicographic_solve(
            levels, box_constraints([1, 0, 0], [0, 1, 1]), qpsolvers_solve, damping=0.0
        )


def test_least_squares_form_reproduces_the_objective():
    rng = np.random.default_rng(3)
    J = rng.normal(size=(2, 4))
    r = rng.normal(size=2)
    H, c = J.T @ J, -J.T @ r
    J2, r2 = least_squares_form(H, c)
    assert J2.shape == (2, 4)
    x = rng.normal(size=4)
    value = 0.5 * x @ H @ x + c @ x
    assert 0.5 * np.sum((J2 @ x - r2) ** 2) - 0.5 * r2 @ r2 == pytest.approx(value, abs=1e-12)
    with pytest.raises(InputError, match="levels"):
        lexicographic_solve([], box_constraints([0], [1]), qpsolvers_solve, damping=0.0)


def test_equality_rows_span_every_level_above_orthonormally():
    from pinkctl.qp.cascade import _extend_basis  # noqa: PLC0415

    rng = np.random.default_rng(5)
    n = 35
    jacobians = [rng.normal(size=(12, n)), rng.normal(size=(3, n)), rng.normal(size=(3, n))]
    jacobians[2][1] = jacobians[1][0] + jacobians[0][4]  # a row the levels above already hold
    jacobians.append(np.zeros((2, n)))  # an empty level adds nothing
    basis = np.zeros((0, n))
    for k, J in enumerate(jacobians):
        basis = _extend_basis(basis, J.T @ J, 1e-6)
        stacked = np.vstack(jacobians[: k + 1])
        rank = np.linalg.matrix_rank(stacked)
        assert basis.shape == (rank, n)
        assert np.allclose(basis @ basis.T, np.eye(rank), atol=1e-10)
        projector = basis.T @ basis  # the same row space as the stacked Jacobians
        assert np.allclose(stacked @ projector, stacked, atol=1e-9)
    assert basis.shape[0] == 12 + 3 + 2


# ---------------------------------------------------------------------- the Franka case


def _random_case(robot, rng, frame: FrameTask, posture: PostureTask) -> Configuration:
    model = robot.model
    lower, upper = model.lowerPositionLimit[:7], model.upperPositionLimit[:7]
    q = robot.q0.copy()
    q[:7] = lower + (upper - lower) * rng.uniform(0.05, 0.95, 7)
    configuration = Configuration(model, robot.data, q)
    tool = configuration.get_transform_frame_to_world(TOOL)
    offset = pin.SE3(pin.exp3(rng.normal(size=3) * 0.1), rng.normal(size=3) * 0.05)
    frame.set_target(tool * offset)
    far = robot.q0.copy()
    far[:7] = lower + (upper - lower) * rng.uniform(0.05, 0.95, 7)
    posture.set_target(far)
    return configuration


def test_level_one_is_strict_and_limits_hold_at_every_level(franka):
    model = franka.model
    frame = FrameTask(TOOL, position_cost=1.0, orientation_cost=1.0)
    posture = PostureTask(cost=0.1)
    limits = [ConfigurationLimit(model, config_limit_gain=0.5), VelocityLimit(model)]
    alone = compile_qp(model, ARM, tasks=[frame], limits=limits, damping=MIN_LEVEL_DAMPING)
    weighted = compile_qp(model, ARM, tasks=[frame, posture], limits=limits)
    cascade = compile_cascade(model, ARM, levels=[[frame], [posture]], limits=limits)
    bounds = compile_qp(model, ARM, tasks=[], limits=limits)
    rng = np.random.default_rng(17)
    strict, soft = [], []
    for _ in range(CASES):
        configuration = _random_case(franka, rng, frame, posture)
        x_alone = DT * alone.solve(configuration, DT)
        x_weighted = DT * weighted.solve(configuration, DT)
        x_cascade = DT * cascade.solve(configuration, DT)
        H, c = frame.compute_qp_objective(configuration)
        J, r = least_squares_form(H[:7, :7], c[:7])

        def residual(x: np.ndarray, J=J, r=r) -> float:
            return float(np.linalg.norm(J @ x - r))

        strict.append(abs(residual(x_cascade) - residual(x_alone)))
        soft.append(residual(x_weighted) - residual(x_alone))
        box = bounds.build(configuration, DT)
        solution = cascade.last_solution
        assert solution is not None and solution.failed_level is None
        for x in (*solution.levels, x_cascade):
            assert np.all(x >= box.lb - 1e-9) and np.all(x <= box.ub + 1e-9)
    assert max(strict) <= 1e-6
    assert np.median(soft) > 1e-4  # the soft combination measurably gives level 1 away
    assert min(soft) >= -1e-9


def test_nullspace_step_equals_cascade_when_no_bound_is_active(franka):
    model = franka.model
    frame = FrameTask(TOOL, position_cost=1.0, orientation_cost=1.0)
    posture = PostureTask(cost=0.1)
    limits = [ConfigurationLimit(model, config_limit_gain=0.5), VelocityLimit(model)]
    cascade = compile_cascade(model, ARM, levels=[[frame], [posture]], limits=limits)
    projection = compile_cascade(
        model, ARM, levels=[[frame], [posture]], limits=limits, method="nullspace"
    )
    assert (cascade.method, projection.method) == ("cascade", "nullspace")
    bounds = compile_qp(model, ARM, tasks=[], limits=limits)
    rng = np.random.default_rng(5)
    compared = 0
    for _ in range(20):
        configuration = _random_case(franka, rng, frame, posture)
        tool = configuration.get_transform_frame_to_world(TOOL)
        nudge = pin.SE3(pin.exp3(rng.normal(size=3) * 1e-3), rng.normal(size=3) * 5e-4)
        frame.set_target(tool * nudge)  # small steps: no bound active
        posture.set_target(configuration.q + rng.normal(size=model.nq) * 1e-3)
        x_cascade = DT * cascade.solve(configuration, DT)
        x_projection = DT * projection.solve(configuration, DT)
        box = bounds.build(configuration, DT)
        if np.all((x_cascade > box.lb + 1e-9) & (x_cascade < box.ub - 1e-9)):
            compared += 1
            np.testing.assert_allclose(x_projection, x_cascade, atol=1e-7)
    assert compared >= 10


def test_cascade_qp_holds_barrier_rows_at_every_level(franka):
    model = franka.model
    frame = FrameTask(TOOL, position_cost=1.0, orientation_cost=1.0)
    posture = PostureTask(cost=0.1)
    q = franka.q0.copy()
    configuration = Configuration(model, franka.data, q)
    tool = configuration.get_transform_frame_to_world(TOOL)
    frame.set_target(pin.SE3(tool.rotation, tool.translation + np.array([0.0, 0.0, 0.3])))
    posture.set_target(q)
    height = float(tool.translation[2]) + 0.002  # the tool may rise 2 mm only
    barrier = PositionBarrier(TOOL, indices=[2], p_max=np.array([height]), gain=1.0)
    limits = [ConfigurationLimit(model), VelocityLimit(model)]
    cascade = compile_cascade(
        model, ARM, levels=[[frame], [posture]], limits=limits, barriers=[barrier]
    )
    x = DT * cascade.solve(configuration, DT)
    rows = compile_qp(model, ARM, tasks=[], limits=limits, barriers=[barrier]).build(
        configuration, DT
    )
    assert rows.G.shape[0] >= 1
    solution = cascade.last_solution
    assert solution is not None
    for level_x in (*solution.levels, x):
        assert np.all(rows.G @ level_x <= rows.h + 1e-9)
    assert np.max(rows.G @ x - rows.h) > -1e-6  # the barrier is what stops the rise
    with pytest.raises(InputError, match="nullspace"):
        compile_cascade(model, ARM, levels=[[frame]], barriers=[barrier], method="nullspace")
    with pytest.raises(InputError, match="level"):
        compile_cascade(model, ARM, levels=[[]])
    with pytest.raises(InputError, match="method"):
        compile_cascade(model, ARM, levels=[[frame]], method="lexicographic")
    assert cascade.tasks == (frame, posture) and cascade.levels == ((frame,), (posture,))
    assert cascade.barriers == (barrier,) and cascade.limits == tuple(limits)
    assert cascade.solvers == ["box"] and not cascade.fused


# ---------------------------------------------------------------------- the controller


def _states(robot, q: np.ndarray, target: pin.SE3 | None):
    names = list(robot.joint_names)
    model = robot.model
    positions = np.array([q[model.joints[model.getJointId(n)].idx_q] for n in names])
    estimated = RobotState(joints=JointState.from_name(names, positions=(names, positions)))
    if target is None:
        return estimated, None
    quaternion = pin.Quaternion(target.rotation).coeffs()  # x, y, z, w
    sites = SpatialState.from_name(
        [TOOL],
        positions=([TOOL], target.translation.reshape(1, 3)),
        orientations=([TOOL], np.roll(quaternion, 1).reshape(1, 4)),
    )
    return estimated, RobotState(sites=sites)


def _track(robot, levels) -> float:
    """Final tool pose error [m, rad] after 150 ticks toward a target 8 cm away, with a posture
    task of cost 1 toward home (strictly below the pose with ``levels``, weighted without)."""
    names = list(robot.joint_names)
    controller = PinkIKController(
        robot, names, [TOOL], dt=DT, priority_levels=levels, posture_cost=1.0
    )
    assert isinstance(controller.qp_step, CascadeQP if levels else CompiledQP)
    q = robot.q0.copy()
    estimated, _ = _states(robot, q, None)
    assert controller.reset(estimated, None, 0.0)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    start = data.oMf[robot.model.getFrameId(TOOL)]
    target = pin.SE3(start.rotation, start.translation + np.array([0.05, -0.05, 0.03]))
    for k in range(150):
        estimated, setpoint = _states(robot, q, target)
        out = controller.forward(estimated, setpoint, k * DT)
        assert out is not None and out.joints is not None, controller.last_error
        q[:7] = out.joints.get_positions([f"panda_joint{i}" for i in range(1, 8)])
    pin.framesForwardKinematics(robot.model, data, q)
    error = data.oMf[robot.model.getFrameId(TOOL)].actInv(target)
    return float(np.linalg.norm(pin.log6(error).vector))


def test_controller_with_priority_levels_reaches_the_target(franka):
    assert _track(franka, [["frame"], ["posture"]]) < 1e-5
    assert _track(franka, None) > 1e-3  # the same tasks weighted: the posture pulls it away


def test_controller_priority_levels_are_checked(franka):
    names = list(franka.joint_names)
    extra = PostureTask(cost=1.0)

    def make(levels, **kwargs):
        return PinkIKController(franka, names, [TOOL], dt=DT, priority_levels=levels, **kwargs)

    for levels, message in [
        ([["frame"]], "leaves out"),
        ([["frame"], ["posture", "frame"]], "more than one"),
        ([["frame", "elbow"], ["posture"]], "unknown entry"),
        ([["frame"], []], "non-empty"),
        ("frame", "non-empty sequence"),
        ([["frame"], ["posture"], [extra]], "neither"),
    ]:
        with pytest.raises(InputError, match=message):
            make(levels)
    with pytest.raises(InputError, match="posture_cost"):
        make([["frame"], ["posture"]], posture_cost=0.0)
    with pytest.raises(InputError, match="qp_path"):
        make([["frame"], ["posture"]], qp_path="pink")
    with pytest.raises(InputError, match="priority_method"):
        make([["frame"], ["posture"]], priority_method="strict")
    controller = make([["frame"], [extra, "posture"]], extra_tasks=[extra])
    assert controller.qp_step.levels[1][0] is extra  # type: ignore[union-attr]
    with pytest.raises(InputError, match="qp_path"):
        controller.qp_path = "pink"
    assert isinstance(controller.qp_step, CascadeQP)  # unchanged


def test_cascade_bench_rows_time_every_variant_on_the_same_problem():
    root = Path(__file__).resolve().parents[1]
    if not (root / "bench" / "cascade_latency.py").is_file():  # e.g. tests run from an sdist
        pytest.skip("the bench/ scripts are not available")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    bench = importlib.import_module("bench.cascade_latency")
    rows = bench.run(20, warmup=5, chunk=10)
    assert [row["variant"] for row in rows] == ["single level", "cascade", "nullspace"]
    for row in rows:
        assert row["failures"] == 0 and row["steps"] == 20
        assert 0.0 < row["median_us"] <= row["p90_us"] <= row["p99_us"]
        assert row["max_tool_error_mm"] < 0.1
    assert rows[0]["ratio"] == 1.0
    assert "| cascade |" in bench.markdown(rows, "test machine")
