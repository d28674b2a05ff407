"""One-shot and global inverse kinematics: :class:`IKSolver`, :func:`solve_ik`, :func:`find_ik`.

An :class:`IKSolver` is built once per robot and set of options (it resolves joints and
frames, allocates its own ``pin.Data`` and workspaces) and then answers many queries:

- :meth:`IKSolver.solve`: a local solve from a seed (one-shot IK, warm-started tracking);
- :meth:`IKSolver.find`: a global search with random restarts (:mod:`pinkctl.ik.search`).

:func:`solve_ik` and :func:`find_ik` build a solver for a single call. Neither touches the
robot: ``robot.data``, ``robot.q0`` and the model are only read, and no simulation state is
involved. Every iterate respects the joint limits of the moved joints.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import InputError
from .joints import JointSubset
from .loop import run_local
from .methods import IKMethod, make_method
from .residual import Residual
from .result import IKResult
from .search import global_search
from .targets import (
    FrameGoal,
    GoalMode,
    is_multi_target,
    parse_approach_axis,
    parse_target,
    parse_vector,
)

__all__ = ["IKSolver", "find_ik", "solve_ik"]

#: CoppeliaSim's default pose metric: metres on x, y, z and 0.1 per radian.
DEFAULT_METRIC = (1.0, 1.0, 1.0, 0.1)
_DEFAULT_METRIC_ARRAY = np.array(DEFAULT_METRIC)


def _tolerance(value: Any, name: str) -> np.ndarray:
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


def _positive_int(value: Any, name: str, *, allow_none: bool = True) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def _non_negative_int(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise InputError(f"{name}: expected a non-negative integer or None, got {value!r}")
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


def _budget_ms(value: Any, name: str = "time_budget_ms") -> float | None:
    if value is None:
        return None
    try:
        budget = float(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected a positive number of milliseconds or None") from exc
    if not np.isfinite(budget) or budget <= 0.0:
        raise InputError(f"{name}: expected a positive number of milliseconds, got {value!r}")
    return budget


class IKSolver:
    """Reusable IK solver for one robot, joint subset, method and goal mode.

    Args:
        robot: The robot (only read).
        frame: Default frame of single-frame targets; default: ``robot.tool_frame``, else the
            model's last frame. Several frames are solved together by passing a mapping
            ``{frame_name: target}`` as the target.
        joint_names: Joints the IK may move; default: ``robot.controlled_joint_names``. The
            other joints keep their seed values.
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

    Raises:
        ValueError: Unknown frame or joint, bad method name or options, malformed options.

    A solver owns mutable workspaces: use one per thread. A method instance passed in is
    bound to this solver (pass a fresh one to each solver).
    """

    def __init__(
        self,
        robot: PinkRobot,
        *,
        frame: str | None = None,
        joint_names: Sequence[str] | None = None,
        method: str | IKMethod = "lm",
        method_options: Mapping[str, Any] | None = None,
        position_only: bool = False,
        approach_axis: Any = None,
        approach_direction: Any = (0.0, 0.0, -1.0),
        point_offset: Any = None,
        orientation_weight: float = 1.0,
        position_tolerance: Any = 1e-5,
        orientation_tolerance: Any = 1e-5,
    ):
        if not isinstance(robot, PinkRobot):
            raise InputError(f"robot: expected a PinkRobot, got {type(robot).__name__}")
        self.robot = robot
        self.model: pin.Model = robot.model
        self.data: pin.Data = self.model.createData()  # private: robot.data is never touched
        if joint_names is None:
            names = list(robot.controlled_joint_names)
            if getattr(robot, "floating_base", False):  # whole-body IK moves the base too
                names.insert(0, self.model.names[1])
        else:
            names = list(joint_names)
        self.subset = JointSubset(self.model, names, name="joint_names")
        self.method = make_method(method, **dict(method_options or {}))
        self.method.bind(self.model, self.subset)
        if position_only and approach_axis is not None:
            raise InputError("approach_axis: cannot be combined with position_only=True")
        self.mode: GoalMode = (
            "position" if position_only else ("approach" if approach_axis is not None else "pose")
        )
        self.approach_axis = (
            parse_approach_axis(approach_axis) if approach_axis is not None else None
        )
        direction = parse_vector(approach_direction, 3, "approach_direction")
        norm = float(np.linalg.norm(direction))
        if norm < 1e-9:
            raise InputError("approach_direction: must be a non-zero vector")
        self.approach_direction = direction / norm
        self.point_offset = (
            parse_vector(point_offset, 3, "point_offset") if point_offset is not None else None
        )
        weight = float(orientation_weight)
        if not np.isfinite(weight) or weight <= 0.0:
            raise InputError(f"orientation_weight: expected a positive number, got {weight}")
        self.orientation_weight = weight
        self.position_tolerance = _tolerance(position_tolerance, "position_tolerance")
        self.orientation_tolerance = _tolerance(orientation_tolerance, "orientation_tolerance")
        if frame is None:
            frame = robot.tool_frame or self.model.frames[self.model.nframes - 1].name
        self._frame_ids: dict[str, int] = {}
        self.frame = frame
        self._frame_id(frame, "frame")
        self._residuals: dict[tuple, Residual] = {}

    # ------------------------------------------------------------------ helpers
    @property
    def joint_names(self) -> list[str]:
        """Joints moved by the IK, in the order of result vectors."""
        return list(self.subset.names)

    def _frame_id(self, frame: Any, name: str) -> int:
        fid = self._frame_ids.get(frame) if isinstance(frame, str) else None
        if fid is not None:
            return fid
        if not isinstance(frame, str) or not self.model.existFrame(frame):
            names = [f.name for f in self.model.frames]
            close = difflib.get_close_matches(str(frame), names, n=3)
            hint = f"; did you mean {close}?" if close else ""
            raise InputError(f"{name}: {frame!r} is not a frame of the model{hint}")
        fid = self.model.getFrameId(frame)
        self._frame_ids[frame] = fid
        return fid

    def _goals(self, target: Any) -> list[FrameGoal]:
        if is_multi_target(target):
            items = list(target.items())
            if not items:
                raise InputError("target: the frame → target mapping is empty")
        else:
            items = [(self.frame, target)]
        goals = []
        for frame, tgt in items:
            fid = self._frame_id(frame, "target" if is_multi_target(target) else "frame")
            label = "target" if len(items) == 1 else f"target[{frame!r}]"
            position, rotation = parse_target(tgt, orientation=self.mode == "pose", name=label)
            goals.append(
                FrameGoal(
                    frame=frame,
                    frame_id=fid,
                    mode=self.mode,
                    position=position,
                    rotation=rotation,
                    point_offset=self.point_offset,
                    approach_axis=self.approach_axis,
                    approach_direction=self.approach_direction
                    if self.approach_axis is not None
                    else None,
                )
            )
        return goals

    def residual(self, target: Any) -> Residual:
        """The residual of ``target`` (cached per frame layout; targets are replaced)."""
        if not is_multi_target(target):
            cached = self._residuals.get((self._frame_ids[self.frame],))
            if cached is not None:
                position, rotation = parse_target(
                    target, orientation=self.mode == "pose", name="target"
                )
                cached.set_target(0, position, rotation)
                return cached
        goals = self._goals(target)
        key = tuple(g.frame_id for g in goals)
        res = self._residuals.get(key)
        if res is None:
            res = Residual(
                self.model,
                self.data,
                self.subset,
                goals,
                orientation_weight=self.orientation_weight,
                position_tolerance=self.position_tolerance,
                orientation_tolerance=self.orientation_tolerance,
            )
            if len(self._residuals) > 16:
                self._residuals.clear()
            self._residuals[key] = res
        else:
            res.set_goals(goals)
        return res

    def _result(
        self,
        residual: Residual,
        q: np.ndarray,
        *,
        success: bool,
        iterations: int,
        restarts: int,
        t0: float,
        reason: str,
        solutions: int,
        evaluated: bool = False,
    ) -> IKResult:
        if not evaluated:
            residual.evaluate(q)
        pos_err, ori_err = residual.errors()
        return IKResult(
            q=self.subset.values(q),
            joint_names=tuple(self.subset.names),
            q_full=q.copy(),
            success=bool(success),
            position_error=pos_err,
            orientation_error=ori_err,
            iterations=iterations,
            restarts=restarts,
            time_s=time.perf_counter() - t0,
            reason=reason,
            method=self.method.name,
            solutions=solutions,
        )

    # ------------------------------------------------------------------ queries
    def solve(
        self,
        target: Any,
        *,
        seed: Any = None,
        max_iterations: int = 100,
        time_budget_ms: float | None = None,
        stall_iterations: int | None = None,
        max_step: float | None = None,
    ) -> IKResult:
        """Local IK from ``seed`` (no restarts).

        Args:
            target: Pose, position, or a mapping ``{frame: target}`` (see
                :mod:`pinkctl.ik.targets`).
            seed: Start: None (``robot.q0``), the moved joints' values, a full Pinocchio
                ``q``, or a mapping joint name → value. Clamped into the limits.
            max_iterations: Iteration budget (residual evaluations).
            time_budget_ms: Wall-clock budget [ms], or None.
            stall_iterations: Stop early after this many iterations without progress
                (None: use the whole budget).
            max_step: Largest joint displacement per iteration [rad] or [m], or None.

        Returns:
            An :class:`IKResult`; on failure its configuration is the best iterate.

        Raises:
            ValueError: Malformed target, seed or budget.
        """
        t0 = time.perf_counter()
        max_it = _positive_int(max_iterations, "max_iterations", allow_none=False)
        assert max_it is not None
        budget = _budget_ms(time_budget_ms)
        stall = _positive_int(stall_iterations, "stall_iterations")
        step_cap = _positive_float(max_step, "max_step")
        residual = self.residual(target)
        q = self.subset.parse_seed(seed, self.robot.q0, name="seed")
        deadline = t0 + budget * 1e-3 if budget is not None else None
        out = run_local(
            residual,
            self.subset,
            self.method,
            q,
            max_iterations=max_it,
            deadline=deadline,
            stall_iterations=stall,
            max_step=step_cap,
        )
        reason = {
            "converged": "converged",
            "iterations": f"iteration budget ({max_it}) exhausted",
            "time": f"time budget ({budget} ms) exhausted",
            "stalled": f"stalled: no progress in {stall} iterations",
            "numerical": "numerical failure (non-finite error)",
        }[out.reason]
        return self._result(
            residual,
            out.q,
            success=out.success,
            iterations=out.iterations,
            restarts=0,
            t0=t0,
            reason=reason,
            solutions=int(out.success),
            evaluated=out.success,
        )

    def find(
        self,
        target: Any,
        *,
        seed: Any = None,
        time_budget_ms: float | None = 5.0,
        max_restarts: int | None = None,
        max_iterations: int | None = None,
        iterations_per_start: int = 30,
        stall_iterations: int | None = 5,
        rng: int | np.random.Generator | None = 0,
        validate: Callable[[np.ndarray], bool] | None = None,
        metric: Any = DEFAULT_METRIC,
        metric_threshold: float | None = None,
        max_solutions: int = 1,
        closest_to_seed: bool = True,
        max_step: float | None = None,
    ) -> IKResult:
        """Global IK: local solves from the seed, then from random configurations.

        Args:
            target: Pose, position, or a mapping ``{frame: target}``.
            seed: Start of the first local solve, and reference of ``closest_to_seed``.
                Same forms as in :meth:`solve`.
            time_budget_ms: Wall-clock budget [ms], or None.
            max_restarts: Maximum random starts, or None.
            max_iterations: Total iteration budget (residual evaluations), or None.
            iterations_per_start: Iteration cap of each local solve.
            stall_iterations: Abandon a local solve after this many iterations without
                progress (None: only the cap).
            rng: Seed or generator of the random starts (None: fresh entropy). With an
                integer seed the answer is reproducible whenever ``max_restarts`` or
                ``max_iterations``, not the wall-clock budget, ends the search.
            validate: ``validate(q) -> bool`` on the moved joints' values; a configuration
                is returned as a solution only if it passes.
            metric: CoppeliaSim pose metric weights ``(m0, m1, m2, m3)`` for
                ``metric_threshold``.
            metric_threshold: Skip random starts whose pose is farther than this from the
                target under the metric (None: never skip).
            max_solutions: Keep searching until this many distinct solutions are found (or a
                budget ends), then return one of them.
            closest_to_seed: Among the solutions found, return the closest to the seed
                (joint-space Euclidean distance); else the first found.
            max_step: Largest joint displacement per iteration, or None.

        Raises:
            ValueError: Malformed arguments, or no budget at all (the search would not end).
        """
        t0 = time.perf_counter()
        budget = _budget_ms(time_budget_ms)
        restarts_cap = _non_negative_int(max_restarts, "max_restarts")
        it_cap = _positive_int(max_iterations, "max_iterations")
        if budget is None and restarts_cap is None and it_cap is None:
            raise InputError(
                "time_budget_ms: give time_budget_ms, max_restarts or max_iterations; "
                "without any budget the search may never end"
            )
        per_start = _positive_int(iterations_per_start, "iterations_per_start", allow_none=False)
        assert per_start is not None
        stall = _positive_int(stall_iterations, "stall_iterations")
        n_solutions = _positive_int(max_solutions, "max_solutions", allow_none=False)
        assert n_solutions is not None
        if validate is not None and not callable(validate):
            raise InputError("validate: expected a callable validate(q) -> bool")
        if metric is DEFAULT_METRIC:
            metric_arr = _DEFAULT_METRIC_ARRAY
        else:
            metric_arr = parse_vector(metric, 4, "metric")
            if np.any(metric_arr < 0.0):
                raise InputError(f"metric: weights must be non-negative, got {metric_arr}")
        threshold = None
        if metric_threshold is not None:
            threshold = float(metric_threshold)
            if not np.isfinite(threshold) or threshold <= 0.0:
                raise InputError(f"metric_threshold: expected a positive number, got {threshold}")
        step_cap = _positive_float(max_step, "max_step")
        generator: np.random.Generator | Callable[[], np.random.Generator]
        if isinstance(rng, np.random.Generator):
            generator = rng
        elif rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
            if rng is not None and rng < 0:
                raise InputError(f"rng: an integer seed must be non-negative, got {rng}")
            entropy = rng if rng is not None else np.random.SeedSequence().entropy

            def generator() -> np.random.Generator:
                return np.random.default_rng(entropy)

        else:
            raise InputError(f"rng: expected an integer seed, a Generator or None, got {rng!r}")
        residual = self.residual(target)
        q_seed = self.subset.parse_seed(seed, self.robot.q0, name="seed")
        deadline = t0 + budget * 1e-3 if budget is not None else None
        validate_errors: list[str] = []
        if validate is not None:
            validate = _guarded(validate, validate_errors)
        out = global_search(
            residual,
            self.subset,
            self.method,
            q_seed,
            rng=generator,
            deadline=deadline,
            max_restarts=restarts_cap,
            max_iterations=it_cap,
            iterations_per_start=per_start,
            stall_iterations=stall,
            validate=validate,
            metric=metric_arr,
            metric_threshold=threshold,
            max_solutions=n_solutions,
            closest_to_seed=bool(closest_to_seed),
            max_step=step_cap,
        )
        if out.success:
            reason = "converged"
        else:
            reason = {
                "time": f"time budget ({budget} ms) exhausted",
                "restarts": f"restart budget ({restarts_cap}) exhausted",
                "iterations": f"iteration budget ({it_cap}) exhausted",
            }.get(out.reason, out.reason)
            reason += f": no solution from the seed and {out.restarts} random restarts"
            if out.rejected:
                reason += f"; {out.rejected} converged configurations rejected by validate"
            if out.skipped:
                reason += f"; {out.skipped} starts skipped by metric_threshold"
            if validate_errors:
                reason += (
                    f"; validate raised {validate_errors[0]} "
                    f"({len(validate_errors)} time(s); counted as a rejection)"
                )
        return self._result(
            residual,
            out.q,
            success=out.success,
            iterations=out.iterations,
            restarts=out.restarts,
            t0=t0,
            reason=reason,
            solutions=len(out.solutions),
            # With one solution wanted, the search stops right after evaluating it.
            evaluated=out.success and n_solutions == 1,
        )


def _guarded(
    validate: Callable[[np.ndarray], bool], errors: list[str]
) -> Callable[[np.ndarray], bool]:
    """``validate`` that counts an exception as a rejection (recorded in ``errors``)."""

    def accepts(q: np.ndarray) -> bool:
        try:
            return bool(validate(q))
        except Exception as exc:  # a user callback must not escape the search
            errors.append(f"{type(exc).__name__}: {exc}")
            return False

    return accepts


def solve_ik(
    robot: PinkRobot,
    target: Any,
    *,
    frame: str | None = None,
    seed: Any = None,
    method: str | IKMethod = "lm",
    method_options: Mapping[str, Any] | None = None,
    joint_names: Sequence[str] | None = None,
    position_tolerance: Any = 1e-5,
    orientation_tolerance: Any = 1e-5,
    max_iterations: int = 100,
    time_budget_ms: float | None = None,
    stall_iterations: int | None = None,
    position_only: bool = False,
    approach_axis: Any = None,
    approach_direction: Any = (0.0, 0.0, -1.0),
    point_offset: Any = None,
    orientation_weight: float = 1.0,
    max_step: float | None = None,
) -> IKResult:
    """One-shot IK: a local solve from ``seed`` towards ``target``.

    Builds an :class:`IKSolver` (see it for the goal options) and calls
    :meth:`IKSolver.solve`. For many queries on the same robot, build the solver once.

    Example:
        >>> result = solve_ik(robot, (position, quat_wxyz), frame="tool", seed=q_now)
        >>> if result.success: command(result.positions)
    """
    solver = IKSolver(
        robot,
        frame=frame,
        joint_names=joint_names,
        method=method,
        method_options=method_options,
        position_only=position_only,
        approach_axis=approach_axis,
        approach_direction=approach_direction,
        point_offset=point_offset,
        orientation_weight=orientation_weight,
        position_tolerance=position_tolerance,
        orientation_tolerance=orientation_tolerance,
    )
    return solver.solve(
        target,
        seed=seed,
        max_iterations=max_iterations,
        time_budget_ms=time_budget_ms,
        stall_iterations=stall_iterations,
        max_step=max_step,
    )


def find_ik(
    robot: PinkRobot,
    target: Any,
    *,
    frame: str | None = None,
    seed: Any = None,
    method: str | IKMethod = "lm",
    method_options: Mapping[str, Any] | None = None,
    joint_names: Sequence[str] | None = None,
    position_tolerance: Any = 1e-5,
    orientation_tolerance: Any = 1e-5,
    time_budget_ms: float | None = 5.0,
    max_restarts: int | None = None,
    max_iterations: int | None = None,
    iterations_per_start: int = 30,
    stall_iterations: int | None = 5,
    rng: int | np.random.Generator | None = 0,
    validate: Callable[[np.ndarray], bool] | None = None,
    metric: Any = DEFAULT_METRIC,
    metric_threshold: float | None = None,
    max_solutions: int = 1,
    closest_to_seed: bool = True,
    position_only: bool = False,
    approach_axis: Any = None,
    approach_direction: Any = (0.0, 0.0, -1.0),
    point_offset: Any = None,
    orientation_weight: float = 1.0,
    max_step: float | None = None,
) -> IKResult:
    """Global IK: a search with random restarts (see :meth:`IKSolver.find`).

    Deterministic for a given ``rng`` seed whenever ``max_restarts`` or ``max_iterations``,
    not ``time_budget_ms``, is the budget that ends the search (pass
    ``time_budget_ms=None`` for reproducible results).
    """
    solver = IKSolver(
        robot,
        frame=frame,
        joint_names=joint_names,
        method=method,
        method_options=method_options,
        position_only=position_only,
        approach_axis=approach_axis,
        approach_direction=approach_direction,
        point_offset=point_offset,
        orientation_weight=orientation_weight,
        position_tolerance=position_tolerance,
        orientation_tolerance=orientation_tolerance,
    )
    return solver.find(
        target,
        seed=seed,
        time_budget_ms=time_budget_ms,
        max_restarts=max_restarts,
        max_iterations=max_iterations,
        iterations_per_start=iterations_per_start,
        stall_iterations=stall_iterations,
        rng=rng,
        validate=validate,
        metric=metric,
        metric_threshold=metric_threshold,
        max_solutions=max_solutions,
        closest_to_seed=closest_to_seed,
        max_step=max_step,
    )
