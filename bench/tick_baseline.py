"""The controller's tick, this tree against another pinkctl tree, in one interleaved run.

One worker process per (tree, setting) holds a Franka ``PinkIKController`` and runs its own
kinematic loop toward :mod:`bench.step_latency`'s moving target (10 cm circle at 0.25 Hz,
rolling +-0.3 rad); only ``forward`` is timed (``perf_counter_ns``, garbage collector off). The
parent hands each worker ``--chunk`` ticks in turn, round robin, so that load changes on the
machine hit every variant alike. Settings: ``default`` (the controller as a user builds it:
motion limits on, the default solver) and ``plain`` (``motion_limits=False``).

Usage (from the repository root; the baseline is any checkout's ``src`` folder)::

    python -m bench.tick_baseline --baseline /work/main/src --steps 3000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .common import machine_line

__all__ = ["main", "run"]

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {
    "default": {},
    "plain": {"motion_limits": False},
    "cascade": {"priority_levels": [["frame"], ["posture"]]},
}

_WORKER = r"""
import gc, json, sys, time
import numpy as np, pinocchio as pin
from pinkctl import JointState, PinkIKController, RobotState, SpatialState
from pinkctl import load_pink_supported_robot
options = json.loads(sys.argv[1])
robot = load_pink_supported_robot("franka")
names, frame, dt = list(robot.joint_names), robot.tool_frame, 0.005
controller = PinkIKController(robot, names, [frame], dt=dt, **options)
q = np.array([robot.home_positions()[n] for n in names])
def estimate():
    return RobotState(joints=JointState.from_name(names, positions=(names, q.copy())))
assert controller.reset(estimate(), None, 0.0)
home = controller.configuration.get_transform_frame_to_world(frame)
def target(k):
    t = k * dt
    w = 2 * np.pi * 0.25
    p = home.translation + [0.0, 0.1 * np.sin(w * t), 0.1 * (1 - np.cos(w * t))]
    r = home.rotation @ pin.rpy.rpyToMatrix(0.3 * np.sin(2 * np.pi * 0.2 * t), 0.0, 0.0)
    x, y, z, qw = pin.Quaternion(r).coeffs()
    return RobotState(sites=SpatialState.from_name(
        [frame], positions=([frame], p.reshape(1, 3)),
        orientations=([frame], np.array([[qw, x, y, z]]))))
k = 0
print("ready", flush=True)
for line in sys.stdin:
    n = int(line)
    targets = [target(k + i) for i in range(n)]
    times = []
    gc.disable()
    for i in range(n):
        est = estimate()  # outside the timed region, as the setpoints
        start = time.perf_counter_ns()
        out = controller.forward(est, targets[i], (k + i) * dt)
        times.append(time.perf_counter_ns() - start)
        q[out.joints.position_indices] = out.joints.positions
    gc.enable()
    k += n
    print(json.dumps({"times": times, "status": str(controller.status)}), flush=True)
"""


class _Worker:
    def __init__(self, src: Path, options: dict[str, Any]) -> None:
        env = {**os.environ, "PYTHONPATH": str(src), "MUJOCO_GL": "egl"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER, json.dumps(options)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(ROOT.parent),
        )
        assert self.process.stdout is not None and self.process.stdin is not None
        line = self.process.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"worker on {src} did not start: {line!r}")

    def run(self, n: int) -> list[int]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{n}\n")
        self.process.stdin.flush()
        return list(json.loads(self.process.stdout.readline())["times"])

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def run(baseline: Path, steps: int = 3000, warmup: int = 300, chunk: int = 100) -> list[dict]:
    """Median / p90 [µs] of ``forward`` per (tree, setting); rows with the ratio to the
    baseline of the same setting."""
    trees = {"this tree": ROOT / "src", "baseline": Path(baseline)}
    workers = {
        (tree, setting): _Worker(src, options)
        for tree, src in trees.items()
        for setting, options in SETTINGS.items()
    }
    samples: dict[tuple[str, str], list[int]] = {key: [] for key in workers}
    try:
        for worker in workers.values():
            worker.run(warmup)
        done = 0
        while done < steps:
            n = min(chunk, steps - done)
            for key, worker in workers.items():
                samples[key] += worker.run(n)
            done += n
    finally:
        for worker in workers.values():
            worker.close()
    rows = []
    for (tree, setting), times in samples.items():
        us = np.asarray(times) * 1e-3
        rows.append(
            {
                "tree": tree,
                "setting": setting,
                "median_us": float(np.median(us)),
                "p90_us": float(np.percentile(us, 90)),
            }
        )
    for row in rows:
        base = next(r for r in rows if r["tree"] == "baseline" and r["setting"] == row["setting"])
        row["ratio"] = row["median_us"] / base["median_us"]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="the other tree's src folder")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--chunk", type=int, default=100)
    args = parser.parse_args(argv)
    print(f"# {machine_line()}")
    print(f"{'tree':10s} {'setting':8s} {'median µs':>10s} {'p90 µs':>8s} {'x baseline':>10s}")
    for r in run(Path(args.baseline), args.steps, args.warmup, args.chunk):
        print(
            f"{r['tree']:10s} {r['setting']:8s} {r['median_us']:10.1f} {r['p90_us']:8.1f} "
            f"{r['ratio']:10.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
