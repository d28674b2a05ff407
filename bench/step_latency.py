"""Per-tick latency of ``PinkIKController.forward`` against raw pink and mink, in one run.

Each variant runs its own kinematic loop (the command of a tick is the next tick's
configuration) on the same problem, and only the control step is timed:

- **pinkctl**: ``PinkIKController.forward(estimated, setpoint, t)`` with the default fast QP
  layer (``qp_path="pinkctl"``): ``RobotState`` in, ``RobotState`` out. The estimated
  state (positions and velocities of every joint, built from the loop's configuration) and
  the setpoints (tool-site poses) are made outside the timed region; reading them, updating
  the targets, forward kinematics, the QP and the output state are inside it.
- **pinkctl, pink path** (timed too, no target attached): the same controller with
  ``qp_path="pink"`` (pink's ``build_ik`` + qpsolvers, restricted to the controlled
  joints): the correctness reference.
- **pink**: ``FrameTask.set_target`` + ``pink.solve_ik`` + ``Configuration.integrate_inplace``
  (which re-runs forward kinematics and Jacobians), ``safety_break=False``.
- **mink**: the same three calls of mink 1.x, on the MuJoCo model compiled with
  ``mujoco.MjSpec`` from the very URDF pinkctl loads (``fusestatic`` off so the tool frame
  stays a body).

The problem is the same for all: a frame task on the tool frame (position and orientation
cost 1, gain 1, no Levenberg–Marquardt damping), a posture task (cost 1e-3) towards the home
configuration, Tikhonov damping 1e-12, and the URDF's position limits (configuration limit,
gain 0.5: pink's default, set explicitly for mink) and velocity limits (pink
``VelocityLimit``; mink ``VelocityLimit`` with the same values by joint name); control period
dt = 5 ms. The controller's acceleration/jerk shaping of the command (``motion_limits``) is
off in the ``pinkctl`` variant: the peers have no equivalent. The ``default`` variant is the
controller as a user builds it (motion limits on, the default solver ``"box"``, the native
kernel when built): its trajectory differs from the peers' by the shaping, its time is what a
default tick costs. In the ``daqp`` rows the ``pinkctl`` variant runs ``solver="box"``
(pinkctl's exact box QP on box-only ticks, DAQP itself on ticks with rows: the same minimiser
as DAQP to rounding) against the peers' DAQP; the other rows run the named solver.
The Franka's controller commands its 7 arm joints and holds the fingers; the peers get the
same 7-DoF problem on models where the finger joints are locked at home
(``pin.buildReducedModel``; for MuJoCo, finger joints and their mimic equality removed from
the spec). The SelfCollisionBarrier variant (Franka, the SRDF-filtered
pairs) compares pinkctl with pink only: mink has no equivalent barrier.

The target starts at the home tool pose and moves on a 10 cm circle in the world y-z plane at
0.25 Hz while rolling ±0.3 rad about the tool x axis at 0.2 Hz (the anchors' protocol,
``shared/reference/anchors-pink-mink.md`` §4).

Timing: ``time.perf_counter_ns`` around the control step only, garbage collector off during
the timed loops, warm-up steps discarded. The variants of one (robot, problem, solver) group
run *interleaved* in chunks of ``--chunk`` steps (default 100: each variant runs 100 steps,
then the next, round robin), so load changes on the machine hit every variant alike while
caches stay warm within a chunk (``--chunk 1``, strict step-by-step alternation, slows every
variant by a third or more through cache pollution). Solver options: the peers get pinkctl's
default tolerances (:data:`pinkctl.qp.DEFAULT_SOLVER_OPTIONS`, e.g. OSQP
``eps_abs = eps_rel = 1e-9``; minus pinkctl's own active-set ``polish``, which is not a
solver setting) so that every variant solves to a comparable accuracy; ``--peer-defaults``
gives them qpsolvers' own defaults instead.

Correctness columns: the largest joint difference [rad] between the fast path's trajectory and
the pink path's over the whole run (about 1e-12 with exact solvers), and in one tick from the
same state (every 20 ticks, against ``pinkctl.qp.reference_solve_ik`` with fresh barrier
objects). With the self-collision barrier whole runs drift apart (up to about 1e-3 rad, even
between two exact solvers): the distances come from hpp-fcl's warm-started GJK, accurate to
its tolerance only, and pink reuses a barrier's Jacobian while the configuration stays
``np.allclose`` to the one it was computed at (pinkctl evaluates it every tick); the one-tick
column stays at rounding level. Each
controller gets its own robot, as pink's ``Configuration`` copies ``data`` but shares the
robot's ``collision_data``.

The environment is used as it is: ``make bench`` does not unset ``OPENBLAS_CORETYPE`` /
``OPENBLAS_L2_SIZE`` (the anchors' reference measurement did); their values are printed with
the machine line.

Usage (from the repository root)::

    python -m bench.step_latency                  # 2000 steps + 200 warm-up per variant
    python -m bench.step_latency --steps 300      # quick run
    python -m bench.step_latency --markdown       # markdown tables (README)
    python -m bench.step_latency --profile        # where pinkctl's tick goes

``run(steps, ...) -> list[dict]`` returns one row per (robot, problem, solver).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import importlib
import inspect
import logging
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from pinkctl import JointState, PinkIKController, RobotState, SpatialState
from pinkctl.core.robot import PinkRobot, load_pink_supported_robot
from pinkctl.qp import BOX_SOLVER, DEFAULT_SOLVER, DEFAULT_SOLVER_OPTIONS

from .common import bench_solvers, machine_line, time_phases, timing_stats_us

mink: Any  # bench-only dependency ("bench" extra); None when not installed
try:
    mink = importlib.import_module("mink")
except ImportError:  # pragma: no cover - depends on the environment
    mink = None

__all__ = [
    "DT",
    "PROBLEMS",
    "PinkctlVariant",
    "check_targets",
    "home_tool_pose",
    "markdown",
    "moving_target",
    "profile_forward",
    "run",
]

DT = 0.005  # [s] control period
#: pink + DAQP median per tick [µs] on the machine where the issue's 25 µs target was set
#: (``shared/reference/anchors-pink-mink.md`` §4.2, same problem and protocol).
ANCHOR_PINK_DAQP_US = 57.0
WARMUP = 200
#: Every this many ticks the fast path's output is compared with pink's QP at the same state.
CHECK_EVERY = 20
POSITION_COST = 1.0
ORIENTATION_COST = 1.0
POSTURE_COST = 1e-3
DAMPING = 1e-12
CONFIGURATION_LIMIT_GAIN = 0.5
#: Minimum distance of the self-collision barrier [m]; pink's default (0.02) is violated at the
#: Franka's home configuration (link5-link7 capsules 12.5 mm apart).
SELF_COLLISION_D_MIN = 0.01
ROBOTS = ("franka", "ur10")
PLAIN = "frame+posture"
BARRIER = "frame+posture+self-collision"
PROBLEMS = (PLAIN, BARRIER)
#: Variants: the controller's fast path, the controller's pink path (``qp_path="pink"``),
#: raw pink, mink.
LABELS = ("pinkctl", "default", "pinkpath", "pink", "mink")

# qpsolvers warns on every dense-to-CSC conversion (part of what is measured for the peers);
# pink logs every out-of-limit configuration when safety_break is off.
warnings.filterwarnings("ignore", message="Converted ")
logging.getLogger("pink").setLevel(logging.ERROR)
logging.getLogger("qpsolvers").setLevel(logging.ERROR)


# ---------------------------------------------------------------------------- the target


@dataclass(frozen=True)
class MovingTarget:
    """Tool-frame targets per tick: positions (K, 3) [m], quaternions (K, 4) (w, x, y, z)
    and the rotation matrices (K, 3, 3) every variant uses (world frame)."""

    positions: np.ndarray
    quaternions: np.ndarray
    rotations: np.ndarray

    def se3(self, k: int) -> pin.SE3:
        """Target of tick ``k`` as a Pinocchio transform."""
        return pin.SE3(self.rotations[k], self.positions[k])


def _rotation_from_wxyz(wxyz: np.ndarray) -> np.ndarray:
    # The same conversion as PinkIKController's setpoint reading, so every variant sees the
    # very same rotation matrix.
    w, x, y, z = wxyz
    return pin.Quaternion(w, x, y, z).normalized().toRotationMatrix()


def moving_target(start: pin.SE3, n: int, dt: float = DT) -> MovingTarget:
    """The anchors' moving target, starting at ``start`` (the home tool pose).

    Position: ``start + [0, r sin ωt, r (1 − cos ωt)]`` (world), r = 0.1 m, ω = 2π·0.25 rad/s.
    Orientation: ``R_start · R_x(0.3 sin(2π·0.2 t))``: a roll about the tool x axis.
    """
    t = dt * np.arange(n)
    omega = 2.0 * np.pi * 0.25
    positions = np.tile(start.translation, (n, 1))
    positions[:, 1] += 0.1 * np.sin(omega * t)
    positions[:, 2] += 0.1 * (1.0 - np.cos(omega * t))
    roll = 0.3 * np.sin(2.0 * np.pi * 0.2 * t)
    quaternions = np.empty((n, 4))
    rotations = np.empty((n, 3, 3))
    for k in range(n):
        c, s = np.cos(roll[k]), np.sin(roll[k])
        rx = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        xyzw = pin.Quaternion(start.rotation @ rx).normalized().coeffs()
        quaternions[k] = (xyzw[3], xyzw[0], xyzw[1], xyzw[2])
    for k in range(n):
        rotations[k] = _rotation_from_wxyz(quaternions[k])
    return MovingTarget(positions, quaternions, rotations)


# ---------------------------------------------------------------------------- variants


class _Variant:
    """One controller in its own kinematic loop: ``prepare`` / ``record`` are untimed."""

    label = ""

    def __init__(self, n_total: int, n_joints: int) -> None:
        self.q_log = np.full((n_total, n_joints), np.nan)  # controlled joints, after tick k
        self.failures = 0
        self.failure_kinds: dict[str, int] = {}

    def prepare(self, k: int) -> None:
        pass

    def step(self, k: int) -> None:
        raise NotImplementedError

    def record(self, k: int) -> None:
        raise NotImplementedError

    def _fail(self, kind: str) -> None:
        self.failures += 1
        self.failure_kinds[kind] = self.failure_kinds.get(kind, 0) + 1


class PinkctlVariant(_Variant):
    """``PinkIKController.forward``: estimated state and setpoint built outside the timer."""

    label = "pinkctl"

    def __init__(
        self,
        robot: PinkRobot,
        target: MovingTarget,
        solver: str,
        *,
        barrier: bool,
        n_total: int,
        qp_path: str = "pinkctl",
        check_every: int = 0,
        default_settings: bool = False,
        controller_options: dict[str, Any] | None = None,
    ) -> None:
        self.label = "pinkctl" if qp_path == "pinkctl" else "pinkpath"
        if default_settings:
            self.label = "default"
        controlled = list(robot.controlled_joint_names)
        super().__init__(n_total, len(controlled))
        frame = _tool_frame(robot)
        names = list(robot.joint_names)
        model = robot.model
        self.names = names
        if default_settings:
            solver = DEFAULT_SOLVER
        elif solver == "daqp" and qp_path == "pinkctl":
            solver = BOX_SOLVER  # the daqp row: pinkctl's box QP, DAQP where there are rows
        self.controller = PinkIKController(
            robot,
            names,
            [frame],
            tool_frame=frame,
            position_cost=POSITION_COST,
            orientation_cost=ORIENTATION_COST,
            posture_cost=POSTURE_COST,
            damping=DAMPING,
            gain=1.0,
            lm_damping=0.0,
            solver=solver,
            dt=DT,
            extra_barriers=[_self_collision_barrier(robot)] if barrier else None,
            qp_path=qp_path,  # type: ignore[arg-type]
            configuration_limit_gain=CONFIGURATION_LIMIT_GAIN,
            **({} if default_settings else _SAME_PROBLEM_OPTIONS),
            **(_NO_AVOIDANCE | (controller_options or {})),
        )
        self.q = np.array([robot.q0[model.joints[model.getJointId(n)].idx_q] for n in names])
        self.v = np.zeros(len(names))
        self.controlled = controlled
        self.cols = np.array([names.index(n) for n in controlled])
        self.setpoints = [
            RobotState(
                sites=SpatialState.from_name(
                    [frame],
                    positions=([frame], target.positions[k].reshape(1, 3)),
                    orientations=([frame], target.quaternions[k].reshape(1, 4)),
                )
            )
            for k in range(n_total)
        ]
        self.times = DT * np.arange(n_total)
        if not self.controller.reset(self._estimate(), None, 0.0):
            raise RuntimeError(f"controller reset failed: {self.controller.last_error}")
        self.estimated = self._estimate()
        self.output: RobotState | None = None
        self.robot = robot
        self.solver = solver
        self.barrier = barrier
        self.check_every = check_every
        self.tick_max_dq = 0.0 if check_every > 0 else float("nan")

    def _estimate(self) -> RobotState:
        names = self.names
        return RobotState(
            joints=JointState.from_name(
                names, positions=(names, self.q.copy()), velocities=(names, self.v.copy())
            )
        )

    def prepare(self, k: int) -> None:
        self.estimated = self._estimate()

    def step(self, k: int) -> None:
        self.output = self.controller.forward(self.estimated, self.setpoints[k], self.times[k])

    def record(self, k: int) -> None:
        out = self.output
        if out is None or out.joints is None:
            self._fail(str(self.controller.last_error))
            self.v[:] = 0.0
        else:
            self.q[self.cols] = out.joints.get_positions(self.controlled)
            self.v[self.cols] = out.joints.get_velocities(self.controlled)
            if self.check_every > 0 and k % self.check_every == 0:
                self._check_tick()
        self.q_log[k] = self.q[self.cols]

    def _check_tick(self) -> None:
        """Compare this tick's output velocity with pink's ``build_ik`` + qpsolvers solution
        at the same configuration and targets (fresh barrier objects: pink's barriers reuse a
        Jacobian cached at any configuration ``np.allclose`` to the current one)."""
        from pinkctl.qp import QPSolveError, reference_solve_ik

        c = self.controller
        configuration = c.configuration
        if configuration is None:
            return
        model = self.robot.model
        v_idx = np.array([model.joints[model.getJointId(n)].idx_v for n in self.controlled])
        try:
            v_ref = reference_solve_ik(
                configuration,
                c.tasks,
                DT,
                controlled_v_indices=v_idx,
                solver=self.solver,
                damping=DAMPING,
                limits=c.limits,
                barriers=[_self_collision_barrier(self.robot)] if self.barrier else [],
            )
        except QPSolveError:
            return
        dq = DT * float(np.max(np.abs(v_ref[v_idx] - self.v[self.cols])))
        self.tick_max_dq = max(self.tick_max_dq, dq)


class _Pink(_Variant):
    """Raw pink: ``set_target`` + ``solve_ik`` + ``integrate_inplace``."""

    label = "pink"

    def __init__(
        self,
        peer: _PeerModels,
        target: MovingTarget,
        solver: str,
        *,
        barrier: bool,
        n_total: int,
        solver_options: dict[str, Any],
    ) -> None:
        import pink
        from pink.limits import ConfigurationLimit, VelocityLimit
        from pink.tasks import FrameTask, PostureTask

        super().__init__(n_total, len(peer.joint_names))
        model = pin.Model(peer.model)  # pink caches its default limits on the model
        geometry = peer.geometry if barrier else None
        self.configuration = pink.Configuration(
            model,
            model.createData(),
            peer.q0.copy(),
            collision_model=geometry,
            collision_data=geometry.createData() if geometry is not None else None,
        )
        self.frame_task = FrameTask(
            peer.frame,
            position_cost=POSITION_COST,
            orientation_cost=ORIENTATION_COST,
            lm_damping=0.0,
            gain=1.0,
        )
        posture = PostureTask(cost=POSTURE_COST, gain=1.0)
        posture.set_target(peer.q0.copy())
        self.tasks = [self.frame_task, posture]
        self.limits = [
            ConfigurationLimit(model, config_limit_gain=CONFIGURATION_LIMIT_GAIN),
            VelocityLimit(model),
        ]
        self.barriers = [_self_collision_barrier_n(geometry)] if geometry is not None else []
        self.targets = [target.se3(k) for k in range(n_total)]
        self.solver = solver
        self.options = solver_options
        self.idx_q = np.array(
            [model.joints[model.getJointId(n)].idx_q for n in peer.joint_names], dtype=np.intp
        )
        self._solve_ik = pink.solve_ik

    def step(self, k: int) -> None:
        cfg = self.configuration
        self.frame_task.set_target(self.targets[k])
        try:
            v = self._solve_ik(
                cfg,
                self.tasks,
                DT,
                solver=self.solver,
                damping=DAMPING,
                limits=self.limits,
                barriers=self.barriers,
                safety_break=False,
                **self.options,
            )
        except Exception as exc:  # NoSolutionFound and solver errors: count, keep q
            self._fail(type(exc).__name__)
            return
        cfg.integrate_inplace(v, DT)

    def record(self, k: int) -> None:
        self.q_log[k] = self.configuration.q[self.idx_q]


class _Mink(_Variant):
    """mink: ``set_target`` + ``solve_ik`` + ``integrate_inplace`` on the MuJoCo model."""

    label = "mink"

    def __init__(
        self,
        peer: _PeerModels,
        target: MovingTarget,
        solver: str,
        *,
        n_total: int,
        solver_options: dict[str, Any],
    ) -> None:
        assert mink is not None and peer.mj_model is not None
        super().__init__(n_total, len(peer.joint_names))
        mj_model = peer.mj_model
        adr = np.array([int(mj_model.joint(n).qposadr[0]) for n in peer.joint_names])
        q0 = np.zeros(mj_model.nq)
        q0[adr] = peer.q0[
            [peer.model.joints[peer.model.getJointId(n)].idx_q for n in peer.joint_names]
        ]
        self.adr = adr
        self.configuration = mink.Configuration(mj_model, q0)
        self.frame_task = mink.FrameTask(
            peer.frame,
            "body",
            position_cost=POSITION_COST,
            orientation_cost=ORIENTATION_COST,
            gain=1.0,
            lm_damping=0.0,
        )
        posture = mink.PostureTask(mj_model, cost=POSTURE_COST, gain=1.0)
        posture.set_target(q0)
        self.tasks = [self.frame_task, posture]
        velocities = {
            n: float(peer.model.velocityLimit[peer.model.joints[peer.model.getJointId(n)].idx_v])
            for n in peer.joint_names
        }
        self.limits = [
            mink.ConfigurationLimit(mj_model, gain=CONFIGURATION_LIMIT_GAIN),
            mink.VelocityLimit(mj_model, velocities),
        ]
        self.targets = [
            mink.SE3.from_rotation_and_translation(
                mink.SO3.from_matrix(target.rotations[k]), target.positions[k].copy()
            )
            for k in range(n_total)
        ]
        self.solver = solver
        self.options = solver_options

    def step(self, k: int) -> None:
        cfg = self.configuration
        self.frame_task.set_target(self.targets[k])
        try:
            v = mink.solve_ik(
                cfg,
                self.tasks,
                DT,
                self.solver,
                damping=DAMPING,
                safety_break=False,
                limits=self.limits,
                **self.options,
            )
        except Exception as exc:  # NoSolutionFound and solver errors: count, keep q
            self._fail(type(exc).__name__)
            return
        cfg.integrate_inplace(v, DT)

    def record(self, k: int) -> None:
        self.q_log[k] = self.configuration.q[self.adr]


# ---------------------------------------------------------------------------- models

#: Controller options that keep its problem equal to the peers': no acceleration / jerk
#: shaping of the command (only when this version of the controller has that option).
_SAME_PROBLEM_OPTIONS: dict[str, Any] = (
    {"motion_limits": False}
    if "motion_limits" in inspect.signature(PinkIKController.__init__).parameters
    else {}
)
#: The peers avoid no collision: pinkctl's rows neither (said explicitly; ``bench.peers_tick``
#: times ``self_collision=True``).
_NO_AVOIDANCE: dict[str, Any] = (
    {"self_collision": False}
    if "self_collision" in inspect.signature(PinkIKController.__init__).parameters
    else {}
)


def _tool_frame(robot: PinkRobot) -> str:
    return robot.tool_frame or robot.model.frames[robot.model.nframes - 1].name


def _self_collision_barrier_n(geometry: pin.GeometryModel) -> Any:
    from pink.barriers import SelfCollisionBarrier

    return SelfCollisionBarrier(
        n_collision_pairs=len(geometry.collisionPairs), d_min=SELF_COLLISION_D_MIN
    )


def _self_collision_barrier(robot: PinkRobot) -> Any:
    if robot.collision_model is None:
        raise ValueError("the self-collision variant needs a robot with a collision model")
    return _self_collision_barrier_n(robot.collision_model)


@dataclass
class _PeerModels:
    """The peers' models: only the controlled joints move, the others are locked at home."""

    model: pin.Model
    geometry: pin.GeometryModel | None
    q0: np.ndarray
    frame: str
    joint_names: list[str]  # controlled joints, controlled order
    locked: list[str]
    mj_model: Any  # mujoco.MjModel or None
    fk_max_diff: float  # [m or rotation-matrix entry] vs the controller's model, random q


