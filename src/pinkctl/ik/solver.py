"""One-shot and global inverse kinematics for one robot: :class:`IKSolver`.

An :class:`IKSolver` is built once per robot and set of options (it resolves joints and
frames, allocates its own ``pin.Data`` and workspaces) and then answers many queries:

- :meth:`IKSolver.solve`: a local solve from a seed (one-shot IK, warm-started tracking);
- :meth:`IKSolver.find`: a global search with random restarts (:mod:`pinkctl.ik.search`).

:func:`~pinkctl.ik.local_ik` and :func:`~pinkctl.ik.find_ik` build a solver for a single call.
A solver never touches the robot: ``robot.data``, ``robot.q0`` and the model are only read,
and no simulation state is involved; answers keep the joint limits and the collision margin.
"""

from __future__ import annotations

import difflib
import functools
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot
from ..errors import InputError
from .checked import CheckedCache, checked_goal
from .collision import collision_check, screened
from .joints import JointSubset
from .loop import LocalRunner, run_local
from .methods import make_method
from .native import NativeLocal, native_local
from .options import IKOptions, LocalOptions, SearchOptions, split_options
from .query import NativeQuery
from .reasons import guarded, local_reason, search_reason
from .residual import Residual
from .result import IKResult
from .search import SeededGenerators, global_search, is_seed
from .seeds import SeedLibrary
from .starts import StartCache
from .targets import FrameGoal, GoalMode, IKTarget, SeedLike, is_multi_target, parse_target

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .options import IKKeywords, LocalKeywords, SearchKeywords

__all__ = ["IKSolver"]

_WARMED_UP: list[bool] = []  # an entry once a solver of this process ran its warm-up query


def _moved_joints(robot: PinkRobot, options: IKOptions) -> list[str]:
    """The joints the IK moves: ``options.joint_names``, by default the robot's controlled
    joints (and its floating base: whole-body IK moves the base too)."""
    if options.joint_names is not None:
        return list(options.joint_names)
    names = list(robot.controlled_joint_names)
    if getattr(robot, "floating_base", False):
        names.insert(0, robot.model.names[1])
    return names


