"""The Isaac Sim PINK extension's transform utilities (``impl.utils``), re-exported.

Each name is the extension's; the function is pinkctl's, defined where it says:

* :func:`isaac_sim_position_quaternion_to_se3`: :func:`pinkctl.core.poses.pose_to_se3`
  (position (3,) [m], quaternion (w, x, y, z)) -> ``pin.SE3``;
* :func:`se3_to_isaac_sim_position_quaternion`: :func:`pinkctl.core.poses.se3_to_pose`;
* :func:`map_joint_positions_to_pinocchio`:
  :func:`pinkctl.core.joints.joint_positions_to_configuration` (named joint positions into
  a Pinocchio configuration ``q``);
* :func:`map_pinocchio_velocity_to_joint_state`:
  :func:`pinkctl.core.joints.velocity_to_joint_state` (a tangent velocity integrated over
  ``dt`` into a :class:`~pinkctl.JointState` of positions and velocities).

Arguments, results and errors are the extension's (``ValueError`` on wrong sizes; pinkctl's
:class:`~pinkctl.errors.InputError` is one).
"""

from ..core.joints import map_joint_positions_to_pinocchio, map_pinocchio_velocity_to_joint_state
from ..core.poses import isaac_sim_position_quaternion_to_se3, se3_to_isaac_sim_position_quaternion

__all__ = [
    "isaac_sim_position_quaternion_to_se3",
    "map_joint_positions_to_pinocchio",
    "map_pinocchio_velocity_to_joint_state",
    "se3_to_isaac_sim_position_quaternion",
]
