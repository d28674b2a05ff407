"""A batch of IK queries as a picklable job, and the function every worker runs on a chunk.

The job carries the robot as a :class:`PortableRobot` (how it was loaded, plus the plain
fields a user may have changed since), never as a Pinocchio model: each worker process loads
the robot once per job (:func:`solver_for`) and keeps its :class:`IKSolver` for every later
chunk of that job. :func:`solve_chunk` is the unit of work of every backend (this process, a
local process pool, Ray): it solves a few :class:`Chain` objects and never lets one target's
exception escape: the target gets a failed :class:`IKResult` saying what was raised.

Each target's random generator comes from the job's entropy and the target's index
(``SeedSequence(entropy, spawn_key=(index,))``), so answers do not depend on how the targets
were split into chunks, nor on which worker ran them.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.robot import PinkRobot, RobotSource
from ..errors import InputError
from .options import IKOptions, LocalOptions, SearchOptions
from .result import IKResult
from .solver import IKSolver
from .targets import IKTarget, SeedLike
from .transport import PackedResults

__all__ = [
    "BatchJob",
    "Chain",
    "PortableRobot",
    "TargetError",
    "entropy_of",
    "failed_result",
    "solve_chunk",
    "target_count",
]

#: Robot fields rebuilt by loading the robot again (everything else is copied as it is).
_LOADED = ("model", "data", "collision_model", "collision_data", "description", "source")
#: Solvers kept per worker process (one per job; old jobs are dropped first).
_CACHE_SIZE = 4
_solvers: OrderedDict[str, IKSolver] = OrderedDict()
_DEFAULT_SEARCH, _DEFAULT_LOCAL = SearchOptions(), LocalOptions()


class TargetError(Exception):
    """A target's solve raised (the exception is the ``__cause__``), in a strict run.

    Attributes:
        index: The target's index in the whole batch.
    """

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


def target_count(chunks: Sequence[Sequence[Chain]]) -> int:
    """The targets in ``chunks`` of chains (the steps of a batch's progress bar)."""
    return sum(len(chain.indices) for chunk in chunks for chain in chunk)


@dataclass(frozen=True)
class BatchJob:
    """Everything a worker needs besides the chains: robot, options and entropy.

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


def entropy_of(rng: int | None) -> int:
    """Integer entropy of per-target generators from ``rng`` (None: fresh entropy).

    Raises:
        InputError: ``rng`` is neither a non-negative integer nor None.
    """
    if rng is None:
        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise InputError(f"rng: expected a non-negative integer seed or None, got {rng!r}")
    return int(rng)


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
    out: list[IKResult] = []
    # the default budget as None: the solver's checked-options memo then hashes nothing
    search = isinstance(query, SearchOptions)
    options = None if query == (_DEFAULT_SEARCH if search else _DEFAULT_LOCAL) else query
    for chain in chains:
        seed: SeedLike = chain.seed
        for index, target in zip(chain.indices, chain.targets):
            t0 = time.perf_counter()
            try:
                if search:
                    rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(index,)))
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


def solve_chunk(job: BatchJob, chains: Sequence[Chain], *, strict: bool = False) -> PackedResults:
    """The unit of work of every backend: ``chains`` solved in the worker running this, the
    results packed for the way back (:class:`~pinkctl.ik.transport.PackedResults`); ``strict``
    as in :func:`run_chains`."""
    results = run_chains(solver_for(job), chains, job.query, job.entropy, strict=strict)
    return PackedResults.pack(results)
