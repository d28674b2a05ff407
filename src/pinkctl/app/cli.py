"""The ``pinkctl`` command: list the bundled robots, run the closed-loop demo, view a robot,
map its reach.

Exit status: 0 when the command did what it was asked, 1 when a check failed (the demo missed
a bound, ``inspect`` found a robot it cannot control: the failing row is named), 2 when the
arguments cannot work (unknown robot or solver, a missing optional package, a bad value).
Every failure is one line on stderr saying what failed and why; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from .. import __version__
from ..core.robot import supported_robots
from ..errors import InputError, MissingDependencyError

__all__ = ["build_parser", "main"]

#: Exit statuses.
OK, FAILED, BAD_ARGUMENTS = 0, 1, 2
#: Longest warning line printed (the rest is cut).
WARNING_WIDTH = 160


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (usage on ``--help``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(BAD_ARGUMENTS, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """Parse ``args``; arguments a command does not know are that command's error (its
        ``--help`` is the one that lists the options)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            owner: argparse.ArgumentParser = getattr(parsed, "command_parser", self)
            owner.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed


def _cmd_robots(_: argparse.Namespace) -> int:
    from ..core.robot import read_config, robot_configurations_dir

    rows = [("robot", "DoF", "tool frame", "description")]
    for name in supported_robots():
        config = read_config(robot_configurations_dir() / name / "robot.toml")
        dof = str(len(config.controlled_joints)) if config.controlled_joints else "?"
        rows.append((name, dof, config.tool_frame or "-", _description_source(config.package)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    return OK


def _description_source(package: str | None) -> str:
    """Where a catalog robot's description comes from, with the extra to install if missing."""
    if package is None:
        return "hand-written (bundled)"
    module = package.replace("-", "_")
    installed = importlib.util.find_spec(module) is not None or _has_distribution(package)
    return package + ("" if installed else " (pip install 'pinkctl[robots]')")


def _has_distribution(name: str) -> bool:
    import importlib.metadata

    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _output_file(path: str | None, option: str) -> None:
    """Reject an output path whose folder does not exist."""
    if path is not None and not Path(path).resolve().parent.is_dir():
        raise InputError(f"{option} {path}: the folder {Path(path).parent} does not exist")


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import DemoConfig, run_demo
    from .inspect import parse_joint_list

    if args.whole_body:  # a standing humanoid reaching: pinkctl.app.whole_body.reach_demo
        return int(importlib.import_module("pinkctl.app.whole_body").reach_demo(args))
    for option in ("plot", "save", "video", "picture"):
        _output_file(getattr(args, option), f"--{option}")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise MissingDependencyError("--plot needs matplotlib: pip install 'pinkctl[plot]'")
    config = DemoConfig(
        robot=args.robot_option or args.robot or "franka",
        tool_frame=args.tool_frame,
        controlled_joints=parse_joint_list(args.controlled_joints),
        trajectory=args.trajectory,
        period=args.period,
        duration=args.duration,
        solver=args.solver,
        control_rate=args.rate,
        size=args.size,
    )

    def say(line: str) -> None:
        print(f"pinkctl demo: {line}", file=sys.stderr, flush=True)

    result = run_demo(config, say=say, video=args.video, picture=args.picture, progress=True)
    print(result.header)
    print(result.table)
    if args.plot:
        say(f"plot written to {result.log.plot(args.plot, title=result.title)}")
    if args.save:
        say(f"log written to {result.log.save(args.save)}")
    if result.failures:
        say(result.verdict)
        return FAILED
    print(result.verdict)
    return OK


def _cmd_inspect(args: argparse.Namespace) -> int:
    from .inspect import inspect_robot, parse_joint_list

    given = {"config": args.config, "srdf_path": args.srdf, "package_dirs": args.package_dir}
    given.update(tool_frame=args.tool_frame, floating_base=args.floating_base or None)
    options: dict[str, Any] = {key: value for key, value in given.items() if value}
    joints = parse_joint_list(args.controlled_joints)
    if joints is not None:
        options["controlled_joint_names"] = joints
    try:
        report = inspect_robot(args.robot, hold_seconds=args.hold, **options)
    except ValueError as exc:  # a description pinkctl cannot use: the check failed
        _fail("inspect", f"cannot load {args.robot}: {exc}")
        return FAILED
    print("\n".join(report.lines))
    if not report.ok:
        _fail("inspect", "cannot control this robot: " + "; ".join(report.problems))
        return FAILED
    print("pinkctl inspect: ready for a closed loop")
    return OK


def _cmd_view(args: argparse.Namespace) -> int:
    """``pinkctl view``: the interactive page (or MuJoCo's viewer); exit 2 when it cannot
    start, with a one-line reason on stderr."""
    from ..view.app import run_view

    names = ("native", "host", "port", "duration", "record", "replay", "world", "conventions")
    return run_view(args.robot, sites=args.site, **{name: getattr(args, name) for name in names})


def _cmd_reach(args: argparse.Namespace) -> int:
    """``pinkctl reach``: the map and its picture; the extras it needs are checked first."""
    from .reach import ReachRun, run_reach

    if importlib.util.find_spec("matplotlib") is None:
        raise MissingDependencyError("the picture needs matplotlib: pip install 'pinkctl[plot]'")
    if args.backend == "ray" and importlib.util.find_spec("ray") is None:
        raise MissingDependencyError("--backend ray needs Ray: pip install 'pinkctl[ray]'")
    run = ReachRun(
        robot=args.robot,
        resolution=args.resolution,
        orientations=args.orientations,
        backend=args.backend,
        workers=args.workers,
        address=args.address,
        output=Path(args.output),
    )
    path, picture = run_reach(run)
    print(f"map written to {path}\npicture written to {picture}")
    return OK


def _integer(value: str, low: int, high: float, expected: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = low - 1
    if not low <= n <= high:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return n


def _count(value: str) -> int:
    return _integer(value, 0, float("inf"), "an integer >= 0")


def _workers(value: str) -> int:
    return _integer(value, 1, float("inf"), "an integer >= 1 (worker processes or Ray tasks)")


def _port(value: str) -> int:
    return _integer(value, 0, 65535, "a TCP port (0-65535)")


def _positive(value: str) -> float:
    try:
        x = float(value)
    except ValueError:
        x = float("nan")
    if not np.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {value}")
    return x


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``pinkctl`` command."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show tracebacks and full warnings",
    )
    parser = _Parser(
        prog="pinkctl",
        description="QP-based differential IK control: robots, demos, interactive viewer.",
        epilog="Exit status: 0 ok, 1 a check failed, 2 bad arguments.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"pinkctl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    robots = sub.add_parser("robots", help="list the catalog's robots", parents=[common])
    robots.set_defaults(func=_cmd_robots, command_parser=robots)
    inspect = sub.add_parser(
        "inspect",
        help="what pinkctl makes of a robot (a catalog name or a URDF/MJCF/robot.toml path)",
        parents=[common],
    )
    inspect.add_argument("robot", help="catalog name, or a .urdf / .xml / robot.toml file")
    inspect.add_argument("--config", help="robot configuration (TOML) for a description file")
    inspect.add_argument("--srdf", help="SRDF file")
    inspect.add_argument("--package-dir", action="append", help="folder for package:// URIs")
    inspect.add_argument("--tool-frame", help="end-effector frame")
    inspect.add_argument("--controlled-joints", help="comma-separated joint names")
    inspect.add_argument("--floating-base", action="store_true", help="free-flyer root joint")
    inspect.add_argument("--hold", type=_positive, default=2.0, help="hold at home [s]")
    inspect.set_defaults(func=_cmd_inspect, command_parser=inspect)
    _add_demo(sub, common)
    view = sub.add_parser(
        "view",
        help="drag an IK target in a web page (or MuJoCo's viewer), simulated in real time",
        parents=[common],
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
    view.add_argument("--world", default=None, help="obstacles to simulate and drag (TOML)")
    conventions = ("pinkctl", "threejs")  # page poses: wxyz, rpy, s | xyzw, XYZ, ms
    view.add_argument("--conventions", choices=conventions, default="pinkctl")
    view.set_defaults(func=_cmd_view, command_parser=view)
    reach = sub.add_parser(
        "reach",
        help="reachability map of a robot (global IK per voxel and tool orientation)",
        parents=[common],
    )
    reach.add_argument("robot", help="catalog name, or a .urdf / .xml / robot.toml file")
    reach.add_argument("--resolution", type=_positive, default=0.05, help="voxel edge [m]")
    reach.add_argument(
        "--orientations", type=_count, default=6, help="tool orientations per voxel (0: position)"
    )
    reach.add_argument("--backend", choices=["local", "ray"], default="local")
    reach.add_argument(
        "--workers",
        type=_workers,
        default=None,
        help="processes or Ray tasks, >= 1 (default: all CPUs)",
    )
    reach.add_argument("--address", default=None, help="Ray cluster address (backend ray)")
    reach.add_argument(
        "--output", default="out/reach", help="folder for <robot>_reach.npz and .png"
    )
    reach.set_defaults(func=_cmd_reach, command_parser=reach)
    return parser


def _add_demo(sub: Any, common: _Parser) -> None:
    from .demo_trajectory import TRAJECTORIES

    demo = sub.add_parser(
        "demo",
        help="trajectory follower chained into the IK controller, in MuJoCo",
        description="Run a trajectory follower chained into the IK controller in MuJoCo, "
        "print the tracking table, and check it (RMS <= 1 mm, max <= 3 mm, every tick with "
        "output, no limit violation). Exit status 1 names the row that missed.",
        parents=[common],
    )
    demo.add_argument(
        "robot",
        nargs="?",
        default=None,
        help="catalog name (pinkctl robots) or a URDF / MJCF / robot.toml file; default franka",
    )
    demo.add_argument("--robot", dest="robot_option", help="same as the positional argument")
    demo.add_argument(
        "--tool-frame", help="end-effector frame (alone: the joints from the root to it move)"
    )
    demo.add_argument("--controlled-joints", help="comma-separated joint names")
    demo.add_argument("--whole-body", action="store_true", help="humanoid stands and reaches")
    demo.add_argument("--trajectory", choices=TRAJECTORIES, default="figure8")
    demo.add_argument("--period", type=_positive, default=8.0, help="trajectory period [s]")
    demo.add_argument("--duration", type=_positive, default=None, help="run time [s]")
    demo.add_argument(
        "--size",
        type=_positive,
        default=None,
        help="half-width or radius [m]; default: fitted to the robot's reach and limits",
    )
    demo.add_argument(
        "--solver",
        default="box",
        help="QP solver: box (default), daqp or any installed qpsolvers name",
    )
    demo.add_argument("--rate", type=_positive, default=500.0, help="control rate [Hz]")
    demo.add_argument("--plot", default=None, help="write the error/path plot to this PNG")
    demo.add_argument("--save", default=None, help="write the log to this .npz")
    demo.add_argument("--video", default=None, help="record the run to this .mp4 (or .gif)")
    demo.add_argument(
        "--picture", default=None, help="write the last frame, with the traced path, to a .png"
    )
    demo.set_defaults(func=_cmd_demo, command_parser=demo)


def _fail(command: str, message: str) -> None:
    """Print ``message`` as one line on stderr."""
    line = " ".join(str(message).split())
    print(f"pinkctl {command}: {line}", file=sys.stderr, flush=True)


def _one_line_warnings(command: str) -> Callable[..., None]:
    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        text = " ".join(str(message).split())
        if len(text) > WARNING_WIDTH:
            text = text[: WARNING_WIDTH - 3] + "..."
        print(f"pinkctl {command}: warning: {text}", file=sys.stderr)

    return show


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pinkctl`` command; returns the exit status."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line argument error
        return exc.code if isinstance(exc.code, int) else BAD_ARGUMENTS
    command = str(args.command)
    if getattr(args, "debug", False):
        return int(args.func(args))
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warnings(command)
        try:
            return int(args.func(args))
        except (ValueError, FileNotFoundError, ImportError) as exc:
            _fail(command, str(exc) or type(exc).__name__)
            return BAD_ARGUMENTS
        except KeyboardInterrupt:
            _fail(command, "interrupted")
            return 130
        except Exception as exc:
            _fail(command, f"{type(exc).__name__}: {exc} (rerun with --debug for the traceback)")
            return FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
