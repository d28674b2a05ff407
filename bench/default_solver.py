"""pinkctl's default solver against the Isaac PINK extension's (OSQP), and DAQP, in one run.

The set-up of docs/isaac.md's "The default solver": the Franka (7 joints) with the
extension's controller defaults but the solver (frame task on the tool, posture task, the
URDF's limits, dt = 5 ms), a kinematic loop (each command is the next measurement) toward a
target on a 10 cm circle. The solvers run side by side, their order alternating every tick, so
the machine's load weighs on all of them alike; the first ``warmup`` ticks are not timed.

Usage (from the repository root)::

    python -m bench.default_solver              # 2000 ticks
    python -m bench.default_solver --ticks 500

``run(ticks, warmup, solvers) -> list[dict]``: one row per solver, ``median_us``, ``p90_us``
(``PinkIKController.forward``) and ``max_dq`` [rad], the largest difference of its commands
to the first solver's.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import pinocchio as pin

from pinkctl import (
    JointState,
    PinkIKController,
    RobotState,
    SpatialState,
    load_pink_supported_robot,
)

DT = 0.005  # [s]
SOLVERS = ("box", "daqp", "osqp")


def _target(frame: str, home: pin.SE3, orientation: np.ndarray, tick: int) -> RobotState:
    phase = 2.0 * np.pi * 0.25 * tick * DT
    offset = 0.1 * np.array([0.0, np.sin(phase), 1.0 - np.cos(phase)])
    return RobotState(
        sites=SpatialState.from_name(
            [frame],
            positions=([frame], (home.translation + offset)[None, :]),
            orientations=([frame], orientation),
        )
    )


def run(ticks: int = 2000, warmup: int = 100, solvers: tuple[str, ...] = SOLVERS) -> list[dict]:
    """Time ``PinkIKController.forward`` per solver (see the module docstring)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Franka configuration has no acceleration limits
        robot = load_pink_supported_robot("franka")
    model, frame = robot.model, robot.tool_frame
    assert frame is not None
    names = list(model.names[1:])
    data = model.createData()
    pin.framesForwardKinematics(model, data, robot.q0)
    home = data.oMf[model.getFrameId(frame)]
    quaternion = pin.Quaternion(home.rotation)
    orientation = np.array([[quaternion.w, quaternion.x, quaternion.y, quaternion.z]])
    start = {n: float(robot.q0[model.joints[model.getJointId(n)].idx_q]) for n in names}
    controllers, positions = {}, {}
    for solver in solvers:
        controller = PinkIKController(robot, names, [frame], solver=solver, dt=DT)
        positions[solver] = dict(start)
        values = np.array([start[n] for n in names])
        estimated = RobotState(joints=JointState.from_name(names, positions=(names, values)))
        assert controller.reset(estimated, None, 0.0), controller.last_error
        controllers[solver] = controller
    times: dict[str, list[float]] = {s: [] for s in solvers}
    commands: dict[str, list[np.ndarray]] = {s: [] for s in solvers}
    for tick in range(ticks):
        target = _target(frame, home, orientation, tick)
        for solver in solvers if tick % 2 == 0 else solvers[::-1]:
            values = np.array([positions[solver][n] for n in names])
            estimated = RobotState(joints=JointState.from_name(names, positions=(names, values)))
            begin = time.perf_counter()
            desired = controllers[solver].forward(estimated, target, (tick + 1) * DT)
            elapsed = time.perf_counter() - begin
            assert desired is not None and desired.joints is not None
            command = np.asarray(desired.joints.positions, dtype=float)
            positions[solver].update(zip(desired.joints.position_names, command, strict=True))
            commands[solver].append(command)
            if tick >= warmup:
                times[solver].append(elapsed * 1e6)
    first = np.array(commands[solvers[0]])
    return [
        {
            "solver": solver,
            "median_us": float(np.median(times[solver])),
            "p90_us": float(np.percentile(times[solver], 90)),
            "max_dq": float(np.max(np.abs(np.array(commands[solver]) - first))),
        }
        for solver in solvers
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS))
    args = parser.parse_args()
    rows = run(args.ticks, args.warmup, tuple(args.solvers))
    print(f"# {os.cpu_count()} cores, 1-min load {os.getloadavg()[0]:.1f}")
    print(f"| solver | median / p90 [µs] | largest joint difference to {rows[0]['solver']} |")
    print("|---|---|---|")
    for row in rows:
        print(
            f"| `{row['solver']}` | {row['median_us']:.1f} / {row['p90_us']:.1f} "
            f"| {row['max_dq']:.1e} rad |"
        )


if __name__ == "__main__":
    main()
