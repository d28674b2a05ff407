"""Tracking the demo's figure-eight: kinematic loop at 1 kHz and MuJoCo closed loop at 500 Hz.

The trajectory is the demo's (:func:`pinkctl.app.demo.build_trajectory`): a figure-eight of
0.15 m half-width in the vertical world y-z plane, period 8 s, two periods after a 1 s
ramp-in, starting at the tool's home pose with a constant orientation. Per solver:

- **kinematic, 1 kHz**: ``PinkIKController`` with its defaults (as the demo builds it),
  dt = 1 ms, whose output positions are fed straight back as the next tick's measured state
  (a perfect servo). The error of a tick is the tool pose after the tick against the target
  of that tick: what the controller leaves on the table (posture regularisation, limits,
  solver accuracy).
- **MuJoCo, 500 Hz**: :func:`pinkctl.app.demo.run_demo` (trajectory follower chained into the
  controller, which integrates its own command; gravity-compensated position servos with
  velocity feed-forward, 2 ms physics step). The error of a tick is the simulated tool pose
  one control period later against the target of the tick.

Errors: RMS and maximum of the position error [mm] and of the rotation angle between tool and
target [mrad] over the whole run (ramp included).

Usage (from the repository root)::

    python -m bench.tracking             # two periods (17 s simulated per solver and loop)
    python -m bench.tracking --quick     # one period
    python -m bench.tracking --markdown  # markdown table (README)

``run(...) -> list[dict]`` returns one row per (loop, robot, solver).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pinocchio as pin

from pinkctl import JointState, PinkIKController, RobotState
from pinkctl.app.demo import DemoConfig, build_trajectory, run_demo
from pinkctl.core.robot import load_pink_supported_robot

from .common import bench_solvers, machine_line

__all__ = ["LOOPS", "markdown", "run", "run_kinematic", "run_mujoco"]

PERIOD = 8.0  # [s]
HALF_WIDTH = 0.15  # [m]
RAMP_TIME = 1.0  # [s]
KINEMATIC_RATE = 1000.0  # [Hz]
MUJOCO_RATE = 500.0  # [Hz]
KINEMATIC = "kinematic"
MUJOCO = "mujoco"
LOOPS = (KINEMATIC, MUJOCO)
_LOOP_TITLES = {KINEMATIC: "kinematic, 1 kHz", MUJOCO: "MuJoCo, 500 Hz"}


def _rotation_angle(r1: np.ndarray, r2: np.ndarray) -> float:
    """Angle [rad] of the rotation between two rotation matrices."""
    cos = 0.5 * (float(np.trace(r1.T @ r2)) - 1.0)
    return float(np.arccos(min(1.0, max(-1.0, cos))))


def _quat_to_matrix(wxyz: np.ndarray) -> np.ndarray:
    w, x, y, z = wxyz
    return pin.Quaternion(w, x, y, z).normalized().toRotationMatrix()


def run_kinematic(
    robot_name: str = "franka",
    solver: str = "daqp",
    *,
    cycles: float = 2.0,
    duration: float | None = None,
) -> dict[str, Any]:
    """Figure-eight in a kinematic loop at 1 kHz (output fed back as the measurement).

    Args:
        robot_name: Bundled robot.
        solver: QP backend.
        cycles: Periods of the figure-eight after the ramp-in.
        duration: Run time [s]; default: the whole trajectory.

    Returns:
        A row (see :func:`run`).
    """
    robot = load_pink_supported_robot(robot_name)
    model = robot.model
    frame = robot.tool_frame or model.frames[model.nframes - 1].name
    fid = model.getFrameId(frame)
    data = model.createData()
    pin.framesForwardKinematics(model, data, robot.q0)
    start = data.oMf[fid]
    xyzw = pin.Quaternion(start.rotation).normalized().coeffs()
    trajectory = build_trajectory(
        "figure8",
        frame,
        start.translation.copy(),
        np.array([xyzw[3], xyzw[0], xyzw[1], xyzw[2]]),
        period=PERIOD,
        size=HALF_WIDTH,
        ramp_time=RAMP_TIME,
        cycles=cycles,
    )
    dt = 1.0 / KINEMATIC_RATE
    names = list(robot.joint_names)
    controller = PinkIKController(robot, names, [frame], tool_frame=frame, solver=solver, dt=dt)
    idx_q = np.array([model.joints[model.getJointId(n)].idx_q for n in names])
    controlled = list(robot.controlled_joint_names)
    cols = np.array([names.index(n) for n in controlled])
    positions = np.array(robot.q0[idx_q])

    def estimate() -> RobotState:
        return RobotState(joints=JointState.from_name(names, positions=(names, positions.copy())))

    if not controller.reset(estimate(), None, 0.0):
        raise RuntimeError(f"controller reset failed: {controller.last_error}")
    total = trajectory.duration if duration is None else min(duration, trajectory.duration)
    n_ticks = int(round(total / dt))
    pos_err = np.full(n_ticks, np.nan)
    ori_err = np.full(n_ticks, np.nan)
    tick_ns = np.zeros(n_ticks, dtype=np.int64)
    q = robot.q0.copy()
    ticks_none = 0
    for k in range(n_ticks):
        t = k * dt
        setpoint = trajectory.get_target_state(t)
        estimated = estimate()
        t0 = time.perf_counter_ns()
        desired = controller.forward(estimated, setpoint, t)
        tick_ns[k] = time.perf_counter_ns() - t0
        if desired is None or desired.joints is None:
            ticks_none += 1
        else:
            positions[cols] = desired.joints.get_positions(controlled)
        if setpoint is None or setpoint.sites is None:
            continue
        target_p = setpoint.sites.get_position(frame)
        target_o = setpoint.sites.get_orientation(frame)
        q[idx_q] = positions
        pin.framesForwardKinematics(model, data, q)
        pose = data.oMf[fid]
        if target_p is not None:
            pos_err[k] = float(np.linalg.norm(pose.translation - target_p))
        if target_o is not None:
            ori_err[k] = _rotation_angle(pose.rotation, _quat_to_matrix(np.asarray(target_o)))
    pos = pos_err[np.isfinite(pos_err)]
    ori = ori_err[np.isfinite(ori_err)]
    return _row(
        KINEMATIC,
        robot_name,
        solver,
        total,
        rms_pos=float(np.sqrt(np.mean(pos**2))) if pos.size else float("nan"),
        max_pos=float(pos.max()) if pos.size else float("nan"),
        rms_ori=float(np.sqrt(np.mean(ori**2))) if ori.size else float("nan"),
        max_ori=float(ori.max()) if ori.size else float("nan"),
        ticks=n_ticks,
        ticks_none=ticks_none,
        tick_median_us=float(np.median(tick_ns)) * 1e-3 if n_ticks else float("nan"),
    )


def run_mujoco(
    robot_name: str = "franka",
    solver: str = "daqp",
    *,
    cycles: float = 2.0,
    duration: float | None = None,
) -> dict[str, Any]:
    """The demo's MuJoCo closed loop at 500 Hz (:func:`pinkctl.app.demo.run_demo`).

    Returns:
        A row (see :func:`run`).
    """
    total = RAMP_TIME + cycles * PERIOD if duration is None else duration
    config = DemoConfig(
        robot=robot_name,
        trajectory="figure8",
        period=PERIOD,
        duration=total,
        solver=solver,
        control_rate=MUJOCO_RATE,
        size=HALF_WIDTH,
        ramp_time=RAMP_TIME,
    )
    result = run_demo(config, progress=False)
    s = result.summary
    return _row(
        MUJOCO,
        robot_name,
        solver,
        float(result.log.time[-1] - result.log.time[0]) + 1.0 / MUJOCO_RATE
        if len(result.log.time)
        else 0.0,
        rms_pos=s["rms_position_error_mm"] * 1e-3,
        max_pos=s["max_position_error_mm"] * 1e-3,
        rms_ori=s["rms_orientation_error_mrad"] * 1e-3,
        max_ori=s["max_orientation_error_mrad"] * 1e-3,
        ticks=int(s["ticks"]),
        ticks_none=int(s["ticks_none"]),
        tick_median_us=s["tick_median_us"],
        limit_violations=int(s["limit_violations"]),
    )


def _row(
    loop: str,
    robot: str,
    solver: str,
    duration: float,
    *,
    rms_pos: float,
    max_pos: float,
    rms_ori: float,
    max_ori: float,
    ticks: int,
    ticks_none: int,
    tick_median_us: float,
    limit_violations: int | None = None,
) -> dict[str, Any]:
    return {
        "table": "tracking",
        "loop": loop,
        "robot": robot,
        "solver": solver,
        "duration_s": duration,
        "rms_position_error_mm": rms_pos * 1e3,
        "max_position_error_mm": max_pos * 1e3,
        "rms_orientation_error_mrad": rms_ori * 1e3,
        "max_orientation_error_mrad": max_ori * 1e3,
        "ticks": ticks,
        "ticks_none": ticks_none,
        "tick_median_us": tick_median_us,
        "limit_violations": limit_violations,
    }


def run(
    *,
    quick: bool = False,
    robots: Sequence[str] = ("franka",),
    solvers: Sequence[str] | None = None,
    loops: Sequence[str] = LOOPS,
    duration: float | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Figure-eight tracking errors per (loop, robot, solver).

    Args:
        quick: One period instead of two.
        robots: Bundled robots.
        solvers: Solvers (default: the installed ones among daqp, quadprog, proxqp, osqp,
            clarabel).
        loops: Subset of :data:`LOOPS`.
        duration: Cut every run to this many seconds (tests).
        progress: Called with a short message before each run.

    Returns:
        Rows with keys ``table`` ("tracking"), ``loop``, ``robot``, ``solver``,
        ``duration_s``, ``rms_position_error_mm``, ``max_position_error_mm``,
        ``rms_orientation_error_mrad``, ``max_orientation_error_mrad``, ``ticks``,
        ``ticks_none``, ``tick_median_us`` and ``limit_violations`` (MuJoCo loop only).
    """
    unknown = [loop for loop in loops if loop not in LOOPS]
    if unknown:
        raise ValueError(f"unknown loops {unknown}; expected some of {LOOPS}")
    if duration is not None and not duration > 0:
        raise ValueError(f"duration must be positive [s], got {duration!r}")
    cycles = 1.0 if quick else 2.0
    rows = []
    for loop in loops:
        for robot_name in robots:
            for solver in bench_solvers(None if solvers is None else list(solvers)):
                if progress is not None:
                    progress(f"{_LOOP_TITLES[loop]} / {robot_name} / {solver}")
                runner = run_kinematic if loop == KINEMATIC else run_mujoco
                rows.append(runner(robot_name, solver, cycles=cycles, duration=duration))
    return rows


