"""Quaternion and rotation-vector conversions of :mod:`pinkctl.core.poses` (w, x, y, z)."""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pinkctl.core.poses import (
    canonical_quaternion,
    checked_pose,
    matrix_to_quaternion,
    quaternion_angle,
    quaternion_from_rotation_vector,
    quaternion_product,
    quaternion_to_matrix,
    quaternion_to_rotation_vector,
    rotate_by_vector,
    rotation_vector_between,
    unit_quaternions,
)
from pinkctl.errors import InputError

HALF = math.sqrt(0.5)
#: +90 degrees about z, (w, x, y, z).
QUARTER_Z = np.array([HALF, 0.0, 0.0, HALF])

components = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
quaternions = st.tuples(components, components, components, components).filter(
    lambda q: np.linalg.norm(q) > 1e-3
)
rotation_vectors = st.tuples(components, components, components).map(
    lambda r: 3.0 * np.array(r)  # angles up to about 5.2 rad: past pi too
)


def _unit(q: tuple[float, ...]) -> np.ndarray:
    return np.array(q) / np.linalg.norm(q)


def test_quaternion_to_matrix_is_wxyz_and_normalises() -> None:
    expected = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(quaternion_to_matrix(QUARTER_Z), expected, atol=1e-15)
    np.testing.assert_allclose(quaternion_to_matrix(5.0 * QUARTER_Z), expected, atol=1e-15)
    np.testing.assert_allclose(quaternion_to_matrix(-QUARTER_Z), expected, atol=1e-15)


@pytest.mark.parametrize("bad", [[0.0, 0.0, 0.0, 0.0], [np.nan, 1.0, 0.0, 0.0], [np.inf, 0, 0, 0]])
def test_quaternion_to_matrix_rejects_zero_and_non_finite(bad: list[float]) -> None:
    with pytest.raises(InputError, match="quaternion"):
        quaternion_to_matrix(bad)


