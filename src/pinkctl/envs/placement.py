"""Placement: where a robot's base stands in the world, and the frames of an observation.

A :class:`Placement` is the pose of the robot's base in the MuJoCo world: a position [m] and
a yaw [rad] about the world's vertical (gravity stays along -z, so a placed scene behaves
exactly as the unplaced one). pinkctl's environments lay out their whole task in the robot's
**base frame** (table, block, goals, cameras, target bounds: the Pinocchio model's world is
the base frame) and :meth:`Placement.wrap` moves all of it, as one rigid body, to the
placement. The world frame is then only a reference that a policy may or may not observe:

* ``frame="world"``: positions, orientations and velocities of the observation, and the
  action's position deltas, are in world axes (the seed's convention);
* ``frame="base"``: they are in the base frame, so the observation and the effect of an
  action do not depend on where the robot stands (a policy trained in the base frame works
  at any placement; one trained in the world frame works at one spot only).

At the default placement (origin, yaw 0) both frames are the world frame and nothing is
moved: the scene is built exactly as without a placement.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
from numpy.typing import ArrayLike

from .._validation import choice, real_array, real_number
from ..errors import InputError

__all__ = ["FRAMES", "MAX_BASE_DISTANCE", "Placement"]

#: Frames of the observations and actions.
FRAMES = ("world", "base")
#: Largest distance of the base from the world origin [m] (beyond it float32 observations
#: lose millimetres).
MAX_BASE_DISTANCE = 1000.0
PLACEMENT_FRAME = "pinkctl_base_placement"


class Placement:
    """The robot base's pose in the world: ``p_world = R(yaw) p_base + position``.

    Args:
        position: (3,) base position in the world [m], each coordinate within
            :data:`MAX_BASE_DISTANCE`.
        yaw: Rotation of the base about the world z axis [rad], finite.
        frame: ``"world"`` or ``"base"``: the frame of the observations and action deltas
            that :meth:`observed_point` and friends convert into.

    Raises:
        ValueError: (:class:`~pinkctl.errors.InputError`) naming ``base_position``,
            ``base_yaw`` or ``frame``.
    """

    def __init__(
        self, position: ArrayLike = (0.0, 0.0, 0.0), yaw: float = 0.0, frame: str = "world"
    ) -> None:
        self.position = real_array(position, "base_position [m]", (3,))
        if np.any(np.abs(self.position) > MAX_BASE_DISTANCE):
            raise InputError(
                f"base_position [m] must be within {MAX_BASE_DISTANCE:g} m of the origin on "
                f"each axis, got {position!r}"
            )
        self.yaw = real_number(yaw, "base_yaw [rad]")
        self.frame = choice(frame, "frame", FRAMES)
        c, s = np.cos(self.yaw), np.sin(self.yaw)
        #: Rotation of the base frame in the world (3, 3).
        self.rotation = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        #: The same rotation as a quaternion (w, x, y, z).
        self.quaternion = np.array([np.cos(self.yaw / 2.0), 0.0, 0.0, np.sin(self.yaw / 2.0)])
        self.identity = not np.any(self.position) and self.yaw == 0.0

    # ------------------------------------------------------------------ base <-> world
    def to_world(self, point_base: ArrayLike) -> np.ndarray:
        """A point (3,) or points (k, 3) from the base frame to the world [m]."""
        return np.asarray(point_base, dtype=float) @ self.rotation.T + self.position

    def to_base(self, point_world: ArrayLike) -> np.ndarray:
        """A point (3,) or points (k, 3) from the world to the base frame [m]."""
        return (np.asarray(point_world, dtype=float) - self.position) @ self.rotation

    def vector_to_world(self, vector_base: ArrayLike) -> np.ndarray:
        """A free vector (a displacement, a velocity) from base axes to world axes."""
        return np.asarray(vector_base, dtype=float) @ self.rotation.T

    def vector_to_base(self, vector_world: ArrayLike) -> np.ndarray:
        """A free vector from world axes to base axes."""
        return np.asarray(vector_world, dtype=float) @ self.rotation

    def rotation_to_base(self, rotation_world: np.ndarray) -> np.ndarray:
        """An orientation (3, 3) from the world to the base frame."""
        return self.rotation.T @ rotation_world

    # ------------------------------------------------------------------ observation frame
    def observed_point(self, point_base: ArrayLike) -> np.ndarray:
        """A point (3,) or points (k, 3) of the base frame in the observation frame [m]."""
        if self.frame == "base":
            return np.asarray(point_base, dtype=float)
        return self.to_world(point_base)

    def observed_vector(self, vector_base: ArrayLike) -> np.ndarray:
        """A free vector in base axes (a velocity) in the observation frame's axes."""
        if self.frame == "base":
            return np.asarray(vector_base, dtype=float)
        return self.vector_to_world(vector_base)

    def observed_rotation(self, rotation_base: np.ndarray) -> np.ndarray:
        """An orientation (3, 3) in the base frame as seen in the observation frame."""
        return rotation_base if self.frame == "base" else self.rotation @ rotation_base

    def action_to_base(self, delta: np.ndarray) -> np.ndarray:
        """An action's position delta, given in the observation frame's axes, in base axes."""
        return delta if self.frame == "base" else self.vector_to_base(delta)

    def action_from_world(self, delta_world: ArrayLike) -> np.ndarray:
        """A displacement in world axes as an action delta in the observation frame's axes
        (what a scripted policy that plans in the world sends)."""
        if self.frame == "world":
            return np.asarray(delta_world, dtype=float)
        return self.vector_to_base(delta_world)

    # ------------------------------------------------------------------ the MuJoCo scene
    def wrap(self, spec: mujoco.MjSpec) -> None:
        """Move everything directly under ``spec``'s world body (the robot, the scene's
        bodies, geoms, sites, cameras, lights and frames) into one frame at the placement.

        Called once the scene is complete, just before it is compiled. Free joints and mocap
        bodies start at the moved pose; what a task writes at run time (``qpos`` of a free
        body, ``mocap_pos``) must be converted with :meth:`to_world`. Nothing is done at the
        default placement.
        """
        if self.identity:
            return
        world = spec.worldbody
        kinds = ("bodies", "geoms", "sites", "cameras", "lights", "frames")
        children: list[Any] = [child for kind in kinds for child in getattr(world, kind)]
        frame = world.add_frame(
            name=PLACEMENT_FRAME, pos=self.position.tolist(), quat=self.quaternion.tolist()
        )
        for child in children:
            child.set_frame(frame)
