"""The ``pinkctl`` command: list the bundled robots, run the closed-loop demo."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

from .robot import load_pink_supported_robot, supported_robots

__all__ = ["main"]


def _cmd_robots(_: argparse.Namespace) -> int:
    rows = [("robot", "DoF", "tool frame", "gripper joints")]
    for name in supported_robots():
        robot = load_pink_supported_robot(name)
        rows.append(
            (
                name,
                str(len(robot.controlled_joint_names)),
                robot.tool_frame or "-",
                ", ".join(robot.gripper_joint_names) or "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import DemoConfig, run_demo

    config = DemoConfig(
        robot=args.robot,
        trajectory=args.trajectory,
        period=args.period,
        duration=args.duration,
        solver=args.solver,
        control_rate=args.rate,
        size=args.size,
    )
    result = run_demo(config)
    print(result.header)
    print(result.table)
    if args.plot:
        path = result.log.plot(args.plot, title=result.title)
        print(f"plot written to {path}")
    if args.save:
        print(f"log written to {result.log.save(args.save)}")
    return 0 if result.ok else 1


def _positive(value: str) -> float:
    x = float(value)
    if not np.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return x


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pinkctl`` command."""
    parser = argparse.ArgumentParser(
        prog="pinkctl", description="QP-based differential IK control: robots and demos."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    robots = sub.add_parser("robots", help="list the bundled robots")
    robots.set_defaults(func=_cmd_robots)
    demo = sub.add_parser(
        "demo",
        help="trajectory follower chained into the IK controller, in MuJoCo",
    )
    demo.add_argument("robot", nargs="?", default="franka", choices=supported_robots())
    demo.add_argument("--trajectory", choices=["figure8", "circle", "waypoints"], default="figure8")
    demo.add_argument("--period", type=_positive, default=8.0, help="trajectory period [s]")
    demo.add_argument("--duration", type=_positive, default=None, help="run time [s]")
    demo.add_argument("--size", type=_positive, default=None, help="half-width or radius [m]")
    demo.add_argument("--solver", default="daqp", help="QP solver (any installed qpsolvers name)")
    demo.add_argument("--rate", type=_positive, default=500.0, help="control rate [Hz]")
    demo.add_argument("--plot", default=None, help="write the error/path plot to this PNG")
    demo.add_argument("--save", default=None, help="write the log to this .npz")
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pinkctl`` command."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
