"""Batch IK over worker processes: robots travel as their source, answers do not depend on the
workers (a local pool, or a local Ray cluster started here with ``ray.init(num_cpus=2)``), a
raising target or a dying worker loses nothing, bad settings are refused."""

from __future__ import annotations

import dataclasses
import functools
import os
import pickle
import signal
import sys
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl import InputError, load_pink_robot, load_pink_supported_robot
from pinkctl.core.robot import RobotSource, supported_robots
from pinkctl.ik import Execution, IKSolver, find_ik_batch, sample_poses
from pinkctl.ik.job import Chain, PackedResults, PortableRobot, failed_result, portable_chain
from pinkctl.ik.rows import NativeRows
from pinkctl.ik.sampling import spawned_generators

URDF_DIR = Path(__file__).parent / "urdf"
#: Deterministic; 30 restarts: one of g1's targets needs 11 (its wrist pair keeps half its home
#: distance: answers closer are rejected and the search restarts).
BUDGET = {"time_budget_ms": None, "max_restarts": 30}


def _load(name: str) -> pinkctl.PinkRobot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_pink_supported_robot(name)


def _targets(robot: pinkctl.PinkRobot, count: int, seed: int = 1) -> list[pin.SE3]:
    """Poses of the tool frame at random configurations within the limits (reachable)."""
    return sample_poses(robot, count, rng=seed)


def _same_answers(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        x.success == y.success and np.array_equal(x.q_full, y.q_full) for x, y in zip(a, b)
    )


def _same_kinematics(a: pinkctl.PinkRobot, b: pinkctl.PinkRobot) -> None:
    """Same model size, frames at the same places at random configurations, same home."""
    assert a.model.nq == b.model.nq and a.model.nframes == b.model.nframes
    assert a.source is not None and a.source.matches(b.model)
    da, db = a.model.createData(), b.model.createData()
    subset, rng = IKSolver(a).subset, np.random.default_rng(0)
    for _ in range(3):
        q = subset.sample(rng, a.q0)
        pin.framesForwardKinematics(a.model, da, q)
        pin.framesForwardKinematics(b.model, db, q)
        for fa, fb in zip(da.oMf, db.oMf):
            np.testing.assert_array_equal(fa.homogeneous, fb.homogeneous)
    np.testing.assert_array_equal(a.q0, b.q0)
    assert (a.controlled_joint_names, a.tool_frame) == (b.controlled_joint_names, b.tool_frame)


# ----------------------------------------------------------------------------- sources
@pytest.mark.parametrize("name", supported_robots())
def test_catalog_robot_loads_again_identically_from_its_pickled_source(name: str) -> None:
    robot = _load(name)
    source = pickle.loads(pickle.dumps(robot.source))
    expected = {"build_collision_model": False}
    assert source == RobotSource(catalog=name, arguments=expected, digest=robot.source.digest)
    _same_kinematics(robot, source.load())


def test_file_robot_loads_again_from_any_working_directory(tmp_path, monkeypatch) -> None:
    config = {"urdf": str(Path("urdf") / "mimic_gripper.urdf")}  # relative to the cwd
    monkeypatch.chdir(URDF_DIR.parent)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_pink_robot(config=config, build_collision_model=True)
    monkeypatch.chdir(tmp_path)
    again = pickle.loads(pickle.dumps(robot.source)).load()
    _same_kinematics(robot, again)
    assert again.collision_model is not None


def test_portable_robot_keeps_changes_made_after_loading() -> None:
    robot = _load("ur10")
    robot.q0 = robot.q0 + 0.1
    robot.tool_frame = robot.model.frames[robot.model.nframes - 2].name
    again = pickle.loads(pickle.dumps(PortableRobot.of(robot))).load()
    _same_kinematics(robot, again)


