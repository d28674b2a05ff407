"""The IK iteration in the native kernel (``pinkctl/_native/_ik.c``) for the common case.

:func:`native_local` returns a drop-in replacement of :func:`~pinkctl.ik.loop.run_local` for
one residual when the kernel can run it, else None (the Python loop then runs). It applies when

- the native kernel is available (built at install, not switched off with ``PINKCTL_NATIVE=0``);
- the residual has one goal, a full pose or a position, on the frame origin (no
  ``point_offset``);
- the step method is :class:`~pinkctl.ik.methods.LevenbergMarquardt` (the default) or
  :class:`~pinkctl.ik.methods.DampedLeastSquares`, not a subclass. (The pseudo-inverse's
  damping, 1e-10, lets rounding differences of 1e-16 grow to 1e-8 in the joints a redundant
  chain leaves free, so it stays on the Python path, where answers are the reference.)
- every moved joint is a bounded revolute or prismatic joint or a continuous one (the model's
  only continuous joints), and the frame's support chain holds only revolute (any axis),
  prismatic (any axis) and continuous joints, at most 64 of them.

The kernel runs the same iteration (convergence test, stall detection, pinned joints, step
cap, clamping) with its own forward kinematics, so answers agree with the Python path to
rounding (``tests/test_native_ik.py`` checks whole solves to 1e-9, with the same success,
iteration count and reason). Where the Python path would fall back to a least-squares solve
(a damped normal matrix that is not positive definite), the kernel stops and the whole solve
is repeated in Python.
"""

from __future__ import annotations

import ctypes
import itertools

import numpy as np
import pinocchio as pin

from .._native import kernel_module, native_available
from .joints import JointSubset
from .loop import LocalOutcome, run_local
from .methods import DampedLeastSquares, IKMethod, LevenbergMarquardt
from .residual import Residual

__all__ = ["NativeLocal", "native_local"]

_int_p = ctypes.POINTER(ctypes.c_int)
_double_p = ctypes.POINTER(ctypes.c_double)
_REASONS = ("converged", "iterations", "time", "stalled", "numerical")
_FALLBACK = 5
_MAX_COLUMNS = 64
# each problem's own number: the collision check matches its slots to one chain at a time
# (an address could be a freed problem's)
_SERIALS = itertools.count(1)
_REVOLUTE = {"JointModelRX", "JointModelRY", "JointModelRZ", "JointModelRevoluteUnaligned"}
_CONTINUOUS = {"JointModelRUBX", "JointModelRUBY", "JointModelRUBZ"}
_PRISMATIC = {"JointModelPX", "JointModelPY", "JointModelPZ", "JointModelPrismaticUnaligned"}
_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


class _Problem(ctypes.Structure):
    """Mirror of the ``IKProblem`` structure of ``_ik.c`` (checked by size)."""

    _fields_ = [
        ("nj", ctypes.c_int),
        ("n", ctypes.c_int),
        ("m", ctypes.c_int),
        ("max_iterations", ctypes.c_int),
        ("stall_iterations", ctypes.c_int),
        ("has_deadline", ctypes.c_int),
        ("deadline", ctypes.c_double),
        ("keep", ctypes.c_double),
        ("max_step", ctypes.c_double),
        ("damping_scale", ctypes.c_double),
        ("damping_floor", ctypes.c_double),
        ("weight", ctypes.c_double),
        ("cost_bound", ctypes.c_double),
        ("kind", _int_p),
        ("identity", _int_p),
        ("q_index", _int_p),
        ("column", _int_p),
        ("placement", _double_p),
        ("axis", _double_p),
        ("frame", _double_p),
        ("q_cols", _int_p),
        ("continuous", _int_p),
        ("lower", _double_p),
        ("upper", _double_p),
        ("middle", _double_p),
        ("half_range", _double_p),
        ("tolerance", _double_p),
        ("q", _double_p),
        ("best_q", _double_p),
        ("e", _double_p),
        ("target_p", _double_p),
        ("target_rt", _double_p),
        ("nq", ctypes.c_int),
        ("cost", ctypes.c_double),
        ("iterations", ctypes.c_int),
        ("reason", ctypes.c_int),
        ("frames", _double_p),
        ("serial", ctypes.c_long),
    ]


