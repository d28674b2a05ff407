"""Global IK on TRAC-IK's benchmark protocol, with plain pink and plain DLS as baselines.

Protocol (TRAC-IK README): targets are the forward kinematics of configurations drawn
uniformly within the joint limits; every query starts from the nominal configuration (the
middle of each joint range); success means every axis within 1e-5 (x, y, z in metres and the
three rotation-vector components in radians); the budget is 5 ms per query; the mean time
counts failures at the time they burned.

Tables:

1. franka and ur10, full pose: ``pinkctl find_ik`` (LM with random restarts), and in the
   same run on the same targets ``pinkctl local_ik`` (LM, no restarts), plain iterated pink
   (``pink.solve_ik`` + DAQP, FrameTask, dead-beat steps, pink's default limits, no
   restarts) and plain damped least squares (no restarts);
2. so101, position only, same protocol and baselines;
3. warm-started tracking: each solve seeded with the previous solution, targets 1 cm apart
   along a circle, fixed orientation (median and p99 time per solve).

Usage::

    python bench/ik_protocol.py                 # 10,000 targets per robot
    python bench/ik_protocol.py --targets 500   # quick run
    python bench/ik_protocol.py --markdown      # markdown tables (for the README)

``run(n_targets, seed) -> list[dict]`` returns the rows for the README tool.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

import pinkctl
from pinkctl.ik import IKSolver
from pinkctl.ik.options import MAX_ITERATIONS

BUDGET_MS = 5.0
TOLERANCE = 1e-5
#: The kinematic search, as TRAC-IK and the baselines run it: no collision check (the IK
#: checks the floor and self pairs by default; bench/ik_collision.py measures that).
KINEMATIC = {"world": pinkctl.World(), "self_collision": False}

# Fallback when a bundled robot is not available: example-robot-data URDFs.
_FALLBACK = {
    "franka": (
        "panda_description/urdf/panda.urdf",
        [f"panda_joint{i}" for i in range(1, 8)],
        "panda_hand_tcp",
    ),
    "ur10": (
        "ur_description/urdf/ur10_robot.urdf",
        [
            "shoulder_pan_joint",
            "shoulder_lift_joint",
            "elbow_joint",
            "wrist_1_joint",
            "wrist_2_joint",
            "wrist_3_joint",
        ],
        "tool0",
    ),
    "so101": (
        "so_arm_description/urdf/so101.urdf",
        ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"],
        "gripper_frame_link",
    ),
}


def example_robot_data_dir() -> Path:
    """The ``robots`` folder of the example-robot-data package."""
    try:  # pragma: no cover - depends on how example-robot-data was installed
        import example_robot_data  # type: ignore[import-not-found]

        return Path(example_robot_data.getModelPath("panda_description/urdf/panda.urdf")) / (
            "robots"
        )
    except ImportError:
        pass
    prefix = Path(pin.__file__).resolve().parents[4]  # cmeel.prefix/lib/pythonX/site-packages
    robots = prefix / "share" / "example-robot-data" / "robots"
    if not robots.is_dir():
        raise FileNotFoundError("example-robot-data robots folder not found")
    return robots


def load_arm(name: str) -> tuple[pinkctl.PinkRobot, str, str]:
    """``(robot, tool frame, source)``: the bundled robot, else example-robot-data's."""
    try:
        robot = pinkctl.load_pink_supported_robot(name)
        frame = robot.tool_frame or robot.model.frames[robot.model.nframes - 1].name
        return robot, frame, "bundled"
    except FileNotFoundError:
        rel, joints, frame = _FALLBACK[name]
        path = example_robot_data_dir() / rel
        robot = pinkctl.load_pink_robot(path, controlled_joint_names=joints)
        robot.tool_frame = frame
        return robot, frame, "example-robot-data"


def make_targets(
    robot: pinkctl.PinkRobot, frame: str, solver: IKSolver, n: int, seed: int
) -> list[pin.SE3]:
    """FK poses of configurations uniform within the moved joints' limits."""
    rng = np.random.default_rng(seed)
    data = robot.model.createData()
    fid = robot.model.getFrameId(frame)
    targets = []
    for _ in range(n):
        q = solver.subset.sample(rng, robot.q0)
        pin.framesForwardKinematics(robot.model, data, q)
        targets.append(data.oMf[fid].copy())
    return targets


def _within(
    robot: pinkctl.PinkRobot,
    data: pin.Data,
    fid: int,
    q: np.ndarray,
    target: pin.SE3,
    position_only: bool,
) -> bool:
    pin.framesForwardKinematics(robot.model, data, q)
    placement = data.oMf[fid]
    if np.abs(placement.translation - target.translation).max() > TOLERANCE:
        return False
    if position_only:
        return True
    err = pin.log3(placement.rotation @ target.rotation.T)
    return bool(np.abs(err).max() <= TOLERANCE)


