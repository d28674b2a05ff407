"""The control tick against placo (Rhoban's QP kinematics solver, C++ on Pinocchio), one run.

placo pins Pinocchio 3.8 while pinkctl runs on Pinocchio 4, so placo ticks in its own
environment (``.venv-placo``, made by ``make .venv-placo``) in a worker process
(:mod:`bench.placo_worker`); the bench alternates chunks of ``--chunk`` ticks between its
own variants and the worker, so machine load hits both alike.

Problem (the step-latency bench's, :mod:`bench.step_latency`): the Franka's tool frame
follows the moving target (10 cm circle in the y-z plane at 0.25 Hz, ±0.3 rad roll at 0.2 Hz),
control period 5 ms, a frame task (position and orientation cost 1, gain 1), a posture task
towards home (cost 1e-3), the URDF's position and velocity limits, the fingers held at home.
Each solver runs its own kinematic loop (a tick's command is the next tick's configuration).

- **pinkctl default, avoiding** (``avoiding``): ``PinkIKController.forward`` as a user builds
  it: self-collision and floor avoidance on (the default for a fixed-base robot with
  collision geometry; the peers avoid nothing: this row shows what it costs), motion limits
  on (acceleration and jerk shaping; the native kernel);
- **pinkctl, no avoidance** (``default``): the same with ``self_collision=False``
  (:data:`NO_COLLISIONS`, as every row below: like with like, the peers avoid nothing); its
  states, as the row above's, are built with ``JointState.from_name`` /
  ``SpatialState.from_name`` outside the timer;
- **pinkctl, motion limits off**: the same problem as the peers (pink's configuration limit,
  gain 0.5, and velocity limit);
- **pinkctl default, array tick** (``step``): ``controller.step(q, target_pose)``, the whole
  tick with its state I/O (the measured positions in, the command's positions out: what
  placo's row times), as the ``_states`` row builds ``JointSpace`` / ``SiteSpace`` states
  and calls ``forward``; ``_forward`` is that row's ``forward`` alone (its states built
  outside the timer): ``_states`` less the state building. These rows, and the two above,
  run the compiled tick (:mod:`pinkctl.controllers.compiled_tick`) where it is built; the
  ``_python`` rows are the same controllers on the Python path (``controller.compiled =
  False``), the before/after;
- **placo**: ``KinematicsSolver.solve(True)`` + ``update_kinematics`` (joint limits as hard
  bounds, velocity limits, its default regularisation 1e-8). See :mod:`bench.placo_worker`.

Reported: median, p90, p99 tick [µs], the ratio to placo, the largest tool position error
over the run [mm] and the largest joint difference to pinkctl with motion limits off [rad].

Usage::

    python -m bench.peers_tick                 # 2000 ticks + 200 warm-up
    python -m bench.peers_tick --steps 500
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .common import machine_info, machine_line, timing_stats_us
from .peer_process import ChunkWorker
from .step_latency import (
    DT,
    ORIENTATION_COST,
    POSITION_COST,
    POSTURE_COST,
    WARMUP,
    PinkctlVariant,
    _peer_models,
    _Pink,
    home_tool_pose,
    moving_target,
    peer_solver_options,
)

__all__ = ["PLACO_PYTHON", "markdown", "run"]

ROOT = Path(__file__).resolve().parents[1]
#: The interpreter of placo's environment (``make .venv-placo`` creates it; the environment
#: variable ``PINKCTL_PLACO_PYTHON`` names another, e.g. a worktree's main checkout's).
PLACO_PYTHON = Path(os.environ.get("PINKCTL_PLACO_PYTHON", ROOT / ".venv-placo" / "bin" / "python"))
#: The peers' problem has no collision avoidance: every row but ``avoiding`` turns pinkctl's
#: default self-collision and floor avoidance off, to compare like with like.
NO_COLLISIONS = {"self_collision": False}
LABELS = (
    "avoiding",
    "default",
    "pinkctl",
    "default_step",
    "default_states",
    "default_forward",
    "default_python",
    "default_step_python",
    "pink",
    "placo",
)


class ArrayTickVariant(PinkctlVariant):
    """The default controller's tick with array or ``JointSpace`` / ``SiteSpace`` state I/O:
    ``tick`` ``"step"``: ``step(q, target_pose)``; ``"states"``: the states built and
    ``forward`` called, both timed; ``"spaces"``: the same states built before the timer,
    ``forward`` alone timed."""

    def __init__(self, robot: Any, target: Any, *, n_total: int, tick: str, compiled: bool):
        super().__init__(
            robot,
            target,
            "box",
            barrier=False,
            n_total=n_total,
            default_settings=True,
            controller_options=NO_COLLISIONS,
        )
        from pinkctl.core.state import JointSpace, RobotState, SiteSpace

        self.controller.compiled = compiled
        self._tick = tick
        self._joints = JointSpace(self.names)
        self._sites = SiteSpace([self.controller.tool_frame])
        self._state = RobotState
        self._poses = [target.se3(k) for k in range(n_total)]
        self._positions = target.positions[:, None, :]
        self._quaternions = target.quaternions[:, None, :]
        self._command: Any = None
        self._inputs: Any = None

    def _build(self, k: int) -> tuple[Any, Any]:
        state = self._state
        estimate = state(joints=self._joints.state(self.q, self.v))
        return estimate, state(sites=self._sites.state(self._positions[k], self._quaternions[k]))

    def prepare(self, k: int) -> None:
        if self._tick == "spaces":
            self._inputs = self._build(k)

    def step(self, k: int) -> None:
        if self._tick == "step":
            self._command = self.controller.step(self.q, self._poses[k])
            return
        estimate, setpoint = self._inputs if self._tick == "spaces" else self._build(k)
        command = self.controller.forward(estimate, setpoint, self.times[k])
        if command is None or command.joints is None:
            self._command = None
            return
        # the command's positions over the joint space, the joints it leaves as measured
        self._command = self._joints.positions(command.joints, fill=self.q)

    def record(self, k: int) -> None:
        if self._command is None:
            self._fail(str(self.controller.last_error))
        else:
            self.q = np.array(self._command)
        self.q_log[k] = self.q[self.cols]


#: How each pinkctl row is set up: (tick, default settings, compiled tick where built); tick
#: ``forward`` (``from_name`` states built outside the timer), ``step`` (arrays), ``states``
#: (``JointSpace`` / ``SiteSpace`` states built inside the timer, then ``forward``) or
#: ``spaces`` (the same states built outside it: ``forward`` alone).
ROWS = {
    "avoiding": ("forward", True, True),
    "default": ("forward", True, True),
    "pinkctl": ("forward", False, True),
    "default_step": ("step", True, True),
    "default_states": ("states", True, True),
    "default_forward": ("spaces", True, True),
    "default_python": ("forward", True, False),
    "default_step_python": ("step", True, False),
}


def _variant(label: str, target: Any, n_total: int, solver: str) -> Any:
    """The variant of row ``label`` (:data:`ROWS`; ``pink``: raw pink on the peers' problem),
    on a Franka of its own."""
    from pinkctl.core.robot import load_pink_supported_robot

    robot = load_pink_supported_robot("franka")
    if label == "pink":
        return _Pink(
            _peer_models(robot, False),
            target,
            solver,
            barrier=False,
            n_total=n_total,
            solver_options=peer_solver_options(solver),
        )
    tick, default, compiled = ROWS[label]
    if tick != "forward":
        variant = ArrayTickVariant(robot, target, n_total=n_total, tick=tick, compiled=compiled)
    else:
        variant = PinkctlVariant(
            robot,
            target,
            solver,
            barrier=False,
            n_total=n_total,
            default_settings=default,
            controller_options={} if label == "avoiding" else NO_COLLISIONS,  # {}: the default
        )
        if not compiled:
            variant.controller.compiled = False
    return variant


def _placo_worker(robot: Any, frame: str, target: Any, tmp: Path) -> ChunkWorker:
    model = robot.model
    joints = list(robot.controlled_joint_names)
    locked = [model.names[j] for j in range(1, model.njoints) if model.names[j] not in joints]

    def home(names: list[str]) -> np.ndarray:
        return np.array([robot.q0[model.joints[model.getJointId(n)].idx_q] for n in names])

    problem = tmp / "problem.npz"
    np.savez(
        problem,
        urdf=str(robot.urdf_path),
        frame=frame,
        joints=np.array(joints),
        home=home(joints),
        locked=np.array(locked),
        locked_values=home(locked),
        dt=DT,
        position_cost=POSITION_COST,
        orientation_cost=ORIENTATION_COST,
        posture_cost=POSTURE_COST,
        positions=target.positions,
        rotations=target.rotations,
    )
    return ChunkWorker([str(PLACO_PYTHON), str(ROOT / "bench" / "placo_worker.py"), str(problem)])


def run(
    steps: int = 2000, *, warmup: int = WARMUP, chunk: int = 100, solver: str = "daqp"
) -> dict[str, Any]:
    """One row: the three variants on the Franka (module docstring).

    Returns:
        ``{label}_median_us`` / ``_p90_us`` / ``_p99_us`` / ``_mean_us`` and
        ``{label}_max_error_mm`` per label in :data:`LABELS`, ``{label}_vs_placo`` (median
        ratio), ``placo_max_dq`` and ``default_max_dq`` (largest joint difference to pinkctl
        with motion limits off [rad]), ``placo_version``, ``placo_note`` (why placo did not
        run, else None).
    """
    from pinkctl.core.robot import load_pink_supported_robot

    n_total = warmup + steps
    robot = load_pink_supported_robot("franka")
    frame = robot.tool_frame
    target = moving_target(home_tool_pose(robot), n_total)
    variants = {label: _variant(label, target, n_total, solver) for label in LABELS[:-1]}
    times = {label: np.zeros(n_total, dtype=np.int64) for label in LABELS}
    placo_q = np.full((n_total, len(robot.controlled_joint_names)), np.nan)
    placo_errors = np.full(n_total, np.nan)
    row: dict[str, Any] = {"steps": steps, "warmup": warmup, "chunk": chunk, "placo_note": None}
    row["compiled"] = {label: variants[label].controller.compiled for label in ROWS}
    with tempfile.TemporaryDirectory() as tmp:
        worker = None
        if PLACO_PYTHON.exists():
            try:
                worker = _placo_worker(robot, frame, target, Path(tmp))
                row["placo_version"] = worker.ready["placo"]
            except RuntimeError as exc:
                row["placo_note"] = f"placo worker failed: {exc}"[:300]
        else:
            row["placo_note"] = f"{PLACO_PYTHON} missing (make .venv-placo)"
        perf = time.perf_counter_ns
        try:
            for start in range(0, n_total, chunk):
                stop = min(start + chunk, n_total)
                gc.collect()
                gc.disable()
                try:
                    for label, v in variants.items():
                        for k in range(start, stop):
                            v.prepare(k)
                            t0 = perf()
                            v.step(k)
                            times[label][k] = perf() - t0
                            v.record(k)
                finally:
                    gc.enable()
                if worker is not None:
                    reply = worker.request({"start": start, "stop": stop})
                    times["placo"][start:stop] = reply["times"]
                    placo_q[start:stop] = reply["q"]
                    placo_errors[start:stop] = reply["position_errors"]
        finally:
            if worker is not None:
                worker.close()
    row["load"] = os.getloadavg()[0]
    reference = variants["pinkctl"].q_log
    for label in LABELS:
        if label == "placo" and worker is None:
            continue
        stats = timing_stats_us(times[label][warmup:])
        row.update({f"{label}_{k}": v for k, v in stats.items()})
    for label, v in variants.items():
        row[f"{label}_max_error_mm"] = 1e3 * _max_error(robot, frame, v.q_log, target)
    for label, v in variants.items():
        if label != "pinkctl":
            row[f"{label}_max_dq"] = float(np.nanmax(np.abs(v.q_log - reference)))
    # the default controller's rows (compiled or not, states or arrays) run the same commands
    default = variants["default"].q_log
    row["default_rows_max_dq"] = max(
        float(np.nanmax(np.abs(v.q_log - default)))
        for label, v in variants.items()
        if label.startswith("default")
    )
    if worker is not None:
        row["placo_max_error_mm"] = 1e3 * float(np.nanmax(placo_errors))
        row["placo_max_dq"] = float(np.nanmax(np.abs(placo_q - reference)))
        for label in LABELS[:-1]:
            row[f"{label}_vs_placo"] = row[f"{label}_median_us"] / row["placo_median_us"]
    return row


def _max_error(robot: Any, frame: str, q_log: np.ndarray, target: Any) -> float:
    """Largest distance [m] between the tool and its target over a joint log."""
    import pinocchio as pin

    model = robot.model
    data = model.createData()
    fid = model.getFrameId(frame)
    cols = [model.joints[model.getJointId(n)].idx_q for n in robot.controlled_joint_names]
    worst = 0.0
    q = robot.q0.copy()
    for k in range(len(q_log)):
        q[cols] = q_log[k]
        pin.framesForwardKinematics(model, data, q)
        worst = max(worst, float(np.linalg.norm(data.oMf[fid].translation - target.positions[k])))
    return worst


def markdown(row: dict[str, Any], machine: str | None = None) -> str:
    """The tick table: one line per variant, ratios to placo."""
    names = {
        "avoiding": "pinkctl `forward`, default (self-collision and floor avoidance on)",
        "default": "pinkctl `forward`, `self_collision=False` (motion limits on), "
        "`from_name` states",
        "pinkctl": "pinkctl `forward`, `self_collision=False`, motion limits off (peers' problem)",
        "default_step": "pinkctl `step(q, pose)`, `self_collision=False`: tick with array I/O",
        "default_states": "pinkctl `self_collision=False`: `JointSpace`/`SiteSpace` + `forward`",
        "default_forward": "pinkctl `forward` alone, `self_collision=False`, those states",
        "default_python": "pinkctl `forward`, `self_collision=False`, Python path",
        "default_step_python": "pinkctl `step(q, pose)`, `self_collision=False`, Python path",
        "pink": f"pink {machine_info()['pink']} `solve_ik` + `integrate_inplace` (peers' problem)",
        "placo": f"placo {row.get('placo_version', '')} `solve` + `update_kinematics`",
    }
    out = [
        "| franka, frame + posture + limits, dt 5 ms | median µs | p90 µs | p99 µs | "
        "median / placo | max tool error mm | max \\|Δq\\| vs motion limits off, rad |",
        "|---|---|---|---|---|---|---|",
    ]
    for label in LABELS:
        if f"{label}_median_us" not in row:
            out.append(f"| {names[label]} | n/a: {row.get('placo_note')} |  |  |  |  |  |")
            continue
        ratio = "1.00" if label == "placo" else f"{row.get(f'{label}_vs_placo', float('nan')):.2f}"
        dq = "—" if label == "pinkctl" else f"{row.get(f'{label}_max_dq', float('nan')):.1e}"
        out.append(
            f"| {names[label]} | {row[f'{label}_median_us']:.1f} | {row[f'{label}_p90_us']:.1f} "
            f"| {row[f'{label}_p99_us']:.1f} | {ratio} | {row[f'{label}_max_error_mm']:.3f} "
            f"| {dq} |"
        )
    out.append("")
    out.append(
        f"{row['steps']} ticks after {row['warmup']} warm-up, chunks of {row['chunk']} "
        f"alternating between the processes. Machine: {machine or machine_line()}."
    )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument("--chunk", type=int, default=100)
    args = parser.parse_args(argv)
    print(markdown(run(args.steps, warmup=args.warmup, chunk=args.chunk)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
