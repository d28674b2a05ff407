"""A batch of IK queries as a picklable job, what travels, and what every worker runs.

The robot travels as a :class:`PortableRobot` (source and plain fields), loaded once per job
and worker (:func:`solver_for`). :func:`solve_chunk`, every backend's unit of work, gives a
target whose solve raised a failed :class:`IKResult` saying why. Target ``i`` draws from
``SeedSequence(entropy, spawn_key=(i,))`` (made for a whole chunk at once,
:func:`~pinkctl.ik.sampling.spawned_generators`): answers depend neither on the chunking nor
on the worker. Transport is exact and cheap: :class:`PackedTargets` (pose targets stacked,
solved row by row), :func:`portable_chain` (a ``pin.SE3`` as its (4, 4) matrix) and
:class:`PackedResults` (results stacked), both in :mod:`pinkctl.ik.packed`. Independent
``pin.SE3`` targets under a global search are solved by :mod:`pinkctl.ik.rows`, in one
process as in a worker: the answers written straight into the chunk's arrays."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot, RobotSource
from ..errors import InputError
from .options import IKOptions, LocalOptions, SearchOptions
from .packed import PackedResults, PackedTargets, pack_targets
from .result import IKResult
from .rows import NativeRows
from .sampling import spawned_generators
from .solver import IKSolver
from .targets import IKTarget, SeedLike

__all__ = [
    "BatchJob",
    "Chain",
    "PackedResults",
    "PackedTargets",
    "PortableRobot",
    "TargetError",
    "failed_result",
    "pack_chunk",
    "pack_targets",
    "portable_chain",
    "run_chains",
    "solve_chunk",
]

#: Robot fields rebuilt by loading the robot again (everything else is copied as it is).
_LOADED = ("model", "data", "collision_model", "collision_data", "description", "source")
#: Solvers kept per worker process (one per job; old jobs are dropped first).
_CACHE_SIZE = 4
_solvers: OrderedDict[str, IKSolver] = OrderedDict()
_DEFAULT_SEARCH, _DEFAULT_LOCAL = SearchOptions(), LocalOptions()


class TargetError(Exception):
    """A target's solve raised (the exception is the ``__cause__``), in a strict run;
    ``index``: the target's index in the whole batch."""

    def __init__(self, index: int) -> None:
        super().__init__(f"targets[{index}]")
        self.index = index


@dataclass(frozen=True)
class PortableRobot:
    """A robot that can travel to another process: its source and its plain fields.

    Attributes:
        source: How to load the robot (:class:`~pinkctl.core.robot.RobotSource`).
        fields: The robot's other fields (home, joints, tool frame, limits, ...), as they are
            now, written over the loaded robot.
    """

    source: RobotSource
    fields: dict[str, Any]

    @classmethod
    def of(cls, robot: PinkRobot) -> PortableRobot:
        """The portable form of ``robot``.

        Raises:
            InputError: The robot has no source (built by hand), or its model was changed
                after loading (a worker would load a different one).
        """
        if robot.source is None:
            raise InputError(
                "robot: it has no source (robot.source), so worker processes cannot load it; "
                "load it with load_pink_robot or load_pink_supported_robot, or use workers=1"
            )
        if not robot.source.matches(robot.model):
            raise InputError(
                "robot: its Pinocchio model was changed after loading, so worker processes "
                "(which load it again from robot.source) would solve a different robot; "
                "use workers=1"
            )
        fields = {
            f.name: getattr(robot, f.name)
            for f in dataclasses.fields(robot)
            if f.name not in _LOADED
        }
        return cls(source=robot.source, fields=fields)

    def load(self) -> PinkRobot:
        """Load the robot and restore its plain fields."""
        robot = self.source.load()
        for name, value in self.fields.items():
            setattr(robot, name, value)
        return robot


@dataclass(frozen=True)
class Chain:
    """Targets solved in order, each one seeded with the last solution found in the chain
    (``seed`` until then). A batch of independent targets is chains of one target.

    Attributes:
        indices: Index of each target in the whole batch (keys its random generator).
        targets: The targets (any form :meth:`IKSolver.find` accepts).
        seed: Seed of the first target (and of the next ones until one succeeds).
    """

    indices: tuple[int, ...]
    targets: Sequence[IKTarget]
    seed: SeedLike = None


