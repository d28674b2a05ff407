"""The corners' floors (pinkctl.qp.corners): lower bounds of each corner's signed distance to
the other shape of its pair, below coal's (apart and inside), exact for a sphere, capsule,
box and half-space; and a controller that skips the corners they clear, and measures only the
pairs the native check flags, gives the reference path's commands (tiago: its hand rests
beside its torso, within the influence distance)."""

from __future__ import annotations

import importlib.metadata
import warnings
from pathlib import Path

import coal
import numpy as np
import pinocchio as pin
import pytest

from pinkctl import PinkIKController, load_pink_robot
from pinkctl._native import native_available
from pinkctl.core.state import JointSpace, RobotState
from pinkctl.qp import collision_limit
from pinkctl.qp.corners import corner_floors, plane_exact, plane_witnesses
from pinkctl.world.obstacle import convex_shape

SHAPES = {
    "sphere": coal.Sphere(0.1),
    "capsule": coal.Capsule(0.05, 0.3),
    "cylinder": coal.Cylinder(0.05, 0.3),
    "box": coal.Box(0.2, 0.1, 0.3),
    "halfspace": coal.Halfspace(np.array([0.0, 0.0, 1.0]), 0.02),
}


def _hull() -> coal.Convex:
    rng = np.random.default_rng(3)
    points = rng.standard_normal((40, 3)) * [0.1, 0.05, 0.15]
    return convex_shape(points)


def _coal_distance(shape, placement: pin.SE3, point: np.ndarray) -> float:
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    request.enable_signed_distance = True
    return coal.distance(
        coal.Sphere(0.0),
        coal.Transform3s(np.eye(3), point),
        shape,
        coal.Transform3s(placement.rotation, placement.translation),
        request,
        result,
    )


@pytest.mark.parametrize("name", [*SHAPES, "hull"])
def test_floors_are_below_coal_distances(name):
    shape = _hull() if name == "hull" else SHAPES[name]
    rng = np.random.default_rng(7)
    placement = pin.SE3(pin.exp3(rng.standard_normal(3)), rng.standard_normal(3) * 0.1)
    points = placement.translation + rng.standard_normal((300, 3)) * 0.15
    floors = corner_floors(points, shape, placement, {})
    coal_distances = np.array([_coal_distance(shape, placement, p) for p in points])
    assert (coal_distances < 0.0).sum() > 10 and (coal_distances > 0.0).sum() > 10
    assert (floors <= coal_distances + 1e-9).all()
    if name != "cylinder" and name != "hull":  # exact: the shape is its own container
        np.testing.assert_allclose(floors, coal_distances, atol=1e-6)


def test_plane_witnesses_are_coal_answers():
    """A half-space's corner rows take their distances, witness points and normals without
    coal: the same numbers as coal's, in penetration and apart, balls of radius 0 and 2 cm."""
    shape = SHAPES["halfspace"]
    rng = np.random.default_rng(11)
    placement = pin.SE3(pin.exp3(rng.standard_normal(3)), rng.standard_normal(3) * 0.1)
    points = placement.translation + rng.standard_normal((50, 3)) * 0.15
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    request.enable_signed_distance = True
    far = coal.Transform3s(placement.rotation, placement.translation)
    signs = set()
    for radius in (0.0, 0.02):
        answers = plane_witnesses(points, radius, shape, placement)
        for z, (distance, on_ball, on_plane, normal) in zip(points, answers):
            result.clear()
            ball = coal.Transform3s(np.eye(3), z)
            expected = coal.distance(coal.Sphere(radius), ball, shape, far, request, result)
            assert distance == pytest.approx(expected, abs=1e-12)
            np.testing.assert_allclose(on_ball, result.getNearestPoint1(), atol=1e-12)
            np.testing.assert_allclose(on_plane, result.getNearestPoint2(), atol=1e-12)
            np.testing.assert_allclose(normal, result.normal, atol=1e-12)
            signs.add(distance > 0.0)
    assert signs == {True, False}
    assert plane_exact(shape) and not plane_exact(SHAPES["box"])


def test_an_inflated_shape_is_not_bounded():
    shape = coal.Box(0.1, 0.1, 0.1)
    shape.setSweptSphereRadius(0.01)
    floors = corner_floors(np.zeros((2, 3)), shape, pin.SE3.Identity(), {})
    assert np.isneginf(floors).all()


