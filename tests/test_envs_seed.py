"""The lerobot SO-101 seed's API, row by row (docs/envs.md, "The lerobot SO-101 seed").

Each test is named after the seed's class, function or option it checks; the DLS tutorial's
frame rows (robot placement, base-frame observations) close the file.
"""

from __future__ import annotations

import inspect
import math
import os
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import mujoco
import numpy as np
import pinocchio as pin
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from pinkctl.envs import (
    GymRenderingSpec,
    MujocoGymEnv,
    ReachEnv,
    SO101GymEnv,
    SO101PickCubeEnv,
    SO101PickCubeGymEnv,
    SO101PickPlaceGymEnv,
    make_expert,
    normalized_to_ctrl,
    rollout,
    write_pick_scene,
)
from pinkctl.envs.pick_cube import FIXED_BLOCK_XY, LIFT_SUCCESS_HEIGHT, SAMPLING_BOUNDS
from pinkctl.envs.pick_place import FIXED_GOAL_XY
from pinkctl.envs.so101_env import ARM_JOINTS, CARTESIAN_BOUNDS, HOME_POSITION, TOP_DOWN_BOUNDS
from pinkctl.errors import ConfigurationError, InputError
from pinkctl.mujoco_ik import solve_ik

HOLD_OPEN = np.array([0.0, 0.0, 0.0, 1.0], dtype=np.float32)
EPISODES = int(os.environ.get("PINKCTL_ENV_EPISODES", "20"))


def _tool_world(env: SO101GymEnv) -> np.ndarray:
    return env.sim.data.site_xpos[env.sim.model.site("gripper_frame_link").id].copy()


# ---------------------------------------------------------------------------- signatures
SEED_SIGNATURES = {
    MujocoGymEnv: [
        ("xml_path", None),
        ("seed", 0),
        ("control_dt", 0.02),
        ("physics_dt", 0.002),
        ("render_spec", GymRenderingSpec()),
    ],
    SO101GymEnv: [
        ("xml_path", None),
        ("seed", 0),
        ("control_dt", 0.02),
        ("physics_dt", 0.002),
        ("render_spec", GymRenderingSpec()),
        ("render_mode", "rgb_array"),
        ("image_obs", False),
        ("home_position", HOME_POSITION),
        ("cartesian_bounds", None),  # None: CARTESIAN_BOUNDS, or TOP_DOWN_BOUNDS (top-down)
        ("action_scale", 1.0),
        ("top_down_ik", False),
        ("jaw_pads", False),
    ],
    SO101PickCubeGymEnv: [
        ("seed", 0),
        ("control_dt", 0.1),
        ("physics_dt", 0.002),
        ("render_spec", GymRenderingSpec()),
        ("render_mode", "rgb_array"),
        ("image_obs", False),
        ("reward_type", "sparse"),
        ("random_block_position", False),
        ("action_scale", 1.0),
        ("top_down_ik", False),
        ("jaw_pads", False),
    ],
    SO101PickPlaceGymEnv: [
        ("seed", 0),
        ("control_dt", 0.1),
        ("physics_dt", 0.002),
        ("render_spec", GymRenderingSpec()),
        ("render_mode", "rgb_array"),
        ("image_obs", False),
        ("random_block_position", False),
        ("action_scale", 1.0),
        ("top_down_ik", True),
        ("jaw_pads", True),
    ],
}


@pytest.mark.parametrize("cls", list(SEED_SIGNATURES), ids=lambda c: c.__name__)
def test_constructor_signatures(cls: type) -> None:
    """The seed's parameters, in its order, positional or keyword, with its defaults; pinkctl's
    own options come after them, keyword-only."""
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    seed = SEED_SIGNATURES[cls]
    assert [p.name for p in parameters[: len(seed)]] == [name for name, _ in seed]
    for parameter, (_, default) in zip(parameters, seed):
        assert parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        np.testing.assert_array_equal(parameter.default, default)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[len(seed) :])


# ---------------------------------------------------------------------------- MujocoGymEnv
def test_mujoco_gym_env(tmp_path: Path) -> None:
    """MujocoGymEnv(xml_path, seed, control_dt, physics_dt, render_spec): model, data,
    timestep, substeps, random_state, render() from render_spec's camera, close()."""
    scene = tmp_path / "scene.xml"
    scene.write_text(
        '<mujoco><worldbody><light pos="0 0 2"/><camera name="top" pos="0 0 1"/>'
        '<body pos="0 0 0.1"><freejoint/><geom type="box" size=".05 .05 .05" rgba="1 0 0 1"/>'
        "</body></worldbody></mujoco>"
    )
    spec = GymRenderingSpec(height=48, width=64, camera_id="top")
    env = MujocoGymEnv(scene, seed=4, control_dt=0.03, physics_dt=0.01, render_spec=spec)
    assert env.model.opt.timestep == 0.01 and env.data.qpos.shape == (7,)
    assert env.control_dt == 0.03 and env.n_substeps == 3  # 0.03 // 0.01 is 2.0 in floats
    assert env.metadata["render_fps"] == 33
    np.testing.assert_array_equal(
        env.random_state.uniform(size=3), np.random.RandomState(4).uniform(size=3)
    )
    frame = env.render()
    assert frame is not None and frame.shape == (48, 64, 3) and frame.dtype == np.uint8
    assert frame[24, 32, 0] > 150 > frame[24, 32, 1]  # the red box below the camera
    env.close()
    env.close()  # twice is fine
    assert env.render() is not None  # the renderer is made again on demand
    with pytest.raises(ConfigurationError, match="no such MJCF file"):
        MujocoGymEnv(tmp_path / "missing.xml")
    (tmp_path / "bad.xml").write_text("<mujoco><worldbody><bogus/></worldbody></mujoco>")
    with pytest.raises(ConfigurationError, match="bad.xml: MuJoCo cannot read it"):
        MujocoGymEnv(tmp_path / "bad.xml")