@dataclass(frozen=True)
class BatchJob:
    """Everything a worker needs besides the targets: robot, options and entropy.

    Attributes:
        robot: The robot, portable.
        solver_options: What each worker's :class:`IKSolver` is built from.
        query: Budget of each query: :class:`SearchOptions` (global search) or
            :class:`LocalOptions` (local solve).
        entropy: Entropy of the per-target random generators.
        key: Identifies the job in a worker's solver cache (unique per job).
    """

    robot: PortableRobot
    solver_options: IKOptions
    query: LocalOptions | SearchOptions
    entropy: int
    key: str = field(default_factory=lambda: uuid.uuid4().hex)


def solver_for(job: BatchJob) -> IKSolver:
    """This process's solver for ``job``: the robot is loaded on the job's first chunk."""
    solver = _solvers.get(job.key)
    if solver is None:
        solver = IKSolver(job.robot.load(), job.solver_options)
        _solvers[job.key] = solver
        while len(_solvers) > _CACHE_SIZE:
            _solvers.popitem(last=False)
    else:
        _solvers.move_to_end(job.key)
    return solver


def failed_result(solver: IKSolver, target: IKTarget, seed: SeedLike, reason: str) -> IKResult:
    """A failed result at the seed (errors measured there when the target allows it)."""
    q = solver.robot.q0.copy()
    position_error = orientation_error = float("nan")
    try:
        q = solver.subset.parse_seed(seed, solver.robot.q0, name="seed")
        residual = solver.residual(target)
        residual.evaluate(q)
        position_error, orientation_error = residual.errors()
    except Exception:  # the seed or target itself may be what failed
        pass
    return IKResult(
        q=solver.subset.values(q),
        joint_names=tuple(solver.subset.names),
        q_full=q,
        success=False,
        position_error=position_error,
        orientation_error=orientation_error,
        iterations=0,
        restarts=0,
        time_s=0.0,
        reason=reason,
        method=solver.method.name,
    )


def run_chains(
    solver: IKSolver,
    chains: Sequence[Chain],
    query: LocalOptions | SearchOptions,
    entropy: int,
    *,
    strict: bool = False,
) -> list[IKResult]:
    """Solve ``chains`` with ``solver``, results in order (chain after chain).

    A target whose solve raises gets a failed result naming the exception, or with
    ``strict`` stops the run: :class:`TargetError` with its index, raised from the exception.
    """
    if isinstance(query, SearchOptions) and chains and _se3_singles(chains):
        packed = pack_chunk(chains)
        if isinstance(packed, PackedTargets):  # the row path of a worker, here
            return _solve_rows(solver, packed, query, entropy, strict).unpack()
    triples = ((c.indices, c.targets, c.seed) for c in chains)
    return _run(solver, triples, [i for c in chains for i in c.indices], query, entropy, strict)


def _se3_singles(chains: Sequence[Chain]) -> bool:
    """Whether each chain is one ``pin.SE3`` target."""
    if not all(len(c.targets) == 1 for c in chains):
        return False
    return {type(c.targets[0]) for c in chains} == {pin.SE3}


def solve_chunk(
    job: BatchJob, chunk: PackedTargets | Sequence[Chain], *, strict: bool = False
) -> PackedResults:
    """The unit of work of every backend: a chunk solved here (packed targets row by row,
    no object per target), its results packed; ``strict`` as in :func:`run_chains`."""
    chains: Iterable[tuple[Sequence[int], Sequence[IKTarget], SeedLike]]
    if isinstance(chunk, PackedTargets) and chunk.se3 and isinstance(job.query, SearchOptions):
        return _solve_rows(solver_for(job), chunk, job.query, job.entropy, strict)
    if isinstance(chunk, PackedTargets):
        seeds = chunk.seeds if chunk.seeds is not None else [chunk.seed] * len(chunk.indices)
        poses = _se3_rows(chunk.poses) if chunk.se3 else chunk.poses
        flat = chunk.indices.tolist()
        chains = (((i,), (p,), s) for i, p, s in zip(flat, poses, seeds))  # lazy: one SE3
    else:
        flat = [i for c in chunk for i in c.indices]
        chains = ((c.indices, c.targets, c.seed) for c in chunk)
    results = _run(solver_for(job), chains, flat, job.query, job.entropy, strict)
    return PackedResults.pack(results)


