"""Computing a reachability map: a global IK query per voxel and tool orientation.

Voxels are solved row by row: each row of voxels along x, for one orientation, is one chain
(:class:`~pinkctl.ik.job.Chain`), so every query is warm-started from the solution of its
neighbour in the row (the first local solve of the search starts there, random restarts
follow only when it fails). Rows are independent, so a map spreads over a local process pool
or Ray like any batch, and gives the same answer whatever the backend and worker count.
Voxels outside the reach ball (:func:`~pinkctl.reach.grid.reach_ball`) are not queried.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike

from ..core.robot import PinkRobot
from ..errors import InputError
from ..ik import IKOptions, IKResult, IKSolver, SearchOptions
from ..ik.batch import entropy_of
from ..ik.checked import checked_search
from ..ik.dispatch import Execution, Runner, split_execution
from ..ik.ikpool import IKPool
from ..ik.job import Chain
from ..ik.options import split_options
from ..ik.targets import SeedLike
from ..world import floor_height
from .grid import VoxelGrid, default_bounds, reach_ball
from .map import ReachabilityMap
from .neighbours import fill_from_neighbours
from .orientations import orientation_set, radial_rotation

__all__ = ["MAP_SEARCH", "reachability_map"]

#: Default budget of each query: deterministic (no wall-clock limit); an unreachable pose
#: costs the seed's local solve and 4 random restarts.
MAP_SEARCH = SearchOptions(time_budget_ms=None, max_restarts=4)


def reachability_map(
    robot: PinkRobot,
    bounds: ArrayLike | None = None,
    resolution: float = 0.05,
    *,
    orientations: int | ArrayLike | None = 6,
    radial: bool = True,
    seed: SeedLike = None,
    search: SearchOptions | None = None,
    rng: int | None = 0,
    execution: Execution | None = None,
    pool: IKPool | None = None,
    **options: Any,
) -> ReachabilityMap:
    """Which poses of the tool frame the robot reaches, over a voxel grid.

    Args:
        robot: The robot (only read).
        bounds: ``((x_min, y_min, z_min), (x_max, y_max, z_max))`` in the base frame [m],
            rounded outward to whole voxels; default: the box of the reach ball, symmetric
            about the base's vertical axis.
        resolution: Voxel edge [m]; a grid over :data:`~pinkctl.reach.grid.MAX_VOXELS`
            voxels is refused. Voxels whose centre lies under the floor
            (:func:`~pinkctl.world.floor_height`, as the simulation places it) are not
            queried and never reachable.
        orientations: Tool orientations per voxel: a count (z axes spread over the sphere,
            see :func:`~pinkctl.reach.orientations.spread_orientations`), ``(n, 3, 3)``
            rotations or ``(n, 4)`` quaternions (w, x, y, z); None: position only.
        radial: Orientations are in each voxel's radial frame (x away from the base's
            vertical axis, z up), so the map keeps the robot's symmetry about that axis;
            False: in the base frame.
        seed: Seed of the first voxel of every row (default ``robot.q0``).
        search: Budget of each query (default :data:`MAP_SEARCH`); keyword fields of
            :class:`~pinkctl.ik.SearchOptions` override it.
        rng: Entropy of the per-query random generators.
        execution: Where the queries run (:class:`~pinkctl.ik.Execution`, as in
            :func:`~pinkctl.ik.find_ik_batch`); its fields are also keywords
            (``workers=2``, ``backend="ray"``).
        pool: A running :class:`~pinkctl.ik.IKPool` whose workers run the queries (kept
            running after the map).
        **options: Fields of :class:`~pinkctl.ik.Execution`, of
            :class:`~pinkctl.ik.IKOptions` (``frame``, tolerances, ``method``,
            ``joint_names``) and of :class:`~pinkctl.ik.SearchOptions`.

    Returns:
        The map (:class:`~pinkctl.reach.ReachabilityMap`).

    Raises:
        InputError: Malformed bounds, resolution (or too fine for the bounds), orientations
            or options; no bounds for a robot whose reach is unbounded (a floating base).
    """
    t0 = time.perf_counter()
    run, options = split_execution(options, execution)
    solver_options, query, rotations = _map_options(options, search, orientations)
    entropy = entropy_of(rng)
    solver = IKSolver(robot, dataclasses.replace(solver_options, position_only=True))
    solver.subset.parse_seed(seed, robot.q0, name="seed")
    grid, poses, queried = _voxels(robot, solver, bounds, resolution, rotations, radial)
    with (runner := Runner(run, pool=pool)):
        arrays = _position_pass(solver, poses, queried, seed, (runner, query, entropy))
        position_reached = arrays["reached"][..., 0]
        if rotations is not None:  # pass 2: poses, rows seeded with their first position's q
            solver = IKSolver(robot, solver_options)
            arrays = _orientation_pass(
                solver, poses, position_reached, arrays["q"][..., 0, :], (runner, query, entropy)
            )
    return ReachabilityMap(
        robot=robot.name,
        frame=solver.frame,
        joint_names=tuple(solver.joint_names),
        grid=grid,
        base_placement=robot.base_placement.homogeneous.copy(),
        orientations=np.zeros((0, 3, 3)) if rotations is None else rotations,
        radial=bool(radial),
        queried=queried,
        position_reached=position_reached,
        time_s=time.perf_counter() - t0,
        **arrays,
        **_quality(solver, arrays["reached"], arrays["q"]),
    )


def _map_options(
    options: dict[str, Any], search: SearchOptions | None, orientations: Any
) -> tuple[IKOptions, SearchOptions, np.ndarray | None]:
    """The IK options, the checked per-query budget and the orientation set of a map."""
    solver_options, query = split_options(
        options, IKOptions(), search if search is not None else MAP_SEARCH
    )
    rotations = orientation_set(orientations)
    if rotations is not None and (
        solver_options.position_only or solver_options.approach_axis is not None
    ):
        raise InputError("orientations: a position-only or approach map takes orientations=None")
    checked_search(query)
    return solver_options, query, rotations


def _voxels(
    robot: PinkRobot,
    solver: IKSolver,
    bounds: ArrayLike | None,
    resolution: float,
    rotations: np.ndarray | None,
    radial: bool,
) -> tuple[VoxelGrid, _Poses, np.ndarray]:
    """The grid, its targets and the voxels worth a query: inside the reach ball, above the
    floor (a voxel under the floor is never reachable, whatever the IK says)."""
    centre, radius = reach_ball(robot, solver.frame, solver.joint_names)
    if bounds is None:
        if not np.isfinite(radius):
            raise InputError("bounds: this robot's reach is unbounded (floating base); give bounds")
        bounds = default_bounds(centre, radius)
    grid = VoxelGrid.from_bounds(bounds, resolution)
    poses = _Poses(grid, robot.base_placement, rotations, radial)
    queried = np.linalg.norm(poses.centres - centre, axis=-1) <= radius
    floor = floor_height(robot)
    if floor is not None:
        queried &= poses.world[..., 2] >= floor
    return grid, poses, queried


def _position_pass(
    solver: IKSolver,
    poses: _Poses,
    queried: np.ndarray,
    seed: SeedLike,
    run: tuple[Runner, SearchOptions, int],
) -> dict[str, np.ndarray]:
    """Pass 1: one position query per queried voxel (an unreachable position skips every
    orientation of its voxel), every row seeded with ``seed``."""
    runner, query, entropy = run
    chains = _rows(poses, queried, 1, lambda i, j, k: seed, 0)
    results = runner.solve(solver, chains, query, entropy)
    arrays = _collect((*queried.shape, 1), chains, results, 0, solver.subset.n)
    fill_from_neighbours(solver, arrays, queried[..., None], poses.target, runner)
    return arrays


def _orientation_pass(
    solver: IKSolver,
    poses: _Poses,
    position_reached: np.ndarray,
    first: np.ndarray,
    run: tuple[Runner, SearchOptions, int],
) -> dict[str, np.ndarray]:
    """Pass 2: every orientation of the voxels whose position was reached, each row seeded
    with its first voxel's position-pass configuration ``first`` (grid shape + (n,))."""
    runner, query, entropy = run
    assert poses.rotations is not None  # pass 2 runs only with orientations
    grid_size, count = position_reached.size, poses.rotations.shape[0]
    shape = (*position_reached.shape, count)
    chains = _rows(poses, position_reached, count, lambda i, j, k: first[i, j, k], grid_size)
    results = runner.solve(solver, chains, query, entropy)
    arrays = _collect(shape, chains, results, grid_size, solver.subset.n)
    candidates = np.repeat(position_reached[..., None], count, axis=3)
    fill_from_neighbours(solver, arrays, candidates, poses.target, runner)
    return arrays


