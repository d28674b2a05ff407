"""Franka's reachability map at 5 cm, checked, and a retargeted figure eight.

The map covers franka's reach ball (symmetric bounds about the base's vertical axis) with 6
tool orientations per voxel in the voxel's radial frame, on a local pool. It is then checked
the way the issue asks:

- **symmetry**: the grid is mapped onto itself by quarter turns about the base's vertical
  axis; the voxels whose orientation count changes under each turn are counted;
- **forward kinematics**: every reached pose's solution is run through FK and compared with
  its target (largest error), and checked within the joint limits;
- **holes**: a position-only map of the same robot with its arm joints free over a full
  turn; the voxels it reaches and franka does not are the holes of the joint limits. Each
  hole's unlimited solution is checked by FK and shown to break a limit;
- **save / load**: the ``.npz`` round trip and its size.

A 1,000-pose figure eight (tool rocking 0.3 rad) is then retargeted with
:func:`pinkctl.retarget_poses`: time, largest joint jump, segments.

Usage (from the repository root)::

    python -m bench.reach                               # 5 cm, 6 orientations, 2 workers
    python -m bench.reach --resolution 0.1 --picture docs/reach_franka.png

``run(...) -> dict`` returns the numbers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

import pinkctl
from pinkctl.ik import IKSolver
from pinkctl.reach import (
    ReachabilityMap,
    plot_reachability_map,
    reachability_map,
    without_joint_limits,
)

from .common import machine_line

__all__ = ["run"]


def _fk_errors(robot: pinkctl.PinkRobot, reach: ReachabilityMap) -> tuple[float, int]:
    """Largest FK error over the reached poses, and solutions outside the limits."""
    subset = IKSolver(robot).subset
    data, fid = robot.model.createData(), robot.model.getFrameId(reach.frame)
    worst, outside = 0.0, 0
    for at in map(tuple, np.argwhere(reach.reached)):
        values = reach.q[at]
        outside += int(np.any(values < subset.lower) or np.any(values > subset.upper))
        pin.framesForwardKinematics(robot.model, data, subset.parse_seed(values, robot.q0))
        error = pin.log6(reach.target(at[:3], at[3]).actInv(data.oMf[fid])).vector
        worst = max(worst, float(np.abs(error).max()))
    return worst, outside


def _holes(robot: pinkctl.PinkRobot, resolution: float, workers: int) -> dict[str, Any]:
    limited = reachability_map(robot, resolution=resolution, orientations=None, workers=workers)
    free_robot = without_joint_limits(robot)
    free = reachability_map(free_robot, resolution=resolution, orientations=None)
    holes = np.argwhere(free.reachable & ~limited.reachable)
    subset, free_subset = IKSolver(robot).subset, IKSolver(free_robot).subset
    data, fid = robot.model.createData(), robot.model.getFrameId(free.frame)
    breaking, worst = 0, 0.0
    for at in map(tuple, holes):
        values = free.q[(*at, 0)]
        breaking += int(np.any(values < subset.lower) or np.any(values > subset.upper))
        q = free_subset.parse_seed(values, robot.q0)  # not clamped into franka's limits
        pin.framesForwardKinematics(robot.model, data, q)
        worst = max(worst, float(np.linalg.norm(data.oMf[fid].translation - free.grid.centre(at))))
    heights = [float(free.grid.centre(tuple(at))[2]) for at in holes]
    return {
        "positions_limited": int(limited.reachable.sum()),
        "positions_free": int(free.reachable.sum()),
        "holes": len(holes),
        "holes_breaking_a_limit": breaking,
        "holes_fk_error": worst,
        "holes_highest_z": max(heights, default=float("nan")),
        "reached_only_with_limits": int((limited.reachable & ~free.reachable).sum()),
    }


def _figure_eight(robot: pinkctl.PinkRobot, count: int) -> dict[str, Any]:
    eight = pinkctl.FigureEightTrajectory(
        robot.tool_frame,
        (0.45, 0.0, 0.35),
        half_width=0.3,
        period=10.0,
        orientation=(0.0, 1.0, 0.0, 0.0),
        orientation_amplitude=0.3,
    )
    poses = [eight.sample(t)[:2] for t in np.linspace(0.0, eight.duration, count)]
    t0 = time.perf_counter()
    result = pinkctl.retarget_poses(robot, poses, max_jump=0.1)
    return {
        "poses": count,
        "retarget_s": time.perf_counter() - t0,
        "all_within_tolerance": bool(result.success.all()),
        "max_position_error": float(result.position_error.max()),
        "max_orientation_error": float(result.orientation_error.max()),
        "max_jump": result.max_jump,
        "segments": len(result.segments),
    }


def run(
    resolution: float = 0.05,
    orientations: int = 6,
    workers: int = 2,
    picture: str | None = None,
    poses: int = 1000,
) -> dict[str, Any]:
    """Compute and check the map, retarget the figure eight (module docstring)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = pinkctl.load_pink_supported_robot("franka")
    reach = reachability_map(
        robot, resolution=resolution, orientations=orientations, workers=workers
    )
    row: dict[str, Any] = {
        "resolution": resolution,
        "orientations": orientations,
        "workers": workers,
        "shape": reach.grid.shape,
        "voxels": reach.grid.size,
        "in_reach_ball": int(reach.queried.sum()),
        "positions_reached": int(reach.position_reached.sum()),
        "reachable": int(reach.reachable.sum()),
        "poses_queried": int(reach.position_reached.sum()) * orientations,
        "poses_reached": int(reach.reached.sum()),
        "map_s": reach.time_s,
    }
    count = reach.count
    row["turn_mismatch"] = [
        int(((np.rot90(count, k, axes=(0, 1)) != count) & reach.queried).sum()) for k in (1, 2, 3)
    ]
    row["fk_max_error"], row["outside_limits"] = _fk_errors(robot, reach)
    with tempfile.TemporaryDirectory() as folder:
        path = reach.save(Path(folder) / "franka")
        loaded = ReachabilityMap.load(path)
        row["npz_bytes"] = path.stat().st_size
        row["round_trip"] = bool(
            np.array_equal(loaded.reached, reach.reached)
            and np.array_equal(loaded.q, reach.q, equal_nan=True)
        )
    if picture:
        plot_reachability_map(reach, picture)
    row.update(_holes(robot, resolution, workers))
    row.update(_figure_eight(robot, poses))
    return row


