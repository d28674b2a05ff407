"""``pinkctl inspect``: what pinkctl makes of a robot description, and whether it can run it.

:func:`inspect_robot` loads a catalog robot or any URDF/MJCF file (with an optional
configuration), reports what it found and inferred (degrees of freedom, joints and their
limits, tool frame, controlled joints, home, collision pairs, the loader's notes), then checks
what a closed loop needs: Pinocchio and MuJoCo agree on the tool frame's pose over random
configurations, and the simulated robot holds still at home.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pinocchio as pin

from ..core.robot import PinkRobot, load_pink_robot, load_pink_supported_robot, supported_robots
from ..errors import DescriptionNotFoundError, InputError

if TYPE_CHECKING:
    from ..sim import MujocoSimulation

__all__ = ["InspectReport", "check_robot_name", "inspect_robot", "load_robot"]

#: Suffixes of the files a robot can be loaded from.
_DESCRIPTION_SUFFIXES = (".urdf", ".xml", ".toml", ".mjcf")
#: Largest Pinocchio-vs-MuJoCo tool position difference accepted [m].
FK_TOLERANCE = 1e-9
#: Largest tool drift accepted while holding home [m].
DRIFT_TOLERANCE = 5e-4


@dataclass
class InspectReport:
    """What :func:`inspect_robot` found.

    Attributes:
        robot: The loaded robot.
        lines: The report, one line each.
        problems: Why the robot cannot be controlled, one line each (empty: it can).
        fk_error: Largest tool position difference between Pinocchio and MuJoCo [m].
        drift: Tool drift over the hold at home [m].
    """

    robot: PinkRobot
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    fk_error: float = float("nan")
    drift: float = float("nan")

    @property
    def ok(self) -> bool:
        """True when nothing prevents a closed loop."""
        return not self.problems


_CATALOG_OPTIONS = {
    "build_collision_model",
    "controlled_joint_names",
    "tool_frame",
    "home",
    "gripper_joint_names",
    "floating_base",
}


def load_robot(target: str | Path, **kwargs: Any) -> PinkRobot:
    """A catalog robot by name, or a description file (``.urdf``, ``.xml``, ``.toml``).

    Raises:
        ValueError: Options that only apply to description files given with a catalog name.
        FileNotFoundError: A name that is neither a catalog robot nor a file.
    """
    if isinstance(target, str) and target in supported_robots() and not Path(target).exists():
        extra = sorted(set(kwargs) - _CATALOG_OPTIONS)
        if extra:
            raise InputError(f"options {extra} apply to description files, not to {target!r}")
        return load_pink_supported_robot(target, **kwargs)
    check_robot_name(target)
    return load_pink_robot(target, **kwargs)


def check_robot_name(target: str | Path) -> None:
    """Raise unless ``target`` is a catalog name or an existing file.

    Raises:
        DescriptionNotFoundError: Neither: a path (a folder in it, or a description's suffix)
            that does not exist is said to be missing; a bare name gets the catalog listed.
    """
    if isinstance(target, str) and target in supported_robots():
        return
    path = Path(target)
    if path.exists():
        return
    if path.suffix.lower() in _DESCRIPTION_SUFFIXES or len(path.parts) > 1:
        raise DescriptionNotFoundError(f"{target}: no such file")
    raise DescriptionNotFoundError(
        f"unknown robot {str(target)!r}: not a catalog robot ({', '.join(supported_robots())}) "
        "and no file of that name"
    )


def _limits_rows(robot: PinkRobot) -> list[str]:
    model = robot.model
    rows = []
    for name in robot.joint_names:
        joint = model.joints[model.getJointId(name)]
        kind = joint.shortname().replace("JointModel", "")
        if joint.nq == 2:
            limits = "continuous"
        else:
            lo = model.lowerPositionLimit[joint.idx_q]
            hi = model.upperPositionLimit[joint.idx_q]
            limits = f"[{lo:+.3f}, {hi:+.3f}]"
        role = (
            "controlled"
            if name in robot.controlled_joint_names
            else ("gripper" if name in robot.gripper_joint_names else "held")
        )
        home = robot.home_positions().get(name, 0.0)
        rows.append(
            f"    {name:<32} {kind:<6} {limits:<20} home {home:+.3f}  {role}"
            + _derivative_limits(robot, name)
        )
    return rows


def _derivative_limits(robot: PinkRobot, name: str) -> str:
    """A controlled joint's velocity, acceleration and jerk limits (``*``: inferred from the
    description, :mod:`pinkctl.core.robot.acceleration`); empty for other joints."""
    if name not in robot.velocity_limits:
        return ""
    text = f"  v {robot.velocity_limits[name]:.3g}"
    mark = "*" if "motion limits" in robot.inferred else ""
    if name in robot.acceleration_limits:
        text += f"  a {robot.acceleration_limits[name]:.3g}{mark}"
    if name in robot.jerk_limits:
        text += f"  j {robot.jerk_limits[name]:.3g}{mark}"
    return text


def _fk_error(robot: PinkRobot, sim: Any, samples: int, rng: np.random.Generator) -> float:
    model, data = robot.model, robot.model.createData()
    frame = robot.tool_frame
    assert frame is not None
    fid = model.getFrameId(frame)
    names = [n for n in sim.joint_names if n in robot.joint_names]
    worst = 0.0
    for _ in range(samples):
        values = {}
        q = robot.q0.copy()
        for name in names:
            joint = model.joints[model.getJointId(name)]
            if joint.nq == 1:
                lo = max(float(model.lowerPositionLimit[joint.idx_q]), -np.pi)
                hi = min(float(model.upperPositionLimit[joint.idx_q]), np.pi)
                q[joint.idx_q] = values[name] = rng.uniform(lo, hi)
            else:
                values[name] = rng.uniform(-np.pi, np.pi)
                q[joint.idx_q : joint.idx_q + 2] = np.cos(values[name]), np.sin(values[name])
        pin.framesForwardKinematics(model, data, q)
        sim.reset(values)
        position = sim.get_site_pose(frame)[0]
        worst = max(worst, float(np.linalg.norm(position - data.oMf[fid].translation)))
    sim.reset()
    return worst


def inspect_robot(
    target: str | Path,
    *,
    hold_seconds: float = 2.0,
    fk_samples: int = 50,
    seed: int = 0,
    **load_options: Any,
) -> InspectReport:
    """Load ``target`` and report on it (see the module docstring).

    Raises:
        FileNotFoundError, ValueError: When the robot cannot be loaded (the loader's message).
    """
    from ..sim import MujocoSimulation  # noqa: PLC0415

    robot, collision_pairs = _load(target, load_options)
    report = InspectReport(robot=robot)
    report.lines += _description_rows(robot, collision_pairs)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sim = MujocoSimulation.from_robot(robot)
        report.lines += [f"  note: {warning.message}" for warning in caught]
    except Exception as exc:  # noqa: BLE001 - reported as the reason it cannot run
        report.problems.append(f"MuJoCo cannot build the simulation: {exc}")
        return report
    try:
        _check_kinematics(report, sim, fk_samples, seed)
        _check_hold(report, sim, hold_seconds)
    finally:
        sim.close()
    return report


def _load(target: str | Path, load_options: dict[str, Any]) -> tuple[PinkRobot, int | None]:
    """The robot and its number of collision pairs (None without a collision model, with a
    note saying why); the loader's warnings are left to the notes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the notes are reported below
        robot = load_robot(target, **load_options)
        try:
            collision = load_robot(
                target, build_collision_model=True, **load_options
            ).collision_model
        except (ValueError, RuntimeError, FileNotFoundError) as exc:
            robot.notes.append(f"no collision model: {exc}")
            return robot, None
    return robot, len(collision.collisionPairs) if collision is not None else None


def _description_rows(robot: PinkRobot, collision_pairs: int | None) -> list[str]:
    """The report's lines on what was loaded and inferred."""
    model = robot.model
    lines = [f"{robot.name}: {robot.urdf_path}"]
    lines.append(
        f"  {model.nq} configuration / {model.nv} velocity coordinates, "
        f"{len(robot.joint_names)} scalar joints"
        + (", floating base" if robot.floating_base else "")
    )
    lines.append(f"  tool frame: {robot.tool_frame}")
    lines.append("  controlled joints: " + ", ".join(robot.controlled_joint_names))
    if robot.gripper_joint_names:
        lines.append("  gripper joints: " + ", ".join(robot.gripper_joint_names))
    lines.append("  joints (limits: position; v, a, j: velocity, acceleration, jerk, * inferred):")
    lines += _limits_rows(robot)
    if collision_pairs is not None:
        lines.append(f"  collision pairs (after the SRDF): {collision_pairs}")
    lines += [f"  inferred {key}: {reason}" for key, reason in robot.inferred.items()]
    lines += [f"  note: {note}" for note in robot.notes]
    return lines


def _check_kinematics(
    report: InspectReport, sim: MujocoSimulation, fk_samples: int, seed: int
) -> None:
    """Pinocchio against MuJoCo on the tool frame over random configurations."""
    report.fk_error = _fk_error(report.robot, sim, fk_samples, np.random.default_rng(seed))
    report.lines.append(
        f"  Pinocchio vs MuJoCo, tool frame over {fk_samples} random configurations: "
        f"{report.fk_error:.1e} m"
    )
    if not report.fk_error <= FK_TOLERANCE:
        report.problems.append(
            f"Pinocchio and MuJoCo disagree on the tool frame by {report.fk_error:.2e} m"
        )


def _check_hold(report: InspectReport, sim: MujocoSimulation, hold_seconds: float) -> None:
    """How far the tool drifts while the simulated robot holds its home."""
    tool = report.robot.tool_frame
    assert tool is not None
    start = sim.get_site_pose(tool)[0]
    sim.step(int(round(hold_seconds / sim.timestep)))
    report.drift = float(np.linalg.norm(sim.get_site_pose(tool)[0] - start))
    report.lines.append(
        f"  hold at home for {hold_seconds:g} s: tool drift {report.drift * 1e3:.3f} mm"
    )
    if not report.drift <= DRIFT_TOLERANCE:
        report.problems.append(
            f"the simulated robot does not hold still at home (drift "
            f"{report.drift * 1e3:.2f} mm in {hold_seconds:g} s)"
        )


def parse_joint_list(text: str | None, option: str = "--controlled-joints") -> Sequence[str] | None:
    """``"a,b,c"`` -> ``["a", "b", "c"]`` (None stays None).

    Raises:
        InputError: A text without any name (``option`` names the argument).
    """
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise InputError(f"{option}: expected comma-separated joint names, got {text!r}")
    return names