class _Poses:
    """World-frame targets of a grid's voxels: (3,) positions, or (7,) poses per orientation."""

    def __init__(
        self, grid: VoxelGrid, base: pin.SE3, rotations: np.ndarray | None, radial: bool
    ) -> None:
        self.centres = grid.centres()
        self.world = self.centres @ base.rotation.T + base.translation
        self.base = base.rotation
        self.rotations = rotations
        self.radial = radial

    def target(self, index: tuple[int, ...]) -> np.ndarray:
        """Target of voxel-and-orientation ``(i, j, k, o)``."""
        i, j, k, o = index
        if self.rotations is None:
            return self.world[i, j, k]
        local = self.rotations[o]
        if self.radial:
            local = radial_rotation(self.centres[i, j, k]) @ local
        quat = pin.Quaternion(self.base @ local)
        return np.concatenate([self.world[i, j, k], [quat.w, quat.x, quat.y, quat.z]])


def _rows(
    poses: _Poses,
    mask: np.ndarray,
    n_orient: int,
    seed_of: Callable[[int, int, int], SeedLike],
    offset: int,
) -> list[Chain]:
    """One chain per row of ``mask`` along x and orientation; the chain's seed is
    ``seed_of`` its first voxel; target indices are ``offset`` + the flat (i, j, k, o)."""
    chains = []
    for j in range(mask.shape[1]):
        for k in range(mask.shape[2]):
            row = np.flatnonzero(mask[:, j, k])
            if row.size == 0:
                continue
            seed = seed_of(int(row[0]), j, k)
            for o in range(n_orient):
                indices = offset + np.ravel_multi_index(
                    (row, np.full_like(row, j), np.full_like(row, k), np.full_like(row, o)),
                    (*mask.shape, n_orient),
                )
                chains.append(
                    Chain(
                        indices=tuple(int(x) for x in indices),
                        targets=[poses.target((int(i), j, k, o)) for i in row],
                        seed=seed,
                    )
                )
    return chains


