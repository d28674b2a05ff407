"""pink control-barrier functions: objective terms and inequality rows.

A pink barrier ``h(q) >= 0`` of dimension ``d`` (``pink.barriers.Barrier``) contributes

- the rows :math:`-\\frac{1}{\\mathrm{d}t} \\frac{\\partial h}{\\partial q} \\Delta q \\le
  \\gamma \\, \\kappa(h(q))` (``gain`` :math:`\\gamma`, ``gain_function`` :math:`\\kappa`,
  elementwise), and
- when ``safe_displacement_gain`` :math:`r > 10^{-6}`, the objective term
  :math:`\\frac{r}{\\|J_h\\|_F^2} (I, -\\Delta q_{\\mathrm{safe}})`: ``r / ||J_h||_F**2`` on the
  diagonal of ``H`` and ``-r / ||J_h||_F**2 * dq_safe`` in ``c``, with the Frobenius norm taken
  over the whole tangent space.

Terms:

- :class:`SelfCollisionBarrierTerm` (``pink.barriers.SelfCollisionBarrier``): the same math as
  pink, computed once per tick (pink reads every collision pair's distance twice and loops
  over the ``d`` closest pairs in Python). Barrier values are the ``d`` largest of
  ``-(d_k - d_min)``; row ``i`` of the Jacobian, for pair ``k`` with nearest points
  :math:`w_1, w_2`, normal :math:`n = (w_1 - w_2)/\\|w_1 - w_2\\|`, lever arms
  :math:`r_j = w_j - p_{\\mathrm{joint}_j}` and LOCAL_WORLD_ALIGNED joint Jacobians
  :math:`(J^j_v; J^j_\\omega)`, is
  :math:`n^T J^1_v + (r_1 \\times n)^T J^1_\\omega - n^T J^2_v - (r_2 \\times n)^T J^2_\\omega`
  (zero when :math:`w_1 \\approx w_2`, NaN replaced by zero). Pairs are selected with the same
  ``argpartition`` calls as pink, so the same pairs come out in the same order.
  A zero barrier Jacobian (every selected pair in contact) makes the safe-displacement
  weight undefined (pink divides by zero); it raises :class:`~pinkctl.qp.QPSolveError`.
- :class:`DirectBarrierTerm`: any barrier that keeps the base class's ``compute_qp_objective``
  and ``compute_qp_inequalities`` (``PositionBarrier``, ``BodySphericalBarrier``, ...): its own
  ``compute_jacobian``, ``compute_barrier`` and ``compute_safe_displacement`` once per tick.
  Unlike pink's, it does not reuse a Jacobian cached at a configuration that is merely
  ``allclose`` to the current one: it always evaluates at the current configuration.
- :class:`GenericBarrierTerm`: a barrier overriding ``compute_qp_objective`` or
  ``compute_qp_inequalities``: its own methods, restricted to the controlled columns.
"""

from __future__ import annotations

from math import isfinite
from typing import Any

import numpy as np
import pinocchio as pin
from pink.barriers import Barrier, PositionBarrier, SelfCollisionBarrier
from pink.exceptions import InvalidCollisionPairs

from .errors import QPSolveError
from .objective import ObjectiveAccumulator
from .selection import ColumnSelection, restrict_inequalities

__all__ = [
    "BarrierTerm",
    "DirectBarrierTerm",
    "GenericBarrierTerm",
    "SelfCollisionBarrierTerm",
    "compile_barrier",
]

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
#: Below this safe-displacement gain pink skips the objective term.
_SAFE_DISPLACEMENT_THRESHOLD = 1e-6


#: Code object of pink's default (identity) gain function, to vectorize it.
_IDENTITY_GAIN_CODE = PositionBarrier("probe", p_min=np.zeros(3)).gain_function.__code__


def _barrier_values(barrier: Barrier, values: np.ndarray) -> np.ndarray:
    """``gain[i] * gain_function(values[i])`` for ``i < dim`` (pink's right-hand side)."""
    dim = barrier.dim
    gain = np.asarray(barrier.gain, dtype=np.float64)
    function = barrier.gain_function
    if getattr(function, "__code__", None) is _IDENTITY_GAIN_CODE:
        return gain[:dim] * values[:dim]
    return np.array([gain[i] * function(values[i]) for i in range(dim)], dtype=np.float64)


