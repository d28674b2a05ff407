"""A persistent pool of IK worker processes: :class:`IKPool`.

Many IK queries split over the cores of this machine, with workers kept across calls::

    with IKPool(robot, workers=2) as pool:
        results = pool.find(targets)          # one IKResult per target, in order
        more = pool.find(other_targets, seed=q_now)

The same pool also runs :func:`~pinkctl.ik.find_ik_batch` (``pool=``) and
:func:`~pinkctl.reach.reachability_map` (``pool=``). What it is built for:

- **workers that start fast and stay**: each is a fresh interpreter running
  :mod:`pinkctl.ik.pool_worker`, which imports Pinocchio, numpy and pinkctl's IK only (not
  the caller's script, not the controllers, simulation or viewers); it loads the robot from
  its source once and keeps its solver for every later call with the same robot and options;
- **cheap transport**: a chunk's pose targets travel as one ``(k, 4, 4)`` array (plus seeds)
  and its results as a few stacked arrays (:mod:`pinkctl.ik.job`);
- **the same answers as one process**: target ``i``'s restarts are drawn from
  ``SeedSequence(rng, spawn_key=(i,))`` as in :func:`~pinkctl.ik.find_ik_batch`, whatever the
  worker or the chunking;
- **errors with their target**: a target whose solve raises stops the call with a
  :class:`~pinkctl.errors.WorkerError` naming its index (an :class:`~pinkctl.errors.InputError`
  for a malformed target or seed); a worker that dies is replaced and its chunk run again
  (``retries`` times).
"""

from __future__ import annotations

import hashlib
import math
import pickle
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import InputError
from .checked import checked_local, checked_search, positive_int
from .job import BatchJob, Chain, PackedTargets, PortableRobot, pack_chunk
from .options import IKOptions, LocalOptions, SearchOptions, split_options
from .packed import packing
from .result import IKResult
from .solver import IKSolver
from .targets import IKTarget, SeedLike
from .workers import Chunk, WorkerSet

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import IKKeywords, LocalKeywords, SearchBudgetKeywords

__all__ = ["MAX_CHUNK", "MIN_CHUNK", "SHARE", "IKPool", "chunk_bounds", "entropy_of", "pickled"]

#: Targets per chunk at most (a chunk is one request to one worker).
MAX_CHUNK = 512
#: Targets per chunk at least (the last chunks of a batch), unless fewer are left.
MIN_CHUNK = 16
#: A chunk is about ``1 / SHARE`` of each worker's share of the targets left.
SHARE = 2