def test_a_changed_description_is_refused_when_loaded_again(tmp_path) -> None:
    path = tmp_path / "arm.urdf"
    path.write_text((URDF_DIR / "continuous_arm.urdf").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_pink_robot(path)
    path.write_text(path.read_text().replace('xyz="0 0 0.1"', 'xyz="0 0 0.11"', 1))
    with pytest.raises(pinkctl.ConfigurationError, match="different model"):
        robot.source.load()


def test_results_and_targets_travel_exactly() -> None:
    robot = _load("ur10")
    solver = IKSolver(robot)
    targets = _targets(robot, 3)
    results = [solver.find(t, time_budget_ms=None, max_restarts=2) for t in targets]
    results.append(failed_result(solver, targets[0], None, "lost: test"))  # a failed one too
    again = pickle.loads(pickle.dumps(PackedResults.pack(results))).unpack()
    for a, b in zip(results, again, strict=True):
        for name in ("q", "q_full"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert {k: v for k, v in vars(a).items() if k not in ("q", "q_full")} == {
            k: v for k, v in vars(b).items() if k not in ("q", "q_full")
        }
    chain = Chain(indices=(0, 1), targets=(targets[0], {robot.tool_frame: targets[1]}))
    portable = portable_chain(chain)
    np.testing.assert_array_equal(portable.targets[0], targets[0].homogeneous)
    np.testing.assert_array_equal(portable.targets[1][robot.tool_frame], targets[1].homogeneous)
    same = [solver.find(t, time_budget_ms=None, max_restarts=2) for t in portable.targets[:1]]
    np.testing.assert_array_equal(same[0].q_full, results[0].q_full)


@pytest.mark.parametrize("entropy", [0, 7, 2**32 + 5, 2**127 + 3, 2**200 + 1])
def test_spawned_generators_draw_as_a_seed_sequence_per_target(entropy: int) -> None:
    # the chunk's generators equal default_rng(SeedSequence(entropy, spawn_key=(i,))) bit
    # for bit: states and draws, also for the largest 32-bit index and one beyond it
    indices = [0, 1, 2, 999, 123_456, 2**32 - 1, 5]
    longer = [3, 2**32]  # a spawn key of two words: each sequence made as numpy makes it
    for group in (indices, longer):
        for i, generator in zip(group, spawned_generators(entropy, group), strict=True):
            expected = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(i,)))
            assert generator.bit_generator.state == expected.bit_generator.state, i
            np.testing.assert_array_equal(generator.random(4), expected.random(4))
            draws = generator.integers(0, 2**40, 3)
            np.testing.assert_array_equal(draws, expected.integers(0, 2**40, 3))


# ----------------------------------------------------------------------------- pools
def test_every_robot_gives_the_same_answers_in_a_two_worker_pool() -> None:
    # fork: no interpreter start per robot; the robot still travels as its source
    for name in supported_robots():
        robot = _load(name)
        targets = _targets(robot, 3)
        serial = find_ik_batch(robot, targets, **BUDGET)
        pooled = find_ik_batch(robot, targets, workers=2, mp_context="fork", **BUDGET)
        assert all(r.success for r in serial), name
        assert _same_answers(serial, pooled), name


def test_franka_in_a_spawned_pool_gives_the_same_answers(capsys) -> None:
    robot = _load("franka")  # a mimic joint: pickling its Pinocchio model crashed the workers
    targets = _targets(robot, 8)
    serial = find_ik_batch(robot, targets, **BUDGET)
    pooled = find_ik_batch(robot, targets, workers=2, progress=True, **BUDGET)
    assert _same_answers(serial, pooled)
    # stderr is not a terminal here: a line per 10 %, the last one at the end
    assert capsys.readouterr().err.splitlines()[-1] == "IK targets: 100 % (8 / 8 targets)"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_target_whose_solve_raises_is_reported_in_its_result(monkeypatch, workers) -> None:
    robot = _load("ur10")
    targets = _targets(robot, 4)
    original = IKSolver.find

    def find(self, target, **kwargs):
        matrix = getattr(target, "homogeneous", target)  # workers get SE3 targets as arrays
        if np.array_equal(matrix, targets[2].homogeneous):
            raise RuntimeError("boom")
        return original(self, target, **kwargs)

    def row(self, k, *args):  # the row path of SE3 targets (pinkctl.ik.rows)
        if np.array_equal(self.poses[k], targets[2].homogeneous):
            raise RuntimeError("boom")
        return original_row(self, k, *args)

    original_row = NativeRows.find
    monkeypatch.setattr(IKSolver, "find", find)  # forked workers inherit the patch
    monkeypatch.setattr(NativeRows, "find", row)
    results = find_ik_batch(robot, targets, workers=workers, mp_context="fork", **BUDGET)
    assert [r.success for r in results] == [True, True, False, True]
    assert results[2].reason == "raised RuntimeError: boom"
    assert np.isfinite(results[2].position_error)  # measured at the seed


def _die_once(marker: str, parent: int, q: np.ndarray) -> bool:
    """A validate callback that kills the worker running it, once."""
    if os.getpid() != parent:
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return True
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def test_a_killed_pool_worker_loses_no_target(tmp_path) -> None:
    robot = _load("ur10")
    targets = _targets(robot, 12)
    validate = functools.partial(_die_once, str(tmp_path / "killed"), os.getpid())
    serial = find_ik_batch(robot, targets, validate=validate, **BUDGET)
    pooled = find_ik_batch(
        robot, targets, workers=2, validate=validate, mp_context="fork", **BUDGET
    )
    assert (tmp_path / "killed").exists()  # a worker did die
    assert _same_answers(serial, pooled)


def _die(parent: int, q: np.ndarray) -> bool:
    """A validate callback that kills the worker running it, every time."""
    if os.getpid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def test_chunks_of_a_worker_that_keeps_dying_are_reported_lost() -> None:
    robot = _load("ur10")
    targets = _targets(robot, 2)
    always = functools.partial(_die, os.getpid())
    results = find_ik_batch(
        robot, targets, workers=2, retries=1, validate=always, mp_context="fork", **BUDGET
    )
    assert [r.success for r in results] == [False, False]
    assert all("worker process died on each of 2 attempt(s)" in r.reason for r in results)


