"""Your own robot: from a URDF with meshes to a closed loop, with nothing written for it.

What it shows: a robot description pinkctl did not write (by default the UR5 that the
``example-robot-data`` package ships, ``pip install 'pinkctl[robots]'``; or any URDF / MJCF /
``robot.toml`` given with ``--robot``) is

1. loaded with :func:`pinkctl.load_pink_robot`: mesh URIs resolved, inertias checked, and
   everything no configuration says inferred: the tool frame, the controlled joints, the home
   configuration, the servo gains. ``robot.report()`` says what was inferred and why;
   ``config=`` (a file or a dict) or keywords (``tool_frame=``, ``controlled_joint_names=``,
   ``home=``) override any of it (here: the UR5's home, whose inferred value, the middle of
   each joint's range, is its stretched and singular zero pose);
2. simulated in MuJoCo from the very same description (the tool frame gets a site);
3. driven by the default :class:`~pinkctl.PinkIKController` toward a target 8 cm away (full
   pose; position only for arms with fewer than six joints) and back.

Here the configuration adds what a URDF cannot say: acceleration and jerk limits (without
them the motion limits are off, with a warning). The scenario passes when the tool reaches
each target within 0.1 mm.

Run::

    python examples/own_robot.py
    python examples/own_robot.py --robot path/to/my_robot.urdf --tool-frame tool0
    python examples/own_robot.py --quick
"""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pinkctl import (
    MujocoSimulation,
    PinkIKController,
    RobotState,
    SpatialState,
    load_pink_robot,
)


def default_description() -> Path:
    """The UR5 URDF of example-robot-data (the ``robots`` extra)."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError as exc:
        raise SystemExit(
            "own_robot: the default robot comes from example-robot-data: "
            "pip install 'pinkctl[robots]', or pass --robot PATH"
        ) from exc
    robots = Path(str(dist.locate_file("cmeel.prefix/share/example-robot-data/robots")))
    return robots / "ur_description/urdf/ur5_robot.urdf"


@dataclass
class OwnRobotResult:
    """Errors at the end of each move [mm] and the loader's report."""

    report: str
    errors_mm: list[float]
    ok: bool


def run(
    description: Path | None = None,
    *,
    tool_frame: str | None = None,
    seconds_per_move: float = 3.0,
) -> OwnRobotResult:
    """Load, simulate and drive the robot (see the module docstring)."""
    home = None
    if description is None:
        # the inferred home would be the middle of each range: the UR5's stretched, singular
        # zero pose; an override names a better one (elbow up, tool pointing down)
        home = {
            "shoulder_lift_joint": -1.57,
            "elbow_joint": 1.57,
            "wrist_1_joint": -1.57,
            "wrist_2_joint": -1.57,
        }
    path = description if description is not None else default_description()
    robot = load_pink_robot(
        path,
        tool_frame=tool_frame,
        home=home,
        # what a URDF cannot say; a robot.toml file with a [limits] table does the same
        config={"limits": {"acceleration": 4.0, "jerk": 200.0}},
    )
    sim = MujocoSimulation.from_robot(robot)
    frame = robot.tool_frame
    assert frame is not None
    position_only = len(robot.controlled_joint_names) < 6
    controller = PinkIKController(
        robot,
        sim.joint_names,
        sim.site_names,
        dt=sim.timestep,
        orientation_cost=0.0 if position_only else 1.0,
    )
    assert controller.reset(sim.get_robot_state(), None, 0.0), controller.last_error
    home, orientation = sim.get_site_pose(frame)
    errors = []
    t = 0.0
    for goal in (home + np.array([0.0, 0.06, -0.05]), home):
        setpoint = RobotState(
            sites=SpatialState.from_name(
                [frame],
                positions=([frame], goal.reshape(1, 3)),
                orientations=([frame], orientation.reshape(1, 4)),
            )
        )
        for _ in range(int(round(seconds_per_move / sim.timestep))):
            desired = controller.forward(sim.get_robot_state(), setpoint, t)
            t += sim.timestep
            if desired is not None:
                sim.apply(desired)
            sim.step()
        errors.append(float(np.linalg.norm(sim.get_site_pose(frame)[0] - goal)) * 1e3)
    return OwnRobotResult(report=robot.report(), errors_mm=errors, ok=max(errors) <= 0.1)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0: the check passed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", type=Path, default=None, help="URDF, MJCF or robot.toml")
    parser.add_argument("--tool-frame", default=None, help="end-effector frame")
    parser.add_argument("--quick", action="store_true", help="shorter moves (1.5 s each)")
    args = parser.parse_args(argv)
    result = run(
        args.robot, tool_frame=args.tool_frame, seconds_per_move=1.5 if args.quick else 3.0
    )
    print(result.report)
    status = "OK" if result.ok else "FAILED"
    errors = ", ".join(f"{e:.4f}" for e in result.errors_mm)
    print(f"own_robot [{status}]: errors at the end of each move {errors} mm (bound 0.1 mm)")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
