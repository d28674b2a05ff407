"""Scene pieces shared by the environments: cameras, goal markers and the free block.

All of them are added to the robot's :class:`mujoco.MjSpec` through
``MujocoSimulation.from_robot(..., spec_callback=...)``; the block is re-sized, re-coloured
and placed in the compiled model at every reset (:class:`FreeBlock`).
"""

from __future__ import annotations

import colorsys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np
import pinocchio as pin

from pinkctl import MujocoSimulation, PinkRobot

from ..errors import InputError
from .placement import Placement

__all__ = [
    "FreeBlock",
    "add_point_frame",
    "add_point_site",
    "build_simulation",
    "add_front_camera",
    "add_goal_marker",
    "limit_margin",
    "look_at_xyaxes",
    "narrow_ik_limits",
    "stiff_contact",
    "stiffen_joint_limits",
]

STIFF_SOLREF = (0.004, 1.0)  # [s], damping ratio: MuJoCo raises it to 2 timesteps if needed
STIFF_SOLIMP = (0.99, 0.999, 0.001, 0.5, 2.0)
LIMIT_MARGIN = 0.04  # [rad] (at most 5 % of a joint's range)


def stiff_contact() -> dict[str, list[float]]:
    """``solref`` / ``solimp`` keyword arguments of a geom for near-rigid contacts.

    MuJoCo's default contacts are soft enough that a light block squeezed between a jaw and
    the table sinks several millimetres into it; with these on the block and the table it
    sinks less than a millimetre.
    """
    return {"solref": list(STIFF_SOLREF), "solimp": list(STIFF_SOLIMP)}


def limit_margin(low: float, high: float) -> float:
    """Margin of a joint range [low, high]: ``min(LIMIT_MARGIN, 5 % of the range)``."""
    return min(LIMIT_MARGIN, 0.05 * float(high - low))


def stiffen_joint_limits(spec: mujoco.MjSpec) -> None:
    """Make the position limits of every hinge and slide joint near-rigid and active early.

    Each limit constraint gets :data:`STIFF_SOLREF`, :data:`STIFF_SOLIMP` and a margin of
    :func:`limit_margin`: it
    starts pushing back that far inside the range, so a joint driven hard toward its limit (a
    servo slamming a jaw shut, an arm thrown by random actions) stops inside the range
    instead of a soft constraint letting it overshoot by a tenth of a radian. The IK's own
    range is narrowed by the same margin (:func:`narrow_ik_limits`), so the servos are never
    asked to push into that zone.
    """
    scalar = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    for joint in spec.joints:
        low, high = joint.range
        if joint.type not in scalar or not low < high:
            continue
        joint.solref_limit = list(STIFF_SOLREF)
        joint.solimp_limit = list(STIFF_SOLIMP)
        joint.margin = limit_margin(low, high)


def narrow_ik_limits(robot: PinkRobot) -> None:
    """Narrow the position range of the robot's controlled joints in ``robot.model`` by
    :func:`limit_margin` at each end (the IK then commands only inside it)."""
    model = robot.model
    lower = np.array(model.lowerPositionLimit, dtype=float)
    upper = np.array(model.upperPositionLimit, dtype=float)
    for name in robot.controlled_joint_names:
        joint = model.joints[model.getJointId(name)]
        if joint.nq != 1:
            continue  # continuous joints have no range
        index = joint.idx_q
        margin = limit_margin(lower[index], upper[index])
        lower[index] += margin
        upper[index] -= margin
    model.lowerPositionLimit = lower
    model.upperPositionLimit = upper


def add_point_frame(
    robot: PinkRobot, name: str, *, parent_frame: str, offset: Sequence[float]
) -> None:
    """Add a frame to ``robot.model`` at ``offset`` [m] in ``parent_frame`` (same axes).

    ``robot.data`` is re-created for the larger model. Use it on a robot of your own (each
    :func:`~pinkctl.load_pink_supported_robot` call returns a fresh one).

    Raises:
        ValueError: If ``name`` already exists, ``parent_frame`` does not, or ``offset`` is not
            3 finite numbers.
    """
    model = robot.model
    if model.existFrame(name):
        raise InputError(f"frame {name!r} already exists in the model")
    if not model.existFrame(parent_frame):
        raise InputError(f"parent_frame {parent_frame!r} is not a frame of the model")
    shift = np.asarray(offset, dtype=float).reshape(-1)
    if shift.shape != (3,) or not np.all(np.isfinite(shift)):
        raise InputError(f"offset must be 3 finite numbers [m], got {offset!r}")
    parent_id = model.getFrameId(parent_frame)
    parent = model.frames[parent_id]
    placement = parent.placement * pin.SE3(np.eye(3), shift)
    model.addFrame(
        pin.Frame(name, parent.parentJoint, parent_id, placement, pin.FrameType.OP_FRAME)
    )
    robot.data = model.createData()