class IKSolver:
    """Reusable IK solver for one robot, joint subset, method and goal mode.

    Args:
        robot: The robot (only read).
        options: What the solver is built from (:class:`~pinkctl.ik.IKOptions`); default
            ``IKOptions()``.
        **changes: :class:`~pinkctl.ik.IKOptions` fields overriding ``options``
            (``IKSolver(robot, frame="tool", method="dls")``; typed by
            :class:`~pinkctl.ik.options.IKKeywords`).

    Raises:
        ValueError: Unknown frame or joint, bad method name or options, malformed options.

    A solver owns mutable workspaces: use one per thread. A method instance passed in is
    bound to this solver (pass a fresh one to each solver).
    """

    def __init__(
        self, robot: PinkRobot, options: IKOptions | None = None, **changes: Unpack[IKKeywords]
    ) -> None:
        (opts,) = split_options(changes, options if options is not None else IKOptions())
        if not isinstance(opts, IKOptions):
            raise InputError(f"options: expected IKOptions, got {type(options).__name__}")
        if not isinstance(robot, PinkRobot):
            raise InputError(f"robot: expected a PinkRobot, got {type(robot).__name__}")
        self.robot = robot
        self.model: pin.Model = robot.model
        self.data: pin.Data = self.model.createData()  # private: robot.data is never touched
        self.subset = JointSubset(self.model, _moved_joints(robot, opts), name="joint_names")
        self._joint_names = tuple(self.subset.names)
        self.method = make_method(opts.method, **dict(opts.method_options or {}))
        self.method.bind(self.model, self.subset)
        goal = checked_goal(opts)
        self.mode: GoalMode = goal.mode
        self.approach_axis = goal.approach_axis
        self.approach_direction = goal.approach_direction
        self.point_offset = goal.point_offset
        self.orientation_weight = goal.orientation_weight
        self.position_tolerance = goal.position_tolerance
        self.orientation_tolerance = goal.orientation_tolerance
        frame = opts.frame
        if frame is None:
            frame = robot.tool_frame or self.model.frames[self.model.nframes - 1].name
        self._frame_ids: dict[str, int] = {}
        self.frame = frame
        self._default_key = (fid := self._frame_id(frame, "frame"),)
        self._residuals: dict[tuple, Residual] = {}
        self._runners: dict[int, LocalRunner] = {}  # by id() of a residual in _residuals
        self._checked = CheckedCache()
        self._generators = SeededGenerators()
        self._starts = StartCache(self.subset, robot.q0)
        self._query: tuple[Residual | None, NativeQuery | None] = (None, None)
        self.options = opts
        self.collision = collision_check(robot, self.subset, opts)  # None: nothing to check
        self._seeds = SeedLibrary(self.model, self.subset, fid, robot.q0, self.collision)
        self._warm_up()

    def _warm_up(self) -> None:
        """Build the default frame's residual and local loop now, and (the process's first
        solver) run a short query: one-time costs fall outside any query's time budget."""
        q = self.subset.parse_seed(None, self.robot.q0, name="seed")
        pin.framesForwardKinematics(self.model, self.data, q)
        home = self.data.oMf[self._default_key[0]].copy()
        residual = self.residual(home)
        residual.evaluate(q)
        self._local(residual)
        if not _WARMED_UP:
            home.translation += 1e-3  # a step away: the iteration runs a method step
            _WARMED_UP.append(self.solve(home, seed=q, max_iterations=3).success)

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
                self._runners.clear()
            self._residuals[key] = res
        else:
            res.set_goals(goals)
        return res

    def _local(self, residual: Residual) -> LocalRunner:
        """The local solve for ``residual``: the native kernel's loop where it applies
        (:mod:`pinkctl.ik.native`), else :func:`run_local`; built once per residual."""
        runner = self._runners.get(id(residual))
        if runner is None:
            native = native_local(residual, self.subset, self.method)
            runner = (
                native
                if native is not None
                else functools.partial(run_local, residual, self.subset, self.method)
            )
            self._runners[id(residual)] = runner
        return runner

    def _native_query(self, target: Any) -> NativeQuery | None:
        """The whole-query kernel of the default frame (:mod:`pinkctl.ik.query`), or None."""
        single = type(target) is pin.SE3 or not is_multi_target(target)
        residual = self._residuals.get(self._default_key) if single else None
        if residual is not None and residual is not self._query[0]:
            self._query = (residual, NativeQuery.of(self._local(residual), self, self._starts))
        return self._query[1] if residual is not None else None

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
            joint_names=self._joint_names,
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
        target: IKTarget,
        *,
        seed: SeedLike = None,
        options: LocalOptions | None = None,
        **changes: Unpack[LocalKeywords],
    ) -> IKResult:
        """Local IK from ``seed`` (no restarts).

        Args:
            target: Pose, position, or a mapping ``{frame: target}`` (see
                :mod:`pinkctl.ik.targets`).
            seed: Start: None (``robot.q0``), the moved joints' values, a full Pinocchio
                ``q``, or a mapping joint name → value. Clamped into the limits.
            options: Budget of the solve (:class:`~pinkctl.ik.LocalOptions`).
            **changes: :class:`~pinkctl.ik.LocalOptions` fields overriding ``options``.

        Returns:
            An :class:`IKResult`; on failure its configuration is the best iterate.

        Raises:
            InputError: Malformed target, seed or budget.
        """
        t0 = time.perf_counter()
        checked = self._checked.local(options, changes)
        query = self._native_query(target)
        answer = query.solve(target, seed, checked, t0) if query else None
        if answer is not None:  # the common query, whole in the native kernel
            return screened(self.collision, answer)
        max_it, budget = checked.max_iterations, checked.time_budget_ms
        stall = checked.stall_iterations
        residual = self.residual(target)
        local = self._local(residual)
        # the native loop clamps its start itself (the same operations)
        q = self.subset.parse_seed(
            seed, self.robot.q0, name="seed", clamp=not isinstance(local, NativeLocal)
        )
        deadline = t0 + budget * 1e-3 if budget is not None else None
        out = local(
            q,
            max_iterations=max_it,
            deadline=deadline,
            stall_iterations=stall,
            max_step=checked.max_step,
        )
        reason = "converged" if out.success else local_reason(out.reason, max_it, budget, stall)
        result = self._result(
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
        return screened(self.collision, result)

    def find(
        self,
        target: IKTarget,
        *,
        seed: SeedLike = None,
        options: SearchOptions | None = None,
        **changes: Unpack[SearchKeywords],
    ) -> IKResult:
        """Global IK: local solves from the seed, then from random configurations.

        Args:
            target: Pose, position, or a mapping ``{frame: target}``.
            seed: Start of the first local solve, and reference of ``closest_to_seed``.
                Same forms as in :meth:`solve`.
            options: Budget and selection rules (:class:`~pinkctl.ik.SearchOptions`).
            **changes: :class:`~pinkctl.ik.SearchOptions` fields overriding ``options``.

        Raises:
            InputError: Malformed arguments, or no budget at all (the search would not end).
        """
        t0 = time.perf_counter()
        search, checked = self._checked.search(options, changes)
        query = self._native_query(target)
        answer = query.find(target, seed, search, checked, t0) if query else None
        # whole in the kernel: the Python search's first solution (if it collides, go on below)
        if answer is not None and screened(self.collision, answer) is answer:
            return answer
        budget = checked.time_budget_ms
        restarts_cap, it_cap = checked.max_restarts, checked.max_iterations
        validate, check = checked.validate, self.collision
        residual = self.residual(target)
        q_seed = self.subset.parse_seed(seed, self.robot.q0, name="seed")
        deadline = t0 + budget * 1e-3 if budget is not None else None
        validate_errors: list[str] = []
        if validate is not None:
            validate = guarded(validate, validate_errors)
        out = global_search(
            residual,
            self.subset,
            self.method,
            q_seed,
            rng=self._generators.factory(search.rng) if is_seed(search.rng) else checked.generator,
            deadline=deadline,
            max_restarts=restarts_cap,
            max_iterations=it_cap,
            iterations_per_start=checked.iterations_per_start,
            stall_iterations=checked.stall_iterations,
            validate=validate,
            metric=checked.metric,
            metric_threshold=checked.metric_threshold,
            max_solutions=checked.max_solutions,
            closest_to_seed=checked.closest_to_seed,
            max_step=checked.max_step,
            local=self._local(residual),
            collision=check.accepts if check is not None else None,
            far=check.far_columns if check is not None else None,
            flips=check.branch_starts if check is not None else None,
            library=functools.partial(self._seeds.picks, residual),
        )
        reason = search_reason(out, budget, restarts_cap, it_cap, validate_errors, self.collision)
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
            evaluated=out.success and checked.max_solutions == 1,
        )
