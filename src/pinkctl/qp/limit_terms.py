"""pink limits as simple bounds on the controlled displacement, or as inequality rows.

pink writes its joint limits as pairs of row blocks :math:`[P; -P] \\Delta q \\le [u; -l]`
with :math:`P` the rows of the identity selecting the limited coordinates (``indices``, only
joints whose limits are finite). That is exactly :math:`l \\le \\Delta q[\\text{indices}] \\le u`,
so the fast path intersects them into the box ``lb <= x <= ub`` of the QP (never ``G`` rows):

- :class:`ConfigurationLimitBox` (``pink.limits.ConfigurationLimit``, gain
  :math:`\\gamma` = ``config_limit_gain``):
  :math:`\\gamma (q_{\\min} \\ominus q) \\le \\Delta q \\le \\gamma (q_{\\max} \\ominus q)`,
  with :math:`a \\ominus b` = ``pin.difference(model, b, a)``.
- :class:`VelocityLimitBox` (``pink.limits.VelocityLimit``):
  :math:`-\\mathrm{d}t\\, v_{\\max} \\le \\Delta q \\le \\mathrm{d}t\\, v_{\\max}`.
- :class:`AccelerationLimitBox` (``pink.limits.AccelerationLimit``, state
  :math:`\\Delta q_{\\mathrm{prev}}` set by the user through ``set_last_integration``):
  :math:`\\Delta q \\le \\min(a_{\\max} \\mathrm{d}t^2 + \\Delta q_{\\mathrm{prev}},\\;
  \\mathrm{d}t \\sqrt{2 a_{\\max} (q_{\\max} \\ominus q)})` and
  :math:`-\\Delta q \\le \\min(a_{\\max} \\mathrm{d}t^2 - \\Delta q_{\\mathrm{prev}},\\;
  \\mathrm{d}t \\sqrt{2 a_{\\max} (q \\ominus q_{\\min})})`, the braking-distance terms being
  infinite for joints without a configuration limit.

Any other limit (``FloatingBaseVelocityLimit``, user classes, a subclass overriding
``compute_qp_inequalities``, or one whose projection matrix is not the identity rows of its
``indices``) goes through :class:`GenericLimitRows`: its own ``compute_qp_inequalities``,
restricted to the controlled columns. Each limit's structure (its ``indices``) is analysed once;
its values (gain, velocity limits, ``a_max``, ``Delta_q_prev``, model position limits) are read
on every tick.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin
from pink.limits import AccelerationLimit, ConfigurationLimit, Limit, VelocityLimit

from .selection import ColumnSelection, as_index, restrict_inequalities

__all__ = [
    "AccelerationLimitBox",
    "BoxBounds",
    "ConfigurationLimitBox",
    "GenericLimitRows",
    "JointBox",
    "LimitTerm",
    "LimitPlan",
    "VelocityLimitBox",
    "compile_limit",
]


class BoxBounds:
    """Intersection of simple bounds ``lb <= x <= ub`` written into preallocated arrays;
    ``positions`` None means "every variable", else a slice or index array."""

    def __init__(self, lb: np.ndarray, ub: np.ndarray) -> None:
        self.bind(lb, ub)
        self._scratch = np.zeros(lb.shape[0])
        self._scale = np.zeros(())  # 0-d operand: cheaper in ufuncs than a Python float

    def bind(self, lb: np.ndarray, ub: np.ndarray) -> None:
        """Write into these arrays from now on."""
        self.lb = lb
        self.ub = ub

    def reset(self) -> None:
        """Start a new tick: no bound yet (infinite bounds)."""
        self.lb.fill(-np.inf)
        self.ub.fill(np.inf)

    def tighten_upper(
        self, positions: slice | np.ndarray | None, values: np.ndarray, scale: float = 1.0
    ) -> None:
        """``ub[positions] = min(ub[positions], scale * values)``."""
        self._tighten(self.ub, np.minimum, positions, values, scale)

    def tighten_lower(
        self, positions: slice | np.ndarray | None, values: np.ndarray, scale: float = 1.0
    ) -> None:
        """``lb[positions] = max(lb[positions], scale * values)``."""
        self._tighten(self.lb, np.maximum, positions, values, scale)

    def _tighten(
        self,
        bound: np.ndarray,
        combine: np.ufunc,
        positions: slice | np.ndarray | None,
        values: np.ndarray,
        scale: float,
    ) -> None:
        """One side: ``bound[positions] = combine(bound[positions], scale * values)``."""
        if positions is not None:
            bound[positions] = combine(bound[positions], np.multiply(values, scale))
            return
        if scale != 1.0:
            self._scale[()] = scale
            values = np.multiply(values, self._scale, self._scratch)
        combine(bound, values, out=bound)


class LimitTerm:
    """Base class of a compiled limit.

    Attributes:
        limit: The pink limit.
        is_box: True when the limit only tightens the box (no ``G`` rows).
    """

    limit: Limit
    is_box: bool = True
    #: A box term that limits no controlled coordinate (left out of the plan).
    empty: bool = False

    def apply(self, configuration: Any, dt: float, box: BoxBounds) -> None:
        """Tighten ``box`` with the limit at the current configuration."""

    def rows(self, configuration: Any, dt: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Inequality rows ``(G_c, h)`` over the controlled columns, or None."""
        return None


