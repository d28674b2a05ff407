"""Interactive control: draggable IK targets, a web page and MuJoCo's viewer.

The controller side needs nothing beyond pinkctl's core dependencies:

* :class:`IkTarget` (:mod:`.target`): the MuJoCo/React seed's IK hook in Python names
  (enable/disable, ``move_target`` with a minimum-jerk animation, ``sync_target_to_site``,
  ``solve_ik``, ``target_pose``, a custom ``ik_solve_fn``, joints from the site's chain or
  chosen by names / regular expressions);
* :func:`dls_solve_fn` (:mod:`.solve_fn`): the seed's built-in DLS solver with its options
  (iterations, damping, weights, tolerance) as an ``ik_solve_fn``;
* :class:`InteractiveScene` (:mod:`.scene`): a simulation with several targets, stepped by
  hand or in real time;
* :class:`TargetRecorder`, :class:`RecordedSession`, :class:`SampledPoseTrajectory`
  (:mod:`.recording`): dragged poses saved and replayed.

The front ends import their extra dependencies only when used: :mod:`.web` (the ``viser``
page of ``pinkctl view``, ``pip install pinkctl[view]``) and :mod:`.native` (MuJoCo's
passive viewer, ``pinkctl view --native``).
"""

from .chain import JointSelection, select_joints
from .motion import MinimumJerkMove, minimum_jerk
from .pose import TargetPose
from .recording import RecordedSession, SampledPoseTrajectory, TargetRecorder
from .scene import InteractiveScene, make_scene
from .solve_fn import dls_solve_fn
from .target import IkSolveFn, IkTarget

__all__ = [
    "IkSolveFn",
    "IkTarget",
    "InteractiveScene",
    "JointSelection",
    "MinimumJerkMove",
    "RecordedSession",
    "SampledPoseTrajectory",
    "TargetPose",
    "TargetRecorder",
    "dls_solve_fn",
    "make_scene",
    "minimum_jerk",
    "select_joints",
]