def pink_baseline(
    robot: pinkctl.PinkRobot, frame: str, solver: IKSolver, position_only: bool
) -> Callable[[pin.SE3, np.ndarray], tuple[bool, float]]:
    """Plain iterated pink: ``pink.solve_ik`` (DAQP) + integrate until 1e-5 or 5 ms."""
    import pink
    from pink.tasks import FrameTask

    model = pin.Model(robot.model)  # pink decorates the model it is given
    data = model.createData()
    check = model.createData()
    fid = model.getFrameId(frame)
    cols = solver.subset.v_cols
    moved = np.zeros(model.nv, dtype=bool)
    moved[cols] = True
    task = FrameTask(frame, position_cost=1.0, orientation_cost=0.0 if position_only else 1.0)

    def run_one(target: pin.SE3, q_start: np.ndarray) -> tuple[bool, float]:
        t0 = time.perf_counter()
        deadline = t0 + BUDGET_MS * 1e-3
        configuration = pink.Configuration(model, data, q_start.copy())
        task.set_target(target)
        while True:
            if _within(robot, check, fid, configuration.q, target, position_only):
                return True, time.perf_counter() - t0
            if time.perf_counter() > deadline:
                return False, time.perf_counter() - t0
            try:
                v = pink.solve_ik(configuration, [task], 1.0, solver="daqp", safety_break=False)
            except pink.exceptions.PinkError:
                return False, time.perf_counter() - t0
            v[~moved] = 0.0
            configuration.integrate_inplace(v, 1.0)

    return run_one


def _stats(
    name: str, robot_name: str, source: str, ok: list[bool], times: list[float], table: str
) -> dict[str, Any]:
    t = np.array(times) * 1e3
    return {
        "table": table,
        "robot": robot_name,
        "source": source,
        "solver": name,
        "targets": len(ok),
        "success_pct": 100.0 * float(np.mean(ok)),
        "mean_ms": float(t.mean()),
        "p50_ms": float(np.percentile(t, 50)),
        "p99_ms": float(np.percentile(t, 99)),
    }


def protocol_rows(
    robot_name: str,
    n_targets: int,
    seed: int,
    *,
    position_only: bool = False,
    baselines: bool = True,
) -> list[dict[str, Any]]:
    """TRAC-IK protocol on one robot: find_ik and, on the same targets, the baselines."""
    robot, frame, source = load_arm(robot_name)
    table = "so101_position" if position_only else "trac_ik"
    tol = {"position_tolerance": TOLERANCE, "orientation_tolerance": TOLERANCE, **KINEMATIC}
    lm = IKSolver(robot, frame=frame, position_only=position_only, **tol)
    dls = IKSolver(robot, frame=frame, method="dls", position_only=position_only, **tol)
    targets = make_targets(robot, frame, lm, n_targets, seed)
    nominal = lm.subset.middle(robot.q0)
    goal = (lambda T: T.translation.copy()) if position_only else (lambda T: T)

    rows = []
    runs: list[tuple[str, Callable[[pin.SE3, int], tuple[bool, float]]]] = [
        (
            "pinkctl find_ik (LM + restarts)",
            lambda T, i: _res(
                lm.find(goal(T), seed=nominal, time_budget_ms=BUDGET_MS, max_iterations=None, rng=i)
            ),
        ),
    ]
    if baselines:
        big = MAX_ITERATIONS  # the largest count allowed: the time budget stops them
        runs.append(
            (
                "pinkctl local_ik (LM, no restarts)",
                lambda T, i: _res(
                    lm.solve(goal(T), seed=nominal, max_iterations=big, time_budget_ms=BUDGET_MS)
                ),
            )
        )
        runs.append(
            (
                "plain DLS (no restarts)",
                lambda T, i: _res(
                    dls.solve(goal(T), seed=nominal, max_iterations=big, time_budget_ms=BUDGET_MS)
                ),
            )
        )
        pink_one = pink_baseline(robot, frame, lm, position_only)
        runs.append(("plain pink solve_ik iterated (DAQP)", lambda T, i: pink_one(T, nominal)))
    logging.disable(logging.WARNING)  # pink logs each out-of-limits iterate of its baseline
    try:
        for name, fn in runs:
            rows.append(_time_run(name, fn, targets, robot_name, source, table))
    finally:
        logging.disable(logging.NOTSET)
    return rows


def _time_run(
    name: str,
    fn: Callable[[pin.SE3, int], tuple[bool, float]],
    targets: list[pin.SE3],
    robot_name: str,
    source: str,
    table: str,
) -> dict[str, Any]:
    """Run ``fn`` on every target (after one warm-up call) and summarise."""
    fn(targets[0], 0)  # warm up
    ok: list[bool] = []
    times: list[float] = []
    for i, target in enumerate(targets):
        success, elapsed = fn(target, i)
        ok.append(success)
        times.append(elapsed)
    return _stats(name, robot_name, source, ok, times, table)


