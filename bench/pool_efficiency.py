"""IKPool against one process: CPU-time efficiency, throughput and the workers' start.

The batch: franka's global IK (:meth:`pinkctl.ik.IKPool.find`, the default search options: a
count budget, so each run does the same work) on the tool poses of random configurations
within the limits. Per repeat, the settings take turns (so a change in the machine's load hits
both alike):

- **one process**: the same queries in this process (``find_ik_batch`` with one worker);
- **pool**: a kept :class:`~pinkctl.ik.IKPool` of ``--workers`` workers (started once, before
  timing; its start time per worker is printed).

Figures:

- **CPU-time efficiency**: the workers' total CPU seconds for the batch (user + system, read
  from ``/proc/PID/stat`` before and after: IPC, unpickling and packing included) over one
  process's CPU seconds for the same batch. A shared machine stretches wall times but hardly
  CPU times, so this ratio says what the pool costs beyond the solves. The caller's own CPU
  time during a pooled batch (splitting, packing, unpacking the results) is printed beside it.
- **throughput**: one process's wall time over the pool's (medians of the repeats). It can
  reach the worker count only with that many free cores: the line states the 1-minute load
  and the cores free for the pool, measured from ``/proc/stat`` during the one-process runs
  (that process's core plus the idle ones).

The issue's targets (issue 27): CPU-time ratio <= 1.15; throughput >= 1.8x with 2 workers
when two cores are idle. Rows, not timed tests.

Usage::

    python -m bench.pool_efficiency                     # 4000 targets, 2 workers, 5 repeats
    python -m bench.pool_efficiency --targets 1000 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any

import numpy as np

import pinkctl
from pinkctl.ik import IKPool, find_ik_batch, sample_poses

from .common import machine_line

__all__ = ["run"]

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def _idle_seconds() -> float:
    """Idle CPU seconds of the whole machine so far (all cores, ``/proc/stat``)."""
    with open("/proc/stat", encoding="ascii") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return (values[3] + values[4]) / _TICK  # idle + iowait


def run(targets: int = 4000, workers: int = 2, repeats: int = 5) -> dict[str, Any]:
    """Time the settings of the module docstring; medians and ratios."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = pinkctl.load_pink_supported_robot("franka")
    poses = sample_poses(robot, targets, rng=1)
    pool = IKPool(robot, workers=workers)
    try:
        started = pool.start_seconds
        pool.find(poses[:50])  # every worker loads the robot (untimed)
        find_ik_batch(robot, poses[:50])
        pids = [w.process.pid for w in pool._workers._workers]
        one_wall, one_cpu, pool_wall, pool_cpu, caller_cpu, idle_cores = [], [], [], [], [], []
        for _ in range(repeats):
            idle0, t0, c0 = _idle_seconds(), time.perf_counter(), time.process_time()
            serial = find_ik_batch(robot, poses)
            wall = time.perf_counter() - t0
            one_wall.append(wall)
            one_cpu.append(time.process_time() - c0)
            # cores left to a pool: this process's one plus the idle ones
            idle_cores.append(1.0 + (_idle_seconds() - idle0) / wall)
            before = [_cpu_of(pid) for pid in pids]
            t0, c0 = time.perf_counter(), time.process_time()
            pooled = pool.find(poses)
            pool_wall.append(time.perf_counter() - t0)
            caller_cpu.append(time.process_time() - c0)
            pool_cpu.append(sum(_cpu_of(pid) for pid in pids) - sum(before))
        same = all(
            a.success == b.success and np.array_equal(a.q_full, b.q_full)
            for a, b in zip(serial, pooled)
        )
        success = float(np.mean([r.success for r in pooled])) * 100.0
    finally:
        pool.close()
    med = {
        "one_wall_s": float(np.median(one_wall)),
        "one_cpu_s": float(np.median(one_cpu)),
        "pool_wall_s": float(np.median(pool_wall)),
        "pool_cpu_s": float(np.median(pool_cpu)),
        "caller_cpu_s": float(np.median(caller_cpu)),
        "idle_cores": float(np.median(idle_cores)),
    }
    return {
        **med,
        "targets": targets,
        "workers": workers,
        "repeats": repeats,
        "start_s": started,
        "same_answers": same,
        "success_pct": success,
        "cpu_ratio": med["pool_cpu_s"] / med["one_cpu_s"],
        "throughput": med["one_wall_s"] / med["pool_wall_s"],
        "load": os.getloadavg()[0],
    }


def lines(r: dict[str, Any]) -> list[str]:
    """The figures of :func:`run`, one line each, with the load beside every figure."""
    load = f"1-min load {r['load']:.2f}, {os.cpu_count()} cores"
    cpu_ok = "MET" if r["cpu_ratio"] <= 1.15 else "MISSED"
    tp_ok = "MET" if r["throughput"] >= 1.8 else "MISSED"
    if r["idle_cores"] < r["workers"] - 0.2:
        tp_ok += f" (only {r['idle_cores']:.1f} cores were free: not a test of the target)"
    starts = ", ".join(f"{s:.2f}" for s in r["start_s"])
    n = r["targets"]
    return [
        f"batch: {n} franka targets, global IK, default count budget, {r['repeats']} repeats; "
        f"answers equal one process's: {r['same_answers']}; success {r['success_pct']:.1f} %",
        f"worker start: {starts} s ({load} while they started)",
        f"CPU time: workers {r['pool_cpu_s']:.3f} s vs one process {r['one_cpu_s']:.3f} s "
        f"= {r['cpu_ratio']:.3f}x ({load}); caller during the pooled batch "
        f"{r['caller_cpu_s']:.3f} s -> {cpu_ok}",
        f"throughput: {r['workers']} workers {n / r['pool_wall_s']:.0f} targets/s vs one process "
        f"{n / r['one_wall_s']:.0f} targets/s = {r['throughput']:.2f}x ({load}; "
        f"{r['idle_cores']:.1f} cores free for the pool) -> {tp_ok}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=4000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    result = run(args.targets, args.workers, args.repeats)
    print("\n".join(f"- {line}" for line in lines(result)))
    print(f"Machine: {machine_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
