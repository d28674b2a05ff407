"""The worker processes of an :class:`~pinkctl.ik.IKPool`: start, feed, replace, stop.

Each worker is ``python pool_worker.py READ_FD WRITE_FD`` (:mod:`pinkctl.ik.pool_worker`)
with two pipes: requests go in, replies come out, one request in flight per worker (so
neither side ever blocks writing into a full pipe while the other does too). A worker that
closes its pipe (it died) is replaced by a fresh one and its chunk sent again, ``retries``
times; then the chunk is lost.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, WorkerError
from .result import IKResult
from .transport import pack_chunk

if TYPE_CHECKING:
    from .job import Chain

__all__ = ["WorkerSet"]

WORKER_SCRIPT = Path(__file__).with_name("pool_worker.py")
#: Seconds a worker may take to start (import, first message) before the pool gives up.
START_TIMEOUT_S = 300.0


@dataclass
class _Worker:
    """One worker process and its pipes."""

    process: subprocess.Popen
    requests: Connection
    replies: Connection
    launched: float
    start_s: float | None = None  # launch to ready [s]
    chunk: int | None = None  # the chunk in flight


def _launch() -> _Worker:
    to_worker_r, to_worker_w = os.pipe()
    from_worker_r, from_worker_w = os.pipe()
    # the worker finds pinkctl (and its dependencies) where this process does
    path = os.pathsep.join(p for p in sys.path if p)
    env = {**os.environ, "PYTHONPATH": path}
    command = [sys.executable, str(WORKER_SCRIPT), str(to_worker_r), str(from_worker_w)]
    launched = time.perf_counter()
    process = subprocess.Popen(
        command, pass_fds=(to_worker_r, from_worker_w), env=env, stdin=subprocess.DEVNULL
    )
    os.close(to_worker_r)
    os.close(from_worker_w)
    requests = Connection(to_worker_w, readable=False)
    replies = Connection(from_worker_r, writable=False)
    return _Worker(process, requests, replies, launched)


class WorkerSet:
    """``count`` worker processes, launched now.

    Attributes:
        count: Worker processes.
        cpu_seconds: CPU seconds the workers reported for their chunks.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self.cpu_seconds = 0.0
        self._workers = [_launch() for _ in range(count)]
        self.closed = False

    # ------------------------------------------------------------------ start, stop
    def _ready(self, worker: _Worker) -> None:
        """Wait for ``worker``'s first message."""
        if worker.start_s is not None:
            return
        if not worker.replies.poll(START_TIMEOUT_S):
            raise WorkerError(f"a worker process did not start in {START_TIMEOUT_S:.0f} s")
        try:
            message = worker.replies.recv()
        except EOFError:
            code = worker.process.wait()
            raise WorkerError(
                f"a worker process exited as it started (exit code {code}; its stderr is this "
                "process's)"
            ) from None
        assert message[0] == "ready"
        worker.start_s = time.perf_counter() - worker.launched

    def start_seconds(self) -> list[float]:
        """Each worker's start time [s] (waits for the workers)."""
        self._check_open()
        for worker in self._workers:
            self._ready(worker)
        return [float(w.start_s) for w in self._workers]  # type: ignore[arg-type]

    def _check_open(self) -> None:
        if self.closed:
            raise WorkerError("the pool is closed")

    @staticmethod
    def _stop(worker: _Worker) -> None:
        for connection in (worker.requests, worker.replies):
            connection.close()
        try:
            worker.process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait()

    def close(self) -> None:
        """Stop every worker (its request pipe closes: it exits); idempotent."""
        if self.closed:
            return
        self.closed = True
        for worker in self._workers:
            self._stop(worker)

    def _replace(self, index: int) -> None:
        """A fresh worker in place of worker ``index`` (which died)."""
        old = self._workers[index]
        self._stop(old)
        self._workers[index] = _launch()

    # ------------------------------------------------------------------ work
    def run(
        self,
        job: bytes,
        groups: Sequence[Sequence[Chain]],
        *,
        strict: bool,
        retries: int,
    ) -> list[list[IKResult] | str]:
        """Every group of chains on some worker, as one chunk (packed when it is sent, its
        results unpacked while the workers go on); per group its results, or why it was lost
        (not ``strict``: a strict run raises instead, once the chunks in flight are back)."""
        self._check_open()
        run = _Run(self, job, groups, strict=strict, retries=retries)
        while run.going():
            for worker in self._workers:
                run.feed(worker)
            busy = {w.replies: k for k, w in enumerate(self._workers) if w.chunk is not None}
            for connection in wait(list(busy)):
                run.receive(busy[connection])  # type: ignore[index]
        if run.error is not None:
            raise run.error
        return [run.out[i] for i in range(len(groups))]

    def _busy(self) -> bool:
        return any(w.chunk is not None for w in self._workers)


