"""IKPool against one process: CPU-time efficiency, warm throughput, one-shot time.

The batch: franka's global IK (:meth:`pinkctl.ik.IKPool.find`, the default search options: a
count budget, so each run does the same work) on the tool poses of random configurations
within the limits: 5,000 targets (issue 27's size), 1,000 with ``--quick``.

- **one process**: the batch as :func:`~pinkctl.ik.find_ik_batch` solves it in this process
  (``workers=1``, after its input checks): :func:`~pinkctl.ik.job.run_chains` on every
  target at once, the per-target generators made for the whole batch
  (:func:`~pinkctl.ik.sampling.spawned_generators`), the poses stacked and searched row by
  row in the native kernel as a worker does (:mod:`pinkctl.ik.rows`), the rows turned into
  ``IKResult`` objects at the end. This is the fastest single-process path and the baseline
  of every headline ratio;
- **a loop of** :meth:`~pinkctl.ik.IKSolver.find`: the same queries one call each, each
  with its generator built the plain way (``default_rng(SeedSequence(0, spawn_key=(i,)))``,
  ~17 us); an extra row, what a hand-written loop costs;
- **warm pool**: a kept :class:`~pinkctl.ik.IKPool` of ``--workers`` workers, started and
  warmed before timing, as a user keeps one across calls. The arms take turns per repeat, so
  a change in the machine's load hits all alike;
- **one process beside a busy core**: the one-process batch while one worker of a second
  pool solves the batch on the other core: what the solves alone cost when both cores work,
  as the pool's do;
- **the workers' code in this process**: :func:`~pinkctl.ik.job.solve_chunk` on the packed
  chunks a pool of ``--workers`` sends (the same chunk bounds): each chunk's generators,
  its rows searched and written into its result arrays, without the processes (and without
  the stacking and the ``IKResult`` objects, which are the caller's);
- **one-shot**: a pool started, used for one batch and closed (start-up included), once,
  before the others.

Every arm solves the same queries with the same per-target generators (the answers are
compared), and nothing is cached between repeats: the solver keeps no answers, and with a
generator per target no random starts either. ``python -m bench.report`` (through
:func:`bench.peers.collect`) runs this module as it runs alone, in a fresh interpreter
(:func:`run_fresh`), so its row does not depend on what the report ran before.

Figures (the 1-minute load beside each, and the cores that were free):

- **CPU-time efficiency**: the workers' total CPU seconds for the batch (each worker reports
  its process CPU time with every reply: solves, unpickling, packing and waiting included)
  over one process's. The caller's CPU time during the batch (packing, unpacking the
  results) is printed beside it, also as a fraction of one process's. CPU time is not free
  of the machine: a query takes more CPU seconds while the other core works too (shared
  caches and memory bus, the clock), so the ratio is split in two: the solves' own cost
  with both cores busy (one process beside a busy core over one process alone) and the
  pool's cost beyond it (workers over one process beside a busy core: the pool beyond its
  code); the second part is split again into the workers' code run in this process (over
  one process) and, measured inside the workers (each reply carries its thread's CPU seconds
  in :func:`~pinkctl.ik.job.solve_chunk`), the same chunks solved there (over the same chunks
  here: the machine's price of both cores working, as the workers see it) and the rest of
  their CPU (unpickling, replying, waiting: the pool's processes and pipes themselves). On a
  loaded machine the other core is busy in every arm and the first part is near 1; on an
  idle one it is the price of using the second core at all;
- **throughput**: one process's wall time over the pool's (medians). It can reach the worker
  count only with that many free cores: the line states the cores free for the pool,
  measured during the one-process runs (the CPU share that process got plus the idle cores
  from ``/proc/stat``), and the cores the pool got ((workers' + caller's CPU) / wall);
- **expected at idle**: one process's CPU time over the pool's critical path when nothing
  else runs: the larger of the workers' CPU time shared evenly among them (the chunks are
  handed out as workers free up, the last ones of 16 targets, so at idle they finish within
  about one small chunk of each other) and all the CPU time, workers' and caller's, over the
  cores. Under load the busiest worker's CPU time (printed) exceeds the even share: the
  worker that got more of the CPU took more chunks. Beside it, the time the workers sat idle
  waiting for their next chunk after finishing one (the pool's own gaps, which the estimate
  leaves out; under load it also counts time a worker was runnable but not running while its
  next chunk was sent).

The issue's targets (issue 27): CPU-time ratio <= 1.15; throughput >= 1.8x with 2 workers
when two cores are idle. Rows, not timed tests.

Usage::

    python -m bench.pool_efficiency                     # 5000 targets, 2 workers, 5 repeats
    python -m bench.pool_efficiency --quick             # 1000 targets, 2 repeats
    python -m bench.pool_efficiency --json out.json     # the figures, also as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import pinkctl
from pinkctl.ik import IKPool, IKSolver, SearchOptions, sample_poses
from pinkctl.ik.ikpool import chunk_bounds
from pinkctl.ik.job import BatchJob, Chain, PackedTargets, pack_chunk, run_chains, solve_chunk

from .common import machine_line

__all__ = ["lines", "run", "run_fresh"]

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _idle_seconds() -> float:
    """Idle CPU seconds of the whole machine so far (all cores, ``/proc/stat``)."""
    with open("/proc/stat", encoding="ascii") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return (values[3] + values[4]) / _TICK  # idle + iowait


def _load() -> float:
    return os.getloadavg()[0]


def _one_process(solver: IKSolver, chains: list[Chain]) -> list:
    """The batch in this process, as ``find_ik_batch(workers=1)`` solves it."""
    return run_chains(solver, chains, SearchOptions(), 0)


def _loop(solver: IKSolver, poses: list) -> list:
    """The batch's queries one :meth:`IKSolver.find` call each, each generator built alone."""
    return [
        solver.find(pose, rng=np.random.default_rng(np.random.SeedSequence(0, spawn_key=(i,))))
        for i, pose in enumerate(poses)
    ]


