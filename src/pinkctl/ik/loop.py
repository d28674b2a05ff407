"""The IK iteration loop shared by every method, one-shot solves and global search.

One iteration: evaluate the residual at ``q`` (forward kinematics + Jacobian), stop if every
axis is within tolerance, otherwise ask the method for a displacement ``Δq`` and set
``q ← clamp(q ⊕ Δq)``. So every iterate lies within the joint limits.

Joint limits for clamping methods: a joint already on a limit whose step points outward is
*pinned*: its Jacobian column is zeroed and the method asked again, so the other joints
compensate instead of the step being wasted on a joint that cannot move (an active-set
projection, as in bounded Newton methods). The pinned set is recomputed every iteration.

The loop stops on convergence, on its iteration budget, at a wall-clock deadline, or when
stalled: the weighted squared error has not dropped below ``(1 - progress_ratio)`` times
its best value for ``stall_iterations`` consecutive iterations.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .joints import JointSubset
from .methods import IKMethod
from .residual import Residual

__all__ = ["LocalOutcome", "LocalRunner", "run_local"]


@dataclass
class LocalOutcome:
    """Outcome of one local solve.

    Attributes:
        q: The best configuration met (lowest weighted error), a full Pinocchio ``q``; the
            converged one on success.
        cost: Its weighted squared error.
        success: Whether the tolerances were met.
        iterations: Residual evaluations made (each is one forward kinematics + Jacobian).
        reason: ``"converged"``, ``"iterations"``, ``"time"``, ``"stalled"`` or
            ``"numerical"`` (non-finite error).
    """

    q: np.ndarray
    cost: float
    success: bool
    iterations: int
    reason: str


#: :func:`run_local` bound to a residual, joint subset and method: called with the start
#: configuration and the keyword arguments after them (the native kernel's loop has this form,
#: :mod:`pinkctl.ik.native`; it leaves the start as it is, and clamps it itself).
LocalRunner = Callable[..., LocalOutcome]


def run_local(
    residual: Residual,
    subset: JointSubset,
    method: IKMethod,
    q: np.ndarray,
    *,
    max_iterations: int,
    deadline: float | None = None,
    stall_iterations: int | None = None,
    progress_ratio: float = 0.01,
    max_step: float | None = None,
) -> LocalOutcome:
    """Iterate from ``q`` (a clamped full configuration, modified in place).

    Args:
        residual: Goals and tolerances.
        subset: Moved joints and limits.
        method: Step rule.
        q: Start configuration; overwritten by the iterates.
        max_iterations: Maximum residual evaluations (>= 1).
        deadline: ``time.perf_counter()`` value after which the loop stops, or None.
        stall_iterations: Stop after this many iterations without progress (None: never).
        progress_ratio: Relative drop of the squared error that counts as progress.
        max_step: Largest joint displacement per iteration [rad] or [m] (the step is scaled
            down uniformly), or None.
    """
    evaluate = residual.evaluate
    converged = residual.converged
    step = method.step
    J = residual.J
    ew = residual.ew
    apply = subset.step
    pins = not method.handles_limits
    cost_bound = residual.cost_bound
    stall = _Stall(stall_iterations, 1.0 - progress_ratio) if stall_iterations is not None else None

    best_q = q.copy()
    best_cost = math.inf
    it = 0
    reason = "iterations"
    while it < max_iterations:
        it += 1
        cost = evaluate(q)
        if not math.isfinite(cost):
            reason = "numerical"
            break
        if cost < best_cost:
            best_cost = cost
            best_q[:] = q
        if cost <= cost_bound and converged():
            return LocalOutcome(q.copy(), cost, True, it, "converged")
        reason = _halt(it, max_iterations, deadline, stall, cost)
        if reason:
            break
        dq = step(J, ew, cost, q)
        if pins:
            dq = _unpinned(subset, step, J, ew, cost, q, dq)
        if max_step is not None:
            _cap(dq, max_step)
        apply(q, dq)
    return LocalOutcome(best_q, best_cost, False, it, reason)


class _Stall:
    """Counts iterations without progress: the weighted squared error not dropping below
    ``keep`` times its reference (the last value that did)."""

    def __init__(self, limit: int, keep: float) -> None:
        self.limit = limit
        self.keep = keep
        self.reference = math.inf
        self.since = 0

    def stalled(self, cost: float) -> bool:
        """Record ``cost``; whether ``limit`` iterations in a row made no progress."""
        if cost < self.reference * self.keep:
            self.reference = cost
            self.since = 0
            return False
        self.since += 1
        return self.since >= self.limit


def _halt(
    it: int, max_iterations: int, deadline: float | None, stall: _Stall | None, cost: float
) -> str:
    """Why the loop stops after iteration ``it`` without converging (``"iterations"``,
    ``"time"``, ``"stalled"``), or "" when it steps on."""
    if it >= max_iterations:
        return "iterations"
    if deadline is not None and time.perf_counter() > deadline:
        return "time"
    if stall is not None and stall.stalled(cost):
        return "stalled"
    return ""


def _unpinned(
    subset: JointSubset,
    step: Callable[..., np.ndarray],
    J: np.ndarray,
    ew: np.ndarray,
    cost: float,
    q: np.ndarray,
    dq: np.ndarray,
) -> np.ndarray:
    """``dq``, or where it pushes joints sitting on a limit further out, a step with those
    joints pinned: their Jacobian columns zeroed (``J`` modified) and the method asked again
    (module docstring)."""
    values = q[subset.q_cols] if subset.simple else subset.values(q)
    offset = values - subset.middle_values
    on_limit = abs(offset) >= subset.half_range
    if not on_limit.any():
        return dq
    pinned = on_limit & (offset * dq > 0.0)
    if not pinned.any():
        return dq
    J[:, pinned] = 0.0
    dq = step(J, ew, cost, q)
    dq[pinned] = 0.0
    return dq


def _cap(dq: np.ndarray, max_step: float) -> None:
    """Scale ``dq`` down uniformly, in place, so that no joint moves more than ``max_step``
    [rad] or [m]."""
    largest = float(np.max(np.abs(dq)))
    if largest > max_step:
        dq *= max_step / largest