def _fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None or not np.isfinite(value) else format(value, spec)


def markdown(rows: list[dict[str, Any]], machine: str | None = None) -> str:
    """The rows as a markdown table, with the set-up and the machine."""
    out = [
        "| loop | robot | solver | RMS position mm | max position mm | RMS orientation mrad | "
        "max orientation mrad | ticks without output |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {_LOOP_TITLES[r['loop']]} | {r['robot']} | {r['solver']} | "
            f"{_fmt(r['rms_position_error_mm'], '.4f')} | "
            f"{_fmt(r['max_position_error_mm'], '.4f')} | "
            f"{_fmt(r['rms_orientation_error_mrad'], '.4f')} | "
            f"{_fmt(r['max_orientation_error_mrad'], '.4f')} | {r['ticks_none']} |"
        )
    durations = sorted({f"{r['duration_s']:.1f}" for r in rows})
    out.append("")
    out.append(
        f"Figure-eight of {HALF_WIDTH} m half-width in the vertical y-z plane, period "
        f"{PERIOD:g} s, {RAMP_TIME:g} s ramp-in, starting at the home tool pose; "
        f"{' / '.join(durations)} s per run, errors over the whole run. Kinematic: "
        "`PinkIKController` (defaults) at 1 kHz with its output fed back as the measurement, "
        "tool pose "
        "after the tick vs the tick's target. MuJoCo: `pinkctl.app.demo.run_demo` at 500 Hz "
        "(controller integrating its own command, gravity-compensated position servos with "
        "velocity feed-forward), simulated tool pose one period later vs the tick's target."
    )
    out.append("")
    out.append(f"Machine: {machine or machine_line()}.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one period instead of two")
    parser.add_argument("--robots", nargs="+", default=["franka"])
    parser.add_argument("--solvers", nargs="+", default=None)
    parser.add_argument("--loops", nargs="+", default=list(LOOPS), choices=list(LOOPS))
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)
    machine = machine_line()
    rows = run(
        quick=args.quick,
        robots=args.robots,
        solvers=args.solvers,
        loops=args.loops,
        progress=lambda msg: print(f"# {msg}", file=sys.stderr),
    )
    if args.markdown:
        print(markdown(rows, machine))
        return 0
    print(
        f"{'loop':17s} {'robot':7s} {'solver':9s} {'rms mm':>9s} {'max mm':>9s} "
        f"{'rms mrad':>9s} {'max mrad':>9s} {'none':>5s} {'tick µs':>8s}"
    )
    for r in rows:
        print(
            f"{_LOOP_TITLES[r['loop']]:17s} {r['robot']:7s} {r['solver']:9s} "
            f"{r['rms_position_error_mm']:9.4f} {r['max_position_error_mm']:9.4f} "
            f"{r['rms_orientation_error_mrad']:9.4f} {r['max_orientation_error_mrad']:9.4f} "
            f"{r['ticks_none']:5d} {r['tick_median_us']:8.1f}"
        )
    print(f"machine: {machine}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
