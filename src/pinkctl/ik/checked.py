"""The option dataclasses of :mod:`pinkctl.ik.options`, checked and converted.

Values are checked where they are used, so an option object can be built, stored and
replaced freely: :func:`checked_local` and :func:`checked_search` raise an
:class:`~pinkctl.errors.InputError` naming the field; :class:`CheckedCache` memoises the
checked budgets of a solver's repeated queries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from .options import (
    _DEFAULT_METRIC_ARRAY,
    DEFAULT_METRIC,
    MAX_ITERATIONS,
    MAX_RESTARTS,
    MAX_SOLUTIONS,
    IKOptions,
    LocalOptions,
    SearchOptions,
    split_options,
)
from .targets import GoalMode, parse_approach_axis, parse_vector

__all__ = [
    "CheckedCache",
    "CheckedGoal",
    "CheckedLocal",
    "CheckedSearch",
    "checked_goal",
    "checked_local",
    "checked_search",
    "count",
    "positive_int",
    "tolerance",
]


def tolerance(value: Any, name: str) -> np.ndarray:
    """A positive tolerance per axis, (3,), from a number or 3 numbers."""
    arr = np.array(value, dtype=np.float64).reshape(-1) if np.ndim(value) else None
    if arr is None:
        try:
            scalar = float(value)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name}: expected a positive number or 3 of them") from exc
        arr = np.full(3, scalar)
    if arr.size != 3 or not np.all(np.isfinite(arr)) or np.any(arr <= 0.0):
        raise InputError(f"{name}: expected a positive number or 3 positive numbers, got {value}")
    return arr


def count(value: Any, name: str, *, lowest: int, expected: str, upper: int | None = None) -> int:
    """An integer in ``[lowest, upper]`` (booleans refused; None: no upper bound), else
    InputError naming ``name`` and saying what was ``expected``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lowest:
        raise InputError(f"{name}: expected {expected}, got {value!r}")
    if upper is not None and value > upper:
        raise InputError(f"{name}: at most {upper:,}, got {value!r}")
    return int(value)


def positive_int(
    value: Any, name: str, *, allow_none: bool = True, upper: int = MAX_ITERATIONS
) -> int | None:
    if value is None and allow_none:
        return None
    return count(value, name, lowest=1, upper=upper, expected="a positive integer")


def _non_negative_int(value: Any, name: str, *, upper: int) -> int | None:
    if value is None:
        return None
    return count(value, name, lowest=0, upper=upper, expected="a non-negative integer or None")


def _positive_float(value: Any, name: str) -> float | None:
    if value is None:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected a positive number or None, got {value!r}") from exc
    if not np.isfinite(out) or out <= 0.0:
        raise InputError(f"{name}: expected a positive number or None, got {value!r}")
    return out


def _budget_ms(value: Any) -> float | None:
    if value is None:
        return None
    try:
        budget = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(
            "time_budget_ms: expected a positive number of milliseconds or None"
        ) from exc
    if not np.isfinite(budget) or budget <= 0.0:
        raise InputError(
            f"time_budget_ms: expected a positive number of milliseconds, got {value!r}"
        )
    return budget


@dataclass(frozen=True)
class CheckedGoal:
    """The goal fields of :class:`IKOptions`, checked and converted (internal form).

    Attributes:
        mode: ``"pose"``, ``"position"`` or ``"approach"``.
        approach_axis: Unit tool axis (frame coordinates), or None.
        approach_direction: Unit world direction of the approach axis.
        point_offset: Controlled point in the frame's coordinates [m], or None (origin).
        orientation_weight: Weight of the rotational rows [m/rad], > 0.
        position_tolerance: Per-axis position tolerance [m], (3,).
        orientation_tolerance: Per-axis orientation tolerance [rad], (3,).
    """

    mode: GoalMode
    approach_axis: np.ndarray | None
    approach_direction: np.ndarray
    point_offset: np.ndarray | None
    orientation_weight: float
    position_tolerance: np.ndarray
    orientation_tolerance: np.ndarray


def _goal_mode(options: IKOptions) -> GoalMode:
    """The goal mode the options ask for (an approach axis is no position-only goal)."""
    if options.position_only and options.approach_axis is not None:
        raise InputError("approach_axis: cannot be combined with position_only=True")
    if options.position_only:
        return "position"
    return "approach" if options.approach_axis is not None else "pose"


def _unit_direction(value: Any, name: str) -> np.ndarray:
    """A non-zero (3,) vector, normalised."""
    direction = parse_vector(value, 3, name)
    norm = float(np.linalg.norm(direction))
    if norm < 1e-9:
        raise InputError(f"{name}: must be a non-zero vector")
    return direction / norm


