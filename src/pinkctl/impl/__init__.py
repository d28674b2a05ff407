"""The Isaac Sim PINK extension's ``impl`` module path, for ported code.

Code written for ``isaacsim.robot_motion.pink`` imports its transform utilities from
``impl.utils``; :mod:`pinkctl.impl.utils` re-exports pinkctl's functions under those names,
so ``from pinkctl.impl.utils import map_joint_positions_to_pinocchio`` works. The functions
live in :mod:`pinkctl.core.poses` and :mod:`pinkctl.core.joints`.
"""

from . import utils

__all__ = ["utils"]