def _damping(method: IKMethod) -> tuple[float, float] | None:
    """``(scale, floor)`` of the damping ``λ = scale·cost + floor``, or None (not native)."""
    kind = type(method)
    if kind is LevenbergMarquardt:
        return method.error_damping, method.min_damping  # type: ignore[attr-defined]
    if kind is DampedLeastSquares:
        d = method.damping  # type: ignore[attr-defined]
        return 0.0, d * d
    return None


def _placement(se3: pin.SE3) -> np.ndarray:
    return np.concatenate([se3.rotation.reshape(-1), se3.translation])


def _chain(
    model: pin.Model, frame_id: int, subset: JointSubset
) -> tuple[list[int], list[int], list[int], np.ndarray, np.ndarray] | None:
    """Kinds, q indices, columns, placements and axes of the frame's support chain."""
    columns_of_v = {int(v): c for c, v in enumerate(np.arange(model.nv)[subset.v_cols])}
    support = list(model.supports[model.frames[frame_id].parentJoint])[1:]
    if len(support) > _MAX_COLUMNS:
        return None
    kinds, q_index, columns, placements, axes = [], [], [], [], []
    for j in support:
        joint = model.joints[j]
        name = joint.shortname()
        if name in _REVOLUTE:
            kinds.append(0)
        elif name in _PRISMATIC:
            kinds.append(1)
        elif name in _CONTINUOUS:
            kinds.append(2)
        else:
            return None
        axis = _AXES.get(name[-1]) if not name.endswith("Unaligned") else None
        axes.append(np.array(axis if axis is not None else joint.extract().axis, dtype=float))
        q_index.append(joint.idx_q)
        columns.append(columns_of_v.get(joint.idx_v, -1))
        placements.append(_placement(model.jointPlacements[j]))
    return kinds, q_index, columns, np.array(placements), np.array(axes)