class _Run:
    """One :meth:`WorkerSet.run`: the chunks left to send, their attempts, and per chunk its
    results or why it was lost; ``error`` is the first failure of a strict run (or any
    remote exception), raised once the chunks in flight are back."""

    def __init__(
        self,
        workers: WorkerSet,
        job: bytes,
        groups: Sequence[Sequence[Chain]],
        *,
        strict: bool,
        retries: int,
    ) -> None:
        self.workers = workers
        self.job, self.groups, self.strict, self.retries = job, groups, strict, retries
        self.todo = deque(range(len(groups)))
        self.attempts = [0] * len(groups)
        self.packed: dict[int, Any] = {}
        self.out: dict[int, list[IKResult] | str] = {}
        self.error: Exception | None = None

    def going(self) -> bool:
        """Whether a chunk has no answer yet (after an error: whether any is in flight)."""
        unanswered = len(self.out) < len(self.groups)
        return unanswered and (self.error is None or self.workers._busy())

    def feed(self, worker: _Worker) -> None:
        """Send ``worker`` the next chunk (packed once), if it is idle and work is left."""
        if worker.chunk is not None or not self.todo or self.error is not None:
            return
        self.workers._ready(worker)
        i = worker.chunk = self.todo.popleft()
        self.attempts[i] += 1
        if i not in self.packed:
            self.packed[i] = pack_chunk(self.groups[i])
        try:
            worker.requests.send((self.job, self.packed[i], self.strict))
        except OSError:  # died since: found out in receive, by its closed pipe
            pass

    def receive(self, k: int) -> None:
        """Take worker ``k``'s reply to its chunk (it is ready to be read)."""
        worker = self.workers._workers[k]
        chunk, worker.chunk = worker.chunk, None
        assert chunk is not None
        try:
            reply = worker.replies.recv()
        except (EOFError, OSError):
            self._died(k, chunk)
            return
        if reply[0] != "ok":
            self._failed(worker, chunk, reply)
            return
        self.feed(worker)  # its next chunk first, then this one's results
        self.out[chunk] = reply[1].unpack()
        self.workers.cpu_seconds += reply[2]

    def _died(self, k: int, chunk: int) -> None:
        """Worker ``k`` died on ``chunk``: replace it, send the chunk again or lose it."""
        code = self.workers._workers[k].process.poll()
        self.workers._replace(k)
        if self.attempts[chunk] <= self.retries:
            self.todo.appendleft(chunk)
            return
        lost = (
            f"lost: its worker process died on each of {self.attempts[chunk]} "
            f"attempt(s) (exit code {code})"
        )
        if self.strict:
            self.error = self.error or WorkerError(f"{_span(self.groups[chunk])}: {lost}")
        self.out[chunk] = lost

    def _failed(self, worker: _Worker, chunk: int, reply: tuple) -> None:
        """A query of ``chunk`` raised in the worker: the first such error is kept (an
        InputError stays one)."""
        _, index, text, trace = reply
        where = f"targets[{index}]" if index is not None else _span(self.groups[chunk])
        if self.error is None:
            self.error = (
                InputError(f"{where}: {text.split(': ', 1)[-1]}")
                if text.startswith("InputError: ")
                else WorkerError(
                    f"{where}: {text} (in worker process {worker.process.pid})",
                    index=index,
                    remote_traceback=trace,
                )
            )
        self.out[chunk] = text


def _span(chains: Sequence[Chain]) -> str:
    """``targets[a..b]``: the indices of a chunk's targets."""
    indices = [i for chain in chains for i in chain.indices]
    return f"targets[{min(indices)}..{max(indices)}]"