def _chunked(job: BatchJob, packed: PackedTargets, workers: int) -> tuple[float, list]:
    """CPU seconds of the workers' code (:func:`~pinkctl.ik.job.solve_chunk` on the packed
    chunks a pool of ``workers`` sends) in this thread, and the results."""
    bounds = chunk_bounds([1] * len(packed.indices), workers)
    c0 = time.thread_time()
    replies = [solve_chunk(job, packed.rows(a, b)) for a, b in bounds]
    cpu = time.thread_time() - c0
    return cpu, [r for reply in replies for r in reply.unpack()]


def _beside_busy_core(solver: IKSolver, chains: list[Chain], other: IKPool) -> float:
    """CPU seconds of :func:`_one_process` in this thread while ``other`` (one worker) solves
    the batch twice over (it outlasts this process's batch) on another core."""
    poses = [c.targets[0] for c in chains]
    busy = threading.Thread(target=other.find, args=(poses + poses,))
    busy.start()
    c0 = time.thread_time()
    _one_process(solver, chains)
    cpu = time.thread_time() - c0
    busy.join()
    return cpu


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        x.success == y.success and x.reason == y.reason and np.array_equal(x.q_full, y.q_full)
        for x, y in zip(a, b)
    )


def _repeat(
    rows: dict[str, list[float]],
    solver: IKSolver,
    chains: list[Chain],
    pools: tuple[IKPool, IKPool, BatchJob, PackedTargets],
) -> tuple[bool, list]:
    """One turn of every arm (figures appended to ``rows``); whether all gave the same
    answers, and the pool's."""
    pool, other, job, packed = pools

    def add(**values: float) -> None:
        for key, value in values.items():
            rows.setdefault(key, []).append(value)

    idle0, t0, c0 = _idle_seconds(), time.perf_counter(), time.process_time()
    serial = _one_process(solver, chains)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    add(one_wall=wall, one_cpu=cpu, one_load=_load())
    add(idle_cores=(cpu + _idle_seconds() - idle0) / wall)  # its share + idle cores
    c0 = time.thread_time()
    looped = _loop(solver, [c.targets[0] for c in chains])
    add(loop_cpu=time.thread_time() - c0)
    add(beside_cpu=_beside_busy_core(solver, chains, other), beside_load=_load())
    chunk_cpu, chunked = _chunked(job, packed, pool.workers)
    add(chunked_cpu=chunk_cpu)
    per0, solve0 = pool._workers.worker_cpu_seconds(), pool._workers.solve_seconds
    t0, c0 = time.perf_counter(), time.process_time()
    pooled = pool.find([c.targets[0] for c in chains])
    wall, caller = time.perf_counter() - t0, time.process_time() - c0
    per = [b - a for a, b in zip(per0, pool._workers.worker_cpu_seconds())]
    add(pool_wall=wall, caller_cpu=caller, pool_cpu=sum(per), pool_load=_load())
    add(worker_solve_cpu=pool._workers.solve_seconds - solve0)
    add(busiest_cpu=max(per), cores_got=(sum(per) + caller) / wall)
    add(gaps=pool._workers.gap_seconds)
    same = _same(serial, pooled) and _same(serial, chunked) and _same(serial, looped)
    return same, pooled


