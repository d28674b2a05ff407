"""Global IK search: local solves from the seed, then from random configurations.

The search follows TRAC-IK's "KDL-RR" idea and CoppeliaSim's ``findConfig``:

1. solve locally from the seed;
2. while a budget is left, draw a configuration uniformly within the joint limits (from a
   seeded generator, so the sequence of starts is reproducible) and solve locally from it
   (once a converged configuration collided, every other start is drawn nearer the middle
   of the ranges, :func:`_toward_middle`).
   A local solve is abandoned as soon as it stalls (no progress for a few iterations) or
   uses its per-start iteration cap, since a fresh start is then a better bet;
3. optionally skip a drawn start whose pose is farther than ``metric_threshold`` from the
   target under CoppeliaSim's pose metric
   ``sqrt((dx·m0)² + (dy·m1)² + (dz·m2)² + (angle·m3)²)`` (one forward kinematics instead
   of a hopeless local solve);
4. a converged configuration counts as a solution only if it keeps the collision margin
   (``collision``, :mod:`pinkctl.ik.collision`: checked as soon as a local solve converges,
   the search restarting at once when it collides) and ``validate`` accepts it (e.g. inside
   a preferred joint range);
5. stop at ``max_solutions`` distinct solutions or when a budget runs out, and return the
   solution closest to the seed (or the first one found).

Budgets: wall-clock (``deadline``), random starts (``max_restarts``), and total residual
evaluations (``max_iterations``). With the same inputs and generator seed, the search is
deterministic as long as the wall-clock budget is not the one that stops it.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np

from .joints import JointSubset
from .loop import LocalRunner, run_local
from .methods import IKMethod
from .residual import Residual

__all__ = ["SearchOutcome", "SeededGenerators", "global_search", "is_seed"]

#: ``validate(q) -> bool`` with ``q`` the moved joints' values (n,).
Validator = Callable[[np.ndarray], bool]


def is_seed(rng: object) -> TypeGuard[int]:
    """Whether ``rng`` is an integer seed (checked non-negative by ``checked_search``)."""
    return isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)


class SeededGenerators:
    """``np.random.default_rng(seed)`` at its start, for the restarts of a search.

    Making a generator costs more than a converged solve; a solver answering query after
    query with the same seed (the default, 0) makes it once and rewinds it (its state set
    back to the start: the same draws). Owned by one solver, used by one thread.
    """

    def __init__(self, capacity: int = 64) -> None:
        self._capacity = capacity
        self._made: dict[int, tuple[np.random.Generator, Mapping[str, Any]]] = {}

    def factory(self, seed: int) -> Callable[[], np.random.Generator]:
        """Called at a search's first restart: the generator of ``seed`` at its start."""

        def generator() -> np.random.Generator:
            made = self._made.get(int(seed))
            if made is not None:
                made[0].bit_generator.state = made[1]  # type: ignore[assignment]
                return made[0]
            if len(self._made) >= self._capacity:
                self._made.clear()
            fresh = np.random.default_rng(seed)
            self._made[int(seed)] = (fresh, fresh.bit_generator.state)
            return fresh

        return generator


@dataclass
class SearchOutcome:
    """What :func:`global_search` found.

    Attributes:
        q: Chosen configuration (full Pinocchio ``q``): a solution on success, else the best
            one met that passed validation (the seed when none did).
        success: Whether ``q`` is a validated solution.
        solutions: Distinct validated solutions found (full configurations).
        iterations: Residual evaluations, all starts together (a start skipped by the metric
            threshold counts as one, for its forward kinematics).
        restarts: Random starts drawn (including skipped ones).
        rejected: Converged configurations that ``validate`` rejected.
        skipped: Random starts skipped by the metric threshold.
        reason: Why the search stopped.
        collided: Converged configurations rejected as in collision.
    """

    q: np.ndarray
    success: bool
    solutions: list[np.ndarray]
    iterations: int
    restarts: int
    rejected: int
    skipped: int
    reason: str
    collided: int = 0


def _toward_middle(subset: JointSubset, q: np.ndarray) -> None:
    """Draw ``q``'s moved scalar joints into the middle of their ranges: within a quarter of
    the range (at most pi/2) of it. After a converged configuration collided, every other
    start is drawn so: such starts converge more often and to less folded configurations
    (5 % and 9 % fewer iterations per query over bench/ik_collision.py's franka and ur5
    targets), while the uniform ones in between keep every configuration in reach."""
    low, high = subset.sample_low, subset.sample_high
    middle, half = 0.5 * (low + high), 0.5 * (high - low)
    scale = 0.5 * np.minimum(half, np.pi) / np.where(half > 0.0, half, 1.0)
    values = subset.values(q)
    scalar = subset.q_size != 0
    values[scalar] = (middle + scale * (values - middle))[scalar]
    subset.write(q, values)


