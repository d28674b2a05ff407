"""The problems and solvers of :mod:`bench.peers_ik` (its docstring defines them).

- :class:`Chain`: one robot's IK problem: the chain, its targets, the nominal seed, the
  success check by pinkctl's forward kinematics;
- :class:`PinkctlSolver`, :class:`TracIKSolver`, :class:`RTBSolver`: one query at a time,
  global (from a given seed) or warm-started (from the solver's previous answer);
- run as ``python -m bench.peers_ik_solvers ROBOT N SEED``, this module is the worker of
  "today's" pinkctl (:mod:`bench.peer_process`): it answers ``{"start", "stop"}`` requests
  with the warm-started rows of those queries. It then imports another revision's pinkctl,
  so it uses only the IK API that revision has too.
"""

from __future__ import annotations

import gc
import importlib.metadata
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

import pinkctl
from pinkctl.ik import IKSolver

__all__ = [
    "BUDGET_S",
    "ROBOTS",
    "Chain",
    "Target",
    "make_solvers",
    "peer_versions",
    "timed_turn",
    "warm_targets",
]

#: The issue's robots first, then the rest of the catalog's arms.
ROBOTS = ("franka", "ur5", "ur10", "kinova", "xarm7", "ur3", "panda", "z1", "so101", "g1")
BUDGET_S = 0.005  # [s] per global query (TRAC-IK's protocol)
TOLERANCE = 1e-5  # per axis [m] and [rad]
LIMIT_SLACK = 1e-6  # [rad] or [m]: TRAC-IK keeps joint limits in single precision
RTB_TOL = 5e-11  # ik_LM stops at 0.5 |e|^2 < tol: |e| < 1e-5
WARM_RADIUS = 0.10  # [m]
WARM_STEP = 0.01  # [m]


@dataclass(frozen=True)
class Target:
    """A tool pose in the forms the solvers take."""

    se3: pin.SE3
    matrix: np.ndarray  # (4, 4) homogeneous transform
    xyzq: tuple[float, ...]  # x, y, z, qx, qy, qz, qw


class Chain:
    """One robot's problem: moved joints, tool frame, root link, seeds and the FK check."""

    def __init__(self, name: str) -> None:
        robot = pinkctl.load_pink_supported_robot(name)
        model = robot.model
        frame = robot.tool_frame or model.frames[model.nframes - 1].name
        fid = model.getFrameId(frame)
        support = [model.names[j] for j in model.supports[model.frames[fid].parentJoint]][1:]
        if support != list(robot.controlled_joint_names):
            raise ValueError(f"{name}: the tool's chain {support} is not the controlled joints")
        self.name = name
        self.robot = robot
        self.frame = frame
        self.root = next(f.name for f in model.frames if f.type == pin.FrameType.BODY)
        self.urdf = str(robot.urdf_path)
        self.solver = IKSolver(
            robot,
            frame=frame,
            joint_names=support,
            position_tolerance=TOLERANCE,
            orientation_tolerance=TOLERANCE,
        )
        self.subset = self.solver.subset
        self.n = self.subset.n
        self.nominal_q = self.subset.middle(robot.q0)
        self.nominal = self.subset.values(self.nominal_q)
        self._data = model.createData()
        self._fid = fid

    def full(self, values: np.ndarray) -> np.ndarray:
        """The full Pinocchio configuration with the chain at ``values``."""
        q = self.robot.q0.copy()
        self.subset.write(q, np.asarray(values, dtype=np.float64))
        return q

    def target(self, q: np.ndarray) -> Target:
        """The tool pose at the full configuration ``q``."""
        pin.framesForwardKinematics(self.robot.model, self._data, q)
        return _as_target(self._data.oMf[self._fid].copy())

    def global_targets(self, n: int, seed: int) -> list[Target]:
        """Tool poses of ``n`` configurations uniform within the limits."""
        rng = np.random.default_rng(seed)
        return [self.target(self.subset.sample(rng, self.robot.q0)) for _ in range(n)]

    def within(self, values: np.ndarray | None, target: Target) -> bool:
        """Success by pinkctl's forward kinematics: every axis within 1e-5, joints in limits."""
        if values is None:
            return False
        values = np.asarray(values, dtype=np.float64)
        bounded = self.subset.bounded
        if np.any(values[bounded] < self.subset.lower[bounded] - LIMIT_SLACK) or np.any(
            values[bounded] > self.subset.upper[bounded] + LIMIT_SLACK
        ):
            return False
        pin.framesForwardKinematics(self.robot.model, self._data, self.full(values))
        pose = self._data.oMf[self._fid]
        if np.abs(pose.translation - target.se3.translation).max() > TOLERANCE:
            return False
        return bool(np.abs(pin.log3(pose.rotation @ target.se3.rotation.T)).max() <= TOLERANCE)