def run(targets: int = 5000, workers: int = 2, repeats: int = 5) -> dict[str, Any]:
    """Time the settings of the module docstring; medians and ratios."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = pinkctl.load_pink_supported_robot("franka")
    poses = sample_poses(robot, targets, rng=1)
    solver = IKSolver(robot)
    chains = [Chain(indices=(i,), targets=(pose,)) for i, pose in enumerate(poses)]
    _one_process(solver, chains[:50])  # warm this process's caches (untimed)
    load0, t0 = _load(), time.perf_counter()
    with IKPool(robot, workers=workers) as cold:  # one-shot: start-up included
        cold.find(poses)
    one_shot = {"one_shot_s": time.perf_counter() - t0, "one_shot_load": load0}
    rows: dict[str, list[float]] = {}
    with IKPool(robot, workers=workers) as pool, IKPool(robot, workers=1) as other:
        start_load = _load()
        started = pool.start_seconds  # waits until every worker is warm
        pool.find(poses[:50])
        other.find(poses[:50])
        job, packed = pool.job(SearchOptions(), 0), pack_chunk(chains)
        assert isinstance(packed, PackedTargets)
        solve_chunk(job, packed.rows(0, 50))  # loads the workers' solver here (untimed)
        for _ in range(repeats):
            same = _repeat(rows, solver, chains, (pool, other, job, packed))
            success = float(np.mean([r.success for r in same[1]])) * 100.0
    med = {key: float(np.median(values)) for key, values in rows.items()}
    cores = os.cpu_count() or 1
    critical = max(med["pool_cpu"] / workers, (med["pool_cpu"] + med["caller_cpu"]) / cores)
    return {
        **med,
        **one_shot,
        "targets": targets,
        "workers": workers,
        "repeats": repeats,
        "cores": cores,
        "start_s": started,
        "start_load": start_load,
        "same_answers": same[0],
        "success_pct": success,
        "cpu_ratio": med["pool_cpu"] / med["one_cpu"],
        "busy_core_ratio": med["beside_cpu"] / med["one_cpu"],
        "pool_own_ratio": med["pool_cpu"] / med["beside_cpu"],
        "chunked_ratio": med["chunked_cpu"] / med["one_cpu"],
        "loop_ratio": med["loop_cpu"] / med["one_cpu"],
        "caller_ratio": med["caller_cpu"] / med["one_cpu"],
        "worker_solve_ratio": med["worker_solve_cpu"] / med["chunked_cpu"],
        "worker_own_ratio": (med["pool_cpu"] - med["worker_solve_cpu"]) / med["one_cpu"],
        "throughput": med["one_wall"] / med["pool_wall"],
        "one_shot_ratio": med["one_wall"] / one_shot["one_shot_s"],
        "idle_expected": med["one_cpu"] / critical,
        "load": _load(),
    }


def lines(r: dict[str, Any]) -> list[str]:
    """The figures of :func:`run`, one line each, with the load beside every figure."""

    def load(key: str) -> str:
        return f"1-min load {r[key]:.2f}, {r['cores']} cores"

    cpu_ok = "MET" if r["cpu_ratio"] <= 1.15 else "MISSED"
    tp_ok = "MET" if r["throughput"] >= 1.8 else "MISSED"
    if r["idle_cores"] < r["workers"] - 0.2:
        tp_ok += f" (only {r['idle_cores']:.1f} cores were free: not a test of the target)"
    starts = ", ".join(f"{s:.2f}" for s in r["start_s"])
    n, w = r["targets"], r["workers"]
    return [
        f"batch: {n} franka targets, global IK, default count budget, {r['repeats']} repeats, "
        f"{w} workers; answers equal one process's: {r['same_answers']}; "
        f"success {r['success_pct']:.1f} %",
        f"worker start (import, robot loaded, one target solved): {starts} s "
        f"({load('start_load')})",
        f"CPU time: workers {r['pool_cpu']:.3f} s vs one process (find_ik_batch's in-process "
        f"path) {r['one_cpu']:.3f} s = {r['cpu_ratio']:.3f}x ({load('pool_load')}); caller "
        f"during the pooled batch {r['caller_cpu']:.3f} s = {r['caller_ratio']:.3f}x -> {cpu_ok}",
        f"a loop of IKSolver.find, each generator built alone: {r['loop_cpu']:.3f} s = "
        f"{r['loop_ratio']:.3f}x one process ({load('one_load')})",
        f"CPU time split: one process beside a busy core (a worker solving the batch on the "
        f"other core) {r['beside_cpu']:.3f} s = {r['busy_core_ratio']:.3f}x one process alone "
        f"(what both cores working costs the solves themselves); the pool beyond that "
        f"{r['pool_own_ratio']:.3f}x ({load('beside_load')})",
        f"of which: the workers' code in this process (solve_chunk on the pool's packed "
        f"chunks) {r['chunked_cpu']:.3f} s = {r['chunked_ratio']:.3f}x one process; in the "
        f"workers (their own clocks) solve_chunk {r['worker_solve_cpu']:.3f} s = "
        f"{r['worker_solve_ratio']:.3f}x the same chunks here, and the rest (unpickling, "
        f"replies, waiting) {r['pool_cpu'] - r['worker_solve_cpu']:.3f} s = "
        f"{r['worker_own_ratio']:.3f}x one process ({load('pool_load')})",
        f"throughput, warm pool: {w} workers {n / r['pool_wall']:.0f} targets/s vs one process "
        f"{n / r['one_wall']:.0f} targets/s = {r['throughput']:.2f}x ({load('pool_load')}; "
        f"{r['idle_cores']:.1f} cores free for the pool, it got {r['cores_got']:.2f}) -> {tp_ok}",
        f"expected at idle: {r['idle_expected']:.2f}x (one process's CPU {r['one_cpu']:.3f} s "
        f"over the pool's critical path: workers' CPU per worker {r['pool_cpu'] / w:.3f} s "
        f"(busiest {r['busiest_cpu']:.3f} s), all CPU over {r['cores']} cores "
        f"{(r['pool_cpu'] + r['caller_cpu']) / r['cores']:.3f} s); workers idle between "
        f"chunks {r['gaps'] * 1e3:.1f} ms in all ({load('pool_load')})",
        f"one-shot (pool started, one batch, closed): {r['one_shot_s']:.2f} s = "
        f"{n / r['one_shot_s']:.0f} targets/s, {r['one_shot_ratio']:.2f}x one process "
        f"({load('one_shot_load')})",
    ]


def run_fresh(targets: int = 5000, workers: int = 2, repeats: int = 5) -> dict[str, Any]:
    """:func:`run` in a fresh interpreter (``python -m bench.pool_efficiency``): the figures
    of the module run alone, whatever the calling process ran before."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "pool.json"
        command = [sys.executable, "-m", "bench.pool_efficiency", "--json", str(out)]
        command += ["--targets", str(targets), "--workers", str(workers)]
        command += ["--repeats", str(repeats)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        root = Path(__file__).resolve().parents[1]
        subprocess.run(command, check=True, cwd=root, env=env, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=None, help="default 5000 (quick: 1000)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=None, help="default 5 (quick: 2)")
    parser.add_argument("--quick", action="store_true", help="1000 targets, 2 repeats")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    targets = args.targets or (1000 if args.quick else 5000)
    repeats = args.repeats or (2 if args.quick else 5)
    result = run(targets, args.workers, repeats)
    if args.json is not None:
        args.json.write_text(json.dumps(result), encoding="utf-8")
    print("\n".join(f"- {line}" for line in lines(result)))
    print(f"Machine: {machine_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
