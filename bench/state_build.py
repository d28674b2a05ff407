"""What building a tick's states costs: :class:`~pinkctl.JointSpace` /
:class:`~pinkctl.SiteSpace` against ``from_name``, and reading a command back.

The Franka's 7 joints and one tool site. Every row is timed call by call, the rows taking turns
within each round (so a change in the machine's load hits all alike), garbage collector on,
fresh arrays every round as a simulator gives them; medians [µs], the timer's own cost
included. The 1-minute load is printed beside the table.

Rows:

- ``JointSpace.state(q, dq)`` and the ``RobotState`` around it (the estimate of a tick);
- ``SiteSpace.state(p, quat)`` and the ``RobotState`` around it (a pose setpoint);
- ``JointSpace.positions(command, fill=q)``: a controller's output (which leaves a joint
  alone, as the Franka's finger) back to an array;
- the same two states through ``JointState.from_name`` / ``SpatialState.from_name``.

Target (issue 27): each ``JointSpace`` / ``SiteSpace`` row at most 2 µs.

Usage::

    python -m bench.state_build                 # 20000 rounds
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

from .common import machine_line

__all__ = ["LIMIT_US", "lines", "markdown", "run"]

#: The issue's limit on a fast state row [µs].
LIMIT_US = 2.0
ROWS = {
    "joint_space": "`RobotState(joints=JointSpace.state(q, dq))`",
    "site_space": "`RobotState(sites=SiteSpace.state(p, quat))`",
    "read_back": "`JointSpace.positions(command, fill=q)` (command of 6 of 7 joints -> array)",
    "joint_from_name": "`RobotState(joints=JointState.from_name(...))` (q, dq)",
    "site_from_name": "`RobotState(sites=SpatialState.from_name(...))` (p, quat)",
}
FAST = ("joint_space", "site_space", "read_back")


def run(rounds: int = 20000) -> dict[str, Any]:
    """Median time [µs] of every row of the module docstring, and the load."""
    from pinkctl import (
        JointSpace,
        JointState,
        RobotState,
        SiteSpace,
        SpatialState,
        load_pink_supported_robot,
    )

    robot = load_pink_supported_robot("franka")
    names = [robot.model.names[j] for j in range(1, robot.model.njoints)][:7]
    sites = ["tool"]
    joints, tool = JointSpace(names), SiteSpace(sites)
    rng = np.random.default_rng(0)
    command = JointState.from_name(names, positions=(names[:6], rng.normal(size=6)))
    perf = time.perf_counter_ns
    samples = np.zeros((rounds, len(ROWS)), dtype=np.int64)
    for k in range(rounds):
        q, dq, p = rng.normal(size=7), rng.normal(size=7), rng.normal(size=(1, 3))
        quat = np.array([[1.0, 0.0, 0.0, 0.0]])
        t0 = perf()
        RobotState(joints=joints.state(q, dq))
        t1 = perf()
        RobotState(sites=tool.state(p, quat))
        t2 = perf()
        joints.positions(command, fill=q)
        t3 = perf()
        RobotState(joints=JointState.from_name(names, positions=(names, q), velocities=(names, dq)))
        t4 = perf()
        RobotState(
            sites=SpatialState.from_name(sites, positions=(sites, p), orientations=(sites, quat))
        )
        t5 = perf()
        samples[k] = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)
    medians = np.median(samples[rounds // 10 :], axis=0) * 1e-3
    out: dict[str, Any] = {key: float(v) for key, v in zip(ROWS, medians, strict=True)}
    out["rounds"] = rounds
    out["load"] = os.getloadavg()[0]
    return out


def lines(r: dict[str, Any]) -> list[str]:
    """One verdict line per fast row, the load beside each."""
    load = f"1-min load {r['load']:.2f}, {os.cpu_count()} cores"
    return [
        f"state construction, {ROWS[key]}: median {r[key]:.2f} µs (target <= {LIMIT_US:g} µs; "
        f"{load}) -> {'MET' if r[key] <= LIMIT_US else 'MISSED'}"
        for key in FAST
    ]


def markdown(r: dict[str, Any], machine: str | None = None) -> str:
    """The rows as a table, with the machine and load."""
    out = ["| building states (Franka, 7 joints, 1 site) | median µs |", "|---|---|"]
    out += [f"| {label} | {r[key]:.2f} |" for key, label in ROWS.items()]
    out += [
        "",
        f"{r['rounds']} rounds, garbage collector on. Machine: {machine or machine_line()}.",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20000)
    args = parser.parse_args(argv)
    result = run(args.rounds)
    print(markdown(result))
    print("\n".join(f"- {line}" for line in lines(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
