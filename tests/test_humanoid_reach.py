"""A floating-base humanoid stands in MuJoCo and reaches with one hand (issue 26).

The quick reach runs in ``tests/test_examples.py`` (``humanoid_reach --quick``); here: the
stance itself, and the full ten-target acceptance (slow).
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from pinkctl import MujocoSimulation, load_pink_supported_robot
from pinkctl.app.whole_body import HUMANOIDS, run_reach


@pytest.mark.parametrize("name", sorted(HUMANOIDS))
def test_a_floating_base_humanoid_stands_on_its_feet(name: str) -> None:
    robot = load_pink_supported_robot(name, floating_base=True)
    sim = MujocoSimulation.from_robot(robot)
    z0 = float(sim.data.qpos[2])
    sim.step(int(round(1.0 / sim.timestep)))
    state = sim.get_robot_state()
    assert state.root is not None
    assert z0 - state.root.position[2] < 0.005  # settles by a few mm, no fall
    assert abs(state.root.position[2] - sim.data.qpos[2]) < 1e-12
    model, data = sim.model, sim.data
    floor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    on_floor = {
        model.body(int(model.geom_bodyid[c.geom1 + c.geom2 - floor])).name
        for c in data.contact[: data.ncon]
        if floor in (c.geom1, c.geom2)
    }
    feet = set(HUMANOIDS[name].feet) | {
        model.body(int(model.body_parentid[model.body(f).id])).name for f in HUMANOIDS[name].feet
    }
    assert on_floor and on_floor <= feet, on_floor
    # a stiff floor (2-step time constant), its parameters those of every contact with it
    assert model.geom_solref[floor][0] == pytest.approx(2 * sim.timestep)
    assert model.geom_priority[floor] > 0
    held = sim.get_joint_positions(sim.actuated_joint_names)
    home = robot.home_positions()
    assert max(abs(q - home[n]) for n, q in zip(sim.actuated_joint_names, held)) < 0.005


@pytest.mark.slow
@pytest.mark.parametrize("name", ["g1", "talos"])
def test_standing_reach_acceptance(name: str) -> None:
    report = run_reach(name)
    assert len(report.rows) == 10
    assert report.rows[-1].target[2] < report.rows[0].target[2] - 0.3  # the floor target
    assert report.passed == 10, report.table


def test_demo_whole_body_needs_a_humanoid(capsys: pytest.CaptureFixture[str]) -> None:
    from pinkctl.app.cli import BAD_ARGUMENTS, main  # noqa: PLC0415

    assert main(["demo", "franka", "--whole-body"]) == BAD_ARGUMENTS
    assert "no whole-body set-up for 'franka'" in capsys.readouterr().err


@pytest.mark.slow
def test_demo_whole_body_prints_the_reach_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pinkctl.app.whole_body as whole_body  # noqa: PLC0415
    from pinkctl.app.cli import OK, main  # noqa: PLC0415

    quick = whole_body.run_reach

    def two_targets(name: str, **kw):  # type: ignore[no-untyped-def]
        return quick(name, offsets=[(0.1, 0.0, 0.0)], seconds=2.0, hold=0.5)

    monkeypatch.setattr(whole_body, "run_reach", two_targets)  # reach_demo's call
    assert main(["demo", "g1", "--whole-body"]) == OK
    out = capsys.readouterr().out
    assert "hand [mm]" in out and "g1: 1/1 targets pass" in out


def test_an_unreachable_target_is_judged_at_the_closest_pose() -> None:
    from pinkctl.app.whole_body import ReachReport, ReachRow  # noqa: PLC0415

    reached = ReachRow(target=np.zeros(3), error=0.004, planned_error=0.0, miss=0.004)
    missed = ReachRow(target=np.zeros(3), error=0.006, planned_error=0.0, miss=0.006)
    unreachable = ReachRow(target=np.zeros(3), error=0.05, planned_error=0.048, miss=0.003)
    drifted = ReachRow(target=np.zeros(3), error=0.05, planned_error=0.04, miss=0.012)
    assert reached.passed and unreachable.passed and not unreachable.reachable
    assert missed.failures == ["hand 6.0 mm"]
    assert drifted.failures == ["hand 12.0 mm off the closest pose"]
    table = ReachReport("g1", [reached, unreachable]).table
    assert "IK [mm]" in table and "g1: 2/2 targets pass" in table