def test_gym_rendering_spec() -> None:
    """GymRenderingSpec(height=128, width=128, camera_id=-1, mode="rgb_array")."""
    spec = GymRenderingSpec()
    assert (spec.height, spec.width, spec.camera_id, spec.mode) == (128, 128, -1, "rgb_array")


# ---------------------------------------------------------------------------- SO101GymEnv
def test_so101_gym_env_is_a_base_class_whose_reset_needs_a_task() -> None:
    """Robot control without a task: no reset/step, the seed's base observation space and
    action space, render_fps from control_dt."""
    env = SO101GymEnv()
    assert env.control_dt == 0.02 and env.n_substeps == 10 and env.metadata["render_fps"] == 50
    agent = env.observation_space["agent_pos"]
    assert {k: v.shape for k, v in agent.spaces.items()} == {
        "tcp_pose": (7,),
        "tcp_vel": (6,),
        "gripper_pose": (1,),
    }
    np.testing.assert_array_equal(env.action_space.low, [-1, -1, -1, 0])
    np.testing.assert_array_equal(env.action_space.high, [1, 1, 1, 1])
    with pytest.raises(NotImplementedError, match="base class"):
        env.reset(seed=0)
    with pytest.raises(gym.error.ResetNeeded, match="apply_action"):
        env.apply_action(HOLD_OPEN)
    env.reset_robot()
    env.apply_action(np.array([0.01, 0.0, 0.0, 1.0]))  # usable after reset_robot


class _SeedStyleTask(SO101GymEnv):
    """A task written as the seed writes its own (own reset() and step(), the model and
    data through _model / _data, the scene's sensors): bring the tool above the block."""

    def __init__(self, **kwargs) -> None:
        super().__init__(control_dt=0.1, action_scale=0.02, **kwargs)
        agent = spaces.Box(-np.inf, np.inf, (self.get_robot_state().shape[0],), np.float32)
        state = spaces.Box(-np.inf, np.inf, (3,), dtype=np.float32)
        self.observation_space = spaces.Dict({"agent_pos": agent, "environment_state": state})
        self._block_z = self._model.geom("block").size[2]

    def reset(self, seed=None, **kwargs):
        self.base_observation = super().reset(seed=seed)[0]
        mujoco.mj_resetData(self._model, self._data)
        self.reset_robot()
        xy = self.np_random.uniform([0.18, -0.08], [0.24, 0.08])
        self._data.jnt("block").qpos[:3] = (*xy, self._block_z)
        mujoco.mj_forward(self._model, self._data)
        return self._compute_observation(), {}

    def _compute_observation(self):
        block = self._data.sensor("block_pos").data.astype(np.float32)
        return {"agent_pos": self.get_robot_state(), "environment_state": block}

    def step(self, action):
        self.apply_action(action)
        tool = self._data.sensor("so101/ee_pos").data
        above = self._data.sensor("block_pos").data + [0.0, 0.0, 0.04]
        distance = float(np.linalg.norm(tool - above))
        return self._compute_observation(), -distance, distance < 0.01, False, {}


def test_a_task_written_the_seed_way() -> None:
    """SO101GymEnv as the base of a task of one's own, written the seed's way: super().reset
    seeds the generator (its observation is the seed's base one), the rest is the task's."""
    env = _SeedStyleTask()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infinite Box bounds
        check_env(env)
    observation, _ = env.reset(seed=3)
    assert SO101GymEnv().observation_space.contains(env.base_observation)
    again = _SeedStyleTask().reset(seed=3)[0]
    np.testing.assert_array_equal(again["environment_state"], observation["environment_state"])
    steps = 0
    terminated = False
    while not terminated and steps < 30:
        above = observation["environment_state"] + [0.0, 0.0, 0.04]
        delta = np.clip((above - observation["agent_pos"][11:14]) / 0.02, -1.0, 1.0)
        observation, _, terminated, _, _ = env.step(np.array([*delta, 1.0], dtype=np.float32))
        steps += 1
    assert terminated and steps < 10