class BarrierTerm:
    """Base class of a compiled barrier.

    Attributes:
        barrier: The pink barrier.
    """

    barrier: Barrier

    def evaluate(
        self, configuration: Any, dt: float, acc: ObjectiveAccumulator
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Add the objective term to ``acc``; return the rows ``(G_c, h)`` (or None)."""
        raise NotImplementedError


class GenericBarrierTerm(BarrierTerm):
    """A barrier's own ``compute_qp_objective`` / ``compute_qp_inequalities``, restricted."""

    def __init__(self, barrier: Barrier, selection: ColumnSelection) -> None:
        self.barrier = barrier
        self._selection = selection

    def evaluate(
        self, configuration: Any, dt: float, acc: ObjectiveAccumulator
    ) -> tuple[np.ndarray, np.ndarray] | None:
        barrier, selection = self.barrier, self._selection
        acc.add_dense(*selection.restrict_objective(*barrier.compute_qp_objective(configuration)))
        G, h = barrier.compute_qp_inequalities(configuration, dt)
        return restrict_inequalities(G, h, selection)


class DirectBarrierTerm(GenericBarrierTerm):
    """A barrier with pink's base-class QP methods, evaluated once per tick: its Jacobian and
    values, then the safe-displacement objective term and the rows."""

    def __init__(self, barrier: Barrier, selection: ColumnSelection) -> None:
        super().__init__(barrier, selection)
        self._default_safe = (
            type(barrier).compute_safe_displacement is Barrier.compute_safe_displacement
        )

    def evaluate(
        self, configuration: Any, dt: float, acc: ObjectiveAccumulator
    ) -> tuple[np.ndarray, np.ndarray] | None:
        jacobian, values = self._jacobian_and_values(configuration)
        self._add_objective(configuration, jacobian, acc)
        h = _barrier_values(self.barrier, values)
        return restrict_inequalities(jacobian / -dt, h, self._selection)

    def _jacobian_and_values(self, configuration: Any) -> tuple[np.ndarray, np.ndarray]:
        barrier = self.barrier
        jacobian = np.asarray(barrier.compute_jacobian(configuration), dtype=np.float64)
        return jacobian, np.asarray(barrier.compute_barrier(configuration), dtype=np.float64)

    def _add_objective(
        self, configuration: Any, jacobian: np.ndarray, acc: ObjectiveAccumulator
    ) -> None:
        """The safe-displacement objective term (module docstring)."""
        barrier = self.barrier
        gain = barrier.safe_displacement_gain
        if not gain > _SAFE_DISPLACEMENT_THRESHOLD:
            return
        if self._default_safe:
            safe = None
        else:
            safe = np.asarray(barrier.compute_safe_displacement(configuration), dtype=np.float64)
            barrier.safe_displacement = safe
        squared_norm = float(np.linalg.norm(jacobian)) ** 2
        if not squared_norm > 0.0:
            raise QPSolveError(
                f"{type(barrier).__name__}: zero barrier Jacobian, the safe-displacement "
                "weight safe_displacement_gain / ||J||^2 is undefined",
                solver="",
                status="barrier",
            )
        weight = gain / squared_norm
        acc.diagonal_scalar += weight
        if safe is not None:
            acc.add_linear(-weight * self._selection.entries(safe))


class SelfCollisionBarrierTerm(DirectBarrierTerm):
    """``pink.barriers.SelfCollisionBarrier`` computed once per tick (see module docstring)."""

    barrier: SelfCollisionBarrier

    def __init__(self, barrier: SelfCollisionBarrier, selection: ColumnSelection) -> None:
        super().__init__(barrier, selection)
        self._collision_data: Any = None
        self._results: list[Any] = []

    def _pair_tables(self, configuration: Any) -> None:
        """Cache the distance results and each pair's parent joints (per collision data)."""
        collision_model = configuration.collision_model
        collision_data = configuration.collision_data
        n_pairs = len(collision_model.collisionPairs)
        if collision_data is self._collision_data and len(self._results) == n_pairs:
            return
        results = list(collision_data.distanceResults)
        if len(results) != n_pairs:
            raise InvalidCollisionPairs(
                f"collision data holds {len(results)} distance results for {n_pairs} pairs"
            )
        objects = collision_model.geometryObjects
        pairs = collision_model.collisionPairs
        self._joint1 = np.array([objects[p.first].parentJoint for p in pairs], dtype=np.intp)
        self._joint2 = np.array([objects[p.second].parentJoint for p in pairs], dtype=np.intp)
        self._results = results
        self._collision_data = collision_data

    def evaluate(
        self, configuration: Any, dt: float, acc: ObjectiveAccumulator
    ) -> tuple[np.ndarray, np.ndarray] | None:
        if configuration.collision_model is None or self.barrier.dim <= 0:
            return GenericBarrierTerm.evaluate(self, configuration, dt, acc)
        return super().evaluate(configuration, dt, acc)

    def _jacobian_and_values(self, configuration: Any) -> tuple[np.ndarray, np.ndarray]:
        barrier = self.barrier
        dim = barrier.dim
        n_pairs = len(configuration.collision_model.collisionPairs)
        if n_pairs < dim:
            raise InvalidCollisionPairs(
                f"The number of collision pairs ({n_pairs}) "
                f"is less than the barrier dimension ({dim})."
            )
        self._pair_tables(configuration)
        results = self._results
        distances = np.array([r.min_distance for r in results])
        # Barrier values h (pink: compute_barrier).
        shifted = distances - barrier.d_min
        values = shifted[np.argpartition(-shifted, -dim)[-dim:]]
        # Jacobian rows (pink: compute_jacobian, its own argpartition on the raw distances).
        closest = np.argpartition(-distances, -dim)[-dim:]
        return self._jacobian(configuration, closest, results), values

    def _jacobian(self, configuration: Any, closest: np.ndarray, results: list[Any]) -> np.ndarray:
        model = configuration.model
        data = configuration.data
        dim = closest.size
        point1 = np.empty((dim, 3))
        point2 = np.empty((dim, 3))
        for i, k in enumerate(closest.tolist()):
            result = results[k]
            point1[i] = result.getNearestPoint1()
            point2[i] = result.getNearestPoint2()
        joint1 = self._joint1[closest]
        joint2 = self._joint2[closest]
        joints = np.unique(np.concatenate([joint1, joint2]))
        jacobians = np.empty((joints.size, 6, model.nv))
        origins = np.empty((joints.size, 3))
        for slot, joint in enumerate(joints.tolist()):
            jacobians[slot] = pin.getJointJacobian(model, data, joint, _LWA)
            origins[slot] = data.oMi[joint].translation
        slot1 = np.searchsorted(joints, joint1)
        slot2 = np.searchsorted(joints, joint2)
        delta = point1 - point2
        # np.allclose(w1, w2) per pair (rtol 1e-5, atol 1e-8): Jacobian undefined, row = 0.
        degenerate = np.all(np.abs(delta) <= 1e-8 + 1e-5 * np.abs(point2), axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            normal = delta / np.linalg.norm(delta, axis=1)[:, None]
        # Row coefficients (n, r x n) against the stacked (linear; angular) joint Jacobians.
        coefficients1 = np.empty((dim, 1, 6))
        coefficients2 = np.empty((dim, 1, 6))
        coefficients1[:, 0, :3] = normal
        coefficients2[:, 0, :3] = normal
        coefficients1[:, 0, 3:] = _cross_rows(point1 - origins[slot1], normal)
        coefficients2[:, 0, 3:] = _cross_rows(point2 - origins[slot2], normal)
        jacobian = np.matmul(coefficients1, jacobians[slot1])[:, 0, :]
        jacobian -= np.matmul(coefficients2, jacobians[slot2])[:, 0, :]
        jacobian[degenerate] = 0.0
        if not isfinite(float(jacobian.sum())):  # pink: NaN -> 0 (points in contact)
            jacobian = np.nan_to_num(jacobian)
        return jacobian


_NEXT = np.array([1, 2, 0])
_PREVIOUS = np.array([2, 0, 1])


def _cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products ``a[i] x b[i]`` of two (k, 3) arrays (cheaper than np.cross)."""
    return a[:, _NEXT] * b[:, _PREVIOUS] - a[:, _PREVIOUS] * b[:, _NEXT]


def compile_barrier(barrier: Barrier, selection: ColumnSelection) -> BarrierTerm:
    """Pick the term of ``barrier`` (see module docstring for the rules)."""
    cls = type(barrier)
    if (
        cls.compute_qp_objective is not Barrier.compute_qp_objective
        or cls.compute_qp_inequalities is not Barrier.compute_qp_inequalities
    ):
        return GenericBarrierTerm(barrier, selection)
    if (
        isinstance(barrier, SelfCollisionBarrier)
        and cls.compute_jacobian is SelfCollisionBarrier.compute_jacobian
        and cls.compute_barrier is SelfCollisionBarrier.compute_barrier
    ):
        return SelfCollisionBarrierTerm(barrier, selection)
    return DirectBarrierTerm(barrier, selection)
