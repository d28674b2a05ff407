"""Smoke tests of the state-construction rows and the report's verdicts (behaviour, not speed:
no figure is compared with a limit here)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if not (ROOT / "bench" / "state_build.py").is_file():  # e.g. tests run from an sdist
    pytest.skip("the bench/ scripts are not available", allow_module_level=True)
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

state_build = importlib.import_module("bench.state_build")
peers = importlib.import_module("bench.peers")
report = importlib.import_module("bench.report")
readme = importlib.import_module("bench.readme")


def test_state_build_rows_and_lines_carry_the_load() -> None:
    row = state_build.run(50)
    assert all(row[key] > 0.0 for key in state_build.ROWS)
    lines = state_build.lines(row)
    assert len(lines) == len(state_build.FAST)
    assert all("1-min load" in line and line.endswith(("MET", "MISSED")) for line in lines)
    assert "test machine" in state_build.markdown(row, "test machine")


def test_tick_verdicts_compare_forward_with_pink_and_placo() -> None:
    tick = {
        "default_median_us": 10.0,
        "pinkctl_median_us": 9.0,
        "default_states_median_us": 12.0,
        "default_forward_median_us": 10.0,
        "placo_median_us": 6.0,
        "pink_median_us": 50.0,
    }
    lines = peers.tick_verdicts(tick)
    assert any("vs pink" in line and "5.00x" in line and line.endswith("MET") for line in lines)
    assert any("states + `forward`" in line and line.endswith("MET") for line in lines)
    assert any("`forward()` alone" in line and line.endswith("MISSED") for line in lines)
    assert peers.verdicts([], tick) == lines


def test_report_writes_every_block_in_one_pass(tmp_path, monkeypatch) -> None:
    page = tmp_path / "performance.md"
    page.write_text("# Performance\n\n<!-- bench:ik:start -->\nold\n<!-- bench:ik:end -->\n")
    blocks = {"ik": "new ik", "peers": "new peers", "report": "machine and load"}
    monkeypatch.setattr(report, "run", lambda quick, robots: blocks)
    assert report.main(["--write", str(page)]) == 0
    text = page.read_text()
    assert "old" not in text and all(body in text for body in blocks.values())
    assert text.count("<!-- bench:report:start -->") == 1