def _peer_models(robot: PinkRobot, with_mujoco: bool) -> _PeerModels:
    model = robot.model
    controlled = list(robot.controlled_joint_names)
    locked = [model.names[j] for j in range(1, model.njoints) if model.names[j] not in controlled]
    geometry = robot.collision_model
    if locked:
        ids = [model.getJointId(n) for n in locked]
        if geometry is not None:
            reduced, reduced_geometry = pin.buildReducedModel(model, geometry, ids, robot.q0)
        else:
            reduced, reduced_geometry = pin.buildReducedModel(model, ids, robot.q0), None
    else:
        reduced, reduced_geometry = pin.Model(model), geometry
    frame = _tool_frame(robot)
    q0 = np.array(robot.q0[[model.joints[model.getJointId(n)].idx_q for n in controlled]])
    q0_reduced = pin.neutral(reduced)
    for n, value in zip(controlled, q0, strict=True):
        q0_reduced[reduced.joints[reduced.getJointId(n)].idx_q] = value

    mj_model = None
    if with_mujoco and mink is not None:
        import mujoco

        assert robot.urdf_path is not None
        spec = mujoco.MjSpec.from_file(str(robot.urdf_path))
        spec.compiler.fusestatic = False  # keep the tool frame a body
        if locked:
            for eq in list(spec.equalities):
                if eq.name1 in locked or eq.name2 in locked:
                    spec.delete(eq)
            for n in locked:
                spec.delete(spec.joint(n))
        mj_model = spec.compile()

    fk = _fk_check(robot, reduced, controlled, frame, mj_model)
    return _PeerModels(
        reduced, reduced_geometry, q0_reduced, frame, controlled, locked, mj_model, fk
    )


