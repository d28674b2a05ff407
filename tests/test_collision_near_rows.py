"""The native near-pair rows of the quiet check (``_collision_tick.c``): GJK's distances,
witness points, normals and distance rows against coal's and the scene's (the reference),
and finite differences of coal's distance."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import PinkIKController, World, load_pink_supported_robot
from pinkctl._native import native_available
from pinkctl.core.state import JointSpace, RobotState

pytestmark = pytest.mark.skipif(not native_available()[0], reason="the native kernel is off")


@pytest.fixture(scope="module")
def franka():
    return load_pink_supported_robot("franka")


def _controller(robot) -> PinkIKController:
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    hand = data.oMf[robot.model.getFrameId("panda_hand")].translation
    world = World()
    world.add_box("box", size=(0.1, 0.3, 0.2), position=hand + [0.12, 0.0, 0.0])
    world.add_sphere("ball", radius=0.08, position=hand + [0.0, 0.2, -0.1])
    world.add_capsule("pole", radius=0.03, length=0.6, position=(0.2, -0.35, 0.4))
    world.add_cylinder("can", radius=0.05, length=0.2, position=(0.45, -0.25, 0.1))
    names = list(robot.controlled_joint_names)
    controller = PinkIKController(
        robot,
        names,
        ["panda_hand"],
        tool_frame="panda_hand",
        dt=0.005,
        world=world,
        self_collision=True,
    )
    q = robot.q0[: len(names)].copy()
    controller.reset(RobotState(joints=JointSpace(names).state(q)), None, 0.0)
    return controller


def test_near_rows_match_coal_and_finite_differences(franka):
    avoid = _controller(franka)._avoid
    check = avoid.native_check()
    assert check is not None
    check.caching = False
    check._tick.slack = 0.3  # every pair near: each one measured (not only the ticks' few)
    scene = avoid.scene
    columns = avoid._columns
    lower, upper = franka.model.lowerPositionLimit, franka.model.upperPositionLimit
    rng = np.random.default_rng(5)
    compared = unique = 0
    for _ in range(20):
        q = lower + rng.uniform(size=lower.size) * (upper - lower)
        check.count(q, False, q[:7].copy())
        reference = scene.distances(q)
        for k in np.flatnonzero(np.isfinite(check.distance)).tolist():
            d = reference[k]
            assert check.distance[k] == pytest.approx(d.distance, abs=2e-6), d.pair
            assert d.distance > 0.0  # GJK answers only pairs apart (coal: in penetration)
            compared += 1
            if np.abs(check.points[k] - [d.point_a, d.point_b]).max() > 1e-4:
                continue  # nearest points not unique (parallel faces): rows differ
            unique += 1
            # a rim near a curved face: points 1e-6 apart for distances 1e-9 apart (GJK's
            # distance is the smaller: the nearer the true one, both being upper bounds)
            assert check.distance[k] <= d.distance + 1e-9
            tolerance = 1e-3
            assert check.normal[k] == pytest.approx(d.normal, abs=tolerance), d.pair
            row = -scene.distance_jacobian(q, d)[columns]
            assert check.rows[k] == pytest.approx(row, abs=tolerance), d.pair
            if unique % 60 == 0:  # finite differences of coal's distance
                step = 1e-5
                for c in range(columns.size):
                    dq = np.zeros(franka.model.nv)
                    dq[columns[c]] = step
                    ahead = scene.distances(pin.integrate(franka.model, q, dq))[k].distance
                    back = scene.distances(pin.integrate(franka.model, q, -dq))[k].distance
                    rate = -(ahead - back) / (2.0 * step)
                    assert rate == pytest.approx(check.rows[k, c], abs=2e-3), d.pair
    assert compared > 500
    assert unique > 0.9 * compared