def test_home_position_and_reset_robot() -> None:
    """reset_robot: arm at home_position (qpos and servo command), the IK target re-read
    from where the action point now is."""
    home = np.array([0.3, -0.4, 0.5, 1.0, -0.2])
    env = SO101GymEnv(home_position=home, action_scale=0.02)
    env.reset_robot()
    data = env.sim.data
    for k, name in enumerate(ARM_JOINTS):
        assert data.qpos[env.sim.model.joint(name).qposadr[0]] == home[k]
        assert data.ctrl[env.sim.model.actuator(name).id] == home[k]
    np.testing.assert_array_equal(env.ik_target, env.ik_point_pos)
    for _ in range(5):
        env.apply_action(np.array([1.0, 0.0, 0.0, 1.0]))
    assert not np.allclose(env.ik_target, env.ik_point_pos, atol=1e-3)
    env.reset_robot()  # the accumulated target is forgotten
    np.testing.assert_allclose(env.arm.joint_positions(), home)
    np.testing.assert_array_equal(env.ik_target, env.ik_point_pos)
    assert np.all(env.arm.joint_velocities() == 0.0)
    for bad in ([0.0] * 4, [0.0, 0.0, 0.0, 0.0, 9.0], [np.nan] * 5):
        with pytest.raises(InputError, match="home_position"):
            SO101GymEnv(home_position=bad)


def test_apply_action() -> None:
    """apply_action([dx, dy, dz, grasp]): target += action_scale * delta, clipped to the
    bounds; grasp written directly to the jaw servo (no rate limit); a zero delta holds."""
    env = SO101GymEnv(action_scale=0.02)
    env.reset_robot()
    start = env.ik_target
    env.apply_action(np.array([0.5, -0.25, 0.0, 0.5]))
    np.testing.assert_allclose(env.ik_target, start + [0.01, -0.005, 0.0])
    gripper = env.sim.model.actuator("gripper")
    assert env.sim.data.ctrl[gripper.id] == normalized_to_ctrl(0.5, gripper.ctrlrange)
    assert env.sim.data.time == pytest.approx(0.02)
    for _ in range(2):
        env.apply_action(np.array([1.0, 0.0, 1.0, 0.5]))
    lagging = env.ik_point_pos
    assert np.linalg.norm(env.ik_target - lagging) > 1e-3  # the arm trails its target
    env.apply_action(np.array([0.0, 0.0, 0.0, 0.5]))
    np.testing.assert_array_equal(env.ik_target, lagging)  # held where the point was
    for _ in range(30):
        env.apply_action(np.array([1.0, 1.0, 1.0, 0.5]))
    np.testing.assert_allclose(env.ik_target, CARTESIAN_BOUNDS[1])  # clipped to the box
    with pytest.raises(InputError, match="action"):
        env.apply_action([0.0, 0.0, np.nan, 1.0])


@pytest.mark.parametrize(
    ("ik_method", "top_down_ik"),
    [("levenberg_marquardt", False), ("pseudoinverse", False), ("levenberg_marquardt", True)],
)
def test_apply_action_ik_method_solve_ik(ik_method: str, top_down_ik: bool) -> None:
    """ik_method= the seed's: apply_action solves solve_ik(model, data, site_id, dof_ids,
    target) once from the measured joints and holds its result (clipped to the servos'
    ctrlrange) as the servo targets over the substeps; it tracks like pinkctl's QP."""
    env = SO101GymEnv(
        control_dt=0.1, action_scale=0.01, ik_method=ik_method, top_down_ik=top_down_ik
    )
    env.reset_robot()
    model, data = env.sim.model, env.sim.data
    site = model.site("grasp_point" if top_down_ik else "gripper_frame_link").id
    dofs = np.array([model.joint(n).dofadr[0] for n in ARM_JOINTS])
    servos = np.array([model.actuator(n).id for n in ARM_JOINTS])
    rng = np.random.default_rng(0)
    errors = []
    for delta in rng.uniform(-1.0, 1.0, (20, 3)):
        target = np.clip(env.ik_target + 0.01 * delta, *env.arm.bounds)
        expected = solve_ik(
            model,
            data,
            site,
            dofs,
            target,
            ik_method=ik_method,
            approach_axis=2 if top_down_ik else None,
        )
        env.apply_action(np.array([*delta, 1.0]))
        ranges = np.where(
            model.actuator_ctrllimited[servos, None].astype(bool),
            model.actuator_ctrlrange[servos],
            [-np.inf, np.inf],
        )
        np.testing.assert_array_equal(
            data.ctrl[servos], np.clip(expected, ranges[:, 0], ranges[:, 1])
        )
        errors.append(np.linalg.norm(env.ik_point_pos - env.ik_target))
    # measured RMS 2.9 / 2.6 / 5.5 mm, last 4.1 / 3.6 / 4.1 mm (pinkctl's QP: 0.8 / 3.8 mm)
    assert np.sqrt(np.mean(np.square(errors))) < 0.007
    assert errors[-1] < 0.006
    with pytest.raises(InputError, match="ik_method"):
        SO101GymEnv(ik_method="newton")
    with pytest.raises(InputError, match="pseudo-inverse"):
        SO101GymEnv(ik_method="pseudoinverse", top_down_ik=True)


def test_grasp_is_written_directly() -> None:
    """The seed writes normalized_to_ctrl(grasp, ctrlrange) to the jaw servo each step:
    after one step the command is there (pinkctl's rate-limited servo, an option, is not)."""
    direct = SO101PickCubeGymEnv()
    limited = SO101PickCubeGymEnv(grasp_mode="rate_limited")
    for env in (direct, limited):
        env.reset(seed=0)
        env.step(np.array([0.0, 0.0, 0.0, 0.5], dtype=np.float32))
    assert direct.get_gripper_pose()[0] == pytest.approx(0.0, abs=1e-12)  # grasp 0.5
    assert limited.get_gripper_pose()[0] < -0.5  # still on its way at 3 rad/s


