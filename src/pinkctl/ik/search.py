"""Global IK search: local solves from the seed, then from random configurations.

The search follows TRAC-IK's "KDL-RR" idea and CoppeliaSim's ``findConfig``:

1. solve locally from the seed;
2. while a budget is left, draw a configuration uniformly within the joint limits (from a
   seeded generator, so the sequence of starts is reproducible) and solve locally from it
   (once a converged configuration collided: first its branch flips,
   :class:`~pinkctl.ik.branches.BranchFlips`, then, after the first rejection, collision-free
   configurations whose tool pose is near the target, :mod:`pinkctl.ik.seeds`; every other
   random start is drawn nearer the middle of the ranges, :func:`_toward_middle`, its
   full-turn joints between the colliding pair's two links half a turn away from where they
   collided, :func:`_away`). A local solve is abandoned as soon as it stalls (no progress
   for a few iterations; after a rejection :data:`REJECTED_STALL` at most, without a
   restart cap) or uses its per-start iteration cap, since a fresh start is then a better bet;
3. optionally skip a drawn start whose pose is farther than ``metric_threshold`` from the
   target under CoppeliaSim's pose metric
   ``sqrt((dx·m0)² + (dy·m1)² + (dz·m2)² + (angle·m3)²)`` (one forward kinematics instead
   of a hopeless local solve);
4. a converged configuration counts as a solution only if it keeps the collision margin
   (``collision``, :mod:`pinkctl.ik.collision`: checked as soon as a local solve converges,
   the search restarting at once when it collides) and ``validate`` accepts it;
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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

from .joints import JointSubset
from .loop import LocalRunner, run_local
from .methods import IKMethod
from .residual import Residual
from .seeds import LIBRARY_STARTS

if TYPE_CHECKING:
    from .seeds import LibraryPicks

__all__ = ["REJECTED_STALL", "SearchOutcome", "SeededGenerators", "global_search", "is_seed"]

#: ``validate(q) -> bool`` with ``q`` the moved joints' values (n,).
Validator = Callable[[np.ndarray], bool]

#: Once a converged configuration collided, local solves stop after this many iterations
#: without progress (when ``stall_iterations`` allows more and no ``max_restarts`` caps the
#: starts): a start that stops improving rarely leads to a collision-free answer (docs/ik.md,
#: "Collision-free IK": 5-7 % fewer franka iterations; with 30 restarts a g1 target failed).
REJECTED_STALL = 2


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
    (franka's collisions are its wrist folded onto link 5, ur5's its wrist onto the
    forearm), while the uniform ones in between keep every configuration in reach (with
    every start drawn so, one PR2 target of 1,000 found no answer in the budget)."""
    low, high = subset.sample_low, subset.sample_high
    middle, half = 0.5 * (low + high), 0.5 * (high - low)
    scale = 0.5 * np.minimum(half, np.pi) / np.where(half > 0.0, half, 1.0)
    values = subset.values(q)
    scalar = subset.q_size != 0
    values[scalar] = (middle + scale * (values - middle))[scalar]
    subset.write(q, values)


def _away(
    subset: JointSubset, q: np.ndarray, drawn: np.ndarray, collided: np.ndarray, far: np.ndarray
) -> None:
    """Turn the columns ``far`` marks (the full-turn joints between the two links of the
    pair that collided, :meth:`CollisionCheck.far_columns
    <pinkctl.ik.collision.CollisionCheck.far_columns>`) half a turn away from their values in
    the ``collided`` configuration: each lands within a quarter turn of the opposite angle,
    placed by its uniform draw ``drawn`` (the start's value before :func:`_toward_middle`).
    A folded wrist is then tried the other way round, which the middle of a two-turn range
    rarely reaches (ur5: 6 % fewer iterations over bench/ik_collision.py's targets)."""
    low, high = subset.sample_low, subset.sample_high
    two_pi, half_turn = 2.0 * math.pi, math.pi
    base = subset.values(collided)
    for c in np.flatnonzero(far):
        lo, hi = float(low[c]), float(high[c])
        v = float(base[c]) + half_turn * (0.5 + (float(drawn[c]) - lo) / (hi - lo))
        while v > hi:
            v -= two_pi
        while v < lo:
            v += two_pi
        q[subset.q_index[c]] = v


