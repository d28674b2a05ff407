"""The Ray backend of batch IK: chunks as Ray tasks, on one machine or a cluster.

Needs the ``ray`` extra (``pip install 'pinkctl[ray]'``). The job is put in Ray's object
store once; each chunk is one task running :func:`~pinkctl.ik.job.solve_chunk`, and a Ray
worker process keeps the robot it loaded for every later chunk of the job. At most
``workers`` tasks are in flight. A task whose worker dies (killed, out of memory, its node
lost) is run again by Ray up to ``retries`` times; a chunk still without an answer after
that is returned as the reason it was lost. An exception raised by the task itself (the
robot does not load on that node) is raised here.

Ray is used as it is found: an already initialised Ray, else ``ray.init(address=...)`` on a
running cluster, else a local Ray started with ``workers`` CPUs, which stays up for later
batches (``ray.shutdown()`` stops it).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from tqdm import tqdm

from .job import BatchJob, Chain, solve_chunk
from .transport import PackedResults

__all__ = ["import_ray", "ray_cpus", "run_ray"]


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
    total = sum(len(chain.indices) for chunk in chunks for chain in chunk)
    with tqdm(total=total, disable=not progress, unit="target", file=sys.stderr) as bar:
        try:
            while queue or in_flight:
                while queue and len(in_flight) < workers:
                    i = queue.pop(0)
                    in_flight[task.remote(job_ref, chunks[i])] = i
                done, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in done:
                    i = in_flight.pop(ref)
                    try:
                        results = ray.get(ref)
                    except ray.exceptions.RayTaskError as exc:
                        raise exc.as_instanceof_cause() from None
                    except ray.exceptions.RayError as exc:
                        out[i] = f"lost after {retries + 1} attempt(s): {type(exc).__name__}"
                        continue
                    out[i] = results
                    bar.update(len(results))
        finally:  # an error here cancels what is still running
            for ref in in_flight:
                ray.cancel(ref, force=True)
    return [out[i] for i in range(len(chunks))]
