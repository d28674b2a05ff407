"""JointState, SpatialState, RootState, RobotState and combine_robot_states."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pinkctl.core.state import JointState, RobotState, RootState, SpatialState, combine_robot_states

SPACE = ["a", "b", "c", "d"]
FRAMES = ["tool", "base", "cam"]


def joint_positions(names: list[str], values: list[float], space: list[str] = SPACE) -> JointState:
    return JointState.from_name(space, positions=(names, np.array(values, dtype=float)))


# --------------------------------------------------------------------------------------------
# JointState: low-level constructor
# --------------------------------------------------------------------------------------------


def test_low_level_constructor_copies_and_freezes() -> None:
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    valid = np.zeros((3, 4), dtype=bool)
    valid[0, 1] = True
    js = JointState(SPACE, data, valid)
    assert js.data_array.dtype == np.float64
    np.testing.assert_array_equal(js.data_array, data)
    data[0, 1] = 99.0
    valid[0, 2] = True
    assert js.data_array[0, 1] == 1.0
    assert js.position_names == ["b"]
    with pytest.raises(ValueError):
        js.data_array[0, 0] = 5.0
    with pytest.raises(ValueError):
        js.valid_array[0, 0] = True


@pytest.mark.parametrize(
    ("data", "valid", "match"),
    [
        (np.zeros(12), np.zeros((3, 4), bool), "shape"),
        (np.zeros((3, 4, 1)), np.zeros((3, 4), bool), "shape"),
        (np.zeros((4, 3)), np.zeros((3, 4), bool), "shape"),
        (np.zeros((3, 5)), np.zeros((3, 5), bool), "shape"),
        (np.zeros((3, 4)), np.zeros(12, bool), "shape"),
        (np.zeros((3, 4)), np.zeros((3, 3), bool), "shape"),
        (np.zeros((3, 4), dtype=int), np.zeros((3, 4), bool), "floating"),
        (np.zeros((3, 4), dtype=bool), np.zeros((3, 4), bool), "floating"),
        (np.zeros((3, 4), dtype=complex), np.zeros((3, 4), bool), "floating"),
        (np.zeros((3, 4), dtype=object), np.zeros((3, 4), bool), "floating"),
        (np.zeros((3, 4)), np.zeros((3, 4)), "bool"),
        (np.zeros((3, 4)), np.zeros((3, 4), dtype=int), "bool"),
        (np.full((3, 4), np.nan), np.zeros((3, 4), bool), "NaN"),
        (np.full((3, 4), np.inf), np.zeros((3, 4), bool), "NaN"),
    ],
)
def test_low_level_constructor_rejects(data: np.ndarray, valid: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        JointState(SPACE, data, valid)


@pytest.mark.parametrize(
    ("space", "match"),
    [
        (["a", "a", "b"], "duplicate"),
        ([], "empty"),
        ("abc", "list"),
        (["a", 1], "str"),
        (None, "list"),
    ],
)
def test_joint_space_rejected(space: object, match: str) -> None:
    n = len(space) if isinstance(space, list) else 3
    with pytest.raises(ValueError, match=match):
        JointState(space, np.zeros((3, n)), np.zeros((3, n), bool))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=match):
        JointState.from_name(space, positions=(["a"], np.zeros(1)))  # type: ignore[arg-type]


def test_joint_space_may_be_a_tuple() -> None:
    js = JointState.from_name(tuple(SPACE), positions=(["c"], np.ones(1)))
    assert js.robot_joint_space == SPACE


# --------------------------------------------------------------------------------------------
# JointState.from_name / from_index
# --------------------------------------------------------------------------------------------


def test_from_name_read_api_is_ordered_by_joint_space() -> None:
    js = JointState.from_name(
        SPACE,
        positions=(["d", "a"], np.array([4.0, 1.0])),
        velocities=(["b"], np.array([0.5])),
    )
    assert js.robot_joint_space == SPACE
    assert js.position_names == ["a", "d"]
    np.testing.assert_array_equal(js.positions, [1.0, 4.0])
    assert js.position_indices.dtype == np.int32
    np.testing.assert_array_equal(js.position_indices, [0, 3])
    assert js.velocity_names == ["b"]
    np.testing.assert_array_equal(js.velocities, [0.5])
    np.testing.assert_array_equal(js.velocity_indices, [1])
    assert js.effort_names == []
    assert js.efforts is None
    assert js.effort_indices.size == 0
    # Entries not given hold 0 and are invalid.
    np.testing.assert_array_equal(js.data_array[:, 2], 0.0)
    np.testing.assert_array_equal(js.valid_array[:, 2], False)
    assert js.data_array.shape == (3, 4) and js.valid_array.shape == (3, 4)


def test_from_name_flattens_leading_one_and_accepts_float32() -> None:
    js = JointState.from_name(SPACE, efforts=(["b", "c"], np.array([[1.0, 2.0]], np.float32)))
    assert js.data_array.dtype == np.float64
    np.testing.assert_array_equal(js.efforts, [1.0, 2.0])


def test_from_name_accepts_python_float_lists_and_copies_input() -> None:
    values = np.array([1.0, 2.0])
    names = ["a", "b"]
    js = JointState.from_name(SPACE, positions=(names, values))
    values[0] = 50.0
    names[0] = "c"
    np.testing.assert_array_equal(js.positions, [1.0, 2.0])
    js2 = JointState.from_name(SPACE, positions=(["a"], [0.25]))
    np.testing.assert_array_equal(js2.positions, [0.25])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "at least one"),
        ({"positions": (["a"], np.array([[1.0], [2.0]]))}, "1-D or"),
        ({"positions": (["a"], np.zeros((1, 1, 1)))}, "1-D or"),
        ({"positions": (["a"], np.float64(1.0))}, "1-D or"),
        ({"positions": (["a"], np.array([1]))}, "floating"),
        ({"positions": (["a"], [True])}, "floating"),
        ({"positions": (["a"], ["x"])}, "floating"),
        ({"positions": ([], np.zeros(0))}, "at least one value"),
        ({"positions": (("a",), np.zeros(1))}, "list"),
        ({"positions": ("a", np.zeros(1))}, "list"),
        ({"positions": (["a", "b"], np.zeros(1))}, "2 names"),
        ({"positions": (["a"], np.zeros(2))}, "1 names"),
        ({"positions": (["a", "a"], np.zeros(2))}, "duplicate"),
        ({"positions": (["z"], np.zeros(1))}, "not in the space"),
        ({"positions": ([1], np.zeros(1))}, "str"),
        ({"positions": ([["a"]], np.zeros(1))}, "str"),
        ({"positions": np.zeros(3)}, "pair"),
        ({"positions": (["a"], np.zeros(1), 0)}, "pair"),
        ({"velocities": (["a"], np.array([np.nan]))}, "velocities"),
        ({"efforts": (["a", "b"], np.array([0.0, np.inf]))}, "efforts"),
        ({"positions": (["a"], [[1.0], [2.0, 3.0]])}, "cannot read|floating"),
    ],
)
def test_from_name_rejects(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        JointState.from_name(SPACE, **kwargs)


def test_from_index_matches_from_name() -> None:
    by_index = JointState.from_index(
        SPACE, positions=([3, 0], np.array([4.0, 1.0])), efforts=(np.array([2]), np.ones(1))
    )
    by_name = JointState.from_name(
        SPACE, positions=(["d", "a"], np.array([4.0, 1.0])), efforts=(["c"], np.ones(1))
    )
    np.testing.assert_array_equal(by_index.data_array, by_name.data_array)
    np.testing.assert_array_equal(by_index.valid_array, by_name.valid_array)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "at least one"),
        ({"positions": ([4], np.zeros(1))}, "out of range"),
        ({"positions": ([-1], np.zeros(1))}, "out of range"),
        ({"positions": ([2**70], np.zeros(1))}, "out of range"),
        ({"positions": (np.array([2**63], dtype=np.uint64), np.zeros(1))}, "out of range"),
        ({"positions": ([1, 1], np.zeros(2))}, "duplicate"),
        ({"positions": ([1.0], np.zeros(1))}, "int"),
        ({"positions": ([True], np.zeros(1))}, "int"),
        ({"positions": (["a"], np.zeros(1))}, "int"),
        ({"positions": ((0,), np.zeros(1))}, "list"),
        ({"positions": (np.array([[0]]), np.zeros(1))}, "1-D integer"),
        ({"positions": (np.array([0.0]), np.zeros(1))}, "1-D integer"),
        ({"positions": ([0, 1], np.zeros(3))}, "2 names"),
        ({"positions": ([], np.zeros(0))}, "at least one value"),
        ({"positions": ([0], np.array([1]))}, "floating"),
        ({"positions": ([0], np.array([np.nan]))}, "positions"),
    ],
)
def test_from_index_rejects(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        JointState.from_index(SPACE, **kwargs)


def test_get_positions_by_name() -> None:
    js = joint_positions(["a", "c"], [1.0, 3.0])
    np.testing.assert_array_equal(js.get_positions(["c", "a"]), [3.0, 1.0])
    with pytest.raises(ValueError, match="no valid positions"):
        js.get_positions(["a", "b"])
    with pytest.raises(ValueError, match="not in the space"):
        js.get_positions(["q"])
    with pytest.raises(ValueError, match="no valid velocities"):
        js.get_velocities(["a"])


def test_repr_names_the_fields() -> None:
    text = repr(joint_positions(["b"], [0.5]))
    assert "JointState" in text and "positions" in text and "b" in text


# --------------------------------------------------------------------------------------------
# JointState: properties
# --------------------------------------------------------------------------------------------

names_st = st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=8, unique=True)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def space_and_fields(
    draw: st.DrawFn,
) -> tuple[list[str], list[tuple[list[int], list[float]] | None]]:
    space = draw(names_st)
    fields: list[tuple[list[int], list[float]] | None] = []
    for _ in range(3):
        if draw(st.booleans()):
            idx = draw(st.lists(st.sampled_from(range(len(space))), min_size=1, unique=True))
            vals = draw(st.lists(finite, min_size=len(idx), max_size=len(idx)))
            fields.append((idx, vals))
        else:
            fields.append(None)
    if all(f is None for f in fields):
        fields[0] = ([0], [1.0])
    return space, fields


@given(space_and_fields())
@settings(max_examples=150, deadline=None)
def test_from_name_and_from_index_round_trip(case: tuple) -> None:
    space, fields = case
    by_name = JointState.from_name(
        space,
        *[None if f is None else ([space[i] for i in f[0]], np.array(f[1])) for f in fields],
    )
    by_index = JointState.from_index(
        space, *[None if f is None else (list(f[0]), np.array(f[1])) for f in fields]
    )
    np.testing.assert_array_equal(by_name.data_array, by_index.data_array)
    np.testing.assert_array_equal(by_name.valid_array, by_index.valid_array)
    getters = ("positions", "velocities", "efforts")
    for row, field in enumerate(fields):
        compact = getattr(by_name, getters[row])
        if field is None:
            assert compact is None
            continue
        idx, vals = field
        order = np.argsort(idx)
        np.testing.assert_array_equal(compact, np.array(vals)[order])
        names = getattr(by_name, ("position", "velocity", "effort")[row] + "_names")
        assert names == [space[i] for i in sorted(idx)]
        np.testing.assert_array_equal(by_name.data_array[row, idx], vals)
        assert by_name.valid_array[row].sum() == len(idx)


any_dtype = st.sampled_from(
    [np.float64, np.float32, np.float16, np.int64, np.int8, np.bool_, np.complex128]
)
any_shape = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
anything_numeric = any_dtype.flatmap(
    lambda dt: hnp.arrays(
        dt,
        any_shape,
        elements=st.floats(allow_nan=True, allow_infinity=True, width=16)
        if np.dtype(dt).kind == "f" and np.dtype(dt).itemsize == 2
        else None,
    )
)
huge_floats = hnp.arrays(
    np.float64,
    any_shape,
    elements=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([1e308, -1e308, 5e-324, 0.0, -0.0]),
    ),
)
values_st = st.one_of(anything_numeric, huge_floats, st.lists(st.floats(), max_size=5))
keys_st = st.one_of(
    st.lists(st.sampled_from(SPACE + ["zz", ""]), max_size=5),
    st.lists(st.integers(-2, 6), max_size=5),
    st.lists(st.integers(), max_size=3),
    st.tuples(st.sampled_from(SPACE)),
    st.none(),
)


@st.composite
def plausible_field(draw: st.DrawFn, by_name: bool, width: int | None = None) -> tuple:
    """A field that is often valid: known unique keys, values of roughly the right shape."""
    idx = draw(st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True))
    keys = [SPACE[i] for i in idx] if by_name else idx
    k = len(idx)
    shapes = [(k,), (1, k)] if width is None else [(k, width)]
    shape = draw(st.one_of(st.sampled_from(shapes), any_shape))
    elements = st.one_of(
        finite, st.floats(), st.sampled_from([1e308, -1e308, 5e-324, 0.0, np.nan, np.inf])
    )
    return keys, draw(hnp.arrays(np.float64, shape, elements=elements))


field_st = st.one_of(st.none(), st.tuples(keys_st, values_st), values_st)


@given(st.data(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_joint_state_arbitrary_input_is_valid_or_value_error(data, by_name: bool) -> None:
    field = st.one_of(field_st, plausible_field(by_name), plausible_field(by_name))
    p, v, e = data.draw(field), data.draw(field), data.draw(field)
    ctor = JointState.from_name if by_name else JointState.from_index
    try:
        js = ctor(SPACE, positions=p, velocities=v, efforts=e)
    except ValueError:
        return
    assert js.data_array.dtype == np.float64 and js.data_array.shape == (3, 4)
    assert np.isfinite(js.data_array).all()
    assert js.valid_array.any()


@given(huge_floats, hnp.arrays(np.bool_, any_shape))
@settings(max_examples=150, deadline=None)
def test_low_level_arbitrary_input_is_valid_or_value_error(data, valid) -> None:
    try:
        js = JointState(SPACE, data, valid)
    except ValueError:
        return
    assert np.isfinite(js.data_array).all()


# --------------------------------------------------------------------------------------------
# SpatialState
# --------------------------------------------------------------------------------------------


def test_spatial_from_name_read_api() -> None:
    quats = np.array([[0.0, 0.0, 0.0, 2.0], [1.0, 0.0, 0.0, 0.0]])
    ss = SpatialState.from_name(
        FRAMES,
        positions=(["cam", "tool"], np.array([[3.0, 3, 3], [1.0, 1, 1]])),
        orientations=(["cam", "base"], quats),
        angular_velocities=(["base"], np.array([[0.0, 0.0, 1.0]])),
    )
    assert ss.spatial_space == FRAMES
    assert ss.position_names == ["tool", "cam"]
    np.testing.assert_array_equal(ss.positions, [[1.0, 1, 1], [3.0, 3, 3]])
    np.testing.assert_array_equal(ss.position_indices, [0, 2])
    assert ss.position_indices.dtype == np.int32
    assert ss.orientation_names == ["base", "cam"]
    # Quaternions are stored as given, not normalised.
    np.testing.assert_array_equal(ss.orientations, [[1.0, 0, 0, 0], [0.0, 0, 0, 2.0]])
    assert ss.linear_velocities is None and ss.linear_velocity_names == []
    np.testing.assert_array_equal(ss.angular_velocity_indices, [1])
    assert ss.position_data.shape == (3, 3) and ss.orientation_data.shape == (3, 4)
    assert ss.linear_velocity_data.shape == (3, 3) and ss.angular_velocity_data.shape == (3, 3)
    np.testing.assert_array_equal(ss.valid_array[1], [False, True, False, True])
    with pytest.raises(ValueError):
        ss.position_data[0, 0] = 1.0


def test_spatial_pose_getters() -> None:
    ss = SpatialState.from_name(
        FRAMES,
        positions=(["tool", "base"], np.array([[1.0, 2, 3], [0.0, 0, 0]])),
        orientations=(["tool"], np.array([[0.5, 0.5, 0.5, 0.5]])),
    )
    pos, quat = ss.get_pose("tool")  # type: ignore[misc]
    np.testing.assert_array_equal(pos, [1.0, 2, 3])
    np.testing.assert_array_equal(quat, [0.5, 0.5, 0.5, 0.5])
    assert ss.get_pose("base") is None  # position only
    assert ss.get_pose("cam") is None
    assert ss.get_pose("nowhere") is None
    np.testing.assert_array_equal(ss.get_position("base"), [0.0, 0, 0])
    assert ss.get_orientation("base") is None
    pos[0] = 10.0  # getters return copies
    np.testing.assert_array_equal(ss.get_position("tool"), [1.0, 2, 3])
    assert "tool" in repr(ss)


def test_spatial_from_index_matches_from_name() -> None:
    a = SpatialState.from_index(FRAMES, linear_velocities=([2], np.ones((1, 3))))
    b = SpatialState.from_name(FRAMES, linear_velocities=(["cam"], np.ones((1, 3))))
    np.testing.assert_array_equal(a.linear_velocity_data, b.linear_velocity_data)
    np.testing.assert_array_equal(a.valid_array, b.valid_array)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "at least one"),
        ({"positions": (["tool"], np.zeros(3))}, r"\(K, 3\)"),
        ({"positions": (["tool"], np.zeros((1, 4)))}, r"\(K, 3\)"),
        ({"orientations": (["tool"], np.zeros((1, 3)))}, r"\(K, 4\)"),
        ({"linear_velocities": (["tool"], np.zeros((1, 3, 1)))}, r"\(K, 3\)"),
        ({"positions": ([], np.zeros((0, 3)))}, "at least one row"),
        ({"positions": (("tool",), np.zeros((1, 3)))}, "list"),
        ({"positions": (["tool", "tool"], np.zeros((2, 3)))}, "duplicate"),
        ({"positions": (["hand"], np.zeros((1, 3)))}, "not in the space"),
        ({"positions": (["tool"], np.zeros((2, 3)))}, "1 names"),
        ({"positions": (["tool"], np.zeros((1, 3), dtype=int))}, "floating"),
        ({"angular_velocities": (["tool"], np.array([[0.0, np.nan, 0.0]]))}, "angular"),
        ({"orientations": (["tool"], np.zeros((1, 4)))}, "zero"),
        ({"orientations": (["tool"], np.array([[np.inf, 0, 0, 0]]))}, "NaN"),
        ({"positions": np.zeros((1, 3))}, "pair"),
    ],
)
def test_spatial_from_name_rejects(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        SpatialState.from_name(FRAMES, **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"positions": ([3], np.zeros((1, 3)))}, "out of range"),
        ({"positions": ([0, 0], np.zeros((2, 3)))}, "duplicate"),
        ({"positions": (["tool"], np.zeros((1, 3)))}, "int"),
        ({"positions": ([0, 1], np.zeros((1, 3)))}, "2 names"),
    ],
)
def test_spatial_from_index_rejects(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        SpatialState.from_index(FRAMES, **kwargs)


def test_spatial_low_level_constructor() -> None:
    m = len(FRAMES)
    valid = np.zeros((m, 4), bool)
    valid[0, 1] = True
    quats = np.zeros((m, 4))
    quats[0] = [1.0, 0, 0, 0]
    ss = SpatialState(FRAMES, np.zeros((m, 3)), quats, np.zeros((m, 3)), np.zeros((m, 3)), valid)
    assert ss.orientation_names == ["tool"]  # zero quaternions on invalid rows are fine
    quats[0] = 0.0
    assert ss.get_orientation("tool") is not None  # the input was copied
    with pytest.raises(ValueError, match="zero"):
        SpatialState(FRAMES, np.zeros((m, 3)), quats, np.zeros((m, 3)), np.zeros((m, 3)), valid)
    with pytest.raises(ValueError, match="shape"):
        SpatialState(FRAMES, np.zeros((m, 4)), quats, np.zeros((m, 3)), np.zeros((m, 3)), valid)
    with pytest.raises(ValueError, match="bool"):
        SpatialState(
            FRAMES, np.zeros((m, 3)), quats, np.zeros((m, 3)), np.zeros((m, 3)), valid * 1.0
        )
    with pytest.raises(ValueError, match="NaN"):
        SpatialState(
            FRAMES, np.full((m, 3), np.nan), quats, np.zeros((m, 3)), np.zeros((m, 3)), valid
        )


@given(st.data(), st.booleans())
@settings(max_examples=200, deadline=None)
def test_spatial_arbitrary_input_is_valid_or_value_error(data, by_name: bool) -> None:
    p = data.draw(st.one_of(field_st, plausible_field(by_name, 3)))
    o = data.draw(st.one_of(field_st, plausible_field(by_name, 4)))

    def relabel(spec):  # map the joint names of the strategies onto frame names
        if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], list):
            keys = [FRAMES[SPACE.index(k) % 3] if k in SPACE else k for k in spec[0]]
            return (keys, spec[1])
        return spec

    ctor = SpatialState.from_name if by_name else SpatialState.from_index
    try:
        ss = ctor(FRAMES, positions=relabel(p), orientations=relabel(o))
    except ValueError:
        return
    assert np.isfinite(ss.position_data).all() and np.isfinite(ss.orientation_data).all()
    if ss.orientations is not None:
        assert (np.abs(ss.orientations).max(axis=1) > 0).all()


# --------------------------------------------------------------------------------------------
# RootState and RobotState
# --------------------------------------------------------------------------------------------


def test_root_state_fields() -> None:
    vel = [0.5, 0, 0]
    root = RootState(linear_velocity=vel, angular_velocity=np.array([0.0, 0.0, 0.2]))
    np.testing.assert_array_equal(root.linear_velocity, [0.5, 0, 0])
    assert root.linear_velocity.dtype == np.float64  # type: ignore[union-attr]
    assert root.position is None and root.orientation is None
    vel[0] = 9.0
    assert root.linear_velocity[0] == 0.5  # type: ignore[index]
    with pytest.raises(ValueError):
        root.angular_velocity[2] = 1.0  # type: ignore[index]
    assert RootState(orientation=[1, 0, 0, 0]).orientation.dtype == np.float64  # type: ignore[union-attr]
    assert "linear_velocity" in repr(root)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "at least one"),
        ({"position": [0.0, 0.0]}, "3 elements"),
        ({"position": np.zeros((1, 3))}, "3 elements"),
        ({"orientation": [1.0, 0, 0]}, "4 elements"),
        ({"linear_velocity": [0.0, 0, 0, 0]}, "3 elements"),
        ({"angular_velocity": 1.0}, "3 elements"),
        ({"position": [0.0, np.nan, 0]}, "NaN"),
        ({"linear_velocity": [np.inf, 0, 0]}, "NaN"),
        ({"orientation": [0.0, 0, 0, 0]}, "zero"),
        ({"position": [True, False, True]}, "real"),
        ({"position": ["x", "y", "z"]}, "real"),
    ],
)
def test_root_state_rejects(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RootState(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"joints": RootState(position=[0.0, 0, 0])},
        {"root": joint_positions(["a"], [0.0])},
        {"links": joint_positions(["a"], [0.0])},
        {"sites": "tool"},
        {"joints": np.zeros((3, 4))},
    ],
)
def test_robot_state_type_checked(kwargs: dict) -> None:
    with pytest.raises(ValueError, match="must be a"):
        RobotState(**kwargs)


def test_robot_state_holds_components() -> None:
    js = joint_positions(["a"], [0.0])
    assert RobotState().joints is None
    rs = RobotState(joints=js)
    assert rs.joints is js and rs.root is None and rs.links is None and rs.sites is None
    assert "joints" in repr(rs)


# --------------------------------------------------------------------------------------------
# combine_robot_states
# --------------------------------------------------------------------------------------------


def test_combine_none_inputs() -> None:
    rs = RobotState(joints=joint_positions(["a"], [0.0]))
    assert combine_robot_states(None, rs) is None
    assert combine_robot_states(rs, None) is None
    assert combine_robot_states(None, None) is None


def test_combine_rejects_non_states() -> None:
    with pytest.raises(ValueError, match="RobotState"):
        combine_robot_states(RobotState(), joint_positions(["a"], [0.0]))  # type: ignore[arg-type]


def test_empty_state_is_identity() -> None:
    rs = RobotState(
        joints=joint_positions(["a"], [0.5]),
        root=RootState(position=[1.0, 2, 3]),
        sites=SpatialState.from_name(FRAMES, positions=(["tool"], np.ones((1, 3)))),
    )
    for merged in (combine_robot_states(RobotState(), rs), combine_robot_states(rs, RobotState())):
        assert merged is not None and merged is not rs
        np.testing.assert_array_equal(merged.joints.data_array, rs.joints.data_array)  # type: ignore[union-attr]
        np.testing.assert_array_equal(merged.root.position, [1.0, 2, 3])  # type: ignore[union-attr]
        assert merged.sites.position_names == ["tool"]  # type: ignore[union-attr]
        assert merged.links is None
    empty = combine_robot_states(RobotState(), RobotState())
    assert empty is not None and empty.joints is None and empty.root is None


def test_combine_disjoint_joints_and_different_fields_of_one_joint() -> None:
    a = RobotState(joints=joint_positions(["a", "b"], [1.0, 2.0]))
    b = RobotState(
        joints=JointState.from_name(
            SPACE, positions=(["c"], np.array([3.0])), efforts=(["a"], np.array([7.0]))
        )
    )
    merged = combine_robot_states(a, b)
    assert merged is not None and merged.joints is not None
    assert merged.joints.position_names == ["a", "b", "c"]
    np.testing.assert_array_equal(merged.joints.positions, [1.0, 2.0, 3.0])
    assert merged.joints.effort_names == ["a"]
    np.testing.assert_array_equal(merged.joints.efforts, [7.0])
    # Inputs are untouched.
    assert a.joints.position_names == ["a", "b"]  # type: ignore[union-attr]
    assert b.joints.effort_names == ["a"]  # type: ignore[union-attr]


def test_combine_overlapping_joint_field_is_none() -> None:
    a = RobotState(joints=joint_positions(["a", "b"], [1.0, 2.0]))
    b = RobotState(joints=joint_positions(["b"], [2.0]))
    assert combine_robot_states(a, b) is None


@pytest.mark.parametrize(
    "other_space", [["d", "c", "b", "a"], ["a", "b", "c"], ["a", "b", "c", "e"]]
)
def test_combine_mismatched_joint_spaces_is_none(other_space: list[str]) -> None:
    a = RobotState(joints=joint_positions(["a"], [1.0]))
    b = RobotState(joints=joint_positions(["b"], [2.0], space=other_space))
    assert combine_robot_states(a, b) is None


def test_combine_root_fields() -> None:
    a = RobotState(root=RootState(linear_velocity=[1.0, 0, 0]))
    b = RobotState(root=RootState(angular_velocity=[0.0, 0, 1]))
    merged = combine_robot_states(a, b)
    assert merged is not None and merged.root is not None
    np.testing.assert_array_equal(merged.root.linear_velocity, [1.0, 0, 0])
    np.testing.assert_array_equal(merged.root.angular_velocity, [0.0, 0, 1])
    assert merged.root.position is None
    c = RobotState(root=RootState(linear_velocity=[0.0, 1, 0]))
    assert combine_robot_states(a, c) is None


def test_combine_spatial_states() -> None:
    pos = SpatialState.from_name(FRAMES, positions=(["tool"], np.array([[1.0, 2, 3]])))
    ori = SpatialState.from_name(
        FRAMES,
        orientations=(["tool"], np.array([[1.0, 0, 0, 0]])),
        positions=(["cam"], np.array([[4.0, 5, 6]])),
    )
    merged = combine_robot_states(RobotState(sites=pos), RobotState(sites=ori))
    assert merged is not None and merged.sites is not None
    pose = merged.sites.get_pose("tool")
    assert pose is not None
    np.testing.assert_array_equal(pose[0], [1.0, 2, 3])
    np.testing.assert_array_equal(pose[1], [1.0, 0, 0, 0])
    np.testing.assert_array_equal(merged.sites.get_position("cam"), [4.0, 5, 6])
    # links and sites are merged separately
    both = combine_robot_states(RobotState(links=pos), RobotState(sites=pos))
    assert both is not None and both.links is not None and both.sites is not None
    # same (frame, field) twice, or a different frame list, gives None
    assert combine_robot_states(RobotState(sites=pos), RobotState(sites=pos)) is None
    other = SpatialState.from_name(["tool", "base"], orientations=(["tool"], np.eye(4)[:1]))
    assert combine_robot_states(RobotState(links=pos), RobotState(links=other)) is None


def test_combine_one_conflict_voids_everything() -> None:
    a = RobotState(joints=joint_positions(["a"], [1.0]), root=RootState(position=[0.0, 0, 0]))
    b = RobotState(joints=joint_positions(["b"], [1.0]), root=RootState(position=[1.0, 0, 0]))
    assert combine_robot_states(a, b) is None


@given(
    st.lists(st.booleans(), min_size=12, max_size=12),
    st.lists(st.booleans(), min_size=12, max_size=12),
)
@settings(max_examples=100, deadline=None)
def test_combine_is_union_or_none(mask_a: list[bool], mask_b: list[bool]) -> None:
    va = np.array(mask_a).reshape(3, 4)
    vb = np.array(mask_b).reshape(3, 4)
    a = JointState(SPACE, np.where(va, 1.0, 0.0), va)
    b = JointState(SPACE, np.where(vb, 2.0, 0.0), vb)
    merged = combine_robot_states(RobotState(joints=a), RobotState(joints=b))
    if (va & vb).any():
        assert merged is None
        return
    assert merged is not None and merged.joints is not None
    np.testing.assert_array_equal(merged.joints.valid_array, va | vb)
    np.testing.assert_array_equal(merged.joints.data_array, np.where(va, 1.0, np.where(vb, 2.0, 0)))


@given(values_st, values_st)
@settings(max_examples=150, deadline=None)
def test_root_arbitrary_input_is_valid_or_value_error(position, orientation) -> None:
    try:
        root = RootState(position=position, orientation=orientation)
    except ValueError:
        return
    assert np.isfinite(root.position).all() and np.isfinite(root.orientation).all()  # type: ignore[arg-type]