def _solve_rows(
    solver: IKSolver, chunk: PackedTargets, query: SearchOptions, entropy: int, strict: bool
) -> PackedResults:
    """``pin.SE3`` targets' searches, row by row (:mod:`pinkctl.ik.rows`): each converged
    answer written by the kernel's query, any other by :meth:`IKSolver.find`; a raise as in
    :func:`_run`."""
    rows = NativeRows(solver, chunk)
    options = None if query == _DEFAULT_SEARCH else query
    flat = chunk.indices.tolist()
    rngs = spawned_generators(entropy, flat)
    for k, (index, seed, rng) in enumerate(zip(flat, chunk.seed_list(), rngs)):
        t0 = time.perf_counter()
        try:
            answer = rows.find(k, seed, options, rng)
            if answer is True:  # written into its row
                continue
            if answer is False:
                answer = solver.find(rows.pose(k), seed=seed, options=options, rng=rng)  # type: ignore[arg-type]
        except Exception as exc:  # one target's failure never loses the others
            if strict:
                raise TargetError(index) from exc
            reason = f"raised {type(exc).__name__}: {exc}"
            answer = dataclasses.replace(
                failed_result(solver, rows.pose(k), seed, reason), time_s=time.perf_counter() - t0
            )
        rows.put(k, answer)
    return rows.packed()


def _se3_rows(poses: np.ndarray) -> Iterator[pin.SE3]:
    """Each (4, 4) row as a ``pin.SE3`` with the same numbers: one object, set row by row
    (each target is solved before the next; a new SE3 per row costs several times more)."""
    pose = pin.SE3.Identity()
    rotations = np.ascontiguousarray(poses[:, :3, :3])
    for rotation, translation in zip(rotations, np.ascontiguousarray(poses[:, :3, 3])):
        pose.rotation = rotation
        pose.translation = translation
        yield pose


def _run(
    solver: IKSolver,
    chains: Iterable[tuple[Sequence[int], Sequence[IKTarget], SeedLike]],
    flat: Sequence[int],
    query: LocalOptions | SearchOptions,
    entropy: int,
    strict: bool,
) -> list[IKResult]:
    """:func:`run_chains` on ``(indices, targets, seed)`` triples (``flat``: every index)."""
    out: list[IKResult] = []  # options: the default budget as None (the memo hashes nothing)
    search = isinstance(query, SearchOptions)
    options = None if query == (_DEFAULT_SEARCH if search else _DEFAULT_LOCAL) else query
    rngs = spawned_generators(entropy, flat)  # target i's generator, made for the whole chunk
    for indices, targets, seed in chains:
        for index, target in zip(indices, targets):
            t0 = time.perf_counter()
            try:
                if search:
                    rng = next(rngs)
                    result = solver.find(target, seed=seed, options=options, rng=rng)  # type: ignore[arg-type]
                else:
                    result = solver.solve(target, seed=seed, options=options)  # type: ignore[arg-type]
            except Exception as exc:  # one target's failure never loses the others
                if strict:
                    raise TargetError(index) from exc
                result = dataclasses.replace(
                    failed_result(solver, target, seed, f"raised {type(exc).__name__}: {exc}"),
                    time_s=time.perf_counter() - t0,
                )
            out.append(result)
            if result.success:
                seed = result.q_full
    return out


def _portable(target: IKTarget) -> IKTarget:
    if isinstance(target, pin.SE3):
        return target.homogeneous
    return {f: _portable(t) for f, t in target.items()} if isinstance(target, Mapping) else target


def portable_chain(chain: Chain) -> Chain:
    """``chain`` with its ``pin.SE3`` targets (also in multi-frame mappings) as (4, 4) arrays."""
    return dataclasses.replace(chain, targets=tuple(_portable(t) for t in chain.targets))


def pack_chunk(chains: Sequence[Chain]) -> PackedTargets | list[Chain]:
    """``chains`` as :class:`PackedTargets` when each is one pose target (``pin.SE3`` or a
    (4, 4) array) with an array seed or the same seed object, else as portable chains."""
    if all(len(c.targets) == 1 for c in chains):
        first = chains[0].seed
        same = all(c.seed is first for c in chains)
        seeds = None if same else [c.seed for c in chains]
        packed = pack_targets([c.targets[0] for c in chains], first, seeds)
        if packed is not None:
            indices = np.array([c.indices[0] for c in chains], dtype=np.int64)
            return dataclasses.replace(packed, indices=indices)
    return [portable_chain(c) for c in chains]
