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
  and its results as a few stacked arrays (:mod:`pinkctl.ik.transport`);
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
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.robot import PinkRobot
from ..errors import InputError
from .checked import checked_local, checked_search, positive_int
from .job import BatchJob, Chain, PortableRobot, entropy_of
from .options import IKOptions, LocalOptions, SearchOptions, split_options
from .result import IKResult
from .solver import IKSolver
from .targets import IKTarget, SeedLike
from .workers import WorkerSet

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import IKKeywords, LocalKeywords, SearchBudgetKeywords

__all__ = ["IKPool"]

#: Targets per chunk at most (a chunk is one request to one worker).
_MAX_CHUNK = 256
#: Chunks per worker and call: enough to balance uneven chunks.
_CHUNKS_PER_WORKER = 4


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

    The workers start here (in the background); the first call waits for them.
    :attr:`start_seconds` says how long each took to start. One call at a time (a pool is not
    shared between threads); POSIX systems (the workers' pipes are passed as file
    descriptors).
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
        self._workers = WorkerSet(count)

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
        """Seconds from each worker's launch to its first request ready (waits for them)."""
        return self._workers.start_seconds()

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds the workers spent on chunks since the pool started."""
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
        chains = [
            Chain(indices=(i,), targets=(t,), seed=seeds[i] if seeds is not None else seed)
            for i, t in enumerate(targets)
        ]
        out: list[IKResult] = []
        for _, answer in self.run(self.job(query, entropy), chains, strict=True):
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
        self, job: BatchJob, chains: Sequence[Chain], *, strict: bool
    ) -> list[tuple[list[Chain], list[IKResult] | str]]:
        """Solve ``chains`` (never split) in chunks on the workers; per chunk, its chains and
        its results, or (not ``strict``) why it was lost. Used by
        :class:`~pinkctl.ik.dispatch.Runner`.

        Raises:
            InputError: The job cannot be pickled, or (``strict``) a target or seed is
                malformed.
            WorkerError: ``strict``: a target's solve raised; a chunk's worker kept dying.
        """
        if not chains:
            return []
        try:
            request = pickle.dumps(job)
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            raise InputError(
                "options: worker processes receive the options pickled; a validate callback "
                f"must be a module-level function ({exc})"
            ) from exc
        size = min(_MAX_CHUNK, math.ceil(len(chains) / (_CHUNKS_PER_WORKER * self.workers)))
        groups = [list(chains[k : k + size]) for k in range(0, len(chains), size)]
        answers = self._workers.run(request, groups, strict=strict, retries=self.retries)
        return list(zip(groups, answers))


def job_key(robot: PortableRobot, options: IKOptions) -> str:
    """A key that is the same for the same robot and solver options (workers keep one solver
    per key), or a fresh one when they cannot be pickled."""
    try:
        return hashlib.sha1(pickle.dumps((robot, options))).hexdigest()
    except (pickle.PicklingError, AttributeError, TypeError):
        import uuid

        return uuid.uuid4().hex
