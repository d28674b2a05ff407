"""Throughput of batch IK: one process, a local pool of workers, Ray on the same machine.

The batch is franka's global IK (``find_ik``, deterministic budget: 10 restarts) on the tool
poses of random configurations within the limits, so every target is reachable and each run
does the same work. Each setting solves the whole batch ``--repeats`` times, the settings
taking turns (so a change in the machine's background load hits all of them alike); the rows
give the median wall time and the targets per second, and the ratios are of medians:

- **one process**: ``workers=1``;
- **IKPool, warm**: a kept :class:`~pinkctl.ik.IKPool` (lean workers, two chunks in flight
  each, poses stacked once), started and warmed before timing: ``pool.find``;
- **local pool, warm**: a kept pool, its workers already started: the steady state of a long
  job (a reachability map keeps its pool over all its passes);
- **local pool, cold**: a pool started (``spawn``) and stopped for the batch, as
  ``find_ik_batch(workers=N)`` does on each call;
- **Ray**: ``backend="ray"`` on a local Ray started once with ``num_cpus=N`` (its workers
  started by a first, untimed batch), timed after the others, taking turns with the warm pool
  again: "Ray vs warm local pool" compares those two.

Every setting but IKPool runs the same :class:`pinkctl.ik.dispatch.Runner` call, so what
differs is only where the queries run; the checks of the targets that ``find_ik_batch`` does
first in the caller are left out of all of them alike.

The ratios need free cores: on a machine shared with other jobs, Linux shares the CPU between
sessions ("autogroups") before it shares it between one session's processes, so while another
session keeps a core busy, 2 workers get about the one core left, as 1 process does. Compare
runs by the load in their machine line.

The issue's targets: a warm pool of 2 workers at least 1.8x one process on 2 cores; Ray
within 20 % of the local pool. Rows, not timed tests.

Usage (from the repository root)::

    python -m bench.batch_throughput                    # 5000 targets, 2 workers, 5 repeats
    python -m bench.batch_throughput --quick --no-ray   # 1000 targets, 2 repeats

``run(...) -> dict`` returns the medians [s] and the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import pinkctl
from pinkctl.ik import IKOptions, IKPool, IKSolver, SearchOptions, sample_poses
from pinkctl.ik.dispatch import Execution, Runner
from pinkctl.ik.job import Chain

from .common import machine_line

__all__ = ["run"]

BUDGET = {"time_budget_ms": None, "max_restarts": 10}


def _interleaved(settings: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median wall time [s] of each setting and the median 1-minute load after it
    (``<key>_load``); the settings take turns, so a change of the machine's background load
    hits them alike. An untimed first call of each starts its workers."""
    for solve in settings.values():
        solve()
    times: dict[str, list[float]] = {key: [] for key in settings}
    loads: dict[str, list[float]] = {key: [] for key in settings}
    for _ in range(repeats):
        for key, solve in settings.items():
            t0 = time.perf_counter()
            solve()
            times[key].append(time.perf_counter() - t0)
            loads[key].append(os.getloadavg()[0])
    out = {key: float(np.median(values)) for key, values in times.items()}
    out.update({f"{key}_load": float(np.median(values)) for key, values in loads.items()})
    return out


def run(
    targets: int = 5000, workers: int = 2, repeats: int = 5, ray: bool = True
) -> dict[str, Any]:
    """Time the settings of the module docstring; medians [s] and ratios."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = pinkctl.load_pink_supported_robot("franka")
    poses = sample_poses(robot, targets, rng=0)
    row: dict[str, Any] = {"robot": "franka", "targets": targets, "workers": workers}
    solver = IKSolver(robot, IKOptions())
    chains = [Chain(indices=(i,), targets=(p,)) for i, p in enumerate(poses)]
    query = SearchOptions(**BUDGET)  # type: ignore[arg-type]

    def solve(runner: Runner) -> Any:
        return runner.solve(solver, chains, query, 0)

    def cold() -> Any:
        with Runner(Execution(workers=workers, progress=False)) as runner:
            return solve(runner)

    with (
        Runner(Execution(workers=workers, progress=False)) as pool,
        IKPool(robot, workers=workers) as ikpool,
    ):
        assert ikpool.start_seconds  # waits until its workers are warm
        settings: dict[str, Callable[[], Any]] = {
            "one_s": lambda: solve(Runner(Execution(workers=1))),
            "ikpool_s": lambda: ikpool.find(poses, rng=0, **BUDGET),  # type: ignore[arg-type]
            "warm_s": lambda: solve(pool),
            "cold_s": cold,
        }
        row.update(_interleaved(settings, repeats))
        if ray:  # after the others: Ray's threads in this process would slow "one process"
            import ray as ray_module

            ray_module.init(num_cpus=workers, include_dashboard=False, logging_level="WARNING")
            on_ray = Runner(Execution(backend="ray", workers=workers, progress=False))
            try:
                settings = {"warm_with_ray_s": settings["warm_s"], "ray_s": lambda: solve(on_ray)}
                row.update(_interleaved(settings, repeats))
            finally:
                ray_module.shutdown()
    row["ikpool_vs_one"] = row["one_s"] / row["ikpool_s"]
    row["warm_vs_one"] = row["one_s"] / row["warm_s"]
    row["cold_vs_one"] = row["one_s"] / row["cold_s"]
    if ray:
        row["ray_vs_warm"] = row["ray_s"] / row["warm_with_ray_s"]
    return row


def report(row: dict[str, Any]) -> str:
    """Markdown table of :func:`run`'s row."""
    n, w = row["targets"], row["workers"]
    lines = [
        f"franka global IK, {n} reachable targets, 10 restarts budget, medians of repeats",
        "",
        "| setting | median wall [s] | targets/s | vs one process | 1-min load |",
        "|---|---|---|---|---|",
    ]
    settings = [("one process", "one_s"), (f"IKPool, {w} workers, warm", "ikpool_s")]
    settings.append((f"local pool (Runner), {w} workers, warm", "warm_s"))
    settings.append((f"local pool, {w} workers, cold (spawn per call)", "cold_s"))
    if "ray_s" in row:
        settings.append((f"Ray, {w} workers (local cluster)", "ray_s"))
    for label, key in settings:
        ratio = row["one_s"] / row[key]
        load = row[f"{key}_load"]
        lines.append(
            f"| {label} | {row[key]:.3f} | {n / row[key]:.0f} | {ratio:.2f}x | {load:.2f} |"
        )
    lines.append("")
    lines.append(
        f"warm IKPool vs one process: {row['ikpool_vs_one']:.2f}x (target >= 1.8x with "
        f"{w} idle cores; 1-min load {row['ikpool_s_load']:.2f}, {os.cpu_count()} cores)"
    )
    if "ray_vs_warm" in row:
        lines.append(
            f"Ray vs warm local pool: {row['ray_vs_warm']:.2f}x the time (target <= 1.20x; "
            f"taking turns: Ray {row['ray_s']:.3f} s, pool {row['warm_with_ray_s']:.3f} s)"
        )
    lines.append(f"Machine: {machine_line()}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=None, help="default 5000 (quick: 1000)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=None, help="default 5 (quick: 2)")
    parser.add_argument("--quick", action="store_true", help="1000 targets, 2 repeats")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray row")
    args = parser.parse_args(argv)
    targets = args.targets or (1000 if args.quick else 5000)
    repeats = args.repeats or (2 if args.quick else 5)
    print(report(run(targets, args.workers, repeats, ray=not args.no_ray)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
