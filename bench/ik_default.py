"""Global IK's default budget (a count) against the former 5 ms wall-clock budget.

TRAC-IK's protocol (targets: forward kinematics of configurations drawn uniformly within
the limits; every query from the nominal configuration; 1e-5 per axis), one ``IKSolver`` per
robot, the two budgets interleaved per target, first with the machine as it is, then beside
``--busy`` CPU-bound processes. The count decides the same way on a quiet and a busy
machine; the clock does not.

Usage::

    python -m bench.ik_default                # 1,000 targets per robot, 2 busy loops
    python -m bench.ik_default --targets 200 --busy 0
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pinocchio as pin

import pinkctl
from pinkctl.ik import IKSolver
from pinkctl.ik.options import DEFAULT_SEARCH_ITERATIONS

from .common import machine_line

ROBOTS = ("franka", "ur10", "so101")
BUDGETS = {
    f"count ({DEFAULT_SEARCH_ITERATIONS} iterations, default)": {},
    "5 ms wall clock (former default)": {"time_budget_ms": 5.0, "max_iterations": None},
}


def _spin() -> None:
    while True:
        pass


@contextmanager
def busy_loops(n: int) -> Iterator[None]:
    """``n`` CPU-bound processes for the duration of the block."""
    procs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.terminate()
            p.join()


def run(n_targets: int, seed: int = 0) -> list[dict[str, object]]:
    """Success rate and mean time of each budget, per robot, interleaved per target."""
    rows = []
    for name in ROBOTS:
        robot = pinkctl.load_pink_supported_robot(name)
        position_only = len(robot.controlled_joint_names) < 6
        solver = IKSolver(robot, position_only=position_only)
        model, data = robot.model, robot.model.createData()
        frame = model.getFrameId(solver.frame)
        lower, upper = model.lowerPositionLimit, model.upperPositionLimit
        rng = np.random.default_rng(seed)
        nominal = pin.neutral(model)
        moved = np.isfinite(lower) & np.isfinite(upper)
        nominal[moved] = 0.5 * (lower[moved] + upper[moved])
        stats = {label: [0, 0.0] for label in BUDGETS}
        for _ in range(n_targets):
            q = nominal.copy()
            q[moved] = rng.uniform(lower[moved], upper[moved])
            pin.framesForwardKinematics(model, data, q)
            pose = data.oMf[frame]
            target = pose.translation.copy() if position_only else pose.copy()
            for label, budget in BUDGETS.items():
                t0 = time.perf_counter()
                result = solver.find(target, seed=nominal, **budget)  # type: ignore[arg-type]
                stats[label][1] += time.perf_counter() - t0
                stats[label][0] += bool(result.success)
        for label, (ok, seconds) in stats.items():
            rows.append(
                {
                    "robot": name,
                    "budget": label,
                    "success_pct": 100.0 * ok / n_targets,
                    "mean_ms": 1e3 * seconds / n_targets,
                }
            )
    return rows


def _print(rows: list[dict[str, object]], title: str) -> None:
    print(f"\n{title}\n| robot | budget | success % | mean ms |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['robot']} | {r['budget']} | {r['success_pct']:.2f} | {r['mean_ms']:.3f} |")
    print(machine_line())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--busy", type=int, default=2, help="busy processes in the second run")
    args = parser.parse_args()
    _print(run(args.targets), "quiet (as the machine is)")
    if args.busy:
        with busy_loops(args.busy):
            _print(run(args.targets), f"beside {args.busy} busy loops")


if __name__ == "__main__":
    main()
