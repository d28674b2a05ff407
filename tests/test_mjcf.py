"""MJCF models as their authors write them (issue 28): their own actuators, ball joints, free
joints, and the quaternion orders of Pinocchio (x, y, z, w) and MuJoCo (w, x, y, z)."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from pinkctl import (
    BallRangeLimit,
    InputError,
    MujocoSimulation,
    PinkIKController,
    RobotState,
    find_ik,
    load_pink_robot,
    to_mujoco_qpos,
)
from pinkctl.core.state import SiteSpace
from pinkctl.view import IkTarget

_LINK = """
<body name="l{k}" pos="{pos}">
  <joint name="j{k}" axis="{axis}" range="{range}" damping="0.5"/>
  <geom type="capsule" fromto="0 0 0 {tip}" size="0.02" mass="{mass}"/>
  {child}
</body>"""

ARM6 = """
<mujoco model="arm6">
  <compiler angle="radian"/>
  <worldbody>
    <body name="base">
      <geom type="cylinder" size="0.05 0.03" mass="1"/>
      {chain}
    </body>
  </worldbody>
  {actuators}
</mujoco>
"""


def _arm6_chain() -> str:
    """A 6-joint arm: yaw, pitch, pitch, roll, pitch, roll; the tool site 3 cm past l6; home
    (the middle of the ranges) with the elbow bent."""
    links = [
        ("0 0 0.05", "0 0 1", "0 0 0.2", 1.0, "-2.5 2.5"),
        ("0 0 0.2", "0 1 0", "0.25 0 0", 0.8, "-2 1"),
        ("0.25 0 0", "0 1 0", "0.2 0 0", 0.6, "-0.5 2.5"),
        ("0.2 0 0", "1 0 0", "0.05 0 0", 0.3, "-2.5 2.5"),
        ("0.05 0 0", "0 1 0", "0.05 0 0", 0.2, "-2 2.4"),
        ("0.05 0 0", "1 0 0", "0.02 0 0", 0.1, "-2.5 2.5"),
    ]
    child = '<site name="tip" pos="0.03 0 0"/>'
    for k in range(6, 0, -1):
        pos, axis, tip, mass, limits = links[k - 1]
        child = _LINK.format(k=k, pos=pos, axis=axis, tip=tip, mass=mass, range=limits, child=child)
    return child


POSITION_ACTUATORS = (
    "<actuator>"
    + "".join(f'<position name="a{k}" joint="j{k}" kp="200" kv="10"/>' for k in range(1, 7))
    + "</actuator>"
)

BALL_ARM = """
<mujoco model="ball_arm">
  <compiler angle="radian"/>
  <worldbody>
    <body name="base" pos="0 0 {height}">
      {free}
      <geom type="cylinder" size="0.05 0.03" mass="1"/>
      <body name="l1" pos="0 0 0.05">
        <joint name="j1" axis="0 0 1" range="-3 3" damping="1"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.03" mass="1"/>
        <body name="l2" pos="0 0 0.2">
          <joint name="shoulder" type="ball" range="0 1.0" damping="0.5"/>
          <geom type="capsule" fromto="0 0 0 0 0 0.3" size="0.025" mass="0.8"/>
          <body name="l3" pos="0 0 0.3">
            <joint name="elbow" axis="0 1 0" range="-2.5 2.5" damping="1"/>
            <geom type="capsule" fromto="0 0 0 0 0 0.25" size="0.02" mass="0.6"/>
            <site name="tip" pos="0 0 0.25"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _load(tmp_path, text: str, name: str, **kwargs):
    path = tmp_path / f"{name}.xml"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no velocity / acceleration limits in these files
        return load_pink_robot(path, tool_frame="tip", **kwargs)


def _sim(robot, **kwargs) -> MujocoSimulation:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MujocoSimulation.from_robot(robot, **kwargs)


def _ik_target_error(sim: MujocoSimulation, offset) -> float:
    """Tracking error [m] of the tip through an IkTarget after 6 s toward ``offset``."""
    target = IkTarget(sim)
    start, quaternion = sim.get_site_pose("tip")
    goal = start + np.asarray(offset)
    target.move_target(goal, quaternion)
    for _ in range(3000):
        target.step(sim.time)
        sim.step()
    return float(np.linalg.norm(sim.get_site_pose("tip")[0] - goal))


