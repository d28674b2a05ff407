"""Collision-free global IK: success, answers in collision and time, against the collision-blind
search, on TRAC-IK-protocol targets.

Protocol: targets are the tool poses of configurations drawn uniformly within the joint limits
and kept only when they keep the 1 cm margin from the floor and between the robot's own
links (so a collision-free answer exists); every query starts from the nominal configuration
(the middle of each range); success is every axis within 1e-5; the search budget is the
library's default (1,000 residual evaluations, deterministic, ``rng`` = the target's index).
Robots: franka and ur5 (bundled), and the PR2's right arm (example-robot-data's URDF with its
SRDF). Each robot's variants run interleaved target by target (the order rotating), in one
process, each on its own prebuilt :class:`~pinkctl.ik.IKSolver`:

- ``blind``: ``world=World(), self_collision=False`` (nothing checked: the search as it was);
- ``blind + final filter``: the blind answer, counted a success only when it keeps the
  margin (the time includes that one check, by the default solver's collision check);
- ``self-collision``: ``world=World()`` (self pairs only, the setting of issue 25's figures);
- ``default``: ``IKSolver(robot)`` (self pairs and the floor: what ``find_ik`` does);
- ``default, margin 0``: the same with ``collision_margin=0`` (answers may touch, never
  penetrate).

Columns: success; answers closer than the margin ("in coll."), of them with a self pair
("(self)"), answers in penetration ("(<0)", distance below 0); mean residual evaluations
(local-solve iterations) per query; mean and median time per query; the mean's ratio to
``blind``.

Each query runs ``--repeats`` times (default 3, interleaved with the other variants) and its
time is the fastest of them: the search is deterministic, so the repeats do the same work and
the minimum removes what other processes on a busy machine add.

"In collision" is measured independently by :class:`~pinkctl.world.CollisionScene` (floor and
self pairs, margin 1 cm; a pair close at home: the smaller margin the IK keeps for it,
``CollisionCheck.relaxed``, see docs/ik.md). Time ratios are of the mean time per query
against ``blind``.

Usage::

    python -m bench.ik_collision                  # 1,000 targets per robot
    python -m bench.ik_collision --targets 200 --robots franka
"""

from __future__ import annotations

import argparse
import gc
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

import pinkctl
from bench.common import machine_line
from pinkctl import CollisionScene, World
from pinkctl.ik import IKSolver

MARGIN = 0.01
TOLERANCE = 1e-5
ROBOTS = ("franka", "ur5", "pr2")