def _fk_check(
    robot: PinkRobot, reduced: pin.Model, controlled: list[str], frame: str, mj_model: Any
) -> float:
    """Largest tool-pose difference between the controller's model and the peers' models."""
    model = robot.model
    data, rdata = model.createData(), reduced.createData()
    idx = [model.joints[model.getJointId(n)].idx_q for n in controlled]
    ridx = [reduced.joints[reduced.getJointId(n)].idx_q for n in controlled]
    fid, rfid = model.getFrameId(frame), reduced.getFrameId(frame)
    rng = np.random.default_rng(0)
    lo, hi = model.lowerPositionLimit[idx], model.upperPositionLimit[idx]
    worst = 0.0
    if mj_model is not None:
        import mujoco

        mj_data = mujoco.MjData(mj_model)
        adr = [int(mj_model.joint(n).qposadr[0]) for n in controlled]
        bid = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, frame)
    for _ in range(20):
        x = rng.uniform(lo, hi)
        q, rq = robot.q0.copy(), pin.neutral(reduced)
        q[idx], rq[ridx] = x, x
        pin.framesForwardKinematics(model, data, q)
        pin.framesForwardKinematics(reduced, rdata, rq)
        ref = data.oMf[fid]
        poses = [(rdata.oMf[rfid].translation, rdata.oMf[rfid].rotation)]
        if mj_model is not None:
            mj_data.qpos[adr] = x
            mujoco.mj_kinematics(mj_model, mj_data)
            poses.append((mj_data.xpos[bid], mj_data.xmat[bid].reshape(3, 3)))
        for p, r in poses:
            worst = max(
                worst,
                float(np.abs(p - ref.translation).max()),
                float(np.abs(r - ref.rotation).max()),
            )
    if worst > 1e-9:
        raise RuntimeError(f"peer models disagree with {robot.name}'s model: {worst:.2e}")
    return worst