def test_get_gripper_pose() -> None:
    """The jaw servo's command normalised to [-1, 1]: -1 closed, +1 open."""
    env = SO101PickCubeGymEnv()
    env.reset(seed=0)
    for grasp, expected in ((0.0, -1.0), (1.0, 1.0), (0.25, -0.5)):
        env.step(np.array([0.0, 0.0, 0.0, grasp], dtype=np.float32))
        pose = env.get_gripper_pose()
        assert pose.shape == (1,) and pose.dtype == np.float32
        assert pose[0] == pytest.approx(expected, abs=1e-6)


def test_get_robot_state() -> None:
    """agent_pos is get_robot_state(): 14 values, element by element the seed's layout."""
    env = SO101PickCubeGymEnv(action_scale=0.05)
    observation, _ = env.reset(seed=0)
    for _ in range(3):
        observation, *_ = env.step(np.array([0.3, -0.2, 0.1, 0.8], dtype=np.float32))
    state = observation["agent_pos"]
    assert state.shape == (14,) and state.dtype == np.float32
    np.testing.assert_array_equal(state, env.get_robot_state())
    model, data = env.sim.model, env.sim.data
    qpos = [data.qpos[model.joint(n).qposadr[0]] for n in ARM_JOINTS]
    qvel = [data.qvel[model.joint(n).dofadr[0]] for n in ARM_JOINTS]
    np.testing.assert_allclose(state[0:5], qpos, rtol=1e-6)  # arm joint positions [rad]
    np.testing.assert_allclose(state[5:10], qvel, rtol=1e-6)  # arm joint velocities [rad/s]
    assert np.any(np.abs(state[5:10]) > 1e-3)  # moving: velocities, not zeros
    assert state[10] == pytest.approx(0.6, abs=1e-6)  # grasp 0.8 -> 2 * 0.8 - 1
    np.testing.assert_allclose(state[11:14], _tool_world(env), atol=1e-7)  # the tool frame


def test_sensor_so101_ee_pos_and_block_pos(tmp_path: Path) -> None:
    """The seed scene's names: the site "gripperframe" and the sensors "so101/ee_pos" and
    "block_pos" (world frame), read as the seed's get_robot_state and tasks read them, also
    from a written scene and with the robot placed elsewhere."""
    placed = SO101PickPlaceGymEnv(base_position=(0.1, 0.2, 0.0), base_yaw=0.5)
    written = SO101PickCubeGymEnv()
    written_path = write_pick_scene(tmp_path / "scene.xml")
    loaded = SO101GymEnv(xml_path=written_path)
    assert 'name="so101/ee_pos"' in written_path.read_text()
    for env in (placed, written):
        observation, _ = env.reset(seed=0)
        for _ in range(3):
            observation, *_ = env.step(np.array([0.01, 0.0, -0.01, 0.3], dtype=np.float32))
        data = env.data
        np.testing.assert_array_equal(data.site("gripperframe").xpos, _tool_world(env))
        np.testing.assert_allclose(
            data.sensor("so101/ee_pos").data, observation["agent_pos"][11:14], atol=1e-6
        )
        np.testing.assert_allclose(
            data.sensor("block_pos").data, observation["environment_state"][:3], atol=1e-6
        )
    loaded.reset_robot()
    np.testing.assert_allclose(
        loaded.data.sensor("so101/ee_pos").data, loaded.get_robot_state()[11:14], atol=1e-6
    )


def test_observation_layout_matches_the_seed() -> None:
    """SO101PickCubeGymEnv: {agent_pos (14), environment_state (block, 3)}; with image_obs
    {pixels.front, agent_pos}; SO101PickPlaceGymEnv: environment_state = block, goal (6)."""
    cube = SO101PickCubeGymEnv()
    observation, _ = cube.reset(seed=0)
    assert set(observation) == {"agent_pos", "environment_state"}
    assert cube.observation_space.contains(observation)
    np.testing.assert_allclose(observation["environment_state"], cube.block_pos, atol=1e-7)
    place = SO101PickPlaceGymEnv()
    observation, _ = place.reset(seed=0)
    assert observation["agent_pos"].shape == (14,)
    state = observation["environment_state"]
    np.testing.assert_allclose(state[:3], place.block_pos, atol=1e-7)
    np.testing.assert_allclose(state[3:], place.goal_pos, atol=1e-7)
    spec = GymRenderingSpec(height=40, width=56)
    image = SO101PickCubeGymEnv(image_obs=True, render_spec=spec)
    observation, _ = image.reset(seed=0)
    assert set(observation) == {"pixels", "agent_pos"}
    assert observation["pixels"]["front"].shape == (40, 56, 3)
    assert image.observation_space.contains(observation)
    preset = SO101PickCubeEnv()  # pinkctl's layout stays available
    assert set(preset.reset(seed=0)[0]) == {
        "agent_pos",
        "tcp_pose",
        "tcp_vel",
        "environment_state",
    }


