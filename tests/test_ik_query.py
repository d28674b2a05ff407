"""Whole IK queries in the native kernel (:mod:`pinkctl.ik.query`) answer as the Python path.

Each query runs on a solver whose whole-query kernel applies and on a twin whose native loop
is switched off (the Python reference): same success, iteration and restart counts, reason and
configuration (1e-9 when solved, 1e-6 for a failed search's best start, as in
``tests/test_native_ik.py``); bad targets and seeds raise the same errors.
"""

from __future__ import annotations

import os

import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl.errors import InputError
from pinkctl.ik import IKSolver, SearchOptions
from pinkctl.ik import solver as solver_module
from pinkctl.ik.checked import CheckedCache
from pinkctl.ik.query import NativeQuery

pytestmark = pytest.mark.skipif(
    os.environ.get("PINKCTL_NATIVE") == "0", reason="the native kernel is switched off"
)

SOLVED_TOL = 1e-9
FAILED_TOL = 1e-6


def _twins(
    robot_name: str, monkeypatch: pytest.MonkeyPatch, **options: object
) -> tuple[IKSolver, IKSolver]:
    robot = pinkctl.load_pink_supported_robot(robot_name)
    # the kinematic query: a colliding answer leaves the native query for the Python search
    options = {"self_collision": False, "world": pinkctl.World(), **options}
    native = IKSolver(robot, **options)
    assert isinstance(native._native_query(pin.SE3.Identity()), NativeQuery)
    monkeypatch.setattr(solver_module, "native_local", lambda *args: None)
    python = IKSolver(robot, **options)
    assert python._native_query(pin.SE3.Identity()) is None
    return native, python


def _same(a: pinkctl.ik.IKResult, b: pinkctl.ik.IKResult) -> None:
    assert (a.success, a.iterations, a.restarts, a.reason, a.solutions) == (
        b.success,
        b.iterations,
        b.restarts,
        b.reason,
        b.solutions,
    )
    assert np.abs(a.q_full - b.q_full).max() <= (SOLVED_TOL if b.success else FAILED_TOL)
    assert np.array_equal(a.joint_names, b.joint_names)
    if b.success:
        assert a.position_error == pytest.approx(b.position_error, abs=1e-12)
        assert a.orientation_error == pytest.approx(b.orientation_error, abs=1e-12)


def _pose(solver: IKSolver, rng: np.random.Generator) -> pin.SE3:
    data = solver.model.createData()
    pin.framesForwardKinematics(solver.model, data, solver.subset.sample(rng, solver.robot.q0))
    return data.oMf[solver.model.getFrameId(solver.frame)].copy()


