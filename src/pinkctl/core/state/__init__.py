"""Robot states: what a controller reads and what it returns.

Every quantity is addressed by *name* inside an ordered *space* (a list of names): a
:class:`JointState` lives in a joint space (for example a simulator's actuated joint names),
a :class:`SpatialState` in a space of frame names (links or sites). Each state stores full
arrays over its space plus a boolean validity mask, so "which fields are commanded" is just
the mask, and merging two states is an element-wise union.

Conventions:

- numpy ``float64`` data, ``bool`` masks. Stored arrays are private copies marked read-only,
  so a state cannot be changed after construction; build a new one instead. The fast path
  is the exception: :meth:`JointSpace.state` / :meth:`SiteSpace.state` wrap the caller's
  float64 arrays without copying them (the caller does not write them while the state is
  in use; see :mod:`pinkctl.core.state.spaces`).
- Units: joint positions in rad (revolute) or m (prismatic), velocities per second, efforts
  in N·m or N. Frame positions in m, orientations as unit quaternions ``(w, x, y, z)``,
  linear velocities in m/s, angular velocities in rad/s.
- Frames: link and site poses are expressed in the world frame; the root velocities of a
  mobile base are expressed in the base (body) frame.
- Entries that are not given hold 0 and are marked invalid.
- Malformed input raises ``ValueError`` naming the argument. NaN and infinite values are
  rejected everywhere, as are all-zero quaternions. Quaternions are stored as given (not
  normalised).

The semantics follow Isaac Sim's experimental motion-generation states (``from_name`` /
``from_index`` rules, compact getters ordered by the space, ``combine_robot_states`` returning
None on any overlap).
"""

from ._space import QUATERNION_MIN_NORM, NameSpace, name_space
from .joint_state import JointState
from .robot_state import RobotState, combine_robot_states
from .root_state import RootState
from .spaces import JointSpace, SiteSpace
from .spatial_state import SpatialState

__all__ = [
    "QUATERNION_MIN_NORM",
    "JointSpace",
    "JointState",
    "NameSpace",
    "RobotState",
    "RootState",
    "SiteSpace",
    "SpatialState",
    "combine_robot_states",
    "name_space",
]
