"""Composite controllers: SelectableController, CombinedController, ChainedController.

Each test pins one rule of the Isaac semantics (notes §2), with fake children that record
every call.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pinkctl.controllers.base import BaseController
from pinkctl.controllers.containers import (
    ChainedController,
    CombinedController,
    ControllerContainer,
    ParallelController,
    SelectableController,
    SequentialController,
)
from pinkctl.controllers.status import ControllerStatus, combined_status
from pinkctl.core.state import JointState, RobotState, RootState, SpatialState

SPACE = ["a", "b"]


def joints(**fields: tuple[list[str], list[float]]) -> RobotState:
    arrays = {
        key: (names, np.asarray(values, dtype=float)) for key, (names, values) in fields.items()
    }
    return RobotState(joints=JointState.from_name(SPACE, **arrays))  # type: ignore[arg-type]


ESTIMATED = joints(positions=(SPACE, [0.1, 0.2]))
SETPOINT = joints(positions=(SPACE, [1.0, 2.0]))


class Fake(BaseController):
    """Records calls into a shared log; returns configurable results."""

    def __init__(
        self,
        name: str,
        log: list[tuple[Any, ...]],
        output: RobotState | None | Callable[[RobotState | None], RobotState | None] = None,
        reset_result: bool = True,
    ) -> None:
        super().__init__()
        self.name = name
        self.log = log
        self.output = output
        self.reset_result = reset_result

    def reset(self, estimated_state, setpoint_state, t, **kwargs):  # type: ignore[no-untyped-def]
        self.log.append((self.name, "reset", estimated_state, setpoint_state, t, kwargs))
        if not self.reset_result:
            self.last_error = f"{self.name} cannot reset"
        return self.reset_result

    def forward(self, estimated_state, setpoint_state, t, **kwargs):  # type: ignore[no-untyped-def]
        self.log.append((self.name, "forward", estimated_state, setpoint_state, t, kwargs))
        output = self.output(setpoint_state) if callable(self.output) else self.output
        if output is None:
            return self._fail(f"{self.name} has nothing")
        return output


def calls(log: list[tuple[Any, ...]]) -> list[tuple[str, str]]:
    return [(entry[0], entry[1]) for entry in log]


class Mode(enum.Enum):
    IDLE = enum.auto()
    MOVE = enum.auto()
    GRASP = enum.auto()


# --------------------------------------------------------------------------------------------
# SelectableController
# --------------------------------------------------------------------------------------------


def make_selectable(
    log: list[tuple[Any, ...]], **reset_results: bool
) -> tuple[SelectableController[Mode], dict[Mode, Fake]]:
    children = {
        mode: Fake(
            mode.name,
            log,
            output=joints(positions=(["a"], [float(mode.value)])),
            reset_result=reset_results.get(mode.name, True),
        )
        for mode in Mode
    }
    return SelectableController(children, Mode.IDLE), children


def test_selectable_constructor_errors() -> None:
    with pytest.raises(ValueError):
        SelectableController({}, Mode.IDLE)
    log: list[tuple[Any, ...]] = []
    with pytest.raises(KeyError) as info:
        SelectableController({Mode.IDLE: Fake("i", log)}, Mode.MOVE)
    assert type(info.value) is KeyError
    with pytest.raises(ValueError):
        SelectableController({Mode.IDLE: object()}, Mode.IDLE)  # type: ignore[dict-item]


def test_set_next_controller_only_records_the_choice() -> None:
    log: list[tuple[Any, ...]] = []
    container, _ = make_selectable(log)
    container.set_next_controller(Mode.MOVE)
    assert log == []  # nothing is reset or run
    assert container.get_active_controller_enum() is Mode.IDLE
    assert container.get_next_controller_enum() is Mode.MOVE


def test_unknown_keys_raise_lookup_error_and_change_nothing() -> None:
    log: list[tuple[Any, ...]] = []
    container, _ = make_selectable(log)
    container.set_next_controller(Mode.MOVE)
    with pytest.raises(LookupError):
        container.set_next_controller("MOVE")  # type: ignore[arg-type]
    with pytest.raises(LookupError):
        container.get_controller("nope")  # type: ignore[arg-type]
    assert container.get_next_controller_enum() is Mode.MOVE


def test_switch_happens_on_next_forward_and_resets_with_that_calls_arguments() -> None:
    log: list[tuple[Any, ...]] = []
    container, children = make_selectable(log)
    assert container.reset(ESTIMATED, SETPOINT, 0.0)
    log.clear()
    container.set_next_controller(Mode.MOVE)
    out = container.forward(ESTIMATED, SETPOINT, 1.5, gain=3)
    assert container.get_active_controller_enum() is Mode.MOVE
    assert calls(log) == [("MOVE", "reset"), ("MOVE", "forward")]  # IDLE gets no callback
    for entry in log:
        assert entry[2] is ESTIMATED and entry[3] is SETPOINT
        assert entry[4] == 1.5 and entry[5] == {"gain": 3}
    assert out is children[Mode.MOVE].output
    # later forwards do not reset again
    log.clear()
    container.forward(ESTIMATED, None, 1.6)
    assert calls(log) == [("MOVE", "forward")]


def test_selecting_the_active_key_does_nothing() -> None:
    log: list[tuple[Any, ...]] = []
    container, _ = make_selectable(log)
    container.set_next_controller(Mode.IDLE)
    container.forward(ESTIMATED, None, 0.0)
    assert calls(log) == [("IDLE", "forward")]
    # switching away and back before a forward is no switch either
    log.clear()
    container.set_next_controller(Mode.MOVE)
    container.set_next_controller(Mode.IDLE)
    container.forward(ESTIMATED, None, 0.1)
    assert calls(log) == [("IDLE", "forward")]


def test_failed_reset_during_switch_raises_runtime_error() -> None:
    log: list[tuple[Any, ...]] = []
    container, _ = make_selectable(log, GRASP=False)
    container.set_next_controller(Mode.GRASP)
    with pytest.raises(RuntimeError, match="GRASP"):
        container.forward(ESTIMATED, SETPOINT, 2.0)
    assert calls(log) == [("GRASP", "reset")]  # its forward is not run
    assert container.last_error is not None and "cannot reset" in container.last_error
    # as in Isaac, the new controller stays active; reset() recovers to the initial one
    assert container.get_active_controller_enum() is Mode.GRASP
    assert container.reset(ESTIMATED, SETPOINT, 2.1)
    assert container.get_active_controller_enum() is Mode.IDLE


def test_reset_returns_to_initial_key_and_resets_only_that_controller() -> None:
    log: list[tuple[Any, ...]] = []
    container, _ = make_selectable(log)
    container.set_next_controller(Mode.MOVE)
    container.forward(ESTIMATED, None, 0.0)
    container.set_next_controller(Mode.GRASP)  # pending switch, dropped by reset
    log.clear()
    assert container.reset(ESTIMATED, SETPOINT, 5.0, flag=True) is True
    assert calls(log) == [("IDLE", "reset")]
    assert log[0][2:] == (ESTIMATED, SETPOINT, 5.0, {"flag": True})
    assert container.get_active_controller_enum() is Mode.IDLE
    assert container.get_next_controller_enum() is Mode.IDLE
    log.clear()
    container.forward(ESTIMATED, None, 5.1)
    assert calls(log) == [("IDLE", "forward")]  # no switch to GRASP


def test_reset_reports_the_initial_controllers_failure() -> None:
    log: list[tuple[Any, ...]] = []
    container, _ = make_selectable(log, IDLE=False)
    assert container.reset(ESTIMATED, None, 0.0) is False
    assert calls(log) == [("IDLE", "reset")]
    assert container.last_error is not None and "IDLE" in container.last_error


def test_selectable_passes_none_through_with_a_reason() -> None:
    log: list[tuple[Any, ...]] = []
    silent = Fake("silent", log, output=None)
    container = SelectableController({"s": silent, "t": Fake("t", log)}, "s")
    assert container.forward(ESTIMATED, None, 0.0) is None
    assert container.last_error is not None
    assert "'s'" in container.last_error and "silent has nothing" in container.last_error


def test_get_controller_reaches_the_child() -> None:
    log: list[tuple[Any, ...]] = []
    container, children = make_selectable(log)
    assert container.get_controller(Mode.GRASP) is children[Mode.GRASP]
    assert container.controller_keys == list(Mode)


# --------------------------------------------------------------------------------------------
# CombinedController
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [CombinedController, ChainedController])
def test_lists_need_at_least_two_controllers(cls: type[BaseController]) -> None:
    log: list[tuple[Any, ...]] = []
    with pytest.raises(ValueError):
        cls([])  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        cls([Fake("one", log)])  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        cls([Fake("one", log), "two"])  # type: ignore[call-arg]
    cls([Fake("one", log), Fake("two", log)])  # type: ignore[call-arg]


def test_combined_forward_merges_outputs_from_the_same_inputs() -> None:
    log: list[tuple[Any, ...]] = []
    arm = Fake("arm", log, output=joints(positions=(["a"], [0.5]), velocities=(["a"], [0.1])))
    gripper = Fake("gripper", log, output=joints(positions=(["b"], [0.04])))
    effort = Fake("effort", log, output=joints(efforts=(["a"], [2.0])))  # same joint, new field
    combined = CombinedController([arm, gripper, effort])
    out = combined.forward(ESTIMATED, SETPOINT, 0.7, extra="x")
    assert calls(log) == [("arm", "forward"), ("gripper", "forward"), ("effort", "forward")]
    for entry in log:
        assert entry[2:] == (ESTIMATED, SETPOINT, 0.7, {"extra": "x"})
    assert out is not None and out.joints is not None
    np.testing.assert_allclose(out.joints.positions, [0.5, 0.04])
    np.testing.assert_allclose(out.joints.velocities, [0.1])
    np.testing.assert_allclose(out.joints.efforts, [2.0])
    assert combined.last_error is None


def test_combined_none_short_circuits() -> None:
    log: list[tuple[Any, ...]] = []
    first = Fake("first", log, output=joints(positions=(["a"], [0.5])))
    silent = Fake("silent", log, output=None)
    third = Fake("third", log, output=joints(positions=(["b"], [0.5])))
    combined = CombinedController([first, silent, third])
    assert combined.forward(ESTIMATED, None, 0.0) is None
    assert calls(log) == [("first", "forward"), ("silent", "forward")]
    assert combined.last_error is not None
    assert "controllers[1]" in combined.last_error and "silent has nothing" in combined.last_error


@pytest.mark.parametrize(
    "second",
    [
        joints(positions=(["a"], [0.9])),  # same (joint, field)
        RobotState(joints=JointState.from_name(["b", "a"], positions=(["b"], np.array([0.9])))),
        RobotState(root=RootState(position=[0.0, 0.0, 1.0])),  # same root field
        RobotState(
            sites=SpatialState.from_name(["tool"], positions=(["tool"], np.zeros((1, 3))))
        ),  # same (frame, field)
    ],
)
def test_combined_overlap_gives_none_and_stops(second: RobotState) -> None:
    log: list[tuple[Any, ...]] = []
    base = RobotState(
        joints=JointState.from_name(SPACE, positions=(["a"], np.array([0.5]))),
        root=RootState(position=[0.0, 0.0, 0.0]),
        sites=SpatialState.from_name(["tool"], positions=(["tool"], np.ones((1, 3)))),
    )
    combined = CombinedController(
        [Fake("first", log, output=base), Fake("second", log, output=second), Fake("third", log)]
    )
    assert combined.forward(ESTIMATED, None, 0.0) is None
    assert calls(log) == [("first", "forward"), ("second", "forward")]
    assert combined.last_error is not None and "overlaps" in combined.last_error


def test_combined_reset_in_order_stops_at_first_failure() -> None:
    log: list[tuple[Any, ...]] = []
    combined = CombinedController(
        [Fake("one", log), Fake("two", log, reset_result=False), Fake("three", log)]
    )
    assert combined.reset(ESTIMATED, SETPOINT, 1.0, k=1) is False
    assert calls(log) == [("one", "reset"), ("two", "reset")]
    assert log[0][2:] == (ESTIMATED, SETPOINT, 1.0, {"k": 1})
    assert combined.last_error is not None and "two cannot reset" in combined.last_error
    log.clear()
    ok = CombinedController([Fake("one", log), Fake("two", log)])
    assert ok.reset(ESTIMATED, SETPOINT, 1.0) is True
    assert calls(log) == [("one", "reset"), ("two", "reset")]


# --------------------------------------------------------------------------------------------
# ChainedController
# --------------------------------------------------------------------------------------------


def test_chained_feeds_each_output_as_the_next_setpoint() -> None:
    log: list[tuple[Any, ...]] = []
    out1 = joints(positions=(["a"], [1.0]))
    out2 = joints(positions=(["a"], [2.0]))
    out3 = joints(positions=(["a"], [3.0]))
    chain = ChainedController(
        [
            Fake("one", log, output=out1),
            Fake("two", log, output=out2),
            Fake("three", log, output=out3),
        ]
    )
    result = chain.forward(ESTIMATED, SETPOINT, 4.0, mode="fast")
    assert result is out3
    assert calls(log) == [("one", "forward"), ("two", "forward"), ("three", "forward")]
    assert [entry[3] for entry in log] == [SETPOINT, out1, out2]
    for entry in log:
        assert entry[2] is ESTIMATED and entry[4] == 4.0 and entry[5] == {"mode": "fast"}


def test_chained_none_stops_the_chain() -> None:
    log: list[tuple[Any, ...]] = []
    chain = ChainedController(
        [Fake("one", log, output=None), Fake("two", log, output=lambda sp: sp)]
    )
    assert chain.forward(ESTIMATED, SETPOINT, 0.0) is None
    assert calls(log) == [("one", "forward")]
    assert chain.last_error is not None and "controllers[0]" in chain.last_error


def test_chained_reset_uses_the_callers_setpoint_and_stops_at_first_failure() -> None:
    log: list[tuple[Any, ...]] = []
    chain = ChainedController(
        [
            Fake("one", log, output=joints(positions=(["a"], [9.0]))),
            Fake("two", log, reset_result=False),
            Fake("three", log),
        ]
    )
    assert chain.reset(ESTIMATED, SETPOINT, 3.0, k=2) is False
    assert calls(log) == [("one", "reset"), ("two", "reset")]  # no forward, third untouched
    for entry in log:
        assert entry[2:] == (ESTIMATED, SETPOINT, 3.0, {"k": 2})
    assert chain.last_error is not None and "controllers[1]" in chain.last_error


# --------------------------------------------------------------------------------------------
# Aliases and nesting
# --------------------------------------------------------------------------------------------


def test_isaac_names_are_aliases() -> None:
    assert ControllerContainer is SelectableController
    assert ParallelController is CombinedController
    assert SequentialController is ChainedController


def test_composites_nest() -> None:
    log: list[tuple[Any, ...]] = []
    arm = Fake("arm", log, output=joints(positions=(["a"], [0.5])))
    gripper = Fake("gripper", log, output=joints(positions=(["b"], [0.04])))
    hold = Fake("hold", log, output=joints(positions=(SPACE, [0.0, 0.0])))
    container = SelectableController(
        {"work": CombinedController([arm, gripper]), "hold": hold}, "work"
    )
    out = container.forward(ESTIMATED, None, 0.0)
    assert out is not None and out.joints is not None
    np.testing.assert_allclose(out.joints.positions, [0.5, 0.04])
    container.set_next_controller("hold")
    container.forward(ESTIMATED, None, 0.1)
    assert calls(log)[-2:] == [("hold", "reset"), ("hold", "forward")]


class Braking(Fake):
    """A fake that reports a status: braking with a reason, or OK."""

    def __init__(self, name: str, log: list[tuple[Any, ...]], output: RobotState) -> None:
        super().__init__(name, log, output)
        self.braking = True

    @property
    def status(self) -> ControllerStatus:  # type: ignore[override]
        return ControllerStatus.BRAKING if self.braking else ControllerStatus.OK

    def forward(self, estimated_state, setpoint_state, t, **kwargs):  # type: ignore[no-untyped-def]
        out = super().forward(estimated_state, setpoint_state, t, **kwargs)
        self.last_error = "QP failed: infeasible" if self.braking else None
        return out


def test_containers_report_a_braking_child_and_why() -> None:
    """A braking child still commands, but the composite says so: its status is BRAKING and
    its ``last_error`` names the child and the reason; OK again when the child recovers. A
    child without a status leaves the composite's to the others."""
    log: list[tuple[Any, ...]] = []
    follower = Fake("follower", log, SETPOINT)
    ik = Braking("ik", log, SETPOINT)
    chain = ChainedController([follower, ik])
    assert follower.status is None
    assert chain.forward(ESTIMATED, None, 0.0) is not None
    assert chain.status is ControllerStatus.BRAKING
    assert chain.last_error == "controllers[1] (Braking) is braking: QP failed: infeasible"
    selectable = SelectableController(
        {Mode.MOVE: ik, Mode.IDLE: Fake("home", log, SETPOINT)}, Mode.MOVE
    )
    assert selectable.forward(ESTIMATED, None, 0.0) is not None
    assert selectable.status is ControllerStatus.BRAKING and "infeasible" in selectable.last_error
    ik.braking = False
    assert chain.forward(ESTIMATED, None, 0.0) is not None
    assert chain.status is ControllerStatus.OK and chain.last_error is None
    selectable.set_next_controller(Mode.IDLE)
    selectable.forward(ESTIMATED, None, 0.0)
    assert selectable.status is None  # the active child reports none
    assert combined_status([None, ControllerStatus.NOT_READY, ControllerStatus.OK]) is (
        ControllerStatus.NOT_READY
    )