def _collect(
    shape: tuple[int, ...], chains: list[Chain], results: list[IKResult], offset: int, dof: int
) -> dict[str, np.ndarray]:
    """``reached`` and ``q`` arrays of ``shape`` (voxel and orientation) from the results, in
    the chains' order (target indices start at ``offset``)."""
    reached = np.zeros(shape, dtype=bool)
    q = np.full((*shape, dof), np.nan)
    flat = [i for chain in chains for i in chain.indices]
    for index, result in zip(flat, results):
        if result.success:
            at = np.unravel_index(index - offset, shape)
            reached[at] = True
            q[at] = result.q
    return {"reached": reached, "q": q}


def _quality(solver: IKSolver, reached: np.ndarray, q: np.ndarray) -> dict[str, np.ndarray]:
    """Manipulability and joint-limit distance at every solution (NaN elsewhere)."""
    manipulability = np.full(reached.shape, np.nan)
    limit_distance = np.full(reached.shape, np.nan)
    model, data, subset = solver.model, solver.model.createData(), solver.subset
    fid = model.getFrameId(solver.frame)
    rows = slice(0, 3) if solver.mode == "position" else slice(0, 6)
    for at in map(tuple, np.argwhere(reached)):
        q_full = subset.parse_seed(q[at], solver.robot.q0)
        jac = pin.computeFrameJacobian(model, data, q_full, fid, pin.LOCAL_WORLD_ALIGNED)
        jac = jac[rows, subset.v_cols]
        manipulability[at] = np.sqrt(max(0.0, float(np.linalg.det(jac @ jac.T))))
        gaps = np.minimum(q[at] - subset.lower, subset.upper - q[at])[subset.bounded]
        limit_distance[at] = float(gaps.min()) if gaps.size else np.inf
    return {"manipulability": manipulability, "limit_distance": limit_distance}