# ----------------------------------------------------------------------------- Ray
@pytest.mark.xdist_group("ray")
def test_every_robot_gives_the_same_answers_on_ray(ray_cluster) -> None:
    for name in supported_robots():
        robot = _load(name)
        targets = _targets(robot, 3)
        serial = find_ik_batch(robot, targets, **BUDGET)
        on_ray = find_ik_batch(robot, targets, backend="ray", workers=2, **BUDGET)
        assert all(r.success for r in serial), name
        assert _same_answers(serial, on_ray), name


@pytest.mark.xdist_group("ray")
def test_ray_and_the_local_pool_agree_for_the_same_rng(ray_cluster) -> None:
    robot = _load("franka")
    targets = _targets(robot, 10, seed=5)
    # a far seed: the first local solve often fails, so the random restarts (rng) matter
    seed = IKSolver(robot).subset.sample(np.random.default_rng(9), robot.q0)
    budget = {**BUDGET, "seed": seed, "rng": 1234}
    pooled = find_ik_batch(robot, targets, workers=2, mp_context="fork", **budget)
    on_ray = find_ik_batch(robot, targets, backend="ray", workers=2, **budget)
    assert sum(r.restarts > 0 for r in pooled) >= 2  # the random restarts were used
    assert _same_answers(pooled, on_ray)
    assert [r.restarts for r in pooled] == [r.restarts for r in on_ray]


@pytest.mark.xdist_group("ray")
def test_killing_a_ray_worker_loses_no_target(ray_cluster, tmp_path) -> None:
    robot = _load("ur10")
    targets = _targets(robot, 16)
    marker = tmp_path / "killed"
    validate = functools.partial(_die_once, str(marker), os.getpid())
    module = sys.modules[__name__]  # Ray workers cannot import this test module: send it
    ray_cluster.cloudpickle.register_pickle_by_value(module)
    try:
        serial = find_ik_batch(robot, targets, validate=validate, **BUDGET)
        on_ray = find_ik_batch(
            robot, targets, backend="ray", workers=2, validate=validate, **BUDGET
        )
    finally:
        ray_cluster.cloudpickle.unregister_pickle_by_value(module)
    assert marker.exists()  # a worker did die mid-batch
    assert _same_answers(serial, on_ray)


# ----------------------------------------------------------------------------- settings
@pytest.mark.parametrize(
    ("settings", "match"),
    [
        ({"backend": "dask"}, "backend"),
        ({"workers": 0}, "workers"),
        ({"retries": -1}, "retries"),
        ({"address": "auto"}, "address"),
        ({"workers": 2, "processes": 2}, "unknown IK option"),  # the old name is gone
        ({"workers": 2, "mp_context": "teleport"}, "mp_context"),
    ],
)
def test_bad_execution_settings_are_refused(settings, match) -> None:
    robot = _load("ur10")
    with pytest.raises(InputError, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        find_ik_batch(robot, _targets(robot, 2), **settings, **BUDGET)


def test_robots_workers_cannot_load_are_refused() -> None:
    robot = _load("ur10")
    targets = _targets(robot, 2)
    handmade = dataclasses.replace(robot, source=None)
    with pytest.raises(InputError, match="no source"):
        find_ik_batch(handmade, targets, workers=2, **BUDGET)
    model = pin.Model(robot.model)
    model.upperPositionLimit[0] = 1.0
    edited = dataclasses.replace(robot, model=model, data=model.createData())
    with pytest.raises(InputError, match="changed after loading"):
        find_ik_batch(edited, targets, workers=2, **BUDGET)
    assert find_ik_batch(edited, targets, **BUDGET)[0].success  # one process: fine
    with pytest.raises(InputError, match="module-level function"):
        find_ik_batch(robot, targets, workers=2, validate=lambda q: True, **BUDGET)


def test_execution_as_an_object_or_as_keywords() -> None:
    robot = _load("ur10")
    targets = _targets(robot, 4)
    pool = Execution(workers=2, mp_context="fork", progress=False)
    as_object = find_ik_batch(robot, targets, execution=pool, **BUDGET)
    overridden = find_ik_batch(robot, targets, execution=pool, workers=1, **BUDGET)
    assert _same_answers(as_object, overridden)
    with pytest.raises(InputError, match="unknown IK option"):
        find_ik_batch(robot, targets, worker=2, **BUDGET)


def test_ray_backend_without_ray_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    robot = _load("ur10")
    with pytest.raises(ImportError, match=r"pinkctl\[ray\]"):
        find_ik_batch(robot, _targets(robot, 2), backend="ray", workers=2, **BUDGET)