class NativeLocal:
    """:func:`~pinkctl.ik.loop.run_local` for one residual, in the native kernel.

    Built by :func:`native_local`; call it with the arguments of ``run_local`` after the
    first three.
    """

    def __init__(
        self,
        residual: Residual,
        subset: JointSubset,
        method: IKMethod,
        damping: tuple[float, float],
        chain: tuple[list[int], list[int], list[int], np.ndarray, np.ndarray],
    ) -> None:
        self._lib = kernel_module()
        if self._lib.ik_problem_size() != ctypes.sizeof(_Problem):
            raise RuntimeError("the native kernel does not match pinkctl: rebuild it")
        self._residual = residual
        self._subset = subset
        self._method = method
        model = residual.model
        goal = residual.goals[0]
        kinds, q_index, columns, placements, axes = chain
        self._arrays: dict[str, np.ndarray] = {
            "kind": np.array(kinds, dtype=np.intc),
            "identity": np.array(
                [np.array_equal(pl[:9], np.eye(3).reshape(-1)) for pl in placements], dtype=np.intc
            ),
            "q_index": np.array(q_index, dtype=np.intc),
            "column": np.array(columns, dtype=np.intc),
            "placement": np.ascontiguousarray(placements, dtype=np.float64).reshape(-1),
            "axis": np.ascontiguousarray(axes, dtype=np.float64).reshape(-1),
            "frame": _placement(model.frames[goal.frame_id].placement),
            "q_cols": np.array(subset.q_index, dtype=np.intc),
            "continuous": np.array(subset.q_size == 2, dtype=np.intc),
            "lower": np.array(subset.lower),
            "upper": np.array(subset.upper),
            "middle": np.array(subset.middle_values),
            "half_range": np.array(subset.half_range),
            "tolerance": np.array(residual.tolerance),
            # each chain joint's placement at the last evaluation, for the collision check
            "frames": np.zeros(12 * len(kinds)),
        }
        p = _Problem()
        p.nj, p.n, p.m = len(kinds), subset.n, residual.m
        p.damping_scale, p.damping_floor = damping
        p.weight, p.cost_bound = residual.weight, residual.cost_bound
        for name, array in self._arrays.items():
            kind = _int_p if array.dtype == np.intc else _double_p
            setattr(p, name, array.ctypes.data_as(kind))
        self._q = np.zeros(model.nq)  # the iterate
        self._best = np.zeros(model.nq)
        self._no_rotation = np.zeros(9)
        p.q = self._q.ctypes.data_as(_double_p)
        p.best_q = self._best.ctypes.data_as(_double_p)
        p.e = residual.e.ctypes.data_as(_double_p)
        p.nq = model.nq
        p.serial = next(_SERIALS)
        self._problem = p
        self._pointer = ctypes.addressof(p)
        self._targets: tuple[np.ndarray, np.ndarray | None] | None = None
        self._budget: tuple | None = None

    @property
    def residual(self) -> Residual:
        """The residual this loop solves."""
        return self._residual

    @property
    def address(self) -> int:
        """The address of the kernel's problem structure (for :mod:`pinkctl.ik.query`)."""
        return self._pointer

    @property
    def best(self) -> np.ndarray:
        """The kernel's best iterate of the last solve (its own array, overwritten)."""
        return self._best

    def sync_targets(self) -> None:
        """Point the kernel at the residual's target arrays (replaced by
        ``Residual.set_goals``; the kernel reads them, and :mod:`pinkctl.ik.query` writes
        them)."""
        targets = self._residual.target_arrays(0)
        known = self._targets
        if known is None or targets[0] is not known[0] or targets[1] is not known[1]:
            p = self._problem
            position, rotation_t = targets
            rotation = rotation_t if rotation_t is not None else self._no_rotation
            p.target_p = position.ctypes.data_as(_double_p)
            p.target_rt = rotation.ctypes.data_as(_double_p)
            self._targets = targets

    def __call__(
        self,
        q: np.ndarray,
        *,
        max_iterations: int,
        deadline: float | None = None,
        stall_iterations: int | None = None,
        progress_ratio: float = 0.01,
        max_step: float | None = None,
    ) -> LocalOutcome:
        """One local solve from ``q``, as :func:`run_local`; ``q`` is clamped into the
        limits first (here, not by the caller) and left as it is."""
        p = self._problem
        budget = (max_iterations, deadline, stall_iterations, progress_ratio, max_step)
        if budget != self._budget:  # a tracking loop repeats the same budget
            p.max_iterations = max_iterations
            p.has_deadline = deadline is not None
            p.deadline = deadline if deadline is not None else 0.0
            p.stall_iterations = stall_iterations if stall_iterations is not None else 0
            p.keep = 1.0 - progress_ratio
            p.max_step = max_step if max_step is not None else 0.0
            self._budget = budget
        self.sync_targets()
        self._q[:] = q
        success = self._lib.ik_local(self._pointer)
        reason = p.reason
        if reason == _FALLBACK:  # the Python path's least-squares step: run it all in Python
            self._subset.clamp(q)
            return run_local(
                self._residual,
                self._subset,
                self._method,
                q,
                max_iterations=max_iterations,
                deadline=deadline,
                stall_iterations=stall_iterations,
                progress_ratio=progress_ratio,
                max_step=max_step,
            )
        return LocalOutcome(
            self._best.copy(), p.cost, bool(success), p.iterations, _REASONS[reason]
        )


def native_local(residual: Residual, subset: JointSubset, method: IKMethod) -> NativeLocal | None:
    """The native loop for ``residual`` when it applies (module docstring), else None."""
    if not native_available()[0]:
        return None
    damping = _damping(method)
    if damping is None or not _fits(residual, subset):
        return None
    chain = _chain(residual.model, residual.goals[0].frame_id, subset)
    if chain is None:
        return None
    return NativeLocal(residual, subset, method, damping, chain)


def _fits(residual: Residual, subset: JointSubset) -> bool:
    """Whether the kernel's loop can solve ``residual``: one pose or position goal on the
    frame origin, at most ``_MAX_COLUMNS`` moved joints, each a bounded one-coordinate
    joint or a continuous one."""
    if len(residual.goals) != 1 or subset.n > _MAX_COLUMNS:
        return False
    goal = residual.goals[0]
    if goal.mode not in ("pose", "position") or goal.point_offset is not None:
        return False
    sizes = subset.q_size
    scalar = sizes == 1
    if not bool(np.all(subset.bounded[scalar])) or not bool(np.all(scalar | (sizes == 2))):
        return False
    # pin.integrate (the Python step of a subset with continuous joints) renormalises every
    # (cos, sin) pair of the model: all of them must be moved ones.
    return residual.model.nq - residual.model.nv == int(np.count_nonzero(sizes == 2))
