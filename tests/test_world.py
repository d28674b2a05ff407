"""pinkctl.World: named obstacles, their checks, TOML files, MuJoCo scenes and the floor."""

from __future__ import annotations

import math
import pickle
import warnings

import mujoco
import numpy as np
import pytest
import trimesh

from pinkctl import ConfigurationError, InputError, MujocoSimulation, World
from pinkctl.errors import DescriptionNotFoundError, PinkctlWarning
from pinkctl.world import FLOOR, Obstacle, floor_height


def _two_boxes(path):
    """An STL file of two separate 0.1 m cubes, 0.5 m apart along x."""
    first = trimesh.creation.box((0.1, 0.1, 0.1))
    second = trimesh.creation.box((0.1, 0.1, 0.1))
    second.apply_translation((0.5, 0.0, 0.0))
    trimesh.util.concatenate([first, second]).export(path)
    return path


def _every_kind(folder) -> World:
    world = World()
    world.add_box("table", size=(0.8, 1.2, 0.04), position=(0.5, 0.0, 0.38))
    world.add_sphere("ball", radius=0.05, position=(0.3, 0.3, 0.5), movable=True)
    world.add_capsule("pole", radius=0.03, length=0.5, position=(0.0, 0.5, 0.25))
    world.add_cylinder("can", 0.04, 0.12, (0.4, -0.3, 0.06), (0.9, 0.1, 0.0, 0.0))
    world.add_halfspace("wall", normal=(0.0, -1.0, 0.0), offset=0.7)
    world.add_mesh("blocks", _two_boxes(folder / "blocks.stl"), position=(1.0, 0.0, 0.0))
    world.add_convex("wedge", [[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]], (2, 0, 0))
    return world


# ---------------------------------------------------------------------------- the API
def test_obstacles_are_named_records_in_the_order_added(tmp_path):
    world = _every_kind(tmp_path)
    assert list(world) == ["table", "ball", "pole", "can", "wall", "blocks", "wedge"]
    assert len(world) == 7 and "pole" in world and "nope" not in world
    assert [o.name for o in world.obstacles] == list(world)
    table = world["table"]
    assert table.kind == "box" and table.dimensions["size"] == (0.8, 1.2, 0.04)
    assert table.position == (0.5, 0.0, 0.38) and table.orientation == (1.0, 0.0, 0.0, 0.0)
    assert world["ball"].movable and not table.movable
    assert world["pole"].dimensions == {"radius": 0.03, "length": 0.5}
    assert world["wall"].dimensions == {"normal": (0.0, -1.0, 0.0), "offset": 0.7}
    assert [len(p) for p in world["blocks"].pieces] == [8, 8]
    assert len(world["wedge"].pieces) == 1 and len(world["wedge"].dimensions["vertices"]) == 4
    with pytest.raises(TypeError):
        table.dimensions["size"] = (1.0, 1.0, 1.0)  # read-only
    with pytest.raises(AttributeError):
        table.position = (0.0, 0.0, 0.0)  # frozen
    with pytest.raises(KeyError, match="no obstacle named 'nope'.*table"):
        world["nope"]


def test_orientation_is_normalised_with_w_nonnegative():
    world = World()
    record = world.add_box("b", (1, 1, 1), orientation=(-2.0, 0.0, 0.0, 0.0))
    assert record.orientation == (1.0, 0.0, 0.0, 0.0)
    record = world.move("b", orientation=(0.0, 0.0, 0.0, -3.0))
    assert record.orientation == (0.0, 0.0, 0.0, 1.0)
    half = math.sqrt(0.5)
    record = world.move("b", orientation=(-1.0, 0.0, 0.0, 1.0))
    assert record.orientation == pytest.approx((half, 0.0, 0.0, -half))
    assert np.allclose(record.placement.rotation, [[0, 1, 0], [-1, 0, 0], [0, 0, 1]])