def global_search(
    residual: Residual,
    subset: JointSubset,
    method: IKMethod,
    q_seed: np.ndarray,
    *,
    rng: np.random.Generator | Callable[[], np.random.Generator],
    deadline: float | None,
    max_restarts: int | None,
    max_iterations: int | None,
    iterations_per_start: int,
    stall_iterations: int | None,
    validate: Validator | None = None,
    metric: np.ndarray | None = None,
    metric_threshold: float | None = None,
    max_solutions: int = 1,
    closest_to_seed: bool = True,
    solution_distance: float = 1e-3,
    max_step: float | None = None,
    local: LocalRunner | None = None,
    collision: Validator | None = None,
) -> SearchOutcome:
    """Run the search described in the module docstring (arguments validated by the caller).

    Args:
        residual: Goals and tolerances.
        subset: Moved joints and limits.
        method: Step rule of the local solves.
        q_seed: Clamped full seed configuration (not modified).
        rng: Generator of the random starts, or a factory called at the first restart
            (creating a generator costs more than many converged solves).
        deadline: ``time.perf_counter()`` value to stop at, or None.
        max_restarts: Maximum random starts, or None.
        max_iterations: Maximum residual evaluations in total, or None.
        iterations_per_start: Iteration cap of one local solve.
        stall_iterations: Abandon a local solve after this many iterations without progress.
        validate: Acceptance test of a converged configuration, or None.
        metric: CoppeliaSim pose metric weights ``(m0, m1, m2, m3)``.
        metric_threshold: Skip random starts farther than this from the target, or None.
        max_solutions: Stop after this many distinct validated solutions.
        closest_to_seed: Return the solution closest to the seed (else the first found).
        solution_distance: Solutions closer than this (joint-space norm) are the same one.
        max_step: Largest joint displacement per iteration, or None.
        local: The local solve, :func:`run_local` bound to ``residual``, ``subset`` and
            ``method`` (the default) or an equivalent (the native kernel's loop).
        collision: ``collision(q) -> bool`` on a converged full configuration: whether it
            keeps the collision margin (checked before ``validate``), or None.
    """
    if local is None:
        local = functools.partial(run_local, residual, subset, method)
    perf_counter = time.perf_counter
    solutions: list[np.ndarray] = []
    best_q: np.ndarray | None = None
    best_cost = math.inf
    iterations = 0
    restarts = 0
    rejected = 0
    skipped = 0
    collided = 0
    reason = ""
    first = True
    generator = rng if isinstance(rng, np.random.Generator) else None
    while True:
        if deadline is not None and not first and perf_counter() > deadline:
            reason = "time"
            break
        if max_iterations is not None and iterations >= max_iterations:
            reason = "iterations"
            break
        if first:
            start = q_seed.copy()
        else:
            if max_restarts is not None and restarts >= max_restarts:
                reason = "restarts"
                break
            restarts += 1
            if generator is None:
                generator = rng()  # type: ignore[operator]
            start = subset.sample(generator, q_seed)
            if collided and restarts % 2:
                _toward_middle(subset, start)
            if metric_threshold is not None and metric is not None:
                if residual.pose_distance(start, metric) > metric_threshold:
                    skipped += 1
                    iterations += 1  # its forward kinematics counts against the budget
                    continue
        cap = iterations_per_start
        if max_iterations is not None:
            cap = min(cap, max_iterations - iterations)
        out = local(
            start,
            max_iterations=cap,
            deadline=deadline,
            stall_iterations=stall_iterations,
            max_step=max_step,
        )
        first = False
        iterations += out.iterations
        if out.success:
            if collision is not None and not collision(out.q):
                collided += 1
            elif validate is None or bool(validate(subset.values(out.q))):
                if all(subset.distance(out.q, s) >= solution_distance for s in solutions):
                    solutions.append(out.q)
                if len(solutions) >= max_solutions:
                    reason = "converged"
                    break
            else:
                rejected += 1
        elif out.cost < best_cost:
            if validate is None or bool(validate(subset.values(out.q))):
                best_cost = out.cost
                best_q = out.q
    if solutions:
        if closest_to_seed and len(solutions) > 1:
            chosen = min(solutions, key=lambda s: subset.distance(s, q_seed))
        else:
            chosen = solutions[0]
        return SearchOutcome(
            chosen, True, solutions, iterations, restarts, rejected, skipped, "converged", collided
        )
    return SearchOutcome(
        best_q if best_q is not None else q_seed.copy(),
        False,
        solutions,
        iterations,
        restarts,
        rejected,
        skipped,
        reason,
        collided,
    )
