"""The worker processes of an :class:`~pinkctl.ik.IKPool`: start, warm, feed, replace, stop.

Each worker is ``python pool_worker.py READ_FD WRITE_FD`` (:mod:`pinkctl.ik.pool_worker`)
with two pipes: requests go in, replies come out. Each worker has up to :data:`DEPTH` chunks
in flight, so that it finds its next chunk queued when it finishes one, never waiting for
this process to wake up and send it. The worker is one thread that reads a request only when
it is done with the last one, so a request is sent only when it fits in what the request
pipe holds beside the requests not yet answered (:data:`PIPE_BYTES` where the system lets a
pipe grow, Linux): this process never blocks writing while the worker writes a reply. A
worker is warmed as it starts (its first request loads the robot and solves one target), so a
batch never pays for that.
A worker that closes its pipe (it died) is replaced by a fresh one and its chunks sent
again, ``retries`` times; then the chunk is lost.
"""

from __future__ import annotations

import os
import pickle
import select
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, WorkerError
from .result import IKResult

if TYPE_CHECKING:
    from .job import Chain
    from .packed import PackedTargets

__all__ = ["DEPTH", "Chunk", "WorkerSet"]

WORKER_SCRIPT = Path(__file__).with_name("pool_worker.py")
#: Seconds a worker may take to start (import, first message) before the pool gives up.
START_TIMEOUT_S = 300.0
#: Chunks in flight per worker: the one it solves and the next one, queued.
DEPTH = 2
#: Bytes each request pipe is grown to where the system allows it (Linux; at most
#: ``/proc/sys/fs/pipe-max-size``, 1 MiB by default): two chunks of the largest size fit.
PIPE_BYTES = 1 << 20
#: Bytes of a request beyond its job and chunk (the tuple's pickle, the length header).
_FRAMING = 256
#: The in-flight mark of a worker's warm-up request (not a chunk of any run).
_WARM = -1


@dataclass(frozen=True)
class Chunk:
    """One request's targets.

    Attributes:
        span: ``targets[a..b]``, the targets' indices in the whole batch (for messages).
        payload: Makes what travels (:class:`~pinkctl.ik.packed.PackedTargets` or a list of
            :class:`~pinkctl.ik.job.Chain`), called when the chunk is first sent.
    """

    span: str
    payload: Callable[[], PackedTargets | list[Chain]]


@dataclass
class _Worker:
    """One worker process, its pipes and what it has been sent."""

    process: subprocess.Popen
    requests: Connection
    replies: Connection
    launched: float  # time.monotonic() at launch
    capacity: int  # bytes its request pipe holds
    start_s: float | None = None  # launch to ready and warm [s]
    inflight: deque[int] = field(default_factory=deque)  # chunks sent, oldest first
    sent: deque[int] = field(default_factory=deque)  # each one's request bytes
    job: bytes = b""  # the job of its last request
    cpu_s: float = 0.0  # its CPU seconds at its last reply


def _grown(fd: int) -> int:
    """Bytes the pipe of ``fd`` holds, grown to :data:`PIPE_BYTES` where the system allows."""
    try:
        import fcntl

        return int(fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES))
    except (ImportError, AttributeError, OSError):  # not Linux, or over the system's maximum
        try:
            return int(fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ))
        except (NameError, AttributeError, OSError):
            return select.PIPE_BUF  # what POSIX promises


def _launch(warm: tuple[bytes, Any] | None) -> _Worker:
    to_worker_r, to_worker_w = os.pipe()
    capacity = _grown(to_worker_w)
    from_worker_r, from_worker_w = os.pipe()
    _grown(from_worker_r)  # a whole reply written at once: the worker never waits for a read
    # the worker finds pinkctl (and its dependencies) where this process does
    path = os.pathsep.join(p for p in sys.path if p)
    env = {**os.environ, "PYTHONPATH": path}
    command = [sys.executable, str(WORKER_SCRIPT), str(to_worker_r), str(from_worker_w)]
    launched = time.monotonic()
    process = subprocess.Popen(
        command, pass_fds=(to_worker_r, from_worker_w), env=env, stdin=subprocess.DEVNULL
    )
    os.close(to_worker_r)
    os.close(from_worker_w)
    requests = Connection(to_worker_w, readable=False)
    replies = Connection(from_worker_r, writable=False)
    worker = _Worker(process, requests, replies, launched, capacity)
    if warm is not None:  # queued in the pipe: read once the worker has imported
        job, chunk = warm
        requests.send((job, chunk, False))
        worker.inflight.append(_WARM)
        worker.sent.append(len(job) + len(chunk) + _FRAMING)
        worker.job = job
    return worker


