"""The ``pinkctl`` command: list the bundled robots, run the closed-loop demo, view a robot."""

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


def _cmd_view(args: argparse.Namespace) -> int:
    """``pinkctl view``: the interactive page (or MuJoCo's viewer); exit 2 when it cannot
    start, with a one-line reason on stderr."""
    from .view.app import run_view

    return run_view(
        args.robot,
        sites=args.site,
        native=args.native,
        host=args.host,
        port=args.port,
        duration=args.duration,
        record=args.record,
        replay=args.replay,
    )


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a TCP port (0-65535), got {value}")
    return port


def _positive(value: str) -> float:
    x = float(value)
    if not np.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return x


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pinkctl`` command."""
    parser = argparse.ArgumentParser(
        prog="pinkctl",
        description="QP-based differential IK control: robots, demos, interactive viewer.",
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
    view = sub.add_parser(
        "view",
        help="drag an IK target in a web page (or MuJoCo's viewer), simulated in real time",
    )
    view.add_argument("robot", help="bundled robot name or URDF path")
    view.add_argument("--port", type=_port, default=8080, help="web page port (0: any free)")
    view.add_argument("--host", default="127.0.0.1", help="address to serve the page on")
    view.add_argument("--native", action="store_true", help="MuJoCo's viewer, not the web page")
    view.add_argument(
        "--site", action="append", default=None, help="site with a target (repeatable)"
    )
    view.add_argument("--duration", type=_positive, default=None, help="stop after [s]")
    view.add_argument("--record", default=None, help="save the dragged poses (.json/.npz)")
    view.add_argument("--replay", default=None, help="replay a recorded session file")
    view.set_defaults(func=_cmd_view)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pinkctl`` command."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