def add_point_site(
    spec: mujoco.MjSpec, name: str, *, parent_body: str, offset: Sequence[float]
) -> None:
    """Add the MuJoCo twin of :func:`add_point_frame`: a site at ``offset`` [m] in a body."""
    spec.body(parent_body).add_site(
        name=name, pos=[float(v) for v in offset], size=[0.004, 0.0, 0.0], rgba=[0, 0.6, 1, 0.0]
    )


def look_at_xyaxes(eye: np.ndarray, target: np.ndarray) -> list[float]:
    """MuJoCo camera ``xyaxes`` for a camera at ``eye`` looking at ``target`` (z up)."""
    forward = np.asarray(target, dtype=float) - np.asarray(eye, dtype=float)
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    return [*right.tolist(), *up.tolist()]


def add_front_camera(
    spec: mujoco.MjSpec, eye: np.ndarray, target: np.ndarray, *, fovy: float = 45.0
) -> None:
    """Add the fixed camera ``"front"`` at ``eye`` [m] looking at ``target`` [m]."""
    spec.worldbody.add_camera(
        name="front", pos=[float(v) for v in eye], xyaxes=look_at_xyaxes(eye, target), fovy=fovy
    )


def add_goal_marker(
    spec: mujoco.MjSpec, name: str, *, shape: str, size: float, rgba: tuple[float, ...]
) -> None:
    """Add a visual-only mocap body ``name`` (a ``"sphere"`` of radius ``size`` or a flat
    ``"disc"`` of radius ``size``), parked below the floor until a reset places it."""
    body = spec.worldbody.add_body(name=name, mocap=True, pos=[0.0, 0.0, -1.0])
    if shape == "sphere":
        geom_type, geom_size = mujoco.mjtGeom.mjGEOM_SPHERE, [size, 0.0, 0.0]
    else:
        geom_type, geom_size = mujoco.mjtGeom.mjGEOM_CYLINDER, [size, 0.0005, 0.0]
    body.add_geom(
        name=name, type=geom_type, size=geom_size, rgba=list(rgba), contype=0, conaffinity=0
    )


@dataclass(frozen=True)
class BlockLook:
    """One draw of the block's randomised appearance: edge length [m] and RGBA colour."""

    edge: float
    rgba: tuple[float, float, float, float]


