"""JointSpace / SiteSpace: states for a known space without looking names up each tick, with
the values still checked, equal to the states from_name builds."""

from __future__ import annotations

import numpy as np
import pytest

from pinkctl import InputError, JointSpace, JointState, SiteSpace, SpatialState
from pinkctl.core.state.spaces import _FILL

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
    q[0] = 9.0  # the matrix, once read, is the state's own read-only copy
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


def test_fast_path_rejects_nan_and_wrong_shape_with_clear_messages() -> None:
    # float64 arrays of the right shape take the fast path: their values are still checked
    joints = JointSpace(NAMES)
    with pytest.raises(InputError, match="finite"):
        joints.state(np.array([0.0, np.nan, 0.0]))
    with pytest.raises(InputError, match="finite"):
        joints.state(np.zeros(3), np.array([np.inf, 0.0, 0.0]))
    with pytest.raises(InputError, match=r"positions must have shape \(3,\)"):
        joints.state(np.zeros(4))
    with pytest.raises(InputError, match=r"velocities must have shape \(3,\)"):
        joints.state(np.zeros(3), np.zeros((3, 1)))
    with pytest.raises(InputError, match="finite"):  # finite values whose sum overflows pass
        joints.state(np.array([1e308, 1e308, np.nan]))
    np.testing.assert_array_equal(
        joints.state(np.array([1e308, 1e308, 0.0])).positions, [1e308, 1e308, 0.0]
    )
    sites = SiteSpace(["tool"])
    pose = (np.array([[0.1, 0.2, 0.3]]), np.array([[1.0, 0.0, 0.0, 0.0]]))
    with pytest.raises(InputError, match="finite"):
        sites.state(np.array([[0.0, np.nan, 0.0]]), pose[1])
    with pytest.raises(InputError, match="finite"):  # NaN, not reported as a zero quaternion
        sites.state(pose[0], np.array([[0.0, 0.0, 0.0, np.nan]]))
    with pytest.raises(InputError, match="quaternion is zero"):
        sites.state(pose[0], np.array([[0.0, 1e-12, 0.0, -1e-12]]))
    with pytest.raises(InputError, match=r"orientations must have shape \(1, 4\)"):
        sites.state(pose[0], np.array([1.0, 0.0, 0.0, 0.0]))
    with pytest.raises(InputError, match=r"linear_velocities must have shape \(1, 3\)"):
        sites.state(*pose, np.zeros(3))
    with pytest.raises(InputError, match="finite"):
        sites.state(*pose, np.zeros((1, 3)), np.full((1, 3), np.inf))


@pytest.mark.parametrize("given", range(8))
def test_site_space_states_equal_from_name_for_every_field_mix(given: int) -> None:
    sites = ["tool", "elbow"]
    rng = np.random.default_rng(given)
    values = {
        "orientations": rng.normal(size=(2, 4)),
        "linear_velocities": rng.normal(size=(2, 3)),
        "angular_velocities": rng.normal(size=(2, 3)),
    }
    chosen = {k: v for bit, (k, v) in enumerate(values.items()) if given & (1 << bit)}
    p = rng.normal(size=(2, 3))
    fast = SiteSpace(sites).state(p, **chosen)
    slow = SpatialState.from_name(
        sites, positions=(sites, p), **{k: (sites, v) for k, v in chosen.items()}
    )
    assert fast.name_space is slow.name_space
    np.testing.assert_array_equal(fast.valid_array, slow.valid_array)
    for field in ("position_data", "orientation_data", "linear_velocity_data"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(slow, field))
    np.testing.assert_array_equal(fast.angular_velocity_data, slow.angular_velocity_data)
    assert fast.position_data is p  # float64 arrays of the right shape are wrapped, not copied
    data = {"orientations": "orientation_data", "linear_velocities": "linear_velocity_data"}
    data["angular_velocities"] = "angular_velocity_data"
    for field, value in chosen.items():
        assert getattr(fast, data[field]) is value
    owned = SiteSpace(sites).state(p.tolist(), **{k: v.tolist() for k, v in chosen.items()})
    np.testing.assert_array_equal(owned.position_data, p)  # converted: read-only, its own
    assert not owned.position_data.flags.writeable and not owned.valid_array.flags.writeable


@pytest.mark.parametrize("fields", [1, 2, 3])
def test_joint_space_states_equal_from_name_for_every_field_mix(fields: int) -> None:
    rows = np.arange(9.0).reshape(3, 3)
    args = list(rows[:fields])
    fast = JointSpace(NAMES).state(*args)
    keys = ("positions", "velocities", "efforts")[:fields]
    slow = JointState.from_name(NAMES, **{k: (NAMES, r) for k, r in zip(keys, args)})
    np.testing.assert_array_equal(fast.data_array, slow.data_array)
    np.testing.assert_array_equal(fast.valid_array, slow.valid_array)
    assert not fast.data_array.flags.writeable and not fast.valid_array.flags.writeable