@pytest.mark.parametrize("cls", [SO101PickCubeGymEnv, SO101PickPlaceGymEnv])
def test_check_env_with_the_seed_defaults(cls: type) -> None:
    env = cls()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # infinite Box bounds
        check_env(env)


def test_render_uses_the_front_camera() -> None:
    """render() draws the "front" camera (the seed ignores render_spec's camera_id -1; a
    camera that render_spec names is drawn instead)."""
    spec = GymRenderingSpec(height=32, width=40)
    env = SO101PickCubeGymEnv(image_obs=True, render_spec=spec)
    observation, _ = env.reset(seed=0)
    frame = env.render()
    assert frame is not None
    np.testing.assert_array_equal(frame, observation["pixels"]["front"])
    named = SO101PickCubeGymEnv(render_spec=GymRenderingSpec(height=32, width=40, camera_id=0))
    named.reset(seed=0)
    other = named.render()
    assert other is not None and not np.array_equal(other, frame)  # camera 0: "overview"


def test_render_mode_human_without_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    env = SO101PickCubeGymEnv(render_mode="human")
    env.reset(seed=0)
    with pytest.warns(RuntimeWarning, match="needs a display"):
        assert env.render() is None


def test_xml_path(tmp_path: Path) -> None:
    """An MJCF scene (here the bundled one written out and changed): loaded, checked and
    driven like the built-in scene."""
    path = write_pick_scene(tmp_path / "pick_scene.xml")
    built, loaded = SO101GymEnv(action_scale=0.02), SO101GymEnv(xml_path=path, action_scale=0.02)
    for env in (built, loaded):
        env.reset_robot()
        for _ in range(10):
            env.apply_action(np.array([0.5, 0.3, -0.2, 0.7]))
    np.testing.assert_allclose(loaded.ik_point_pos, built.ik_point_pos, atol=1e-5)
    assert loaded.sim.spec is not None and built.sim.spec is not None
    text = path.read_text().replace('name="table" size="0.4 0.45', 'name="table" size="0.3 0.45')
    edited = tmp_path / "small_table.xml"
    edited.write_text(text)
    assert SO101GymEnv(xml_path=edited).sim.model.geom("table").size[0] == pytest.approx(0.3)
    (tmp_path / "no_camera.xml").write_text(text.replace('camera name="front"', "camera"))
    with pytest.raises(ConfigurationError, match=r"no_camera.xml: .*lacks \['camera front'\]"):
        SO101GymEnv(xml_path=tmp_path / "no_camera.xml")
    moved = text.replace('<body name="base_link"', '<body name="base_link" pos="0.05 0 0"', 1)
    (tmp_path / "moved.xml").write_text(moved)
    with pytest.raises(ConfigurationError, match=r"moved.xml: .* 50.00 mm from where"):
        SO101GymEnv(xml_path=tmp_path / "moved.xml")


def test_ik_point_pos() -> None:
    """The world position of the point the action moves: the tool frame, or the grasp point
    between the jaws with top_down_ik."""
    tool = SO101GymEnv()
    tool.reset_robot()
    np.testing.assert_array_equal(tool.ik_point_pos, _tool_world(tool))
    grasp = SO101GymEnv(top_down_ik=True)
    grasp.reset_robot()
    site = grasp.sim.model.site("grasp_point").id
    np.testing.assert_array_equal(grasp.ik_point_pos, grasp.sim.data.site_xpos[site])


def test_cartesian_bounds() -> None:
    """The (2, 3) box the target is clipped to every step; default CARTESIAN_BOUNDS (the
    grasp point's TOP_DOWN_BOUNDS with top_down_ik)."""
    np.testing.assert_array_equal(SO101GymEnv().arm.bounds, CARTESIAN_BOUNDS)
    np.testing.assert_array_equal(SO101GymEnv(top_down_ik=True).arm.bounds, TOP_DOWN_BOUNDS)
    box = np.array([[0.15, -0.05, 0.05], [0.25, 0.05, 0.12]])
    env = SO101GymEnv(cartesian_bounds=box)
    env.reset_robot()
    for _ in range(3):
        env.apply_action(np.array([-1.0, 1.0, -1.0, 1.0]))
    np.testing.assert_allclose(env.ik_target, [0.15, 0.05, 0.05])
    with pytest.raises(InputError, match="cartesian_bounds"):
        SO101GymEnv(cartesian_bounds=[[0, 0, 1], [1, 1, 0]])


def test_action_scale() -> None:
    """Metres per unit of dx, dy, dz; grasp is not scaled; must be positive (ValueError)."""
    env = SO101PickCubeGymEnv(action_scale=0.04)
    env.reset(seed=0)
    start = env.ik_target
    env.step(np.array([0.25, 0.0, -0.5, 0.5], dtype=np.float32))
    np.testing.assert_allclose(env.ik_target, start + [0.01, 0.0, -0.02])
    assert env.get_gripper_pose()[0] == pytest.approx(0.0, abs=1e-12)
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="action_scale"):
            SO101PickCubeGymEnv(action_scale=bad)


