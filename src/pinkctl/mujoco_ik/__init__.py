"""IK on a MuJoCo model directly: no Pinocchio model, ball and free joints included.

* :func:`solve_joints` (:mod:`.solve_joints`): the MuJoCo/React seed's ``solveJoints``,
  damped least squares with MuJoCo's analytic site Jacobian on ``model.nq`` configurations,
  returning a :class:`JointSolution`;
* :func:`solve_ik`, :func:`compute_ik_levenberg_marquardt`, :func:`compute_ik_pseudoinverse`
  (:mod:`.lerobot`): the lerobot SO-101 environment's helpers, with its signatures;
* :mod:`.joints`: the joint selection (a site's chain by default), Jacobian columns, limits.

For a robot pinkctl loaded, :func:`pinkctl.local_ik` (Pinocchio, QP, limits, several frames)
remains the solver of choice; these work on any MJCF, with the model MuJoCo simulates.
Conversions between the two models' configurations: :func:`pinkctl.to_mujoco_qpos` and
:func:`pinkctl.from_mujoco_qpos`.
"""

from .joints import chain_joints, dof_columns, project_to_limits
from .lerobot import (
    DEFAULT_ORIENTATION_WEIGHT,
    DOWN,
    compute_ik_levenberg_marquardt,
    compute_ik_pseudoinverse,
    solve_ik,
)
from .solve_joints import JointSolution, solve_joints

__all__ = [
    "DEFAULT_ORIENTATION_WEIGHT",
    "DOWN",
    "JointSolution",
    "chain_joints",
    "compute_ik_levenberg_marquardt",
    "compute_ik_pseudoinverse",
    "dof_columns",
    "project_to_limits",
    "solve_ik",
    "solve_joints",
]
