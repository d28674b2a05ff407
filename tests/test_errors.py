"""One exception hierarchy: users catch pinkctl's errors by kind, and the built-in classes
code written before the hierarchy caught still work."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pinkctl
from pinkctl import (
    ConfigurationError,
    DescriptionNotFoundError,
    InputError,
    PinkctlError,
    PinkctlWarning,
    SolverError,
)
from pinkctl.qp import QPSolveError


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (ConfigurationError, ValueError),
        (InputError, ValueError),
        (DescriptionNotFoundError, FileNotFoundError),
        (SolverError, RuntimeError),
        (QPSolveError, SolverError),
    ],
)
def test_each_error_is_a_pinkctl_error_and_its_builtin(error: type, builtin: type) -> None:
    assert issubclass(error, PinkctlError)
    assert issubclass(error, builtin)


def test_bad_argument_raises_input_error_naming_it() -> None:
    robot = pinkctl.load_pink_supported_robot("franka")
    with pytest.raises(InputError, match="dt"):
        pinkctl.PinkIKController(robot, robot.controlled_joint_names, ["panda_hand_tcp"], dt=-1.0)


def test_bad_state_raises_input_error() -> None:
    with pytest.raises(InputError):
        pinkctl.JointState(["a", "b"], np.zeros((3, 3)), np.ones((3, 3), dtype=bool))


def test_missing_description_raises_description_not_found(tmp_path: Path) -> None:
    with pytest.raises(DescriptionNotFoundError, match="nowhere.urdf"):
        pinkctl.load_pink_robot(tmp_path / "nowhere.urdf")


def test_broken_configuration_raises_configuration_error(tmp_path: Path) -> None:
    urdf = Path(pinkctl.load_pink_supported_robot("so101").description.path)
    config = tmp_path / "robot.toml"
    config.write_text('tool_frame = "no_such_frame"\n')
    with pytest.raises(ConfigurationError, match="no_such_frame"):
        pinkctl.load_pink_robot(urdf, config=config)


def test_inferred_settings_warn_with_pinkctl_warning() -> None:
    urdf = Path(__file__).parent / "urdf" / "continuous_arm.urdf"
    with pytest.warns(PinkctlWarning):
        pinkctl.load_pink_robot(urdf)
