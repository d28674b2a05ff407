"""The seed library (:mod:`pinkctl.ik.seeds`): its entries keep the margin and sit where their
poses say, it is the same for every solver, a search after a rejection starts from it (in the
kernel and on the Python path, with the same answers), and a changed world is screened."""

from __future__ import annotations

import os

import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl import World
from pinkctl.ik import IKSolver
from pinkctl.ik import seeds as seeds_module
from pinkctl.ik import solver as solver_module

native_only = pytest.mark.skipif(
    os.environ.get("PINKCTL_NATIVE") == "0", reason="the library needs the kernel's check"
)


@pytest.fixture(scope="module")
def franka() -> pinkctl.PinkRobot:
    return pinkctl.load_pink_supported_robot("franka")


def _targets(solver: IKSolver, count: int) -> list[pin.SE3]:
    """Tool poses of configurations that keep the margin (an answer exists for each)."""
    rng = np.random.default_rng(11)
    data = solver.model.createData()
    fid = solver.model.getFrameId(solver.frame)
    assert solver.collision is not None
    poses = []
    while len(poses) < count:
        q = solver.subset.sample(rng, solver.robot.q0)
        if solver.collision.accepts(q):
            pin.framesForwardKinematics(solver.model, data, q)
            poses.append(data.oMf[fid].copy())
    return poses


@native_only
def test_entries_keep_the_margin_at_their_poses(franka: pinkctl.PinkRobot) -> None:
    solver = IKSolver(franka)
    library = solver._seeds
    assert library.wanted and len(library.rows) == 0  # built on the first rejection only
    assert library.build() == seeds_module.LIBRARY_SIZE
    assert solver.collision is not None
    data = franka.model.createData()
    fid = franka.model.getFrameId(solver.frame)
    for q, pose in zip(library.rows[::16], library.poses[::16]):
        assert solver.collision.accepts(q)
        pin.framesForwardKinematics(franka.model, data, q)
        rotation = data.oMf[fid].rotation
        assert np.allclose(pose[:3], data.oMf[fid].translation)
        assert np.allclose(pose[3:], np.concatenate([rotation[:, 0], rotation[:, 2]]))
    again = IKSolver(franka)._seeds
    again.build()
    assert np.array_equal(again.rows, library.rows)  # a fixed generator seed
    assert not IKSolver(franka, world=World(), self_collision=False)._seeds.wanted


@native_only
def test_a_rejection_starts_from_the_library_with_the_same_answers(
    franka: pinkctl.PinkRobot, monkeypatch: pytest.MonkeyPatch
) -> None:
    native = IKSolver(franka)
    nominal = native.subset.middle(franka.q0)
    targets = _targets(native, 40)
    answers, used = [], 0
    for k, target in enumerate(targets):
        a = native.find(target, seed=nominal, rng=k)
        again = native.find(target, seed=nominal, rng=k)
        assert (a.iterations, a.success) == (again.iterations, again.success)
        assert np.array_equal(a.q_full, again.q_full)
        query = native._query[1]
        assert query is not None
        used += max(query._query.library_used, 0)
        answers.append(a)
    assert used > 0  # the kernel took library starts
    taken: list[np.ndarray] = []
    next_start = seeds_module.LibraryPicks.next

    def recorded(self: seeds_module.LibraryPicks, seed: np.ndarray) -> np.ndarray | None:
        start = next_start(self, seed)
        if start is not None:
            taken.append(start.copy())  # the local solve moves its start
        return start

    monkeypatch.setattr(seeds_module.LibraryPicks, "next", recorded)
    monkeypatch.setattr(solver_module, "native_local", lambda *args: None)
    python = IKSolver(franka)  # the Python search and loop
    for k, (target, a) in enumerate(zip(targets, answers)):
        b = python.find(target, seed=nominal, rng=k)
        assert (a.success, a.iterations, a.restarts) == (b.success, b.iterations, b.restarts)
        assert np.abs(a.q_full - b.q_full).max() <= 1e-9
    assert python.collision is not None
    assert taken and all(python.collision.accepts(q) for q in taken)


@native_only
@pytest.mark.parametrize("position_only", [False, True])
def test_the_kernel_picks_the_nearest_entries(
    franka: pinkctl.PinkRobot, position_only: bool
) -> None:
    """The kernel skips the runs of entries that cannot hold a nearer one: it picks the same
    entries, in the same order, as the pass over the whole library (SeedLibrary.order)."""
    solver = IKSolver(franka, position_only=position_only)
    library = solver._seeds
    library.build()
    starts = library.bucket_start
    assert starts[0] == 0 and starts[-1] == len(library.rows) and (np.diff(starts) >= 0).all()
    nominal = solver.subset.middle(franka.q0)
    compared = 0
    for k, target in enumerate(_targets(solver, 150)):
        goal = target.translation if position_only else target
        solver.find(goal, seed=nominal, rng=k)
        query = solver._query[1]
        assert query is not None
        s = query._query
        if s.library_used < 0:  # no rejection: the library was not asked
            continue
        rt = None if position_only else target.rotation.T
        nearest = library.order(target.translation, rt)
        assert np.array_equal(library.order_rows[: s.library_count], nearest)
        compared += 1
    assert compared >= 5


@native_only
def test_a_changed_world_is_screened_again(franka: pinkctl.PinkRobot) -> None:
    world = World.for_robot(franka)
    solver = IKSolver(franka, world=world)
    library = solver._seeds
    library.build()
    assert (library.state == 1).all()
    # a slab through much of the workspace: some entries no longer keep the margin
    world.add_box("slab", (2.0, 2.0, 0.1), (0.0, 0.0, 0.5))
    assert solver.collision is not None
    solver.collision.native_address()  # the check follows the world
    library.sync()
    assert (library.state == 0).all()
    kept = [library.keeps(e) for e in range(0, len(library.rows), 4)]
    assert not all(kept) and any(kept)
    for e, keeps in zip(range(0, len(library.rows), 4), kept):
        assert keeps == solver.collision.accepts(library.rows[e])
    # a search still answers, never from an entry inside the slab
    nominal = solver.subset.middle(franka.q0)
    for k, target in enumerate(_targets(solver, 10)):
        assert solver.find(target, seed=nominal, rng=k).success
