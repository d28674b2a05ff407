"""``pinkctl view``: build the interactive scene of a robot and show it (web page or MuJoCo).

:func:`build_scene` loads a bundled robot by name or a URDF by path, compiles it into MuJoCo
with a site and a target marker per target, and adds one
:class:`~pinkctl.view.target.IkTarget` per site. :func:`run_view` is what the command runs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import mujoco

from ..core.robot import PinkRobot, load_pink_robot, load_pink_supported_robot, supported_robots
from ..errors import InputError
from ..sim import MujocoSimulation
from ..world import World
from .recording import RecordedSession
from .scene import InteractiveScene

__all__ = ["build_scene", "load_robot", "marker_name", "run_view"]

#: The simulation's own target marker; further targets get ``pinkctl_target_<k>``.
_FIRST_MARKER = "pinkctl_target"


def marker_name(index: int) -> str:
    """Name of the mocap marker body of the ``index``-th target."""
    return _FIRST_MARKER if index == 0 else f"{_FIRST_MARKER}_{index}"


def load_robot(robot_or_path: str, sites: Sequence[str] | None = None) -> PinkRobot:
    """A robot of the catalog by name, or a description file by path (``.urdf``, MuJoCo
    ``.xml`` or a ``robot.toml``; a URDF's ``NAME.srdf`` beside it is used).

    When the loader cannot infer the controlled joints (a tree with several tips, e.g. two
    arms) and ``sites`` are given, the joints that move those sites are the controlled ones
    and the first site is the tool frame (each target then drives its own chain).

    Raises:
        FileNotFoundError: Neither a robot of the catalog nor an existing file.
        ValueError: A malformed description, or joints that cannot be inferred.
    """
    if robot_or_path in supported_robots():
        return load_pink_supported_robot(robot_or_path)
    path = Path(robot_or_path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{robot_or_path!r} is neither a bundled robot ({', '.join(supported_robots())}) "
            "nor a description file"
        )
    srdf_file = path.with_suffix(".srdf")
    srdf = srdf_file if path.suffix == ".urdf" and srdf_file.is_file() else None
    try:
        return load_pink_robot(path, srdf_path=srdf)
    except ValueError:
        if not sites:
            raise
    # a tree with several tips: control the joints that move the sites
    joints = _moving_joints(path, sites)
    overrides: dict[str, Any] = {"controlled_joint_names": joints, "tool_frame": sites[0]}
    return load_pink_robot(path, srdf_path=srdf, **overrides)


def _moving_joints(path: Path, sites: Sequence[str]) -> list[str]:
    """One-coordinate joints between the root and any of ``sites``, in model order."""
    import pinocchio as pin

    try:
        if path.suffix == ".urdf":
            model = pin.buildModelFromUrdf(str(path))
        else:
            model = pin.buildModelFromMJCF(str(path))
    except (RuntimeError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    moving: set[int] = set()
    for site in sites:
        if not model.existFrame(site):
            raise InputError(f"site {site!r} is not a frame of {path.name}")
        joint = model.frames[model.getFrameId(site)].parentJoint
        while joint > 0:
            moving.add(joint)
            joint = model.parents[joint]
    return [model.names[j] for j in sorted(moving) if model.joints[j].nq in (1, 2)]


def _default_site(robot: PinkRobot) -> str:
    """The robot's tool frame, else the model's last body frame."""
    if robot.tool_frame:
        return robot.tool_frame
    model = robot.model
    import pinocchio as pin

    bodies = [f.name for f in model.frames if f.type == pin.FrameType.BODY]
    if not bodies:
        raise InputError("the robot has no link to put a target on")
    return bodies[-1]


def build_scene(
    robot: PinkRobot,
    sites: Sequence[str] | None = None,
    *,
    timestep: float = 0.002,
    world: World | None = None,
) -> InteractiveScene:
    """A real-time-ready scene of ``robot`` with one IK target per site, and ``world``'s
    obstacles in the simulation (``MujocoSimulation.from_robot(..., world=)``).

    Each target drives its site's kinematic chain (position only for chains of fewer than
    six joints) and shows itself with a mocap marker in MuJoCo (:func:`marker_name`).

    Raises:
        ValueError: Unknown sites, or targets that would share joints.
    """
    chosen = list(sites) if sites else [_default_site(robot)]

    def add_markers(spec: mujoco.MjSpec) -> None:
        """Copies of the simulation's own target marker for the second and later targets."""
        if len(chosen) < 2:
            return
        marker = spec.body(_FIRST_MARKER)
        spec.copy_during_attach = True  # attach a copy, not the marker itself
        for index in range(1, len(chosen)):
            spec.worldbody.add_frame().attach_body(marker, "", f"_{index}")

    sim = MujocoSimulation.from_robot(
        robot, timestep=timestep, site_frames=chosen, spec_callback=add_markers, world=world
    )
    scene = InteractiveScene(sim)
    for index, site in enumerate(chosen):
        target = scene.add_target(site=site, marker=marker_name(index))
        if len(target.joint_names) < 6 and target.controller is not None:
            target.controller.get_frame_task().set_orientation_cost(0.0)
    return scene


