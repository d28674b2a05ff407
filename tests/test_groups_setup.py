"""Saving, loading and duplicating a whole IK setup (pinkctl.groups.IKEnvironment) as TOML."""

from __future__ import annotations

import copy
import math
import re
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from pinkctl import load_pink_robot
from pinkctl.core.robot import robot_configurations_dir
from pinkctl.errors import ConfigurationError, InputError
from pinkctl.groups import Constraint, GroupFlags, IKElement, IKEnvironment, ResultCode
from pinkctl.groups.toml_lines import LineIndex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TOOL = "panda_hand_tcp"


def _pose(rotation: list[float], translation: list[float]) -> pin.SE3:
    return pin.SE3(pin.exp3(np.array(rotation)), np.array(translation))


def _setup(robot) -> IKEnvironment:
    """Every kind of content: dummies on the world, robot links, dummies and scene joints;
    scene joints of each kind; intervals, a dependency, two groups with joint settings."""
    env = IKEnvironment(robot)
    scene = env.scene
    tool = scene.world_pose(TOOL, scene.neutral())
    scene.add_dummy("goal", pose=tool * _pose([0.2, -0.1, 0.3], [0.04, 0.03, -0.02]))
    scene.add_joint("screw", parent="panda_hand", pose=_pose([0, 0, 0.1], [0, 0, 0.02]))
    scene.set_screw_lead("screw", 0.004)
    scene.add_dummy("screw_tip", parent="screw", pose=_pose([0, 0, 0], [0.01, 0, 0.05]))
    scene.add_joint("slide", "prismatic", parent="world", pose=_pose([0, 0.1, 0], [0.5, 0, 0]))
    scene.add_joint("ball", "spherical", parent="slide")
    scene.add_dummy("elbow_goal", parent="panda_link1", pose=_pose([0, 0, 0], [0.1, 0.2, 0.4]))
    scene.set_joint_interval("panda_joint7", lower=-2.0, range=3.5)
    scene.set_joint_interval("slide", lower=-0.25, range=0.5)
    scene.set_joint_dependency("panda_joint6", "panda_joint4", offset=3.9, mult=0.1 * 3)
    arm = env.add_group(
        "arm",
        [
            IKElement(TOOL, "goal", precision=(1e-5, 1e-4), weights=(1.0, 0.5, 2.0)),
            IKElement("screw_tip", "goal", constraints=Constraint.Z, enabled=False),
        ],
        method="dls",
        damping=0.02,
        max_iterations=40,
        flags=GroupFlags.ENABLED | GroupFlags.AVOID_LIMITS | GroupFlags.RESTORE_ON_BAD_ANG_TOL,
    )
    arm.set_joint("panda_joint1", weight=0.5, limit_margin=0.1, max_step=0.05)
    arm.set_joint("panda_joint2", mode="passive")
    env.add_group(
        "elbow",
        [
            IKElement(
                "panda_link4",
                "elbow_goal",
                base="panda_link1",
                constraint_base="elbow_goal",
                constraints=Constraint.X | Constraint.Y,
            )
        ],
        method="qp",
    )
    return env


@pytest.fixture
def robot(franka_robot):
    return franka_robot


@pytest.fixture
def saved(robot, tmp_path) -> tuple[IKEnvironment, Path]:
    env = _setup(robot)
    path = tmp_path / "setup.toml"
    env.save(path)
    return env, path


def _results(env: IKEnvironment) -> list[np.ndarray]:
    q = env.scene.neutral()
    out = [env.group("arm").solve(q).q]
    for priority in ("cascade", "nullspace"):
        out.append(env.solve(["arm", "elbow"], q, priority=priority).q)
    out.append(env.group("elbow").jacobian(q).J)
    return out


def test_save_load_solve_is_bit_identical(saved):
    env, path = saved
    loaded = IKEnvironment.load(path)
    for ours, theirs in zip(_results(env), _results(loaded), strict=True):
        assert ours.shape == theirs.shape
        assert ours.tobytes() == theirs.tobytes()
    assert loaded.scene.build_order == env.scene.build_order
    assert loaded.scene.model.nq == env.scene.model.nq


def test_save_load_save_gives_the_same_text(saved, tmp_path):
    _, path = saved
    again = tmp_path / "again.toml"
    IKEnvironment.load(path).save(again)
    assert again.read_text() == path.read_text()
    text = path.read_text()
    assert text.startswith("# pinkctl IK setup")
    flags = tomllib.loads(text)["groups"][0]["flags"]
    assert flags == ["enabled", "restore_on_bad_ang_tol", "avoid_limits"]
    assert "mult = 0.30000000000000004" in text  # repr: every bit of the float