class FreeBlock:
    """A cube with a free joint: added to a spec, then re-sized and placed at each reset.

    The block body, its free joint and its box geom are all called ``name``. Its mass is fixed;
    the edge length and the colour are either fixed (:meth:`fixed_look`: the middle of
    ``edge_range``, :data:`FIXED_RGBA`) or drawn (:meth:`draw`):

    * edge: uniform in ``edge_range`` [m];
    * colour: hue uniform in [0, 1), saturation and value uniform in [0.6, 1] (HSV), opaque.

    Args:
        name: Body, joint and geom name.
        edge_range: (low, high) edge length [m].
        mass: Block mass [kg].
        friction: MuJoCo friction (sliding, torsional, rolling) of the block.
    """

    SATURATION = (0.6, 1.0)
    VALUE = (0.6, 1.0)
    #: Colour of the fixed look (and of the block as added to the spec).
    FIXED_RGBA = (0.8, 0.2, 0.2, 1.0)

    def __init__(
        self,
        name: str = "block",
        *,
        edge_range: tuple[float, float],
        mass: float,
        friction: tuple[float, float, float],
    ) -> None:
        self.name = name
        self.edge_range = (float(edge_range[0]), float(edge_range[1]))
        self.mass = float(mass)
        self.friction = friction
        self._ids: tuple[int, int, int] | None = None

    def add_to(self, spec: mujoco.MjSpec) -> None:
        """Add the block (largest edge, parked away from the robot) to ``spec``."""
        half = self.edge_range[1] / 2.0
        body = spec.worldbody.add_body(name=self.name, pos=[1.0, 1.0, half])
        body.add_freejoint(name=self.name)
        body.add_geom(
            name=self.name,
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[half, half, half],
            mass=self.mass,
            friction=list(self.friction),
            condim=4,  # torsional friction: a pinched block does not spin about the pinch
            rgba=list(self.FIXED_RGBA),
            **stiff_contact(),
        )

    def fixed_look(self) -> BlockLook:
        """The same look at every reset: the middle of ``edge_range``, :data:`FIXED_RGBA`."""
        return BlockLook(edge=sum(self.edge_range) / 2.0, rgba=self.FIXED_RGBA)

    def draw(self, rng: np.random.Generator) -> BlockLook:
        """Draw an edge length and a colour (two and three uniform numbers, in that order)."""
        edge = float(rng.uniform(*self.edge_range))
        hue = float(rng.uniform(0.0, 1.0))
        saturation = float(rng.uniform(*self.SATURATION))
        value = float(rng.uniform(*self.VALUE))
        red, green, blue = colorsys.hsv_to_rgb(hue, saturation, value)
        return BlockLook(edge=edge, rgba=(red, green, blue, 1.0))

    def _lookup(self, model: mujoco.MjModel) -> tuple[int, int, int]:
        if self._ids is None:
            body = model.body(self.name).id
            geom = model.geom(self.name).id
            qpos = int(model.joint(self.name).qposadr[0])
            self._ids = (int(body), int(geom), qpos)
        return self._ids

    def apply_look(self, model: mujoco.MjModel, data: mujoco.MjData, look: BlockLook) -> None:
        """Resize and recolour the compiled block (collision bounds and inertia follow)."""
        body, geom, _ = self._lookup(model)
        half = look.edge / 2.0
        model.geom_size[geom] = [half, half, half]
        model.geom_rbound[geom] = float(np.sqrt(3.0) * half)
        model.geom_aabb[geom] = [0.0, 0.0, 0.0, half, half, half]
        model.geom_rgba[geom] = look.rgba
        model.body_inertia[body] = np.full(3, self.mass * (2.0 * half) ** 2 / 6.0)
        mujoco.mj_setConst(model, data)

    def place(
        self, model: mujoco.MjModel, data: mujoco.MjData, position: np.ndarray, yaw: float
    ) -> None:
        """Put the block at rest at ``position`` [m] (its centre), turned by ``yaw`` [rad]."""
        _, _, qpos = self._lookup(model)
        data.qpos[qpos : qpos + 3] = position
        data.qpos[qpos + 3 : qpos + 7] = [np.cos(yaw / 2.0), 0.0, 0.0, np.sin(yaw / 2.0)]
        dof = int(model.joint(self.name).dofadr[0])
        data.qvel[dof : dof + 6] = 0.0

    def position(self, model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
        """World position of the block's centre [m]."""
        body, _, _ = self._lookup(model)
        return data.xpos[body].copy()

    def half_size(self, model: mujoco.MjModel) -> float:
        """Half the current edge length [m]."""
        _, geom, _ = self._lookup(model)
        return float(model.geom_size[geom][0])


def build_simulation(
    robot: PinkRobot,
    spec_callback: Callable[[mujoco.MjSpec], None],
    *,
    physics_dt: float,
    floor: bool = False,
    placement: Placement | None = None,
) -> MujocoSimulation:
    """The simulation of an environment: ``robot`` compiled by
    :meth:`~pinkctl.MujocoSimulation.from_robot` (no target marker), its joint limits
    stiffened (:func:`stiffen_joint_limits`), the task's objects added by ``spec_callback``
    (in the robot's base frame), then the whole scene moved to ``placement``. Lights cast no
    shadows: a software renderer (llvmpipe) spends ~200 ms per frame on MuJoCo's 4096^2 shadow
    maps and 10-20 ms on the frame itself.

    ``floor``: add pinkctl's floor (below the robot's lowest point at home, or at the robot's
    configured height) instead of leaving the ground to ``spec_callback``.
    """

    def build(spec: mujoco.MjSpec) -> None:
        stiffen_joint_limits(spec)
        spec_callback(spec)
        for light in spec.lights:
            light.castshadow = False
        if placement is not None:
            placement.wrap(spec)

    return MujocoSimulation.from_robot(
        robot, timestep=physics_dt, floor=floor, target_marker=False, spec_callback=build
    )
