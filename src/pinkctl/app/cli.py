"""The ``pinkctl`` command: list the bundled robots, run the closed-loop demo, view a robot."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.robot import supported_robots

__all__ = ["main"]


def _cmd_robots(_: argparse.Namespace) -> int:
    import importlib.util

    from ..core.robot import read_config, robot_configurations_dir

    rows = [("robot", "DoF", "tool frame", "description")]
    for name in supported_robots():
        config = read_config(robot_configurations_dir() / name / "robot.toml")
        dof = str(len(config.controlled_joints)) if config.controlled_joints else "?"
        source = "hand-written (bundled)"
        if config.package is not None:
            module = config.package.replace("-", "_")
            installed = importlib.util.find_spec(module) is not None or _has_distribution(
                config.package
            )
            source = config.package + ("" if installed else " (pip install 'pinkctl[robots]')")
        rows.append((name, dof, config.tool_frame or "-", source))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return 0


def _has_distribution(name: str) -> bool:
    import importlib.metadata

    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import DemoConfig, run_demo

    config = DemoConfig(
        robot=args.robot_option or args.robot or "franka",
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


def _cmd_inspect(args: argparse.Namespace) -> int:
    from .inspect import inspect_robot, parse_joint_list

    options: dict[str, Any] = {}
    if args.config:
        options["config"] = args.config
    if args.srdf:
        options["srdf_path"] = args.srdf
    if args.package_dir:
        options["package_dirs"] = args.package_dir
    if args.tool_frame:
        options["tool_frame"] = args.tool_frame
    joints = parse_joint_list(args.controlled_joints)
    if joints is not None:
        options["controlled_joint_names"] = joints
    if args.floating_base:
        options["floating_base"] = True
    try:
        report = inspect_robot(args.robot, hold_seconds=args.hold, **options)
    except (FileNotFoundError, ValueError) as exc:
        print(f"pinkctl inspect: cannot load {args.robot}: {exc}")
        return 1
    print("\n".join(report.lines))
    if not report.ok:
        print("pinkctl inspect: cannot control this robot: " + "; ".join(report.problems))
        return 1
    print("pinkctl inspect: ready for a closed loop")
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    """``pinkctl view``: the interactive page (or MuJoCo's viewer); exit 2 when it cannot
    start, with a one-line reason on stderr."""
    from ..view.app import run_view

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
    robots = sub.add_parser("robots", help="list the catalog's robots")
    robots.set_defaults(func=_cmd_robots)
    inspect = sub.add_parser(
        "inspect",
        help="what pinkctl makes of a robot (a catalog name or a URDF/MJCF/robot.toml path)",
    )
    inspect.add_argument("robot", help="catalog name, or a .urdf / .xml / robot.toml file")
    inspect.add_argument("--config", help="robot configuration (TOML) for a description file")
    inspect.add_argument("--srdf", help="SRDF file")
    inspect.add_argument("--package-dir", action="append", help="folder for package:// URIs")
    inspect.add_argument("--tool-frame", help="end-effector frame")
    inspect.add_argument("--controlled-joints", help="comma-separated joint names")
    inspect.add_argument("--floating-base", action="store_true", help="free-flyer root joint")
    inspect.add_argument("--hold", type=_positive, default=2.0, help="hold at home [s]")
    inspect.set_defaults(func=_cmd_inspect)
    demo = sub.add_parser(
        "demo",
        help="trajectory follower chained into the IK controller, in MuJoCo",
    )
    demo.add_argument(
        "robot",
        nargs="?",
        default=None,
        help="catalog name (pinkctl robots) or a URDF / MJCF / robot.toml file; default franka",
    )
    demo.add_argument("--robot", dest="robot_option", help="same as the positional argument")
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
