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
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from .._progress import progress_bar
from ..errors import InputError
from .job import BatchJob, Chain, solve_chunk
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
        try:
            pickle.dumps(job)
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            raise InputError(
                "options: worker processes receive the options pickled; a validate callback "
                f"must be a module-level function ({exc})"
            ) from exc
        out: dict[int, PackedResults | str] = {}
        pending = set(range(len(chunks)))
        total = sum(len(chain.indices) for chunk in chunks for chain in chunk)
        with progress_bar(total, "IK targets", enabled=progress, unit="target") as bar:
            for attempt in range(self.retries + 1):
                if not pending:
                    break
                if self._pool is None:
                    self._pool = ProcessPoolExecutor(self.workers, mp_context=self._context)
                futures = {
                    self._pool.submit(solve_chunk, job, chunks[i]): i for i in sorted(pending)
                }
                try:
                    waiting = set(futures)
                    while waiting:
                        done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                        for future in done:
                            i = futures[future]
                            try:
                                out[i] = future.result()
                            except BrokenProcessPool as exc:
                                out[i] = (
                                    f"lost: its worker process died on each of {attempt + 1} "
                                    f"attempt(s) ({exc}){self._hint}"
                                )
                                continue
                            pending.discard(i)
                            bar.update(len(out[i]))
                except BaseException:  # e.g. the robot fails to load: nothing else runs
                    self.close()
                    raise
                if pending:  # the pool broke: a fresh one for the next attempt
                    self.close()
        return [out[i] for i in range(len(chunks))]
