"""``pinkctl reach``: a robot's reachability map, written as ``.npz`` and as a picture."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from ..errors import PinkctlWarning
from ..ik.backends import check_ray_address
from ..ik.dispatch import Backend
from ..reach import plot_reachability_map, reachability_map
from .inspect import load_robot

__all__ = ["ReachRun", "run_reach"]


@dataclass(frozen=True)
class ReachRun:
    """What ``pinkctl reach`` computes.

    Attributes:
        robot: Catalog name or description file.
        resolution: Voxel edge [m].
        orientations: Tool orientations per voxel (0: position only).
        backend: ``"local"`` or ``"ray"``.
        workers: Worker processes or Ray tasks in flight (None: every CPU).
        address: Ray cluster address, or None.
        output: Folder the map and its picture are written to.
    """

    robot: str
    resolution: float = 0.05
    orientations: int = 6
    backend: Backend = "local"
    workers: int | None = None
    address: str | None = None
    output: Path = Path("out") / "reach"


def run_reach(run: ReachRun) -> tuple[Path, Path]:
    """Compute the map of ``run``; print its summary.

    Returns:
        Paths of the map (``<robot>_reach.npz``) and of its picture (``.png``).

    Progress goes to stderr: a bar on a terminal, a line per 10 % of the targets otherwise.

    Raises:
        FileNotFoundError, ValueError: The robot does not load, or bad settings (a Ray
            address that does not answer: before anything is computed).
        ImportError: matplotlib (or Ray, with that backend) is not installed.
    """
    if run.backend == "ray":
        check_ray_address(run.address)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PinkctlWarning)
        robot = load_robot(run.robot)
    dof = len(robot.controlled_joint_names)
    if run.orientations and dof < 6:
        print(
            f"note: {robot.name} moves {dof} joints, so most full poses are out of its reach; "
            "--orientations 0 maps positions only"
        )
    reach = reachability_map(
        robot,
        resolution=run.resolution,
        orientations=run.orientations or None,
        backend=run.backend,
        workers=run.workers,
        address=run.address,
        progress=True,
    )
    stem = Path(run.output) / f"{robot.name}_reach"
    path = reach.save(stem.with_suffix(".npz"))
    picture = stem.with_suffix(".png")
    plot_reachability_map(reach, picture)
    print(reach.summary())
    return path, picture
