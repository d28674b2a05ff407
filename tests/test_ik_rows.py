"""The row path of pose batches (pinkctl.ik.rows): the same answers as one IKSolver.find call
per target, converged or not, when the kernel hands a query back, and for a target that
raises or that is malformed. (Its speed is measured in ``bench/pool_efficiency.py``.)"""

from __future__ import annotations

import dataclasses
import gc
import os
import warnings

import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl import InputError
from pinkctl.ik import IKPool, IKSolver, SearchOptions, find_ik_batch, sample_poses
from pinkctl.ik.job import BatchJob, Chain, PortableRobot, TargetError, run_chains, solve_chunk
from pinkctl.ik.packed import PackedResults, pack_targets
from pinkctl.ik.result import IKResult
from pinkctl.ik.rows import NativeRows

OPTIONS = SearchOptions(max_restarts=4)
#: Whether the kernel runs (``make test`` runs this file again without it: every row then
#: goes to IKSolver.find, with the same answers).
NATIVE = os.environ.get("PINKCTL_NATIVE") != "0"


@pytest.fixture(scope="module")
def franka() -> pinkctl.PinkRobot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pinkctl.load_pink_supported_robot("franka")


def _alone(solver: IKSolver, targets: list, seeds: list, entropy: int) -> list:
    """One :meth:`IKSolver.find` per target, each with its own generator."""
    return [
        solver.find(
            t,
            seed=s,
            options=OPTIONS,
            rng=np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(i,))),
        )
        for i, (t, s) in enumerate(zip(targets, seeds))
    ]


def _same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x.success, x.reason, x.iterations, x.restarts, x.solutions) == (
            y.success,
            y.reason,
            y.iterations,
            y.restarts,
            y.solutions,
        )
        assert (x.position_error, x.orientation_error) == (y.position_error, y.orientation_error)
        assert np.array_equal(x.q_full, y.q_full) and np.array_equal(x.q, y.q)
        assert x.joint_names == y.joint_names and x.method == y.method


def _targets(robot: pinkctl.PinkRobot) -> list[pin.SE3]:
    """Reachable poses, and two that are not (the search fails: its failed result)."""
    targets = sample_poses(robot, 12, rng=21)
    far = pin.SE3(targets[0].rotation, np.array([3.0, 0.0, 0.5]))
    return [*targets[:5], far, *targets[5:], far.copy()]


def _job(robot: pinkctl.PinkRobot, solver: IKSolver, entropy: int) -> BatchJob:
    return BatchJob(PortableRobot.of(robot), solver.options, OPTIONS, entropy)


@pytest.fixture
def answers(monkeypatch) -> list:
    """What each row's kernel search gave (True: written into its row)."""
    seen: list = []
    original = NativeRows.find

    def find(self, *args):
        seen.append(original(self, *args))
        return seen[-1]

    monkeypatch.setattr(NativeRows, "find", find)
    return seen


@pytest.mark.parametrize("per_target_seeds", [False, True])
def test_rows_give_one_find_per_targets_answers(franka, answers, per_target_seeds) -> None:
    solver = IKSolver(franka)
    targets = _targets(franka)
    rng = np.random.default_rng(5)
    if per_target_seeds:
        seeds = [solver.subset.sample(rng, franka.q0) for _ in targets]
    else:
        seeds = [solver.subset.values(franka.q0)] * len(targets)  # one object: parsed once
    expected = _alone(IKSolver(franka), targets, seeds, entropy=3)
    success = [r.success for r in expected]
    assert not success[5] and not success[13] and sum(success) >= 6  # converged and failed
    chains = [Chain((i,), (t,), s) for i, (t, s) in enumerate(zip(targets, seeds))]
    _same(run_chains(solver, chains, OPTIONS, 3), expected)  # this process
    if NATIVE:
        assert answers.count(True) == sum(success)  # the kernel wrote each converged row
        assert all(isinstance(a, IKResult) for a in answers if a is not True)  # failed ones
    else:
        assert answers == [False] * len(targets)
    packed = pack_targets(targets, seeds[0], seeds if per_target_seeds else None)
    assert packed is not None and packed.se3
    job = _job(franka, solver, 3)
    chunks = [solve_chunk(job, packed.rows(a, b)) for a, b in ((0, 5), (5, 14))]  # a worker
    _same([r for chunk in chunks for r in chunk.unpack()], expected)


