"""The ``"qp"`` IK method: each step is a pink QP with the joint limits as constraints.

The step solves, with pinkctl's QP layer (:func:`pinkctl.qp.compile_qp`: pink's problem assembled
in place, over the moved joints only; ``dt = 1``, default solver DAQP),

    minimise    ½‖J Δq + e‖² + ½ μ‖e‖²‖Δq‖² + ½ ε‖Δq‖²
    subject to  q_lo - q ≤ Δq ≤ q_hi - q         (moved joints)
                Δq = 0                           (every other joint)

where ``e``, ``J`` are the IK residual (the same as for the Newton-type methods, so every goal
mode works), ``μ`` the Levenberg–Marquardt damping of the task and ``ε`` pink's Tikhonov
damping. Unlike the clamping methods, the limits shape the step itself.

The residual task and the joint box are custom pink objects, which the QP layer evaluates
through their own ``compute_qp_objective`` / ``compute_qp_inequalities``. pink stores helper
attributes on the model it is given, so the method works on its own copy of the model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.exceptions import PinkError
from pink.limits import Limit
from pink.tasks import Task

from ..errors import InputError
from ..qp import QPSolveError, compile_qp
from .joints import JointSubset
from .methods import IKMethod

__all__ = ["QPMethod"]


class _ResidualTask(Task):
    """A pink task whose error and Jacobian are set from outside (the IK residual)."""

    def __init__(self, nv: int, lm_damping: float):
        super().__init__(cost=None, gain=1.0, lm_damping=lm_damping)
        self.error = np.zeros(0)
        self.jacobian = np.zeros((0, nv))

    def compute_error(self, configuration: Configuration) -> np.ndarray:
        return self.error

    def compute_jacobian(self, configuration: Configuration) -> np.ndarray:
        return self.jacobian

    def __repr__(self) -> str:
        return f"_ResidualTask(rows={self.error.size}, lm_damping={self.lm_damping})"


class _BoxLimit(Limit):
    """Box bounds on the displacement: moved joints within limits, other joints fixed."""

    def __init__(self, nv: int, subset: JointSubset):
        self._subset = subset
        cols = np.arange(nv)[subset.v_cols]
        bounded_cols = cols[subset.bounded]
        fixed = np.setdiff1d(np.arange(nv), cols)
        self._rows_upper = np.concatenate([bounded_cols, fixed])
        eye = np.eye(nv)
        self.G = np.vstack([eye[self._rows_upper], -eye[self._rows_upper]])
        self._nb = bounded_cols.size
        self._h = np.zeros(2 * self._rows_upper.size)
        self._values = np.zeros(subset.n)

    def set_configuration(self, q: np.ndarray) -> None:
        vals = self._subset.values(q)[self._subset.bounded]
        k = self._rows_upper.size
        nb = self._nb
        self._h[:nb] = self._subset.upper[self._subset.bounded] - vals
        self._h[k : k + nb] = vals - self._subset.lower[self._subset.bounded]
        # Fixed joints: 0 <= Δq <= 0 (rows nb..k and k+nb..2k stay zero).

    def compute_qp_inequalities(
        self, configuration: Configuration, dt: float
    ) -> tuple[np.ndarray, np.ndarray] | None:
        if self.G.shape[0] == 0:
            return None
        return self.G, np.maximum(self._h, 0.0)


class QPMethod(IKMethod):
    """IK step from a pink QP (see the module docstring).

    Args:
        solver: QP solver name (default ``"daqp"``; :mod:`pinkctl.qp.solvers`).
        lm_damping: ``μ``, pink's Levenberg–Marquardt task damping (unitless).
        damping: ``ε``, pink's Tikhonov damping.
        solver_options: Extra keyword arguments for the backend.
    """

    name = "qp"
    handles_limits = True

    def __init__(
        self,
        *,
        solver: str = "daqp",
        lm_damping: float = 1e-2,
        damping: float = 1e-12,
        solver_options: dict[str, Any] | None = None,
    ):
        if not isinstance(solver, str) or not solver:
            raise InputError(f"solver: expected a QP solver name, got {solver!r}")
        self.solver = solver
        self.lm_damping = float(lm_damping)
        self.damping = float(damping)
        self.solver_options = dict(solver_options or {})
        self._model: pin.Model | None = None

    def bind(self, model: pin.Model, subset: JointSubset) -> None:
        self._model = pin.Model(model)  # pink decorates the model it sees: use a copy
        self._data = self._model.createData()
        self._subset = subset
        self._task = _ResidualTask(model.nv, self.lm_damping)
        self._limit = _BoxLimit(model.nv, subset)
        self._jac = np.zeros((0, model.nv))
        self._cols = subset.v_cols
        # the QP's variables are the moved joints: every other joint is held by construction
        self._qp = compile_qp(
            self._model,
            np.arange(model.nv)[subset.v_cols],
            tasks=(self._task,),
            limits=(self._limit,),
            solver=self.solver,
            damping=self.damping,
            solver_options=self.solver_options or None,
        )
        # pink checks (and logs) the configuration's limits; only the moved joints are kept
        # inside by the loop, so pink is shown a clamped copy (it reads nothing else from q).
        self._q_low = model.lowerPositionLimit.copy()
        self._q_high = model.upperPositionLimit.copy()

    def step(self, J: np.ndarray, e: np.ndarray, cost: float, q: np.ndarray) -> np.ndarray:
        if self._model is None:
            raise RuntimeError("QPMethod.step called before bind()")
        if self._jac.shape[0] != J.shape[0]:
            self._jac = np.zeros((J.shape[0], self._model.nv))
        self._jac[:, self._cols] = J
        self._task.error = e
        self._task.jacobian = self._jac
        self._limit.set_configuration(q)
        configuration = Configuration(
            self._model,
            self._data,
            np.clip(q, self._q_low, self._q_high),
            copy_data=False,
            forward_kinematics=False,
        )
        try:
            return self._qp.solve(configuration, 1.0)  # dt = 1: the velocity is the step
        except (PinkError, QPSolveError):
            return np.zeros(self._subset.n)