# ------------------------------------------------------------------ bug 1: own actuators
def test_own_position_actuators_are_the_servos_and_track(tmp_path) -> None:
    """A 6-joint MJCF with its own <position> actuators: 6 actuators (was 12), they are the
    servos, IkTarget writes them, and the tip tracks as the same scene without them does
    (was 27-34 mm short)."""
    own = _load(tmp_path, ARM6.format(chain=_arm6_chain(), actuators=POSITION_ACTUATORS), "own")
    bare = _load(tmp_path, ARM6.format(chain=_arm6_chain(), actuators=""), "bare")
    sim, plain = _sim(own), _sim(bare)
    assert sim.model.nu == 6 and plain.model.nu == 6
    assert sim.servo_actuators == {f"j{k}": f"a{k}" for k in range(1, 7)}
    assert "a1 on j1" in own.inferred["servos"] and "pinkctl" in bare.inferred["servos"]
    assert IkTarget(sim).actuator_names == [f"a{k}" for k in range(1, 7)]
    assert sim.model.actuator_gainprm[0, 0] == 200.0  # the file's gains are kept
    offset = [-0.05, 0.05, -0.05]
    assert _ik_target_error(sim, offset) < 1e-3
    assert _ik_target_error(plain, offset) < 1e-3


def test_other_actuators_are_replaced_and_gains_overridden(tmp_path) -> None:
    """A motor on an actuated joint is replaced by pinkctl's servo (one line says so); kp
    given to the simulation overrides a file's position actuator's gain."""
    actuators = POSITION_ACTUATORS.replace(
        '<position name="a1" joint="j1" kp="200" kv="10"/>', '<motor name="m1" joint="j1"/>'
    )
    robot = _load(tmp_path, ARM6.format(chain=_arm6_chain(), actuators=actuators), "motor")
    sim = _sim(robot, kp=300.0)
    assert sim.model.nu == 6
    assert sim.servo_actuators["j1"] == "j1" and sim.servo_actuators["j2"] == "a2"
    assert "m1" in robot.inferred["servos"] and "replacing" in robot.inferred["servos"]
    assert np.all(sim.model.actuator_gainprm[:, 0] == 300.0)


# ------------------------------------------------------------------ bug 2: ball joints
def _ball_robot(tmp_path, *, free: str = "", height: float = 0.0, **kwargs):
    return _load(tmp_path, BALL_ARM.format(free=free, height=height), "ball", **kwargs)


def _run_controller(robot, sim, goal, ticks: int = 3000) -> tuple[PinkIKController, float]:
    """Drive the tip toward ``goal`` (position only); returns the controller and the largest
    rotation angle of the shoulder it commanded."""
    controller = PinkIKController(
        robot,
        sim.joint_names,
        sim.site_names,
        dt=sim.timestep,
        orientation_cost=0.0,
        integrate_from="command",
    )
    assert controller.reset(sim.get_robot_state(), None, 0.0)
    setpoint = RobotState(sites=SiteSpace(["tip"]).state(np.asarray([goal])))
    largest = 0.0
    for _ in range(ticks):
        command = controller.forward(sim.get_robot_state(), setpoint, sim.time)
        assert command is not None and command.joints is not None
        axes = command.joints.get_positions(["shoulder:x", "shoulder:y", "shoulder:z"])
        largest = max(largest, float(np.linalg.norm(axes)))
        sim.apply(command)
        sim.step()
    return controller, largest


def test_ball_joint_is_controlled_and_simulated(tmp_path) -> None:
    """A ball joint in the chain: from_robot no longer raises KeyError; the joint is three
    coordinates (its rotation vector) with three servos; the tip tracks within 1 mm."""
    robot = _ball_robot(tmp_path)
    assert robot.controlled_joint_names == ["j1", "shoulder", "elbow"]
    assert robot.ball_ranges == {"shoulder": 1.0}
    sim = _sim(robot)
    axes = ["shoulder:x", "shoulder:y", "shoulder:z"]
    assert sim.joint_names == ["j1", *axes, "elbow"]
    assert sim.model.nu == 5 and [sim.servo_actuators[a] for a in axes] == axes
    goal = sim.get_site_pose("tip")[0] + [0.15, 0.1, -0.1]
    controller, largest = _run_controller(robot, sim, goal)
    assert any(isinstance(limit, BallRangeLimit) for limit in controller.limits)
    assert np.linalg.norm(sim.get_site_pose("tip")[0] - goal) < 1e-3
    assert 0.1 < largest < 1.0


def test_ball_joint_range_is_held(tmp_path) -> None:
    """A target the arm reaches only by turning the ball joint past its 1 rad range: the
    command and the simulated joint stop at the range (was 1.6 rad reached)."""
    robot = _ball_robot(tmp_path)
    sim = _sim(robot)
    _, largest = _run_controller(robot, sim, [0.5, 0.3, 0.2])
    assert largest <= 1.0 + 1e-3
    angle = np.linalg.norm(sim.get_joint_positions(["shoulder:x", "shoulder:y", "shoulder:z"]))
    assert abs(angle - 1.0) < 1e-3  # pressed against the range, not beyond


