"""The SRDF's named states as pinkctl reads them (pinkctl.core.robot.srdf): the parts
Pinocchio's ``loadReferenceConfigurations`` reads otherwise (split states, refused values, a
root pose normalised)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pinkctl.core.robot.srdf import srdf_group_states, srdf_root_pose, srdf_state
from pinkctl.errors import ConfigurationError

SRDF = """<robot name="r">
  <group_state name="home" group="arm">
    <joint name="j1" value="0.5"/>
    <joint name="root_joint" value="1 2 3 0 0 0 4"/>
  </group_state>
  <group_state name="ready" group="arm"><joint name="j1" value="0.1"/></group_state>
  <group_state name="home" group="hand">
    <joint name="j2" value="0.3 9"/>
    <joint name="root_joint" value="0 0 1 0 0 0 2"/>
  </group_state>
  <group_state name="bad" group="arm"><joint name="j1" value="nan"/></group_state>
  <group_state name="empty" group="arm"><joint name="j1"/></group_state>
</robot>
"""


@pytest.fixture
def srdf(tmp_path: Path) -> Path:
    path = tmp_path / "r.srdf"
    path.write_text(SRDF, encoding="utf-8")
    return path


def test_a_state_split_over_groups_is_read_whole(srdf: Path) -> None:
    # (a pose value counts by its first number here; srdf_root_pose reads all seven)
    assert srdf_state(srdf, "home") == {"j1": 0.5, "root_joint": 0.0, "j2": 0.3}
    assert srdf_state(srdf, "ready") == {"j1": 0.1}
    assert srdf_state(srdf, "nope") is None


def test_a_value_that_is_no_finite_number_is_refused_with_the_joint_named(srdf: Path) -> None:
    with pytest.raises(ConfigurationError, match="'bad' gives joint 'j1' the value 'nan'"):
        srdf_state(srdf, "bad")
    with pytest.raises(ConfigurationError, match="'empty' gives joint 'j1' the value None"):
        srdf_state(srdf, "empty")
    with pytest.raises(ConfigurationError, match="group_state 'bad'"):
        srdf_group_states(srdf)  # every state must parse


def test_the_root_pose_is_the_last_seven_numbers_given_normalised(srdf: Path) -> None:
    pose = srdf_root_pose(srdf, "home", "root_joint")
    assert pose is not None
    np.testing.assert_allclose(pose, [0, 0, 1, 0, 0, 0, 1])
    assert srdf_root_pose(srdf, "ready", "root_joint") is None
    assert srdf_root_pose(srdf, "nope", "root_joint") is None
