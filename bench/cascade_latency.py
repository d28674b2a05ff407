"""Per-tick latency of strict priorities: a two-level cascade tick beside the single-level tick.

The problem and protocol are :mod:`bench.step_latency`'s (Franka, frame task + posture task
toward home, position and velocity limits, the anchors' moving target, dt = 5 ms, motion
limits off), timed on ``PinkIKController.forward`` with the variants interleaved in chunks:

- **single level**: the frame and posture tasks in one weighted QP (the default controller);
- **cascade**: ``priority_levels=[["frame"], ["posture"]]``, ``priority_method="cascade"``:
  two QPs, the second one under the first level's optimality as equality rows;
- **nullspace**: the same levels by null-space projection (no QP; clipped into the limits).

Columns: median / p90 / p99 of the tick [µs], the ratio of medians to the single-level tick,
and the largest tool position error along the run [mm] (every variant tracks the target; the
cascade's posture cannot pull the tool off it).

Usage (from the repository root)::

    python -m bench.cascade_latency                # 2000 ticks + 200 warm-up per variant
    python -m bench.cascade_latency --steps 300

``run(steps, warmup) -> list[dict]`` returns one row per variant.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import pinocchio as pin

from . import step_latency
from .common import machine_line, timing_stats_us

__all__ = ["VARIANTS", "markdown", "run"]

#: Variant name -> extra ``PinkIKController`` options.
VARIANTS: dict[str, dict[str, Any]] = {
    "single level": {},
    "cascade": {"priority_levels": [["frame"], ["posture"]], "priority_method": "cascade"},
    "nullspace": {"priority_levels": [["frame"], ["posture"]], "priority_method": "nullspace"},
}


def _tool_errors_mm(variant: Any, target: step_latency.MovingTarget, robot: Any) -> np.ndarray:
    model = robot.model
    data = model.createData()
    frame = model.getFrameId(robot.tool_frame)
    q = robot.q0.copy()
    index = [model.joints[model.getJointId(n)].idx_q for n in variant.controlled]
    errors = np.empty(len(variant.q_log))
    for k, row in enumerate(variant.q_log):
        q[index] = row
        pin.framesForwardKinematics(model, data, q)
        errors[k] = 1e3 * np.linalg.norm(data.oMf[frame].translation - target.positions[k])
    return errors


def run(steps: int = 2000, *, warmup: int = step_latency.WARMUP, chunk: int = 100) -> list[dict]:
    """One row per variant of :data:`VARIANTS` (module docstring)."""
    robot = step_latency._load("franka", collision=False)
    n_total = steps + warmup
    target = step_latency.moving_target(step_latency.home_tool_pose(robot), n_total)
    variants = []
    for name, options in VARIANTS.items():
        variant = step_latency.PinkctlVariant(
            robot, target, "daqp", barrier=False, n_total=n_total, controller_options=options
        )
        variant.label = name
        variants.append(variant)
    times = step_latency._time_interleaved(variants, n_total, warmup, chunk)
    single = float(np.median(times[0]))
    rows = []
    for variant, samples in zip(variants, times, strict=True):
        rows.append(
            {
                "table": "cascade_latency",
                "robot": "franka",
                "variant": variant.label,
                "steps": steps,
                "warmup": warmup,
                **timing_stats_us(samples),
                "ratio": float(np.median(samples)) / single,
                "failures": variant.failures,
                "max_tool_error_mm": float(
                    np.max(_tool_errors_mm(variant, target, robot)[warmup:])
                ),
            }
        )
    return rows


def markdown(rows: list[dict], machine: str | None = None) -> str:
    """The rows as a markdown table."""
    lines = [
        "| variant (Franka, daqp) | median [µs] | p90 [µs] | p99 [µs] | × single level "
        "| max tool error [mm] |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {r['median_us']:.1f} | {r['p90_us']:.1f} | {r['p99_us']:.1f} "
            f"| {r['ratio']:.2f} | {r['max_tool_error_mm']:.3f} |"
        )
    if machine:
        lines.append(f"\nMachine: {machine}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=step_latency.WARMUP)
    args = parser.parse_args(argv)
    print(markdown(run(args.steps, warmup=args.warmup), machine_line()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