def _res(result: Any) -> tuple[bool, float]:
    return bool(result.success), float(result.time_s)


def warm_start_rows(robot_name: str, n_solves: int, seed: int) -> list[dict[str, Any]]:
    """Tracking: targets 1 cm apart on a 10 cm circle, each solve seeded by the last one."""
    robot, frame, source = load_arm(robot_name)
    solver = IKSolver(
        robot,
        frame=frame,
        position_tolerance=TOLERANCE,
        orientation_tolerance=TOLERANCE,
        **KINEMATIC,
    )
    rng = np.random.default_rng(seed)
    data = robot.model.createData()
    fid = robot.model.getFrameId(frame)
    # Start from a reachable configuration near the middle of the ranges.
    q = solver.subset.middle(robot.q0)
    solver.subset.write(q, solver.subset.values(q) + rng.uniform(-0.3, 0.3, solver.subset.n))
    solver.subset.clamp(q)
    pin.framesForwardKinematics(robot.model, data, q)
    start = data.oMf[fid].copy()
    radius = 0.10
    n_per_turn = int(round(2 * np.pi * radius / 0.01))  # 1 cm chords
    ok: list[bool] = []
    times: list[float] = []
    seed_q = q.copy()
    for k in range(n_solves + 1):
        angle = 2 * np.pi * k / n_per_turn
        offset = radius * np.array([0.0, np.cos(angle) - 1.0, np.sin(angle)])
        target = pin.SE3(start.rotation, start.translation + offset)
        result = solver.solve(target, seed=seed_q, max_iterations=100)
        if k > 0:  # the first solve is the warm-up
            ok.append(result.success)
            times.append(result.time_s)
        seed_q = result.q_full
    t = np.array(times) * 1e6
    return [
        {
            "table": "warm_start",
            "robot": robot_name,
            "source": source,
            "solver": "pinkctl IKSolver.solve (LM, seed = previous solution)",
            "targets": len(ok),
            "success_pct": 100.0 * float(np.mean(ok)),
            "median_us": float(np.median(t)),
            "p99_us": float(np.percentile(t, 99)),
            "mean_us": float(t.mean()),
        }
    ]


def run(n_targets: int = 10_000, seed: int = 0) -> list[dict[str, Any]]:
    """All rows: TRAC-IK protocol (franka, ur10), so101 position only, warm start."""
    rows: list[dict[str, Any]] = []
    for name in ("franka", "ur10"):
        rows += protocol_rows(name, n_targets, seed)
    rows += protocol_rows("so101", n_targets, seed, position_only=True)
    for name in ("franka", "ur10"):
        rows += warm_start_rows(name, max(100, min(n_targets, 2000)), seed)
    return rows


def machine() -> str:
    """One line describing the machine and versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"pin {pin.__version__}, numpy {np.__version__}"
    )


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as markdown tables."""
    out = []
    protocol = [r for r in rows if r["table"] in ("trac_ik", "so101_position")]
    if protocol:
        out.append("| robot | goal | solver | success % | mean ms | p50 ms | p99 ms |")
        out.append("|---|---|---|---|---|---|---|")
        for r in protocol:
            goal = "position" if r["table"] == "so101_position" else "pose"
            out.append(
                f"| {r['robot']} | {goal} | {r['solver']} | {r['success_pct']:.2f} | "
                f"{r['mean_ms']:.3f} | {r['p50_ms']:.3f} | {r['p99_ms']:.3f} |"
            )
    warm = [r for r in rows if r["table"] == "warm_start"]
    if warm:
        out.append("")
        out.append(
            "| robot | warm-started tracking (1 cm steps) | success % | median µs | p99 µs |"
        )
        out.append("|---|---|---|---|---|")
        for r in warm:
            out.append(
                f"| {r['robot']} | {r['solver']} | {r['success_pct']:.2f} | "
                f"{r['median_us']:.1f} | {r['p99_us']:.1f} |"
            )
    sources = sorted({f"{r['robot']}: {r['source']}" for r in rows})
    out.append("")
    out.append(
        f"Targets per robot: {rows[0]['targets'] if rows else 0}; tolerance 1e-5 per axis; "
        f"budget {BUDGET_MS:g} ms; models: {', '.join(sources)}; {machine()}."
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=10_000, help="targets per robot")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    args = parser.parse_args(argv)
    rows = run(args.targets, args.seed)
    if args.markdown:
        print(markdown(rows))
    else:
        for r in rows:
            print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()})
        print(machine())
    return 0


if __name__ == "__main__":
    sys.exit(main())