# ---------------------------------------------------------------------------- timing


def peer_solver_options(solver: str, peer_defaults: bool = False) -> dict[str, Any]:
    """Solver options given to raw pink / mink: pinkctl's defaults for ``solver`` (same
    tolerances) without the keys only pinkctl's backends understand (its active-set
    ``polish``), or nothing (qpsolvers' defaults) when ``peer_defaults``."""
    if peer_defaults:
        return {}
    try:
        from pinkctl.qp.solvers import qpsolvers_options
    except ImportError:  # older QP layer: every default is a qpsolvers option
        return dict(DEFAULT_SOLVER_OPTIONS.get(solver, {}))
    return qpsolvers_options(solver, None)


@contextlib.contextmanager
def _c_stdout_silenced() -> Iterator[None]:
    """Send what C libraries print on file descriptor 1 to /dev/null (OSQP prints a line per
    solve when polishing, whatever its ``verbose`` setting)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no usable descriptor 1: nothing to silence
        yield
        return
    libc = ctypes.CDLL(None)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        libc.fflush(None)  # C stdio buffers: flush them while they still go to /dev/null
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _time_interleaved(
    variants: Sequence[_Variant], n_total: int, warmup: int, chunk: int
) -> list[np.ndarray]:
    """Run every variant over ticks ``0..n_total-1`` in round-robin chunks; step times [ns]."""
    times = [np.zeros(n_total, dtype=np.int64) for _ in variants]
    chunk = n_total if chunk <= 0 else chunk
    perf = time.perf_counter_ns
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with _c_stdout_silenced():
            for start in range(0, n_total, chunk):
                stop = min(start + chunk, n_total)
                for variant, out in zip(variants, times, strict=True):
                    prepare, step, record = variant.prepare, variant.step, variant.record
                    for k in range(start, stop):
                        prepare(k)
                        t0 = perf()
                        step(k)
                        t1 = perf()
                        record(k)
                        out[k] = t1 - t0
    finally:
        if was_enabled:
            gc.enable()
    return [t[warmup:] for t in times]


def _load(name: str, collision: bool) -> PinkRobot:
    return load_pink_supported_robot(name, build_collision_model=collision)


def home_tool_pose(robot: PinkRobot) -> pin.SE3:
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    return data.oMf[robot.model.getFrameId(_tool_frame(robot))].copy()


def run(
    steps: int = 2000,
    *,
    warmup: int = WARMUP,
    robots: Sequence[str] = ROBOTS,
    solvers: Sequence[str] | None = None,
    problems: Sequence[str] = PROBLEMS,
    peers: Sequence[str] = ("pink", "mink"),
    chunk: int = 100,
    peer_defaults: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Time every (robot, problem, solver) group; one row per group.

    Args:
        steps: Timed steps per variant.
        warmup: Untimed steps before them (same trajectory, discarded).
        robots: Bundled robots; the self-collision problem runs on ``"franka"`` only.
        solvers: Solvers (default: the installed ones among daqp, quadprog, proxqp, osqp,
            clarabel).
        problems: Subset of :data:`PROBLEMS`.
        peers: Peers to time: ``"pink"`` and/or ``"mink"`` (mink skipped if not installed).
        chunk: Steps per variant per round-robin turn (<= 0: each variant back to back).
        peer_defaults: Give the peers qpsolvers' default solver options instead of pinkctl's.
        progress: Called with a short message before each group.

    Returns:
        Rows with keys ``table`` ("step_latency"), ``robot``, ``problem``, ``solver``,
        ``steps``, ``warmup``, ``chunk``, ``peer_model``, ``peer_options``, ``fk_max_diff``,
        ``mink_note`` (why mink did not run, else None) and, per variant ``v`` in
        :data:`LABELS`: ``v_median_us``, ``v_p90_us``, ``v_p99_us``, ``v_mean_us``,
        ``v_failures`` (None when not run); for every variant but pinkctl, ``v_speedup``
        (its median / pinkctl's) and ``v_max_dq`` (largest |q_pinkctl − q_v| over the run
        [rad]; ``pinkpath_max_dq`` is the correctness column), ``pinkpath_tick_max_dq``
        (largest one-tick difference [rad] between forward's output and pink's QP solved at
        the same configuration, every :data:`CHECK_EVERY` ticks) and
        ``pinkctl_vs_daqp_max_dq`` (largest difference to pinkctl's daqp trajectory of the
        same problem; None when daqp did not run first).
    """
    if steps < 1 or warmup < 0:
        raise ValueError(f"steps must be >= 1 and warmup >= 0, got {steps}, {warmup}")
    unknown = [p for p in problems if p not in PROBLEMS]
    if unknown:
        raise ValueError(f"unknown problems {unknown}; expected some of {PROBLEMS}")
    bad_peers = [p for p in peers if p not in ("pink", "mink")]
    if bad_peers:
        raise ValueError(f"unknown peers {bad_peers}; expected 'pink' and/or 'mink'")
    solver_list = bench_solvers(None if solvers is None else list(solvers))
    n_total = warmup + steps
    rows: list[dict[str, Any]] = []
    for robot_name in robots:
        for problem in problems:
            barrier = problem == BARRIER
            if barrier and robot_name != "franka":
                continue
            robot = _load(robot_name, barrier)
            use_mink = "mink" in peers and mink is not None and not barrier
            peer = _peer_models(robot, with_mujoco=use_mink)
            target = moving_target(home_tool_pose(robot), n_total)
            exact_log: np.ndarray | None = None  # pinkctl + daqp trajectory of this problem
            for solver in solver_list:
                if progress is not None:
                    progress(f"{robot_name} / {problem} / {solver}")
                options = peer_solver_options(solver, peer_defaults)
                # One robot per controller: pink's Configuration copies `data` but shares the
                # robot's `collision_data`.
                variants: list[_Variant] = [
                    PinkctlVariant(
                        _load(robot_name, barrier),
                        target,
                        solver,
                        barrier=barrier,
                        n_total=n_total,
                        check_every=CHECK_EVERY,
                    ),
                    PinkctlVariant(
                        _load(robot_name, barrier),
                        target,
                        solver,
                        barrier=barrier,
                        n_total=n_total,
                        default_settings=True,
                    ),
                    PinkctlVariant(
                        _load(robot_name, barrier),
                        target,
                        solver,
                        barrier=barrier,
                        n_total=n_total,
                        qp_path="pink",
                    ),
                ]
                if "pink" in peers:
                    variants.append(
                        _Pink(
                            peer,
                            target,
                            solver,
                            barrier=barrier,
                            n_total=n_total,
                            solver_options=options,
                        )
                    )
                if use_mink:
                    variants.append(
                        _Mink(peer, target, solver, n_total=n_total, solver_options=options)
                    )
                times = _time_interleaved(variants, n_total, warmup, chunk)
                rows.append(
                    _row(robot_name, problem, solver, steps, warmup, chunk, peer, variants, times)
                )
                if solver == "daqp":
                    exact_log = variants[0].q_log
                rows[-1]["pinkctl_vs_daqp_max_dq"] = (
                    None
                    if exact_log is None
                    else float(np.nanmax(np.abs(variants[0].q_log - exact_log)))
                )
                rows[-1]["mink_note"] = _mink_note(peers, barrier) if not use_mink else None
                rows[-1]["peer_options"] = (
                    "qpsolvers defaults" if peer_defaults else "pinkctl's tolerances"
                )
    return rows


