"""Argument checks of the MuJoCo-level IK: models, objects by name or id, counts (vectors:
:func:`pinkctl._validation.real_vector`).

Each raises :class:`~pinkctl.errors.InputError` naming the argument; nothing here touches
``data``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import mujoco
import numpy as np

from ..errors import InputError

__all__ = ["count", "model_and_data", "object_id"]


def model_and_data(model: Any, data: Any) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """``(model, data)`` if they are a ``MjModel`` and an ``MjData`` of the same size."""
    if not isinstance(model, mujoco.MjModel):
        raise InputError(f"model must be a mujoco.MjModel, got {type(model).__name__}")
    if not isinstance(data, mujoco.MjData):
        raise InputError(f"data must be a mujoco.MjData, got {type(data).__name__}")
    if data.qpos.size != model.nq or data.qvel.size != model.nv:
        raise InputError("data was not made for model (its qpos / qvel sizes differ)")
    return model, data


def object_id(model: mujoco.MjModel, value: Any, kind: mujoco.mjtObj, name: str) -> int:
    """The id of a site or joint given by name or id."""
    total = {mujoco.mjtObj.mjOBJ_SITE: model.nsite, mujoco.mjtObj.mjOBJ_JOINT: model.njnt}[kind]
    what = "site" if kind == mujoco.mjtObj.mjOBJ_SITE else "joint"
    if isinstance(value, str):
        found = mujoco.mj_name2id(model, kind, value)
        if found < 0:
            names = [mujoco.mj_id2name(model, kind, i) for i in range(total)]
            raise InputError(f"{name}: no {what} named {value!r}; the model has {names}")
        return int(found)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be a {what} name or id, got {value!r}")
    if not 0 <= int(value) < total:
        raise InputError(f"{name}: {what} id {int(value)} is not in [0, {total})")
    return int(value)


def count(value: Any, name: str, *, low: int) -> int:
    """``value`` as an int ``>= low`` (booleans and floats rejected; the seed's wording)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer >= {low}, got {value!r}")
    if int(value) < low:
        raise InputError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


#: MuJoCo's joint types of one coordinate (hinge, slide).
SCALAR = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))


@contextmanager
def restored(model: mujoco.MjModel, data: mujoco.MjData) -> Iterator[None]:
    """Restores ``data.qpos`` and the kinematics on leaving (also on an exception)."""
    saved = data.qpos.copy()
    try:
        yield
    finally:
        data.qpos[:] = saved
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
