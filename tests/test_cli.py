"""The ``pinkctl`` command fails fast and says so, in pinkctl's words: a Ray address that does
not answer, option values out of range, unknown options, missing files; long work shows its
progress (a bar on a terminal, a line per 10 % otherwise)."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys

import pytest

from pinkctl._progress import LineProgress, progress_bar
from pinkctl.app.cli import main
from pinkctl.errors import InputError
from pinkctl.ik.backends import check_ray_address


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ---------------------------------------------------------------------- a Ray address


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("nosuchhost.invalid:6379", "the host 'nosuchhost.invalid' does not resolve"),
        ("127.0.0.1:1", "nothing answers at 127.0.0.1:1"),
    ],
)
def test_a_ray_address_that_does_not_answer_is_one_line_and_exit_2(tmp_path, address, reason):
    """Ray alone retries such an address for minutes; pinkctl checks it first. The timeout is
    a generous cap for a hung process, not what the test measures."""
    pytest.importorskip("ray")
    argv = ["reach", "franka", "--backend", "ray", "--address", address]
    done = subprocess.run(
        [sys.executable, "-m", "pinkctl.app.cli", *argv, "--output", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RAY_ADDRESS": ""},
    )
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith(f"pinkctl reach: address {address!r}: {reason}")
    assert "expected a running Ray cluster" in line
    assert done.stdout == ""


def test_check_ray_address_accepts_what_answers_and_what_ray_resolves(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        check_ray_address(f"127.0.0.1:{port}")
        check_ray_address(f"ray://127.0.0.1:{port}")
    for left_to_ray in (None, "auto", "local"):
        check_ray_address(left_to_ray)
    with pytest.raises(InputError, match="address 'head-node' is not host:port"):
        check_ray_address("head-node")
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")  # what ray.init(address=None) reads
    with pytest.raises(InputError, match="RAY_ADDRESS '127.0.0.1:1': nothing answers"):
        check_ray_address(None)


# ---------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["reach", "franka", "--workers", "0"],
            "pinkctl reach: argument --workers: expected an integer >= 1 (worker processes or "
            "Ray tasks), got 0 (see pinkctl reach --help)",
        ),
        (
            ["demo", "--bogus"],
            "pinkctl demo: unrecognized arguments: --bogus (see pinkctl demo --help)",
        ),
        (
            ["demo", "franka", "extra"],
            "pinkctl demo: unrecognized arguments: extra (see pinkctl demo --help)",
        ),
        (
            ["inspect", "franka", "--bogus", "1"],
            "pinkctl inspect: unrecognized arguments: --bogus 1 (see pinkctl inspect --help)",
        ),
        (
            ["inspect", "/nonexistent/robot.urdf"],
            "pinkctl inspect: /nonexistent/robot.urdf: no such file",
        ),
        (
            ["demo", "/nonexistent/robot.toml"],
            "pinkctl demo: /nonexistent/robot.toml: no such file",
        ),
    ],
)
def test_bad_arguments_are_one_line_in_pinkctl_words(argv, expected, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert _one_line(captured.err) == expected and captured.out == ""


# ---------------------------------------------------------------------- progress


def test_progress_off_a_terminal_is_a_line_per_tenth():
    stream = io.StringIO()
    with progress_bar(40, "pinkctl demo: simulating", enabled=True, unit="s", file=stream) as bar:
        assert isinstance(bar, LineProgress)
        for _ in range(160):
            bar.update(0.25)
    lines = stream.getvalue().splitlines()
    assert lines == [
        f"pinkctl demo: simulating: {10 * k} % ({4 * k:g} / 40 s)" for k in range(1, 11)
    ]


def test_progress_jumps_print_one_line_and_none_means_a_terminal_only():
    stream = io.StringIO()
    bar = progress_bar(12, "IK targets", enabled=True, unit="target", file=stream)
    bar.update(5)  # 41 %: one line, for the last tenth reached
    bar.update(7)
    assert stream.getvalue().splitlines() == [
        "IK targets: 40 % (5 / 12 targets)",
        "IK targets: 100 % (12 / 12 targets)",
    ]
    quiet = io.StringIO()
    progress_bar(10, "x", enabled=None, file=quiet).update(10)  # not a terminal: nothing
    progress_bar(10, "x", enabled=False, file=quiet).update(10)
    assert quiet.getvalue() == ""


def test_reach_shows_its_progress_off_a_terminal(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    argv = ["reach", "so101", "--resolution", "0.3", "--orientations", "0", "--workers", "2"]
    assert main([*argv, "--output", str(tmp_path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert "IK targets: 100 %" in "\n".join(err)
    assert all(line.startswith("IK targets: ") for line in err if "%" in line)