def test_duplicate_and_deepcopy_are_independent(robot):
    env = _setup(robot)
    expected = _results(env)
    for copied in (env.duplicate(), copy.deepcopy(env)):
        assert copied.scene is not env.scene and copied.group("arm").scene is copied.scene
        for ours, theirs in zip(expected, _results(copied), strict=True):
            assert ours.tobytes() == theirs.tobytes()
        copied.scene.set_pose("goal", pin.SE3.Identity())
        copied.group("arm").method = "pinv"
    assert env.group("arm").method == "dls"
    for ours, theirs in zip(expected, _results(env), strict=True):
        assert ours.tobytes() == theirs.tobytes()


def test_a_robot_outside_the_catalog_is_saved_by_path(tmp_path):
    urdf = robot_configurations_dir() / "franka" / "robot.urdf"
    with pytest.warns(Warning):
        robot = load_pink_robot(urdf)
    env = IKEnvironment(robot)
    env.scene.add_dummy("goal", pose=_pose([0, 0, 0], [0.4, 0.0, 0.4]))
    env.add_group("reach", [IKElement(TOOL, "goal", constraints=Constraint.POSITION)])
    path = tmp_path / "custom.toml"
    env.save(path)
    assert f'urdf = "{urdf}"' in path.read_text()
    with pytest.warns(Warning):
        loaded = IKEnvironment.load(path)
    q = env.scene.neutral()
    assert loaded.group("reach").solve(q).q.tobytes() == env.group("reach").solve(q).q.tobytes()


def test_a_callback_dependency_cannot_be_saved(robot, tmp_path):
    env = IKEnvironment(robot)
    env.scene.set_joint_dependency("panda_joint3", "panda_joint1", callback=math.sin)
    with pytest.raises(InputError, match="callback"):
        env.save(tmp_path / "never.toml")
    assert not (tmp_path / "never.toml").exists()


#: How the writer spells the elbow goal's position (one item per line).
_ELBOW_GOAL_POSITION = "position = [\n    0.1,\n    0.2,\n    0.4,\n]"


def _line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines()) if needle in line) + 1


@pytest.mark.parametrize(
    ("old", "new", "line_of", "message"),
    [
        ('method = "dls"', 'method = "newton"', 'method = "newton"', "method"),
        ('"z",', '"w",', '"w"', "unknown name"),
        ("damping = 0.02", 'damping = "x"', 'damping = "x"', "wrong type"),
        ('tip = "panda_hand_tcp"\n', "", "[[groups.elements]]", "missing key 'tip'"),
        ('target = "goal"', 'aim = "goal"', 'aim = "goal"', r"unknown key 'aim'.*known: \['tip'"),
        ('parent = "panda_hand"', 'parent = "panda_wing"', 'parent = "panda_wing"', "not a frame"),
        ('type = "prismatic"', 'type = "cylindrical"', 'type = "cylindrical"', "unknown type"),
        ("range = 3.5", "range = -3.5", "range = -3.5", "range"),
        ("format = 1", "format = 7", "format = 7", "unsupported format"),
        ('name = "panda_joint1"', 'name = "panda_joint9"', 'name = "panda_joint9"', "not a joint"),
        ('mode = "passive"', 'mode = "frozen"', 'mode = "frozen"', "mode"),
        ('name = "franka"', 'name = "frankenstein"', 'name = "frankenstein"', "no robot named"),
        ("enabled = false", "enabled = 0", "enabled = 0", "wrong type"),
        ("[[groups]]", "[[groups]]\nstray", "stray", "line"),
    ],
)
def test_a_malformed_file_names_its_line(saved, tmp_path, old, new, line_of, message):
    _, path = saved
    text = path.read_text()
    assert old in text
    bad = text.replace(old, new, 1)
    broken = tmp_path / "broken.toml"
    broken.write_text(bad)
    with pytest.raises(ConfigurationError, match=message) as error:
        IKEnvironment.load(broken)
    assert isinstance(error.value, ValueError)
    assert f"line {_line_of(bad, line_of)}" in str(error.value)


def _load_broken(tmp_path: Path, text: str) -> str:
    """The message of the ConfigurationError that loading ``text`` raises."""
    broken = tmp_path / "broken.toml"
    broken.write_text(text)
    with pytest.raises(ConfigurationError) as error:
        IKEnvironment.load(broken)
    assert str(error.value).startswith(f"{broken}, line ")
    return str(error.value)


