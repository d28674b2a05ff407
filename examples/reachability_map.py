"""Reachability map: where franka's tool reaches, with which orientations, and how well.

What it shows: :func:`pinkctl.reach.reachability_map` over a local process pool, the map
saved and loaded again, its picture, and how to read it.

* The grid covers franka's reach ball (bounds symmetric about the base's vertical axis). Each
  voxel is first tried for its position; the reachable ones are tried with the grasps of a
  workcell: tool z axis pointing down, away from the base, and sideways both ways, given in
  the voxel's radial frame (x pointing away from the base's vertical axis, z up). Queries
  are global IK, warm-started along rows of voxels; misses next to reached voxels are
  retried from those. (``orientations=6`` would spread 6 approach axes over the sphere.)
* Per voxel the map holds how many orientations were reached, the best manipulability and
  the distance to the joint limits; ``reach.q`` holds every solution (seeds for later work).
* A workcell question: which voxels at table height (z = 0.1 m) take a top-down grasp
  (tool z axis pointing down) with the wrist well inside its limits?

The run passes when the map is symmetric about the base's vertical axis (quarter turns
change at most 3 % of the voxels' counts), every reached pose checks by forward kinematics,
and the saved map loads back identically.

Run::

    python examples/reachability_map.py                 # 10 cm voxels, 2 workers
    python examples/reachability_map.py --quick          # 20 cm voxels, 2 grasps (CI)
    python examples/reachability_map.py --out out/reach  # where the .npz and .png go
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

import pinkctl
from pinkctl.ik import IKSolver
from pinkctl.reach import ReachabilityMap, plot_reachability_map, reachability_map

SYMMETRY_BAR = 0.03  # fraction of voxels whose count may change under a quarter turn
#: Tool orientations in the radial frame: columns are the tool's x, y, z axes.
GRASPS = {
    "down": np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]),
    "outward": np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]),
    "left": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]),
    "right": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),
}


@dataclass
class Result:
    """What the run measured."""

    reach: ReachabilityMap
    turn_mismatch: float
    fk_error: float
    round_trip: bool
    grasp_voxels: int

    @property
    def ok(self) -> bool:
        return self.turn_mismatch <= SYMMETRY_BAR and self.fk_error < 1e-4 and self.round_trip


def _fk_error(robot: pinkctl.PinkRobot, reach: ReachabilityMap) -> float:
    """Largest pose error of the reached poses' solutions, by forward kinematics."""
    subset = IKSolver(robot).subset
    data, fid = robot.model.createData(), robot.model.getFrameId(reach.frame)
    worst = 0.0
    for at in map(tuple, np.argwhere(reach.reached)):
        pin.framesForwardKinematics(robot.model, data, subset.parse_seed(reach.q[at], robot.q0))
        error = pin.log6(reach.target(at[:3], at[3]).actInv(data.oMf[fid])).vector
        worst = max(worst, float(np.abs(error).max()))
    return worst


def _top_down_grasps(reach: ReachabilityMap, height: float, margin: float) -> int:
    """Voxels at ``height`` reached with the tool pointing down, joints ``margin`` inside."""
    down = list(GRASPS).index("down")
    layer = reach.grid.index((reach.grid.origin[0], reach.grid.origin[1], height))[2]
    good = reach.reached[:, :, layer, down] & (reach.limit_distance[:, :, layer, down] > margin)
    return int(good.sum())


def run(*, quick: bool = False, out: Path = Path("out") / "reach_example") -> Result:
    """Compute, check, save and draw franka's map."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = pinkctl.load_pink_supported_robot("franka")
    reach = reachability_map(
        robot,
        resolution=0.2 if quick else 0.1,
        orientations=np.array(list(GRASPS.values())[: 2 if quick else 4]),
        workers=2,
    )
    count = reach.count
    turns = [((np.rot90(count, k, axes=(0, 1)) != count) & reach.queried).sum() for k in (1, 2, 3)]
    path = reach.save(out / "franka_reach.npz")
    loaded = ReachabilityMap.load(path)
    plot_reachability_map(loaded, out / "franka_reach.png")
    return Result(
        reach=reach,
        turn_mismatch=float(max(turns)) / float(reach.queried.sum()),
        fk_error=_fk_error(robot, reach),
        round_trip=bool(np.array_equal(loaded.q, reach.q, equal_nan=True)),
        grasp_voxels=_top_down_grasps(reach, height=0.1, margin=0.2),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0: the check passed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="coarse grid (smoke tests)")
    parser.add_argument("--out", type=Path, default=Path("out") / "reach_example")
    args = parser.parse_args(argv)
    result = run(quick=args.quick, out=args.out)
    print(result.reach.summary())
    print(
        f"top-down grasps at z = 0.1 m with every joint 0.2 rad inside its limits: "
        f"{result.grasp_voxels} voxels; map and picture in {args.out}"
    )
    status = "OK" if result.ok else "FAILED"
    print(
        f"reachability_map [{status}]: quarter turns change {result.turn_mismatch:.1%} of the "
        f"voxels (need <= {SYMMETRY_BAR:.0%}), FK error {result.fk_error:.1e}, "
        f"round trip {'exact' if result.round_trip else 'differs'}"
    )
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
