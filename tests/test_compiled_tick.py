"""The compiled tick (pinkctl/_native/_tick.cpp) gives the Python path's commands to 1e-9 over
whole runs, and every controller it does not cover runs the Python path and says why."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from pink.tasks import FrameTask, PostureTask

from pinkctl import load_pink_supported_robot
from pinkctl._native import tick_available
from pinkctl.controllers import PinkIKController
from pinkctl.core.state import JointSpace, RobotState, SiteSpace

AVAILABLE, REASON = tick_available()
needs_tick = pytest.mark.skipif(not AVAILABLE, reason=f"compiled tick not available: {REASON}")

DT = 0.005
ROOT = Path(__file__).resolve().parents[1]
TICKS = 520


def _controller(
    name: str, compiled: bool, **options: object
) -> tuple[PinkIKController, np.ndarray]:
    robot = load_pink_supported_robot(name)
    model = robot.model
    joints = [model.names[j] for j in range(1, model.njoints)]
    options.setdefault("self_collision", False)  # collision avoidance runs the Python path
    controller = PinkIKController(robot, joints, [robot.tool_frame], dt=DT, **options)  # type: ignore[arg-type]
    controller.compiled = compiled
    q = np.array([robot.q0[model.joints[j].idx_q] for j in range(1, model.njoints)])
    assert controller.reset(RobotState(joints=JointSpace(joints).state(q)), None, 0.0)
    return controller, q


def _targets(name: str) -> list[pin.SE3]:
    """The tool's home pose moved on a 10 cm circle with a rolling orientation."""
    robot = load_pink_supported_robot(name)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    home = data.oMf[robot.model.getFrameId(robot.tool_frame)]
    targets = []
    for k in range(TICKS):
        t = k * DT
        offset = 0.1 * np.array([0.0, np.sin(np.pi * t / 2), np.cos(np.pi * t / 2) - 1.0])
        rotation = pin.rpy.rpyToMatrix(0.3 * np.sin(t), 0.0, 0.0) @ home.rotation
        targets.append(pin.SE3(rotation, home.translation + offset))
    return targets


def _run(
    name: str, *, via: str, **options: object
) -> tuple[float, PinkIKController, PinkIKController]:
    """Both paths along one run (both read the reference's command as their measurement): the
    largest command difference."""
    compiled, q = _controller(name, True, **options)
    reference, _ = _controller(name, False, **options)
    assert compiled.compiled, compiled.compiled_reason
    assert not reference.compiled and reference.compiled_reason == "switched off"
    joints = JointSpace(compiled.robot_joint_space)
    sites = SiteSpace([compiled.tool_frame])
    worst = 0.0
    for target in _targets(name):
        if via == "step":
            a, b = compiled.step(q, target), reference.step(q, target)
        else:
            xyzquat = pin.SE3ToXYZQUAT(target)
            setpoint = RobotState(sites=sites.state(xyzquat[None, :3], xyzquat[None, [6, 3, 4, 5]]))
            estimate = RobotState(joints=joints.state(q))
            ca = compiled.forward(estimate, setpoint, 0.0)
            cb = reference.forward(estimate, setpoint, 0.0)
            assert ca is not None and cb is not None and ca.joints and cb.joints
            a, b = ca.joints.data_array[:2], cb.joints.data_array[:2]
            valid = cb.joints.valid_array[0]
            q = q.copy()
            q[valid] = cb.joints.data_array[0, valid]
        worst = max(worst, float(np.max(np.abs(np.asarray(a) - np.asarray(b)))))
        if via == "step":
            q = np.asarray(b)
        assert compiled.status == reference.status and compiled.last_error == reference.last_error
    return worst, compiled, reference


