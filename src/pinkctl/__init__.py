"""pinkctl: QP-based differential inverse kinematics control of robots.

A robot described once (URDF + SRDF) is loaded into Pinocchio for the controller and compiled
into MuJoCo for simulation. Controllers share Isaac Sim's ``BaseController`` interface
(``reset`` / ``forward`` on :class:`RobotState`) and compose into larger ones.
"""

# first: MuJoCo's OpenGL back-end is chosen before anything imports mujoco (headless machines)
from . import _gl  # noqa: F401, I001

from .controllers import (
    BaseController,
    ChainedController,
    CombinedController,
    ControllerContainer,
    ControllerStatus,
    GripperController,
    HoldingTrajectoryFollower,
    ParallelController,
    PinkIKController,
    SelectableController,
    SequentialController,
    TrajectoryFollower,
)
from .core.joints import (
    JointSpaceMap,
    configuration_to_joint_positions,
    joint_positions_to_configuration,
    velocity_to_joint_state,
)
from .core.mujoco_qpos import from_mujoco_qpos, to_mujoco_qpos
from .core.poses import SitePoseReader, pose_to_se3, se3_to_pose
from .core.robot import PinkRobot, load_pink_robot, load_pink_supported_robot, supported_robots
from .core.state import (
    JointSpace,
    JointState,
    RobotState,
    RootState,
    SiteSpace,
    SpatialState,
    combine_robot_states,
)
from .errors import (
    ConfigurationError,
    DescriptionNotFoundError,
    InputError,
    MissingDependencyError,
    PinkctlError,
    PinkctlWarning,
    SolverError,
    WorkerError,
)
from .ik import (
    IKOptions,
    IKPool,
    IKResult,
    IKSolver,
    LocalOptions,
    SearchOptions,
    find_ik,
    clear_solver_cache,
    find_ik_batch,
    local_ik,
    retarget_poses,
)
from .qp import BallRangeLimit, CollisionLimit
from .sim import ClosedLoopLog, MujocoSimulation, run_closed_loop
from .trajectories import (
    CircleTrajectory,
    FigureEightTrajectory,
    MinimalTimeJointTrajectory,
    Path,
    PoseWaypointTrajectory,
    Trajectory,
)
from .world import CollisionScene, RobotGeometry, World

__all__ = [
    "BallRangeLimit",
    "CollisionLimit",
    "BaseController",
    "ChainedController",
    "CircleTrajectory",
    "ClosedLoopLog",
    "CollisionScene",
    "CombinedController",
    "ConfigurationError",
    "ControllerContainer",
    "ControllerStatus",
    "DescriptionNotFoundError",
    "FigureEightTrajectory",
    "GripperController",
    "HoldingTrajectoryFollower",
    "IKOptions",
    "IKResult",
    "IKSolver",
    "IKPool",
    "InputError",
    "MissingDependencyError",
    "JointSpaceMap",
    "JointSpace",
    "JointState",
    "LocalOptions",
    "MinimalTimeJointTrajectory",
    "MujocoSimulation",
    "ParallelController",
    "Path",
    "PinkIKController",
    "PinkRobot",
    "PinkctlError",
    "PinkctlWarning",
    "PoseWaypointTrajectory",
    "RobotGeometry",
    "RobotState",
    "RootState",
    "SearchOptions",
    "SelectableController",
    "SequentialController",
    "SitePoseReader",
    "SolverError",
    "WorkerError",
    "SiteSpace",
    "SpatialState",
    "Trajectory",
    "TrajectoryFollower",
    "World",
    "combine_robot_states",
    "configuration_to_joint_positions",
    "clear_solver_cache",
    "find_ik",
    "find_ik_batch",
    "from_mujoco_qpos",
    "joint_positions_to_configuration",
    "load_pink_robot",
    "load_pink_supported_robot",
    "local_ik",
    "pose_to_se3",
    "retarget_poses",
    "run_closed_loop",
    "se3_to_pose",
    "supported_robots",
    "to_mujoco_qpos",
    "velocity_to_joint_state",
]

__version__ = "0.1.0"
