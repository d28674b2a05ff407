"""The native IK loop (``pinkctl/_native/_ik.c``) gives the Python loop's answers.

Every comparison runs the same local solve twice, through :func:`pinkctl.ik.loop.run_local`
(the reference) and through :func:`pinkctl.ik.native.native_local`, from the same start:

- same outcome: success, iteration count and stop reason (converged, iterations, stalled,
  time, numerical);
- a converged configuration within 1e-9 of the reference (observed: 1e-14);
- a failed solve's best iterate within 1e-6 for the searches' short local solves (30
  iterations at most, abandoned after 5 without progress): when a solve does not converge,
  its iterations wander without contracting and the two paths' rounding differences
  (Pinocchio's forward kinematics and LAPACK's Cholesky against the kernel's own) grow from
  1e-16 to about 1e-9 (observed). A long failed solve (100 iterations stuck at the joint
  limits) wanders farther apart (1e-3 observed), so there only the failure itself is
  compared: same reason, same iteration count.

Whole queries (``IKSolver.solve`` and ``find``, restarts included) are compared against a
solver whose native loop is switched off.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl._native import NATIVE_ENVIRONMENT_VARIABLE
from pinkctl.ik import IKSolver
from pinkctl.ik import solver as solver_module
from pinkctl.ik.loop import run_local
from pinkctl.ik.native import NativeLocal, native_local

#: These tests compare the kernel with the Python path: with the kernel switched off
#: (``make test``'s second run) there is nothing to compare.
pytestmark = pytest.mark.skipif(
    os.environ.get("PINKCTL_NATIVE") == "0", reason="the native kernel is switched off"
)

SOLVED_TOL = 1e-9
FAILED_TOL = 1e-6


def _target(solver: IKSolver, rng: np.random.Generator, position_only: bool) -> object:
    robot = solver.robot
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, solver.subset.sample(rng, robot.q0))
    pose = data.oMf[robot.model.getFrameId(solver.frame)].copy()
    return pose.translation.copy() if position_only else pose


def _compare(solver: IKSolver, target: object, starts: list[np.ndarray], **budget: object) -> int:
    """Both loops from every start; returns how many converged."""
    residual = solver.residual(target)
    native = native_local(residual, solver.subset, solver.method)
    assert isinstance(native, NativeLocal)
    solved = 0
    for k, start in enumerate(starts):
        reference = run_local(residual, solver.subset, solver.method, start.copy(), **budget)
        e_reference = residual.e.copy()
        got = native(start.copy(), **budget)
        where = f"start {k}: {reference.reason} vs {got.reason}"
        assert (got.success, got.iterations, got.reason) == (
            reference.success,
            reference.iterations,
            reference.reason,
        ), where
        tol = SOLVED_TOL if reference.success else FAILED_TOL
        assert np.abs(got.q - reference.q).max() <= tol, where
        if reference.success:
            assert np.abs(residual.e - e_reference).max() <= SOLVED_TOL, where
            solved += 1
    return solved


@pytest.mark.parametrize(
    ("robot_name", "method", "position_only"),
    [
        ("franka", "lm", False),
        ("franka", "lm", True),
        ("ur10", "lm", False),
        ("ur10", "dls", False),
        ("so101", "lm", False),
        ("so101", "dls", True),
        ("kinova", "lm", False),  # continuous joints (cos, sin)
        ("xarm7", "dls", True),
    ],
)
def test_local_solves_match_the_python_loop(
    robot_name: str, method: str, position_only: bool
) -> None:
    robot = pinkctl.load_pink_supported_robot(robot_name)
    solver = IKSolver(robot, method=method, position_only=position_only)
    rng = np.random.default_rng(11)
    target = _target(solver, rng, position_only)
    starts = [solver.subset.sample(rng, robot.q0) for _ in range(60)]
    solved = _compare(solver, target, starts, max_iterations=30, stall_iterations=5)
    assert solved > 0  # both outcomes are exercised
    _compare(solver, target, starts[:20], max_iterations=40, max_step=0.05)


def test_budgets_and_stop_reasons_match() -> None:
    robot = pinkctl.load_pink_supported_robot("ur10")
    solver = IKSolver(robot)
    rng = np.random.default_rng(5)
    starts = [solver.subset.sample(rng, robot.q0) for _ in range(10)]
    far = pin.SE3(np.eye(3), np.array([3.0, 0.0, 0.5]))  # out of reach: the limits pin joints
    _compare(solver, far, starts, max_iterations=25)
    _compare(solver, far, starts, max_iterations=50, stall_iterations=3)
    _compare(solver, far, starts, max_iterations=1)
    _compare(solver, far, starts, max_iterations=50, deadline=0.0)  # already past: "time"
    nan_target = _target(solver, rng, False)
    residual = solver.residual(nan_target)
    native = native_local(residual, solver.subset, solver.method)
    assert native is not None
    q = starts[0].copy()
    q[0] = np.nan  # a non-finite error: "numerical" on the first evaluation, in both
    reference = run_local(residual, solver.subset, solver.method, q.copy(), max_iterations=5)
    got = native(q.copy(), max_iterations=5)
    assert (got.success, got.iterations, got.reason) == (False, 1, "numerical")
    assert (reference.success, reference.iterations, reference.reason) == (False, 1, "numerical")


def test_the_native_loop_applies_only_where_it_computes_the_same_thing() -> None:
    franka = pinkctl.load_pink_supported_robot("franka")
    target = pin.SE3(np.eye(3), np.array([0.4, 0.0, 0.4]))
    for options, native in (
        ({}, True),
        ({"method": "transpose"}, False),
        ({"method": "pinv_undamped"}, False),
        ({"method": "pinv"}, False),
        ({"approach_axis": "z"}, False),
        ({"point_offset": (0.0, 0.0, 0.05)}, False),
    ):
        solver = IKSolver(franka, **options)
        goal = target.translation.copy() if options.get("approach_axis") else target
        runner = native_local(solver.residual(goal), solver.subset, solver.method)
        assert (runner is not None) == native, options
    two = IKSolver(franka)
    both = {"panda_hand_tcp": target, "panda_link7": target}
    assert native_local(two.residual(both), two.subset, two.method) is None


def _twins(robot_name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[IKSolver, IKSolver]:
    """A solver using the native loop and one whose loop is the Python one."""
    robot = pinkctl.load_pink_supported_robot(robot_name)
    native = IKSolver(robot)
    native.solve(pin.SE3.Identity())  # builds (and keeps) its loop for single-frame targets
    assert native_local(native.residual(pin.SE3.Identity()), native.subset, native.method)
    monkeypatch.setattr(solver_module, "native_local", lambda *args: None)
    return native, IKSolver(robot)


@pytest.mark.parametrize("robot_name", ["franka", "kinova", "ur5"])
def test_whole_queries_match_with_the_kernel_off(
    robot_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    native, python = _twins(robot_name, monkeypatch)
    rng = np.random.default_rng(3)
    nominal = native.subset.middle(native.robot.q0)
    for k in range(25):
        target = _target(native, rng, False)
        a = native.find(target, seed=nominal, max_restarts=20, rng=k, time_budget_ms=None)
        b = python.find(target, seed=nominal, max_restarts=20, rng=k, time_budget_ms=None)
        assert (a.success, a.iterations, a.restarts, a.reason) == (
            b.success,
            b.iterations,
            b.restarts,
            b.reason,
        )
        gap = a.q_full - b.q_full
        if not b.success:  # the best iterate: equal costs a full turn apart tie by rounding
            gap = np.remainder(gap + np.pi, 2.0 * np.pi) - np.pi
        assert np.abs(gap).max() <= (SOLVED_TOL if b.success else FAILED_TOL)
        # warm-started tracking from that answer, 1 cm away
        step = pin.SE3(target.rotation, target.translation + np.array([0.0, 0.01, 0.0]))
        c = native.solve(step, seed=a.q_full)
        d = python.solve(step, seed=b.q_full)
        assert (c.success, c.iterations, c.reason) == (d.success, d.iterations, d.reason)
        if d.success:
            assert np.abs(c.q_full - d.q_full).max() <= SOLVED_TOL
            assert c.position_error == pytest.approx(d.position_error, abs=1e-12)


def test_switched_off_in_a_fresh_process() -> None:
    code = (
        "import pinkctl\n"
        "from pinkctl.ik import IKSolver\n"
        "from pinkctl.ik.native import native_local\n"
        "s = IKSolver(pinkctl.load_pink_supported_robot('so101'))\n"
        "import pinocchio as pin\n"
        "print(native_local(s.residual(pin.SE3.Identity()), s.subset, s.method))\n"
        "print(s.solve(pin.SE3.Identity()).reason != '')\n"
    )
    env = {**os.environ, NATIVE_ENVIRONMENT_VARIABLE: "0"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["None", "True"]


def test_rewound_generators_draw_what_fresh_ones_draw() -> None:
    from pinkctl.ik.search import SeededGenerators

    generators = SeededGenerators(capacity=2)
    for seed in (0, 5, 0, 7, 5, 0):  # reuse, and eviction past the capacity
        got = generators.factory(seed)().random(20)
        assert np.array_equal(got, np.random.default_rng(seed).random(20))
    robot = pinkctl.load_pink_supported_robot("ur5")
    solver = IKSolver(robot)
    far = pin.SE3(np.eye(3), np.array([3.0, 0.2, 0.3]))  # out of reach: every restart runs
    first = solver.find(far, max_restarts=30, time_budget_ms=None)
    again = solver.find(far, max_restarts=30, time_budget_ms=None)  # the rewound generator
    fresh = IKSolver(robot).find(far, max_restarts=30, time_budget_ms=None)
    for other in (again, fresh):
        assert (other.success, other.restarts, other.iterations) == (
            first.success,
            first.restarts,
            first.iterations,
        )
        assert np.array_equal(other.q_full, first.q_full)
