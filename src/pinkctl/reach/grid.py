"""The voxel grid of a reachability map, and the ball every reachable point lies in.

A grid is a regular lattice of voxel centres in the robot's base frame (``robot.base_placement``):
``origin + resolution * (i, j, k)``. Bounds are rounded outward to whole voxels, so bounds
symmetric about the base's vertical axis give a grid that the quarter turns about that axis
map onto itself.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from .._validation import positive_number
from ..core.robot import PinkRobot
from ..errors import InputError

__all__ = ["MAX_VOXELS", "VoxelGrid", "default_bounds", "reach_ball", "without_joint_limits"]


#: Largest grid a map takes [voxels]: 10 million voxels at 7 joints already hold about 1 GiB
#: of per-voxel arrays, and a finer grid was a ``MemoryError`` (or hours of IK) by surprise.
MAX_VOXELS = 10_000_000
#: Lower bound of the memory a map's arrays take per voxel [bytes] (centres, world
#: positions, flags, one configuration of 7 joints), for the refusal's message.
BYTES_PER_VOXEL = 8 * (3 + 3 + 1 + 7)


@dataclass(frozen=True)
class VoxelGrid:
    """A regular grid of voxel centres.

    Attributes:
        origin: Centre of voxel ``(0, 0, 0)``, base frame [m], (3,).
        resolution: Voxel edge [m].
        shape: Voxels along x, y, z.
    """

    origin: np.ndarray
    resolution: float
    shape: tuple[int, int, int]

    @classmethod
    def from_bounds(cls, bounds: ArrayLike, resolution: float) -> VoxelGrid:
        """The grid covering ``bounds`` ((2, 3): lower and upper corner, base frame [m]).

        Raises:
            InputError: Malformed bounds, or a resolution that is not a positive number.
        """
        res = positive_number(resolution, "resolution [m]")
        box = np.asarray(bounds, dtype=np.float64)
        if box.shape != (2, 3) or not np.all(np.isfinite(box)) or np.any(box[1] < box[0]):
            raise InputError(
                "bounds: expected ((x_min, y_min, z_min), (x_max, y_max, z_max)) with "
                f"finite values and min <= max, got {bounds!r}"
            )
        lower = np.floor(box[0] / res + 1e-9) * res  # 1e-9: bounds on the lattice stay
        upper = np.ceil(box[1] / res - 1e-9) * res
        counts = np.round((upper - lower) / res) + 1.0  # floats: no overflow before the check
        voxels = float(np.prod(counts))
        if voxels > MAX_VOXELS:
            coarser = res * (voxels / MAX_VOXELS) ** (1.0 / 3.0)
            raise InputError(
                f"resolution: {res:g} m makes {voxels:.3g} voxels, over the limit of "
                f"{MAX_VOXELS:,} (its arrays alone would take at least "
                f"{voxels * BYTES_PER_VOXEL / 2**30:.3g} GiB); use a resolution of at least "
                f"{coarser:.3g} m or smaller bounds"
            )
        shape = tuple(int(n) for n in counts.astype(int))
        return cls(origin=lower, resolution=res, shape=(shape[0], shape[1], shape[2]))

    @property
    def size(self) -> int:
        """Number of voxels."""
        return int(np.prod(self.shape))

    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Voxel centre coordinates along x, y and z [m]."""
        return tuple(  # type: ignore[return-value]
            self.origin[a] + self.resolution * np.arange(self.shape[a]) for a in range(3)
        )

    def centres(self) -> np.ndarray:
        """Every voxel centre, base frame [m], shape ``(*shape, 3)``."""
        x, y, z = self.axes()
        return np.stack(np.meshgrid(x, y, z, indexing="ij"), axis=-1)

    def centre(self, index: tuple[int, int, int]) -> np.ndarray:
        """Centre of voxel ``index``, base frame [m], (3,)."""
        return self.origin + self.resolution * np.asarray(index, dtype=np.float64)

    def index(self, point: ArrayLike) -> tuple[int, int, int]:
        """Index of the voxel containing ``point`` (base frame [m]).

        Raises:
            InputError: The point lies outside the grid.
        """
        p = np.asarray(point, dtype=np.float64).reshape(3)
        ijk = np.round((p - self.origin) / self.resolution).astype(int)
        if np.any(ijk < 0) or np.any(ijk >= np.array(self.shape)):
            raise InputError(f"point: {p} lies outside the grid")
        return int(ijk[0]), int(ijk[1]), int(ijk[2])


def reach_ball(robot: PinkRobot, frame: str, joint_names: list[str]) -> tuple[np.ndarray, float]:
    """A ball holding every position ``frame`` can reach, base frame.

    Centre: the first moved joint's origin at home; radius: the sum of the link offsets from
    there to the frame plus the travel of prismatic joints (triangle inequality), so nothing
    outside is reachable. A moved joint of several coordinates (ball, free flyer) or an
    unbounded prismatic joint makes the radius infinite.

    Returns:
        ``(centre (3,) [m], radius [m])``.
    """
    model = robot.model
    moved = {model.getJointId(name) for name in joint_names}
    fid = model.getFrameId(frame)
    chain: list[int] = []
    joint = model.frames[fid].parentJoint
    while joint > 0:
        chain.append(joint)
        joint = model.parents[joint]
    chain.reverse()
    first = next(i for i, j in enumerate(chain) if j in moved)
    radius = float(np.linalg.norm(model.frames[fid].placement.translation))
    for j in chain[first:]:
        if j != chain[first]:
            radius += float(np.linalg.norm(model.jointPlacements[j].translation))
        if j in moved:
            radius += _travel(model, j)
    data = model.createData()
    pin.forwardKinematics(model, data, robot.q0)
    world = data.oMi[chain[first]].translation
    return robot.base_placement.actInv(pin.SE3(np.eye(3), world)).translation.copy(), radius


def _travel(model: pin.Model, joint: int) -> float:
    """How far a moved joint can carry what it holds beyond its links [m]: a prismatic
    joint's largest travel (infinite if unbounded), infinite for a joint of several
    coordinates (ball, free flyer), 0 for a revolute joint."""
    if model.joints[joint].nq > 2:
        return np.inf
    if not model.joints[joint].shortname().startswith("JointModelP"):  # planar has nq 4
        return 0.0
    idx = model.joints[joint].idx_q
    travel = max(abs(model.lowerPositionLimit[idx]), abs(model.upperPositionLimit[idx]))
    return float(travel) if travel < 1e10 else np.inf


def default_bounds(centre: np.ndarray, radius: float) -> np.ndarray:
    """Bounds of a map: the reach ball's box, symmetric about the base's vertical axis.

    Returns:
        ``((x_min, y_min, z_min), (x_max, y_max, z_max))`` [m], base frame.
    """
    half = abs(float(centre[0])) + abs(float(centre[1])) + radius
    return np.array([[-half, -half, centre[2] - radius], [half, half, centre[2] + radius]])


def without_joint_limits(robot: PinkRobot, span: float = np.pi) -> PinkRobot:
    """A copy of ``robot`` whose controlled joints move over ``[-span, span]``.

    A map of this copy against the robot's own map shows which holes of the workspace the
    joint limits make (the copy's solutions there break a limit). The copy's model differs
    from its source, so it is mapped in this process (``workers=1``).
    """
    model = pin.Model(robot.model)
    for name in robot.controlled_joint_names:
        idx = model.joints[model.getJointId(name)].idx_q
        model.lowerPositionLimit[idx], model.upperPositionLimit[idx] = -span, span
    return dataclasses.replace(robot, model=model, data=model.createData())