def test_control_dt_and_physics_dt() -> None:
    """control_dt of simulated time per step(), control_dt // physics_dt substeps."""
    env = SO101PickCubeGymEnv(control_dt=0.05, physics_dt=0.005)
    env.reset(seed=0)
    env.step(HOLD_OPEN)
    assert env.n_substeps == 10 and env.sim.data.time == pytest.approx(0.05)
    assert env.sim.model.opt.timestep == 0.005 and env.metadata["render_fps"] == 20


def test_top_down_ik() -> None:
    """The action moves the grasp point with the jaws pointing straight down."""
    env = SO101PickCubeGymEnv(top_down_ik=True, action_scale=0.02)
    env.reset(seed=0)
    site = env.sim.model.site("grasp_point").id
    for _ in range(15):
        env.step(np.array([0.3, 0.4, -0.4, 1.0], dtype=np.float32))
    axis = env.sim.data.site_xmat[site].reshape(3, 3)[:, 2]
    assert np.degrees(np.arccos(-axis[2])) < 3.0
    assert np.linalg.norm(env.ik_point_pos - env.grasp_point_pos) == 0.0


def test_jaw_pads() -> None:
    """The fingertip pads collide only with jaw_pads."""
    for flag in (False, True):
        model = SO101PickCubeGymEnv(jaw_pads=flag).sim.model
        for name in ("fixed_jaw_pad", "moving_jaw_pad"):
            assert model.geom(name).contype[0] == model.geom(name).conaffinity[0] == int(flag)


def test_seed() -> None:
    """The constructor's seed drives the block placement of unseeded resets."""
    runs = [SO101PickCubeGymEnv(seed=s, random_block_position=True) for s in (7, 7, 8)]
    states = [env.reset()[0]["environment_state"] for env in runs]
    np.testing.assert_array_equal(states[0], states[1])
    assert not np.array_equal(states[0], states[2])


def test_random_block_position() -> None:
    """False: the same block (position, size, yaw, colour) at every reset; True: the
    position is drawn in the sampling box, the look stays (random_block_look draws it)."""
    model_of = lambda env: env.sim.model  # noqa: E731

    def block(env: SO101PickCubeGymEnv) -> tuple:
        geom = model_of(env).geom("block")
        quaternion = env.sim.data.xquat[model_of(env).body("block").id]
        return env.block_pos, geom.size.copy(), geom.rgba.copy(), quaternion.copy()

    fixed = SO101PickCubeGymEnv()
    looks = []
    for seed in range(4):
        fixed.reset(seed=seed)
        looks.append(block(fixed))
    for position, size, rgba, quaternion in looks:
        np.testing.assert_allclose(position, [*FIXED_BLOCK_XY, 0.0125], atol=1e-9)
        np.testing.assert_array_equal(size, looks[0][1])
        np.testing.assert_array_equal(rgba, looks[0][2])
        np.testing.assert_allclose(quaternion, [1.0, 0.0, 0.0, 0.0])
    drawn = SO101PickCubeGymEnv(random_block_position=True)
    positions = []
    for seed in range(6):
        drawn.reset(seed=seed)
        position, size, rgba, _ = block(drawn)
        positions.append(position[:2])
        np.testing.assert_array_equal(size, looks[0][1])
        np.testing.assert_array_equal(rgba, looks[0][2])
    positions_array = np.array(positions)
    assert np.all(positions_array >= SAMPLING_BOUNDS[0]) and np.all(
        positions_array <= SAMPLING_BOUNDS[1]
    )
    assert np.ptp(positions_array[:, 0]) > 0.02
    look = SO101PickCubeGymEnv(random_block_look=True)
    sizes = {float(look.reset(seed=s)[0]["environment_state"][2]) for s in range(4)}
    assert len(sizes) == 4  # the edge (and the block's height) changes


def test_reward_type() -> None:
    """ "sparse": 1 on a lift with the jaws at the block; "dense": shaped, in [0, 1]."""
    for reward_type in ("sparse", "dense"):
        env = SO101PickCubeGymEnv(reward_type=reward_type)
        episode = rollout(env, make_expert(env), seed=0)
        assert episode.success and episode.terminated
        if reward_type == "sparse":
            assert episode.rewards[-1] == 1.0 and np.all(episode.rewards[:-1] == 0.0)
        else:
            assert episode.rewards[-1] > 0.9 and episode.rewards[0] < 0.35
    with pytest.raises(ValueError, match="reward_type"):
        SO101PickCubeGymEnv(reward_type="shaped")


def test_image_obs() -> None:
    """image_obs replaces environment_state by pixels.front (the block is in the image)."""
    env = SO101PickCubeGymEnv(image_obs=True)
    observation, _ = env.reset(seed=0)
    frame = observation["pixels"]["front"]
    assert frame.shape == (128, 128, 3) and frame.dtype == np.uint8 and frame.std() > 5.0
    assert "environment_state" not in observation


def test_pick_cube_reset_and_step() -> None:
    """reset: the arm at home, the block at rest on the table; step: (obs, reward,
    terminated, False, info) with info["succeed"]; terminated when the block leaves the box."""
    env = SO101PickCubeGymEnv()
    observation, info = env.reset(seed=0)
    assert info == {}
    np.testing.assert_allclose(observation["agent_pos"][:5], HOME_POSITION, atol=1e-7)
    assert env.block_pos[2] == pytest.approx(env.block_half_size)
    observation, reward, terminated, truncated, info = env.step(HOLD_OPEN)
    assert (reward, terminated, truncated, info["succeed"]) == (0.0, False, False, False)
    env.block.place(env.sim.model, env.sim.data, np.array([0.5, 0.0, 0.0125]), 0.0)
    env.sim.forward()
    assert env.step(HOLD_OPEN)[2] is True  # out of the sampling box + 5 cm
    episode = rollout(env, make_expert(env), seed=1)
    assert episode.success and env.block_rise >= LIFT_SUCCESS_HEIGHT