class IKPool:
    """Worker processes that solve IK for one robot, kept until :meth:`close`.

    Args:
        robot: The robot; it must come from :func:`~pinkctl.load_pink_robot` or
            :func:`~pinkctl.load_pink_supported_robot` (workers load it again from
            ``robot.source``).
        workers: Worker processes (at least 1).
        options: What the workers' solvers are built from (:class:`~pinkctl.ik.IKOptions`).
        retries: Times the chunk of a worker that died is run again.
        **changes: :class:`~pinkctl.ik.IKOptions` fields (``frame="tool"``).

    Raises:
        InputError: Bad ``workers``, ``retries`` or options; a robot workers cannot load.

    The workers start here, in the background, and warm up (each loads the robot, builds its
    solver and solves one target); the first call waits for them. :attr:`start_seconds` says
    how long each took. One call at a time (a pool is not shared between threads); POSIX
    systems (the workers' pipes are passed as file descriptors).
    """

    def __init__(
        self,
        robot: PinkRobot,
        *,
        workers: int = 2,
        options: IKOptions | None = None,
        retries: int = 1,
        **changes: Unpack[IKKeywords],
    ) -> None:
        count = positive_int(workers, "workers", allow_none=False)
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise InputError(f"retries: expected a non-negative integer, got {retries!r}")
        self.solver = IKSolver(robot, options, **changes)  # checks the options here
        self.robot = robot
        self._portable = PortableRobot.of(robot)
        self._key = job_key(self._portable, self.solver.options)
        self.retries = retries
        assert count is not None
        warm = (pickled(self.job(SearchOptions(), 0)), pickle.dumps(_home(self)))
        self._workers = WorkerSet(count, warm=warm)

    # ------------------------------------------------------------------ life cycle
    @property
    def workers(self) -> int:
        """Worker processes."""
        return self._workers.count

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._workers.closed

    @property
    def start_seconds(self) -> list[float]:
        """Seconds from each worker's launch to warm: imported, robot loaded, one target
        solved (waits for them)."""
        return self._workers.start_seconds()

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of the workers since they were warm: everything they did (solves,
        unpickling, packing), as each reports its process time with its replies."""
        return self._workers.cpu_seconds

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        self._workers.close()

    def __enter__(self) -> IKPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        workers = getattr(self, "_workers", None)
        if workers is not None:
            workers.close()

    # ------------------------------------------------------------------ queries
    def find(
        self,
        targets: Sequence[IKTarget],
        *,
        seed: SeedLike = None,
        seeds: Sequence[SeedLike] | None = None,
        rng: int | None = 0,
        options: SearchOptions | None = None,
        **changes: Unpack[SearchBudgetKeywords],
    ) -> list[IKResult]:
        """Global IK for every target (:meth:`IKSolver.find`), results in order.

        Args:
            targets: One target per query (any form :func:`~pinkctl.ik.find_ik` accepts).
            seed: Seed of every query; ``seeds``: one per target (overrides ``seed``).
            rng: Entropy of the per-target generators (target ``i`` draws from
                ``SeedSequence(rng, spawn_key=(i,))``; None: fresh entropy).
            options: Budget and rules of each search (:class:`~pinkctl.ik.SearchOptions`);
                a ``validate`` callback must be a module-level function (it is pickled).
            **changes: :class:`~pinkctl.ik.SearchOptions` fields.

        Raises:
            InputError: Bad arguments, or a malformed target or seed (``targets[i]: ...``).
            WorkerError: A target's solve raised (``targets[i]: ...``), or a worker kept dying.
        """
        (search,) = split_options(changes, options if options is not None else SearchOptions())
        checked_search(search)
        return self._run(targets, seed, seeds, search, entropy_of(rng))

    def solve(
        self,
        targets: Sequence[IKTarget],
        *,
        seed: SeedLike = None,
        seeds: Sequence[SeedLike] | None = None,
        options: LocalOptions | None = None,
        **changes: Unpack[LocalKeywords],
    ) -> list[IKResult]:
        """Local IK for every target (:meth:`IKSolver.solve`), results in order; arguments
        and errors as in :meth:`find` (:class:`~pinkctl.ik.LocalOptions` fields)."""
        (local,) = split_options(changes, options if options is not None else LocalOptions())
        checked_local(local)
        return self._run(targets, seed, seeds, local, 0)

    def _run(
        self,
        targets: Sequence[IKTarget],
        seed: SeedLike,
        seeds: Sequence[SeedLike] | None,
        query: LocalOptions | SearchOptions,
        entropy: int,
    ) -> list[IKResult]:
        if isinstance(targets, (str, bytes)) or not isinstance(targets, Sequence):
            raise InputError(f"targets: expected a sequence of targets, got {type(targets)}")
        if seeds is not None:
            seeds = list(seeds)
            if len(seeds) != len(targets):
                raise InputError(f"seeds: expected {len(targets)} seeds, got {len(seeds)}")
        job = self.job(query, entropy)
        rows = packing(targets, seed, seeds)
        answers: Sequence[list[IKResult] | str]
        if rows is None:  # other spellings: chains of one, packed per chunk when sent
            chains = [
                Chain(indices=(i,), targets=(t,), seed=seeds[i] if seeds is not None else seed)
                for i, t in enumerate(targets)
            ]
            answers = [answer for _, answer in self.run(job, chains, strict=True)]
        else:  # poses: each chunk stacked as it is first sent
            chunks = [
                Chunk(f"targets[{a}..{b - 1}]", partial(rows, a, b))
                for a, b in chunk_bounds([1] * len(targets), self.workers)
            ]
            answers = self._workers.run(pickled(job), chunks, strict=True, retries=self.retries)
        out: list[IKResult] = []
        for answer in answers:
            assert not isinstance(answer, str)  # strict: a lost chunk raised
            out += answer
        return out

    # ------------------------------------------------------------------ engine
    def job(self, query: LocalOptions | SearchOptions, entropy: int) -> BatchJob:
        """A job of this pool's robot and solver options."""
        return BatchJob(
            robot=self._portable,
            solver_options=self.solver.options,
            query=query,
            entropy=entropy,
            key=self._key,
        )

    def run(
        self,
        job: BatchJob,
        chains: Sequence[Chain],
        *,
        strict: bool,
        done: Callable[[int], object] | None = None,
    ) -> list[tuple[list[Chain], list[IKResult] | str]]:
        """Solve ``chains`` (never split) in chunks on the workers; per chunk, its chains and
        its results, or (not ``strict``) why it was lost; ``done(n)`` as ``n`` more targets'
        results come back. Used by :class:`~pinkctl.ik.dispatch.Runner`.

        Raises:
            InputError: The job cannot be pickled, or (``strict``) a target or seed is
                malformed.
            WorkerError: ``strict``: a target's solve raised; a chunk's worker kept dying.
        """
        if not chains:
            return []
        bounds = chunk_bounds([len(c.indices) for c in chains], self.workers)
        groups = [list(chains[a:b]) for a, b in bounds]
        chunks = [Chunk(_span(group), partial(pack_chunk, group)) for group in groups]
        answers = self._workers.run(
            pickled(job), chunks, strict=strict, retries=self.retries, done=done
        )
        return list(zip(groups, answers))