def _fail(message: str, stream: TextIO) -> int:
    print(f"pinkctl view: {message}", file=stream)
    return 2


def run_view(
    robot_or_path: str,
    *,
    sites: Sequence[str] | None = None,
    native: bool = False,
    host: str = "127.0.0.1",
    port: int = 8080,
    duration: float | None = None,
    record: str | None = None,
    replay: str | None = None,
    world: str | None = None,
    conventions: str = "pinkctl",
    stderr: TextIO | None = None,
) -> int:
    """Run ``pinkctl view``; returns the exit status (2 with a one-line reason on stderr when
    it cannot start: unknown robot, no display for ``native``, viser missing, bad files).

    Args:
        robot_or_path: Bundled robot name or URDF path.
        sites: Sites that get a target (default: the tool frame).
        native: MuJoCo's passive viewer instead of the web page.
        host: Web page address to listen on.
        port: Web page port.
        duration: Stop after this many seconds (default: run until interrupted).
        record: Record the targets' poses and save them here on exit (``.npz``/``.json``).
        replay: Replay a recorded session from this file at start.
        world: A world file (TOML, :meth:`World.load <pinkctl.world.World.load>`): its
            obstacles are simulated and drawn, each with a gizmo that moves it.
        conventions: ``"pinkctl"`` or ``"threejs"``: how the web page shows and reads poses
            and durations (:mod:`pinkctl.view.conventions`).
        stderr: Where the reason goes (default ``sys.stderr``).
    """
    stream = sys.stderr if stderr is None else stderr
    scene, reason = _prepare(robot_or_path, sites, native, replay, world)
    if scene is None:
        return _fail(reason, stream)
    problem: str | None = None
    if record:
        scene.recorder.start()
    try:
        if native:
            problem = _run_native(scene, duration)
        else:
            page = (host, port, record or "session.json", conventions)
            problem = _run_web(scene, page, duration)
    except KeyboardInterrupt:
        problem = None
    finally:
        scene.stop()
        if record and scene.recorder.samples:
            print(f"session written to {scene.recorder.session().save(record)}", flush=True)
    return 0 if problem is None else _fail(problem, stream)


def _prepare(
    robot_or_path: str,
    sites: Sequence[str] | None,
    native: bool,
    replay: str | None,
    world: str | None = None,
) -> tuple[InteractiveScene | None, str]:
    """The scene, a recorded session replayed in it; or None and why it cannot start."""
    if native:
        from .native import display_problem

        problem = display_problem()
        if problem is not None:
            return None, problem
    try:
        robot = load_robot(robot_or_path, sites)
        obstacles = World.load(world) if world else None
        scene = build_scene(robot, sites, world=obstacles)
        session = RecordedSession.load(replay) if replay else None
    except (FileNotFoundError, ValueError) as exc:
        return None, str(exc).splitlines()[0]
    if session is not None:
        session.replay(scene.targets)
    return scene, ""


def _run_native(scene: InteractiveScene, duration: float | None) -> str | None:
    """Run MuJoCo's passive viewer; the reason it cannot run, or None."""
    from .native import NativeViewerError, run_native

    try:
        run_native(scene, duration=duration)
    except NativeViewerError as exc:
        return str(exc)
    return None


def _run_web(
    scene: InteractiveScene, page: tuple[str, int, str, str], duration: float | None
) -> str | None:
    """Serve the web page (host, port, session file, conventions) until ``duration`` is over;
    the reason it cannot run, or None."""
    try:
        from .web import WebViewer
    except ImportError:
        return "the web page needs viser: pip install 'pinkctl[view]'"
    host, port, session_path, conventions = page
    viewer = WebViewer(
        scene, host=host, port=port, session_path=session_path, conventions=conventions
    )
    with viewer:
        print(f"pinkctl view: {viewer.title} at {viewer.url} (Ctrl-C to stop)", flush=True)
        _wait(duration)
    return None


def _wait(duration: float | None) -> None:
    end = None if duration is None else time.monotonic() + duration
    while end is None or time.monotonic() < end:
        time.sleep(0.2 if end is None else max(0.0, min(0.2, end - time.monotonic())))
