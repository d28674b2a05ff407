"""A reachability map: per voxel and tool orientation, whether IK reached it and how well.

Everything is stored per ``(i, j, k, o)`` (voxel index, orientation index); the per-voxel
views (:attr:`ReachabilityMap.reachable`, :attr:`~ReachabilityMap.count`,
:meth:`~ReachabilityMap.best`) aggregate over orientations. A map saves to and loads from
one ``.npz`` file.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..errors import InputError
from .grid import VoxelGrid
from .orientations import radial_rotation

__all__ = ["ReachabilityMap"]

_FORMAT = 1


@dataclass(frozen=True)
class ReachabilityMap:
    """Reachability of a robot's tool frame over a voxel grid.

    Attributes:
        robot: Robot name.
        frame: The tool frame solved for.
        joint_names: The moved joints (order of ``q``'s last axis).
        grid: Voxel centres, in the robot's base frame.
        base_placement: The base frame in the world (4, 4) when the map was computed.
        orientations: Tool orientations tried, ``(n, 3, 3)``; ``(0, 3, 3)`` for a
            position-only map (which has one "orientation" slot).
        radial: Orientations are in each voxel's radial frame (else in the base frame).
        queried: Voxels that were solved, ``grid.shape``; the others lie outside the reach
            ball and cannot be reached.
        position_reached: Voxels whose centre the frame reaches with some orientation,
            ``grid.shape`` (the first pass; only these are tried with each orientation).
        reached: IK succeeded, ``(*grid.shape, n)``.
        q: The solution's moved joint values [rad] or [m], ``(*grid.shape, n, dof)``; NaN
            where not reached.
        manipulability: Yoshikawa's ``sqrt(det(J Jᵀ))`` of the frame Jacobian (world-aligned,
            moved joints; position rows only in a position-only map) at the solution; NaN
            where not reached.
        limit_distance: Smallest distance of a moved joint to one of its limits at the
            solution [rad] or [m] (bounded joints only; inf if none); NaN where not reached.
        time_s: Wall-clock time of the computation [s].
    """

    robot: str
    frame: str
    joint_names: tuple[str, ...]
    grid: VoxelGrid
    base_placement: np.ndarray
    orientations: np.ndarray
    radial: bool
    queried: np.ndarray
    position_reached: np.ndarray
    reached: np.ndarray
    q: np.ndarray
    manipulability: np.ndarray
    limit_distance: np.ndarray
    time_s: float

    # ---------------------------------------------------------------- per voxel
    @property
    def position_only(self) -> bool:
        """Whether the map ignores orientation."""
        return self.orientations.shape[0] == 0

    @property
    def count(self) -> np.ndarray:
        """Orientations reached per voxel, ``grid.shape`` (int)."""
        return np.asarray(self.reached.sum(axis=-1))

    @property
    def reachable(self) -> np.ndarray:
        """Voxels where at least one orientation was reached, ``grid.shape`` (bool)."""
        return np.asarray(self.reached.any(axis=-1))

    def best(self, quantity: str) -> np.ndarray:
        """Best value of ``"manipulability"`` or ``"limit_distance"`` over the orientations
        reached, per voxel; NaN where none was reached.

        Raises:
            InputError: Another quantity name.
        """
        if quantity not in ("manipulability", "limit_distance"):
            raise InputError(
                f"quantity: expected 'manipulability' or 'limit_distance', got {quantity!r}"
            )
        values = getattr(self, quantity)
        out = np.full(self.grid.shape, np.nan)
        hit = self.reachable
        out[hit] = np.nanmax(np.where(self.reached, values, -np.inf)[hit], axis=-1)
        return out

    # ---------------------------------------------------------------- targets
    def target(self, index: tuple[int, int, int], orientation: int) -> pin.SE3:
        """The world-frame pose tried at a voxel for an orientation (identity rotation in a
        position-only map)."""
        centre = self.grid.centre(index)
        rotation = np.eye(3)
        if not self.position_only:
            rotation = self.orientations[orientation]
            if self.radial:
                rotation = radial_rotation(centre) @ rotation
        return pin.SE3(self.base_placement) * pin.SE3(rotation, centre)

    def summary(self) -> str:
        """One line: grid, voxels queried and reached, orientations, time."""
        n = max(1, self.orientations.shape[0])
        return (
            f"{self.robot}: {self.grid.shape[0]}x{self.grid.shape[1]}x{self.grid.shape[2]} "
            f"voxels at {self.grid.resolution:g} m, {int(self.queried.sum())} in reach, "
            f"{int(self.position_reached.sum())} positions reached, "
            f"{int(self.reachable.sum())} reachable, "
            + ("position only" if self.position_only else f"{n} orientations")
            + f" ({int(self.reached.sum())} poses reached), {self.time_s:.1f} s"
        )

    # ---------------------------------------------------------------- files
    def save(self, path: str | Path) -> Path:
        """Write the map to ``path`` (``.npz`` added when missing); returns the path."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if isinstance(getattr(self, f.name), np.ndarray)
        }
        np.savez_compressed(
            path,
            format=np.array(_FORMAT),
            robot=np.array(self.robot),
            frame=np.array(self.frame),
            joint_names=np.array(self.joint_names, dtype=str),
            grid_origin=self.grid.origin,
            grid_resolution=np.array(self.grid.resolution),
            grid_shape=np.array(self.grid.shape),
            radial=np.array(self.radial),
            time_s=np.array(self.time_s),
            **arrays,
        )
        return path

    @classmethod
    def load(cls, path: str | Path) -> ReachabilityMap:
        """Read a map written by :meth:`save`.

        Raises:
            FileNotFoundError: No such file.
            InputError: The file is not a reachability map of this format.
        """
        with np.load(Path(path), allow_pickle=False) as data:
            if "format" not in data or int(data["format"]) != _FORMAT:
                raise InputError(f"path: {path} is not a reachability map (format {_FORMAT})")
            shape = tuple(int(n) for n in data["grid_shape"])
            scalars = ("robot", "frame", "joint_names", "grid", "radial", "time_s")
            return cls(
                robot=str(data["robot"]),
                frame=str(data["frame"]),
                joint_names=tuple(str(n) for n in data["joint_names"]),
                grid=VoxelGrid(
                    origin=data["grid_origin"],
                    resolution=float(data["grid_resolution"]),
                    shape=(shape[0], shape[1], shape[2]),
                ),
                radial=bool(data["radial"]),
                time_s=float(data["time_s"]),
                **{f.name: data[f.name] for f in fields(cls) if f.name not in scalars},
            )
