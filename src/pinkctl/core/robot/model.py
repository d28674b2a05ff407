"""PinkRobot: a loaded robot, ready for the controller, the IK and the simulation."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from ..joint_info import scalar_joint_names
from ..joints import configuration_to_joint_positions
from .description import RobotDescription
from .source import RobotSource

__all__ = ["PinkRobot"]


@dataclass
class PinkRobot:
    """A robot ready for differential IK: Pinocchio model, data and the joints to control.

    Attributes:
        directory: Folder of the robot description.
        model: Pinocchio model (mimic joints parsed as mimic joints; a free-flyer root
            joint ``root_joint`` when ``floating_base``).
        data: Pinocchio data for ``model``.
        controlled_joint_names: Joints the arm controller drives (decision variables of the QP).
        collision_model: Collision geometry (SRDF disabled pairs removed), if requested.
        collision_data: Data for ``collision_model``.
        q0: Home configuration, a Pinocchio ``q`` vector of size ``model.nq``.
        name: Robot name (bundled robots: the folder name).
        urdf_path: Path of the description file (URDF or MJCF).
        srdf_path: Path of the SRDF, if any.
        tool_frame: Default tool frame for the IK controller.
        gripper_joint_names: Actuated gripper joints (mimic followers excluded).
        velocity_limits: Per controlled joint velocity limit [rad/s] or [m/s], by name.
        acceleration_limits: Per controlled joint acceleration limit [rad/s²], by name.
        jerk_limits: Per controlled joint jerk limit [rad/s³], by name.
        actuator_kp: MuJoCo position-servo stiffness per actuated joint, by name.
        actuator_kv: MuJoCo position-servo damping per actuated joint, by name.
        armature: MuJoCo joint armature per joint [kg m²], by name.
        ball_ranges: Largest rotation angle [rad] of each limited ball joint, by name (the
            controller keeps it with a :class:`~pinkctl.qp.BallRangeLimit`).
        config: The raw configuration table (empty without one).
        description: The normalised description both engines are built from.
        floating_base: Whether the root is a free-flyer joint.
        base_placement: Pose of the root link in the world (fixed base).
        floor: Floor height [m], False for none, None to place it below the robot.
        tool_frames: Frames that get a MuJoCo site (the tool frame first).
        inferred: What the loader inferred, by field: where each value came from.
        notes: Warnings and repairs of the loader, one line each.
        source: How the robot was loaded (:class:`~pinkctl.core.robot.RobotSource`): what
            worker processes load it again from; None for a robot built by hand.
    """

    directory: Path
    model: pin.Model
    data: pin.Data
    controlled_joint_names: list[str]
    collision_model: pin.GeometryModel | None = None
    collision_data: pin.GeometryData | None = None
    q0: np.ndarray = field(default_factory=lambda: np.zeros(0))
    name: str = ""
    urdf_path: Path | None = None
    srdf_path: Path | None = None
    tool_frame: str | None = None
    gripper_joint_names: list[str] = field(default_factory=list)
    velocity_limits: dict[str, float] = field(default_factory=dict)
    acceleration_limits: dict[str, float] = field(default_factory=dict)
    jerk_limits: dict[str, float] = field(default_factory=dict)
    actuator_kp: dict[str, float] = field(default_factory=dict)
    actuator_kv: dict[str, float] = field(default_factory=dict)
    armature: dict[str, float] = field(default_factory=dict)
    ball_ranges: dict[str, float] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    description: RobotDescription | None = None
    floating_base: bool = False
    base_placement: pin.SE3 = field(default_factory=pin.SE3.Identity)
    floor: bool | float | None = None
    tool_frames: list[str] = field(default_factory=list)
    inferred: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    source: RobotSource | None = None

    def __post_init__(self) -> None:
        if self.q0.size == 0:
            self.q0 = pin.neutral(self.model)

    @property
    def actuated_joint_names(self) -> list[str]:
        """Controlled joints followed by gripper joints: the joints MuJoCo gets actuators on."""
        return list(self.controlled_joint_names) + [
            j for j in self.gripper_joint_names if j not in self.controlled_joint_names
        ]

    @property
    def joint_names(self) -> list[str]:
        """Every scalar joint with a coordinate of its own (revolute, prismatic, continuous),
        in model order: the joint space of this robot's :class:`~pinkctl.core.state.JointState`."""
        return scalar_joint_names(self.model)

    def home_positions(self) -> dict[str, float]:
        """Home position of every scalar joint, by name (continuous: the angle)."""
        names = self.joint_names
        return dict(
            zip(names, configuration_to_joint_positions(self.q0, self.model, names).tolist())
        )

    def report(self) -> str:
        """What was loaded, what was inferred and why, and the loader's warnings."""
        lines = [
            f"robot {self.name!r} from {self.urdf_path}",
            f"  controlled joints ({len(self.controlled_joint_names)}): "
            + ", ".join(self.controlled_joint_names),
            f"  tool frame: {self.tool_frame}",
        ]
        if self.gripper_joint_names:
            lines.append("  gripper joints: " + ", ".join(self.gripper_joint_names))
        for key, reason in self.inferred.items():
            lines.append(f"  inferred {key}: {reason}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)
