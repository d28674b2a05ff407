"""What a simulation measures: site poses and velocities, read from MuJoCo's data.

Poses and velocities are world-frame; quaternions are (w, x, y, z) as MuJoCo converts its
rotation matrices (``mju_mat2Quat``: unit, sign as MuJoCo gives it). A site's velocity is its
linear and angular velocity in the world-aligned frame at the site.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import mujoco
import numpy as np

from ..core.state import RootState, SiteSpace, SpatialState
from ..errors import InputError

__all__ = ["root_state", "site_pose", "site_state"]


def _site_id(site_ids: Mapping[str, int], name: str) -> int:
    site = site_ids.get(name, -1)
    if site < 0:
        raise InputError(f"unknown site {name!r}; sites are {list(site_ids)}")
    return site


def site_pose(
    data: mujoco.MjData, site_ids: Mapping[str, int], name: str
) -> tuple[np.ndarray, np.ndarray]:
    """World pose of a site: (position [m] (3,), quaternion (w, x, y, z) (4,)).

    Raises:
        InputError: A name missing from ``site_ids``.
    """
    site = _site_id(site_ids, name)
    quaternion = np.empty(4)
    mujoco.mju_mat2Quat(quaternion, data.site_xmat[site])
    return data.site_xpos[site].copy(), quaternion


def site_state(
    model: mujoco.MjModel, data: mujoco.MjData, site_ids: Mapping[str, int], names: Sequence[str]
) -> SpatialState:
    """Poses and velocities of the sites ``names``, in that order.

    Raises:
        InputError: A name missing from ``site_ids``.
    """
    names = list(names)
    positions = np.empty((len(names), 3))
    orientations = np.empty((len(names), 4))
    linear = np.empty((len(names), 3))
    angular = np.empty((len(names), 3))
    velocity = np.empty(6)
    for k, name in enumerate(names):
        positions[k], orientations[k] = site_pose(data, site_ids, name)
        # object velocity in the world-aligned frame at the site: [angular, linear]
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_SITE, site_ids[name], velocity, 0)
        angular[k], linear[k] = velocity[:3], velocity[3:]
    return _site_space(tuple(names)).state(positions, orientations, linear, angular)


_site_space = lru_cache(maxsize=64)(SiteSpace)  # names checked once, not every tick


def root_state(model: mujoco.MjModel, data: mujoco.MjData) -> RootState | None:
    """The pose and base-frame twist of the model's first joint when it is a free joint (a
    floating base), else None."""
    if model.njnt == 0 or model.jnt_type[0] != mujoco.mjtJoint.mjJNT_FREE:
        return None
    first, dof = model.jnt_qposadr[0], model.jnt_dofadr[0]
    pose = data.qpos[first : first + 7]
    rotation = np.empty(9)
    mujoco.mju_quat2Mat(rotation, pose[3:])
    linear = rotation.reshape(3, 3).T @ data.qvel[dof : dof + 3]  # MuJoCo's is world-frame
    return RootState(pose[:3], pose[3:], linear, data.qvel[dof + 3 : dof + 6])
