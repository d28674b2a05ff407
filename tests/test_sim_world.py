"""A World in the MuJoCo simulation: same shapes and poses as the collision scene, moving
obstacles followed, read back by World.from_mujoco, the robot's contacts counted."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest
import trimesh

from pinkctl import load_pink_supported_robot
from pinkctl.errors import InputError, PinkctlWarning
from pinkctl.sim import ContactReport, MujocoSimulation
from pinkctl.world import CollisionScene, World

LINKS = ("panda_hand", "panda_link5", "panda_link3", "panda_leftfinger")


@pytest.fixture(scope="module")
def franka():
    return load_pink_supported_robot("franka")


def _world(robot, folder) -> World:
    """One obstacle of each kind around the franka's workspace."""
    world = World.for_robot(robot)
    world.add_box(
        "box", size=(0.1, 0.2, 0.3), position=(0.5, 0.1, 0.4), orientation=(0.9, 0.1, 0.2, 0.3)
    )
    world.add_sphere("ball", radius=0.08, position=(0.3, -0.3, 0.6), movable=True)
    world.add_capsule(
        "capsule",
        radius=0.05,
        length=0.3,
        position=(0.2, 0.4, 0.5),
        orientation=(0.7, 0.7, 0.0, 0.0),
    )
    world.add_cylinder(
        "cylinder",
        radius=0.06,
        length=0.25,
        position=(-0.3, 0.3, 0.5),
        orientation=(0.8, 0.0, 0.6, 0.0),
        movable=True,
    )
    world.add_halfspace("wall", normal=(0.0, -1.0, 0.0), offset=-0.7)
    first = trimesh.creation.box((0.08, 0.08, 0.08))
    second = trimesh.creation.icosphere(radius=0.05)
    second.apply_translation((0.0, 0.2, 0.0))
    path = folder / "two.stl"
    trimesh.util.concatenate([first, second]).export(path)
    world.add_mesh("mesh", path, position=(0.45, -0.25, 0.25), orientation=(0.9, 0.0, 0.0, 0.4))
    points = np.random.default_rng(0).uniform(-0.06, 0.06, (20, 3))
    world.add_convex("hull", points, position=(0.0, 0.5, 0.3), movable=True)
    return world


@pytest.fixture(scope="module")
def scene(franka, tmp_path_factory):
    world = _world(franka, tmp_path_factory.mktemp("meshes"))
    return world, MujocoSimulation.from_robot(franka, world=world)


def _link_geoms(model, link):
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, link)
    return [g for g in range(model.ngeom) if model.geom_bodyid[g] == body and model.geom_contype[g]]


def _compare_distances(robot, world, sim, q):
    """Largest |MuJoCo - CollisionScene| [m] over obstacles x LINKS at ``q``."""
    sim.set_configuration(q)
    distances = CollisionScene(robot, world).distances(q)
    worst = 0.0
    for name, geoms in sim.obstacles.geom_ids.items():
        for link in LINKS:
            ours = min(
                d.distance
                for d in distances
                if d.pair.kind == "obstacle"
                and d.pair.link_a == link
                and d.pair.body_b.startswith(name)
            )
            theirs = min(
                mujoco.mj_geomDistance(sim.model, sim.data, g, o, 10.0, None)
                for g in _link_geoms(sim.model, link)
                for o in geoms
            )
            worst = max(worst, abs(ours - theirs))
    return worst


def test_every_shape_has_the_distance_of_the_collision_scene(franka, scene):
    """MuJoCo's geom distance and pinkctl's signed distance agree within 1 mm for every
    obstacle kind and four links, over random configurations (in penetration too)."""
    world, sim = scene
    rng = np.random.default_rng(3)
    model = franka.model
    assert set(sim.obstacles.geom_ids) == set(world)
    assert len(sim.obstacles.geom_ids["mesh"]) == 2
    for _ in range(6):
        q = model.lowerPositionLimit + rng.random(model.nq) * (
            model.upperPositionLimit - model.lowerPositionLimit
        )
        assert _compare_distances(franka, world, sim, q) < 1e-3
    sim.reset()


def test_moving_obstacles_follow_the_world(franka, scene):
    world, sim = scene
    ball = world["ball"]
    try:
        world.move("ball", position=(0.1, 0.2, 0.3))
        world.move("box", position=(0.6, 0.0, 0.4), orientation=(1.0, 0.0, 0.0, 0.0))
        world.move("cylinder", orientation=(0.0, 1.0, 0.0, 0.0))
        sim.step()
        body = mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_BODY, "ball")
        np.testing.assert_allclose(sim.data.xpos[body], (0.1, 0.2, 0.3), atol=1e-12)
        box = sim.obstacles.geom_ids["box"][0]
        np.testing.assert_allclose(sim.data.geom_xpos[box], (0.6, 0.0, 0.4), atol=1e-12)
        np.testing.assert_allclose(sim.data.geom_xmat[box], np.eye(3).ravel(), atol=1e-12)
        cylinder = sim.obstacles.geom_ids["cylinder"][0]
        np.testing.assert_allclose(
            sim.data.geom_xmat[cylinder].reshape(3, 3)[:, 2], (0, 0, -1), atol=1e-12
        )
        # a reset keeps the world's poses (MuJoCo's own reset puts mocap bodies back)
        sim.reset()
        np.testing.assert_allclose(sim.data.xpos[body], (0.1, 0.2, 0.3), atol=1e-12)
        assert _compare_distances(franka, world, sim, franka.q0) < 1e-3
    finally:
        world.move("ball", position=ball.position)
        world.move("box", position=(0.5, 0.1, 0.4), orientation=(0.9, 0.1, 0.2, 0.3))
        world.move("cylinder", orientation=(0.8, 0.0, 0.6, 0.0))
        sim.reset()


