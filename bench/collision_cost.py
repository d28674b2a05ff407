"""What a collision model costs per control tick when no barrier reads it.

``load_pink_robot(..., build_collision_model=True)`` used to make every tick 50-300x slower
(distances computed each tick even without a barrier). Rows: the median ``forward`` time of the
default controller on a moving target, with and without the collision model, interleaved in
chunks so that machine load hits both alike, and their ratio (target: within 10 %).

Usage::

    python -m bench.collision_cost [--robots ur5 franka] [--steps 3000]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from bench.common import machine_line
from pinkctl import (
    JointState,
    PinkIKController,
    RobotState,
    SpatialState,
    load_pink_supported_robot,
)


def _controller(name: str, collision: bool) -> tuple[PinkIKController, RobotState, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_pink_supported_robot(name, build_collision_model=collision)
    names = robot.joint_names
    controller = PinkIKController(robot, names, [robot.tool_frame], dt=0.002)
    q = np.array([robot.home_positions()[n] for n in names])
    state = RobotState(joints=JointState.from_name(names, positions=(names, q)))
    assert controller.reset(state, None, 0.0)
    assert controller.configuration is not None
    tool = controller.configuration.get_transform_frame_to_world(robot.tool_frame).translation
    return controller, state, tool.copy()


def run(robots: list[str], steps: int, chunk: int = 250) -> list[dict[str, float | str]]:
    """One row per robot: medians [us] with and without the collision model, and the ratio."""
    rows: list[dict[str, float | str]] = []
    for name in robots:
        variants = {flag: _controller(name, flag) for flag in (False, True)}
        times: dict[bool, list[float]] = {False: [], True: []}
        frame = variants[False][0].tool_frame
        for start in range(0, steps, chunk):
            for flag, (controller, state, tool) in variants.items():
                for k in range(start, min(start + chunk, steps)):
                    offset = 0.05 * np.array([0.0, np.sin(0.002 * k), np.cos(0.002 * k) - 1.0])
                    target = RobotState(
                        sites=SpatialState.from_name(
                            [frame], positions=([frame], (tool + offset).reshape(1, 3))
                        )
                    )
                    t0 = time.perf_counter()
                    controller.forward(state, target, 0.002 * k)
                    times[flag].append(time.perf_counter() - t0)
        plain, with_model = (float(np.median(times[f])) * 1e6 for f in (False, True))
        rows.append(
            {
                "robot": name,
                "plain_us": plain,
                "collision_us": with_model,
                "ratio": with_model / plain,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", nargs="+", default=["ur5", "franka"])
    parser.add_argument("--steps", type=int, default=3000)
    args = parser.parse_args(argv)
    print("robot    no collision model [us]   collision model, no barrier [us]   ratio")
    for row in run(args.robots, args.steps):
        print(
            f"{row['robot']:<8} {row['plain_us']:>24.1f}   {row['collision_us']:>32.1f}   "
            f"{row['ratio']:.3f}"
        )
    print(machine_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
