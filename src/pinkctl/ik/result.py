"""The outcome of an IK solve."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["IKResult"]


@dataclass(frozen=True, init=False)
class IKResult:
    """Result of :func:`~pinkctl.ik.local_ik` or :func:`~pinkctl.ik.find_ik`.

    A result always carries a configuration: on failure it is the best one found (lowest
    error; for a validated search, the best one that passed validation, else the seed), and
    ``reason`` says why the solve stopped.

    Attributes:
        q: Values of the moved joints, in the order of ``joint_names`` [rad] or [m]
            (a continuous joint's value is its angle).
        joint_names: The moved joints.
        q_full: The same configuration as a full Pinocchio ``q`` (size ``model.nq``); joints
            that were not moved keep the seed's values.
        success: Whether every goal is within tolerance at ``q``, ``q`` keeps the collision
            margin (:mod:`pinkctl.ik.collision`) and, for a search with a validation
            callback, ``q`` passed it.
        position_error: Worst goal's position error at ``q`` [m].
        orientation_error: Worst goal's orientation error at ``q`` [rad]: rotation angle for
            pose goals, tilt between tool axis and direction for approach goals, 0 when no
            goal constrains orientation.
        iterations: Residual evaluations (forward kinematics + Jacobian), all starts together.
        restarts: Random starting configurations drawn after the seed (0 for a one-shot
            solve), including those skipped by the pose-metric threshold.
        time_s: Wall-clock time of the call [s].
        reason: ``"converged"`` on success; otherwise what stopped the solve (with the
            converged configurations rejected in collision and the last pair too close).
        method: Name of the step method.
        solutions: Distinct valid solutions found by a search (0 or 1 for a one-shot solve).
    """

    q: np.ndarray
    joint_names: tuple[str, ...]
    q_full: np.ndarray
    success: bool
    position_error: float
    orientation_error: float
    iterations: int
    restarts: int
    time_s: float
    reason: str
    method: str
    solutions: int = 0

    def __init__(
        self,
        q: np.ndarray,
        joint_names: tuple[str, ...],
        q_full: np.ndarray,
        success: bool,
        position_error: float,
        orientation_error: float,
        iterations: int,
        restarts: int,
        time_s: float,
        reason: str,
        method: str,
        solutions: int = 0,
    ) -> None:
        # The fields are set once, here, in one step: the generated frozen __init__ sets
        # each through object.__setattr__, which costs more than a warm-started solve's
        # arithmetic. The instance stays frozen.
        self.__dict__.update(
            q=q,
            joint_names=joint_names,
            q_full=q_full,
            success=success,
            position_error=position_error,
            orientation_error=orientation_error,
            iterations=iterations,
            restarts=restarts,
            time_s=time_s,
            reason=reason,
            method=method,
            solutions=solutions,
        )

    @property
    def positions(self) -> dict[str, float]:
        """Moved joint values by name."""
        return {name: float(v) for name, v in zip(self.joint_names, self.q)}
