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
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import InputError
from .options import (
    IKOptions,
    LocalOptions,
    SearchOptions,
    checked_local,
    checked_search,
    split_options,
)
from .result import IKResult
from .solver import IKSolver
from .targets import IKTarget, SeedLike

__all__ = ["find_ik_batch", "solve_ik_batch"]

_worker_solver: IKSolver | None = None


def _portable(robot: PinkRobot) -> PinkRobot:
    """A picklable copy of the robot: fresh Pinocchio data, no collision data."""
    return dataclasses.replace(robot, data=robot.model.createData(), collision_data=None)


def _init_worker(robot: PinkRobot, solver_options: IKOptions) -> None:
    global _worker_solver
    if robot.collision_model is not None:
        robot.collision_data = pin.GeometryData(robot.collision_model)
    _worker_solver = IKSolver(robot, solver_options)


def _run_chunk(
    solver: IKSolver,
    indices: Sequence[int],
    targets: Sequence[Any],
    seeds: Sequence[Any],
    query: LocalOptions | SearchOptions,
    entropy: int,
) -> list[IKResult]:
    out = []
    for i, target, seed in zip(indices, targets, seeds):
        if isinstance(query, SearchOptions):
            rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(i),)))
            out.append(solver.find(target, seed=seed, options=query, rng=rng))
        else:
            out.append(solver.solve(target, seed=seed, options=query))
    return out


def _worker_chunk(
    indices: Sequence[int],
    targets: Sequence[Any],
    seeds: Sequence[Any],
    query: LocalOptions | SearchOptions,
    entropy: int,
) -> list[IKResult]:
    assert _worker_solver is not None
    return _run_chunk(_worker_solver, indices, targets, seeds, query, entropy)


def find_ik_batch(
    robot: PinkRobot,
    targets: Sequence[IKTarget],
    *,
    search: bool = True,
    seed: SeedLike = None,
    seeds: Sequence[SeedLike] | None = None,
    rng: int | None = 0,
    processes: int | None = 1,
    mp_context: str = "spawn",
    **options: Any,
) -> list[IKResult]:
    """Solve IK for every target, in order.

    Args:
        robot: The robot (only read).
        targets: One target per query (any form :func:`~pinkctl.ik.find_ik` accepts).
        search: Global search per target (:meth:`IKSolver.find`) if True, else a local
            solve (:meth:`IKSolver.solve`).
        seed: Seed shared by every query (see :meth:`IKSolver.solve`).
        seeds: One seed per target (overrides ``seed``).
        rng: Integer entropy of the per-target random generators (None: fresh entropy).
        processes: Worker processes; 1 runs in this process, None uses every CPU.
        mp_context: ``multiprocessing`` start method for workers. With more than one
            process, a ``validate`` callback must be picklable (a module-level function).
        **options: Fields of :class:`~pinkctl.ik.IKOptions` (``frame``, ``method``,
            tolerances, goal modes) and of :class:`~pinkctl.ik.SearchOptions` (with
            ``search=True``) or :class:`~pinkctl.ik.LocalOptions` (``search=False``).

    Raises:
        ValueError: Malformed options, targets or seeds (checked before any work starts).
    """
    query: LocalOptions | SearchOptions
    solver_options, query = split_options(
        options, IKOptions(), SearchOptions() if search else LocalOptions()
    )
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

    solver = IKSolver(robot, solver_options)  # validates the options here
    if isinstance(query, SearchOptions):
        checked_search(query)
    else:
        checked_local(query)
    for i, (target, s) in enumerate(zip(targets, seeds)):
        try:
            solver.residual(target)
            solver.subset.parse_seed(s, robot.q0, name="seed")
        except ValueError as exc:
            raise InputError(f"targets[{i}]: {exc}") from exc
    if not targets:
        return []
    if processes == 1 or len(targets) == 1:
        return _run_chunk(solver, range(len(targets)), targets, seeds, query, entropy)

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
                query,
                entropy,
            )
            for a, b in zip(bounds[:-1], bounds[1:])
            if b > a
        ]
        for fut in futures:
            results.extend(fut.result())
    return results


def solve_ik_batch(robot: PinkRobot, targets: Sequence[IKTarget], **kwargs: Any) -> list[IKResult]:
    """Deprecated alias of :func:`find_ik_batch`."""
    warnings.warn(
        "pinkctl.solve_ik_batch is renamed pinkctl.find_ik_batch; the old name goes away in "
        "the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return find_ik_batch(robot, targets, **kwargs)
