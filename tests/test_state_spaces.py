"""JointSpace / SiteSpace: states for a known space without looking names up each tick, with
the values still checked, equal to the states from_name builds."""

from __future__ import annotations

import numpy as np
import pytest

from pinkctl import InputError, JointSpace, JointState, SiteSpace, SpatialState

NAMES = ["a", "b", "c"]


def test_joint_space_states_equal_from_name() -> None:
    space = JointSpace(NAMES)
    q, dq = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    fast = space.state(q, dq)
    slow = JointState.from_name(NAMES, positions=(NAMES, q), velocities=(NAMES, dq))
    assert fast.name_space is slow.name_space  # one shared name space, no lookups
    np.testing.assert_array_equal(fast.data_array, slow.data_array)
    np.testing.assert_array_equal(fast.valid_array, slow.valid_array)
    only_q = space.state(q)
    assert only_q.position_names == NAMES and only_q.velocities is None
    q[0] = 9.0  # the state keeps its own copy
    assert fast.positions is not None and fast.positions[0] == 0.1
    with pytest.raises(ValueError):
        fast.data_array[0, 0] = 1.0  # read-only, as every state


def test_reading_a_command_back() -> None:
    space = JointSpace(NAMES)
    state = space.state([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(space.positions(state), [1.0, 2.0, 3.0])
    other = JointState.from_name(["c", "b", "a"], positions=(["c", "b", "a"], [3.0, 2.0, 1.0]))
    np.testing.assert_array_equal(space.positions(other), [1.0, 2.0, 3.0])  # reordered
    with pytest.raises(ValueError):
        space.positions(JointState.from_name(["a"], positions=(["a"], [1.0])))


@pytest.mark.parametrize(
    "bad",
    [
        [0.0, np.nan, 0.0],
        [0.0, np.inf, 0.0],
        [0.0, 0.0],
        [[0.0, 0.0, 0.0]],
        ["0", "0", "0"],
        [1j, 0.0, 0.0],
        [True, False, True],
        None,
    ],
)
def test_values_are_still_checked(bad) -> None:
    space = JointSpace(NAMES)
    with pytest.raises(InputError):
        space.state(bad) if bad is not None else space.state([0.0] * 3, efforts=[0.0] * 3)
    with pytest.raises(InputError):
        space.state([0.0] * 3, bad if bad is not None else [np.nan] * 3)


def test_joint_space_names_are_checked_once() -> None:
    with pytest.raises(InputError):
        JointSpace([])
    with pytest.raises(InputError):
        JointSpace(["a", "a"])
    assert JointSpace(NAMES).names == NAMES and len(JointSpace(NAMES)) == 3


def test_site_space_states_equal_from_name() -> None:
    sites = ["tool", "elbow"]
    space = SiteSpace(sites)
    p = np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.5]])
    o = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    fast = space.state(p, o)
    slow = SpatialState.from_name(sites, positions=(sites, p), orientations=(sites, o))
    for a, b in zip(
        (fast.positions, fast.orientations, fast.valid_array),
        (slow.positions, slow.orientations, slow.valid_array),
    ):
        np.testing.assert_array_equal(a, b)
    assert space.state(p).orientations is None
    with pytest.raises(InputError, match="quaternion is zero"):
        space.state(p, np.zeros((2, 4)))
    with pytest.raises(InputError, match="finite"):
        space.state(np.full((2, 3), np.nan))
    with pytest.raises(InputError, match="shape"):
        space.state(p[:1])
