"""Many IK queries at once, optionally spread over processes.

Each target gets its own random generator, derived from ``rng`` and the target's index
(``SeedSequence(rng, spawn_key=(i,))``), so a batch gives the same answers whatever the
number of processes or the chunking (under iteration/restart budgets; see
:func:`~pinkctl.ik.find_ik` on determinism). Worker processes build their own
:class:`~pinkctl.ik.IKSolver` once, from a copy of the robot without its Pinocchio data.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import InputError
from .result import IKResult
from .solver import IKSolver

__all__ = ["solve_ik_batch"]

_SOLVER_OPTIONS = frozenset(
    {
        "frame",
        "joint_names",
        "method",
        "method_options",
        "position_only",
        "approach_axis",
        "approach_direction",
        "point_offset",
        "orientation_weight",
        "position_tolerance",
        "orientation_tolerance",
    }
)

_worker_solver: IKSolver | None = None


def _portable(robot: PinkRobot) -> PinkRobot:
    """A picklable copy of the robot: fresh Pinocchio data, no collision data."""
    return dataclasses.replace(robot, data=robot.model.createData(), collision_data=None)


def _init_worker(robot: PinkRobot, solver_options: dict[str, Any]) -> None:
    global _worker_solver
    if robot.collision_model is not None:
        robot.collision_data = pin.GeometryData(robot.collision_model)
    _worker_solver = IKSolver(robot, **solver_options)


def _run_chunk(
    solver: IKSolver,
    indices: Sequence[int],
    targets: Sequence[Any],
    seeds: Sequence[Any],
    search: bool,
    query_options: dict[str, Any],
    entropy: int,
) -> list[IKResult]:
    out = []
    for i, target, seed in zip(indices, targets, seeds):
        if search:
            rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(i),)))
            out.append(solver.find(target, seed=seed, rng=rng, **query_options))
        else:
            out.append(solver.solve(target, seed=seed, **query_options))
    return out


def _worker_chunk(
    indices: Sequence[int],
    targets: Sequence[Any],
    seeds: Sequence[Any],
    search: bool,
    query_options: dict[str, Any],
    entropy: int,
) -> list[IKResult]:
    assert _worker_solver is not None
    return _run_chunk(_worker_solver, indices, targets, seeds, search, query_options, entropy)


def solve_ik_batch(
    robot: PinkRobot,
    targets: Sequence[Any],
    *,
    search: bool = True,
    seed: Any = None,
    seeds: Sequence[Any] | None = None,
    rng: int | None = 0,
    processes: int | None = 1,
    mp_context: str = "spawn",
    **options: Any,
) -> list[IKResult]:
    """Solve IK for every target, in order.

    Args:
        robot: The robot (only read).
        targets: One target per query (any form :func:`~pinkctl.ik.solve_ik` accepts).
        search: Global search per target (:meth:`IKSolver.find`) if True, else a local
            solve (:meth:`IKSolver.solve`).
        seed: Seed shared by every query (see :meth:`IKSolver.solve`).
        seeds: One seed per target (overrides ``seed``).
        rng: Integer entropy of the per-target random generators (None: fresh entropy).
        processes: Worker processes; 1 runs in this process, None uses every CPU.
        mp_context: ``multiprocessing`` start method for workers. With more than one
            process, a ``validate`` callback must be picklable (a module-level function).
        **options: :class:`IKSolver` options (``frame``, ``method``, tolerances, goal modes)
            and the query options of :meth:`IKSolver.find` / :meth:`IKSolver.solve`.

    Raises:
        ValueError: Malformed options, targets or seeds (checked before any work starts).
    """
    solver_options = {k: v for k, v in options.items() if k in _SOLVER_OPTIONS}
    query_options = {k: v for k, v in options.items() if k not in _SOLVER_OPTIONS}
    if "rng" in query_options:  # pragma: no cover - captured by the signature
        raise InputError("rng: pass it as solve_ik_batch(rng=...)")
    targets = list(targets)
    if seeds is not None:
        seeds = list(seeds)
        if len(seeds) != len(targets):
            raise InputError(f"seeds: expected {len(targets)} seeds, got {len(seeds)}")
    else:
        seeds = [seed] * len(targets)
    if processes is None:
        processes = os.cpu_count() or 1
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise InputError(f"processes: expected a positive integer or None, got {processes!r}")
    if rng is not None and (isinstance(rng, bool) or not isinstance(rng, (int, np.integer))):
        raise InputError(f"rng: expected an integer seed or None, got {rng!r}")
    entropy = int(rng) if rng is not None else int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]

    solver = IKSolver(robot, **solver_options)  # validates the options here
    for i, (target, s) in enumerate(zip(targets, seeds)):
        try:
            solver.residual(target)
            solver.subset.parse_seed(s, robot.q0, name="seed")
        except ValueError as exc:
            raise InputError(f"targets[{i}]: {exc}") from exc
    if not targets:
        return []
    if processes == 1 or len(targets) == 1:
        return _run_chunk(
            solver, range(len(targets)), targets, seeds, search, query_options, entropy
        )

    n_chunks = min(len(targets), 4 * processes)
    bounds = np.linspace(0, len(targets), n_chunks + 1).astype(int)
    ctx = multiprocessing.get_context(mp_context)
    results: list[IKResult] = []
    with ProcessPoolExecutor(
        max_workers=processes,
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(_portable(robot), solver_options),
    ) as pool:
        futures = [
            pool.submit(
                _worker_chunk,
                list(range(a, b)),
                targets[a:b],
                seeds[a:b],
                search,
                query_options,
                entropy,
            )
            for a, b in zip(bounds[:-1], bounds[1:])
            if b > a
        ]
        for fut in futures:
            results.extend(fut.result())
    return results