def test_compute_observation_compute_reward_and_is_success() -> None:
    """The seed's task hooks: a subclass that overrides them changes what reset() and step()
    return (pick-place's reward is its success, as in the seed)."""

    class Shaped(SO101PickCubeGymEnv):
        def _compute_observation(self):
            return {**super()._compute_observation(), "agent_pos": np.zeros(14, np.float32)}

        def _compute_reward(self) -> float:
            return -float(np.linalg.norm(self.grasp_point_pos - self.block_pos))

    class Done(SO101PickPlaceGymEnv):
        def _is_success(self) -> bool:
            return True

    shaped = Shaped()
    observation, _ = shaped.reset(seed=0)
    assert not observation["agent_pos"].any()
    observation, reward, terminated, _, info = shaped.step(HOLD_OPEN)
    assert not observation["agent_pos"].any() and not terminated and not info["succeed"]
    assert reward == pytest.approx(-np.linalg.norm(shaped.grasp_point_pos - shaped.block_pos))
    plain = SO101PickCubeGymEnv(reward_type="dense")
    plain.reset(seed=0)
    assert plain.step(HOLD_OPEN)[1] == pytest.approx(plain._compute_reward())
    done = Done()
    done.reset(seed=0)
    _, reward, terminated, _, info = done.step(HOLD_OPEN)
    assert reward == 1.0 and terminated and info["succeed"]


def test_pick_place_reset_step_and_goal_pos() -> None:
    """goal_pos: where the block should rest (world); success needs a carry and a rest
    within 2 cm of it."""
    env = SO101PickPlaceGymEnv()
    env.reset(seed=0)
    np.testing.assert_allclose(env.goal_pos, [*FIXED_GOAL_XY, env.block_half_size])
    assert env.top_down_ik and env.jaw_pads
    episode = rollout(env, make_expert(env), seed=0)
    assert episode.success and env.was_carried
    assert np.linalg.norm(env.block_pos[:2] - env.goal_pos[:2]) <= 0.02
    drawn = SO101PickPlaceGymEnv(random_block_position=True)
    for seed in range(5):
        state = drawn.reset(seed=seed)[0]["environment_state"]
        assert np.linalg.norm(state[:2] - state[3:5]) >= 0.06


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cls", "options"),
    [
        (SO101PickCubeGymEnv, {}),
        (SO101PickCubeGymEnv, {"random_block_position": True}),
        (SO101PickPlaceGymEnv, {"random_block_position": True}),
        (SO101PickCubeGymEnv, {"random_block_position": True, "ik_method": "levenberg_marquardt"}),
        (SO101PickPlaceGymEnv, {"random_block_position": True, "ik_method": "levenberg_marquardt"}),
    ],
)
def test_experts_with_the_seed_defaults(cls: type, options: dict) -> None:
    env = gym.wrappers.TimeLimit(cls(**options), 200 if cls is SO101PickPlaceGymEnv else 100)
    policy = make_expert(env)
    successes = sum(rollout(env, policy, seed=seed).success for seed in range(EPISODES))
    assert successes >= math.ceil(0.95 * EPISODES), f"{successes}/{EPISODES}"


# ---------------------------------------------------------------------------- placement
ON_THE_GROUND = {"base_position": (1.5, -0.7, 0.0), "base_yaw": 2.0}
RAISED = {"base_position": (-0.4, 0.9, 0.3), "base_yaw": -1.0}


def _expert_run(cls: type, frame: str, placement: dict, **options) -> tuple[dict, bool]:
    env = cls(frame=frame, **placement, **options)
    episode = rollout(gym.wrappers.TimeLimit(env, 200), make_expert(env), seed=2)
    return episode.observations, episode.success


def _worst(first: dict, second: dict, key: str) -> float:
    assert first[key].shape == second[key].shape
    return float(np.max(np.abs(first[key] - second[key])))


@pytest.mark.parametrize(
    ("cls", "options"),
    [
        (SO101PickPlaceGymEnv, {"random_block_position": True}),
        (SO101PickCubeEnv, {"random_block_position": True}),
        (ReachEnv, {"robot": "franka"}),
        (SO101PickCubeGymEnv, {"random_block_position": True, "ik_method": "levenberg_marquardt"}),
    ],
    ids=["pick-place", "pick-cube-preset", "reach-franka", "pick-cube-seed-ik"],
)
def test_frame_base_observation_is_invariant_to_the_placement(cls: type, options: dict) -> None:
    """The DLS tutorial's point: in the base frame two placements of the robot give the same
    observations (to float32 rounding) and the same run; in the world frame they differ."""
    home, moved = (_expert_run(cls, "base", p, **options) for p in ({}, ON_THE_GROUND))
    assert home[1] and moved[1]
    for key in home[0]:
        assert _worst(home[0], moved[0], key) <= 1e-6, key
    world = [_expert_run(cls, "world", p, **options) for p in ({}, ON_THE_GROUND)]
    assert world[0][1] and world[1][1]  # the scripted expert plans in the world: fine
    first = [run[0]["environment_state"][0] for run in world]
    assert np.max(np.abs(first[0] - first[1])) > 0.5  # a world-frame policy sees another task