class WorkerSet:
    """``count`` worker processes, launched now (and warmed with ``warm``: a pickled job and
    a pickled chunk, whose answer is dropped).

    Attributes:
        count: Worker processes.
        cpu_seconds: CPU seconds of the workers since they were warm (solves, transport and
            every other thing they did), as of their last replies.
        solve_seconds: Of those, the seconds spent in :func:`~pinkctl.ik.job.solve_chunk`
            (the same work in any process; the rest is the workers' own).
        gap_seconds: Of the last :meth:`run`, the seconds workers sat idle waiting for a
            chunk after finishing one, summed over workers (the wait before each worker's
            first chunk of the run is not counted: it is the time between runs).
    """

    def __init__(self, count: int, *, warm: tuple[bytes, Any] | None = None) -> None:
        self.count = count
        self.cpu_seconds = 0.0
        self.solve_seconds = 0.0
        self.gap_seconds = 0.0
        self._warm = warm
        self._workers = [_launch(warm) for _ in range(count)]
        self.closed = False

    # ------------------------------------------------------------------ start, stop
    def _ready(self, worker: _Worker) -> None:
        """Wait for ``worker``'s first message and its warm-up answer."""
        if worker.start_s is not None:
            return
        message = self._first(worker)
        if worker.inflight and worker.inflight[0] == _WARM:
            message = self._first(worker)  # the warm-up's answer, dropped
            worker.inflight.popleft()
            worker.sent.popleft()
            worker.cpu_s = message[-2]
        worker.start_s = message[-1] - worker.launched

    def _first(self, worker: _Worker) -> tuple:
        """The next message of a starting worker."""
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
        if message[0] == "ready":
            return (*message, time.monotonic())
        return message

    def start_seconds(self) -> list[float]:
        """Each worker's start time [s]: launch to imported, robot loaded and a first target
        solved (waits for the workers)."""
        self._check_open()
        for worker in self._workers:
            self._ready(worker)
        return [float(w.start_s) for w in self._workers]  # type: ignore[arg-type]

    def worker_cpu_seconds(self) -> list[float]:
        """Each worker's CPU seconds as of its last reply (import and warm-up included)."""
        return [w.cpu_s for w in self._workers]

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
        """A fresh (warmed) worker in place of worker ``index``, which died."""
        self._stop(self._workers[index])
        self._workers[index] = _launch(self._warm)

    # ------------------------------------------------------------------ work
    def run(
        self,
        job: bytes,
        chunks: Sequence[Chunk],
        *,
        strict: bool,
        retries: int,
        done: Callable[[int], object] | None = None,
    ) -> list[list[IKResult] | str]:
        """Every chunk on some worker; per chunk its results, or why it was lost (not
        ``strict``: a strict run raises instead, once the chunks in flight are back). Each
        worker keeps :data:`DEPTH` chunks in flight; results are unpacked while it works.
        ``done(n)`` is called as the results of ``n`` more targets come back."""
        self._check_open()
        self.gap_seconds = 0.0
        run = _Run(self, job, chunks, strict=strict, retries=retries)
        run.done = done
        while run.going():
            for worker in self._workers:
                run.feed(worker)
            busy = {w.replies: k for k, w in enumerate(self._workers) if w.inflight}
            for connection in wait(list(busy)):  # blocks: this process uses no CPU meanwhile
                run.receive(busy[connection])  # type: ignore[index]
        if run.error is not None:
            raise run.error
        return [run.out[i] for i in range(len(chunks))]

    def _busy(self) -> bool:
        return any(w.inflight for w in self._workers)


