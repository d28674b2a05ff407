"""What collision avoidance costs a controller's tick (issue 25: target <= 2x the free tick).

Franka, 500 Hz, a kinematic closed loop (the measured configuration is the last command)
tracking a figure-eight of 0.1 m half-width in front of the hand, in one process (the light
ticks interleaved tick by tick, the heavy ones after them, each in its own loop):

- ``free``: ``self_collision=False``, no world (the tick without avoidance), interleaved
  with the next one;
- ``self + 5 obstacles``: every SRDF-filtered self pair, the floor and 4 obstacles around the
  workspace (a box, a sphere, a capsule, a cylinder), the default margin: quiet ticks run
  compiled after the native check (:mod:`pinkctl.controllers.collision_check`);
- ``self + 5 obstacles, ball moving``: the same, the ball moving at 0.3 m/s on a 10 cm
  circle around its place on every tick (``world.move`` before the timer): the quiet ticks
  still compiled, the moved ball placed again in the native check;
- ``self + 35 obstacles, ball moving``: the same with 30 more boxes on shelves beyond the
  arm's reach (a cluttered scene with one tracked object): a move places only the moved
  obstacle again;
- ``self + 5 obstacles, Python path``: the same, every tick on the Python path with coal
  (``compiled = False``, the native check off: how the tick ran before the check);
- ``mink, detection 5 cm`` / ``1 m``: mink's ``solve_ik`` (DAQP) with
  ``CollisionAvoidanceLimit`` over the same self link pairs, on the MuJoCo model of the same
  URDF (``bench.collision``'s variant), tracking the same targets.

Prints median and p90 [us] of each tick and the ratio of medians to ``free``, with the
machine's load (a shared machine: compare ratios from one run, not absolute times).

Usage::

    python -m bench.collision_tick [--ticks 2000] [--repeats 3]

The issue's target (issue 25): ``self + 5 obstacles`` within 2x ``free`` and faster than
mink's rows.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pinocchio as pin

from bench.common import machine_line, timing_stats_us
from bench.step_latency import MovingTarget, mink
from pinkctl import PinkIKController, World, load_pink_supported_robot
from pinkctl.controllers.status import ControllerStatus
from pinkctl.core.state import JointSpace, RobotState

DT = 0.002
#: The moving ball's variant, and the ball's centre [m] (``_world``)
MOVING = "self + 5 obstacles, ball moving"
CLUTTER = "self + 35 obstacles, ball moving"
BALL = np.array([0.35, 0.45, 0.7])


def _world(robot) -> World:
    world = World()
    world.add_box("box", size=(0.1, 0.4, 0.3), position=(0.75, 0.0, 0.15))
    world.add_sphere("ball", radius=0.08, position=tuple(BALL), movable=True)
    world.add_capsule("pole", radius=0.03, length=0.8, position=(0.2, -0.5, 0.4))
    world.add_cylinder("can", radius=0.05, length=0.2, position=(0.45, -0.35, 0.1))
    return world


def _cluttered(robot) -> World:
    """:func:`_world` and 30 boxes of 10 cm on shelves 1.0-1.4 m from the base (beyond the
    arm's reach: no rows, only more pairs and pieces to follow)."""
    world = _world(robot)
    rng = np.random.default_rng(0)
    for i in range(30):
        angle, radius = rng.uniform(0.0, 2.0 * np.pi), rng.uniform(1.0, 1.4)
        where = (radius * np.cos(angle), radius * np.sin(angle), rng.uniform(0.1, 1.0))
        world.add_box(f"shelf_box_{i}", size=(0.1, 0.1, 0.1), position=where)
    return world


def _controllers(robot) -> dict[str, PinkIKController]:
    names = list(robot.controlled_joint_names)
    common = {"tool_frame": "panda_hand", "dt": DT}
    reference = PinkIKController(robot, names, ["panda_hand"], world=_world(robot), **common)
    reference.compiled = False
    reference._avoid.native_check = lambda: None  # every tick measured with coal
    return {
        "free": PinkIKController(robot, names, ["panda_hand"], self_collision=False, **common),
        "self + 5 obstacles": PinkIKController(
            robot, names, ["panda_hand"], world=_world(robot), **common
        ),
        MOVING: PinkIKController(robot, names, ["panda_hand"], world=_world(robot), **common),
        CLUTTER: PinkIKController(robot, names, ["panda_hand"], world=_cluttered(robot), **common),
        "self + 5 obstacles, Python path": reference,
    }


def _ball(k: int) -> np.ndarray:
    """The moving ball's centre at tick ``k``: 0.3 m/s on a 10 cm circle in the x-z plane."""
    angle = 0.3 * k * DT / 0.1
    return BALL + 0.1 * np.array([np.cos(angle) - 1.0, 0.0, np.sin(angle)])


def _targets(hand: pin.SE3, ticks: int) -> list[pin.SE3]:
    """The figure-eight: 0.1 m half-width in front of the hand, a 4 s period."""
    targets = []
    for k in range(ticks):
        phase = 2.0 * np.pi * k * DT / 4.0
        offset = 0.1 * np.array([0.0, np.sin(phase), np.sin(phase) * np.cos(phase)])
        targets.append(pin.SE3(hand.rotation, hand.translation + offset))
    return targets


def _mink_variants(targets: list[pin.SE3]) -> dict[str, object]:
    """mink with ``CollisionAvoidanceLimit`` over the same self pairs (``bench.collision``),
    or none when mink is not installed."""
    if mink is None:
        return {}
    from bench.collision import MINK_DETECTION, _MinkCollision
    from bench.step_latency import _peer_models

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_pink_supported_robot("franka", build_collision_model=True)
    peer = _peer_models(robot, with_mujoco=True)
    rotations = np.array([t.rotation for t in targets])
    quaternions = np.array([pin.Quaternion(r).coeffs()[[3, 0, 1, 2]] for r in rotations])
    moving = MovingTarget(np.array([t.translation for t in targets]), quaternions, rotations)
    return {
        f"mink, detection {d * 100:g} cm": _MinkCollision(
            peer, robot, moving, detection=d, n_total=len(targets)
        )
        for d in MINK_DETECTION
    }


def run(ticks: int = 2000, repeats: int = 3) -> dict[str, object]:
    """Timings [us] of each controller's tick, and how many ticks avoidance held back."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_pink_supported_robot("franka")
    controllers = _controllers(robot)
    names = list(robot.controlled_joint_names)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    hand = data.oMf[robot.model.getFrameId("panda_hand")].copy()
    targets = _targets(hand, ticks)
    peers = _mink_variants(targets)
    samples: dict[str, list[int]] = {name: [] for name in [*controllers, *peers]}
    engaged = {name: 0 for name in samples}
    # the light ticks interleaved together, the heavy ones apart (their cache misses would
    # land on the next tick's timing)
    groups = [["free", "self + 5 obstacles", MOVING, CLUTTER]]
    groups.append(["self + 5 obstacles, Python path"])
    groups.append(list(peers))
    for group in groups:
        for _ in range(repeats):
            states = {}
            for name in group:
                if name in controllers:
                    q = robot.q0[: len(names)].copy()
                    state = RobotState(joints=JointSpace(names).state(q))
                    controllers[name].reset(state, None, 0.0)
                    states[name] = q
            for k in range(ticks):
                for name in group:  # interleaved, tick by tick
                    if name in controllers:
                        controller = controllers[name]
                        if name in (MOVING, CLUTTER):
                            controller._avoid.world.move("ball", position=_ball(k))
                        start = time.perf_counter_ns()
                        states[name] = controller.step(states[name], targets[k], t=k * DT)
                        samples[name].append(time.perf_counter_ns() - start)
                        engaged[name] += controller.status is ControllerStatus.BLOCKED
                    else:
                        peer = peers[name]
                        peer.prepare(k)
                        start = time.perf_counter_ns()
                        peer.step(k)
                        samples[name].append(time.perf_counter_ns() - start)
                        peer.record(k)
    stats = {name: timing_stats_us(values) for name, values in samples.items()}
    compiled = {name: c.compiled_ticks for name, c in controllers.items()}
    return {"stats": stats, "engaged": engaged, "compiled": compiled, "ticks": ticks * repeats}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    result = run(args.ticks, args.repeats)
    print(machine_line())
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    stats = result["stats"]
    free = stats["free"]["median_us"]
    for name, row in stats.items():
        compiled = result["compiled"].get(name)
        print(
            f"{name:<33} median {row['median_us']:8.1f} us  p90 {row['p90_us']:8.1f} us  "
            f"ratio {row['median_us'] / free:6.2f}  ticks blocked {result['engaged'][name]}"
            f"/{result['ticks']}" + ("" if compiled is None else f"  compiled {compiled}")
        )


if __name__ == "__main__":
    main()
