"""A loop of ``find_ik`` calls against the same loop on one prebuilt ``IKSolver``.

``find_ik`` reuses a cached solver (:mod:`pinkctl.ik.cache`), so the two loops should cost
the same. Franka, targets from uniformly drawn configurations, both calls interleaved per
target (same target, same seed; which goes first alternates), medians and totals, load printed.

Usage::

    python -m bench.ik_cache              # 1,000 targets
    python -m bench.ik_cache --targets 200
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pinocchio as pin

import pinkctl
from pinkctl.ik import IKSolver, clear_solver_cache, find_ik

from .common import machine_line


def run(n_targets: int, seed: int = 0) -> dict[str, float]:
    """Per-call times [us] of both loops (medians, totals) and their ratio."""
    robot = pinkctl.load_pink_supported_robot("franka")
    model, data = robot.model, robot.model.createData()
    frame = model.getFrameId(robot.tool_frame)
    rng = np.random.default_rng(seed)
    clear_solver_cache()
    solver = IKSolver(robot)
    times: dict[str, list[float]] = {"find_ik": [], "IKSolver.find": []}
    for k in range(n_targets):
        pin.framesForwardKinematics(
            model, data, rng.uniform(model.lowerPositionLimit, model.upperPositionLimit)
        )
        target = data.oMf[frame].copy()
        calls = {
            "find_ik": lambda target: find_ik(robot, target),
            "IKSolver.find": lambda target: solver.find(target),
        }
        order = list(calls) if k % 2 == 0 else list(calls)[::-1]  # neither always goes first
        for name in order:
            t0 = time.perf_counter()
            calls[name](target)
            times[name].append(time.perf_counter() - t0)
    out = {}
    for name, values in times.items():
        out[f"{name} median us"] = 1e6 * float(np.median(values))
        out[f"{name} total ms"] = 1e3 * float(np.sum(values))
    out["ratio (totals)"] = out["find_ik total ms"] / out["IKSolver.find total ms"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=1000)
    args = parser.parse_args()
    for key, value in run(args.targets).items():
        print(f"{key}: {value:.3f}")
    print(machine_line())


if __name__ == "__main__":
    main()