class _Run:
    """One :meth:`WorkerSet.run`: the chunks left to send, their attempts, and per chunk its
    results or why it was lost; ``error`` is the first failure of a strict run (or any
    remote exception), raised once the chunks in flight are back."""

    def __init__(
        self,
        workers: WorkerSet,
        job: bytes,
        chunks: Sequence[Chunk],
        *,
        strict: bool,
        retries: int,
    ) -> None:
        self.workers = workers
        self.job, self.chunks, self.strict, self.retries = job, chunks, strict, retries
        self.todo = deque(range(len(chunks)))
        self.attempts = [0] * len(chunks)
        self.payloads: dict[int, Any] = {}
        self.out: dict[int, list[IKResult] | str] = {}
        self.error: Exception | None = None
        self.done: Callable[[int], object] | None = None
        self.replied: set[int] = set()  # the workers (by pid) that answered in this run

    def going(self) -> bool:
        """Whether a chunk has no answer yet (after an error: whether any is in flight)."""
        unanswered = len(self.out) < len(self.chunks)
        return unanswered and (self.error is None or self.workers._busy())

    def feed(self, worker: _Worker) -> None:
        """Send ``worker`` chunks (each packed and pickled once) until it has :data:`DEPTH`
        in flight, each only if it fits in its request pipe beside the requests not yet
        answered (or it has none in flight: then it is reading); a replacement is waited for
        first (its warm-up answer comes before any chunk's)."""
        self.workers._ready(worker)
        while len(worker.inflight) < DEPTH and self.todo and self.error is None:
            i = self.todo[0]
            if i not in self.payloads:
                self.payloads[i] = pickle.dumps(self.chunks[i].payload())
            job = None if worker.job == self.job else self.job  # the same job: not again
            size = len(self.payloads[i]) + len(job or b"") + _FRAMING
            if worker.inflight and sum(worker.sent) + size > worker.capacity:
                return  # it would block: sent once the worker answers
            self.todo.popleft()
            self.attempts[i] += 1
            worker.inflight.append(i)
            worker.sent.append(size)
            worker.job = self.job
            try:
                worker.requests.send((job, self.payloads[i], self.strict))
            except OSError:  # died since: found out in receive, by its closed pipe
                return

    def receive(self, k: int) -> None:
        """Take worker ``k``'s reply to its oldest chunk in flight (it is ready to be read)."""
        worker = self.workers._workers[k]
        try:
            reply = worker.replies.recv()
        except (EOFError, OSError):
            self._died(k)
            return
        chunk = worker.inflight.popleft()
        worker.sent.popleft()
        self.workers.cpu_seconds += reply[-2] - worker.cpu_s
        self.workers.solve_seconds += reply[-4]
        worker.cpu_s = reply[-2]
        if worker.process.pid in self.replied:  # (a first chunk's wait is between runs)
            self.workers.gap_seconds += reply[-3]
        self.replied.add(worker.process.pid)
        if reply[0] != "ok":
            self._failed(worker, chunk, reply)
            return
        self.feed(worker)  # its next chunk first, then this one's results
        results = self.out[chunk] = reply[1].unpack()
        if self.done is not None:
            self.done(len(results))

    def _died(self, k: int) -> None:
        """Worker ``k`` died: replace it; its chunks go back to be sent again, except the one
        it was solving once that has had ``1 + retries`` attempts (then it is lost)."""
        worker = self.workers._workers[k]
        code = worker.process.poll()
        chunks = list(worker.inflight)
        self.workers._replace(k)
        for queued in chunks[1:]:  # never started: not an attempt
            self.attempts[queued] -= 1
        self.todo.extendleft(reversed(chunks[1:]))
        chunk = chunks[0]
        if self.attempts[chunk] <= self.retries:
            self.todo.appendleft(chunk)
            return
        lost = (
            f"lost: its worker process died on each of {self.attempts[chunk]} "
            f"attempt(s) (exit code {code})"
        )
        if self.strict:
            self.error = self.error or WorkerError(f"{self.chunks[chunk].span}: {lost}")
        self.out[chunk] = lost

    def _failed(self, worker: _Worker, chunk: int, reply: tuple) -> None:
        """A query of ``chunk`` raised in the worker: the first such error is kept (an
        InputError stays one)."""
        _, index, text, trace = reply[:4]
        where = f"targets[{index}]" if index is not None else self.chunks[chunk].span
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
