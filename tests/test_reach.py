"""Reachability maps (pinkctl.reach): symmetric about the base's vertical axis, every reached
pose checked by forward kinematics, holes explained by the joint limits, the same map on a
pool, save/load, pictures and the ``pinkctl reach`` command. Coarse grids (0.2 m) keep it
quick; ``python -m bench.reach`` runs franka at 5 cm."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pinocchio as pin
import pytest

import pinkctl
from pinkctl import InputError
from pinkctl.app.cli import main as cli_main
from pinkctl.ik import IKSolver
from pinkctl.reach import (
    ReachabilityMap,
    VoxelGrid,
    reachability_map,
    spread_orientations,
    without_joint_limits,
)

RESOLUTION = 0.2


@pytest.fixture(scope="module")
def franka() -> pinkctl.PinkRobot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pinkctl.load_pink_supported_robot("franka")


@pytest.fixture(scope="module")
def pose_map(franka) -> ReachabilityMap:
    return reachability_map(franka, resolution=RESOLUTION, orientations=2)


@pytest.fixture(scope="module")
def position_map(franka) -> ReachabilityMap:
    return reachability_map(franka, resolution=RESOLUTION, orientations=None)


def test_grid_is_symmetric_about_the_vertical_axis(pose_map) -> None:
    x, y, _ = pose_map.grid.axes()
    np.testing.assert_allclose(x, -x[::-1], atol=1e-12)
    np.testing.assert_allclose(y, -y[::-1], atol=1e-12)
    assert pose_map.queried.sum() < pose_map.grid.size  # corners lie outside the reach ball


@pytest.mark.parametrize("turns", [1, 2, 3])
def test_franka_map_is_symmetric_about_the_base_axis(pose_map, turns) -> None:
    count = pose_map.count
    turned = np.rot90(count, k=turns, axes=(0, 1))  # a quarter turn maps the grid onto itself
    differ = (turned != count) & pose_map.queried
    assert pose_map.reachable.sum() > 200
    # sampling noise only (a voxel whose first answers collide needs more of the 4 restarts)
    assert differ.sum() <= 0.04 * pose_map.queried.sum()


def test_every_reached_pose_is_reached_by_forward_kinematics(franka, pose_map) -> None:
    solver = IKSolver(franka)
    data, fid = franka.model.createData(), franka.model.getFrameId(pose_map.frame)
    reached = np.argwhere(pose_map.reached)
    assert len(reached) > 300
    for at in map(tuple, reached):
        values = pose_map.q[at]
        assert np.all(values >= solver.subset.lower) and np.all(values <= solver.subset.upper)
        pin.framesForwardKinematics(franka.model, data, solver.subset.parse_seed(values, franka.q0))
        error = pin.log6(pose_map.target(at[:3], at[3]).actInv(data.oMf[fid])).vector
        assert np.abs(error).max() < 1e-4
    assert np.all(np.isnan(pose_map.q[~pose_map.reached]))
    assert np.all(pose_map.manipulability[pose_map.reached] > 0.0)
    assert np.all(pose_map.limit_distance[pose_map.reached] >= 0.0)


def test_holes_are_where_the_joint_limits_forbid(franka) -> None:
    # without a floor nor self-collisions: the holes the limits make lie under the base
    franka = dataclasses.replace(franka, floor=False)
    kinematic = {"self_collision": False, "resolution": RESOLUTION, "orientations": None}
    position_map = reachability_map(franka, **kinematic)
    free = reachability_map(without_joint_limits(franka), **kinematic)
    holes = np.argwhere(free.reachable & ~position_map.reachable)
    assert np.all(position_map.reachable <= free.reachable)
    assert len(holes) > 0
    limited = IKSolver(franka, position_only=True, self_collision=False)
    unlimited = IKSolver(without_joint_limits(franka), position_only=True, self_collision=False)
    data, fid = franka.model.createData(), franka.model.getFrameId(free.frame)
    for at in map(tuple, holes):
        centre = position_map.grid.centre(at)
        assert centre[2] < 0.0  # below the base, where the shoulder's limits keep the arm out
        values = free.q[(*at, 0)]
        outside = (values < limited.subset.lower) | (values > limited.subset.upper)
        assert outside.any()  # the unlimited solution breaks a limit ...
        pin.framesForwardKinematics(
            franka.model, data, unlimited.subset.parse_seed(values, franka.q0)
        )
        assert np.linalg.norm(data.oMf[fid].translation - centre) < 1e-4  # ... and gets there
        deep = limited.find(centre, time_budget_ms=None, max_restarts=100)
        assert not deep.success  # a bigger search within the limits does not


def test_a_pool_computes_the_same_map(franka, position_map) -> None:
    pooled = reachability_map(
        franka, resolution=RESOLUTION, orientations=None, workers=2, mp_context="fork"
    )
    np.testing.assert_array_equal(pooled.reached, position_map.reached)
    np.testing.assert_array_equal(pooled.q, position_map.q)


def test_save_load_round_trip(pose_map, tmp_path) -> None:
    path = pose_map.save(tmp_path / "franka")
    assert path.suffix == ".npz"
    loaded = ReachabilityMap.load(path)
    for field in dataclasses.fields(ReachabilityMap):
        a, b = getattr(pose_map, field.name), getattr(loaded, field.name)
        if field.name == "grid":
            np.testing.assert_array_equal(a.origin, b.origin)
            assert (a.resolution, a.shape) == (b.resolution, b.shape)
        elif isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b, field.name
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(InputError, match="not a reachability map"):
        ReachabilityMap.load(tmp_path / "other.npz")


def test_picture_of_a_map(pose_map, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from pinkctl.reach import plot_reachability_map

    figure = plot_reachability_map(pose_map, tmp_path / "map.png")
    assert (tmp_path / "map.png").stat().st_size > 10_000
    assert len(figure.axes) >= 4


def test_spread_orientations_are_rotations() -> None:
    rotations = spread_orientations(7)
    np.testing.assert_allclose(
        rotations @ rotations.transpose(0, 2, 1), np.eye(3)[None].repeat(7, 0), atol=1e-12
    )
    np.testing.assert_allclose(np.linalg.det(rotations), 1.0)
    directions = rotations[:, :, 2]
    assert abs(directions.mean(axis=0)).max() < 0.2  # spread over the sphere


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        ({"resolution": 0.0}, "resolution"),
        ({"bounds": [[0, 0, 0], [-1, 1, 1]]}, "bounds"),
        ({"orientations": 0}, "orientations"),
        ({"orientations": np.ones((2, 3, 3))}, "orientations"),
        ({"orientations": 2, "position_only": True}, "orientations"),
        ({"workers": 0}, "workers"),
    ],
)
def test_bad_map_arguments_are_refused(franka, arguments, match) -> None:
    with pytest.raises(InputError, match=match):
        reachability_map(franka, **{"resolution": RESOLUTION, **arguments})


def test_voxel_index_round_trip() -> None:
    grid = VoxelGrid.from_bounds([[-0.31, -0.2, 0.0], [0.3, 0.2, 0.5]], 0.1)
    assert grid.shape == (8, 5, 6)
    assert grid.index(grid.centre((3, 1, 4))) == (3, 1, 4)
    with pytest.raises(InputError, match="outside"):
        grid.index((5.0, 0.0, 0.0))


def test_reach_command_writes_the_map_and_its_picture(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    argv = ["reach", "so101", "--resolution", "0.1", "--orientations", "0", "--workers", "1"]
    assert cli_main([*argv, "--output", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "so101_reach.npz" in out and (tmp_path / "so101_reach.png").is_file()
    assert ReachabilityMap.load(tmp_path / "so101_reach.npz").position_only
    argv = ["reach", "so101", "--resolution", "0.3", "--orientations", "1", "--workers", "1"]
    assert cli_main([*argv, "--output", str(tmp_path / "poses")]) == 0
    assert "moves 5 joints" in capsys.readouterr().out  # full poses: mostly out of reach
    assert cli_main(["reach", "no_such_robot", "--output", str(tmp_path)]) == 2  # bad argument
    assert capsys.readouterr().err.startswith("pinkctl reach: ")
    assert cli_main(["reach", "so101", "--workers", "0", "--output", str(tmp_path)]) == 2
    assert "workers" in capsys.readouterr().err


@pytest.mark.xdist_group("ray")
def test_ray_computes_the_same_map(ray_cluster, franka, position_map) -> None:
    on_ray = reachability_map(
        franka, resolution=RESOLUTION, orientations=None, backend="ray", workers=2
    )
    np.testing.assert_array_equal(on_ray.reached, position_map.reached)
    np.testing.assert_array_equal(on_ray.q, position_map.q)


def test_a_grid_too_fine_is_refused_with_its_size(franka) -> None:
    """Issue 23: resolution=1e-4 used to allocate 75 TiB (MemoryError); now refused at once,
    naming the voxel count, the memory it would take and a resolution that fits."""
    with pytest.raises(InputError, match=r"resolution: 0\.0001 m makes .* voxels, over the limit"):
        reachability_map(franka, resolution=1e-4)
    with pytest.raises(InputError, match="GiB"):
        VoxelGrid.from_bounds([[-1, -1, -1], [1, 1, 1]], 1e-3)


def test_no_voxel_under_the_floor_is_reachable(franka, position_map) -> None:
    """The arm may fold its tool below its base, but not through the floor the simulation
    puts under it: voxels under the floor are not queried and not reached."""
    floor = pinkctl.world.floor_height(franka)
    assert floor is not None
    world_z = position_map.grid.centres()[..., 2] + franka.base_placement.translation[2]
    below = world_z < floor
    assert below.any()  # the default bounds reach under the floor
    assert not position_map.queried[below].any()
    assert not position_map.position_reached[below].any()
