"""Composite controllers: pick one of several, run several side by side, or chain them.

Every composite is itself a :class:`~pinkctl.controllers.base.BaseController`, so composites
nest. The semantics follow Isaac Sim's experimental motion generation containers; the Isaac
names are exported as aliases (:data:`ControllerContainer`, :data:`ParallelController`,
:data:`SequentialController`) so ported code runs unchanged.

None propagates: when a child has no output the composite has none either (``forward``
returns None) and :attr:`~pinkctl.controllers.base.BaseController.last_error` says which child
and why. So does braking: a composite's :attr:`status` combines its children's
(:func:`~pinkctl.controllers.status.combined_status`), and while a child brakes its
``last_error`` names that child and its reason. Extra keyword arguments of ``reset`` and
``forward`` are passed on to every child unchanged.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from ..core.state import RobotState, combine_robot_states
from ..errors import InputError
from .base import BaseController
from .status import ControllerStatus, combined_status

__all__ = [
    "ChainedController",
    "CombinedController",
    "ControllerContainer",
    "ParallelController",
    "SelectableController",
    "SequentialController",
]

KeyT = TypeVar("KeyT", bound=Hashable)


def _describe(controller: BaseController) -> str:
    return type(controller).__name__


def _reason(controller: BaseController) -> str:
    reason = getattr(controller, "last_error", None)
    return str(reason) if reason else "no reason recorded"


def _braking_reason(children: Sequence[tuple[str, BaseController]]) -> str | None:
    """Which of the (labelled) children brakes and why, or None when none does."""
    for label, child in children:
        if child.status is ControllerStatus.BRAKING:
            return f"{label} ({_describe(child)}) is braking: {_reason(child)}"
    return None


def _check_children(
    controllers: Sequence[BaseController], owner: str
) -> tuple[BaseController, ...]:
    if isinstance(controllers, Mapping) or not isinstance(controllers, Sequence):
        raise InputError(f"{owner} takes a list of controllers, got {type(controllers).__name__}")
    children = tuple(controllers)
    if len(children) < 2:
        raise InputError(f"{owner} needs at least 2 controllers, got {len(children)}")
    for i, child in enumerate(children):
        if not isinstance(child, BaseController):
            raise InputError(
                f"{owner}: controllers[{i}] must be a BaseController, got {type(child).__name__}"
            )
    # a controller object that runs twice per tick steps its state twice (a motion-limited
    # IK controller would double its velocity, quadruple its acceleration)
    seen: dict[int, str] = {}
    for i, child in enumerate(children):
        for path, node in _descendants(child, f"controllers[{i}]"):
            if id(node) in seen:
                raise InputError(
                    f"{owner}: the same {_describe(node)} object is both {seen[id(node)]} and "
                    f"{path}; use a separate instance for each"
                )
            seen[id(node)] = path
    return children


def _descendants(controller: BaseController, path: str) -> list[tuple[str, BaseController]]:
    """``controller`` and every controller nested in it, with where each sits."""
    out = [(path, controller)]
    if isinstance(controller, SelectableController):
        for key, child in controller._options.items():
            out += _descendants(child, f"{path}[{key!r}]")
    elif isinstance(controller, (CombinedController, ChainedController)):
        for i, child in enumerate(controller._controllers):
            out += _descendants(child, f"{path}.controllers[{i}]")
    return out


class SelectableController(BaseController, Generic[KeyT]):
    """Runs exactly one of several controllers, selected by key (Isaac: ``ControllerContainer``).

    A switch is *deferred*: :meth:`set_next_controller` only records the wanted key. The next
    :meth:`forward` makes it active and first calls the new controller's ``reset`` with that
    forward call's own arguments (estimated state, setpoint, ``t``, keyword arguments), so a
    newly selected controller always starts from a reset. Selecting the key that is already
    active does nothing. The controller switched away from is not told.

    Typical caller: a state machine calling :meth:`set_next_controller`, and
    :meth:`get_controller` to reach a child's methods (``TrajectoryFollower.set_trajectory``).

    Args:
        controller_options: Controllers by key (an ``Enum`` member or any hashable). The mapping
            is copied.
        initial_controller_selection: Key of the controller active at construction and after
            every :meth:`reset`.

    Raises:
        ValueError: If ``controller_options`` is empty or holds something that is not a
            :class:`~pinkctl.controllers.base.BaseController`.
        KeyError: If ``initial_controller_selection`` is not a key of ``controller_options``.
    """

    def __init__(
        self, controller_options: Mapping[KeyT, BaseController], initial_controller_selection: KeyT
    ) -> None:
        super().__init__()
        if not isinstance(controller_options, Mapping):
            raise InputError(
                "controller_options must be a mapping of key -> controller, "
                f"got {type(controller_options).__name__}"
            )
        if len(controller_options) == 0:
            raise InputError("controller_options must hold at least one controller")
        for key, child in controller_options.items():
            if not isinstance(child, BaseController):
                raise InputError(
                    f"controller_options[{key!r}] must be a BaseController, "
                    f"got {type(child).__name__}"
                )
        options = dict(controller_options)
        options[initial_controller_selection]  # plain KeyError when the key is missing
        self._options: dict[KeyT, BaseController] = options
        self._initial_key: KeyT = initial_controller_selection
        self._active_key: KeyT = initial_controller_selection
        self._next_key: KeyT = initial_controller_selection

    def reset(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> bool:
        """Go back to the initial controller and reset it (and only it): the active and the
        pending selection become ``initial_controller_selection`` (a requested switch is
        dropped). Returns the initial controller's ``reset`` result."""
        self._active_key = self._initial_key
        self._next_key = self._initial_key
        child = self._options[self._initial_key]
        if child.reset(estimated_state, setpoint_state, t, **kwargs):
            self.last_error = None
            return True
        self.last_error = f"reset of controller {self._initial_key!r} failed: {_reason(child)}"
        return False

    def forward(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> RobotState | None:
        """Apply a pending switch (the newly selected controller is reset with this call's
        arguments first), then return the active controller's output (None passed through).

        Raises:
            RuntimeError: If the newly selected controller's ``reset`` returns False. As in
                Isaac, the new controller stays active (un-reset); select another key or call
                :meth:`reset` to recover.
        """
        if self._next_key != self._active_key:
            self._active_key = self._next_key
            child = self._options[self._active_key]
            if not child.reset(estimated_state, setpoint_state, t, **kwargs):
                self.last_error = (
                    f"reset of controller {self._active_key!r} failed while switching to it: "
                    f"{_reason(child)}"
                )
                raise RuntimeError(self.last_error)
        child = self._options[self._active_key]
        output = child.forward(estimated_state, setpoint_state, t, **kwargs)
        if output is None:
            return self._fail(f"controller {self._active_key!r} returned None: {_reason(child)}")
        self.last_error = _braking_reason([(f"controller {self._active_key!r}", child)])
        return output

    @property
    def status(self) -> ControllerStatus | None:
        """The active controller's status."""
        return self._options[self._active_key].status

    def set_next_controller(self, next_controller_selection: KeyT) -> None:
        """Select the controller to run from the next :meth:`forward` on (only recorded:
        nothing switches or resets until then). LookupError for an unknown key."""
        self._next_key = self._known(next_controller_selection)

    def get_active_controller_enum(self) -> KeyT:
        """Key of the active controller; it changes only in :meth:`forward` and :meth:`reset`."""
        return self._active_key

    def get_next_controller_enum(self) -> KeyT:
        """Key of the controller that the next :meth:`forward` will run."""
        return self._next_key

    def get_controller(self, controller_selection: KeyT) -> BaseController:
        """The controller registered under ``controller_selection`` (LookupError if none)."""
        return self._options[self._known(controller_selection)]

    def _known(self, key: KeyT) -> KeyT:
        if key not in self._options:
            raise LookupError(f"no controller for key {key!r}; options are {list(self._options)}")
        return key

    @property
    def controller_keys(self) -> list[KeyT]:
        """Keys of all controller options, in insertion order."""
        return list(self._options)

    def __repr__(self) -> str:
        return (
            f"SelectableController(options={list(self._options)!r}, "
            f"active={self._active_key!r}, next={self._next_key!r})"
        )


class _ControllerList(BaseController):
    """Shared part of the list containers: their children, an in-order reset, and a
    ``forward`` that runs the children in order. A subclass says what setpoint each child
    gets (:meth:`_child_setpoint`) and how its output joins the ones before
    (:meth:`_join`).
    """

    #: Between the children's names in ``repr``.
    _SEPARATOR = ", "

    def __init__(self, controllers: Sequence[BaseController]) -> None:
        super().__init__()
        self._controllers = _check_children(controllers, type(self).__name__)

    @property
    def controllers(self) -> tuple[BaseController, ...]:
        """The children, in order."""
        return self._controllers

    def reset(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> bool:
        """Reset every child, in order, with the caller's arguments (outputs are not chained);
        stop at (and report) the first that returns False: later children are not reset.
        """
        for i, child in enumerate(self._controllers):
            if not child.reset(estimated_state, setpoint_state, t, **kwargs):
                self.last_error = (
                    f"reset of controllers[{i}] ({_describe(child)}) failed: {_reason(child)}"
                )
                return False
        self.last_error = None
        return True

    def forward(
        self,
        estimated_state: RobotState,
        setpoint_state: RobotState | None,
        t: float,
        **kwargs: Any,
    ) -> RobotState | None:
        """Run the children in order and join their outputs; None as soon as a child returns
        None or its output cannot join (later children are not run that step)."""
        joined: RobotState | None = None
        for i, child in enumerate(self._controllers):
            child_setpoint = self._child_setpoint(setpoint_state, joined)
            output = child.forward(estimated_state, child_setpoint, t, **kwargs)
            if output is None:
                self._fail(f"controllers[{i}] ({_describe(child)}) returned None: {_reason(child)}")
                return None
            joined = self._join(i, child, joined, output)
            if joined is None:
                return None
        self.last_error = _braking_reason(
            [(f"controllers[{i}]", child) for i, child in enumerate(self._controllers)]
        )
        return joined

    @property
    def status(self) -> ControllerStatus | None:
        """The children's statuses combined (:func:`combined_status`)."""
        return combined_status(child.status for child in self._controllers)

    @abstractmethod
    def _child_setpoint(
        self, setpoint_state: RobotState | None, joined: RobotState | None
    ) -> RobotState | None:
        """The setpoint of the next child, given the caller's and the outputs so far (None
        before the first child)."""

    @abstractmethod
    def _join(
        self, i: int, child: BaseController, joined: RobotState | None, output: RobotState
    ) -> RobotState | None:
        """``output`` of ``controllers[i]`` joined to the outputs before it (None before the
        first); None, with ``last_error`` set, when it cannot join."""

    def __repr__(self) -> str:
        names = self._SEPARATOR.join(_describe(c) for c in self._controllers)
        return f"{type(self).__name__}([{names}])"


class CombinedController(_ControllerList):
    """Runs several controllers on the same input and merges their outputs (Isaac:
    ``ParallelController``).

    Every child gets the same estimated state, setpoint, ``t`` and keyword arguments. Starting
    from an empty ``RobotState()``, each child's output is merged in list order with
    :func:`~pinkctl.core.state.combine_robot_states`. The children must command disjoint things:
    the same (joint, field), (frame, field) or root field given by two children, or two joint
    (or frame) states over different ordered spaces, is an overlap. Different fields of the same
    joint (position from one child, effort from another) are fine.

    ``forward`` returns None as soon as a child returns None or its output overlaps what came
    before; later children are not run that step.

    Args:
        controllers: At least two controllers, run in this order (ValueError otherwise).
    """

    def _child_setpoint(
        self, setpoint_state: RobotState | None, joined: RobotState | None
    ) -> RobotState | None:
        return setpoint_state

    def _join(
        self, i: int, child: BaseController, joined: RobotState | None, output: RobotState
    ) -> RobotState | None:
        combined = combine_robot_states(RobotState() if joined is None else joined, output)
        if combined is None:
            self._fail(
                f"output of controllers[{i}] ({_describe(child)}) overlaps the outputs of "
                "the controllers before it (a joint/frame/root field given twice, or "
                "states over different joint or frame spaces)"
            )
        return combined


class ChainedController(_ControllerList):
    """Feeds each controller's output to the next as its setpoint (Isaac:
    ``SequentialController``).

    The first child gets the caller's setpoint; every later child gets the previous child's
    output as its setpoint. All children get the caller's estimated state, ``t`` and keyword
    arguments. Typical use: a command generator followed by a filter. ``forward`` returns the
    last child's output, or None as soon as a child returns None.

    Args:
        controllers: At least two controllers, run in this order (ValueError otherwise).
    """

    _SEPARATOR = " -> "

    def _child_setpoint(
        self, setpoint_state: RobotState | None, joined: RobotState | None
    ) -> RobotState | None:
        return setpoint_state if joined is None else joined

    def _join(
        self, i: int, child: BaseController, joined: RobotState | None, output: RobotState
    ) -> RobotState | None:
        return output


#: Isaac Sim name of :class:`SelectableController`.
ControllerContainer = SelectableController
#: Isaac Sim name of :class:`CombinedController`.
ParallelController = CombinedController
#: Isaac Sim name of :class:`ChainedController`.
SequentialController = ChainedController