def checked_goal(options: IKOptions) -> CheckedGoal:
    """Check the goal fields of an :class:`IKOptions`; raises :class:`InputError` naming
    the field."""
    mode = _goal_mode(options)
    axis = options.approach_axis
    offset = options.point_offset
    return CheckedGoal(
        mode=mode,
        approach_axis=parse_approach_axis(axis) if axis is not None else None,
        approach_direction=_unit_direction(options.approach_direction, "approach_direction"),
        point_offset=parse_vector(offset, 3, "point_offset") if offset is not None else None,
        orientation_weight=_positive_weight(options.orientation_weight),
        position_tolerance=tolerance(options.position_tolerance, "position_tolerance"),
        orientation_tolerance=tolerance(options.orientation_tolerance, "orientation_tolerance"),
    )


def _positive_weight(value: Any) -> float:
    """``orientation_weight`` as a finite float > 0 [m/rad]."""
    weight = float(value)
    if not np.isfinite(weight) or weight <= 0.0:
        raise InputError(f"orientation_weight: expected a positive number, got {weight}")
    return weight


@dataclass(frozen=True)
class CheckedLocal:
    """:class:`LocalOptions` checked and converted (internal form)."""

    max_iterations: int
    time_budget_ms: float | None
    stall_iterations: int | None
    max_step: float | None


def checked_local(options: LocalOptions) -> CheckedLocal:
    """Check a :class:`LocalOptions`; raises :class:`InputError` naming the field."""
    max_it = positive_int(options.max_iterations, "max_iterations", allow_none=False)
    assert max_it is not None
    return CheckedLocal(
        max_iterations=max_it,
        time_budget_ms=_budget_ms(options.time_budget_ms),
        stall_iterations=positive_int(options.stall_iterations, "stall_iterations"),
        max_step=_positive_float(options.max_step, "max_step"),
    )


@dataclass(frozen=True)
class CheckedSearch:
    """:class:`SearchOptions` checked and converted (internal form)."""

    time_budget_ms: float | None
    max_restarts: int | None
    max_iterations: int | None
    iterations_per_start: int
    stall_iterations: int | None
    generator: np.random.Generator | Callable[[], np.random.Generator]
    validate: Callable[[np.ndarray], bool] | None
    metric: np.ndarray
    metric_threshold: float | None
    max_solutions: int
    closest_to_seed: bool
    max_step: float | None