def _valid(validate: Validator | None, subset: JointSubset, q: np.ndarray) -> bool:
    """Whether ``validate`` (None: anything) accepts the moved joints' values of ``q``."""
    return validate is None or bool(validate(subset.values(q)))


@dataclass
class _Search:
    """One run of :func:`global_search`: its settings (the function's arguments) and the
    counts and finds so far."""

    residual: Residual
    subset: JointSubset
    q_seed: np.ndarray
    rng: np.random.Generator | Callable[[], np.random.Generator]
    local: LocalRunner
    deadline: float | None
    max_restarts: int | None
    max_iterations: int | None
    iterations_per_start: int
    stall_iterations: int | None
    validate: Validator | None
    metric: np.ndarray | None
    metric_threshold: float | None
    max_solutions: int
    solution_distance: float
    max_step: float | None
    collision: Validator | None
    far: Callable[[], np.ndarray | None] | None = None
    flips: Callable[[np.ndarray], list[np.ndarray]] | None = None
    library: Callable[[], LibraryPicks | None] | None = None
    flipped: list[np.ndarray] = field(default_factory=list)  # flip starts still to try
    picks: LibraryPicks | None = None
    library_next: int = 0  # library starts queued
    solutions: list[np.ndarray] = field(default_factory=list)
    best_q: np.ndarray | None = None
    best_cost: float = math.inf
    iterations: int = 0
    restarts: int = 0
    rejected: int = 0
    skipped: int = 0
    collided: int = 0
    turned: tuple[np.ndarray, np.ndarray] | None = None  # the last collision: q, far columns

    def run(self) -> str:
        """Solve from the seed, then from random starts until enough solutions are found or
        a budget runs out; the reason it stopped (``"converged"``, ``"time"``,
        ``"iterations"``, ``"restarts"``)."""
        reason = self._spent(first=True)
        if reason:
            return reason
        if self._solve(self.q_seed.copy()):
            return "converged"
        while True:
            reason = self._spent(first=False)
            if reason:
                return reason
            if self.flipped:  # a flip start is no restart: the random draws stay the same
                if self._solve(self.flipped.pop(0), flip=True):
                    return "converged"
                continue
            start = self._from_library() if self.library_next else None
            if start is not None:  # no restart either
                if self._solve(start, library=True):
                    return "converged"
                continue
            start = self._draw()
            if start is not None and self._solve(start):
                return "converged"

    def _spent(self, *, first: bool) -> str:
        """The budget that ran out, or "" (the seed's solve is never stopped by the clock,
        and is no restart)."""
        if not first and self.deadline is not None and time.perf_counter() > self.deadline:
            return "time"
        if self.max_iterations is not None and self.iterations >= self.max_iterations:
            return "iterations"
        if not first and self.max_restarts is not None and self.restarts >= self.max_restarts:
            return "restarts"
        return ""

    def _from_library(self) -> np.ndarray | None:
        """The next library start (:mod:`pinkctl.ik.seeds`), or None (none left)."""
        self.library_next -= 1
        if self.picks is None and self.library is not None:
            self.picks, self.library = self.library(), None
        start = self.picks.next(self.q_seed) if self.picks is not None else None
        if start is None:
            self.library_next = 0
        return start

    def _draw(self) -> np.ndarray | None:
        """The next random start (full ``q``), or None when the metric threshold skips it
        (its forward kinematics counts as one iteration)."""
        self.restarts += 1
        if not isinstance(self.rng, np.random.Generator):
            self.rng = self.rng()  # the first restart makes the generator
        start = self.subset.sample(self.rng, self.q_seed)
        if self.collided and self.restarts % 2:
            turned = self.turned
            drawn = self.subset.values(start) if turned is not None else None
            _toward_middle(self.subset, start)
            if turned is not None and drawn is not None:
                _away(self.subset, start, drawn, *turned)
        threshold, metric = self.metric_threshold, self.metric
        if threshold is not None and metric is not None:
            if self.residual.pose_distance(start, metric) > threshold:
                self.skipped += 1
                self.iterations += 1
                return None
        return start

    def _solve(self, start: np.ndarray, *, flip: bool = False, library: bool = False) -> bool:
        """A local solve from ``start`` (``flip``: a branch flip of a rejected answer,
        ``library``: a library start), its answer recorded; whether enough solutions are
        found."""
        cap = self.iterations_per_start
        if self.max_iterations is not None:
            cap = min(cap, self.max_iterations - self.iterations)
        stall = self.stall_iterations
        if self.collided and stall is not None and self.max_restarts is None:
            stall = min(stall, REJECTED_STALL)
        out = self.local(
            start,
            max_iterations=cap,
            deadline=self.deadline,
            stall_iterations=stall,
            max_step=self.max_step,
        )
        self.iterations += out.iterations
        if out.success:
            return self._accept(out.q, flip=flip, library=library)
        if out.cost < self.best_cost and _valid(self.validate, self.subset, out.q):
            self.best_cost = out.cost
            self.best_q = out.q
        return False

    def _accept(self, q: np.ndarray, *, flip: bool, library: bool = False) -> bool:
        """Record a converged ``q`` (collision-free and valid: a solution, unless it repeats
        one); whether enough solutions are found. A rejected ``q`` not from a flip queues
        its branch flips (a flip's own flips would come back to it) and, unless it is from
        the library, the library's starts."""
        if self.collision is not None and not self.collision(q):
            self.collided += 1
            if self.library is not None or self.picks is not None:
                if not flip and not library:
                    self.library_next = LIBRARY_STARTS
            far = self.far() if self.far is not None else None
            self.turned = (q, far) if far is not None else None
            if self.flips is not None and not flip:
                self.flipped = self.flips(q)
            return False
        if not _valid(self.validate, self.subset, q):
            self.rejected += 1
            return False
        if all(self.subset.distance(q, s) >= self.solution_distance for s in self.solutions):
            self.solutions.append(q)
        return len(self.solutions) >= self.max_solutions

    def outcome(self, reason: str, *, closest_to_seed: bool) -> SearchOutcome:
        """The :class:`SearchOutcome` of a search that stopped for ``reason``."""
        counts = (self.iterations, self.restarts, self.rejected, self.skipped)
        if not self.solutions:
            q = self.best_q if self.best_q is not None else self.q_seed.copy()
            return SearchOutcome(q, False, self.solutions, *counts, reason, self.collided)
        chosen = self.solutions[0]
        if closest_to_seed and len(self.solutions) > 1:
            chosen = min(self.solutions, key=lambda s: self.subset.distance(s, self.q_seed))
        return SearchOutcome(chosen, True, self.solutions, *counts, "converged", self.collided)


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
    far: Callable[[], np.ndarray | None] | None = None,
    flips: Callable[[np.ndarray], list[np.ndarray]] | None = None,
    library: Callable[[], LibraryPicks | None] | None = None,
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
        far: After ``collision`` rejected a configuration: the columns (n,) that
            :func:`_away` turns (the rejected pair's), or None (no turn).
        flips: After ``collision`` rejected a configuration: its branch flips, the starts
            tried before the next random one, or None.
        library: The seed library's picks for this search (:mod:`pinkctl.ik.seeds`; called
            at the first rejection), or None.
    """
    if local is None:
        local = functools.partial(run_local, residual, subset, method)
    # _Search's fields in order (their types are global_search's, checked above)
    fields: tuple[Any, ...] = (residual, subset, q_seed, rng, local, deadline, max_restarts)
    fields += (max_iterations, iterations_per_start, stall_iterations, validate, metric)
    fields += (metric_threshold, max_solutions, solution_distance, max_step, collision, far)
    fields += (flips, library)
    search = _Search(*fields)
    return search.outcome(search.run(), closest_to_seed=closest_to_seed)
