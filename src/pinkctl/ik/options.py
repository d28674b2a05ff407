"""Options of one-shot and global IK, as three small frozen dataclasses.

- :class:`IKOptions`: what an :class:`~pinkctl.ik.IKSolver` is built from (frame, moved
  joints, step method, goal mode, tolerances);
- :class:`LocalOptions`: the budget of one local solve (:meth:`~pinkctl.ik.IKSolver.solve`);
- :class:`SearchOptions`: the budget and selection rules of a global search
  (:meth:`~pinkctl.ik.IKSolver.find`).

Every entry point also takes the fields as keywords (``find_ik(robot, target,
time_budget_ms=2.0)``); :func:`split_options` routes each keyword to the dataclass that owns
it. Values are checked where they are used (:func:`checked_local`, :func:`checked_search`,
the solver's constructor), so an option object can be built, stored and replaced freely.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from .methods import IKMethod
from .targets import parse_vector

__all__ = [
    "DEFAULT_METRIC",
    "DEFAULT_SEARCH_ITERATIONS",
    "MAX_ITERATIONS",
    "MAX_RESTARTS",
    "MAX_SOLUTIONS",
    "CheckedCache",
    "IKOptions",
    "LocalOptions",
    "SearchOptions",
    "split_options",
]

#: CoppeliaSim's default pose metric: metres on x, y, z and 0.1 per radian.
DEFAULT_METRIC = (1.0, 1.0, 1.0, 0.1)
_DEFAULT_METRIC_ARRAY = np.array(DEFAULT_METRIC)
#: Default budget of a global search: residual evaluations over all its local solves. A
#: count, not a wall-clock time, so the same call gives the same answer on a quiet and on a
#: saturated machine; it solves as often as the former 5 ms budget did on a quiet machine
#: (``bench/ik_default.py``).
DEFAULT_SEARCH_ITERATIONS = 1000
#: Upper bounds of the counts an option may ask for (beyond them a query would run for
#: hours): iterations (per solve or per search), random restarts, distinct solutions.
MAX_ITERATIONS = 10_000_000
MAX_RESTARTS = 1_000_000
MAX_SOLUTIONS = 10_000


@dataclass(frozen=True)
class IKOptions:
    """What an IK solver is built from.

    Attributes:
        frame: Default frame of single-frame targets; default: ``robot.tool_frame``, else the
            model's last frame. Several frames are solved together by passing a mapping
            ``{frame_name: target}`` as the target.
        joint_names: Joints the IK may move; default: ``robot.controlled_joint_names`` (and
            the floating base of a floating-base robot). The other joints keep their seed
            values.
        method: Step method name (``"lm"``, ``"dls"``, ``"pinv"``, ``"pinv_undamped"``,
            ``"transpose"``, ``"qp"``) or an :class:`~pinkctl.ik.methods.IKMethod`.
        method_options: Keyword arguments of the method's constructor (e.g.
            ``{"damping": 0.1}`` for ``"dls"``).
        position_only: Constrain positions only (orientation free).
        approach_axis: Tool axis (frame coordinates: 0/1/2, ``"z"``, ``"-x"`` or a (3,)
            vector) that must point along ``approach_direction``; rotation about it is free.
        approach_direction: World direction of the approach axis (default straight down).
        point_offset: The controlled point in the frame's coordinates [m] (e.g. the grasp
            point between the jaws), default the frame origin.
        orientation_weight: Weight of the rotational error rows against position rows in
            the iteration [m/rad]; tolerances are unaffected.
        position_tolerance: Per-axis position tolerance [m], a number or (3,) (world x, y, z).
        orientation_tolerance: Per-axis orientation tolerance [rad], a number or (3,) (world
            rotation-vector axes); for an approach axis, the smallest value bounds the tilt.
    """

    frame: str | None = None
    joint_names: Sequence[str] | None = None
    method: str | IKMethod = "lm"
    method_options: Mapping[str, Any] | None = None
    position_only: bool = False
    approach_axis: int | str | ArrayLike | None = None
    approach_direction: ArrayLike = (0.0, 0.0, -1.0)
    point_offset: ArrayLike | None = None
    orientation_weight: float = 1.0
    position_tolerance: float | ArrayLike = 1e-5
    orientation_tolerance: float | ArrayLike = 1e-5


@dataclass(frozen=True)
class LocalOptions:
    """Budget of one local solve from a seed (no restarts).

    Attributes:
        max_iterations: Iteration budget (residual evaluations, at most
            :data:`MAX_ITERATIONS`).
        time_budget_ms: Wall-clock budget [ms], or None.
        stall_iterations: Stop early after this many iterations without progress (None: use
            the whole budget).
        max_step: Largest joint displacement per iteration [rad] or [m], or None.
    """

    max_iterations: int = 100
    time_budget_ms: float | None = None
    stall_iterations: int | None = None
    max_step: float | None = None


@dataclass(frozen=True)
class SearchOptions:
    """Budget and selection rules of a global search (local solves, then random restarts).

    Attributes:
        time_budget_ms: Wall-clock budget [ms], or None (the default: the search ends on
            counts only, so its answer does not depend on how busy the machine is).
        max_restarts: Maximum random starts (at most :data:`MAX_RESTARTS`), or None.
        max_iterations: Total iteration budget (residual evaluations, at most
            :data:`MAX_ITERATIONS`), or None; default :data:`DEFAULT_SEARCH_ITERATIONS`.
        iterations_per_start: Iteration cap of each local solve.
        stall_iterations: Abandon a local solve after this many iterations without progress
            (None: only the cap).
        rng: Seed or generator of the random starts (None: fresh entropy). With an integer
            seed the answer is reproducible whenever ``max_restarts`` or ``max_iterations``,
            not the wall-clock budget, ends the search.
        validate: ``validate(q) -> bool`` on the moved joints' values; a configuration is
            returned as a solution only if it passes.
        metric: CoppeliaSim pose metric weights ``(m0, m1, m2, m3)`` for
            ``metric_threshold``.
        metric_threshold: Skip random starts whose pose is farther than this from the target
            under the metric (None: never skip).
        max_solutions: Keep searching until this many distinct solutions are found (or a
            budget ends), then return one of them.
        closest_to_seed: Among the solutions found, return the closest to the seed
            (joint-space Euclidean distance); else the first found.
        max_step: Largest joint displacement per iteration, or None.
    """

    time_budget_ms: float | None = None
    max_restarts: int | None = None
    max_iterations: int | None = DEFAULT_SEARCH_ITERATIONS
    iterations_per_start: int = 30
    stall_iterations: int | None = 5
    rng: int | np.random.Generator | None = 0
    validate: Callable[[np.ndarray], bool] | None = None
    metric: ArrayLike = DEFAULT_METRIC
    metric_threshold: float | None = None
    max_solutions: int = 1
    closest_to_seed: bool = True
    max_step: float | None = None


#: Any of the three option classes.
AnyOptions: TypeAlias = IKOptions | LocalOptions | SearchOptions


_FIELD_NAMES: dict[type, frozenset[str]] = {}


def _field_names(cls: type) -> frozenset[str]:
    names = _FIELD_NAMES.get(cls)
    if names is None:  # computed once per class: split_options runs on every query
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    return names


def split_options(
    changes: Mapping[str, Any],
    *defaults: AnyOptions,
) -> list[Any]:
    """Apply keyword ``changes`` to the option objects that own each field.

    Args:
        changes: Field name → value; a name two option classes share (``max_step``,
            ``max_iterations``) goes to both.
        defaults: One option object per class, the values not changed.

    Returns:
        The option objects with the changes applied, in the order of ``defaults``.

    Raises:
        InputError: A keyword no option class has (with the closest names).
    """
    if not changes:
        return list(defaults)
    known = set().union(*(_field_names(type(d)) for d in defaults))
    unknown = sorted(set(changes) - known)
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(known), n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise InputError(f"unknown IK option(s) {unknown}{hint}")
    out = []
    for default in defaults:
        own = {k: v for k, v in changes.items() if k in _field_names(type(default))}
        out.append(dataclasses.replace(default, **own) if own else default)
    return out


# ---------------------------------------------------------------------------- validation
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


def positive_int(
    value: Any, name: str, *, allow_none: bool = True, upper: int = MAX_ITERATIONS
) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name}: expected a positive integer, got {value!r}")
    if value > upper:
        raise InputError(f"{name}: at most {upper:,}, got {value!r}")
    return int(value)


def _non_negative_int(value: Any, name: str, *, upper: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name}: expected a non-negative integer or None, got {value!r}")
    if value > upper:
        raise InputError(f"{name}: at most {upper:,}, got {value!r}")
    return int(value)


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


def checked_search(options: SearchOptions) -> CheckedSearch:
    """Check a :class:`SearchOptions`; raises :class:`InputError` naming the field."""
    budget = _budget_ms(options.time_budget_ms)
    restarts = _non_negative_int(options.max_restarts, "max_restarts", upper=MAX_RESTARTS)
    iterations = positive_int(options.max_iterations, "max_iterations")
    if budget is None and restarts is None and iterations is None:
        raise InputError(
            "time_budget_ms: give time_budget_ms, max_restarts or max_iterations; "
            "without any budget the search may never end"
        )
    per_start = positive_int(options.iterations_per_start, "iterations_per_start", allow_none=False)
    n_solutions = positive_int(
        options.max_solutions, "max_solutions", allow_none=False, upper=MAX_SOLUTIONS
    )
    assert per_start is not None and n_solutions is not None
    if options.validate is not None and not callable(options.validate):
        raise InputError("validate: expected a callable validate(q) -> bool")
    if options.metric is DEFAULT_METRIC:
        metric = _DEFAULT_METRIC_ARRAY
    else:
        metric = parse_vector(options.metric, 4, "metric")
        if np.any(metric < 0.0):
            raise InputError(f"metric: weights must be non-negative, got {metric}")
    threshold = None
    if options.metric_threshold is not None:
        threshold = float(options.metric_threshold)
        if not np.isfinite(threshold) or threshold <= 0.0:
            raise InputError(f"metric_threshold: expected a positive number, got {threshold}")
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