@pytest.mark.skipif(not NATIVE, reason="the native kernel is switched off")
def test_a_query_the_kernel_hands_back_is_answered_by_find(franka, answers, monkeypatch) -> None:
    solver = IKSolver(franka)
    targets = _targets(franka)[:6]
    solver.find(targets[0])  # builds the default frame's residual and its kernel query
    query = solver._native_query(targets[0])
    assert query is not None
    kernel = query._lib

    class Refusing:  # the kernel refuses every query: find's Python search answers
        def __getattr__(self, name: str):
            return getattr(kernel, name)

        @staticmethod
        def ik_query(*args):
            return -4

    monkeypatch.setattr(query, "_lib", Refusing())
    seeds = [None] * len(targets)
    chains = [Chain((i,), (t,), None) for i, t in enumerate(targets)]
    _same(run_chains(solver, chains, OPTIONS, 8), _alone(solver, targets, seeds, entropy=8))
    assert answers == [False] * len(targets)  # each row left to IKSolver.find


def test_a_target_that_raises_fails_alone_or_stops_a_strict_run(franka) -> None:
    solver = IKSolver(franka)
    targets = _targets(franka)[:4]
    bad = pin.SE3(np.eye(3), np.array([np.nan, 0.0, 0.0]))  # refused by the kernel and find
    targets[2] = bad
    chains = [Chain((i,), (t,), None) for i, t in enumerate(targets)]
    results = run_chains(solver, chains, OPTIONS, 0)
    assert [r.success for r in results] == [True, True, False, True]
    assert results[2].reason.startswith("raised InputError: target: values must be finite")
    good = [targets[0] if i == 2 else t for i, t in enumerate(targets)]  # generators by index
    alone = _alone(solver, good, [None] * 4, 0)
    _same([results[k] for k in (0, 1, 3)], [alone[k] for k in (0, 1, 3)])
    with pytest.raises(TargetError) as caught:
        run_chains(solver, chains, OPTIONS, 0, strict=True)
    assert caught.value.index == 2 and isinstance(caught.value.__cause__, InputError)


def test_a_nan_pose_is_refused_at_the_boundary(franka) -> None:
    targets = sample_poses(franka, 6, rng=2)
    targets[4] = pin.SE3(np.eye(3), np.array([0.3, np.nan, 0.4]))
    with pytest.raises(InputError, match=r"^targets\[4\]"):
        find_ik_batch(franka, targets)
    with IKPool(franka, workers=1) as pool, pytest.raises(InputError, match=r"^targets\[4\]"):
        pool.find(targets)


def test_position_goals_read_no_rotation(franka, answers) -> None:
    solver = IKSolver(franka, position_only=True)
    targets = _targets(franka)
    chains = [Chain((i,), (t,), None) for i, t in enumerate(targets)]
    expected = _alone(IKSolver(franka, position_only=True), targets, [None] * 14, entropy=1)
    assert sum(r.success for r in expected) >= 10
    _same(run_chains(solver, chains, OPTIONS, 1), expected)
    assert answers.count(True) == (sum(r.success for r in expected) if NATIVE else 0)


def test_unpacked_results_are_the_constructors_and_independent() -> None:
    names = ("a", "b")
    built = [
        IKResult(
            np.array([0.1, 0.2]),
            names,
            np.array([0.1, 0.2, 7.0]),
            True,
            1e-5,
            2e-4,
            9,
            0,
            0.01,
            "converged",
            "lm",
            1,
        ),
        IKResult(
            np.array([0.3, 0.4]),
            names,
            np.array([0.3, 0.4, 7.0]),
            False,
            0.2,
            0.5,
            40,
            4,
            0.02,
            "budget",
            "lm",
            0,
        ),
    ]
    packed = PackedResults.pack(built)
    unpacked = packed.unpack()
    for x, y in zip(unpacked, built):
        assert type(x) is IKResult and x.__dict__.keys() == y.__dict__.keys()
        for key, value in y.__dict__.items():  # the same values, of the same types
            assert type(x.__dict__[key]) is type(value)
            assert np.array_equal(x.__dict__[key], value)
    # rows of one chunk's arrays, but no result sees another's values change
    unpacked[0].q[:] = -1.0
    unpacked[0].q_full[:] = -1.0
    assert np.array_equal(unpacked[1].q, [0.3, 0.4])
    assert np.array_equal(unpacked[1].q_full, [0.3, 0.4, 7.0])
    assert not np.shares_memory(unpacked[0].q, unpacked[1].q)
    # once a collection has passed, a result's fields are no object for the collector, even
    # with the names unpickled again (a fresh tuple, which the collector tracks)
    gc.collect()
    fresh = tuple(list(names))
    assert gc.is_tracked(fresh)
    again = dataclasses.replace(PackedResults.pack(built), joint_names=fresh).unpack()
    assert not any(gc.is_tracked(r.__dict__) for r in again)
    assert all(r.joint_names == names for r in again)