def report(row: dict[str, Any]) -> str:
    """Human-readable summary of :func:`run`'s row."""
    nx, ny, nz = row["shape"]
    queried = row["in_reach_ball"]
    lines = [
        f"franka reachability map: {row['resolution']:g} m voxels ({nx}x{ny}x{nz} = "
        f"{row['voxels']}), {row['orientations']} orientations, {row['workers']} workers",
        f"  in the reach ball {queried}, positions reached {row['positions_reached']}, "
        f"reachable with an orientation of the set {row['reachable']}",
        f"  poses queried {row['poses_queried']}, reached {row['poses_reached']}; "
        f"{row['map_s']:.1f} s ({1e3 * row['map_s'] / max(1, row['poses_queried']):.2f} ms "
        "per pose query, positions pass included)",
        f"  quarter turns about z: voxels whose orientation count changes "
        f"{row['turn_mismatch']} of {queried} "
        f"({100 * max(row['turn_mismatch']) / max(1, queried):.2f} % at most)",
        f"  FK of every reached pose: largest error {row['fk_max_error']:.1e}, "
        f"solutions outside the limits {row['outside_limits']}",
        f"  .npz {row['npz_bytes'] / 1e6:.1f} MB, save -> load round trip "
        f"{'exact' if row['round_trip'] else 'DIFFERS'}",
        f"  joint-limit holes (position map, arm joints free over a full turn): "
        f"{row['positions_free']} positions free vs {row['positions_limited']} limited; "
        f"{row['holes']} holes, {row['holes_breaking_a_limit']} of whose free solutions break "
        f"a limit (FK error {row['holes_fk_error']:.1e}), highest at z = "
        f"{row['holes_highest_z']:.2f} m; reached only with limits: "
        f"{row['reached_only_with_limits']}",
        f"retargeted figure eight: {row['poses']} poses in {row['retarget_s']:.2f} s, "
        f"within tolerance {row['all_within_tolerance']} (position {row['max_position_error']:.1e} "
        f"m, orientation {row['max_orientation_error']:.1e} rad), largest joint jump "
        f"{row['max_jump']:.4f} rad, {row['segments']} segment(s)",
        f"Machine: {machine_line()}",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resolution", type=float, default=0.05)
    parser.add_argument("--orientations", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--picture", default=None, help="write the map's picture (PNG)")
    parser.add_argument("--poses", type=int, default=1000, help="figure-eight poses")
    args = parser.parse_args(argv)
    print(report(run(args.resolution, args.orientations, args.workers, args.picture, args.poses)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
