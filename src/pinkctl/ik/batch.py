"""Many IK queries at once: in this process, a local process pool, or on Ray.

Each target gets its own random generator, derived from ``rng`` and the target's index
(``SeedSequence(rng, spawn_key=(i,))``), so a batch gives the same answers whatever the
backend, the number of workers or the chunking (under iteration/restart budgets; see
:func:`~pinkctl.ik.find_ik` on determinism). Workers load the robot again from
``robot.source`` (:mod:`pinkctl.ik.job`), never from a pickled Pinocchio model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict, cast

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import InputError
from .checked import checked_local, checked_search
from .dispatch import Backend, Execution, Runner, split_execution
from .ikpool import IKPool, entropy_of
from .job import Chain
from .options import (
    IKKeywords,
    IKOptions,
    LocalOptions,
    SearchBudgetKeywords,
    SearchOptions,
    split_options,
)
from .result import IKResult
from .solver import IKSolver
from .targets import IKTarget, SeedLike

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["BatchKeywords", "ExecutionKeywords", "entropy_of", "find_ik_batch"]


class ExecutionKeywords(TypedDict, total=False):
    """The fields of :class:`~pinkctl.ik.Execution` as keywords (``workers=2``)."""

    backend: Backend
    workers: int | None
    address: str | None
    retries: int
    progress: bool | None
    mp_context: str


class BatchKeywords(IKKeywords, SearchBudgetKeywords, ExecutionKeywords, total=False):
    """The keywords of :func:`find_ik_batch`: solver options, a search budget (whose fields
    include a local solve's: ``max_iterations``, ``time_budget_ms``, ``stall_iterations``,
    ``max_step``) and where the batch runs; a misspelt one is a type error."""


def find_ik_batch(
    robot: PinkRobot,
    targets: Sequence[IKTarget],
    *,
    search: bool = True,
    seed: SeedLike = None,
    seeds: Sequence[SeedLike] | None = None,
    rng: int | None = 0,
    execution: Execution | None = None,
    pool: IKPool | None = None,
    **options: Unpack[BatchKeywords],
) -> list[IKResult]:
    """Solve IK for every target, in order.

    Args:
        robot: The robot (only read). With workers, it must come from
            :func:`~pinkctl.load_pink_robot` or :func:`~pinkctl.load_pink_supported_robot`
            (workers load it again from ``robot.source``).
        targets: One target per query (any form :func:`~pinkctl.ik.find_ik` accepts).
        search: Global search per target (:meth:`IKSolver.find`) if True, else a local
            solve (:meth:`IKSolver.solve`).
        seed: Seed shared by every query (see :meth:`IKSolver.solve`).
        seeds: One seed per target (overrides ``seed``).
        rng: Integer entropy of the per-target random generators (None: fresh entropy).
        execution: Where the batch runs (:class:`~pinkctl.ik.Execution`): ``backend``
            (``"local"`` or ``"ray"``), ``workers`` (default 1: this process), Ray
            ``address``, ``retries`` of dead workers, ``progress``, ``mp_context``; its
            fields are also keywords (``workers=2``, ``backend="ray"``).
        pool: A running :class:`~pinkctl.ik.IKPool` whose workers solve the batch (kept
            running after it); ``workers`` and ``backend`` are then not used.
        **options: Fields of :class:`~pinkctl.ik.Execution`, of
            :class:`~pinkctl.ik.IKOptions` (``frame``, ``method``, tolerances, goal modes)
            and of :class:`~pinkctl.ik.SearchOptions` (with
            ``search=True``) or :class:`~pinkctl.ik.LocalOptions` (``search=False``);
            typed by :class:`BatchKeywords`.

    Returns:
        One :class:`IKResult` per target. A target whose solve raised gets a failed result
        whose ``reason`` names the exception; it never stops the batch.

    Raises:
        InputError: Malformed options, targets, seeds or execution settings (checked
            before any work starts).
        ImportError: ``backend="ray"`` without Ray.
    """
    run, rest = split_execution(dict(options), execution)
    runner = Runner(run, pool=pool)
    query: LocalOptions | SearchOptions
    solver_options, query = split_options(
        rest, IKOptions(), SearchOptions() if search else LocalOptions()
    )
    targets = list(targets)
    if seeds is not None:
        seeds = list(seeds)
        if len(seeds) != len(targets):
            raise InputError(f"seeds: expected {len(targets)} seeds, got {len(seeds)}")
    else:
        seeds = [seed] * len(targets)
    entropy = entropy_of(rng)
    solver = IKSolver(robot, solver_options)  # validates the options here
    if isinstance(query, SearchOptions):
        checked_search(query)
    else:
        checked_local(query)
    _check_inputs(solver, targets, seeds)
    chains = [
        Chain(indices=(i,), targets=(t,), seed=s) for i, (t, s) in enumerate(zip(targets, seeds))
    ]
    with runner:
        return runner.solve(solver, chains, query, entropy)


def _check_inputs(solver: IKSolver, targets: list[IKTarget], seeds: list[SeedLike]) -> None:
    """Raise :class:`InputError` naming the first malformed target or seed (each seed object
    is parsed once; a shared seed, once for the batch)."""
    poses_ok = _poses_ok(solver, targets)
    parsed: set[int] = set()
    for i, (target, s) in enumerate(zip(targets, seeds)):
        try:
            if not poses_ok:
                solver.residual(target)
            if id(s) not in parsed:
                solver.subset.parse_seed(s, solver.robot.q0, name="seed")
                parsed.add(id(s))
        except ValueError as exc:
            raise InputError(f"targets[{i}]: {exc}") from exc


def _poses_ok(solver: IKSolver, targets: list[IKTarget]) -> bool:
    """Whether every target is a ``pin.SE3`` that :meth:`IKSolver.residual` accepts, checked
    at once on the stacked poses as :func:`~pinkctl.ik.targets.parse_target` checks each
    (finite position; for pose goals a rotation with every entry of RᵀR - I within 1e-6 and
    determinant +1). False when one is not: the caller then checks target by target."""
    if not targets or not all(isinstance(t, pin.SE3) for t in targets):
        return False
    try:
        solver.residual(targets[0])  # the form this solver's goal accepts
    except ValueError:
        return False
    poses = np.array([cast(pin.SE3, t).homogeneous for t in targets])
    if not np.isfinite(poses[:, :3, 3]).all():
        return False
    if solver.mode != "pose":
        return True
    rotations = poses[:, :3, :3]
    gram = np.einsum("nki,nkj->nij", rotations, rotations) - np.eye(3)
    return bool((np.abs(gram) <= 1e-6).all() and (np.linalg.det(rotations) > 0.0).all())