@pytest.mark.skipif(not native_available()[0], reason="the native kernel is off")
def test_tiago_commands_are_the_reference_paths(monkeypatch):
    from pinkctl.app.inspect import load_robot  # noqa: PLC0415

    robot = load_robot("tiago")
    names = list(robot.controlled_joint_names)
    frame = robot.tool_frame
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    home = data.oMf[robot.model.getFrameId(frame)].copy()
    dt = 0.002
    targets = []
    for k in range(600):  # a small figure-eight from home: the hand beside the torso
        phase = 2.0 * np.pi * k * dt / 1.2
        offset = 0.03 * np.array([np.sin(phase), np.sin(phase) * np.cos(phase), 0.0])
        targets.append(pin.SE3(home.rotation, home.translation + offset))
    runs = []
    for reference in (False, True):
        if reference:  # every pair and every corner measured with coal
            monkeypatch.setattr(
                collision_limit, "corner_floors", lambda points, *a: np.full(len(points), -np.inf)
            )
        controller = PinkIKController(
            robot, names, [frame], tool_frame=frame, dt=dt, self_collision=True
        )
        controller.compiled = False  # both on the Python path: the rows alone differ
        avoid = controller._avoid
        if reference:
            avoid.native_check = lambda: None
        space = list(controller.robot_joint_space)
        q = np.array([robot.q0[robot.model.idx_qs[robot.model.getJointId(n)]] for n in space])
        drifting = np.array([n.startswith(("head", "hand")) for n in space])
        controller.reset(RobotState(joints=JointSpace(space).state(q)), None, 0.0)
        commands, engaged = [], 0
        rng = np.random.default_rng(11)
        for k, target in enumerate(targets):
            # the joints it does not control drift as measured ones do (the head, fingers):
            # the check's kept bounds count their motion
            measured = q + np.where(drifting, 1e-5 * rng.standard_normal(q.size), 0.0)
            q = controller.step(measured, target, t=k * dt)
            held = avoid.limit._held
            engaged += held is not None and held.h.size > 0
            commands.append(q.copy())
        runs.append((np.array(commands), engaged))
    (fast, engaged), (slow, _) = runs
    assert engaged > 50  # rows on many ticks: the near pair is exercised
    np.testing.assert_allclose(fast, slow, rtol=0.0, atol=1e-9)


def test_corner_rows_on_the_floor_are_those_coal_gives(monkeypatch):
    """A finger (example-robot-data's ``finger_edu``) whose tip hangs 1 mm above the floor at
    home: its mesh's corners near the floor take their rows without coal, and the rows
    and the commands are those of the loop that asks coal for each corner."""
    erd = importlib.metadata.distribution("example-robot-data")
    folder = Path(str(erd.locate_file("cmeel.prefix/share/example-robot-data/robots")))
    folder = folder / "finger_edu_description"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = load_pink_robot(
            folder / "robots/finger_edu.urdf", srdf_path=folder / "srdf/finger_edu.srdf"
        )
    names, frame, dt = list(robot.controlled_joint_names), robot.tool_frame, 0.002
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    home = data.oMf[robot.model.getFrameId(frame)].copy()
    runs = []
    for reference in (False, True):
        if reference:
            monkeypatch.setattr(collision_limit, "plane_exact", lambda shape: False)
        controller = PinkIKController(robot, names, [frame], tool_frame=frame, dt=dt)
        controller.compiled = False
        q = robot.q0.copy()
        controller.reset(RobotState(joints=JointSpace(names).state(q)), None, 0.0)
        commands, rows = [], []
        for k in range(300):  # the tip circles 2 mm wide, and down into the floor's margin
            phase = 2.0 * np.pi * k * dt / 0.4
            offset = [0.002 * np.cos(phase), 0.002 * np.sin(phase), -0.005]
            target = pin.SE3(home.rotation, home.translation + offset)
            q = controller.step(q, target, t=k * dt)
            held = controller._avoid.limit._held
            rows.append(np.zeros((0, 4)) if held is None else np.column_stack([held.G, held.h]))
            commands.append(q.copy())
        runs.append((np.array(commands), rows))
    (fast, rows), (slow, reference) = runs
    assert max(len(r) for r in rows) > 20  # the floor pair has many corner rows
    for mine, coals in zip(rows, reference):
        np.testing.assert_allclose(mine, coals, rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(fast, slow, rtol=0.0, atol=1e-12)