def warm_targets(chain: Chain, n: int, seed: int) -> tuple[np.ndarray, list[Target]]:
    """Start values near the robot's home configuration (a comfortable pose, by design) and
    ``n`` targets 1 cm apart on a 10 cm circle in the world y-z plane through the start pose
    (orientation fixed)."""
    rng = np.random.default_rng(seed)
    start = chain.subset.values(chain.robot.q0) + rng.uniform(-0.1, 0.1, chain.n)
    bounded = chain.subset.bounded
    start[bounded] = np.clip(
        start[bounded], chain.subset.lower[bounded], chain.subset.upper[bounded]
    )
    home = chain.target(chain.full(start)).se3
    per_turn = int(round(2.0 * np.pi * WARM_RADIUS / WARM_STEP))
    targets = []
    for k in range(1, n + 1):
        angle = 2.0 * np.pi * k / per_turn
        offset = WARM_RADIUS * np.array([0.0, np.cos(angle) - 1.0, np.sin(angle)])
        pose = pin.SE3(home.rotation, home.translation + offset)
        targets.append(_as_target(pose))
    return start, targets


def _as_target(pose: pin.SE3) -> Target:
    x, y, z, w = pin.Quaternion(pose.rotation).coeffs()
    return Target(pose, pose.homogeneous, (*pose.translation, x, y, z, w))


class PinkctlSolver:
    """``IKSolver.find`` (global) and ``IKSolver.solve`` (warm-started)."""

    label = "pinkctl"
    remark: str | None = None

    def __init__(self, chain: Chain) -> None:
        self.chain = chain
        self.solver = chain.solver
        self.previous = chain.nominal_q.copy()

    def start_warm(self, values: np.ndarray) -> None:
        self.previous = self.chain.full(values)

    def global_query(self, target: Target, k: int) -> tuple[np.ndarray | None, bool]:
        # the default search options: a count budget, restarts drawn from seed 0
        r = self.solver.find(target.se3, seed=self.chain.nominal_q)
        return r.q, r.success

    def warm_query(self, target: Target, k: int) -> tuple[np.ndarray | None, bool]:
        r = self.solver.solve(target.se3, seed=self.previous, max_iterations=100)
        self.previous = r.q_full
        return r.q, r.success


class TracIKSolver:
    """TRAC-IK (``pytracik``), Speed mode, 5 ms, 1e-5."""

    label = "TRAC-IK"
    remark: str | None = None

    def __init__(self, chain: Chain) -> None:
        import pytracik

        with open(chain.urdf, encoding="utf-8") as f:
            urdf = f.read()
        self._ik = pytracik.ik
        self._solver = pytracik.TRAC_IK(
            chain.root, chain.frame, urdf, BUDGET_S, TOLERANCE, pytracik.SolveType.Speed
        )
        if pytracik.get_num_joints(self._solver) != chain.n:
            raise ValueError("TRAC-IK's chain has other joints")
        # pytracik reads some URDFs' joint limits wrong (all zero for example-robot-data's
        # panda.urdf): it then gets the limits pinkctl reads, those of the problem.
        lower = np.array(pytracik.get_joint_lower_bounds(self._solver))
        upper = np.array(pytracik.get_joint_upper_bounds(self._solver))
        bounded = chain.subset.bounded
        if (
            np.abs(lower[bounded] - chain.subset.lower[bounded]).max(initial=0.0) > LIMIT_SLACK
            or np.abs(upper[bounded] - chain.subset.upper[bounded]).max(initial=0.0) > LIMIT_SLACK
        ):
            lower[bounded] = chain.subset.lower[bounded]
            upper[bounded] = chain.subset.upper[bounded]
            pytracik.set_joint_limits(self._solver, lower.tolist(), upper.tolist())
            self.remark = "pytracik misread the URDF's joint limits: set to pinkctl's"
        _check_fk(chain, lambda v: pytracik.fk(self._solver, v))
        self.nominal = chain.nominal.copy()
        self.previous = chain.nominal.copy()

    def start_warm(self, values: np.ndarray) -> None:
        self.previous = np.array(values, dtype=np.float64)

    def _query(self, target: Target, seed: np.ndarray) -> tuple[np.ndarray | None, bool]:
        r = self._ik(self._solver, seed, *target.xyzq)
        ok = bool(r[0] >= 0)
        return (r[1:] if ok else None), ok

    def global_query(self, target: Target, k: int) -> tuple[np.ndarray | None, bool]:
        return self._query(target, self.nominal)

    def warm_query(self, target: Target, k: int) -> tuple[np.ndarray | None, bool]:
        values, ok = self._query(target, self.previous)
        if values is not None:
            self.previous = values
        return values, ok


