"""What the compiled tick objects (:class:`~pinkctl.qp.step.QPStep`,
:class:`~pinkctl.qp.cascade_step.CascadeStep`) share: their pink limits and barriers, one QP
engine per solver, and the rule that the solvers are tried in turn (the first one, then the
fallback), a tick failing only when every one failed, with every reason in the message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pinocchio as pin
from pink.barriers import Barrier
from pink.limits import Limit

from .diff_ik_qp import DiffIKQP
from .errors import QPSolveError

__all__ = ["StepBase"]

T = TypeVar("T")


class StepBase:
    """Limits, barriers and solvers of a compiled tick (set by the subclass)."""

    _limits: tuple[Limit, ...] = ()
    _barriers: tuple[Barrier, ...] = ()
    _solvers: list[str]
    _engines: list[DiffIKQP]

    def _make_engines(
        self,
        model: pin.Model,
        indices: np.ndarray,
        solver: str,
        fallback_solver: str | None,
        damping: float,
        solver_options: dict[str, Any] | None,
    ) -> None:
        """One :class:`DiffIKQP` per solver (the fallback with its own default options)."""
        names = [solver] + ([fallback_solver] if fallback_solver is not None else [])
        self._engines = [
            DiffIKQP(
                model,
                indices,
                solver=name,
                damping=damping,
                solver_options=solver_options if k == 0 else None,
            )
            for k, name in enumerate(names)
        ]
        self._solvers = names

    @property
    def limits(self) -> tuple[Limit, ...]:
        """The pink limits."""
        return self._limits

    @property
    def barriers(self) -> tuple[Barrier, ...]:
        """The pink barriers."""
        return self._barriers

    @property
    def solvers(self) -> list[str]:
        """The solver, then the fallback solver if any."""
        return list(self._solvers)

    def _first_solution(self, attempt: Callable[[int], T]) -> T:
        """``attempt(k)`` with solver ``k = 0, 1, ...`` until one returns.

        Raises:
            QPSolveError: Every attempt failed (each solver's reason in the message); errors
                of pink objects at run time are reported the same way.
        """
        errors = []
        for k, solver in enumerate(self._solvers):
            try:
                return attempt(k)
            except QPSolveError as exc:  # non-finite solutions included
                errors.append(f"{solver}: {exc}")
            except Exception as exc:  # pink task/barrier code failing at run time
                errors.append(f"{solver}: {type(exc).__name__}: {exc}")
        raise QPSolveError("; ".join(errors), solver=self._solvers[0])