def _generator(
    rng: Any,
) -> np.random.Generator | Callable[[], np.random.Generator]:
    """The generator itself, or a factory of identically seeded generators (one per query,
    so that an integer seed gives the same answer every call)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        if rng is not None and rng < 0:
            raise InputError(f"rng: an integer seed must be non-negative, got {rng}")
        entropy = rng if rng is not None else np.random.SeedSequence().entropy

        def generator() -> np.random.Generator:
            return np.random.default_rng(entropy)

        return generator
    raise InputError(f"rng: expected an integer seed, a Generator or None, got {rng!r}")


def _search_budgets(options: SearchOptions) -> tuple[float | None, int | None, int | None]:
    """The checked ``(time_budget_ms, max_restarts, max_iterations)``, at least one set."""
    budget = _budget_ms(options.time_budget_ms)
    restarts = _non_negative_int(options.max_restarts, "max_restarts", upper=MAX_RESTARTS)
    iterations = positive_int(options.max_iterations, "max_iterations")
    if budget is None and restarts is None and iterations is None:
        raise InputError(
            "time_budget_ms: give time_budget_ms, max_restarts or max_iterations; "
            "without any budget the search may never end"
        )
    return budget, restarts, iterations


def _metric(options: SearchOptions) -> tuple[np.ndarray, float | None]:
    """The checked pose metric weights (4,) and metric threshold (None: never skip)."""
    if options.metric is DEFAULT_METRIC:
        metric = _DEFAULT_METRIC_ARRAY
    else:
        metric = parse_vector(options.metric, 4, "metric")
        if np.any(metric < 0.0):
            raise InputError(f"metric: weights must be non-negative, got {metric}")
    if options.metric_threshold is None:
        return metric, None
    threshold = float(options.metric_threshold)
    if not np.isfinite(threshold) or threshold <= 0.0:
        raise InputError(f"metric_threshold: expected a positive number, got {threshold}")
    return metric, threshold


def checked_search(options: SearchOptions) -> CheckedSearch:
    """Check a :class:`SearchOptions`; raises :class:`InputError` naming the field."""
    budget, restarts, iterations = _search_budgets(options)
    per_start = positive_int(options.iterations_per_start, "iterations_per_start", allow_none=False)
    n_solutions = positive_int(
        options.max_solutions, "max_solutions", allow_none=False, upper=MAX_SOLUTIONS
    )
    assert per_start is not None and n_solutions is not None
    if options.validate is not None and not callable(options.validate):
        raise InputError("validate: expected a callable validate(q) -> bool")
    metric, threshold = _metric(options)
    return CheckedSearch(
        time_budget_ms=budget,
        max_restarts=restarts,
        max_iterations=iterations,
        iterations_per_start=per_start,
        stall_iterations=positive_int(options.stall_iterations, "stall_iterations"),
        generator=_generator(options.rng),
        validate=options.validate,
        metric=metric,
        metric_threshold=threshold,
        max_solutions=n_solutions,
        closest_to_seed=bool(options.closest_to_seed),
        max_step=_positive_float(options.max_step, "max_step"),
    )


def _with(options: Any, name: str, value: Any) -> Any:
    """A copy of a frozen dataclass with one field changed (``dataclasses.replace`` runs the
    constructor, and ``copy.copy`` goes through ``__reduce_ex__``: each costs several times
    more than filling a bare instance's ``__dict__``)."""
    clone = object.__new__(type(options))
    fields = clone.__dict__
    fields.update(options.__dict__)
    fields[name] = value
    return clone


_Pair = tuple[SearchOptions, CheckedSearch]


class CheckedCache:
    """Checked budgets of the queries of one solver, memoised.

    A tracking loop or a batch asks with the same budget every time, and building and
    checking the option objects costs more than a converged solve. The key is the option
    object and the keyword changes; a budget with an unhashable value is checked every time,
    and so is a search whose ``rng`` is None (fresh entropy per query, drawn when checked).
    """

    def __init__(self, capacity: int = 64) -> None:
        self._capacity = capacity
        self._local: dict[tuple, CheckedLocal] = {}
        self._search: dict[tuple, tuple[SearchOptions, CheckedSearch]] = {}
        # the last search given a Generator: (options, changes, answer, answer without the
        # generator); a loop passes the same generator with the same options call after
        # call, a batch a new generator with the same options
        self._given: tuple[Any, dict[str, Any], _Pair, _Pair] | None = None

    @staticmethod
    def _key(options: Any, changes: Mapping[str, Any]) -> tuple | None:
        key = (options, tuple(sorted(changes.items())))
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def local(self, options: LocalOptions | None, changes: Mapping[str, Any]) -> CheckedLocal:
        """``options`` (default ``LocalOptions()``) with ``changes``, checked."""
        key = self._key(options, changes)
        cached = self._local.get(key) if key is not None else None
        if cached is not None:
            return cached
        (local,) = split_options(changes, options if options is not None else LocalOptions())
        checked = checked_local(local)
        if key is not None:
            if len(self._local) >= self._capacity:
                self._local.clear()
            self._local[key] = checked
        return checked

    def search(
        self, options: SearchOptions | None, changes: Mapping[str, Any]
    ) -> tuple[SearchOptions, CheckedSearch]:
        """``options`` (default ``SearchOptions()``) with ``changes``, and their checked form."""
        rng = changes.get("rng")
        if type(rng) is np.random.Generator or isinstance(rng, np.random.Generator):
            return self._given_generator(options, changes, rng)
        key = self._key(options, changes)
        cached = self._search.get(key) if key is not None else None
        if cached is not None:
            return cached
        (search,) = split_options(changes, options if options is not None else SearchOptions())
        out = (search, checked_search(search))
        if key is not None and search.rng is not None:
            if len(self._search) >= self._capacity:
                self._search.clear()
            self._search[key] = out
        return out

    def _given_generator(
        self,
        options: SearchOptions | None,
        changes: Mapping[str, Any],
        rng: np.random.Generator,
    ) -> tuple[SearchOptions, CheckedSearch]:
        """:meth:`search` with ``rng`` a generator (a loop's, or a batch's per-target one):
        the checked form without it, the generator put in. The last check is used again when
        the options and every other change are the very same objects as then, and were
        hashable then (so not a list that may have changed since)."""
        given = self._given
        if given is not None and given[0] is options and len(given[1]) == len(changes):
            same = given[1]
            if all(same.get(k, same) is v for k, v in changes.items() if k != "rng"):
                if same["rng"] is rng:
                    return given[2]
                return self._put(given[3], options, changes, rng)
        rest = {k: v for k, v in changes.items() if k != "rng"}
        base = self.search(options, rest)
        out = self._put(base, options, changes, rng)
        if self._key(options, rest) is None:
            self._given = None
        return out

    def _put(
        self,
        base: tuple[SearchOptions, CheckedSearch],
        options: SearchOptions | None,
        changes: Mapping[str, Any],
        rng: np.random.Generator,
    ) -> tuple[SearchOptions, CheckedSearch]:
        """``base`` with the generator ``rng`` put in, remembered as the last given."""
        out = (_with(base[0], "rng", rng), _with(base[1], "generator", rng))
        self._given = (options, dict(changes), out, base)
        return out