class _IndexedBox(LimitTerm):
    """Shared set-up: which of the limit's ``indices`` are controlled, and where.

    Attributes:
        empty: No controlled coordinate is limited.
        positions: Where the limited coordinates sit among the QP variables (None: all of
            them, in order).
        tangent: The limited controlled coordinates, as tangent indices.
    """

    def __init__(self, limit: Any, selection: ColumnSelection) -> None:
        self.limit = limit
        indices = np.asarray(limit.indices, dtype=np.intp).reshape(-1)
        k, p = selection.map_tangent_indices(indices)
        self.empty = k.size == 0
        self.positions = selection.placement(p)
        self._k = as_index(k) if k.size else k  # entries of the limit's own vectors
        self.tangent = as_index(indices[k]) if k.size else k  # the same, as tangent indices


class ConfigurationLimitBox(_IndexedBox):
    """``pink.limits.ConfigurationLimit`` as box bounds (see module docstring)."""

    def apply(self, configuration: Any, dt: float, box: BoxBounds) -> None:
        limit, q = self.limit, configuration.q
        model = limit.model
        gain = limit.config_limit_gain
        tangent = self.tangent
        delta_max = pin.difference(model, q, model.upperPositionLimit)
        box.tighten_upper(self.positions, delta_max[tangent], gain)
        delta_min = pin.difference(model, q, model.lowerPositionLimit)
        box.tighten_lower(self.positions, delta_min[tangent], gain)


