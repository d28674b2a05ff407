"""Where a control tick's time goes, on the Python path and on the compiled tick, one run.

The step-latency problem on the Franka (:mod:`bench.step_latency`: frame + posture task, the
URDF's limits, the moving target, dt 5 ms), default controller (motion limits on). Both
controllers run their own kinematic loop, interleaved tick by tick, garbage collector on.

- **Python path** (``controller.compiled = False``): the six public phases of ``forward``
  one by one (:func:`bench.step_latency.profile_forward`'s split);
- **compiled tick**: what ``forward`` does where the compiled tick covers it
  (:mod:`pinkctl.controllers.compiled_tick`): the checks and the estimate's joint row, the
  site target (``aim_pose``, C++), the C++ tick (forward kinematics, Jacobian, QP, box QP,
  shaper) with its Python bookkeeping, the output ``RobotState``.

Also timed, each in the same loop: the whole ``forward`` (states built outside the timer),
``JointSpace.state`` + ``SiteSpace.state`` (what a caller holding arrays pays to build the
states) and ``step(q, target_pose)`` (the whole tick on arrays). Medians [µs]; the load is
printed beside them.

Usage::

    python -m bench.tick_phases               # 2000 ticks + 200 warm-up
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from .common import machine_line, time_phases
from .step_latency import DT, WARMUP, PinkctlVariant, home_tool_pose, moving_target

__all__ = ["markdown", "run"]

PYTHON_PHASES = (
    "1 read estimated state",
    "2 forward kinematics + Jacobians",
    "3 target update",
    "4 QP (assembly + solve)",
    "5 shape the command",
    "6 output RobotState",
)
COMPILED_PHASES = (
    "1 checks + the estimate's joint row",
    "3 target update (C++ aim_pose)",
    "2+4+5 C++ tick + bookkeeping",
    "6 output RobotState",
)


def run(steps: int = 2000, *, warmup: int = WARMUP) -> dict[str, Any]:
    """The two breakdowns and the whole-tick rows (module docstring): ``{"python": {...},
    "compiled": {...}, "compiled_available": bool, "reason": str}``."""
    from pinkctl.core.robot import load_pink_supported_robot
    from pinkctl.core.state import JointSpace, JointState, RobotState, SiteSpace

    n_total = warmup + steps
    target = moving_target(home_tool_pose(load_pink_supported_robot("franka")), n_total)

    def variant() -> PinkctlVariant:
        robot = load_pink_supported_robot("franka")
        return PinkctlVariant(
            robot,
            target,
            "box",
            barrier=False,
            n_total=n_total,
            default_settings=True,
            controller_options={"self_collision": False},  # as bench.peers_tick
        )

    python, compiled, stepper, builder = variant(), variant(), variant(), variant()
    python.controller.compiled = False
    c, p = compiled.controller, python.controller
    tick = c._bound_tick()
    joints, sites = JointSpace(compiled.names), SiteSpace([c.tool_frame])
    poses = [target.se3(k) for k in range(n_total)]
    q_step = stepper.q.copy()
    perf = time.perf_counter_ns
    py = np.zeros((n_total, len(PYTHON_PHASES) + 1), dtype=np.int64)
    cc = np.zeros((n_total, len(COMPILED_PHASES) + 3), dtype=np.int64)
    for k in range(n_total):
        python.prepare(k)
        py[k, :-1] = time_phases(p, python, k)
        python.record(k)
        if tick is not None:
            compiled.prepare(k)
            est, sp = compiled.estimated, compiled.setpoints[k]
            t0 = perf()
            assert c._bound_tick() is tick
            row = tick.measured(est)
            assert row is not None
            t1 = perf()
            assert tick.aims(sp)
            t2 = perf()
            command = c._compiled_run(tick, row, True, 2)
            t3 = perf()
            compiled.output = RobotState(
                joints=JointState.from_trusted(tick.space, command[3], tick.valid)
            )
            t4 = perf()
            compiled.record(k)
            cc[k, :-3] = (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
        builder.prepare(k)
        t0 = perf()
        builder.step(k)
        t1 = perf()
        builder.record(k)
        py[k, -1] = t1 - t0
        t0 = perf()
        estimate = RobotState(joints=joints.state(builder.q, builder.v))
        setpoint = RobotState(
            sites=sites.state(target.positions[k, None], target.quaternions[k, None])
        )
        t1 = perf()
        q_next = stepper.controller.step(q_step, poses[k])
        t2 = perf()
        assert estimate is not None and setpoint is not None and q_next is not None
        q_step = q_next
        cc[k, -3:-1] = (t1 - t0, t2 - t1)
    med_py = np.median(py[warmup:], axis=0) * 1e-3
    med_cc = np.median(cc[warmup:], axis=0) * 1e-3
    out: dict[str, Any] = {
        "python": {name: float(v) for name, v in zip(PYTHON_PHASES, med_py[:-1], strict=True)},
        "compiled": {},
        "compiled_available": tick is not None,
        "reason": c.compiled_reason,
        "forward": float(med_py[-1]),
        "states": float(med_cc[-3]),
        "step": float(med_cc[-2]),
        "steps": steps,
    }
    out["python"]["sum"] = float(med_py[:-1].sum())
    if tick is not None:
        out["compiled"] = {
            name: float(v) for name, v in zip(COMPILED_PHASES, med_cc[:-3], strict=True)
        }
        out["compiled"]["sum"] = float(med_cc[:-3].sum())
        out["max_dq"] = float(np.nanmax(np.abs(compiled.q_log - python.q_log)))
    return out


def markdown(row: dict[str, Any], machine: str | None = None) -> str:
    """The breakdowns side by side, then the whole-tick rows."""
    out = ["| Python path (`compiled = False`) | median µs |", "|---|---|"]
    out += [f"| {name} | {value:.1f} |" for name, value in row["python"].items()]
    out += ["", "| compiled tick | median µs |", "|---|---|"]
    if row["compiled_available"]:
        out += [f"| {name} | {value:.1f} |" for name, value in row["compiled"].items()]
        out.append(f"| max \\|Δq\\| compiled vs Python path [rad] | {row['max_dq']:.1e} |")
    else:
        out.append(f"| n/a: {row['reason']} |  |")
    out += [
        "",
        "| whole tick | median µs |",
        "|---|---|",
        f"| `forward` (compiled where built; states built outside) | {row['forward']:.1f} |",
        f"| `JointSpace.state` + `SiteSpace.state` (building the states) | {row['states']:.1f} |",
        f"| `step(q, target_pose)` (arrays in and out) | {row['step']:.1f} |",
        "",
        f"Franka, dt {DT * 1e3:g} ms, {row['steps']} ticks. Machine: {machine or machine_line()}.",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=WARMUP)
    args = parser.parse_args(argv)
    print(markdown(run(args.steps, warmup=args.warmup)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