class RTBSolver:
    """The Robotics Toolbox's ``ETS.ik_LM`` (defaults: 30 iterations, 100 searches)."""

    label = "RTB ik_LM"
    remark: str | None = None

    def __init__(self, chain: Chain) -> None:
        import roboticstoolbox as rtb

        # The toolbox resolves every mesh of the file through xacro, which fails on package://
        # paths outside a ROS workspace: give it the kinematics only (FK is checked below).
        with open(chain.urdf, encoding="utf-8") as f:
            text = re.sub(r"<(visual|collision)\b.*?</\1>", "", f.read(), flags=re.DOTALL)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "robot.urdf"
            path.write_text(text, encoding="utf-8")
            robot = rtb.Robot.URDF(str(path))
        self._ets = robot.ets(end=chain.frame)
        if self._ets.n != chain.n:
            raise ValueError("the toolbox's chain has other joints")
        _check_fk(chain, lambda v: self._ets.fkine(v).A)
        self.nominal = chain.nominal.copy()
        self.previous = chain.nominal.copy()

    def start_warm(self, values: np.ndarray) -> None:
        self.previous = np.array(values, dtype=np.float64)

    def global_query(self, target: Target, k: int) -> tuple[np.ndarray | None, bool]:
        sol = self._ets.ik_LM(target.matrix, q0=self.nominal, tol=RTB_TOL)
        return sol.q, bool(sol.success)

    def warm_query(self, target: Target, k: int) -> tuple[np.ndarray | None, bool]:
        sol = self._ets.ik_LM(target.matrix, q0=self.previous, tol=RTB_TOL)
        if sol.success:
            self.previous = sol.q
        return sol.q, bool(sol.success)


def _check_fk(chain: Chain, fk: Any) -> None:
    """A peer's forward kinematics equals pinkctl's at random configurations (1e-9)."""
    rng = np.random.default_rng(1)
    for _ in range(10):
        q = chain.subset.sample(rng, chain.robot.q0)
        mine = chain.target(q).matrix
        theirs = np.asarray(fk(chain.subset.values(q)))
        if np.abs(theirs[:3, :4] - mine[:3, :4]).max() > 1e-9:
            raise ValueError("its forward kinematics differs from pinkctl's")


def make_solvers(chain: Chain) -> tuple[dict[str, Any], dict[str, str]]:
    """The solvers that run on ``chain`` and, for the others, why not."""
    solvers: dict[str, Any] = {"pinkctl": PinkctlSolver(chain)}
    notes: dict[str, str] = {}
    for cls in (TracIKSolver, RTBSolver):
        try:
            solvers[cls.label] = cls(chain)
        except Exception as exc:  # a missing or failing peer leaves a note, not a crash
            notes[cls.label] = f"not run: {type(exc).__name__}: {exc}"[:160]
    return solvers, notes


def peer_versions() -> str:
    out = []
    for dist in ("pytracik", "roboticstoolbox-python"):
        try:
            out.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{dist} not installed")
    return ", ".join(out)


def timed_turn(
    solve: Any, targets: list[Target], start: int, stop: int, chain: Chain
) -> tuple[list[int], list[bool], list[bool], list[int]]:
    """Queries ``start..stop`` of ``targets``: wall times [ns], FK verdicts, own verdicts, and
    this process's CPU times [ns] (all its threads: TRAC-IK runs two)."""
    perf, cpu = time.perf_counter_ns, time.process_time_ns
    times, fk_ok, own_ok, cpu_times = [], [], [], []
    for k in range(start, min(stop, len(targets))):
        c0 = cpu()
        t0 = perf()
        values, own = solve(targets[k], k)
        times.append(perf() - t0)
        cpu_times.append(cpu() - c0)
        own_ok.append(bool(own))
        fk_ok.append(chain.within(values, targets[k]))
    return times, fk_ok, own_ok, cpu_times


def _worker(robot: str, n: int, seed: int) -> None:
    """Today's pinkctl, warm-started rows, chunk by chunk (module docstring)."""
    from bench.peer_process import serve

    chain = Chain(robot)
    solver = PinkctlSolver(chain)
    start, targets = warm_targets(chain, n, seed)
    solver.start_warm(start)

    def handle(request: dict[str, Any]) -> dict[str, Any]:
        gc.collect()
        gc.disable()
        try:
            times, fk_ok, own_ok, cpu_times = timed_turn(
                solver.warm_query, targets, request["start"], request["stop"], chain
            )
        finally:
            gc.enable()
        return {"times": times, "fk_ok": fk_ok, "own_ok": own_ok, "cpu": cpu_times}

    serve({"pinkctl": pinkctl.__file__}, handle)


if __name__ == "__main__":
    _worker(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
