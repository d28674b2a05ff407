"""IKPool: answers equal one process's, workers stop with the pool, errors name their target,
a dead worker is replaced, bad arguments are refused. (Its speed is measured in
``bench/pool_efficiency.py``, never here.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings

import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl import InputError, WorkerError
from pinkctl.ik import IKPool, IKSolver, find_ik_batch, sample_poses
from pinkctl.reach import reachability_map

BUDGET = {"max_restarts": 10}


def _load(name: str) -> pinkctl.PinkRobot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pinkctl.load_pink_supported_robot(name)


@pytest.fixture(scope="module")
def franka() -> pinkctl.PinkRobot:
    return _load("franka")


@pytest.fixture(scope="module")
def pool(franka: pinkctl.PinkRobot):
    with IKPool(franka, workers=2) as running:
        yield running


def _same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (x.success, x.iterations, x.restarts, x.reason) == (
            y.success,
            y.iterations,
            y.restarts,
            y.reason,
        )
        assert np.array_equal(x.q_full, y.q_full)
        assert x.joint_names == y.joint_names


def test_answers_equal_one_process(franka: pinkctl.PinkRobot, pool: IKPool) -> None:
    targets = sample_poses(franka, 40, rng=3)
    _same(pool.find(targets, **BUDGET), find_ik_batch(franka, targets, **BUDGET))
    # per-target seeds, another rng, and the same answers from one solver's loop
    rng = np.random.default_rng(4)
    seeds = [pool.solver.subset.sample(rng, franka.q0) for _ in targets]
    got = pool.find(targets, seeds=seeds, rng=7, **BUDGET)
    _same(got, find_ik_batch(franka, targets, seeds=seeds, rng=7, **BUDGET))
    solver = IKSolver(franka)
    for i in (0, 17, 39):
        generator = np.random.default_rng(np.random.SeedSequence(7, spawn_key=(i,)))
        alone = solver.find(targets[i], seed=seeds[i], rng=generator, **BUDGET)
        _same([got[i]], [alone])
    # local solves, targets in other spellings, a position-only pool sharing nothing
    home = pool.solver.subset.values(franka.q0)
    matrices = [t.homogeneous for t in targets[:10]]
    _same(pool.solve(matrices, seed=home), find_ik_batch(franka, matrices, search=False, seed=home))
    assert pool.find([]) == []
    assert pool.cpu_seconds > 0.0
    assert len(pool.start_seconds) == 2 and all(s > 0.0 for s in pool.start_seconds)


def test_the_pool_runs_batches_and_maps(franka: pinkctl.PinkRobot, pool: IKPool) -> None:
    targets = sample_poses(franka, 12, rng=5)
    _same(
        find_ik_batch(franka, targets, pool=pool, **BUDGET),
        find_ik_batch(franka, targets, **BUDGET),
    )
    kwargs = {"resolution": 0.25, "orientations": None, "max_restarts": 1}
    pooled = reachability_map(franka, pool=pool, **kwargs)
    alone = reachability_map(franka, **kwargs)
    assert np.array_equal(pooled.reachable, alone.reachable)
    assert not pool.closed  # the caller's pool keeps running
    with pytest.raises(InputError, match="pool"):
        find_ik_batch(franka, targets, pool="pool")
    with pytest.raises(InputError, match="pool"):
        find_ik_batch(franka, targets, pool=pool, backend="ray")


def test_errors_in_workers_name_their_target(franka: pinkctl.PinkRobot, pool: IKPool) -> None:
    targets = sample_poses(franka, 6, rng=6)
    bad = [*targets[:4], "not a pose", targets[5]]
    with pytest.raises(InputError, match=r"^targets\[4\]: target: expected pin.SE3"):
        pool.find(bad)
    seeds = [None] * 6
    seeds[2] = {franka.controlled_joint_names[0]: None}  # float(None): a TypeError there
    with pytest.raises(WorkerError, match=r"^targets\[2\]: TypeError") as caught:
        pool.find(targets, seeds=seeds)
    assert caught.value.index == 2
    assert "Traceback" in caught.value.remote_traceback
    # the pool still answers afterwards
    _same(pool.find(targets, **BUDGET), find_ik_batch(franka, targets, **BUDGET))


def test_a_dead_worker_is_replaced(franka: pinkctl.PinkRobot) -> None:
    targets = sample_poses(franka, 10, rng=8)
    with IKPool(franka, workers=2) as pool:
        first = pool.find(targets, **BUDGET)
        worker = pool._workers._workers[0].process
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        _same(pool.find(targets, **BUDGET), first)


def test_requests_never_overfill_a_workers_pipe(franka, monkeypatch) -> None:
    """A worker reads its next request only when done with the last, so the pool sends one
    only if it fits beside those not yet answered (else it would block while the worker
    blocks writing a big reply): with pipes left at their smallest, chunks of 13 kB go one
    at a time, and the answers stay those of one process."""
    from pinkctl.ik import workers

    monkeypatch.setattr(workers, "PIPE_BYTES", 1)  # the system rounds up to one page
    fed = workers._Run.feed
    seen: list[tuple[int, int, int]] = []

    def checked_feed(run, worker) -> None:
        fed(run, worker)
        seen.append((len(worker.inflight), sum(worker.sent), worker.capacity))

    monkeypatch.setattr(workers._Run, "feed", checked_feed)
    targets = sample_poses(franka, 300, rng=15)
    rng = np.random.default_rng(16)
    seeds = [franka.q0 + 0.1 * rng.standard_normal(franka.model.nq) for _ in targets]
    with IKPool(franka, workers=2) as small:
        got = small.find(targets, seeds=seeds, **BUDGET)
    _same(got, find_ik_batch(franka, targets, seeds=seeds, **BUDGET))
    assert seen and all(n <= 1 or sent <= capacity for n, sent, capacity in seen)
    if sys.platform.startswith("linux"):  # pipes that can grow: one chunk was alone in flight
        assert min(capacity for _, _, capacity in seen) < 16384
        assert any(n == 1 and sent > capacity for n, sent, capacity in seen)


def test_the_context_manager_stops_the_workers(franka: pinkctl.PinkRobot) -> None:
    with IKPool(franka, workers=2) as pool:
        processes = [w.process for w in pool._workers._workers]
        assert pool.find(sample_poses(franka, 2, rng=9), **BUDGET)[0].success
    assert pool.closed
    assert all(p.poll() is not None for p in processes)
    with pytest.raises(WorkerError, match="closed"):
        pool.find(sample_poses(franka, 2, rng=9))
    pool.close()  # idempotent


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"workers": 0}, "workers"),
        ({"workers": 1.5}, "workers"),
        ({"workers": True}, "workers"),
        ({"retries": -1}, "retries"),
        ({"frame": "no_such_frame"}, "frame"),
        ({"max_restarts": 3}, "unknown IK option"),
    ],
)
def test_bad_pool_arguments_are_refused(franka: pinkctl.PinkRobot, kwargs, match) -> None:
    with pytest.raises(InputError, match=match):
        IKPool(franka, **kwargs)


def test_bad_query_arguments_are_refused(franka: pinkctl.PinkRobot, pool: IKPool) -> None:
    targets = sample_poses(franka, 3, rng=10)
    with pytest.raises(InputError, match="seeds"):
        pool.find(targets, seeds=[None])
    with pytest.raises(InputError, match="targets"):
        pool.find(pin.SE3.Identity())
    with pytest.raises(InputError, match="max_restarts"):
        pool.find(targets, max_restarts=-2)
    with pytest.raises(InputError, match="rng"):
        pool.find(targets, rng=-1)
    with pytest.raises(InputError, match="unknown IK option"):
        pool.solve(targets, max_restarts=2)
    with pytest.raises(InputError, match="validate"):
        pool.find(targets, validate=lambda q: True)  # not picklable: refused before any work


def test_a_robot_workers_cannot_load_is_refused() -> None:
    robot = _load("ur5")
    robot.source = None
    with pytest.raises(InputError, match="source"):
        IKPool(robot, workers=1)


def test_workers_import_only_what_a_solve_needs() -> None:
    # the worker is a script: its bootstrap, in a fresh interpreter
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "import importlib.util\n"
        "spec = importlib.util.find_spec('pinkctl')\n"
        "path = Path(spec.submodule_search_locations[0]) / 'ik' / 'pool_worker.py'\n"
        "namespace = {'__name__': 'boot'}\n"
        "exec(compile(path.read_text(), str(path), 'exec'), namespace)\n"
        "namespace['bare_package']('pinkctl')\n"
        "import pinkctl.ik.job\n"
        "heavy = ('mujoco', 'scipy', 'pink', 'pinkctl.sim', 'pinkctl.controllers', 'viser')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "from pinkctl import InputError\n"  # a callback's module: the __init__ on demand
        "print(InputError.__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["[]", "InputError"]


def test_batch_and_pool_keywords_are_typed() -> None:
    """Issue 27: ``find_ik_batch`` and ``IKPool`` type their ``**options`` with TypedDicts of
    exactly the option fields, so that a misspelt option is a type error."""
    import dataclasses

    from pinkctl.ik import batch, ikpool, options
    from pinkctl.ik.dispatch import Execution

    def fields(*classes: type) -> set[str]:
        return {f.name for cls in classes for f in dataclasses.fields(cls)}

    search = fields(options.SearchOptions) - {"rng"}  # rng: a parameter of its own
    assert set(options.SearchBudgetKeywords.__optional_keys__) == search
    assert set(batch.ExecutionKeywords.__optional_keys__) == fields(Execution)
    expected = fields(options.IKOptions, Execution) | search
    assert set(batch.BatchKeywords.__optional_keys__) == expected
    assert fields(options.LocalOptions) <= search  # search=False: a local solve's budget
    assert "Unpack[" in batch.find_ik_batch.__annotations__["options"]
    for method in (ikpool.IKPool.__init__, ikpool.IKPool.find, ikpool.IKPool.solve):
        assert "Unpack[" in method.__annotations__["changes"]


def test_answers_do_not_depend_on_workers_or_chunking(franka: pinkctl.PinkRobot, pool) -> None:
    """Issue 27: same answers, same order as one process's loop, whatever the number of
    workers, the chunks (guided sizes, several in flight per worker) and the seeds."""
    targets = sample_poses(franka, 150, rng=11)
    rng = np.random.default_rng(12)
    seeds = [pool.solver.subset.sample(rng, franka.q0) for _ in targets]
    solver = IKSolver(franka)
    alone = [
        solver.find(t, seed=s, rng=np.random.default_rng(np.random.SeedSequence(5, spawn_key=(i,))))
        for i, (t, s) in enumerate(zip(targets, seeds))
    ]
    _same(pool.find(targets, seeds=seeds, rng=5), alone)
    with IKPool(franka, workers=3) as three:
        _same(three.find(targets, seeds=seeds, rng=5), alone)
        # the same targets as (4, 4) arrays, and as (position, quaternion) pairs (not packed)
        matrices = [t.homogeneous for t in targets[:40]]
        _same(three.find(matrices, seeds=seeds[:40], rng=5), alone[:40])
        pairs = [
            (t.translation, pin.Quaternion(t.rotation).coeffs()[[3, 0, 1, 2]]) for t in targets[:20]
        ]
        got = three.find(pairs, seeds=seeds[:20], rng=5)
        assert [r.success for r in got] == [r.success for r in alone[:20]]
        assert three.cpu_seconds > 0.0
        assert len(three._workers.worker_cpu_seconds()) == 3


@pytest.mark.parametrize(("count", "workers"), [(1, 2), (10, 2), (150, 3), (5000, 2), (999, 8)])
def test_chunks_cover_the_batch_in_order_with_guided_sizes(count: int, workers: int) -> None:
    from pinkctl.ik.ikpool import MAX_CHUNK, MIN_CHUNK, chunk_bounds

    bounds = chunk_bounds([1] * count, workers)
    assert bounds[0][0] == 0 and bounds[-1][1] == count
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    sizes = [b - a for a, b in bounds]
    assert max(sizes) <= MAX_CHUNK and sizes == sorted(sizes, reverse=True)
    assert all(s >= min(MIN_CHUNK, -(-count // (2 * workers))) for s in sizes[:-1])
    if count >= 2 * workers:
        assert len(bounds) >= 2 * workers  # every worker gets work, and a next chunk queued
    # chains of several targets are never split
    chains = [3, 1, 5, 1, 1, 40, 2] * 20
    bounds = chunk_bounds(chains, workers)
    assert bounds[-1][1] == len(chains) and all(b > a for a, b in bounds)


def _die_once(q: np.ndarray) -> bool:
    """A validate callback whose worker kills itself on its first call (a marker file)."""
    marker = os.environ["PINKCTL_TEST_DIE_ONCE"]
    if not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def test_a_worker_that_dies_mid_batch_loses_no_target(franka, tmp_path, monkeypatch) -> None:
    """Its chunk in flight and the one queued behind it go to the fresh worker."""
    marker = tmp_path / "died"
    monkeypatch.setenv("PINKCTL_TEST_DIE_ONCE", str(marker))
    targets = sample_poses(franka, 120, rng=13)
    open(marker, "w").close()  # the warm-up (no validate) and the one-process answers
    alone = find_ik_batch(franka, targets, validate=_die_once, **BUDGET)
    marker.unlink()
    with IKPool(franka, workers=2) as pooled:
        assert len(pooled.start_seconds) == 2  # warm
        got = pooled.find(targets, validate=_die_once, **BUDGET)
    assert marker.exists()
    _same(got, alone)


def test_find_ik_batch_names_a_malformed_pose_among_many(franka: pinkctl.PinkRobot) -> None:
    """The stacked check of pin.SE3 targets reports what the per-target check would."""
    targets = sample_poses(franka, 30, rng=14)
    skewed = targets[7].rotation.copy()
    skewed[0, 0] = 2.0
    bad = [*targets[:7], pin.SE3(skewed, targets[7].translation), *targets[8:]]
    with pytest.raises(InputError, match=r"^targets\[7\]: target: rotation"):
        find_ik_batch(franka, bad)
    nan = [*targets[:9], pin.SE3(np.eye(3), np.array([np.nan, 0.0, 0.0])), *targets[10:]]
    with pytest.raises(InputError, match=r"^targets\[9\]: target: values must be finite"):
        find_ik_batch(franka, nan)
    with pytest.raises(InputError, match=r"^targets\[4\]: seed"):
        find_ik_batch(franka, targets, seeds=[None] * 4 + [np.full(7, np.nan)] + [None] * 25)
    # position goals: a pose's rotation is dropped, so it is not checked
    assert len(find_ik_batch(franka, bad, position_only=True, max_restarts=1)) == 30