def test_halfspace_is_normalised_and_moves_its_plane():
    world = World()
    wall = world.add_halfspace("wall", normal=(0.0, 0.0, 2.0), offset=1.0)
    assert wall.dimensions == {"normal": (0.0, 0.0, 1.0), "offset": 0.5}
    assert wall.position == (0.0, 0.0, 0.5)
    # moved: the plane goes through the new position, its normal turned by the orientation
    moved = world.move("wall", position=(3.0, 4.0, -0.2))
    assert moved.dimensions["offset"] == pytest.approx(-0.2)
    assert moved.position == pytest.approx((0.0, 0.0, -0.2))  # canonical: nearest the origin
    half = math.sqrt(0.5)
    tilted = world.move("wall", orientation=(half, half, 0.0, 0.0))  # z turned to -y
    assert tilted.dimensions["normal"] == pytest.approx((0.0, -1.0, 0.0), abs=1e-15)


def test_every_change_bumps_the_version_and_moving_keeps_the_shape(tmp_path):
    world = World()
    versions = [world.version]
    world.add_sphere("s", 0.1)
    versions.append(world.version)
    before = world["s"]
    after = world.move("s", position=(1, 2, 3))
    versions.append(world.version)
    assert after.position == (1.0, 2.0, 3.0) and after.shapes is before.shapes
    assert world["s"] is after
    assert world.remove("s") is after and "s" not in world
    versions.append(world.version)
    assert len(set(versions)) == 4 and versions == sorted(versions)


def test_a_move_to_the_same_pose_changes_nothing():
    """A tracker that moves an obstacle every tick to where it sees it: while it stands
    still, the version (what consumers rebuild on) stays."""
    world = World()
    world.add_box("b", size=(0.1, 0.2, 0.3), position=(0.5, 0, 0.2), orientation=(0, 0, 0, 1))
    world.add_halfspace("table", normal=(0, 0, 1), offset=0.7)
    record, version = world["b"], world.version
    assert world.move("b", position=[0.5, 0.0, 0.2]) is record
    assert world.move("b", orientation=(0.0, 0.0, 0.0, -1.0)) is record  # -q: same rotation
    assert world.move("table", position=world["table"].position) is world["table"]
    assert world.version == version
    moved = world.move("b", position=(0.5, 0.0, 0.2 + 1e-9))
    assert moved is not record and world.version == version + 1


def test_a_moved_record_is_the_record_built_at_the_new_pose(tmp_path):
    """A move keeps the shapes and dimensions and is at the new pose, even after the old
    record's placement was read (it is worked out once per record)."""
    world = _every_kind(tmp_path)
    for name in list(world):
        old = world[name]
        before = old.placement
        record = world.move(name, position=(0.1, -0.2, 0.3), orientation=(0.6, 0.0, 0.8, 0.0))
        built = Obstacle(
            record.name, record.kind, dict(record.dimensions), record.position,
            record.orientation, record.movable, record.pieces,
        )  # fmt: skip
        assert record == built and hash(record) == hash(built)
        assert record.shapes is old.shapes and old.placement == before
        assert record.placement.isApprox(built.placement, 1e-15)
        assert pickle.loads(pickle.dumps(record)) == record


def test_copy_and_equality(tmp_path):
    world = _every_kind(tmp_path)
    other = world.copy()
    assert other == world
    other.move("ball", position=(0.0, 0.0, 1.0))
    assert other != world and world["ball"].position == (0.3, 0.3, 0.5)


