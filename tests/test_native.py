"""The native kernel gives the Python path's answers: the motion shaper bit for bit, the box
QP to rounding, a whole controller run to 1e-9; and the switch that turns it off works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable

import daqp
import numpy as np
import pytest

from pinkctl import load_pink_supported_robot
from pinkctl._native import NATIVE_ENVIRONMENT_VARIABLE, native_available
from pinkctl.motion import MotionLimits, MotionShaper
from pinkctl.qp.box_qp import NativeBoxQP
from pinkctl.qp.problem import DAQP_INFINITY, QPWorkspace

#: These tests compare the kernel with the Python path: with the kernel switched off
#: (``make test``'s second run) there is nothing to compare.
pytestmark = pytest.mark.skipif(
    os.environ.get("PINKCTL_NATIVE") == "0", reason="the native kernel is switched off"
)


def test_the_kernel_is_built_and_loaded() -> None:
    available, reason = native_available()
    assert available, f"the native kernel should be built by the install: {reason}"


# ---------------------------------------------------------------------------- shaper
def _limits(robot_name: str, *, use_jerk: bool = True) -> MotionLimits:
    return MotionLimits.from_robot(load_pink_supported_robot(robot_name), use_jerk=use_jerk)


def _twins(limits: MotionLimits, dt: float) -> tuple[MotionShaper, MotionShaper]:
    python, native = MotionShaper(limits, dt, native=False), MotionShaper(limits, dt, native=True)
    assert not python.native and native.native
    return python, native


def _same(a: MotionShaper, b: MotionShaper, where: str) -> None:
    assert np.array_equal(a.position, b.position), where
    assert np.array_equal(a.velocity, b.velocity), where
    assert a.loop_scale == b.loop_scale and a.scale == b.scale, where
    assert a.at_rest == b.at_rest, where


def _drive(a: MotionShaper, b: MotionShaper, rng: np.random.Generator, ticks: int) -> None:
    """Adversarial requests: every entry point, tiny to huge velocities, holds and reversals."""
    n = a.limits.num_joints
    for k in range(ticks):
        kind = rng.integers(5)
        wanted = rng.normal(size=n) * rng.choice([1e-4, 0.05, 1.0, 20.0, 1e3])
        if kind <= 1:
            holding, gain = bool(rng.integers(2)), float(rng.choice([1.0, 0.3, 0.0]))
            a.follow(wanted, holding=holding, gain=gain)
            b.follow(wanted, holding=holding, gain=gain)
        elif kind == 2:
            a.commit(wanted)
            b.commit(wanted)
        elif kind == 3:
            a.brake()
            b.brake()
        else:
            for x, y in zip(a.box(), b.box(), strict=True):
                assert np.array_equal(x, y), f"box, tick {k}"
        _same(a, b, f"tick {k}, kind {kind}")


@pytest.mark.parametrize(
    ("robot_name", "dt", "use_jerk"),
    [
        ("franka", 0.005, True),
        ("franka", 0.001, False),
        ("ur10", 0.002, True),
        ("so101", 0.01, True),
    ],
)
def test_shaper_is_bit_identical(robot_name: str, dt: float, use_jerk: bool) -> None:
    limits = _limits(robot_name, use_jerk=use_jerk)
    python, native = _twins(limits, dt)
    rng = np.random.default_rng(7)
    middle = 0.5 * (np.maximum(limits.lower, -3.0) + np.minimum(limits.upper, 3.0))
    python.reset(middle)
    native.reset(middle)
    _drive(python, native, rng, 3000)


def test_shaper_recovers_alike_from_outside_the_range() -> None:
    limits = _limits("franka")
    python, native = _twins(limits, 0.005)
    start = 0.5 * (limits.lower + limits.upper)
    start[3] = limits.upper[3] + 0.2  # outside its range: the recovery branch
    start[5] = limits.lower[5] - 0.1
    python.reset(start)
    native.reset(start)
    _drive(python, native, np.random.default_rng(3), 1000)


def test_native_true_without_the_kernel_is_refused_in_a_fresh_process() -> None:
    code = (
        "from pinkctl._native import native_available\n"
        "from pinkctl.motion import MotionLimits, MotionShaper\n"
        "from pinkctl import load_pink_supported_robot\n"
        "print(native_available())\n"
        "limits = MotionLimits.from_robot(load_pink_supported_robot('so101'))\n"
        "print(MotionShaper(limits, 0.01).native)\n"
        "try:\n"
        "    MotionShaper(limits, 0.01, native=True)\n"
        "except ValueError as exc:\n"
        "    print('refused:', exc)\n"
    )
    env = {**os.environ, NATIVE_ENVIRONMENT_VARIABLE: "0"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "switched off" in out
    assert "False" in out.splitlines()[1]
    assert "refused: native=True" in out


# ---------------------------------------------------------------------------- box QP
def _workspace(H: np.ndarray, c: np.ndarray, lb: np.ndarray, ub: np.ndarray) -> QPWorkspace:
    ws = QPWorkspace(c.size)
    ws.H[...] = H
    ws.c[...] = c
    ws.lb[...] = lb
    ws.ub[...] = ub
    return ws


def _daqp(ws: QPWorkspace) -> np.ndarray:
    x, _, exitflag, _ = daqp.solve(
        ws.H, ws.c, ws.daqp_matrix, ws.daqp_upper, ws.daqp_lower, ws.daqp_sense
    )
    assert exitflag == 1
    return np.clip(x, ws.lb, ws.ub)


def _kkt_residual(
    H: np.ndarray, c: np.ndarray, lb: np.ndarray, ub: np.ndarray, x: np.ndarray
) -> float:
    """Largest violation of the box QP's optimality conditions at ``x``: the gradient
    ``H x + c`` is zero on free variables, >= 0 at a lower bound, <= 0 at an upper one."""
    gradient = H @ x + c
    at_lower, at_upper = x <= lb, x >= ub
    violation = np.where(at_lower, np.maximum(-gradient, 0.0), np.abs(gradient))
    violation = np.where(at_upper, np.maximum(gradient, 0.0), violation)
    return float(np.where(at_lower & at_upper, 0.0, violation).max())


def _random_problem(
    rng: np.random.Generator, n: int, rows: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    R = rng.normal(size=(rows, n)) * rng.uniform(0.1, 2.0)
    H = R.T @ R + rng.choice([1e-6, 1e-3, 1.0]) * np.eye(n)
    c = rng.normal(size=n) * rng.choice([1e-3, 1.0, 100.0])
    width = rng.uniform(1e-3, 1.0, size=n)
    center = rng.normal(size=n) * 0.3
    lb, ub = center - width, center + width
    lb[rng.random(n) < 0.15] = -DAQP_INFINITY
    ub[rng.random(n) < 0.15] = DAQP_INFINITY
    fixed = rng.random(n) < 0.05
    ub[fixed] = lb[fixed] = np.where(np.isfinite(center[fixed]), center[fixed], 0.0)
    return H, c, lb, ub


@pytest.mark.parametrize("n", [1, 2, 7, 12, 30])
def test_box_qp_equals_daqp(n: int) -> None:
    rng = np.random.default_rng(n)
    solver = NativeBoxQP()
    solved = 0
    for _ in range(150):
        H, c, lb, ub = _random_problem(rng, n, rows=min(6, n) if rng.random() < 0.5 else n)
        ws = _workspace(H, c, lb, ub)
        x = solver.solve(ws)
        if x is None:  # cycling or a nearly singular Hessian: the caller uses DAQP
            continue
        solved += 1
        reference = _daqp(ws)
        assert np.all(x >= lb) and np.all(x <= ub)
        # the native answer meets the optimality conditions, and both reach the same optimum
        # up to what their residuals and the objective's round-off allow (x reaches 1e8 where
        # the Hessian's ridge is 1e-6: f is then -8e9, evaluated to within ~100)
        gradient_scale = 1.0 + np.abs(c).max() + np.abs(H @ x).max()
        residual, reference_residual = (_kkt_residual(H, c, lb, ub, v) for v in (x, reference))
        assert residual <= 1e-8 * gradient_scale
        f_native, f_reference = (float(0.5 * v @ H @ v + c @ v) for v in (x, reference))
        slack = (residual + reference_residual) * np.abs(x - reference).sum()
        size = np.abs(x)
        slack += 4 * n * np.finfo(float).eps * (0.5 * size @ np.abs(H) @ size + np.abs(c) @ size)
        assert f_native <= f_reference + 1e-9 * (1.0 + abs(f_reference)) + slack
        # the same minimiser as far as the residuals allow: a residual r moves a minimiser of a
        # strongly convex QP by at most |r| / lambda_min(H) (DAQP's 1e-11 residual is 4e-6 rad
        # at lambda_min 1e-6, more than a bound from H's condition number alone)
        lam_min = float(np.linalg.eigvalsh(H)[0])
        spread = np.sqrt(n) * (residual + reference_residual) / lam_min
        assert np.abs(x - reference).max() <= 1e-9 * (1.0 + np.abs(reference).max()) + spread
    assert solved >= 145  # the fallback is the exception


def test_box_qp_warm_start_follows_a_moving_problem() -> None:
    rng = np.random.default_rng(1)
    H, c, lb, ub = _random_problem(rng, 7, rows=6)
    ws = _workspace(H, c, lb, ub)
    solver = NativeBoxQP()
    for k in range(200):
        ws.c[...] = c + 0.5 * np.sin(0.05 * k + np.arange(7))
        x = solver.solve(ws)
        assert x is not None
        assert np.abs(x - _daqp(ws)).max() <= 1e-9


@pytest.mark.parametrize("case", ["empty box", "NaN bound", "singular Hessian"])
def test_box_qp_hands_hard_problems_back(case: str) -> None:
    n = 4
    H, c, lb, ub = np.eye(n), np.ones(n), -np.ones(n), np.ones(n)
    if case == "empty box":
        lb[2] = 2.0
    elif case == "NaN bound":
        ub[1] = np.nan
    else:
        H = np.zeros((n, n))
    assert NativeBoxQP().solve(_workspace(H, c, lb, ub)) is None


def test_box_qp_hands_a_negative_diagonal_back_even_at_a_bound() -> None:
    """A variable held at its bound by the warm start is not in the factorisation, whose
    pivots catch a non-positive diagonal of the free ones: the kernel checks every diagonal
    up front, and hands a non-convex problem to DAQP instead of dividing by it."""
    n = 4
    H, c, lb, ub = np.eye(n), np.array([0.0, 0.0, 5.0, 0.0]), -np.ones(n), np.ones(n)
    solver = NativeBoxQP()
    ws = _workspace(H, c, lb, ub)
    x = solver.solve(ws)
    assert x is not None and x[2] == -1.0  # held at its lower bound: warm state saved
    for diagonal in (-1.0, 0.0):
        ws.H[2, 2] = diagonal
        assert solver.solve(ws) is None


# ---------------------------------------------------------------------------- controller
_RUN = """
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from pinkctl import JointState, PinkIKController, RobotState, load_pink_supported_robot
from test_safety import fk_pose, pose_state
robot = load_pink_supported_robot("franka")
names = robot.joint_names
controller = PinkIKController(robot, names, [robot.tool_frame], dt=0.005)
q = np.array([robot.home_positions()[n] for n in names])
controller.reset(RobotState(joints=JointState.from_name(names, positions=(names, q))), None, 0.0)
p, o = fk_pose(robot, robot.q0, robot.tool_frame)
log = []
for k in range(400):
    goal = p + 0.1 * np.array([np.sin(0.02 * k), np.cos(0.02 * k) - 1.0, 0.0])
    estimate = RobotState(joints=JointState.from_name(names, positions=(names, q)))
    out = controller.forward(estimate, pose_state(robot.tool_frame, goal, o), 0.005 * k)
    q[out.joints.position_indices] = out.joints.positions
    log.append(out.joints.positions.tolist())
print(json.dumps({{"native": controller.shaper.native, "log": log}}))
"""


def _run_controller(native: str) -> Callable[[], dict]:
    tests = os.path.dirname(__file__)
    env = {**os.environ, NATIVE_ENVIRONMENT_VARIABLE: native}
    out = subprocess.run(
        [sys.executable, "-c", _RUN.format(tests=tests)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.splitlines()[-1])


def test_controller_runs_alike_with_and_without_the_kernel() -> None:
    native, python = _run_controller("1"), _run_controller("0")
    assert native["native"] and not python["native"]
    difference = np.abs(np.array(native["log"]) - np.array(python["log"])).max()
    assert difference <= 1e-9
