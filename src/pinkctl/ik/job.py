"""A batch of IK queries as a picklable job, what travels, and what every worker runs.

The robot travels as a :class:`PortableRobot` (source and plain fields), loaded once per job
and worker (:func:`solver_for`). :func:`solve_chunk`, every backend's unit of work, gives a
target whose solve raised a failed :class:`IKResult` saying why. Target ``i`` draws from
``SeedSequence(entropy, spawn_key=(i,))`` (made for a whole chunk at once,
:func:`~pinkctl.ik.sampling.spawned_generators`): answers depend neither on the chunking nor
on the worker. Transport is exact and cheap: :class:`PackedTargets` (pose targets stacked,
solved row by row), :func:`portable_chain` (a ``pin.SE3`` as its (4, 4) matrix) and
:class:`PackedResults` (results stacked)."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot, RobotSource
from ..errors import InputError
from .options import IKOptions, LocalOptions, SearchOptions
from .result import IKResult
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
    triples = ((c.indices, c.targets, c.seed) for c in chains)
    return _run(solver, triples, [i for c in chains for i in c.indices], query, entropy, strict)


def solve_chunk(
    job: BatchJob, chunk: PackedTargets | Sequence[Chain], *, strict: bool = False
) -> PackedResults:
    """The unit of work of every backend: a chunk solved here (packed targets row by row,
    no object per target), its results packed; ``strict`` as in :func:`run_chains`."""
    chains: Iterable[tuple[Sequence[int], Sequence[IKTarget], SeedLike]]
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


@dataclass(frozen=True)
class PackedTargets:
    """Independent pose targets of one chunk as arrays (one row per target).

    Attributes:
        indices: ``(k,)`` each target's index in the whole batch.
        poses: ``(k, 4, 4)`` homogeneous transforms.
        seeds: ``(k, m)`` one seed per target, or None: every target's seed is ``seed``.
        seed: The shared seed (when ``seeds`` is None).
        se3: Whether the targets were ``pin.SE3`` poses (they are made so again: the same
            numbers, on the solver's fastest path).
    """

    indices: np.ndarray
    poses: np.ndarray
    seeds: np.ndarray | None
    seed: object
    se3: bool = False

    def rows(self, start: int, stop: int) -> PackedTargets:
        """Targets ``start`` to ``stop - 1`` (views: pickling copies only these rows)."""
        seeds = None if self.seeds is None else self.seeds[start:stop]
        return dataclasses.replace(
            self, indices=self.indices[start:stop], poses=self.poses[start:stop], seeds=seeds
        )


def pack_targets(
    targets: Sequence[IKTarget], seed: object, seeds: Sequence[object] | None
) -> PackedTargets | None:
    """A batch of independent targets as :class:`PackedTargets` (indices from 0), when each
    is a pose (``pin.SE3`` or a (4, 4) array) and the seeds are one object or arrays of one
    size; else None. One stacking for the whole batch, no object per target."""
    if not targets:
        return None
    se3 = set(map(type, targets)) == {pin.SE3}  # (a loop of isinstance costs more)
    if se3:
        poses = np.array([t.homogeneous for t in cast(list, targets)], dtype=np.float64)
    else:
        matrices = [t.homogeneous if isinstance(t, pin.SE3) else t for t in targets]
        if not all(isinstance(m, np.ndarray) and m.shape == (4, 4) for m in matrices):
            return None
        poses = np.array(matrices, dtype=np.float64)
    rows = None
    if seeds is not None:
        try:
            rows = np.array(seeds, dtype=np.float64)
        except (TypeError, ValueError):
            return None
        if rows.ndim != 2:
            return None
    indices = np.arange(len(targets), dtype=np.int64)
    return PackedTargets(indices, poses, rows, seed if seeds is None else None, se3)


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


@dataclass(frozen=True)
class PackedResults:
    """Results of one chunk as stacked arrays (one row per target, in order).

    Attributes:
        q, q_full: ``(n, dof)`` and ``(n, nq)`` configurations.
        errors: ``(n, 3)`` position error, orientation error, time [s].
        counts: ``(n, 4)`` success (0/1), iterations, restarts, solutions.
        reasons: Why each solve stopped.
        joint_names: The moved joints (shared by every result).
        method: The step method (shared by every result).
    """

    q: np.ndarray
    q_full: np.ndarray
    errors: np.ndarray
    counts: np.ndarray
    reasons: tuple[str, ...]
    joint_names: tuple[str, ...]
    method: str

    @classmethod
    def pack(cls, results: Sequence[IKResult]) -> PackedResults:
        """Stack ``results`` (at least one; every result of the same solver)."""
        return cls(
            q=np.array([r.q for r in results], dtype=np.float64),
            q_full=np.array([r.q_full for r in results], dtype=np.float64),
            errors=np.array(
                [(r.position_error, r.orientation_error, r.time_s) for r in results],
                dtype=np.float64,
            ),
            counts=np.array(
                [(r.success, r.iterations, r.restarts, r.solutions) for r in results],
                dtype=np.int64,
            ),
            reasons=tuple(r.reason for r in results),
            joint_names=results[0].joint_names,
            method=results[0].method,
        )

    def __len__(self) -> int:
        return len(self.reasons)

    def unpack(self) -> list[IKResult]:
        """The results, as :class:`~pinkctl.ik.IKResult` objects again (each ``q`` and
        ``q_full`` a row of this chunk's arrays: no copy per result)."""
        names, method = self.joint_names, self.method
        return [
            IKResult(q, names, q_full, bool(ok), p, o, it, re, t, reason, method, sol)
            for q, q_full, (p, o, t), (ok, it, re, sol), reason in zip(
                self.q, self.q_full, self.errors.tolist(), self.counts.tolist(), self.reasons
            )
        ]