BAD_CALLS = [
    ("add_box", {"name": "b", "size": (0.0, 1.0, 1.0)}, "size[0]"),
    ("add_box", {"name": "b", "size": (1.0, 1.0)}, "size"),
    ("add_box", {"name": "b", "size": "111"}, "size"),
    ("add_box", {"name": "b", "size": (True, 1.0, 1.0)}, "size"),
    ("add_box", {"name": "b", "size": (math.nan, 1.0, 1.0)}, "size"),
    ("add_box", {"name": "b", "size": (1, 1, 1), "position": (1.0, 2.0)}, "position"),
    ("add_box", {"name": "b", "size": (1, 1, 1), "position": (math.inf, 0, 0)}, "position"),
    ("add_box", {"name": "b", "size": (1, 1, 1), "orientation": (0, 0, 0, 0)}, "orientation"),
    ("add_box", {"name": "b", "size": (1, 1, 1), "orientation": (1, 0, 0)}, "orientation"),
    ("add_box", {"name": "taken", "size": (1, 1, 1)}, "name"),
    ("add_box", {"name": "", "size": (1, 1, 1)}, "name"),
    ("add_box", {"name": " b", "size": (1, 1, 1)}, "name"),
    ("add_box", {"name": 3, "size": (1, 1, 1)}, "name"),
    ("add_box", {"name": "b", "size": (1, 1, 1), "movable": "yes"}, "movable"),
    ("add_sphere", {"name": "b", "radius": -1.0}, "radius"),
    ("add_sphere", {"name": "b", "radius": True}, "radius"),
    ("add_capsule", {"name": "b", "radius": 0.1, "length": -0.1}, "length"),
    ("add_cylinder", {"name": "b", "radius": 0.1, "length": 0.0}, "length"),
    ("add_halfspace", {"name": "b", "normal": (0, 0, 0)}, "normal"),
    ("add_halfspace", {"name": "b", "normal": (0, 0, 1), "offset": math.nan}, "offset"),
    ("add_mesh", {"name": "b", "path": 3}, "path"),
    ("add_mesh", {"name": "b", "path": "x.stl", "scale": 0.0}, "scale"),
    ("add_convex", {"name": "b", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]}, "flat"),
    ("add_convex", {"name": "b", "vertices": [[0, 0], [1, 0], [0, 1]]}, "vertices"),
    ("move", {"name": "nope", "position": (0, 0, 0)}, "name"),
    ("move", {"name": "taken"}, "position"),
    ("move", {"name": "taken", "position": (0, math.nan, 0)}, "position"),
    ("move", {"name": "taken", "orientation": (0, 0, 0, 0)}, "orientation"),
    ("remove", {"name": "nope"}, "name"),
]


@pytest.mark.parametrize(("method", "kwargs", "argument"), BAD_CALLS)
def test_bad_input_is_rejected_by_name_and_changes_nothing(method, kwargs, argument):
    world = World()
    world.add_box("taken", size=(1.0, 1.0, 1.0))
    before, version = world.copy(), world.version
    with pytest.raises(InputError, match=argument.replace("[", r"\[").replace("]", r"\]")):
        getattr(world, method)(**kwargs)
    assert world == before and world.version == version


def test_a_missing_mesh_file_is_named(tmp_path):
    world = World()
    with pytest.raises(DescriptionNotFoundError, match="missing.stl"):
        world.add_mesh("m", tmp_path / "missing.stl")
    assert len(world) == 0 and world.version == 0


def test_mesh_pieces_are_the_hulls_of_its_components_scaled(tmp_path):
    world = World()
    record = world.add_mesh("blocks", _two_boxes(tmp_path / "b.stl"), scale=(2.0, 1.0, 1.0))
    assert record.dimensions["scale"] == (2.0, 1.0, 1.0)
    spans = sorted(tuple(np.ptp(p, axis=0).round(6)) for p in record.pieces)
    assert spans == [(0.2, 0.1, 0.1), (0.2, 0.1, 0.1)]
    centres = sorted(float(p[:, 0].mean().round(6)) for p in record.pieces)
    assert centres == [0.0, 1.0]  # 0.5 m apart in the file, scaled by 2 along x
    assert len(record.shapes) == 2  # (STL files hold single-precision vertices)


