"""Smoke tests of the runnable examples: each runs its quick scenario and passes its own check.

The examples are loaded from ``examples/`` by path and run in-process through their
``main(argv)`` (or ``run(...)``) functions, as ``python examples/<name>.py --quick`` would.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
EXAMPLES = [
    "follow_target",
    "chained_trajectory",
    "selectable_switching",
    "combined_gripper",
    "pick_and_place",
    "own_robot",
    "learn_to_reach",
    "record_episodes",
    "ik_groups",
    "reachability_map",
    "avoid_obstacles",
]


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` as a module (cached across tests)."""
    module_name = f"pinkctl_example_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_every_example_is_covered_and_documented() -> None:
    found = sorted(p.stem for p in EXAMPLES_DIR.glob("*.py") if not p.stem.startswith("_"))
    assert found == sorted(EXAMPLES)
    for name in EXAMPLES:
        module = load_example(name)
        assert module.__doc__ and "Run::" in module.__doc__, name
        assert callable(module.main), name
        source = (EXAMPLES_DIR / f"{name}.py").read_text()
        assert 'if __name__ == "__main__":' in source, name


@pytest.mark.parametrize(
    ("name", "argv"),
    [
        ("follow_target", ["--quick"]),
        ("chained_trajectory", ["--quick"]),
        ("chained_trajectory", ["--quick", "--trajectory", "circle"]),
        ("selectable_switching", ["--quick"]),
        ("combined_gripper", ["--quick"]),
        ("own_robot", ["--quick"]),
        ("learn_to_reach", ["--quick"]),
        ("ik_groups", ["--quick"]),
    ],
)
def test_example_quick_run_passes(
    name: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status = load_example(name).main(argv)
    out = capsys.readouterr().out
    assert status == 0, out
    assert f"{name} [OK]" in out


def test_follow_target_check_can_fail(capsys: pytest.CaptureFixture[str]) -> None:
    # a soft gain on the measured joints lags by ~3 mm: over the bound
    status = load_example("follow_target").main(
        ["--quick", "--integrate-from", "measured", "--gain", "0.1", "--bound", "1.0"]
    )
    assert status == 1
    assert "follow_target [FAILED]" in capsys.readouterr().out


#: The measured-integration advice of follow_target.py's docstring: (gain, stated RMS [mm]).
MEASURED_ADVICE = [
    (float(gain), float(rms))
    for gain, rms in re.findall(
        r"``--integrate-from measured --gain ([\d.]+)``: ([\d.]+) mm RMS",
        load_example("follow_target").__doc__ or "",
    )
]


def test_the_measured_integration_advice_is_stated() -> None:
    assert [gain for gain, _ in MEASURED_ADVICE] == [1.0, 0.5, 0.1]


@pytest.mark.parametrize(("gain", "stated_rms"), MEASURED_ADVICE)
def test_follow_target_measured_integration_as_documented(
    gain: float, stated_rms: float, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each stated gain gives the stated error (full run) and passes or fails as stated."""
    example = load_example("follow_target")
    argv = ["--integrate-from", "measured", "--gain", f"{gain:g}"]
    status = example.main(argv)
    out = capsys.readouterr().out
    rms = float(re.search(r"tracking error RMS ([\d.]+) mm", out).group(1))  # type: ignore[union-attr]
    assert rms == pytest.approx(stated_rms, abs=0.05), out
    assert status == (0 if stated_rms <= 2.0 else 1), out


def test_follow_target_tracks_within_a_millimetre() -> None:
    result = load_example("follow_target").run(duration=2.0)
    assert result.ticks_none == 0
    assert result.rms_error_mm < 1.0
    assert result.max_error_mm < 2.0


def test_selectable_switch_is_deferred_to_the_next_forward() -> None:
    result = load_example("selectable_switching").run(hold_time=0.2)
    assert result.ok
    assert result.switch_deferred
    assert result.reach_error_mm < 2.0
    assert result.home_error_rad < 0.01
    request, after = result.events[0], result.events[1]
    assert "active REACH, next HOME" in request
    assert "after forward -> active HOME" in after


def test_combined_gripper_merges_arm_and_finger_commands() -> None:
    module = load_example("combined_gripper")
    result = module.run(duration=2.0, close_at=0.5)
    assert result.ok
    arm = [f"panda_joint{i}" for i in range(1, 8)]
    assert sorted(result.commanded_joints) == sorted([*arm, module.FINGER])
    assert result.finger_start == pytest.approx(module.OPEN, abs=2e-3)
    assert result.finger_end == pytest.approx(module.CLOSED, abs=2e-3)


def test_chained_trajectory_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "run.png"
    status = load_example("chained_trajectory").main(
        ["--quick", "--trajectory", "circle", "--plot", str(target)]
    )
    assert status == 0, capsys.readouterr().out
    assert target.is_file() and target.stat().st_size > 1000


def test_pick_and_place_lifts_and_places_the_cube() -> None:
    module = load_example("pick_and_place")
    result = module.run(quick=True)
    assert result.timed_out is None, result.events
    assert result.lift >= 0.05, result.events
    assert result.place_error <= 0.02, result.events
    assert result.ok
    expected = [p.name for p in module.Phase if p is not module.Phase.DONE]
    assert list(result.phase_times) == expected


def test_pick_and_place_main_reports_success(capsys: pytest.CaptureFixture[str]) -> None:
    status = load_example("pick_and_place").main(["--quick"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "pick_and_place [OK]" in out


def test_record_episodes_saves_episodes_and_a_video(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("imageio_ffmpeg")
    status = load_example("record_episodes").main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "record_episodes [OK]" in out and "2/2 episodes succeeded" in out
    video = tmp_path / "episode_000.mp4"
    assert video.is_file() and video.stat().st_size > 1000
    with np.load(tmp_path / "episode_001.npz") as saved:
        assert saved["actions"].shape[1] == 4
        assert saved["obs/environment_state"].shape == (saved["actions"].shape[0] + 1, 6)
        assert saved["successes"][-1]


def test_record_episodes_without_a_video_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "imageio", None)  # import imageio fails
    monkeypatch.setitem(sys.modules, "imageio.v2", None)
    status = load_example("record_episodes").main(
        ["--quick", "--out", str(tmp_path), "--env", "pinkctl/SO101PickCube-v0"]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "no video (no MP4 writer: writing .mp4 files needs imageio" in out
    assert "pip install 'pinkctl[video]'" in out
    assert not (tmp_path / "episode_000.mp4").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["episode_000.npz", "episode_001.npz"]


def test_reachability_map_quick_run_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    status = load_example("reachability_map").main(["--quick", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "reachability_map [OK]" in out
    assert (tmp_path / "franka_reach.npz").is_file() and (tmp_path / "franka_reach.png").is_file()


def test_learn_to_reach_check_can_fail() -> None:
    module = load_example("learn_to_reach")
    untrained = module.Settings(
        iterations=0, population=2, episodes_per_candidate=1, max_steps=1, eval_episodes=10
    )
    result = module.run(settings=untrained)
    assert result.success_rate < module.SUCCESS_BAR  # the zero policy never moves
    assert not result.ok


def test_avoid_obstacles_quick_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The quick run passes its check (no contact deeper than 0.5 mm) when the controller
    takes the world; without avoidance it still runs and says so. The picture is written."""
    example = load_example("avoid_obstacles")
    image = tmp_path / "avoid.png"
    status = example.main(["--quick", "--image", str(image)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert image.stat().st_size > 10_000
    if "NO AVOIDANCE" not in out:
        assert "avoid_obstacles [OK]" in out, out