class VelocityLimitBox(_IndexedBox):
    """``pink.limits.VelocityLimit`` as box bounds (see module docstring).

    ``dt * v_max`` is cached and recomputed only when ``dt`` or the limit's
    ``velocity_limit`` bytes change.
    """

    def __init__(self, limit: Any, selection: ColumnSelection) -> None:
        super().__init__(limit, selection)
        self._dt = 0.0
        self._velocity_bytes = b""
        self._upper = np.zeros(0)
        self._lower = np.zeros(0)

    def bounds(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """``(-dt v_max, dt v_max)`` on the controlled limited coordinates (cached)."""
        velocity_limit = self.limit.velocity_limit
        velocity_bytes = velocity_limit.tobytes()
        if dt != self._dt or velocity_bytes != self._velocity_bytes:
            self._upper = np.multiply(
                np.asarray(velocity_limit, dtype=np.float64)[self.tangent], dt
            )
            self._lower = np.negative(self._upper)
            self._dt = dt
            self._velocity_bytes = velocity_bytes
        return self._lower, self._upper

    def apply(self, configuration: Any, dt: float, box: BoxBounds) -> None:
        lower, upper = self.bounds(dt)
        box.tighten_upper(self.positions, upper)
        box.tighten_lower(self.positions, lower)


class JointBox(LimitTerm):
    """A configuration limit and a velocity limit on every controlled coordinate, fused.

    The common case (pink's default limits on an arm): both cover all controlled coordinates,
    so ``ub = min(gain (q_max - q), dt v_max)`` and ``lb = max(gain (q_min - q), -dt v_max)``
    are written directly (it must be the first box term of the tick). Without the velocity
    limit (``velocity`` None: the QP of a motion-limited controller, whose shaper enforces the
    velocity), the configuration limit's bounds.
    """

    def __init__(
        self, configuration_box: ConfigurationLimitBox, velocity_box: VelocityLimitBox | None
    ) -> None:
        self.limit = configuration_box.limit
        self.velocity = velocity_box
        self.tangent = configuration_box.tangent
        self._gain = np.zeros(())  # 0-d operand: cheaper in ufuncs than a Python float

    def write(self, q: np.ndarray, dt: float, lb: np.ndarray, ub: np.ndarray) -> None:
        """Write this tick's bounds at ``q`` into ``lb`` and ``ub``."""
        model = self.limit.model
        tangent = self.tangent
        gain = self._gain
        gain[()] = self.limit.config_limit_gain
        np.multiply(pin.difference(model, q, model.upperPositionLimit)[tangent], gain, ub)
        np.multiply(pin.difference(model, q, model.lowerPositionLimit)[tangent], gain, lb)
        if self.velocity is not None:
            lower, upper = self.velocity.bounds(dt)
            np.minimum(ub, upper, out=ub)
            np.maximum(lb, lower, out=lb)

    def apply(self, configuration: Any, dt: float, box: BoxBounds) -> None:
        self.write(configuration.q, dt, box.lb, box.ub)  # the first box term of the tick


class AccelerationLimitBox(_IndexedBox):
    """``pink.limits.AccelerationLimit`` as box bounds (see module docstring)."""

    def apply(self, configuration: Any, dt: float, box: BoxBounds) -> None:
        limit, q = self.limit, configuration.q
        model = limit.model
        k = self._k
        a_max = np.asarray(limit.a_max, dtype=np.float64)[k]
        delta_q_prev = np.asarray(limit.Delta_q_prev, dtype=np.float64)[k]
        has_limit = np.asarray(limit.has_configuration_limit)[k]
        delta_max = pin.difference(model, q, model.upperPositionLimit)[self.tangent]
        delta_min = pin.difference(model, model.lowerPositionLimit, q)[self.tangent]
        delta_max = np.where(has_limit, delta_max, np.inf)
        delta_min = np.where(has_limit, delta_min, np.inf)
        dt_sq = dt * dt
        with np.errstate(invalid="ignore"):  # outside the range: NaN, reported by the caller
            upper = np.minimum(a_max * dt_sq + delta_q_prev, dt * np.sqrt(2 * a_max * delta_max))
            lower = np.minimum(a_max * dt_sq - delta_q_prev, dt * np.sqrt(2 * a_max * delta_min))
        box.tighten_upper(self.positions, upper)
        box.tighten_lower(self.positions, lower, -1.0)


class GenericLimitRows(LimitTerm):
    """Any limit: its own ``compute_qp_inequalities``, restricted to the controlled columns."""

    is_box = False

    def __init__(self, limit: Limit, selection: ColumnSelection) -> None:
        self.limit = limit
        self._selection = selection

    def rows(self, configuration: Any, dt: float) -> tuple[np.ndarray, np.ndarray] | None:
        matvec = self.limit.compute_qp_inequalities(configuration, dt)
        if matvec is None:
            return None
        G, h = matvec
        return restrict_inequalities(G, h, self._selection)


def _is_identity_projection(limit: Any, nv: int) -> bool:
    """Whether ``limit.projection_matrix`` is ``eye(nv)[limit.indices]`` (or None and empty)."""
    indices = np.asarray(getattr(limit, "indices", np.zeros(0)), dtype=np.intp).reshape(-1)
    projection = getattr(limit, "projection_matrix", None)
    if projection is None:
        return indices.size == 0
    projection = np.asarray(projection)
    return projection.shape == (indices.size, nv) and np.array_equal(
        projection, np.eye(nv)[indices]
    )


def compile_limit(limit: Limit, nv: int, selection: ColumnSelection) -> LimitTerm:
    """Pick the term of ``limit`` (see module docstring for the rules)."""
    model = getattr(limit, "model", None)
    if model is not None and getattr(model, "nv", -1) == nv and _is_identity_projection(limit, nv):
        method = getattr(type(limit), "compute_qp_inequalities", None)
        for kind, term in _BOX_TERMS:
            if isinstance(limit, kind):
                if method is kind.compute_qp_inequalities:
                    return term(limit, selection)
                break
    return GenericLimitRows(limit, selection)


#: The pink limits written as box bounds, and their terms.
_BOX_TERMS: tuple[tuple[type[Limit], type[_IndexedBox]], ...] = (
    (ConfigurationLimit, ConfigurationLimitBox),
    (VelocityLimit, VelocityLimitBox),
    (AccelerationLimit, AccelerationLimitBox),
)


class LimitPlan:
    """Compiled limits of one tick: box terms (a fused joint box first when possible, empty
    ones left out) and row terms.

    Attributes:
        box_terms: Terms tightening ``lb <= x <= ub``.
        row_terms: Terms producing ``G`` rows.
        nan_free: True when, for a finite configuration, the box cannot contain NaN (only
            configuration and velocity limits), so the per-tick bound check can be skipped.
        joint_box: The only box term when it is a :class:`JointBox`, else None.
    """

    def __init__(self, terms: list[LimitTerm]) -> None:
        self.row_terms = [term for term in terms if not term.is_box]
        self.box_terms = _fuse_joint_box([t for t in terms if t.is_box and not t.empty])
        self.nan_free = all(isinstance(term, _NAN_FREE) for term in self.box_terms)
        boxes = self.box_terms
        one = len(boxes) == 1 and isinstance(boxes[0], JointBox)
        self.joint_box: JointBox | None = boxes[0] if one else None  # type: ignore[assignment]


#: Box terms whose bounds are finite or infinite, never NaN, at a finite configuration.
_NAN_FREE = (ConfigurationLimitBox, VelocityLimitBox, JointBox)


def _fuse_joint_box(boxes: list[LimitTerm]) -> list[LimitTerm]:
    """``boxes`` with its first configuration limit, when it covers every controlled
    coordinate, made a :class:`JointBox` (first in the list) with its first velocity limit
    when that one covers every controlled coordinate too; else as given."""
    configuration = _first(boxes, ConfigurationLimitBox)
    if configuration is None or configuration.positions is not None:
        return boxes
    velocity = _first(boxes, VelocityLimitBox)
    if velocity is not None and velocity.positions is not None:
        velocity = None
    rest = [t for t in boxes if t is not configuration and t is not velocity]
    return [JointBox(configuration, velocity), *rest]


def _first(terms: list[LimitTerm], kind: type[LimitTerm]) -> Any:
    """The first term of ``terms`` that is a ``kind``, or None."""
    return next((term for term in terms if isinstance(term, kind)), None)
