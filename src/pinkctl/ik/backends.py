"""The backends of batch IK besides :class:`~pinkctl.ik.IKPool`: a ``multiprocessing`` pool
of another start method, and Ray.

:class:`LocalPool` (``mp_context="fork"`` or ``"forkserver"``) keeps its worker processes
across batches (a reachability map runs several), each worker loading the robot from its
source on a job's first chunk (:func:`~pinkctl.ik.job.solve_chunk`). A worker that dies
(killed, out of memory, a crash in native code) breaks the pool: a fresh pool runs the chunks
without an answer again, up to ``retries`` times, and the ones still without an answer are
returned as the reason they were lost.

:func:`run_ray` (the ``ray`` extra, ``pip install 'pinkctl[ray]'``) puts the job in Ray's
object store once and runs each chunk as one task, at most ``workers`` in flight; a Ray worker
keeps the robot it loaded for the job's later chunks. A task whose worker dies (killed, out of
memory, its node lost) is run again by Ray up to ``retries`` times, then returned as the
reason it was lost; an exception the task raised (the robot does not load on that node) is
raised here. Ray is used as it is found: an already initialised Ray, else
``ray.init(address=...)`` on a running cluster, else a local Ray started with ``workers``
CPUs, which stays up for later batches (``ray.shutdown()`` stops it). An address (or
``RAY_ADDRESS``) is checked first (:func:`check_ray_address`): Ray itself retries an address
that does not answer for minutes.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import socket
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from .._progress import progress_bar
from ..errors import InputError
from .ikpool import pickled
from .job import BatchJob, Chain, PackedResults, solve_chunk

__all__ = [
    "CONNECT_TIMEOUT",
    "LocalPool",
    "check_ray_address",
    "import_ray",
    "ray_cpus",
    "run_ray",
]


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
        pickled(job)  # raises if it cannot travel
        out: dict[int, PackedResults | str] = {}
        pending = set(range(len(chunks)))
        total = _count(chunks)
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


#: Longest wait [s] to resolve a Ray address's host, then again to connect to it.
CONNECT_TIMEOUT = 5.0
#: Addresses Ray resolves itself (a running local cluster, or a new one).
_RAY_KEYWORDS = ("auto", "local")


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``host:port``, ``ray://host:port`` or ``[v6]:port``; None if the
    text has no such form."""
    text = address.strip()
    if text.startswith("ray://"):
        text = text[len("ray://") :]
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]"), int(port)


def _resolve(host: str, port: int, timeout: float) -> list[Any] | str:
    """The socket addresses of ``host``, or why there are none (a DNS lookup has no
    timeout of its own: it runs in a thread that is left behind when it hangs)."""
    answer: list[Any] = []

    def lookup() -> None:
        try:
            answer.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as exc:
            answer.append(str(exc))

    thread = threading.Thread(target=lookup, daemon=True)
    thread.start()
    thread.join(timeout)
    if not answer:
        return f"the host {host!r} did not resolve within {timeout:g} s"
    if isinstance(answer[0], str):
        return f"the host {host!r} does not resolve ({answer[0]})"
    return answer[0]


def check_ray_address(address: str | None, *, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise unless the Ray cluster at ``address`` answers: its host resolves and its port
    accepts a TCP connection, each within ``timeout`` seconds.

    ``address`` None means ``RAY_ADDRESS`` when that is set (what ``ray.init`` reads);
    ``"auto"``, ``"local"`` and no address at all are left to Ray.

    Raises:
        InputError: The address is not ``host:port`` / ``ray://host:port``, or does not
            answer (one line: the address, what failed and what was expected).
    """
    name = "address"
    if address is None:
        address = os.environ.get("RAY_ADDRESS") or None
        name = "RAY_ADDRESS"
    if address is None or address.strip().lower() in _RAY_KEYWORDS:
        return
    expected = (
        "expected a running Ray cluster: host:port of its head node, ray://host:port, or 'auto'"
    )
    parsed = _host_port(address)
    if parsed is None:
        raise InputError(f"{name} {address!r} is not host:port; {expected}")
    host, port = parsed
    found = _resolve(host, port, timeout)
    if isinstance(found, str):
        raise InputError(f"{name} {address!r}: {found}; {expected}")
    reasons = []
    for family, kind, proto, _, sockaddr in found:
        with socket.socket(family, kind, proto) as sock:
            sock.settimeout(timeout)
            try:
                sock.connect(sockaddr)
            except OSError as exc:
                reasons.append(str(exc) or type(exc).__name__)
                continue
        return
    raise InputError(
        f"{name} {address!r}: nothing answers at {host}:{port} ({'; '.join(reasons)}); {expected}"
    )


def import_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        ImportError: Ray is not installed (the message names the extra).
    """
    try:
        import ray
    except ImportError as exc:
        raise ImportError("backend='ray' needs Ray: pip install 'pinkctl[ray]'") from exc
    return ray


def _connect(ray: ModuleType, address: str | None, workers: int | None) -> None:
    if ray.is_initialized():
        return
    check_ray_address(address)
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
    if address is None and workers is not None:
        options["num_cpus"] = workers
    ray.init(address=address, **options)


def ray_cpus(address: str | None, workers: int | None) -> int:
    """CPUs of the Ray cluster this process uses (connecting or starting it if needed)."""
    ray = import_ray()
    _connect(ray, address, workers)
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def run_ray(
    job: BatchJob,
    chunks: Sequence[Sequence[Chain]],
    *,
    workers: int,
    address: str | None,
    retries: int,
    progress: bool,
) -> list[PackedResults | str]:
    """Run ``chunks`` as Ray tasks, at most ``workers`` at a time.

    Returns:
        Per chunk, its results, or why it was lost (its worker died on every attempt).

    Raises:
        Exception: What a task raised (the exception type of the cause).
    """
    ray = import_ray()
    _connect(ray, address, workers)
    task = ray.remote(solve_chunk).options(max_retries=retries, retry_exceptions=False)
    job_ref = ray.put(job)
    out: dict[int, PackedResults | str] = {}
    in_flight: dict[Any, int] = {}
    queue = list(range(len(chunks)))
    total = _count(chunks)
    with progress_bar(total, "IK targets", enabled=progress, unit="target") as bar:
        try:
            while queue or in_flight:
                while queue and len(in_flight) < workers:
                    i = queue.pop(0)
                    in_flight[task.remote(job_ref, chunks[i])] = i
                done, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in done:
                    answer = out[in_flight.pop(ref)] = _answer(ray, ref, retries)
                    if not isinstance(answer, str):
                        bar.update(len(answer))
        finally:  # an error here cancels what is still running
            _cancel(ray, in_flight)
    return [out[i] for i in range(len(chunks))]


def _answer(ray: ModuleType, ref: Any, retries: int) -> PackedResults | str:
    """The results of a finished task, or why its chunk was lost (its worker died on each
    of the ``retries + 1`` attempts); an exception the task raised is raised here."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        raise exc.as_instanceof_cause() from None
    except ray.exceptions.RayError as exc:
        return f"lost after {retries + 1} attempt(s): {type(exc).__name__}"


def _cancel(ray: ModuleType, tasks: Iterable[Any]) -> None:
    """Stop the ``tasks`` (object references) still running."""
    for ref in tasks:
        ray.cancel(ref, force=True)


def _count(chunks: Sequence[Sequence[Chain]]) -> int:
    """The targets in ``chunks`` of chains (the steps of a batch's progress bar)."""
    return sum(len(chain.indices) for chunk in chunks for chain in chunk)
