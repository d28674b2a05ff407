"""Filling a map's misses from its neighbours.

A global search with a small restart budget misses a few reachable poses. A miss next to a
reached voxel (6-neighbourhood, same orientation) is tried again by a local solve seeded with
that neighbour's solution, which converges in a few iterations when the pose is reachable
from there. Each round tries every miss once, with a neighbour it was not tried from yet;
rounds continue while they reach new poses (at most ``rounds``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..ik import IKSolver, LocalOptions
from ..ik.dispatch import Runner
from ..ik.job import Chain
from ..ik.targets import IKTarget

__all__ = ["NEIGHBOUR_SOLVE", "fill_from_neighbours"]

#: Budget of the local solve from a neighbour's solution.
NEIGHBOUR_SOLVE = LocalOptions(max_iterations=40, stall_iterations=5)
_STEPS = ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1))


def _shifted(values: np.ndarray, step: tuple[int, int, int]) -> np.ndarray:
    """``out[v] = values[v + step]`` over the first three axes, False/NaN past the edge."""
    out = np.zeros_like(values) if values.dtype == bool else np.full_like(values, np.nan)
    src = tuple(slice(max(s, 0), n + min(s, 0)) for s, n in zip(step, values.shape[:3]))
    dst = tuple(slice(max(-s, 0), n + min(-s, 0)) for s, n in zip(step, values.shape[:3]))
    out[dst] = values[src]
    return out


def fill_from_neighbours(
    solver: IKSolver,
    arrays: dict[str, np.ndarray],
    candidates: np.ndarray,
    target_of: Callable[[tuple[int, ...]], IKTarget],
    runner: Runner,
    *,
    rounds: int = 3,
) -> int:
    """Try the misses among ``candidates`` again from their reached neighbours.

    Args:
        solver: The solver of the map's queries.
        arrays: ``reached`` (..., n) and ``q`` (..., n, dof), updated in place.
        candidates: Where a miss may be retried, ``(*shape, n)`` (bool).
        target_of: The target of a ``(i, j, k, o)`` index.
        runner: Where the local solves run.
        rounds: Most rounds.

    Returns:
        Poses newly reached.
    """
    reached, q = arrays["reached"], arrays["q"]
    tried = np.zeros((*reached.shape, len(_STEPS)), dtype=bool)
    found = 0
    for _ in range(rounds):
        todo: dict[tuple[int, ...], np.ndarray] = {}
        for s, step in enumerate(_STEPS):
            open_ = candidates & ~reached & _shifted(reached, step) & ~tried[..., s]
            seeds = _shifted(q, step)
            for found_at in np.argwhere(open_):
                index = tuple(int(n) for n in found_at)
                if index not in todo:
                    todo[index] = seeds[index]
                    tried[index + (s,)] = True
        if not todo:
            break
        chains = [
            Chain(indices=(n,), targets=(target_of(index),), seed=seed)
            for n, (index, seed) in enumerate(todo.items())
        ]
        results = runner.solve(solver, chains, NEIGHBOUR_SOLVE, 0)
        new = 0
        for index, result in zip(todo, results):
            if result.success:
                reached[index] = True
                q[index] = result.q
                new += 1
        found += new
    return found