def _mink_note(peers: Sequence[str], barrier: bool) -> str:
    if barrier:
        return "no equivalent barrier"
    if "mink" not in peers:
        return "not requested"
    if mink is None:
        return "mink not installed"
    return "not run"


def _row(
    robot: str,
    problem: str,
    solver: str,
    steps: int,
    warmup: int,
    chunk: int,
    peer: _PeerModels,
    variants: list[_Variant],
    times: list[np.ndarray],
) -> dict[str, Any]:
    locked = (
        f"{len(peer.joint_names)} DoF, {', '.join(peer.locked)} locked at home"
        if peer.locked
        else f"{len(peer.joint_names)} DoF"
    )
    row: dict[str, Any] = {
        "table": "step_latency",
        "robot": robot,
        "problem": problem,
        "solver": solver,
        "steps": steps,
        "warmup": warmup,
        "chunk": chunk,
        "peer_model": locked,
        "fk_max_diff": peer.fk_max_diff,
    }
    for label in LABELS:
        for key in ("median_us", "p90_us", "p99_us", "mean_us", "failures"):
            row[f"{label}_{key}"] = None
        if label != "pinkctl":
            row[f"{label}_speedup"] = None
            row[f"{label}_max_dq"] = None
    base = variants[0]
    row["pinkpath_tick_max_dq"] = getattr(base, "tick_max_dq", None)
    for variant, t in zip(variants, times, strict=True):
        label = variant.label
        row.update({f"{label}_{k}": v for k, v in timing_stats_us(t).items()})
        row[f"{label}_failures"] = variant.failures
        if variant.failure_kinds:
            row[f"{label}_failure_kinds"] = dict(variant.failure_kinds)
        if variant is not base:
            row[f"{label}_speedup"] = row[f"{label}_median_us"] / row["pinkctl_median_us"]
            row[f"{label}_max_dq"] = float(np.nanmax(np.abs(variant.q_log - base.q_log)))
    return row


