"""Retargeting a pose sequence (pinkctl.retarget_poses): a 1,000-pose figure eight on franka
without jumps, a bad start re-solved from other global solutions, out-of-reach poses
reported."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pinkctl
from pinkctl import FigureEightTrajectory, InputError, World, retarget_poses

DOWN = (0.0, 1.0, 0.0, 0.0)  # tool z axis pointing down (w, x, y, z)


@pytest.fixture(scope="module")
def franka() -> pinkctl.PinkRobot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pinkctl.load_pink_supported_robot("franka")


def _arc(start_deg: float, end_deg: float, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Tool-down poses on a horizontal arc of radius 0.5 m around the base, 0.3 m high."""
    angles = np.radians(np.linspace(start_deg, end_deg, count))
    return [(np.array([0.5 * np.cos(a), 0.5 * np.sin(a), 0.3]), np.array(DOWN)) for a in angles]


def test_figure_eight_of_a_thousand_poses_has_no_jump(franka) -> None:
    eight = FigureEightTrajectory(
        franka.tool_frame,
        (0.45, 0.0, 0.35),
        half_width=0.3,
        period=10.0,
        orientation=DOWN,
        orientation_amplitude=0.3,  # the tool rocks too
    )
    poses = [eight.sample(t)[:2] for t in np.linspace(0.0, eight.duration, 1000)]
    result = retarget_poses(franka, poses, max_jump=0.1)
    assert result.q.shape == (1000, 7) and result.jumps.shape == (999,)
    assert result.success.all()
    assert result.position_error.max() < 2e-5 and result.orientation_error.max() < 2e-5
    assert result.max_jump < 0.1
    assert result.segments == (0,)


def test_a_start_that_runs_into_a_limit_is_re_solved(franka) -> None:
    poses = _arc(150.0, 220.0, 200)  # past joint 1's limit (166 deg) when reached from the front
    seed = franka.q0.copy()
    seed[0] = 2.6  # the closest solution to this seed faces the arc from the front
    kinematic = {"world": World(), "self_collision": False}  # the limit is the only obstacle
    once = retarget_poses(franka, poses, seed=seed, attempts=1, **kinematic)
    assert once.max_jump > 1.0 and len(once.segments) == 2  # stuck: reconfigured mid-way
    again = retarget_poses(franka, poses, seed=seed, attempts=8, **kinematic)
    assert again.success.all() and again.max_jump < 0.1 and again.segments == (0,)


def test_out_of_reach_poses_are_reported_and_the_rest_solved(franka) -> None:
    poses = _arc(-20.0, 20.0, 30)
    poses[10] = (np.array([2.0, 0.0, 0.3]), np.array(DOWN))
    result = retarget_poses(franka, poses)
    assert not result.success[10] and result.success.sum() == 29
    assert result.segments == (0, 10, 11)


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        ({"poses": []}, "poses"),
        ({"max_jump": 0.0}, "max_jump"),
        ({"attempts": 0}, "attempts"),
        ({"poses": [np.zeros(5)]}, r"poses\[0\]"),
        ({"max_restart": 3}, "max_restarts"),
    ],
)
def test_bad_arguments_are_refused(franka, arguments, match) -> None:
    arguments = {"poses": _arc(0.0, 10.0, 3), **arguments}
    with pytest.raises(InputError, match=match):
        retarget_poses(franka, **arguments)