# ---------------------------------------------------------------------------- TOML
def test_toml_round_trip_is_exact(tmp_path):
    world = _every_kind(tmp_path)
    world.move("ball", position=(0.1, 0.2, 0.3), orientation=(0.3, 0.1, 0.2, 0.9))
    world.move("wall", position=(0.0, 0.6, 0.0), orientation=(0.7, 0.1, 0.0, 0.2))
    path = tmp_path / "scene.toml"
    world.save(path)
    text = path.read_text()
    assert "[obstacles.table]" in text and 'path = "blocks.stl"' in text
    loaded = World.load(path)
    assert loaded == world
    assert list(loaded) == list(world)
    for name in world:
        assert loaded[name] == world[name], name
    # a second round trip writes the same text
    loaded.save(tmp_path / "again.toml")
    assert (tmp_path / "again.toml").read_text() == text


BAD_FILES = [
    (
        "[obstacles.t]\nkind = 'box'\nsize = [1, 1, 1]\ncolour = 'red'\n",
        r"line 1.*obstacles\.t.*"
        r"unknown keys \['colour'\].*known keys: \['kind', 'size', 'position'",
    ),
    ("[obstacles.t]\nkind = 'cone'\n", r"obstacles\.t.*kind must be one of"),
    ("[obstacles.t]\nkind = 'sphere'\n", r"obstacles\.t.*missing keys \['radius'\]"),
    ("\n[obstacles.t]\nkind = 'sphere'\nradius = -1\n", r"line 2.*obstacles\.t.*radius"),
    ("[obstacles.t]\nkind = 'box'\nsize = [1, 1, 1]\nposition = [0, 'a', 0]\n", "position"),
    ("[obstacles.t]\nkind = 'mesh'\npath = 3\n", "path must be a string"),
    ("[obstacles]\nt = 3\n", r"obstacles\.t: expected a table"),
    ("obstacles = 3\n", "obstacles must be a table"),
    ("[world]\nx = 1\n", r"unknown keys \['world'\]; known keys: \['obstacles'\]"),
    ("[obstacles.t\n", "not valid TOML"),
    (
        "[obstacles.a]\nkind = 'sphere'\nradius = 1\n[obstacles.b]\nkind = 'sphere'\nradius = 0\n",
        r"line 4.*obstacles\.b.*radius",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES)
def test_bad_toml_files_name_the_file_the_obstacle_and_the_key(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match="bad.toml") as caught:
        World.load(path)
    assert caught.match(message)


def test_missing_files_are_not_found_errors(tmp_path):
    with pytest.raises(DescriptionNotFoundError, match="nope.toml"):
        World.load(tmp_path / "nope.toml")
    path = tmp_path / "w.toml"
    path.write_text("[obstacles.m]\nkind = 'mesh'\npath = 'gone.stl'\n")
    with pytest.raises(DescriptionNotFoundError, match=r"w.toml.*obstacles\.m.*gone.stl"):
        World.load(path)


# ---------------------------------------------------------------------------- MuJoCo
SCENE = """
<mujoco>
  <asset>
    <mesh name="tetra" vertex="0 0 0  0.2 0 0  0 0.2 0  0 0 0.2"/>
  </asset>
  <worldbody>
    <geom name="ground" type="plane" size="2 2 0.1" pos="0 0 -0.05"/>
    <geom name="tilted" type="plane" size="1 1 0.1" pos="0 2 0" euler="90 0 0"/>
    <geom name="marker" type="sphere" size="0.02" contype="0" conaffinity="0"/>
    <geom name="blob" type="ellipsoid" size="0.1 0.2 0.3" pos="5 0 0"/>
    <body name="table" pos="0.5 0 0.4" euler="0 0 90">
      <geom name="top" type="box" size="0.4 0.6 0.02"/>
      <geom type="cylinder" size="0.03 0.2" pos="0.3 0.5 -0.2"/>
      <geom name="post" type="capsule" size="0.02 0.1" pos="0 0 0.2"/>
      <geom name="tet" type="mesh" mesh="tetra" pos="0 0 0.1"/>
    </body>
    <body name="target" mocap="true" pos="0.2 0.2 0.8">
      <geom name="ball" type="sphere" size="0.05"/>
    </body>
    <body name="robot_base" pos="-0.5 0 0">
      <geom name="base_geom" type="box" size="0.1 0.1 0.05"/>
      <body name="arm">
        <joint name="hinge" type="hinge"/>
        <geom name="arm_geom" type="capsule" size="0.03 0.2"/>
      </body>
    </body>
    <body name="cube" pos="1 1 0.1">
      <freejoint/>
      <geom name="cube_geom" type="box" size="0.02 0.02 0.02"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_from_mujoco_reads_the_static_and_mocap_geoms(tmp_path):
    path = tmp_path / "scene.xml"
    path.write_text(SCENE)
    with pytest.warns(PinkctlWarning, match=r"blob \(mjGEOM_ELLIPSOID\)"):
        world = World.from_mujoco(path)
    assert list(world) == ["ground", "tilted", "top", "table/geom0", "post", "tet", "ball"]
    assert world["ground"].dimensions["offset"] == pytest.approx(-0.05)
    assert world["ground"].dimensions["normal"] == pytest.approx((0.0, 0.0, 1.0))
    assert world["tilted"].dimensions["normal"] == pytest.approx((0.0, -1.0, 0.0), abs=1e-12)
    assert world["tilted"].dimensions["offset"] == pytest.approx(-2.0)
    top = world["top"]
    assert top.kind == "box" and top.dimensions["size"] == pytest.approx((0.8, 1.2, 0.04))
    assert top.position == pytest.approx((0.5, 0.0, 0.4))
    assert np.allclose(top.placement.rotation, [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12)
    cylinder = world["table/geom0"]
    assert cylinder.kind == "cylinder" and cylinder.dimensions["length"] == pytest.approx(0.4)
    assert cylinder.position == pytest.approx((0.5 - 0.5, 0.3, 0.2))  # turned 90 deg about z
    assert world["post"].kind == "capsule" and world["post"].dimensions["length"] == 0.2
    tet = world["tet"]
    assert tet.kind == "convex" and len(tet.pieces[0]) == 4
    corners = np.array([tet.placement.act(p) for p in tet.pieces[0]])
    expected = np.array([[0.5, 0.0, 0.5], [0.5, 0.2, 0.5], [0.3, 0.0, 0.5], [0.5, 0.0, 0.7]])
    # MuJoCo keeps mesh vertices in single precision
    assert np.allclose(np.sort(corners, axis=0), np.sort(expected, axis=0), atol=1e-6)
    assert world["ball"].movable and not top.movable
    assert world["ball"].position == pytest.approx((0.2, 0.2, 0.8))
    # a compiled model reads the same
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PinkctlWarning)
        again = World.from_mujoco(mujoco.MjModel.from_xml_string(SCENE))
    assert list(again) == list(world)


def test_from_mujoco_rejects_what_it_cannot_read(tmp_path):
    with pytest.raises(InputError, match="source"):
        World.from_mujoco(3)
    with pytest.raises(DescriptionNotFoundError, match="none.xml"):
        World.from_mujoco(tmp_path / "none.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><geom type='box'/></worldbody>")
    with pytest.raises(ConfigurationError, match="bad.xml"):
        World.from_mujoco(bad)


# ---------------------------------------------------------------------------- the floor
@pytest.mark.parametrize("name", ["franka", "ur5", "so101"])
def test_the_world_floor_is_the_simulation_floor(name):
    from pinkctl import load_pink_supported_robot

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PinkctlWarning)
        robot = load_pink_supported_robot(name)
        simulation = MujocoSimulation.from_robot(robot)
    geom = mujoco.mj_name2id(simulation.model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    height = float(simulation.model.geom_pos[geom][2])
    floor = World.for_robot(robot)[FLOOR]
    assert floor.kind == "halfspace" and floor.dimensions["normal"] == (0.0, 0.0, 1.0)
    assert floor.dimensions["offset"] == height == floor_height(robot)
    assert height <= 0.0


def test_the_robot_floor_setting_is_followed(franka_robot):
    import dataclasses

    raised = dataclasses.replace(franka_robot, floor=-0.25)
    assert World.for_robot(raised)[FLOOR].dimensions["offset"] == -0.25
    none = dataclasses.replace(franka_robot, floor=False)
    assert len(World.for_robot(none)) == 0 and floor_height(none) is None
    world = World.for_robot(franka_robot)
    world.remove(FLOOR)
    assert len(world) == 0


def test_records_can_be_shared_between_worlds():
    first = World()
    ball = first.add_sphere("ball", 0.1, (1, 2, 3))
    second = World()
    assert second.add(ball) is ball and second == first
    with pytest.raises(InputError, match="name"):
        second.add(ball)
    with pytest.raises(InputError, match="Obstacle"):
        second.add("ball")
    assert isinstance(ball, Obstacle) and hash(ball) == hash(second["ball"])


def test_a_world_pickles_by_value(tmp_path):
    """Worker processes receive worlds pickled; the coal shapes are built again."""
    import pickle

    world = _every_kind(tmp_path)
    again = pickle.loads(pickle.dumps(world))
    assert again == world and list(again) == list(world)
    for name in world:
        assert len(again[name].shapes) == len(world[name].shapes)
        assert [p.tolist() for p in again[name].pieces] == [p.tolist() for p in world[name].pieces]
    again.move("ball", position=(0.0, 0.0, 0.0))
    assert world["ball"].position == (0.3, 0.3, 0.5)


@pytest.mark.parametrize(
    ("kind", "dimensions", "message"),
    [
        ("cone", {"radius": 1.0}, "kind"),
        ("sphere", {"radius": -1.0}, "radius"),
        ("sphere", {"size": (1, 1, 1)}, r"dimensions of a sphere must be \['radius'\]"),
        ("box", {"size": (1.0, 0.0, 1.0)}, r"size\[1\]"),
        ("capsule", {"radius": 0.1, "length": math.inf}, "length"),
        ("halfspace", {"normal": (1.0, 0.0, 0.0), "offset": 0.0}, "pose must match"),
        ("convex", {"vertices": ((0, 0, 0),)}, "needs pieces"),
    ],
)
def test_records_built_by_hand_are_held_to_the_same_rules(kind, dimensions, message):
    with pytest.raises(InputError, match=message):
        Obstacle("o", kind, dimensions, (0.0, 0.0, 0.0))
    with pytest.raises(InputError, match="position"):
        Obstacle("o", "sphere", {"radius": 1.0}, (0.0, math.nan, 0.0))


def test_replace_puts_another_worlds_record_in_place():
    user, mirror = World(), World()
    ball = user.add_sphere("ball", radius=0.05, position=(0.3, 0.0, 0.5), movable=True)
    mirror.add(ball)
    version = mirror.version
    assert mirror.replace(ball) is ball and mirror.version == version  # the same record
    moved = user.move("ball", position=(0.3, 0.1, 0.5))
    assert mirror.replace(moved) is moved
    assert mirror["ball"].position == (0.3, 0.1, 0.5) and mirror.version == version + 1
    with pytest.raises(InputError, match="no obstacle named 'box'"):
        mirror.replace(user.add_box("box", size=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0)))
    with pytest.raises(InputError, match="obstacle must be an Obstacle"):
        mirror.replace("ball")  # type: ignore[arg-type]
    assert list(mirror) == ["ball"] and mirror.version == version + 1


def test_a_placement_is_the_records_pose_and_a_copy():
    world = World()
    record = world.add_box("box", size=(0.1, 0.2, 0.3), position=(0.1, 0.2, 0.3),
                           orientation=(0.0, 0.0, 0.0, 1.0))  # fmt: skip
    placement = record.placement
    np.testing.assert_allclose(placement.translation, (0.1, 0.2, 0.3))
    np.testing.assert_allclose(placement.rotation, np.diag([-1.0, -1.0, 1.0]), atol=1e-15)
    placement.translation[:] = 0.0  # the caller's copy: the record keeps its pose
    np.testing.assert_allclose(record.placement.translation, (0.1, 0.2, 0.3))