@needs_tick
@pytest.mark.parametrize("name", ["franka", "ur5", "so101"])
@pytest.mark.parametrize("motion_limits", [None, False])
def test_compiled_step_equals_the_python_path(name: str, motion_limits: bool | None) -> None:
    worst, compiled, reference = _run(name, via="step", motion_limits=motion_limits)
    assert worst <= 1e-9
    assert compiled.compiled_ticks == TICKS and reference.compiled_ticks == 0
    assert np.allclose(compiled.configuration.q, reference.configuration.q, atol=1e-9)
    assert np.allclose(
        compiled.configuration.data.oMf[-1].homogeneous,
        reference.configuration.data.oMf[-1].homogeneous,
        atol=1e-9,
    )
    assert compiled.qp_step.last_solver == reference.qp_step.last_solver
    a, b = compiled.qp_step.last_problem, reference.qp_step.last_problem
    assert a is not None and b is not None
    assert np.allclose(a.H, b.H, rtol=1e-9, atol=1e-12)
    assert np.allclose(a.c, b.c, rtol=1e-9, atol=1e-12)


@needs_tick
@pytest.mark.parametrize(
    ("name", "integrate_from"), [("franka", "command"), ("ur5", "command"), ("so101", "measured")]
)
def test_compiled_forward_equals_the_python_path(name: str, integrate_from: str) -> None:
    # (the SO-101 cannot follow the rolling target: closing on its own saturated command
    # sequence, rounding differences grow past 1e-9 within a few hundred ticks)
    worst, compiled, _ = _run(name, via="forward", integrate_from=integrate_from)
    assert worst <= 1e-9
    assert compiled.compiled_ticks == TICKS


def _elbow_tasks(name: str, frames: list[str]) -> list[FrameTask]:
    """Position tasks holding intermediate links where they are at home."""
    robot = load_pink_supported_robot(name)
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, robot.q0)
    tasks = []
    for frame in frames:
        task = FrameTask(frame, position_cost=0.3, orientation_cost=0.0)
        task.set_target(data.oMf[robot.model.getFrameId(frame)])
        tasks.append(task)
    return tasks


@needs_tick
@pytest.mark.parametrize(
    ("name", "frames"),
    [("franka", ["panda_link4"]), ("ur5", ["forearm_link", "wrist_1_link"])],
)
@pytest.mark.parametrize("motion_limits", [None, False])
def test_several_frames_run_compiled_and_equal_the_python_path(
    name: str, frames: list[str], motion_limits: bool | None
) -> None:
    compiled, q = _controller(
        name, True, motion_limits=motion_limits, extra_tasks=_elbow_tasks(name, frames)
    )
    reference, _ = _controller(
        name, False, motion_limits=motion_limits, extra_tasks=_elbow_tasks(name, frames)
    )
    assert not compiled.qp_step.fused  # the generic assembly is the reference
    assert compiled.compiled, compiled.compiled_reason
    worst = 0.0
    for target in _targets(name):
        a, b = compiled.step(q, target), reference.step(q, target)
        worst = max(worst, float(np.max(np.abs(a - b))))
        q = b
    assert worst <= 1e-9
    assert compiled.compiled_ticks == TICKS


@needs_tick
def test_run_time_changes_are_seen_as_the_python_path_sees_them() -> None:
    compiled, q = _controller("franka", True)
    reference, _ = _controller("franka", False)
    targets = _targets("franka")
    for k, target in enumerate(targets[:200]):
        if k == 50:
            for c in (compiled, reference):
                c.get_frame_task().set_position_cost([1.0, 2.0, 0.5])
                c.get_posture_task().cost = 1e-2  # type: ignore[union-attr]
        if k == 100:  # out of the fused case: the Python path runs these ticks
            for c in (compiled, reference):
                c.get_frame_task().lm_damping = 1e-3
        if k == 150:
            for c in (compiled, reference):
                c.get_frame_task().lm_damping = 0.0
                c.integrate_from = "command"
        a, b = compiled.step(q, target), reference.step(q, target)
        assert np.max(np.abs(a - b)) <= 1e-9, k
        q = b
    assert compiled.compiled_ticks == 150