def test_obstacles_read_back_from_the_model(scene):
    """World.from_mujoco on the simulation's model gives the obstacles back (a mesh's pieces as
    convex obstacles ``mesh[k]``, movable ones as mocap bodies at their initial poses)."""
    world, sim = scene
    back = World.from_mujoco(sim.model)
    expected = {n for n in world if n != "mesh"} | {"mesh[0]", "mesh[1]"}
    assert set(back) == expected
    for name in expected - {"mesh[0]", "mesh[1]", "hull"}:
        ours, theirs = world[name], back[name]
        assert (theirs.kind, theirs.movable) == (ours.kind, ours.movable)
        np.testing.assert_allclose(theirs.position, ours.position, atol=1e-9)
        np.testing.assert_allclose(theirs.orientation, ours.orientation, atol=1e-9)
        for key, value in ours.dimensions.items():
            np.testing.assert_allclose(theirs.dimensions[key], value, atol=1e-9)
    for name in ("mesh[0]", "mesh[1]", "hull"):
        assert back[name].kind == "convex"
    assert back["hull"].movable


def test_the_world_floor_is_the_simulation_floor(franka):
    world = World.for_robot(franka)
    world.move("floor", position=(0.0, 0.0, -0.05))
    sim = MujocoSimulation.from_robot(franka, world=world)
    planes = [
        g for g in range(sim.model.ngeom) if sim.model.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE
    ]
    assert [sim.model.geom(g).name for g in planes] == ["floor"]
    assert sim.data.geom_xpos[planes[0]][2] == pytest.approx(-0.05)


def test_contacts_count_obstacles_and_depth(franka):
    world = World()
    sim = MujocoSimulation.from_robot(franka, world=world)
    report = sim.contacts()
    assert isinstance(report, ContactReport)
    assert (report.obstacle_contacts, report.self_contacts, report.depth) == (0, 0, 0.0)
    # a box obstacle that swallows part of the hand: contacts, as deep as the scene says
    hand = sim.get_body_pose("panda_hand")[0]
    world2 = World()
    world2.add_box("block", size=(0.1, 0.1, 0.1), position=hand + (0.0, 0.0, 0.06), movable=True)
    sim2 = MujocoSimulation.from_robot(franka, world=world2)
    report = sim2.contacts()
    assert report.obstacle_contacts > 0 and report.self_contacts == 0
    assert {p[1] for p in report.pairs} == {"block"}
    depth = -CollisionScene(franka, world2).min_distance(franka.q0)
    assert report.obstacle_depth == pytest.approx(depth, abs=1e-3)
    # removed from the world: no longer collides; back: collides again
    record = world2.remove("block")
    sim2.step()
    assert sim2.contacts().obstacle_contacts == 0
    world2.add(record)
    sim2.step()
    assert sim2.contacts().obstacle_contacts > 0


def test_a_moved_static_obstacle_collides_where_it_is(franka):
    world = World()
    world.add_box("block", size=(0.1, 0.1, 0.1), position=(1.0, 1.0, 1.0))
    sim = MujocoSimulation.from_robot(franka, world=world)
    assert sim.contacts().obstacle_contacts == 0
    world.move("block", position=sim.get_body_pose("panda_hand")[0] + (0.0, 0.0, 0.06))
    sim.step()
    report = sim.contacts()
    assert report.obstacle_contacts > 0 and report.obstacle_depth > 0.04


def test_the_floor_counts_as_an_obstacle(franka):
    sim = MujocoSimulation.from_robot(franka)
    q = franka.q0.copy()
    q[1] = 1.6  # shoulder forward: the arm goes through the floor
    sim.set_configuration(q)
    report = sim.contacts()
    assert report.obstacle_contacts > 0 and report.obstacle_depth > 0.01
    assert "floor" in {p[1] for p in report.pairs}
    assert MujocoSimulation(sim.model, sim.data).world is None
    with pytest.raises(InputError, match="robot"):
        MujocoSimulation(sim.model, sim.data).contacts()


def test_bad_worlds_are_rejected(franka):
    world = World()
    world.add_box("panda_link0", size=(0.1, 0.1, 0.1), position=(1.0, 0.0, 0.0), movable=True)
    with pytest.raises(InputError, match="body named 'panda_link0'"):
        MujocoSimulation.from_robot(franka, world=world)
    with pytest.raises(InputError, match="World"):
        MujocoSimulation.from_robot(franka, world={"box": 1})


def test_obstacles_added_later_are_not_simulated_and_say_so(franka):
    world = World()
    sim = MujocoSimulation.from_robot(franka, world=world)
    world.add_sphere("late", radius=0.1, position=(1.0, 0.0, 0.5))
    with pytest.warns(PinkctlWarning, match="late"):
        sim.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        world.move("late", position=(1.0, 0.0, 0.6))
        sim.step()  # warned once


def test_the_so101_pick_scene_table_is_its_world():
    from pinkctl.envs.scene import build_simulation
    from pinkctl.envs.so101_scene import SO101PickScene

    robot = load_pink_supported_robot("so101")
    scene = SO101PickScene(robot)
    assert list(scene.world) == ["table", "floor"]
    sim = build_simulation(robot, scene.callback(), physics_dt=0.002)
    back = World.from_mujoco(sim.model)
    for name in ("table", "floor"):
        np.testing.assert_allclose(back[name].position, scene.world[name].position, atol=1e-12)
        assert back[name].kind == scene.world[name].kind
    np.testing.assert_allclose(back["table"].dimensions["size"], (0.8, 0.9, 0.04))
    assert sim.model.geom("table").bodyid[0] == 0  # on the world body: it never moves