@pytest.mark.parametrize(
    ("old", "new", "line_of", "message"),
    [
        (
            "[[groups",
            "[[group",
            "[[group]]",
            r"unknown table \[\[group\]\] in the top level \(close: \['groups'\]\)",
        ),
        (
            "enabled = true",
            'enabled = true\nbse = "world"',
            "bse",
            r"unknown key 'bse' .*\(close: \['base'\]\)",
        ),
        (
            "enabled = true",
            'enabled = true\nconstraint_bas = "goal"',
            "constraint_bas",
            "close: \\['constraint_base'",
        ),
        ("format = 1", "format = 1\nformt = 1", "formt", r"unknown key 'formt' in the top level"),
        ('name = "franka"', 'name = "franka"\nsrdf = "x.srdf"', "srdf", "srdf goes with urdf"),
        ('name = "franka"', 'name = "franka"\nurdf = "x.urdf"', "[robot]", "both given"),
        (
            'name = "franka"',
            'controlled_joint = ["panda_joint1"]',
            "controlled_joint",
            "unknown key",
        ),
        ("screw_lead = 0.004", "screw_lead = 0.004\nspeed = 1.0", "speed", "unknown key 'speed'"),
        (
            'name = "goal"',
            'name = "goal"\nscrew_lead = 0.1',
            "screw_lead = 0.1",
            "unknown key 'screw_lead'",
        ),
        (
            '{ joint = "screw", cyclic = true }',
            '{ joint = "screw", cyclic = true, lower = 0.0 }',
            "lower = 0.0",
            "unknown key 'lower'",
        ),
        (
            'tip = "panda_hand_tcp"',
            'tip = "panda_hand_tpc"',
            "panda_hand_tpc",
            r"tip 'panda_hand_tpc' is not a frame of the scene \(close: \['panda_hand_tcp'",
        ),
        ('target = "goal"', 'target = "gaol"', "gaol", r"target 'gaol' is not a frame"),
        (
            'tip = "panda_hand_tcp"\ntarget',
            'tip = "panda_hand_tcp"\nbase = "nowhere"\ntarget',
            "nowhere",
            "base 'nowhere' is not a frame",
        ),
        (
            'joint = "slide"',
            'joint = "slider"',
            "slider",
            r"joint 'slider' is not a joint of the scene \(close: \['slide'",
        ),
        (
            'master = "panda_joint4"',
            'master = "panda_joint44"',
            "panda_joint44",
            "master 'panda_joint44' is not a joint",
        ),
        (
            'parent = "panda_link1"',
            'parent = "panda_link11"',
            "panda_link11",
            "parent 'panda_link11' is not a frame",
        ),
        (
            "controlled_joints = [",
            'controlled_joints = ["nojoint", ',
            "controlled_joints",
            "controlled_joint_names",
        ),
        (
            'tool_frame = "panda_hand_tcp"',
            'tool_frame = "nowhere"',
            "tool_frame",
            "tool_frame 'nowhere'",
        ),
        (
            _ELBOW_GOAL_POSITION,
            'position = ["0.4", "0", "0.5"]',
            '"0.4"',
            r"position must be an array of shape \(3,\) of real numbers",
        ),
        (_ELBOW_GOAL_POSITION, "position = [0.1, 0.2]", "[0.1, 0.2]", r"got shape \(2,\)"),
        (
            "weights = [\n    1.0,\n    0.5,\n    2.0,\n]",
            "weights = [true, 0.5, 2.0]",
            "[true",
            "weights must be .* got booleans",
        ),
        (
            "precision = [\n    1e-05,\n    0.0001,\n]",
            "precision = [nan, 0.0001]",
            "[nan",
            "precision must be finite",
        ),
        (
            "max_iterations = 40",
            "max_iterations = 1000000000000000",
            "1000000000000000",
            r"max_iterations must be an integer in \[1, 10000\]",
        ),
        ("max_iterations = 40", "max_iterations = 4e1", "4e1", "max_iterations has the wrong type"),
        ("damping = 0.02", "damping = 1e200", "1e200", r"damping must be in \[0, 1000\]"),
        (
            'name = "elbow"',
            'name = "arm"  # twice',
            "# twice",
            "a group of that name exists already",
        ),
    ],
)
def test_unknown_keys_names_and_values_name_the_file_and_the_line(
    saved, tmp_path, old, new, line_of, message
):
    _, path = saved
    text = path.read_text()
    assert old in text
    bad = text.replace(old, new)
    found = _load_broken(tmp_path, bad)
    assert re.search(message, found), found
    assert f"line {_line_of(bad, line_of)} " in found, found