def test_ball_range_limit_rows() -> None:
    """One row per ball joint over its tangent displacement: the rotation axis, and the gain
    times the margin left; an empty row at the identity; precise errors."""
    model = pin.Model()
    joint = model.addJoint(0, pin.JointModelSpherical(), pin.SE3.Identity(), "ball")
    model.appendBodyToJoint(joint, pin.Inertia.Random(), pin.SE3.Identity())
    limit = BallRangeLimit(model, {"ball": 0.8}, gain=0.5)

    class At:
        def __init__(self, q):
            self.q = q

    rotation = np.array([0.3, -0.2, 0.4])
    q = pin.Quaternion(pin.exp3(rotation)).coeffs()
    G, h = limit.compute_qp_inequalities(At(q), 0.01)
    angle = np.linalg.norm(rotation)
    assert np.allclose(G, rotation / angle) and np.isclose(h[0], 0.5 * (0.8 - angle))
    G, h = limit.compute_qp_inequalities(At(pin.neutral(model)), 0.01)
    assert not G.any() and h[0] == 0.4
    braking = BallRangeLimit(model, {"ball": 0.8}, accelerations={"ball": 2.0})
    G, h = braking.compute_qp_inequalities(At(q), 0.01)
    assert np.isclose(h[0], 0.01 * np.sqrt(2.0 * 2.0 * (0.8 - angle)))  # can stop in time
    with pytest.raises(InputError, match="not a joint"):
        BallRangeLimit(model, {"nope": 0.5})
    with pytest.raises(InputError):
        BallRangeLimit(model, {"ball": 4.0})


# ------------------------------------------------------------------ bug 3: free joints
def test_free_joint_loads_as_floating_base_and_find_ik_solves(tmp_path) -> None:
    """An MJCF with its own free joint loads with floating_base=True (pin 4.1: was a raw
    ArgumentError), simulates with its base where the file puts it, and find_ik solves."""
    robot = _ball_robot(
        tmp_path, free='<freejoint name="base_free"/>', height=0.5, floating_base=True
    )
    assert robot.floating_base and "base pose" in robot.inferred
    assert robot.model.names[1] == "base_free" and robot.model.nq == 7 + 1 + 4 + 1
    sim = _sim(robot, gravity_compensation=True)
    assert np.allclose(sim.get_body_pose("base")[0], [0.0, 0.0, 0.5])
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    tip = data.oMf[robot.model.getFrameId("tip")].translation
    assert np.allclose(sim.get_site_pose("tip")[0], tip, atol=1e-9)
    result = find_ik(robot, tip + [0.05, 0.05, -0.1], frame="tip", position_only=True)
    assert result.success


# ------------------------------------------------------------------ bug 4: quaternions
def test_quaternions_round_trip_through_the_simulation(tmp_path) -> None:
    """Pinocchio's q (quaternions x, y, z, w) set into the simulation and read back: the tip
    MuJoCo computes is Pinocchio's to 1e-6 m; a naive copy of q into qpos is far off."""
    robot = _ball_robot(
        tmp_path, free='<freejoint name="base_free"/>', height=0.5, floating_base=True
    )
    sim = _sim(robot)
    rng = np.random.default_rng(28)
    frame = robot.model.getFrameId("tip")
    data = robot.model.createData()
    for _ in range(5):
        q = pin.randomConfiguration(robot.model, -np.ones(robot.model.nq), np.ones(robot.model.nq))
        q[3:7] = pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs()
        q[8:12] = pin.Quaternion(pin.exp3(rng.normal(size=3) * 0.3)).coeffs()
        sim.set_configuration(q)
        pin.framesForwardKinematics(robot.model, data, q)
        assert np.linalg.norm(sim.get_site_pose("tip")[0] - data.oMf[frame].translation) < 1e-6
        back = sim.get_configuration()
        assert np.allclose(pin.difference(robot.model, q, back), 0.0, atol=1e-9)
        assert np.allclose(to_mujoco_qpos(robot, sim.model, back), sim.data.qpos, atol=1e-9)
    sim.data.qpos[:] = q  # index by index: the quaternions read in the wrong order
    mujoco.mj_forward(sim.model, sim.data)
    assert np.linalg.norm(sim.get_site_pose("tip")[0] - data.oMf[frame].translation) > 1e-2


def test_ball_joints_leave_acceleration_limits_to_the_qp(tmp_path) -> None:
    """The motion shaper brakes each coordinate ahead of its own range, not a ball joint's
    cone: a robot with ball joints runs without acceleration shaping, and asking for it is
    an InputError."""
    robot = _ball_robot(tmp_path)
    robot.acceleration_limits = {"j1": 5.0, "shoulder": 5.0, "elbow": 5.0}
    sim = _sim(robot)
    controller = PinkIKController(robot, sim.joint_names, sim.site_names, dt=sim.timestep)
    assert controller.motion_limits is None
    with pytest.raises(InputError, match="ball joints"):
        PinkIKController(
            robot, sim.joint_names, sim.site_names, dt=sim.timestep, motion_limits=True
        )
