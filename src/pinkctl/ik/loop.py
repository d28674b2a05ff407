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
    simple = subset.simple
    q_cols = subset.q_cols
    middle = subset.middle_values
    half_range = subset.half_range
    cost_bound = residual.cost_bound
    perf_counter = time.perf_counter
    keep = 1.0 - progress_ratio

    best_q = q.copy()
    best_cost = math.inf
    stall_ref = math.inf
    since_progress = 0
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
        if it >= max_iterations:
            break
        if deadline is not None and perf_counter() > deadline:
            reason = "time"
            break
        if stall_iterations is not None:
            if cost < stall_ref * keep:
                stall_ref = cost
                since_progress = 0
            else:
                since_progress += 1
                if since_progress >= stall_iterations:
                    reason = "stalled"
                    break
        dq = step(J, ew, cost, q)
        if pins:
            offset = (q[q_cols] if simple else subset.values(q)) - middle
            if (abs(offset) >= half_range).any():  # some joint sits on a limit
                pinned = (abs(offset) >= half_range) & (offset * dq > 0.0)
                if pinned.any():
                    J[:, pinned] = 0.0
                    dq = step(J, ew, cost, q)
                    dq[pinned] = 0.0
        if max_step is not None:
            largest = float(np.max(np.abs(dq)))
            if largest > max_step:
                dq *= max_step / largest
        apply(q, dq)
    return LocalOutcome(best_q, best_cost, False, it, reason)
