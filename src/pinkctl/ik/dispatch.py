"""Where batch IK runs: this process, a local process pool, or Ray.

:class:`Runner` is what :func:`~pinkctl.ik.find_ik_batch` and the reachability maps use:
it splits chains of targets into chunks, hands them to the chosen backend and returns one
result per target in order. Chains are never split, so every target gets the same seed
and random generator whatever the backend, the number of workers or the chunking. Targets
and results travel in a compact form (:mod:`pinkctl.ik.job`).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._progress import progress_bar
from ..errors import InputError
from .backends import LocalPool, ray_cpus, run_ray
from .checked import count
from .ikpool import IKPool, chunk_bounds, job_key
from .job import (
    BatchJob,
    Chain,
    PackedResults,
    PortableRobot,
    failed_result,
    portable_chain,
    run_chains,
)
from .options import LocalOptions, SearchOptions
from .result import IKResult
from .solver import IKSolver

__all__ = ["Backend", "Execution", "Runner", "split_execution"]

Backend = Literal["local", "ray"]


@dataclass(frozen=True)
class Execution:
    """Where and how a batch runs (:func:`~pinkctl.ik.find_ik_batch`,
    :func:`~pinkctl.reach.reachability_map`; both also take these fields as keywords).

    Attributes:
        backend: ``"local"`` (this process, or a process pool) or ``"ray"`` (the ``ray``
            extra).
        workers: Worker processes (local) or tasks in flight (Ray); None: every CPU of this
            machine (local) or of the Ray cluster. ``"local"`` with 1 runs in this process.
        address: Ray cluster to connect to when Ray is not initialised yet (``"auto"``,
            ``"ray://host:10001"``); default: a local Ray with ``workers`` CPUs, kept for
            later batches. Only with Ray.
        retries: Times the chunks of a worker that died are run again; targets still
            without an answer then get a failed result saying so.
        progress: Progress bar on stderr; None: when stderr is a terminal.
        mp_context: How the local workers start: ``"spawn"`` (the default) runs them, on
            POSIX systems, as lean :class:`~pinkctl.ik.IKPool` workers (fresh interpreters
            that import the IK only, not the caller's script); another ``multiprocessing``
            start method (``"fork"``, ``"forkserver"``) runs a ``multiprocessing`` pool of
            that kind. With workers, a ``validate`` callback must be picklable (a
            module-level function).
    """

    backend: Backend = "local"
    workers: int | None = 1
    address: str | None = None
    retries: int = 2
    progress: bool | None = None
    mp_context: str = "spawn"

    def checked(self) -> Execution:
        """This execution, checked.

        Raises:
            InputError: An unknown backend, a bad worker or retry count, an address
                without Ray.
        """
        if self.backend not in ("local", "ray"):
            raise InputError(f"backend: expected 'local' or 'ray', got {self.backend!r}")
        if self.workers is not None:
            count(self.workers, "workers", lowest=1, expected="a positive integer or None")
        count(self.retries, "retries", lowest=0, expected="a non-negative integer")
        if self.address is not None and self.backend != "ray":
            raise InputError("address: only the 'ray' backend connects to a cluster")
        return self


def split_execution(
    options: dict[str, Any], execution: Execution | None = None
) -> tuple[Execution, dict[str, Any]]:
    """Take the fields of :class:`Execution` out of keyword ``options``.

    Returns:
        ``execution`` (default :class:`Execution`) with those fields changed, and the other
        options.
    """
    names = {f.name for f in dataclasses.fields(Execution)}
    own = {k: v for k, v in options.items() if k in names}
    rest = {k: v for k, v in options.items() if k not in names}
    base = execution if execution is not None else Execution()
    return (dataclasses.replace(base, **own) if own else base), rest


class Runner:
    """Runs batches where an :class:`Execution` says, keeping its workers between batches.

    Use it as a context manager (the local pool's processes stop at the end); a Ray cluster
    is left running.

    Raises:
        InputError: Bad execution settings.
    """

    def __init__(self, execution: Execution, *, pool: IKPool | None = None) -> None:
        self.execution = execution.checked()
        if pool is not None and not isinstance(pool, IKPool):
            raise InputError(f"pool: expected an IKPool, got {type(pool).__name__}")
        if pool is not None and self.execution.backend != "local":
            raise InputError("pool: an IKPool runs the batch itself; leave backend='local'")
        self._ikpool = pool  # the caller's: left running
        self._own: IKPool | None = None  # this runner's (``spawn``), closed with it
        self._pool: LocalPool | None = None  # ``fork`` / ``forkserver``

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._own is not None:
            self._own.close()
            self._own = None
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def solve(
        self,
        solver: IKSolver,
        chains: Sequence[Chain],
        query: LocalOptions | SearchOptions,
        entropy: int,
    ) -> list[IKResult]:
        """Solve every chain; results in order, one per target.

        Args:
            solver: A solver of the robot and options (answers in this process; workers
                build their own from the robot's source and ``solver.options``).
            chains: The chains (see :class:`~pinkctl.ik.job.Chain`).
            query: Budget of each query (search or local solve).
            entropy: Entropy of the per-target random generators.

        Raises:
            InputError: A robot workers cannot load (see
                :meth:`~pinkctl.ik.job.PortableRobot.of`).
            ImportError: ``backend="ray"`` without Ray installed.
        """
        if not chains:
            return []
        local = self.execution.backend == "local"
        if self._ikpool is None and local and (self._workers() == 1 or len(chains) == 1):
            return run_chains(solver, chains, query, entropy)
        robot = PortableRobot.of(solver.robot)
        job = BatchJob(robot, solver.options, query, entropy)
        lean = local and self.execution.mp_context == "spawn" and os.name == "posix"
        if self._ikpool is not None or lean:
            # an IKPool's workers keep one solver per robot and options, between batches
            key = job_key(robot, solver.options)
            return self._on_ikpool(solver, dataclasses.replace(job, key=key), chains)
        workers = self._workers()
        portable = [portable_chain(chain) for chain in chains]
        bounds = chunk_bounds([len(c.indices) for c in chains], workers)
        chunks = [portable[a:b] for a, b in bounds]
        return _unpacked(solver, list(zip(chunks, self._run(job, chunks, workers))))

    def _on_ikpool(
        self, solver: IKSolver, job: BatchJob, chains: Sequence[Chain]
    ) -> list[IKResult]:
        """``job``'s chains on the caller's :class:`~pinkctl.ik.IKPool`, else on this runner's
        own (lean ``spawn`` workers: fresh interpreters that import the IK only; started
        once, kept until the runner closes); ``solver`` reports the lost targets."""
        pool = self._ikpool
        if pool is None:
            if self._own is None:
                self._own = IKPool(
                    solver.robot,
                    workers=self._workers(),
                    options=solver.options,
                    retries=self.execution.retries,
                )
            pool = self._own
        total = sum(len(chain.indices) for chain in chains)
        with progress_bar(total, "IK targets", enabled=self._progress(), unit="target") as bar:
            return _unpacked(solver, pool.run(job, chains, strict=False, done=bar.update))

    def _progress(self) -> bool:
        """Whether to show a progress bar: the execution's choice, else on a terminal."""
        progress = self.execution.progress
        return sys.stderr.isatty() if progress is None else bool(progress)

    def _workers(self) -> int:
        """Worker processes (local) or tasks in flight (Ray): the execution's, else every
        CPU of this machine or of the Ray cluster."""
        execution = self.execution
        if execution.workers is not None:
            return execution.workers
        if execution.backend == "local":
            return os.cpu_count() or 1
        return ray_cpus(execution.address, None)

    def _run(
        self, job: BatchJob, chunks: list[list[Chain]], workers: int
    ) -> Sequence[PackedResults | list[IKResult] | str]:
        """Each chunk's answer from the backend (the local pool is started once, kept)."""
        execution, progress = self.execution, self._progress()
        if execution.backend == "ray":
            return run_ray(
                job,
                chunks,
                workers=workers,
                address=execution.address,
                retries=execution.retries,
                progress=progress,
            )
        if self._pool is None:
            self._pool = LocalPool(
                workers=workers, mp_context=execution.mp_context, retries=execution.retries
            )
        return self._pool.run(job, chunks, progress=progress)


def _unpacked(
    solver: IKSolver,
    answers: Sequence[tuple[Sequence[Chain], PackedResults | list[IKResult] | str]],
) -> list[IKResult]:
    """One result per target, in order, from each chunk's chains and answer: a lost chunk (an
    answer that is a string) gives failed results saying why."""
    results: list[IKResult] = []
    for chunk, answer in answers:
        if isinstance(answer, str):
            results += [
                failed_result(solver, target, chain.seed, answer)
                for chain in chunk
                for target in chain.targets
            ]
        else:
            results += answer if isinstance(answer, list) else answer.unpack()
    return results