def load(name: str) -> pinkctl.PinkRobot:
    """A bundled robot, or the PR2 with its right arm controlled (example-robot-data)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name != "pr2":
            return pinkctl.load_pink_supported_robot(name)
        robots = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data"
        folder = robots / "robots" / "pr2_description"
        return pinkctl.load_pink_robot(
            folder / "urdf" / "pr2.urdf",
            srdf_path=folder / "srdf" / "pr2.srdf",
            config={"planning_group": "right_arm", "tool_frame": "r_gripper_tool_frame"},
        )


def targets_of(
    robot: pinkctl.PinkRobot, solver: IKSolver, scene: CollisionScene, n: int, seed: int
) -> tuple[list[pin.SE3], int]:
    """``n`` tool poses of collision-free configurations, and how many were drawn."""
    rng = np.random.default_rng(seed)
    data = robot.model.createData()
    frame = robot.model.getFrameId(solver.frame)
    targets: list[pin.SE3] = []
    drawn = 0
    while len(targets) < n:
        q = solver.subset.sample(rng, robot.q0)
        drawn += 1
        if scene.in_collision(q, MARGIN):
            continue
        pin.framesForwardKinematics(robot.model, data, q)
        targets.append(data.oMf[frame].copy())
    return targets, drawn


def robot_rows(name: str, n: int, seed: int, repeats: int = 3) -> tuple[list[dict[str, Any]], str]:
    """One row per variant on one robot, and a line on the targets."""
    robot = load(name)
    scene = CollisionScene(robot, World.for_robot(robot))  # the reference: floor + self
    tol = {"position_tolerance": TOLERANCE, "orientation_tolerance": TOLERANCE}
    blind = IKSolver(robot, world=World(), self_collision=False, **tol)
    self_only = IKSolver(robot, world=World(), **tol)
    default = IKSolver(robot, **tol)
    touching = IKSolver(robot, collision_margin=0.0, **tol)
    targets, drawn = targets_of(robot, default, scene, n, seed)
    nominal = default.subset.middle(robot.q0)

    check = default.collision
    assert check is not None
    # pairs close at home keep half their home clearance, or are not checked (docs/ik.md)
    relaxed = {(a, b): kept for a, b, kept in check.relaxed}

    def filtered(target: pin.SE3, i: int) -> tuple[bool, float, np.ndarray, int]:
        result = blind.find(target, seed=nominal, rng=i)
        t0 = time.perf_counter()
        free = result.success and check.accepts(result.q_full)
        return free, result.time_s + time.perf_counter() - t0, result.q_full, result.iterations

    def plain(solver: IKSolver) -> Callable[[pin.SE3, int], tuple[bool, float, np.ndarray, int]]:
        def run(target: pin.SE3, i: int) -> tuple[bool, float, np.ndarray, int]:
            result = solver.find(target, seed=nominal, rng=i)
            return result.success, result.time_s, result.q_full, result.iterations

        return run

    variants = {
        "blind": plain(blind),
        "blind + final filter": filtered,
        "self-collision": plain(self_only),
        "default (self + floor)": plain(default),
        "default, margin 0": plain(touching),
    }
    for run in variants.values():  # warm-up
        run(targets[0], 0)
    # the robots, solvers and targets out of the collector's way: a full collection during a
    # timed query of the Python path (the PR2) cost more than the query itself
    gc.collect()
    gc.freeze()
    records: dict[str, list[tuple[bool, float, bool, bool, bool, int]]] = {k: [] for k in variants}
    names = list(variants)
    for i, target in enumerate(targets):
        fastest = dict.fromkeys(names, np.inf)
        answers: dict[str, tuple[bool, np.ndarray, int]] = {}
        for r in range(repeats):
            for k in range(len(names)):
                label = names[(i + k + r) % len(names)]
                success, elapsed, q, iterations = variants[label](target, i)
                fastest[label] = min(fastest[label], elapsed)
                answers[label] = (success, q, iterations)
        for label in names:
            success, q, iterations = answers[label]
            hits = [
                h
                for h in (scene.pairs_within(q, MARGIN) if success else [])
                if h.distance < relaxed.get((h.pair.a, h.pair.b), MARGIN)
            ]
            self_hit = any(h.pair.kind == "self" for h in hits)
            deep = any(h.distance < 0.0 for h in hits)
            records[label].append((success, fastest[label], bool(hits), self_hit, deep, iterations))
    blind_mean = float(np.mean([r[1] for r in records["blind"]]))
    rows = []
    for label, rec in records.items():
        a = np.array(rec, dtype=float)
        rows.append(
            {
                "robot": name,
                "variant": label,
                "targets": len(rec),
                "success_pct": 100.0 * a[:, 0].mean(),
                "collision_pct": 100.0 * a[:, 2].mean(),
                "self_collision_pct": 100.0 * a[:, 3].mean(),
                "penetration_pct": 100.0 * a[:, 4].mean(),
                "iterations": a[:, 5].mean(),
                "mean_ms": 1e3 * a[:, 1].mean(),
                "p50_ms": 1e3 * float(np.median(a[:, 1])),
                "ratio": a[:, 1].mean() / blind_mean,
            }
        )
    kept = 100.0 * len(targets) / drawn
    note = f"{name}: {len(targets)} targets ({kept:.0f} % of uniform draws collision-free)"
    if relaxed:
        pairs = ", ".join(
            f"{a}-{b} {m * 1e3:.1f} mm" if np.isfinite(m) else f"{a}-{b} not checked"
            for (a, b), m in relaxed.items()
        )
        note += f"; pairs close at home keep less than the margin: {pairs}"
    return rows, note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=ROBOTS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(machine_line())
    header = (
        f"{'robot':<7} {'variant':<24} {'success':>8} {'in coll.':>9} {'(self)':>7} "
        f"{'(<0)':>6} {'iters':>6} {'mean ms':>8} {'p50 ms':>7} {'x blind':>8}"
    )
    for name in args.robots:
        rows, note = robot_rows(name, args.targets, args.seed, args.repeats)
        print(note)
        print(header)
        for r in rows:
            print(
                f"{r['robot']:<7} {r['variant']:<24} {r['success_pct']:>7.1f}% "
                f"{r['collision_pct']:>8.1f}% {r['self_collision_pct']:>6.1f}% "
                f"{r['penetration_pct']:>5.1f}% {r['iterations']:>6.1f} "
                f"{r['mean_ms']:>8.3f} {r['p50_ms']:>7.3f} {r['ratio']:>8.2f}"
            )
    print(machine_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
