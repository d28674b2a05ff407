"""Per-tick cost of whole-body control: g1 standing (floating base, 29 joints, 35 QP variables).

Every variant holds both feet as contacts, keeps the CoM 5 cm inside their support polygon and
moves the left hand on a 5 cm circle (period 2 s) while the right hand is held; dt = 10 ms,
motion limits off, the command fed back as the next estimate (a kinematic loop: only the
controller is timed). Variants, interleaved in chunks of 50 ticks so that machine load hits
them alike:

- **weighted**: one QP; hands, CoM (cost 1) and posture weighted, contacts and support as rows;
- **cascade, contacts as rows**: ``[["com"], ["frame", hand], ["posture"]]``;
- **cascade**: ``[["contacts"], ["com"], ["frame", hand], ["posture"]]`` (contacts above
  balance above hands above posture).

Columns: median / p90 / p99 of ``forward`` [µs], ratio of medians to the weighted tick, the
largest left-hand error [mm] and foot motion [mm] along the run.

Usage (from the repository root)::

    python -m bench.whole_body              # 1000 ticks + 100 warm-up per variant
    python -m bench.whole_body --steps 300
"""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

import numpy as np
import pinocchio as pin

from pinkctl import PinkIKController, RobotState, load_pink_supported_robot
from pinkctl.core.state import JointSpace, SiteSpace

from .common import machine_line, timing_stats_us

__all__ = ["VARIANTS", "markdown", "run"]

LEFT, RIGHT = "left_rubber_hand", "right_rubber_hand"
FEET = ["left_ankle_roll_link", "right_ankle_roll_link"]
#: Variant name -> extra ``PinkIKController`` options.
VARIANTS: dict[str, dict[str, Any]] = {
    "weighted": {},
    "cascade, contacts as rows": {"priority_levels": [["com"], ["frame", RIGHT], ["posture"]]},
    "cascade": {"priority_levels": [["contacts"], ["com"], ["frame", RIGHT], ["posture"]]},
}


class _Loop:
    """One controller in its kinematic loop."""

    def __init__(self, robot: Any, options: dict[str, Any], targets: np.ndarray) -> None:
        names = robot.controlled_joint_names
        self.controller = PinkIKController(
            robot,
            names,
            [LEFT, RIGHT, *FEET],
            dt=0.01,
            integrate_from="command",
            orientation_cost=0.0,
            motion_limits=False,
            frames=[RIGHT],
            com_cost=1.0,
            contacts=FEET,
            sole=(-0.05, 0.12, -0.03, 0.03),
            support_margin=0.05,
            self_collision=False,
            **options,
        )
        self.joints, self.sites = JointSpace(names), SiteSpace([LEFT])
        self.q = np.array(
            [robot.q0[robot.model.joints[robot.model.getJointId(n)].idx_q] for n in names]
        )
        self.targets = targets
        assert self.controller.reset(RobotState(joints=self.joints.state(self.q)), None, 0.0)
        self.hand_error = self.foot = 0.0
        self.feet = [self._pose(f).copy() for f in FEET]

    def _pose(self, frame: str) -> pin.SE3:
        configuration = self.controller.configuration
        assert configuration is not None
        return configuration.get_transform_frame_to_world(frame)

    def tick(self, k: int) -> int:
        estimate = RobotState(joints=self.joints.state(self.q))
        setpoint = RobotState(sites=self.sites.state(self.targets[k : k + 1]))
        t0 = time.perf_counter_ns()
        out = self.controller.forward(estimate, setpoint, 0.01 * k)
        elapsed = time.perf_counter_ns() - t0
        assert out is not None and out.joints is not None
        self.q = np.array(out.joints.positions)
        return elapsed

    def measure(self, k: int) -> None:
        self.hand_error = max(
            self.hand_error, float(np.linalg.norm(self._pose(LEFT).translation - self.targets[k]))
        )
        for foot, pose in zip(FEET, self.feet):
            self.foot = max(
                self.foot, float(np.linalg.norm(self._pose(foot).translation - pose.translation))
            )


def run(steps: int = 1000, *, warmup: int = 100, chunk: int = 50) -> list[dict]:
    """One row per variant of :data:`VARIANTS` (module docstring)."""
    arms = load_pink_supported_robot("g1", floating_base=True)
    robot = load_pink_supported_robot(
        "g1", floating_base=True, controlled_joint_names=list(arms.model.names[2:])
    )
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    hand = data.oMf[robot.model.getFrameId(LEFT)].translation
    n = steps + warmup
    angle = 2.0 * np.pi * np.arange(n) * 0.01 / 2.0
    targets = hand + 0.05 * np.column_stack([np.zeros(n), np.sin(angle), 1.0 - np.cos(angle)])
    loops = [_Loop(robot, options, targets) for options in VARIANTS.values()]
    times = [np.zeros(n, dtype=np.int64) for _ in loops]
    gc.collect()
    gc.disable()
    try:
        for start in range(0, n, chunk):
            for loop, out in zip(loops, times):
                for k in range(start, min(start + chunk, n)):
                    out[k] = loop.tick(k)
                    if k >= warmup:
                        loop.measure(k)
    finally:
        gc.enable()
    weighted = float(np.median(times[0][warmup:]))
    return [
        {
            "table": "whole_body",
            "robot": "g1 (floating base, 29 joints)",
            "variant": name,
            "steps": steps,
            **timing_stats_us(samples[warmup:]),
            "ratio": float(np.median(samples[warmup:])) / weighted,
            "max_hand_error_mm": 1e3 * loop.hand_error,
            "max_foot_motion_mm": 1e3 * loop.foot,
        }
        for name, loop, samples in zip(VARIANTS, loops, times)
    ]


def markdown(rows: list[dict], machine: str | None = None) -> str:
    """The rows as a markdown table."""
    lines = [
        "| variant (g1 standing, 35 variables) | median [µs] | p90 [µs] | p99 [µs] "
        "| × weighted | max hand error [mm] | max foot motion [mm] |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {r['median_us']:.0f} | {r['p90_us']:.0f} | {r['p99_us']:.0f} "
            f"| {r['ratio']:.2f} | {r['max_hand_error_mm']:.2f} | {r['max_foot_motion_mm']:.3f} |"
        )
    if machine:
        lines.append(f"\nMachine: {machine}.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100)
    args = parser.parse_args(argv)
    print(markdown(run(args.steps, warmup=args.warmup), machine_line()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