def chunk_bounds(sizes: Sequence[int], workers: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of each chunk of units of ``sizes`` targets (never split): guided
    sizes, about half of each worker's share of what is left (:data:`SHARE`), between
    :data:`MIN_CHUNK` (for a small batch: half a worker's share) and :data:`MAX_CHUNK`
    targets. Large chunks first cost little per target (each chunk costs ~0.1 ms in a worker:
    its generators, arrays and messages; 22 chunks for 5,000 targets on 2 workers, 35 with a
    third and at most 256); small ones last let the workers finish together."""
    ends = np.cumsum(sizes)  # targets up to and including each unit
    total = int(ends[-1]) if len(ends) else 0
    smallest = min(MIN_CHUNK, math.ceil(total / (2 * workers)))  # a small batch: 2 per worker
    bounds = []
    start, done = 0, 0
    while start < len(sizes):
        want = min(MAX_CHUNK, max(smallest, math.ceil((total - done) / (SHARE * workers))))
        stop = max(start + 1, int(np.searchsorted(ends, done + want, side="left")) + 1)
        stop = min(stop, len(sizes))
        bounds.append((start, stop))
        done, start = int(ends[stop - 1]), stop
    return bounds


def pickled(job: BatchJob) -> bytes:
    """``job`` pickled for the workers.

    Raises:
        InputError: It cannot be (a ``validate`` callback defined inside a function).
    """
    try:
        return pickle.dumps(job)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise InputError(
            "options: worker processes receive the options pickled; a validate callback "
            f"must be a module-level function ({exc})"
        ) from exc


def _span(chains: Sequence[Chain]) -> str:
    """``targets[a..b]``: the indices of a chunk's targets."""
    indices = [i for chain in chains for i in chain.indices]
    return f"targets[{min(indices)}..{max(indices)}]"


def _home(pool: IKPool) -> PackedTargets:
    """A chunk of one target, the pose of the solver's frame at the robot's home, that warms
    a worker: its first request loads the robot, builds the solver and solves once."""
    model = pool.robot.model
    data = model.createData()
    pin.framesForwardKinematics(model, data, pool.robot.q0)
    pose = data.oMf[model.getFrameId(pool.solver.frame)].homogeneous
    return PackedTargets(np.zeros(1, dtype=np.int64), pose[None], None, None, se3=True)


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


def job_key(robot: PortableRobot, options: IKOptions) -> str:
    """A key that is the same for the same robot and solver options (workers keep one solver
    per key), or a fresh one when they cannot be pickled."""
    try:
        return hashlib.sha1(pickle.dumps((robot, options))).hexdigest()
    except (pickle.PicklingError, AttributeError, TypeError):
        import uuid

        return uuid.uuid4().hex