@pytest.mark.parametrize(
    ("robot_name", "options"),
    [
        ("franka", {}),
        ("kinova", {}),  # continuous joints: (cos, sin) seeds normalised, starts written
        ("ur5", {"method": "dls"}),
        ("xarm7", {"position_only": True}),
    ],
)
def test_solves_and_searches_match_the_python_path(
    robot_name: str, options: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    native, python = _twins(robot_name, monkeypatch, **options)
    rng = np.random.default_rng(7)
    position_only = bool(options.get("position_only"))
    nominal = native.subset.middle(native.robot.q0)
    for k in range(12):
        pose = _pose(native, rng)
        target = pose.translation.copy() if position_only else pose
        budget = {"max_restarts": 40, "rng": k} if k % 3 else {}
        a = native.find(target, seed=nominal, **budget)
        b = python.find(target, seed=nominal, **budget)
        _same(a, b)
        # a generator (a batch's per-target one): drawn one start at a time, as in Python
        a_rng, b_rng = np.random.default_rng(k), np.random.default_rng(k)
        _same(
            native.find(target, seed=nominal, rng=a_rng),
            python.find(target, seed=nominal, rng=b_rng),
        )
        assert a_rng.bit_generator.state == b_rng.bit_generator.state  # the same draws used
        seed = native.subset.sample(rng, native.robot.q0)
        for local in ({}, {"max_iterations": 7}, {"stall_iterations": 2, "max_step": 0.05}):
            _same(
                native.solve(target, seed=seed, **local), python.solve(target, seed=seed, **local)
            )


def test_failed_searches_and_their_starts_match(monkeypatch: pytest.MonkeyPatch) -> None:
    native, python = _twins("ur5", monkeypatch)
    far = pin.SE3(np.eye(3), np.array([3.0, 0.2, 0.3]))  # out of reach: every restart runs
    # more restarts than the first batch of drawn starts (256): the cache grows
    for budget in (
        {"max_restarts": 400, "max_iterations": None},
        {"max_iterations": 50},
        {"max_restarts": 0},
    ):
        a, b = native.find(far, **budget), python.find(far, **budget)
        _same(a, b)
        assert not a.success
    assert native.find(far, max_restarts=400, max_iterations=None).restarts == 400
    a_rng, b_rng = np.random.default_rng(3), np.random.default_rng(3)
    _same(native.find(far, rng=a_rng), python.find(far, rng=b_rng))
    assert a_rng.bit_generator.state == b_rng.bit_generator.state
    assert not native.find(far, rng=None, max_restarts=3).success  # fresh entropy: runs
    a = native.find(far, time_budget_ms=1e-6, max_iterations=None)  # ends on the clock
    assert not a.success and a.reason.startswith("time budget")


def test_target_and_seed_spellings_give_the_same_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    native, python = _twins("kinova", monkeypatch)
    pose = _pose(native, np.random.default_rng(1))
    x, y, z, w = pin.Quaternion(pose.rotation).coeffs()
    seed_values = native.subset.values(native.subset.middle(native.robot.q0))
    reference = python.solve(pose, seed=seed_values)
    for target in (pose, pose.homogeneous, (pose.translation, (w, x, y, z))):
        for seed in (seed_values, list(seed_values), native.subset.middle(native.robot.q0)):
            got = native.solve(target, seed=seed)
            assert got.success == reference.success
            assert np.abs(got.q - reference.q).max() <= 1e-8


def test_bad_targets_and_seeds_raise_as_on_the_python_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    native, python = _twins("franka", monkeypatch)
    good = _pose(native, np.random.default_rng(2))
    nan_position = pin.SE3(good.rotation, np.array([np.nan, 0.0, 0.5]))
    skew = pin.SE3.Identity()
    skew.rotation = np.diag([1.0, 1.0, 1.2])
    reflection = pin.SE3.Identity()
    reflection.rotation = np.diag([1.0, 1.0, -1.0])
    nan_seed = native.robot.q0.copy()
    nan_seed[0] = np.nan
    cases = [
        (nan_position, None),
        (skew, None),
        (reflection, None),
        (good, nan_seed),
        (good, np.zeros(3)),
        (good, "seed"),
    ]
    for target, seed in cases:
        for query in (native.solve, native.find, python.solve, python.find):
            with pytest.raises(InputError) as caught:
                query(target, seed=seed)
            message = str(caught.value)
        assert message
    # a rejected query leaves the solver as it was
    assert native.solve(good).success == python.solve(good).success
    _same(native.find(good), python.find(good))


def test_other_options_take_the_python_path() -> None:
    robot = pinkctl.load_pink_supported_robot("franka")
    solver = IKSolver(robot)
    pose = _pose(solver, np.random.default_rng(3))
    calls = []
    result = solver.find(pose, validate=lambda q: calls.append(q) or True)
    assert result.success and calls  # the validation ran (in Python)
    assert solver.find(pose, rng=np.random.default_rng(0)).success
    assert solver.find(pose, max_solutions=2, max_restarts=5).solutions >= 1
    both = {solver.frame: pose, "panda_link7": pose}
    assert solver._native_query(both) is None


def test_a_generator_reuses_the_checked_search_only_for_the_same_objects() -> None:
    cache, rng, other = CheckedCache(), np.random.default_rng(0), np.random.default_rng(0)
    search, checked = first = cache.search(None, {"rng": rng, "max_restarts": 4})
    assert search.rng is rng and checked.generator is rng and checked.max_restarts == 4
    assert cache.search(None, {"max_restarts": 4, "rng": rng}) is first  # a loop's next call
    again = cache.search(None, {"rng": other, "max_restarts": 4})
    assert again is not first and again[1].generator is other and again[0].max_restarts == 4
    assert cache.search(None, {"rng": other, "max_restarts": 5})[1].max_restarts == 5
    assert cache.search(SearchOptions(), {"rng": other})[1].max_restarts is None
    weights = [1.0, 1.0, 1.0, 1.0]  # unhashable: checked on every call, so a change is seen
    assert cache.search(None, {"rng": rng, "metric": weights})[1].metric.tolist() == weights
    weights[0] = -1.0
    with pytest.raises(InputError, match="metric"):
        cache.search(None, {"rng": rng, "metric": weights})
