"""The local backend of batch IK: a process pool on this machine.

A :class:`LocalPool` keeps its worker processes across batches (a reachability map runs
several), each worker loading the robot from its source on a job's first chunk
(:func:`~pinkctl.ik.job.solve_chunk`). A worker that dies (killed, out of memory, a crash in
native code) breaks the pool: a fresh pool runs the chunks without an answer again, up to
``retries`` times, and the ones still without an answer are returned as the reason they were
lost.
"""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from .._progress import progress_bar
from ..errors import InputError
from .job import BatchJob, Chain, solve_chunk, target_count
from .transport import PackedResults

__all__ = ["LocalPool"]


class LocalPool:
    """Worker processes on this machine, started on first use.

    Args:
        workers: Worker processes.
        mp_context: ``multiprocessing`` start method.
        retries: Times the unanswered chunks of a broken pool are run again.

    Raises:
        InputError: ``mp_context`` is not a start method of this platform.
    """

    def __init__(self, *, workers: int, mp_context: str, retries: int) -> None:
        try:
            self._context = multiprocessing.get_context(mp_context)
        except ValueError as exc:
            raise InputError(f"mp_context: {exc}") from exc
        self.workers = workers
        self.retries = retries
        self._hint = (  # the usual cause when every worker dies at once under spawn
            ""
            if mp_context == "fork"
            else "; if workers die as they start: a script must start them under "
            '`if __name__ == "__main__":`, as they import it again'
        )
        self._pool: ProcessPoolExecutor | None = None

    def close(self) -> None:
        """Stop the worker processes (chunks not started are cancelled)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def run(
        self, job: BatchJob, chunks: Sequence[Sequence[Chain]], *, progress: bool
    ) -> list[PackedResults | str]:
        """Run ``chunks``; per chunk, its results or why it was lost.

        Raises:
            InputError: The job cannot be pickled (a ``validate`` callback defined inside a
                function).
        """
        _check_picklable(job)
        out: dict[int, PackedResults | str] = {}
        pending = set(range(len(chunks)))
        total = target_count(chunks)
        with progress_bar(total, "IK targets", enabled=progress, unit="target") as bar:
            for attempt in range(self.retries + 1):
                if not pending:
                    break
                self._attempt(job, chunks, _Tally(out, pending, bar), attempt)
        return [out[i] for i in range(len(chunks))]

    def _attempt(
        self, job: BatchJob, chunks: Sequence[Sequence[Chain]], tally: _Tally, attempt: int
    ) -> None:
        """Run the chunks without an answer on the pool (started if needed); a pool that
        broke is closed (the next attempt starts a fresh one)."""
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=self._context)
        futures = {self._pool.submit(solve_chunk, job, chunks[i]): i for i in sorted(tally.pending)}
        try:
            waiting = set(futures)
            while waiting:
                done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                for future in done:
                    tally.take(futures[future], future, attempt, self._hint)
        except BaseException:  # e.g. the robot fails to load: nothing else runs
            self.close()
            raise
        if tally.pending:  # the pool broke: a fresh one for the next attempt
            self.close()


@dataclass
class _Tally:
    """The answers of one :meth:`LocalPool.run` so far: per chunk its results or why it was
    lost, the chunks without results, and the progress bar."""

    out: dict[int, PackedResults | str]
    pending: set[int]
    bar: Any

    def take(self, i: int, future: Future, attempt: int, hint: str) -> None:
        """Record chunk ``i``'s answer from its finished ``future`` (0-based ``attempt``)."""
        try:
            self.out[i] = future.result()
        except BrokenProcessPool as exc:
            self.out[i] = (
                f"lost: its worker process died on each of {attempt + 1} attempt(s) ({exc}){hint}"
            )
            return
        self.pending.discard(i)
        self.bar.update(len(self.out[i]))


def _check_picklable(job: BatchJob) -> None:
    """Raise :class:`InputError` if ``job`` cannot travel to a worker process."""
    try:
        pickle.dumps(job)
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise InputError(
            "options: worker processes receive the options pickled; a validate callback "
            f"must be a module-level function ({exc})"
        ) from exc
