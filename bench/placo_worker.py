"""placo's control tick, run in placo's own environment (``.venv-placo``: placo pins Pinocchio 3.8).

Started by :mod:`bench.peers_tick` as ``.venv-placo/bin/python bench/placo_worker.py PROBLEM``
and driven chunk by chunk (:mod:`bench.peer_process`). It imports numpy and placo only (not
pinkctl, which needs Pinocchio 4). ``PROBLEM`` is an ``.npz`` file written by the bench:
``urdf``, ``frame``, ``joints`` (the controlled joints), ``home`` (their home values),
``locked`` (joints held at ``locked_values``), ``dt``, ``position_cost``,
``orientation_cost``, ``posture_cost`` and the targets ``positions`` (K, 3), ``rotations``
(K, 3, 3).

The tick (what is timed): set the frame task's target, ``KinematicsSolver.solve(True)`` (the
QP and the integration ``q += Δq``), ``RobotWrapper.update_kinematics()`` (forward
kinematics for the next tick) and the read of the commanded joint values. The problem: a
frame task (soft), a joints task towards home (soft), with weights the squares of pinkctl's
costs (placo weighs squared residuals, pink its rows), placo's joint limits and velocity
limits (the URDF's), placo's default regularisation, the floating base and the locked joints
masked.
"""

from __future__ import annotations

import gc
import importlib.metadata
import sys
import time
from pathlib import Path

import numpy as np
import placo  # type: ignore[import-not-found]

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.peer_process import serve  # noqa: E402 - after the path set-up


def main(problem_path: str) -> None:
    p = np.load(problem_path)
    joints = [str(j) for j in p["joints"]]
    robot = placo.RobotWrapper(str(p["urdf"]), placo.Flags.ignore_collisions)
    for name, value in zip(joints, p["home"], strict=True):
        robot.set_joint(name, float(value))
    for name, value in zip(p["locked"], p["locked_values"], strict=True):
        robot.set_joint(str(name), float(value))
    robot.update_kinematics()
    solver = placo.KinematicsSolver(robot)
    solver.mask_fbase(True)
    for name in p["locked"]:
        solver.mask_dof(str(name))
    solver.enable_joint_limits(True)
    solver.enable_velocity_limits(True)
    solver.dt = float(p["dt"])
    frame = str(p["frame"])
    task = solver.add_frame_task(frame, np.eye(4))
    # pink's (and pinkctl's) task costs scale the residual rows, placo's weights the squared
    # residual: the same problem takes placo weights equal to the costs squared.
    task.configure(frame, "soft", float(p["position_cost"]) ** 2, float(p["orientation_cost"]) ** 2)
    posture = solver.add_joints_task()
    posture.set_joints({name: float(v) for name, v in zip(joints, p["home"], strict=True)})
    posture.configure("posture", "soft", float(p["posture_cost"]) ** 2)
    offsets = np.array([robot.get_joint_offset(name) for name in joints])
    targets = np.tile(np.eye(4), (len(p["positions"]), 1, 1))
    targets[:, :3, :3] = p["rotations"]
    targets[:, :3, 3] = p["positions"]
    perf = time.perf_counter_ns

    def handle(request: dict) -> dict:
        times, q_log, errors = [], [], []
        gc.collect()
        gc.disable()
        try:
            for k in range(request["start"], request["stop"]):
                t0 = perf()
                task.T_world_frame = targets[k]
                solver.solve(True)
                robot.update_kinematics()
                q = robot.state.q[offsets]
                t1 = perf()
                times.append(t1 - t0)
                q_log.append(q.tolist())
                reached = robot.get_T_world_frame(frame)[:3, 3]
                errors.append(float(np.linalg.norm(reached - targets[k][:3, 3])))
        finally:
            gc.enable()
        return {"times": times, "q": q_log, "position_errors": errors}

    version = importlib.metadata.version("placo")
    serve({"placo": version, "pinocchio": importlib.metadata.version("pin")}, handle)


if __name__ == "__main__":
    main(sys.argv[1])