def test_frame_base_with_a_raised_base() -> None:
    """Raising the base changes MuJoCo's box-box contact detection by about a micrometre (its
    tolerances act on world coordinates: a block resting 0.4 um into the table is in contact
    at z = 0, not at z = 0.3 m), which a grasp amplifies; the run stays the same task. The
    controller's collision avoidance reads the measured jaw opening (its servo, not the
    controller, moves it; the jaws' pairs with the table), so the contact's micrometre reaches
    the arm's commands too: the block ends 2.2 mm apart (0.43 mm without avoidance). Without
    contacts (reach) a raised base changes nothing."""
    options = {"random_block_position": True}
    home, raised = (_expert_run(SO101PickPlaceGymEnv, "base", p, **options) for p in ({}, RAISED))
    assert home[1] and raised[1]
    assert len(home[0]["environment_state"]) == len(raised[0]["environment_state"])
    assert _worst(home[0], raised[0], "environment_state") < 5e-3
    reach = [_expert_run(ReachEnv, "base", p, robot="ur5") for p in ({}, RAISED)]
    assert reach[0][1] and reach[1][1]
    for key in reach[0][0]:
        assert _worst(reach[0][0], reach[1][0], key) <= 1e-6, key


def test_base_position_and_base_yaw() -> None:
    """The placement moves the robot and its task rigidly: world = R(yaw) base + position."""
    position, yaw = np.array([0.4, 1.2, 0.25]), 0.7
    env = SO101PickPlaceGymEnv(base_position=position, base_yaw=yaw)
    env.reset(seed=0)
    rotation = pin.rpy.rpyToMatrix(0.0, 0.0, yaw)
    model, data = env.sim.model, env.sim.data
    base = data.xpos[model.body("base_link").id]
    np.testing.assert_allclose(base, position, atol=1e-12)
    np.testing.assert_allclose(data.xmat[model.body("base_link").id].reshape(3, 3), rotation)
    expected_block = rotation @ [*FIXED_BLOCK_XY, env.block_half_size] + position
    np.testing.assert_allclose(env.block_pos, expected_block, atol=1e-9)
    np.testing.assert_allclose(env.goal_pos, rotation @ [*FIXED_GOAL_XY, 0.0125] + position)
    np.testing.assert_allclose(
        data.geom_xpos[model.geom("table").id], rotation @ [0.2, 0.0, -0.02] + position
    )
    np.testing.assert_allclose(
        data.cam_xpos[model.camera("front").id], rotation @ [0.68, 0.0, 0.40] + position
    )
    # world frame: the action's dx moves the target along world x, not the base's x
    world = SO101PickCubeGymEnv(base_position=position, base_yaw=yaw, action_scale=0.01)
    world.reset(seed=0)
    start = world.ik_target
    world.step(np.array([1.0, 0.0, 0.0, 1.0], dtype=np.float32))
    np.testing.assert_allclose(world.ik_target - start, [0.01, 0.0, 0.0], atol=1e-12)
    for bad, name in (((0, 0), "base_position"), ((0, 0, 2e3), "base_position")):
        with pytest.raises(InputError, match=name):
            SO101PickCubeGymEnv(base_position=bad)
    with pytest.raises(InputError, match="base_yaw"):
        ReachEnv(base_yaw=math.inf)
    with pytest.raises(InputError, match="frame"):
        ReachEnv(frame="tool")


def test_frame_base_reports_the_base_frame() -> None:
    """With frame="base" the tool position is the Pinocchio model's (base-frame) FK."""
    env = SO101PickCubeGymEnv(frame="base", base_position=(2.0, 0.0, 0.5), base_yaw=-1.0)
    observation, _ = env.reset(seed=0)
    robot = env.robot
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    tool = data.oMf[robot.model.getFrameId("gripper_frame_link")].translation
    np.testing.assert_allclose(observation["agent_pos"][11:], tool, atol=1e-6)
    np.testing.assert_allclose(
        observation["environment_state"], [*FIXED_BLOCK_XY, 0.0125], atol=1e-6
    )


def test_SO101PickPlaceGymEnv_defaults_top_down_ik_and_jaw_pads() -> None:
    """The pick-place task defaults to ``top_down_ik=True, jaw_pads=True`` (the pick-cube
    task to False, False): the action moves the grasp point, and the pads collide."""
    place, cube = SO101PickPlaceGymEnv(), SO101PickCubeGymEnv()
    for env, flag in ((place, True), (cube, False)):
        env.reset(seed=0)
        model = env.sim.model
        for name in ("fixed_jaw_pad", "moving_jaw_pad"):
            assert model.geom(name).contype[0] == int(flag)
        at_grasp_point = np.linalg.norm(env.ik_point_pos - env.grasp_point_pos) == 0.0
        assert at_grasp_point == flag