def test_reading_a_partial_command_back_with_fill() -> None:
    space = JointSpace(NAMES)
    measured = np.array([7.0, 8.0, 9.0])
    command = JointState.from_name(NAMES, positions=(["a", "c"], [1.0, 3.0]))
    with pytest.raises(InputError):
        space.positions(command)  # "b" has no position
    for _ in range(2):  # the second read reuses what the first learnt of the mask
        np.testing.assert_array_equal(space.positions(command, fill=measured), [1.0, 8.0, 3.0])
    assert measured[1] == 8.0  # fill is not written
    other = JointState.from_name(["c", "a"], positions=(["c", "a"], [3.0, 1.0]))
    np.testing.assert_array_equal(space.positions(other, fill=measured), [1.0, 8.0, 3.0])
    full = space.state([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(space.positions(full, fill=measured), [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="fill"):
        space.positions(command, fill=[0.0, np.nan, 0.0])
    with pytest.raises(InputError, match="fill"):
        space.positions(command, fill=[0.0, 0.0])


def test_joint_space_wraps_float64_rows_and_copies_other_values() -> None:
    space = JointSpace(NAMES)
    q, dq = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    state = space.state(q, dq)
    assert state._position_row() is q  # no copy: the tick reads the caller's array
    np.testing.assert_array_equal(state.data_array, [q, dq, np.zeros(3)])  # made on demand
    assert state.data_array is state.data_array and not state.data_array.flags.writeable
    assert q.flags.writeable and dq.flags.writeable  # the caller's arrays are left alone
    listed = space.state([0.1, 0.2, 0.3], [1, 2, 3])  # converted (ints too) into its own arrays
    np.testing.assert_array_equal(listed.data_array, state.data_array)
    strided = np.arange(6.0)[::2]  # any float64 array of the right shape, contiguous or not
    np.testing.assert_array_equal(space.state(strided).positions, [0.0, 2.0, 4.0])


@pytest.mark.parametrize("where", ["positions", "velocities", "efforts"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_row_is_refused_by_name(where: str, bad: float) -> None:
    space = JointSpace(NAMES)
    rows = {k: np.zeros(3) for k in ("positions", "velocities", "efforts")}
    rows[where][1] = bad
    with pytest.raises(InputError, match=rf"^{where} must be finite"):
        space.state(rows["positions"], rows["velocities"], rows["efforts"])
    with pytest.raises(InputError, match=rf"^{where} must be finite"):
        space.state(*(rows[k].tolist() for k in ("positions", "velocities", "efforts")))
    assert np.isnan(rows[where][1]) or np.isinf(rows[where][1])  # the input is not written


def test_finite_values_whose_sum_overflows_pass() -> None:
    big = np.array([1e308, 1e308, -1e308])
    joints = JointSpace(NAMES)
    np.testing.assert_array_equal(joints.state(big, big, big).data_array, [big, big, big])
    sites = SiteSpace(["tool"])
    p, o = np.array([[1e308, 1e308, 0.0]]), np.array([[1e308, 1e308, 0.0, 0.0]])
    state = sites.state(p, o)
    assert state.position_data is p and state.orientation_data is o
    with pytest.raises(InputError, match="^orientations must be finite"):
        sites.state(p, np.array([[1e308, 1e308, np.nan, 0.0]]))


def test_site_space_refuses_bad_values_by_name() -> None:
    sites = SiteSpace(["tool", "elbow"])
    p, o = np.zeros((2, 3)), np.tile([1.0, 0.0, 0.0, 0.0], (2, 1))
    for field in ("positions", "linear_velocities", "angular_velocities"):
        bad = {"positions": p, "linear_velocities": None, "angular_velocities": None}
        bad[field] = np.array([[0.0, 0.0, 0.0], [0.0, np.nan, 0.0]])
        with pytest.raises(InputError, match=rf"^{field} must be finite"):
            sites.state(bad["positions"], o, bad["linear_velocities"], bad["angular_velocities"])
    with pytest.raises(InputError, match="quaternion is zero"):
        sites.state(p, np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]))
    assert np.array_equal(p, np.zeros((2, 3)))  # nothing written


def test_reading_a_command_back_checks_only_the_filled_joints() -> None:
    space = JointSpace(NAMES)
    command = JointState.from_name(NAMES, positions=(["a", "c"], [1.0, 3.0]))
    fill = np.array([np.nan, 8.0, np.inf])  # a and c come from the command
    out = space.positions(command, fill=fill)
    np.testing.assert_array_equal(out, [1.0, 8.0, 3.0])
    assert out.flags.writeable and not np.shares_memory(out, fill)
    with pytest.raises(InputError, match="fill must be finite"):
        space.positions(command, fill=np.array([0.0, np.inf, 0.0]))
    huge = space.positions(command, fill=np.array([0.0, 1e308, 0.0]))
    assert huge[1] == 1e308


def test_reading_a_command_back_from_any_fill_array() -> None:
    """Fill arrays the native read-back declines (other dtypes, strides, shapes) take the
    Python path: the same values, or an error naming ``fill``."""
    space = JointSpace(NAMES)
    command = JointState.from_name(NAMES, positions=(["a", "c"], [1.0, 3.0]))
    for fill in (np.array([0, 8, 0]), np.array([0.0, 8.0, 0.0], dtype=np.float32)):
        np.testing.assert_array_equal(space.positions(command, fill=fill), [1.0, 8.0, 3.0])
    strided = np.array([0.0, 9.0, 8.0, 9.0, 0.0, 9.0])[::2]
    np.testing.assert_array_equal(space.positions(command, fill=strided), [1.0, 8.0, 3.0])
    for bad in (np.zeros(4), np.zeros((1, 3)), np.array(["x", "y", "z"])):
        with pytest.raises(InputError, match="fill"):
            space.positions(command, fill=bad)


@pytest.mark.skipif(_FILL is None, reason="the native kernel is off (PINKCTL_NATIVE=0)")
def test_the_native_read_back_declines_what_it_cannot_vouch_for() -> None:
    data = np.array([[1.0, 2.0, 3.0], [0.0] * 3, [0.0] * 3])
    out = np.array([0.0, 8.0, 0.0])
    assert _FILL(out, data, [1]) and out.tolist() == [1.0, 8.0, 3.0]
    for missing in ([2, 1], [1, 1], [3], [-1], ["1"], (1,)):  # not ascending indices in range
        assert not _FILL(np.zeros(3), data, missing)
    assert not _FILL(np.array([0.0, np.nan, 0.0]), data, [1])  # a fill value not finite
    assert not _FILL(np.zeros(4), data, [1])  # out of another length
    assert not _FILL(np.zeros(3, dtype=np.float32), data, [1])
    assert not _FILL(np.zeros(6)[::2], data, [1])  # not contiguous
    assert not _FILL(np.zeros(3), data[0], [1])  # data not (3, n)


def _joint_inputs() -> list[tuple[object, ...]]:
    good = np.array([0.1, -0.2, 0.3])
    return [
        (good,),
        (good, good * 2),
        (good, None),
        (good, good, good),
        (np.arange(6.0)[::2], np.arange(6.0)[1::2]),  # strided views
        (good.astype(">f8"),),  # float64, not native byte order: converted
        (good.astype(np.float32), good),
        ([1, 2, 3], good),
        (np.array([0.0, np.nan, 0.0]), good),
        (good, np.array([0.0, 0.0, -np.inf])),
        (np.zeros(4),),
        (np.zeros((1, 3)),),
        (good, np.zeros((3, 1))),
        (np.ma.masked_array(good),),  # a subclass: converted
        (good, [0.0, "x", 0.0]),
    ]


@pytest.mark.parametrize("args", _joint_inputs())
def test_joint_fast_path_equals_the_python_path(args: tuple[object, ...]) -> None:
    space = JointSpace(NAMES)
    outcomes = []
    for build in (space.state, space._state):
        try:
            state = build(*(args + (None,) * (3 - len(args))))
        except InputError as exc:
            outcomes.append(("error", str(exc)))
        else:
            outcomes.append((state.data_array.tolist(), state.valid_array.tolist()))
    assert outcomes[0] == outcomes[1]


def _pose_inputs() -> list[tuple[object, ...]]:
    p, o = np.array([[0.1, 0.2, 0.3], [0.0, 0.0, 0.5]]), np.array([[1.0, 0, 0, 0], [0, 1, 0, 0]])
    return [
        (p, o),
        (p, None),
        (p, o, np.ones((2, 3))),
        (np.asfortranarray(p), np.asfortranarray(o)),  # strided
        (p.tolist(), o),
        (p, o.astype(np.float32)),
        (p, np.array([[1.0, 0, 0, 0], [0, 1e-12, 0, -1e-12]])),  # a zero quaternion
        (p, np.array([[1.0, 0, 0, 0], [0, 1e-9, 0, 0]])),  # the bound itself is not zero
        (p, np.array([[1.0, 0, 0, 0], [0, 0, 0, np.nan]])),
        (np.array([[0.0, np.inf, 0], [0, 0, 0]]), o),
        (p[:1], o),
        (p, o[:, :3]),
        (p, o.T),
    ]


@pytest.mark.parametrize("args", _pose_inputs())
def test_site_fast_path_equals_the_python_path(args: tuple[object, ...]) -> None:
    space = SiteSpace(["tool", "elbow"])
    outcomes = []
    for build in (space.state, space._state):
        try:
            state = build(*(args + (None,) * (4 - len(args))))
        except InputError as exc:
            outcomes.append(("error", str(exc)))
        else:
            data = (state.position_data, state.orientation_data, state.linear_velocity_data)
            outcomes.append(([d.tolist() for d in data], state.valid_array.tolist()))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("python_path", [False, True])
def test_the_callers_arrays_stay_writable(python_path: bool) -> None:
    # an unpickled array's float64 dtype is equal to, not the same object as, np.float64's
    import pickle

    q = pickle.loads(pickle.dumps(np.array([0.1, 0.2, 0.3])))
    p = pickle.loads(pickle.dumps(np.array([[0.1, 0.2, 0.3]])))
    joints, sites = JointSpace(NAMES), SiteSpace(["tool"])
    if python_path:
        joints._state(q, q, q)
        sites._state(p, None, p, p)
    else:
        joints.state(q, q)
        sites.state(p, None, p, p)
    assert q.flags.writeable and p.flags.writeable