def test_bytes_that_are_not_utf8_name_the_line(saved, tmp_path):
    _, path = saved
    data = path.read_bytes().replace(b'name = "elbow_goal"', b'name = "elbow_\xe9goal"')
    broken = tmp_path / "latin1.toml"
    broken.write_bytes(data)
    line = data[: data.index(b"\xe9")].count(b"\n") + 1
    with pytest.raises(ConfigurationError, match=rf"latin1.toml, line {line}: not UTF-8 text"):
        IKEnvironment.load(broken)


def test_a_directory_or_a_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigurationError, match=f"{tmp_path} is a directory"):
        IKEnvironment.load(tmp_path)
    with pytest.raises(FileNotFoundError, match="nothing.toml"):
        IKEnvironment.load(tmp_path / "nothing.toml")


def test_a_bad_rotation_names_the_object_line(saved, tmp_path):
    _, path = saved
    text = path.read_text()
    start = text.index("[[objects]]", text.index('name = "screw_tip"') - 40)
    head, tail = text[:start], text[start:]
    tail = tail.replace("rotation = [\n    [\n        1.0,", "rotation = [\n    [\n        2.0,", 1)
    broken = tmp_path / "broken.toml"
    broken.write_text(head + tail)
    with pytest.raises(ConfigurationError, match="rotation") as error:
        IKEnvironment.load(broken)
    assert f"line {head.count(chr(10)) + 1}" in str(error.value)


# ---------------------------------------------------------------------- the TOML writer


def test_the_text_round_trips_and_loads_from_a_string(saved):
    env, path = saved
    text = env.dumps()
    assert text == path.read_text() and text.startswith("# pinkctl IK setup")
    again = IKEnvironment.loads(text)
    for ours, theirs in zip(_results(env), _results(again), strict=True):
        assert ours.tobytes() == theirs.tobytes()
    with pytest.raises(ConfigurationError, match=r"<string>, line \d+ \(format\)"):
        IKEnvironment.loads(text.replace("format = 1", "format = 2"))


def test_line_index_follows_tables_arrays_and_multiline_values():
    text = "\n".join(
        [
            "# comment",  # 1
            "top = 1",  # 2
            "[robot]",  # 3
            'name = "x"',  # 4
            "[[groups]]",  # 5
            "matrix = [",  # 6
            "  [1, 2],",  # 7
            "  [3, 4],  # [not a header]",  # 8
            "]",  # 9
            "[[groups.elements]]",  # 10
            'tip = "a"',  # 11
            "[[groups.elements]]",  # 12
            'dotted.key = "b"',  # 13
            "[[groups]]",  # 14
            '"quoted key" = 2',  # 15
            "[[groups.elements]]",  # 16
        ]
    )
    tomllib.loads(text)  # valid TOML
    index = LineIndex(text)
    assert index.line(("top",)) == 2
    assert index.line(("robot", "name")) == 4
    assert index.line(("robot", "missing")) == 3
    assert index.line(("groups", 0, "matrix")) == 6
    assert index.line(("groups", 0, "elements", 0, "tip")) == 11
    assert index.line(("groups", 0, "elements", 1, "dotted", "key")) == 13
    assert index.line(("groups", 0, "elements", 1, "tip")) == 12
    assert index.line(("groups", 1, "quoted key")) == 15
    assert index.line(("groups", 1, "elements", 0)) == 16
    assert index.line(("nothing",)) is None


def test_line_index_finds_array_items_and_inline_tables():
    text = "\n".join(
        [
            "intervals = [",  # 1
            '    { joint = "a", lower = 1.0 },',  # 2
            '    { joint = "b, c", range = [1, 2], cyclic = true },',  # 3
            "]",  # 4
            "flags = [",  # 5
            '    "x",',  # 6
            '    "y", "z",',  # 7
            "]",  # 8
            "one_line = [1, { k = 2 }]",  # 9
        ]
    )
    tomllib.loads(text)
    index = LineIndex(text)
    assert index.line(("intervals", 0, "lower")) == 2
    assert index.line(("intervals", 1)) == 3
    assert index.line(("intervals", 1, "cyclic")) == 3  # a comma in a string is no separator
    assert index.line(("intervals", 2, "joint")) == 1  # no such item: the array's line
    assert [index.line(("flags", k)) for k in range(3)] == [6, 7, 7]
    assert index.line(("one_line", 1, "k")) == 9


def test_the_documented_file_loads_and_solves(tmp_path):
    docs = Path(__file__).resolve().parents[1] / "docs" / "groups.md"
    if not docs.is_file():  # e.g. tests run from an sdist
        pytest.skip("docs/ is not available")
    block = docs.read_text().split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "documented.toml"
    path.write_text(block)
    env = IKEnvironment.load(path)
    q, code = env.group("carry").solve(env.scene.neutral())
    assert not code & ResultCode.FAILED