# ---------------------------------------------------------------------------- targets


def check_targets(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's speed targets, evaluated on ``rows`` (``met`` is None when not measured)."""

    def find(problem: str, solver: str) -> dict[str, Any] | None:
        for r in rows:
            if r["robot"] == "franka" and r["problem"] == problem and r["solver"] == solver:
                return r
        return None

    out: list[dict[str, Any]] = []

    def add(
        text: str, value: float | None, threshold: float, at_most: bool, unit: str, note: str = ""
    ) -> None:
        met = None if value is None else (value <= threshold if at_most else value >= threshold)
        out.append(
            {
                "target": text,
                "value": value,
                "threshold": threshold,
                "unit": unit,
                "met": met,
                "note": note,
            }
        )

    daqp = find(PLAIN, "daqp")
    note = ""
    if daqp is not None and daqp["pink_median_us"] is not None:
        # an absolute time depends on the machine: put it on this one through pink's time
        scaled = 25.0 * daqp["pink_median_us"] / ANCHOR_PINK_DAQP_US
        note = (
            f"(pink's solve_ik takes {daqp['pink_median_us']:.1f} µs here and "
            f"{ANCHOR_PINK_DAQP_US:.1f} µs on the machine the target was set on: at the same "
            f"ratio the target is {scaled:.1f} µs here)"
        )
    add(
        "franka frame+posture, daqp: pinkctl forward median <= 25 µs",
        None if daqp is None else daqp["pinkctl_median_us"],
        25.0,
        True,
        "µs",
        note,
    )
    for peer in ("pink", "mink"):
        add(
            f"franka frame+posture, daqp: >= 2x faster than {peer} solve_ik",
            None if daqp is None else daqp[f"{peer}_speedup"],
            2.0,
            False,
            "x",
        )
    default_ratio = None
    if daqp is not None and daqp["default_median_us"] and daqp["pink_median_us"]:
        default_ratio = daqp["pink_median_us"] / daqp["default_median_us"]
    add(
        "franka frame+posture, daqp: default tick (motion limits on) >= 2x faster than pink "
        "solve_ik",
        default_ratio,
        2.0,
        False,
        "x",
    )
    for solver in ("osqp", "clarabel"):
        r = find(PLAIN, solver)
        add(
            f"franka frame+posture, {solver}: >= 3x faster than pink solve_ik",
            None if r is None else r["pink_speedup"],
            3.0,
            False,
            "x",
        )
    r = find(BARRIER, "daqp")
    add(
        "franka + SelfCollisionBarrier, daqp: >= 1.5x faster than pink with the same barrier",
        None if r is None else r["pink_speedup"],
        1.5,
        False,
        "x",
    )
    return out


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "n/a" if value is None or not np.isfinite(value) else format(value, spec)


def _times(r: dict[str, Any], label: str) -> str:
    if r[f"{label}_median_us"] is None:
        return "n/a"
    fails = r[f"{label}_failures"]
    text = " / ".join(_fmt(r[f"{label}_{k}"]) for k in ("median_us", "p90_us", "p99_us"))
    return text + (f" ({fails} failed)" if fails else "")


def _dq(r: dict[str, Any], labels: Sequence[str]) -> str:
    return " / ".join(_fmt(r[f"{p}_max_dq"], ".0e") for p in labels)


def markdown(rows: list[dict[str, Any]], machine: str | None = None) -> str:
    """The rows, the targets and the machine as markdown."""
    out = [
        "| robot | problem | solver | pinkctl forward µs (median / p90 / p99) | "
        "pink solve_ik µs | mink solve_ik µs | × vs pink | × vs mink | "
        'max \\|Δq\\| vs `qp_path="pink"`: run / one tick [rad] | '
        "max \\|Δq\\| vs pinkctl daqp [rad] |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['robot']} | {r['problem']} | {r['solver']} | {_times(r, 'pinkctl')} | "
            f"{_times(r, 'pink')} | {_times(r, 'mink')} | {_fmt(r['pink_speedup'], '.2f')} | "
            f"{_fmt(r['mink_speedup'], '.2f')} | "
            f"{_dq(r, ['pinkpath', 'pinkpath_tick'])} | "
            f"{_fmt(r['pinkctl_vs_daqp_max_dq'], '.0e')} |"
        )
    if rows:
        r0 = rows[0]
        peers = sorted({f"{r['robot']}: {r['peer_model']}" for r in rows})
        notes = sorted({r["mink_note"] for r in rows if r.get("mink_note")})
        out.append("")
        out.append(
            f"{r0['steps']} timed steps after {r0['warmup']} warm-up steps per variant, "
            f"dt = {DT * 1e3:g} ms, variants interleaved in chunks of {r0['chunk']} steps. "
            "pinkctl: `PinkIKController.forward` (RobotState in and out; in the daqp rows "
            'with `solver="box"`: its exact box QP on box-only ticks, DAQP on the others); '
            "pink / mink: "
            "`set_target` + `solve_ik` + `integrate_inplace`. "
            f"Peer models: {'; '.join(peers)}. "
            + (f"mink n/a where: {'; '.join(notes)}. " if notes else "")
            + "× = peer median / pinkctl median. "
            "Correctness: largest joint difference between the controller's fast path and "
            'its `qp_path="pink"` path (pink\'s `build_ik` + qpsolvers) over the run, '
            f"and in one tick from the same state (every {CHECK_EVERY} ticks). With the "
            "self-collision barrier whole runs drift apart, even between two exact solvers: "
            "the distances come from hpp-fcl's warm-started GJK, accurate to its tolerance "
            "only, and pink reuses a barrier Jacobian cached at any configuration "
            "`np.allclose` to the current one (pinkctl evaluates it every tick); one tick from "
            "the same state agrees to rounding. Last column: difference to pinkctl's daqp "
            "trajectory of the same problem. "
            "Peer solver options: "
            + (
                "qpsolvers' defaults."
                if r0.get("peer_options") == "qpsolvers defaults"
                else "pinkctl's tolerances (without its active-set polish)."
            )
        )
    targets = check_targets(rows)
    out.append("")
    out.append("Targets:")
    out.append("")
    for t in targets:
        verdict = {True: "met", False: "**missed**", None: "not measured"}[t["met"]]
        value = "n/a" if t["value"] is None else f"{t['value']:.2f} {t['unit']}"
        note = f" {t['note']}" if t["note"] else ""
        out.append(f"- {t['target']}: {value}, {verdict}{note}")
    out.append("")
    out.append(f"Machine: {machine or machine_line()}.")
    return "\n".join(out)


# ---------------------------------------------------------------------------- profile


def profile_forward(
    robot_name: str = "franka",
    solver: str = "daqp",
    steps: int = 2000,
    *,
    barrier: bool = False,
    warmup: int = WARMUP,
) -> dict[str, float]:
    """Median time [µs] of each phase of ``PinkIKController.forward`` on the moving target.

    Runs the controller's public phases one by one (``read_estimate``,
    ``update_configuration``, ``update_targets``, ``solve``, ``shape``, ``write_command``),
    timing each, and in the same loop times the real ``forward`` on a twin controller. The
    keys are the phases, ``"sum of phases"`` and ``"forward (twin controller)"``.

    Raises:
        RuntimeError: If the phases and ``forward`` part ways.
    """
    robot = _load(robot_name, barrier)
    n_total = warmup + steps
    target = moving_target(home_tool_pose(robot), n_total)
    replay = PinkctlVariant(robot, target, solver, barrier=barrier, n_total=n_total)
    twin = PinkctlVariant(
        _load(robot_name, barrier), target, solver, barrier=barrier, n_total=n_total
    )
    c = replay.controller
    phases = (
        "read estimated state",
        "forward kinematics + Jacobians",
        "target update",
        "QP (assembly + solve + clip)",
        "shape the command",
        "output RobotState",
    )
    samples = np.zeros((n_total, len(phases) + 1), dtype=np.int64)
    perf = time.perf_counter_ns
    gc.collect()
    gc.disable()
    try:
        for k in range(n_total):
            replay.prepare(k)
            samples[k, :-1] = time_phases(c, replay, k)
            replay.record(k)
            twin.prepare(k)
            t0 = perf()
            twin.step(k)
            t1 = perf()
            twin.record(k)
            samples[k, -1] = t1 - t0
    finally:
        gc.enable()
    med = np.median(samples[warmup:], axis=0) * 1e-3
    out = {name: float(m) for name, m in zip(phases, med[:-1], strict=True)}
    out["sum of phases"] = float(med[:-1].sum())
    out["forward (twin controller)"] = float(med[-1])
    drift = float(np.nanmax(np.abs(replay.q_log - twin.q_log)))
    if drift > 1e-9:
        raise RuntimeError(f"replayed phases diverge from forward by {drift:.1e} rad")
    return out


# ---------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000, help="timed steps per variant")
    parser.add_argument("--warmup", type=int, default=WARMUP, help="untimed steps first")
    parser.add_argument("--robots", nargs="+", default=list(ROBOTS))
    parser.add_argument("--solvers", nargs="+", default=None)
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=list(PROBLEMS))
    parser.add_argument("--peers", nargs="+", default=["pink", "mink"], choices=["pink", "mink"])
    parser.add_argument(
        "--chunk", type=int, default=100, help="steps per variant per turn (0: back to back)"
    )
    parser.add_argument(
        "--peer-defaults",
        action="store_true",
        help="peers use qpsolvers' default solver options instead of pinkctl's",
    )
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    parser.add_argument(
        "--profile", action="store_true", help="phase breakdown of PinkIKController.forward"
    )
    args = parser.parse_args(argv)
    machine = machine_line()
    print(f"# {machine}", file=sys.stderr)
    if args.profile:
        for robot_name in args.robots:
            for solver in bench_solvers(args.solvers):
                for barrier in (False, True) if robot_name == "franka" else (False,):
                    prof = profile_forward(robot_name, solver, args.steps, barrier=barrier)
                    title = f"{robot_name} / {BARRIER if barrier else PLAIN} / {solver}"
                    print(f"\n{title}: median µs per phase")
                    for name, value in prof.items():
                        print(f"  {name:40s} {value:8.2f}")
        return 0
    rows = run(
        args.steps,
        warmup=args.warmup,
        robots=args.robots,
        solvers=args.solvers,
        problems=args.problems,
        peers=args.peers,
        chunk=args.chunk,
        peer_defaults=args.peer_defaults,
        progress=lambda msg: print(f"# {msg}", file=sys.stderr),
    )
    if args.markdown:
        print(markdown(rows, machine))
        return 0
    header = (
        f"{'robot':7s} {'problem':29s} {'solver':9s} {'variant':8s} "
        f"{'median':>8s} {'p90':>8s} {'p99':>8s} {'x':>6s} {'max|dq|':>8s} fail"
    )
    print(header)
    for r in rows:
        for label in LABELS:
            if r[f"{label}_median_us"] is None:
                note = f"n/a ({r.get('mink_note') if label == 'mink' else 'not run'})"
                print(f"{r['robot']:7s} {r['problem']:29s} {r['solver']:9s} {label:8s} {note}")
                continue
            speedup = r.get(f"{label}_speedup")
            dq = r.get(f"{label}_max_dq")
            print(
                f"{r['robot']:7s} {r['problem']:29s} {r['solver']:9s} {label:8s} "
                f"{r[f'{label}_median_us']:8.1f} {r[f'{label}_p90_us']:8.1f} "
                f"{r[f'{label}_p99_us']:8.1f} {_fmt(speedup, '.2f'):>6s} "
                f"{_fmt(dq, '.1e'):>8s} {r[f'{label}_failures']}"
            )
        print(
            f"{'':47s} one-tick |dq| vs pink path {_fmt(r['pinkpath_tick_max_dq'], '.1e')}, "
            f"run |dq| vs pinkctl daqp {_fmt(r['pinkctl_vs_daqp_max_dq'], '.1e')}"
        )
    print()
    for t in check_targets(rows):
        verdict = {True: "MET", False: "MISSED", None: "not measured"}[t["met"]]
        shown = "n/a" if t["value"] is None else f"{t['value']:.2f} {t['unit']}"
        note = f" {t['note']}" if t["note"] else ""
        print(f"target: {t['target']}: {shown} -> {verdict}{note}")
    print(f"machine: {machine}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