@settings(max_examples=200, deadline=None)
@given(quaternions)
def test_matrix_round_trip_up_to_sign(q: tuple[float, ...]) -> None:
    unit = _unit(q)
    back = matrix_to_quaternion(quaternion_to_matrix(unit))
    assert back[0] >= 0.0
    assert abs(np.linalg.norm(back) - 1.0) < 1e-12
    # the same rotation: q or -q (w = 0 leaves the sign open)
    assert min(np.abs(back - unit).max(), np.abs(back + unit).max()) < 1e-12
    if abs(unit[0]) > 1e-9:
        np.testing.assert_allclose(back, unit if unit[0] > 0.0 else -unit, atol=1e-12)
        np.testing.assert_allclose(canonical_quaternion(-unit), back, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(rotation_vectors)
def test_rotation_vector_round_trip(r: np.ndarray) -> None:
    q = quaternion_from_rotation_vector(r)
    assert abs(np.linalg.norm(q) - 1.0) < 1e-12
    np.testing.assert_allclose(quaternion_to_matrix(q), pin.exp3(r), atol=1e-12)
    back = quaternion_to_rotation_vector(q)
    assert np.linalg.norm(back) <= math.pi + 1e-12
    np.testing.assert_allclose(pin.exp3(back), pin.exp3(r), atol=1e-12)
    np.testing.assert_allclose(quaternion_to_rotation_vector(-q), back, atol=1e-12)  # q ~ -q


@settings(max_examples=200, deadline=None)
@given(quaternions, quaternions)
def test_angle_and_rotation_vector_between_match_log3(
    a: tuple[float, ...], b: tuple[float, ...]
) -> None:
    qa, qb = _unit(a), _unit(b)
    ra, rb = quaternion_to_matrix(qa), quaternion_to_matrix(qb)
    between = rotation_vector_between(qa, qb)
    np.testing.assert_allclose(pin.exp3(between) @ ra, rb, atol=1e-9)
    angle = quaternion_angle(qa, qb)
    if angle < math.pi - 1e-6:  # at a half turn either direction is right
        np.testing.assert_allclose(between, pin.log3(rb @ ra.T), atol=1e-9)
    assert 0.0 <= angle <= math.pi + 1e-12
    assert angle == pytest.approx(np.linalg.norm(pin.log3(ra.T @ rb)), abs=1e-9)
    # q and -q are the same orientation; the angle is symmetric; scale does not matter
    assert quaternion_angle(-qa, qb) == pytest.approx(angle, abs=1e-12)
    assert quaternion_angle(qb, qa) == pytest.approx(angle, abs=1e-12)
    assert quaternion_angle(3.0 * qa, qb) == pytest.approx(angle, abs=1e-12)


def test_angle_is_accurate_for_tiny_rotations() -> None:
    tiny = quaternion_from_rotation_vector([1e-10, 0.0, 0.0])
    assert quaternion_angle(np.array([1.0, 0.0, 0.0, 0.0]), tiny) == pytest.approx(1e-10)
    assert quaternion_angle(QUARTER_Z, QUARTER_Z) == 0.0
    assert quaternion_angle([1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]) == pytest.approx(math.pi)


@settings(max_examples=200, deadline=None)
@given(quaternions, rotation_vectors)
def test_rotate_by_vector_is_a_world_frame_turn(q: tuple[float, ...], r: np.ndarray) -> None:
    unit = _unit(q)
    turned = rotate_by_vector(unit, r)
    np.testing.assert_allclose(
        quaternion_to_matrix(turned), pin.exp3(r) @ quaternion_to_matrix(unit), atol=1e-12
    )
    np.testing.assert_allclose(
        turned, quaternion_product(quaternion_from_rotation_vector(r), unit), atol=1e-12
    )
    # the shortest turn between two orientations takes one to the other
    step = rotation_vector_between(unit, turned)
    assert quaternion_angle(rotate_by_vector(unit, step), turned) < 1e-9


def test_products_keep_the_sign_and_compose_rotations() -> None:
    a = _unit((0.3, -0.5, 0.4, 0.7))
    b = _unit((-0.9, 0.1, 0.2, -0.1))
    product = quaternion_product(a, b)
    np.testing.assert_allclose(
        quaternion_to_matrix(product),
        quaternion_to_matrix(a) @ quaternion_to_matrix(b),
        atol=1e-12,
    )
    np.testing.assert_allclose(quaternion_product(-a, b), -product, atol=1e-15)
    small = rotate_by_vector(-QUARTER_Z, [0.0, 0.0, 0.1])
    assert small[0] < 0.0  # follows the input's sign
    assert canonical_quaternion(small)[0] > 0.0


def test_unit_quaternions_validates_and_normalises() -> None:
    out = unit_quaternions([[2.0, 0.0, 0.0, 0.0], [0.0, -3.0, 0.0, 0.0]], "orientations")
    np.testing.assert_array_equal(out, [[1.0, 0.0, 0.0, 0.0], [0.0, -1.0, 0.0, 0.0]])
    assert unit_quaternions(QUARTER_Z, "q", count=1).shape == (1, 4)
    with pytest.raises(InputError, match="orientations must have 2 rows"):
        unit_quaternions(QUARTER_Z, "orientations", count=2)
    with pytest.raises(InputError, match="zero quaternion"):
        unit_quaternions([0.0, 0.0, 0.0, 0.0], "q")
    with pytest.raises(InputError, match="shape"):
        unit_quaternions([1.0, 0.0, 0.0], "q")
    with pytest.raises(InputError, match="finite"):
        unit_quaternions([np.nan, 0.0, 0.0, 1.0], "q")


def test_checked_pose_canonicalises() -> None:
    position, quaternion = checked_pose([1, 2, 3], -2.0 * QUARTER_Z)
    np.testing.assert_array_equal(position, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(quaternion, QUARTER_Z, atol=1e-15)
    with pytest.raises(InputError):
        checked_pose([1, 2], QUARTER_Z)
