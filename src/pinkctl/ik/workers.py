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
        todo = deque(range(len(groups)))
        attempts = [0] * len(groups)
        packed: dict[int, Any] = {}
        out: dict[int, list[IKResult] | str] = {}
        error: Exception | None = None

        def feed(worker: _Worker) -> None:
            if worker.chunk is not None or not todo or error is not None:
                return
            self._ready(worker)
            i = worker.chunk = todo.popleft()
            attempts[i] += 1
            if i not in packed:
                packed[i] = pack_chunk(groups[i])
            try:
                worker.requests.send((job, packed[i], strict))
            except OSError:  # died since: found out below, by its closed pipe
                pass

        while len(out) < len(groups) and (error is None or self._busy()):
            for worker in self._workers:
                feed(worker)
            busy = {w.replies: k for k, w in enumerate(self._workers) if w.chunk is not None}
            for connection in wait(list(busy)):
                k = busy[connection]  # type: ignore[index]
                worker = self._workers[k]
                chunk, worker.chunk = worker.chunk, None
                assert chunk is not None
                try:
                    reply = worker.replies.recv()
                except (EOFError, OSError):
                    code = worker.process.poll()
                    self._replace(k)
                    if attempts[chunk] <= retries:
                        todo.appendleft(chunk)
                        continue
                    lost = (
                        f"lost: its worker process died on each of {attempts[chunk]} "
                        f"attempt(s) (exit code {code})"
                    )
                    if strict:
                        error = error or WorkerError(f"{_span(groups[chunk])}: {lost}")
                    out[chunk] = lost
                    continue
                if reply[0] == "ok":
                    feed(worker)  # its next chunk first, then this one's results
                    out[chunk] = reply[1].unpack()
                    self.cpu_seconds += reply[2]
                    continue
                _, index, text, trace = reply
                where = f"targets[{index}]" if index is not None else _span(groups[chunk])
                if error is None:
                    error = (
                        InputError(f"{where}: {text.split(': ', 1)[-1]}")
                        if text.startswith("InputError: ")
                        else WorkerError(
                            f"{where}: {text} (in worker process {worker.process.pid})",
                            index=index,
                            remote_traceback=trace,
                        )
                    )
                out[chunk] = text
        if error is not None:
            raise error
        return [out[i] for i in range(len(groups))]

    def _busy(self) -> bool:
        return any(w.chunk is not None for w in self._workers)


def _span(chains: Sequence[Chain]) -> str:
    """``targets[a..b]``: the indices of a chunk's targets."""
    indices = [i for chain in chains for i in chain.indices]
    return f"targets[{min(indices)}..{max(indices)}]"