@needs_tick
def test_refused_targets_and_bad_input_behave_as_the_python_path() -> None:
    compiled, q = _controller("franka", True)
    reference, _ = _controller("franka", False)
    far = pin.SE3(np.eye(3), np.array([5e3, 0.0, 0.0]))
    a, b = compiled.step(q, far), reference.step(q, far)
    assert np.array_equal(a, b) and compiled.status == reference.status
    assert compiled.last_error == reference.last_error and "ignored" in str(compiled.last_error)
    bad = q.copy()
    bad[0] = np.nan
    for c in (compiled, reference):
        with pytest.raises(ValueError, match="finite"):
            c.step(bad, _targets("franka")[0])


@needs_tick
def test_what_the_compiled_tick_does_not_cover_runs_the_python_path() -> None:
    robot = load_pink_supported_robot("franka")
    extra = PostureTask(cost=1e-4)
    cases = {
        "extra task": dict(extra_tasks=[extra]),
        "pink path": dict(qp_path="pink"),
        "daqp": dict(solver="daqp"),
    }
    for label, options in cases.items():
        if label == "extra task":
            extra.set_target(robot.q0)
        controller, q = _controller("franka", True, **options)
        assert not controller.compiled, label
        assert controller.compiled_reason, label
        controller.step(q, _targets("franka")[1])
        assert controller.compiled_ticks == 0, label
    # collision avoidance: its quiet ticks run compiled (tests/test_collision_check.py)
    controller, q = _controller("franka", True, self_collision=True)
    assert controller.compiled == AVAILABLE
    controller, q = _controller("franka", True)
    controller.pre_step_callback = lambda configuration, setpoint: None
    controller.step(q, _targets("franka")[1])
    assert controller.compiled_ticks == 0
    controller.pre_step_callback = None
    controller.step(q, _targets("franka")[1])
    assert controller.compiled_ticks == 1


def test_compiled_reports_why_not_when_the_extension_is_missing() -> None:
    controller, _ = _controller("franka", True)
    if AVAILABLE:
        assert controller.compiled and controller.compiled_reason == ""
    else:
        assert not controller.compiled and controller.compiled_reason == REASON
    with pytest.raises(ValueError):
        controller.compiled = "yes"  # type: ignore[assignment]


_WITHOUT_TICK = """
import sys
sys.modules["pinkctl._native._tick"] = None  # as if no C++ compiler had built it
import numpy as np
from pinkctl import PinkIKController, RobotState, JointState, load_pink_supported_robot
robot = load_pink_supported_robot("franka")
names = robot.joint_names
controller = PinkIKController(robot, names, [robot.tool_frame], dt=0.005)
q = np.array([robot.home_positions()[n] for n in names])
state = RobotState(joints=JointState.from_name(names, positions=(names, q)))
controller.reset(state, None, 0.0)
controller.forward(state, None, 0.005)
print(controller.compiled, controller.compiled_ticks, controller.status.value)
print(controller.compiled_reason)
"""


def test_without_the_compiled_tick_the_python_path_runs() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PINKCTL_NATIVE"}
    out = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TICK], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[-2] == "False 0 ok"
    assert "pinkctl._native._tick is not built" in out[-1]


def test_the_build_skips_the_compiled_tick_without_a_compiler(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("hatch_build", ROOT / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    hatch_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hatch_build)
    monkeypatch.setenv("CXX", "no-such-compiler-here")
    assert hatch_build.build_tick(tmp_path) is None
    assert "no compiler (no-such-compiler-here)" in capsys.readouterr().err


@needs_tick
def test_the_configuration_gets_a_new_q_every_tick_as_on_the_python_path() -> None:
    controller, q = _controller("franka", True)
    targets = _targets("franka")
    q = controller.step(q, targets[10])
    first = controller.configuration.q
    kept = first.copy()
    controller.step(q, targets[20])
    assert controller.configuration.q is not first and np.array_equal(first, kept)
    assert not first.flags.writeable and controller.compiled_ticks == 2
