"""The demo scenario: trajectory follower chained into the IK controller, closed loop in MuJoCo."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import pinkctl
import pinkctl.app.demo as demo_module
from pinkctl.app.cli import main
from pinkctl.app.demo import MAX_BOUND_MM, RMS_BOUND_MM, DemoConfig, run_demo
from pinkctl.core.robot import supported_robots


@pytest.mark.parametrize(
    ("robot", "trajectory", "size"),
    [("franka", "figure8", 0.15), ("ur10", "circle", 0.2)],
)
def test_tracking_bounds_in_mujoco(robot, trajectory, size):
    """Two periods of 8 s at 500 Hz: RMS <= 1 mm, max <= 3 mm, no None, no limit violation."""
    result = run_demo(
        DemoConfig(robot=robot, trajectory=trajectory, period=8.0, size=size, control_rate=500.0),
        progress=False,
    )
    s = result.summary
    log = result.log
    assert log.time[-1] >= 16.0  # two full periods
    # the target really moved along the curve: its extent is the requested size
    extent = np.ptp(log.target_position, axis=0)
    assert max(extent) == pytest.approx(2 * size, rel=1e-3)
    assert s["rms_position_error_mm"] <= RMS_BOUND_MM
    assert s["max_position_error_mm"] <= MAX_BOUND_MM
    assert s["ticks_none"] == 0
    assert s["limit_violations"] == 0
    assert result.ok


def test_cli_demo_prints_table_and_writes_plot(tmp_path, capsys):
    plot = tmp_path / "demo.png"
    log = tmp_path / "demo.npz"
    code = main(
        ["demo", "franka", "--trajectory", "waypoints", "--plot", str(plot), "--save", str(log)]
    )
    out = capsys.readouterr().out
    assert code == 0
    for row in ("position error RMS", "ticks returning None", "limit violations: position"):
        assert row in out
    labels = [line.split("  ")[0] for line in out.splitlines() if "  " in line]
    assert len(labels) == len(set(labels)) >= 12  # no row twice
    assert "joint-limit violations" not in out  # the four limit rows replace it
    header = out.splitlines()[0]
    assert "waypoints (0.10 m)," in header and "period" not in header  # waypoints: no period
    assert out.splitlines()[-1].startswith("passed:")
    assert plot.stat().st_size > 10_000
    data = np.load(log)
    assert data["q"].shape[0] == data["time"].shape[0] > 100


@pytest.mark.parametrize("trajectory", ["figure8", "circle", "waypoints"])
@pytest.mark.parametrize("robot", ["franka", "ur10", "so101"])
def test_every_bundled_robot_passes_every_demo(robot, trajectory, capsys):
    """The curve is sized for each robot (reach, joint limits, a kinematic check): 3 s of
    each demo pass their bounds (the full runs are what the slow sweep below checks)."""
    assert main(["demo", robot, "--trajectory", trajectory, "--duration", "3"]) == 0, (
        capsys.readouterr().err
    )


@pytest.mark.slow
@pytest.mark.parametrize("trajectory", ["figure8", "circle", "waypoints"])
@pytest.mark.parametrize("robot", supported_robots())
def test_full_demo_runs_pass(robot, trajectory, capsys):
    """Every catalog robot passes every full demo (42/42; the talos circle needed the
    transparent shaper: 10.2 mm RMS before, 0.11 mm now)."""
    assert main(["demo", robot, "--trajectory", trajectory]) == 0, capsys.readouterr().err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["demo", "--solver", "nosuch"], "solver 'nosuch' is not an installed QP solver"),
        (["demo", "no_such_robot"], "unknown robot 'no_such_robot'"),
        (["demo", "--trajectory", "spiral"], "invalid choice: 'spiral'"),
        (["demo", "--size", "-1"], "expected a positive number, got -1"),
        (["demo", "--rate", "300"], "not a whole number of 1 ms physics steps"),
        (["demo", "--save", "/no/such/folder/run.npz"], "the folder /no/such/folder does not"),
        (["demo", "--video", "run.avi"], "expected a .mp4, .gif, .png or .jpg file"),
        (["nosuch"], "invalid choice: 'nosuch'"),
    ],
)
def test_bad_arguments_exit_2_with_one_line_before_loading(argv, expected, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert expected in _one_line(captured.err) and captured.out == ""


def test_a_size_the_robot_cannot_follow_is_a_bad_argument(capsys):
    assert main(["demo", "franka", "--size", "0.6"]) == 2
    err = capsys.readouterr().err
    assert "size 0.6 m: franka cannot follow this figure8" in err.splitlines()[-1]
    assert "simulating" not in err  # refused before any simulation


def test_plot_without_matplotlib_is_refused_before_simulating(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # find_spec: not installed
    assert main(["demo", "--plot", str(tmp_path / "x.png")]) == 2
    captured = capsys.readouterr()
    assert "--plot needs matplotlib: pip install 'pinkctl[plot]'" in _one_line(captured.err)


def test_a_failed_check_exits_1_naming_the_row(monkeypatch, capsys):
    monkeypatch.setattr(demo_module, "MAX_BOUND_MM", 1e-6)
    assert main(["demo", "franka", "--duration", "1.5"]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("pinkctl demo: FAILED: position error max ")
    assert last.endswith("> 1e-06 mm")


def test_unexpected_errors_are_one_line_unless_debug(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("something broke\ninside")

    monkeypatch.setattr(demo_module, "run_closed_loop", broken)
    assert main(["demo", "--duration", "1"]) == 1
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line == (
        "pinkctl demo: RuntimeError: something broke inside (rerun with --debug for the traceback)"
    )
    with pytest.raises(RuntimeError, match="something broke"):
        main(["demo", "--duration", "1", "--debug"])


def test_version_and_help(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"pinkctl {pinkctl.__version__}"
    assert main(["demo", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--video" in out and "Exit status 1 names the row" in out


def test_video_of_the_robot(tmp_path, capsys):
    """The video, and its progress on stderr (not a terminal here): a line per 10 % of the
    simulation and rendering, then of the frames written."""
    pytest.importorskip("imageio_ffmpeg")
    video = tmp_path / "demo.mp4"
    assert main(["demo", "--duration", "1", "--video", str(video)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"pinkctl demo: video written to {video}" in err
    rendering = [line for line in err if line.startswith("pinkctl demo: simulating and rendering")]
    assert [line.split(": ")[2].split(" (")[0] for line in rendering] == [
        f"{10 * k} %" for k in range(1, 11)
    ]
    assert rendering[-1].endswith("(1 / 1 s)")
    writing = [line for line in err if line.startswith("pinkctl demo: writing demo.mp4: ")]
    assert len(writing) == 10 and writing[-1].startswith("pinkctl demo: writing demo.mp4: 100 %")
    import imageio.v2 as imageio

    frames = imageio.mimread(video, memtest=False)
    assert len(frames) == pytest.approx(30, abs=2) and frames[0].shape == (480, 640, 3)


def test_picture_of_the_robot_and_its_path(tmp_path, capsys):
    pytest.importorskip("imageio")
    picture = tmp_path / "demo.png"
    assert main(["demo", "--duration", "9", "--picture", str(picture)]) == 0  # one period
    assert f"picture written to {picture}" in capsys.readouterr().err
    import imageio.v2 as imageio

    image = imageio.imread(picture)
    assert image.shape == (480, 640, 3)
    # the trails are drawn: orange dashes (target) and a blue line (tool)
    r, g, b = (image[..., k].astype(int) for k in range(3))
    assert np.count_nonzero((r > 200) & (b < 120) & (g > 100) & (g < 230)) > 200
    assert np.count_nonzero((b > 200) & (r < 120)) > 30
