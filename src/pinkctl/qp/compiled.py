"""The differential-IK QP in two verbs: :func:`compile_qp` once, :meth:`CompiledQP.solve` per tick.

pink's problem restricted to the controlled tangent coordinates ``c`` (the others are held:
zero velocity), over the displacement :math:`x = \\Delta q_c = v_c\\, \\mathrm{d}t`:

.. math::

    \\begin{array}{ll}
    \\min_x & \\tfrac12 x^T H x + c^T x \\\\
    \\text{s.t.} & G x \\le h, \\quad lb \\le x \\le ub
    \\end{array}

- ``H, c``: the tasks' ``compute_qp_objective``, ``damping * I`` and the barriers' objective
  terms, restricted to ``c``;
- ``lb, ub``: pink's configuration, velocity and acceleration limits (projections that are
  identity rows) as simple bounds, intersected with the caller's ``dt [lower, upper]``;
- ``G, h``: the rows of every other pink :class:`~pink.limits.Limit` (its own
  ``compute_qp_inequalities(configuration, dt)``, pink's convention: rows over the
  displacement) and of the barriers, restricted to ``c`` (rows only over held coordinates
  are dropped). This is where constraints such as collision avoidance enter.

:func:`compile_qp` analyses every pink object once (:mod:`pinkctl.qp.assembly`) and picks the
solvers (:mod:`pinkctl.qp.solvers`); structure changes (another task, limit or solver) go
through compiling a new object. :meth:`CompiledQP.solve` reads this tick's values, writes the
problem in place (:mod:`pinkctl.qp.assembly`) and solves it:
with ``solver="box"`` a problem whose only constraints are bounds goes straight to the native
box QP, anything else through the solver, then the fallback (:mod:`pinkctl.qp.solving`).
Same problem as pink, so with an exact solver the same solution
(``tests/test_qp_equivalence.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from math import isfinite
from typing import Any

import numpy as np
import pinocchio as pin
from pink import Configuration
from pink.barriers import Barrier
from pink.limits import Limit
from pink.tasks import Task

from .._validation import real_number
from ..errors import InputError
from .assembly import Assembly
from .box_qp import NativeBoxQP
from .problem import QPProblem, QPWorkspace
from .recovery import recover_empty_box
from .selection import ColumnSelection
from .solvers import (
    BOX_SOLVER,
    DEFAULT_SOLVER,
    BoxSolver,
    available_solvers,
    missing_solver_message,
)
from .solving import Recovery, SolverChain

__all__ = ["CompiledQP", "TickQP", "compile_qp"]

_INFINITY = float("inf")

#: A tick's velocity box on the QP variables, its lower and upper sides [rad/s or m/s] as float
#: arrays of shape (n,), each None when absent (:meth:`TickQP.solve`'s ``lower``, ``upper``).
VelocityBox = tuple[np.ndarray | None, np.ndarray | None]


class TickQP:
    """What a controller needs of a compiled QP: the per-tick verb :meth:`solve` and what it
    was built from (:class:`CompiledQP`, :class:`~pinkctl.qp.cascade_qp.CascadeQP`,
    :class:`~pinkctl.qp.reference.ReferenceQP`).

    Args:
        model: Pinocchio model of the configurations passed to :meth:`solve`.
        controlled_v_indices: Tangent (velocity) indices of the QP variables, in order; the
            other coordinates are held.
        tasks: pink tasks of the objective.
        limits: pink limits (an empty sequence means none, unlike pink's ``None``).
        barriers: pink barriers.
        solver: ``"box"`` (default: the native box QP where the only constraints are bounds,
            DAQP otherwise), ``"daqp"``, ``"quadprog"``, ``"clarabel"``, ``"osqp"``,
            ``"proxqp"`` or any solver qpsolvers knows (:mod:`pinkctl.qp.solvers`).
        fallback_solver: Solver tried when ``solver`` fails, or None.
        damping: Tikhonov damping added to the diagonal of ``H`` ([cost]² / [tangent]², pink's
            ``damping``), ``>= 0``.
        solver_options: Options of ``solver`` overriding
            :data:`~pinkctl.qp.solvers.DEFAULT_SOLVER_OPTIONS` (checked by a trial solve).
        recover_outside_range: When the position range conflicts with the motion bounds (a
            start outside the range, or braking that cannot stop as early as the range's gain
            asks), follow the motion bounds instead of reporting the empty box
            (:func:`~pinkctl.qp.recovery.recover_empty_box`). False gives pink's behaviour,
            which pink's path (:class:`~pinkctl.qp.reference.ReferenceQP`) always has.

    Raises:
        ValueError: A model that is not a Pinocchio model, bad indices or damping, an
            unknown solver, rejected options, or a limit or barrier that does not fit the
            model.
    """

    #: Whether the QP is the common arm problem (:attr:`fused`).
    _fused = False

    def __init__(
        self,
        model: pin.Model,
        controlled_v_indices: Sequence[int] | np.ndarray,
        *,
        tasks: Sequence[Task],
        limits: Sequence[Limit] = (),
        barriers: Sequence[Barrier] = (),
        solver: str = DEFAULT_SOLVER,
        fallback_solver: str | None = None,
        damping: float = 1e-12,
        solver_options: dict[str, Any] | None = None,
        recover_outside_range: bool = True,
    ) -> None:
        nv = getattr(model, "nv", None)
        if not isinstance(nv, int):
            raise InputError(f"model must be a pinocchio.Model, got {type(model).__name__}")
        self._model, self._nv = model, nv
        self._selection = ColumnSelection(nv, controlled_v_indices)
        self._damping = real_number(damping, "damping", low=0.0)
        self._names = [solver] + ([] if fallback_solver is None else [fallback_solver])
        for name in self._names:
            if not isinstance(name, str) or name not in available_solvers():
                raise InputError(missing_solver_message(name))
        if solver_options is not None and not isinstance(solver_options, dict):
            raise InputError(f"solver_options must be a dict or None, got {solver_options!r}")
        self._options = dict(solver_options or {})
        self._tasks, self._limits, self._barriers = tuple(tasks), tuple(limits), tuple(barriers)
        self._recover = bool(recover_outside_range)
        self._last_solver: str | None = None
        self._compile()

    def _compile(self) -> None:
        """Analyse the pink objects once (nothing to do on pink's path)."""

    def solve(
        self,
        configuration: Configuration,
        dt: float,
        lower: np.ndarray | None = None,
        upper: np.ndarray | None = None,
    ) -> np.ndarray:
        """This tick's velocity ``v`` [rad/s or m/s] of the QP variables (controlled-coordinate
        order, shape (n,)): the minimiser ``x`` divided by ``dt``, inside the simple bounds and
        the velocity box ``[lower, upper]``. A new array.

        Args:
            configuration: pink configuration updated at the tick's ``q`` (forward kinematics,
                Jacobians; collision distances when a barrier needs them).
            dt: Control period [s], > 0.
            lower: Optional lower velocity bounds on the QP variables [rad/s or m/s], shape
                (n,); ``-inf`` entries are unbounded.
            upper: Optional upper velocity bounds, shape (n,); ``inf`` entries are unbounded.

        Raises:
            QPSolveError: No solver found a solution (each one's reason in the message).
            ValueError: Bad ``dt``, ``lower`` / ``upper`` shape, or a configuration of
                another model.
            pink.exceptions.PinkError: A pink task or limit failing at this configuration
                (e.g. ``TargetNotSet``).
        """
        return self._solve(configuration, dt, self._arguments(dt, lower, upper))

    def _solve(self, configuration: Configuration, dt: float, box: VelocityBox) -> np.ndarray:
        """:meth:`solve` with checked arguments."""
        raise NotImplementedError

    def _arguments(self, dt: float, lower: Any, upper: Any) -> VelocityBox:
        """Check ``dt``; ``lower`` and ``upper`` as float arrays of shape (n,) (None kept)."""
        if not 0.0 < dt < _INFINITY:
            raise InputError(f"dt must be a finite positive number of seconds, got {dt!r}")
        if lower is None and upper is None:
            return None, None
        checked = []
        for bound, name in ((lower, "lower"), (upper, "upper")):
            array = None if bound is None else np.asarray(bound, dtype=np.float64)
            if array is not None and array.shape != (self.n,):
                raise InputError(
                    f"{name} must have shape ({self.n},) (one entry per controlled "
                    f"coordinate), got {array.shape}"
                )
            checked.append(array)
        return checked[0], checked[1]

    @property
    def model(self) -> pin.Model:
        """The Pinocchio model."""
        return self._model

    @property
    def controlled_v_indices(self) -> np.ndarray:
        """Tangent index of each QP variable (read-only)."""
        return self._selection.indices

    @property
    def n(self) -> int:
        """Number of QP variables."""
        return self._selection.size

    @property
    def tasks(self) -> tuple[Task, ...]:
        """The pink tasks of the objective (a cascade's level by level)."""
        return self._tasks

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
        return list(self._names)

    @property
    def damping(self) -> float:
        """Tikhonov damping on the diagonal of ``H``."""
        return self._damping

    @property
    def last_solver(self) -> str | None:
        """The solver of the latest solution (``"box"`` or ``"daqp"`` for ``solver="box"``;
        the fallback's name when it took over; on pink's path the qpsolvers solver), or None
        before the first one (and for a null-space cascade: no QP)."""
        return self._last_solver

    @property
    def fused(self) -> bool:
        """Whether the problem is the common arm problem (a frame task, an optional posture
        task, the joint box, no rows: :mod:`pinkctl.qp.assembly`), which the controller's
        compiled tick covers (never on pink's path or in a cascade)."""
        return self._fused


class CompiledQP(TickQP):
    """pink's differential-IK QP over the controlled coordinates, compiled once (module
    docstring); built by :func:`compile_qp` (arguments: :class:`TickQP`'s).
    """

    def _compile(self) -> None:
        selection = self._selection
        self._chain = SolverChain(selection.size, selection.indices, self._names, self._options)
        self._ws = QPWorkspace(selection.size)
        self._assembly = Assembly(
            self._model,
            selection,
            self._ws,
            tasks=self._tasks,
            limits=self._limits,
            barriers=self._barriers,
        )
        self._fused = self._assembly.fused
        first = self._chain.solvers[0]
        # "box" on a box-only tick: its kernel is called directly (no chain in between)
        self._native: NativeBoxQP | None = first.native if isinstance(first, BoxSolver) else None
        self._has_problem = False

    # ------------------------------------------------------------------ the tick
    def _solve(self, configuration: Configuration, dt: float, box: VelocityBox) -> np.ndarray:
        trusted = self._write(configuration, dt, box)
        native, ws = self._native, self._ws
        if native is not None and trusted and not ws.n_ineq:
            x = native.solve(ws)  # inside the box; None when it hands the problem to DAQP
            if x is not None and isfinite(x.dot(x)):
                self._last_solver = BOX_SOLVER
                return np.divide(x, dt, out=x)
        x = self._chain.solve(ws, trusted=trusted, recover=self._recovery(dt, box))
        self._last_solver = self._chain.last_solver
        return np.divide(x, dt, out=x)

    def _recovery(self, dt: float, box: VelocityBox) -> Recovery | None:
        """The repair of an empty box for this tick (``recover_outside_range``), or None."""
        if not self._recover:
            return None
        ws, index, model = self._ws, self._selection.indices, self._model
        return partial(recover_empty_box, ws, index, model, dt, *box)

    def build(
        self,
        configuration: Configuration,
        dt: float,
        lower: np.ndarray | None = None,
        upper: np.ndarray | None = None,
    ) -> QPProblem:
        """This tick's problem over ``x = v dt`` without solving it (pink's ``build_ik``
        restricted to the controlled coordinates; an empty box is left as it is): read-only
        views of the buffers, valid until the next :meth:`build` or :meth:`solve`.

        Raises: as :meth:`solve`, without ``QPSolveError``.
        """
        self._write(configuration, dt, self._arguments(dt, lower, upper))
        return self._ws.problem()

    def _write(self, configuration: Configuration, dt: float, box: VelocityBox) -> bool:
        """Write this tick's problem; whether the box is trusted (see
        :meth:`~pinkctl.qp.assembly.Assembly.write`)."""
        self._has_problem = False
        model = configuration.model
        if model is not self._model and getattr(model, "nv", None) != self._nv:
            raise InputError(
                f"configuration.model has nv={getattr(model, 'nv', None)}, expected {self._nv}"
            )
        trusted = self._assembly.write(configuration, dt, self._damping, *box)
        self._has_problem = True
        return trusted

    # ------------------------------------------------------------------ properties
    @property
    def last_problem(self) -> QPProblem | None:
        """The latest problem written (read-only views), or None before the first tick."""
        return self._ws.problem() if self._has_problem else None

    @property
    def exact(self) -> bool:
        """Whether the solver's solutions are exact up to rounding."""
        return self._chain.exact

    @property
    def has_rows(self) -> bool:
        """Whether the problem can have inequality rows (limits that are not simple bounds,
        barriers): then ``solver="box"`` hands it to DAQP."""
        return self._assembly.has_rows


#: Compile pink's differential-IK QP over the controlled coordinates: :class:`CompiledQP`'s
#: arguments.
compile_qp = CompiledQP
