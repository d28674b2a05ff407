"""The MuJoCo/React seed's built-in solver options on an IkTarget (docs/view.md, the React
hook's rows): :func:`pinkctl.view.dls_solve_fn`."""

from __future__ import annotations

import numpy as np
import pytest

from pinkctl import InputError, MujocoSimulation, load_pink_supported_robot
from pinkctl.mujoco_ik import solve_joints
from pinkctl.view import InteractiveScene, dls_solve_fn


@pytest.fixture(scope="module")
def franka():
    return load_pink_supported_robot("franka")


def test_builtin_solver_options_drive_an_arm(franka):
    """dls_solve_fn with the seed's defaults (50 iterations, damping 0.01, weights 1.0 / 0.3,
    tolerance 1e-3) as the ik_solve_fn: the arm follows a 0.3 s move to within 1 mm."""
    scene = InteractiveScene(MujocoSimulation.from_robot(franka))
    target = scene.add_target()
    target.ik_solve_fn = dls_solve_fn(target)
    start = target.target_pose()
    target.move_target(start.position + [0.0, 0.08, -0.05], duration=0.3)
    scene.run(0.8)
    assert target.last_error is None and target.commands_written > 0
    position_error, rotation_error = target.tracking_error()
    assert position_error < 1e-3 and rotation_error < 3e-3  # measured: 0.46 mm, 0.0011 rad


@pytest.mark.parametrize("conventions", ["pinkctl", "threejs"])
def test_builtin_solver_options_maxIterations_damping_tolerance_maxStepRad_are_solve_joints_options(
    franka, conventions
):
    """Each option reaches solve_joints; the quaternion is read in the target's conventions;
    the live qpos is left alone."""
    sim = MujocoSimulation.from_robot(franka)
    target = InteractiveScene(sim).add_target(conventions=conventions)
    options = {
        "max_iterations": 3,
        "damping": 0.05,
        "position_weight": 0.7,
        "rotation_weight": 0.2,
        "tolerance": 1e-4,
        "max_step": 0.05,
    }
    solve = dls_solve_fn(target, **options)
    addresses = [sim.model.joint(n).qposadr[0] for n in target.joint_names]
    position = sim.get_site_pose(target.site)[0] + [0.05, -0.04, 0.03]
    wxyz = np.array([0.0, 1.0, 0.0, 0.0])
    given = wxyz[[1, 2, 3, 0]] if conventions == "threejs" else wxyz
    live = sim.data.qpos.copy()
    current = live[addresses] + 0.01
    q = solve(position, given, current)
    start = live.copy()
    start[addresses] = current
    expected = solve_joints(
        sim.model, sim.data, target.site, target.joint_names, position, wxyz, start, **options
    )
    np.testing.assert_array_equal(q, expected.qpos[addresses])
    np.testing.assert_array_equal(sim.data.qpos, live)
    assert expected.iterations <= 3 and not expected.converged


def test_builtin_solver_options_are_checked(franka):
    target = InteractiveScene(MujocoSimulation.from_robot(franka)).add_target()
    for bad in (
        {"max_iterations": 0},
        {"damping": 0.0},
        {"position_weight": -1.0},
        {"rotation_weight": np.nan},
        {"tolerance": -1e-3},
        {"max_step": -0.1},
    ):
        with pytest.raises(InputError, match=next(iter(bad))):
            dls_solve_fn(target, **bad)
    with pytest.raises(InputError, match="IkTarget"):
        dls_solve_fn("target")


def test_THREE_conventions_on_the_command_line(monkeypatch, capsys):
    """``pinkctl view ROBOT --conventions threejs``: the web page reads and shows poses in
    three.js's conventions ((x, y, z, w), XYZ Euler angles, milliseconds)."""
    pytest.importorskip("viser")
    from pinkctl.app.cli import main
    from pinkctl.view import web

    pages = []
    original = web.WebViewer.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        pages.append(self.conventions)

    monkeypatch.setattr(web.WebViewer, "__init__", recording)
    arguments = ["view", "franka", "--port", "0", "--duration", "0.2"]
    assert main([*arguments, "--conventions", "threejs"]) == 0
    assert main(arguments) == 0
    assert [page.name for page in pages] == ["threejs", "pinkctl"]
    assert (pages[0].quaternion_order, pages[0].euler_order) == ("xyzw", "XYZ")
    assert pages[0].duration_unit == "ms"
    assert main([*arguments, "--conventions", "unity"]) == 2
    assert "invalid choice: 'unity'" in capsys.readouterr().err
