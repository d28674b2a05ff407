"""IKGroup: IK elements solved together, with their calculation settings and joint settings.

A group belongs to a :class:`~pinkctl.groups.scene.KinematicScene`. Its calculation settings
are the seed's: the resolution ``method`` (``"qp"``, ``"pinv"`` (a tiny fixed damping),
``"pinv_undamped"``, ``"dls"`` (damping ``damping`` [m]) or ``"transpose"``), the ``damping``
``δ`` [m] (of DLS, and of the ``qp`` method whose Tikhonov weight is ``δ²``),
``max_iterations`` and the :class:`~pinkctl.groups.flags.GroupFlags`. Joint settings
(:mod:`pinkctl.groups.joint_settings`) are the joints' own
(:meth:`~pinkctl.groups.scene.KinematicScene.set_joint_settings`, as in the seed), and a group
may override fields of them for itself (:meth:`IKGroup.set_joint`). A Jacobian callback may
inspect and change the weighted Jacobian and error of every step, and give the step or the
pseudo-inverse to use (:mod:`pinkctl.groups.iteration`).

Elements are addressed by index or by tip frame name (:meth:`IKGroup.element`, the seed's
``ik_handleflag_tipdummy``). ``group.solve(q)`` returns ``(q_new, result_code)``;
``group.jacobian(q)`` and ``group.error(q)`` give the unweighted Jacobian and error with their
row and column metadata; ``group.find_config(q)`` searches randomly for a configuration that
solves the group (:mod:`pinkctl.groups.find_config`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from .._validation import Checked, callable_or_none, choice, integer, real_number
from ..errors import InputError
from .element import IKElement
from .find_config import FoundConfig, find_config
from .flags import GroupFlags
from .jacobian import GroupError, GroupJacobian, evaluate
from .joint_settings import JointSettings
from .layout import Column, Layout, build_layout
from .scene import KinematicScene
from .solve import GroupReport, GroupResult, solve

__all__ = ["IK_METHODS", "MAX_DAMPING", "MAX_ITERATIONS", "IKGroup", "JacobianCallback"]

#: Resolution methods of a group.
IK_METHODS = ("qp", "pinv", "pinv_undamped", "dls", "transpose")

#: Largest ``max_iterations``: a step of a Franka group takes 0.1-0.2 ms, so the longest solve
#: takes seconds, not years (an iteration that has not converged in 10,000 steps will not).
MAX_ITERATIONS = 10_000

#: Largest ``damping`` [m]: at 1 km the damping term outweighs any arm's Jacobian by orders of
#: magnitude (the steps are zero), and its square stays far from overflowing.
MAX_DAMPING = 1e3

#: ``callback(jacobian) -> None, dq, J⁺ or (dq, J⁺)``: may change ``jacobian.J`` and
#: ``jacobian.e`` in place (:mod:`pinkctl.groups.iteration`).
JacobianCallback = Callable[[GroupJacobian], Any]


def _flags(value: Any) -> GroupFlags:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"flags must be GroupFlags, got {value!r}")
    if value < 0 or value & ~sum(int(f) for f in GroupFlags):
        raise InputError(f"flags: unknown bits in {value!r}")
    return GroupFlags(value)


class IKGroup:
    """IK elements of one scene solved together (see the module docstring).

    Args:
        scene: The scene whose frames the elements name.
        elements: The elements, in row order.
        method: Resolution method (:data:`IK_METHODS`).
        damping: Damping ``δ`` [m] of ``dls`` and ``qp``, in [0, :data:`MAX_DAMPING`].
        max_iterations: Most steps of a solve, in [1, :data:`MAX_ITERATIONS`].
        flags: :class:`GroupFlags` (default: enabled).
        jacobian_callback: Called at every step with the weighted :class:`GroupJacobian`.

    Raises:
        ValueError: A malformed argument, or an element naming a frame the scene lacks.
    """

    def __init__(
        self,
        scene: KinematicScene,
        elements: Iterable[IKElement] = (),
        *,
        method: str = "pinv",
        damping: float = 0.05,
        max_iterations: int = 20,
        flags: int = GroupFlags.ENABLED,
        jacobian_callback: JacobianCallback | None = None,
    ) -> None:
        if not isinstance(scene, KinematicScene):
            raise InputError(f"scene must be a KinematicScene, got {type(scene).__name__}")
        self.scene = scene
        self._elements: list[IKElement] = []
        self._joints: dict[str, dict[str, Any]] = {}  # per joint, the fields overridden
        self.method = method
        self.damping = damping
        self.max_iterations = max_iterations
        self.flags = flags
        self.jacobian_callback = jacobian_callback
        #: What the last solve did (None before the first one).
        self.last_report: GroupReport | None = None
        for element in elements:
            self.add_element(element)

    # ------------------------------------------------------------------ settings
    method = Checked(lambda v: choice(v, "method", IK_METHODS), "The resolution method.")
    damping = Checked(
        lambda v: real_number(v, "damping", low=0.0, high=MAX_DAMPING),
        "Damping ``δ`` [m] of ``dls`` and ``qp``.",
    )
    max_iterations = Checked(
        lambda v: integer(v, "max_iterations", low=1, high=MAX_ITERATIONS), "Most steps of a solve."
    )
    flags = Checked(_flags, "The group flags.")
    jacobian_callback: Checked[JacobianCallback | None] = Checked(
        lambda v: callable_or_none(v, "jacobian_callback"), "The Jacobian callback, or None."
    )

    # ------------------------------------------------------------------ elements
    @property
    def elements(self) -> tuple[IKElement, ...]:
        """The elements, in row order (edit an element through its properties)."""
        return tuple(self._elements)

    def add_element(self, element: IKElement) -> int:
        """Append an element (its frames must exist in the scene; its target becomes its
        tip's, see :class:`IKElement`); returns its index."""
        if not isinstance(element, IKElement):
            raise InputError(f"element must be an IKElement, got {element!r}")
        previous = self.scene.targets.get(element.tip)
        element.bind(self.scene)
        try:
            build_layout(self.scene, [*self._elements, element], self.joint)  # checks frames
        except InputError:
            element.unbind(self.scene, previous)
            raise
        self._elements.append(element)
        return len(self._elements) - 1

    def element_index(self, key: int | str) -> int:
        """Index of the element ``key``: an index, or a tip frame name (the first element on
        that tip, the seed's ``ik_handleflag_tipdummy``)."""
        if isinstance(key, str):
            for index, element in enumerate(self._elements):
                if element.tip == key:
                    return index
            tips = [element.tip for element in self._elements]
            raise InputError(f"key: no element of the group has the tip {key!r}; tips: {tips}")
        count = len(self._elements)
        if count == 0:
            raise InputError(f"key: the group has no element, got {key!r}")
        return integer(key, "key", low=-count, high=count - 1) % count

    def element(self, key: int | str) -> IKElement:
        """The element ``key`` (an index, or a tip frame name: see :meth:`element_index`)."""
        return self._elements[self.element_index(key)]

    def remove_element(self, key: int | str) -> IKElement:
        """Remove and return the element ``key`` (an index or a tip name)."""
        return self._elements.pop(self.element_index(key))

    # ------------------------------------------------------------------ joints
    def joint(self, name: str) -> JointSettings:
        """The settings of joint ``name`` in this group: the joint's own
        (:meth:`KinematicScene.joint_settings`) with this group's overrides."""
        settings = self.scene.joint_settings(name)
        overrides = self._joints.get(name)
        return dataclasses.replace(settings, **overrides) if overrides else settings

    @property
    def joint_settings(self) -> dict[str, JointSettings]:
        """The settings of the joints this group overrides, by joint name."""
        return {name: self.joint(name) for name in self._joints if self.scene.is_joint(name)}

    @property
    def joint_overrides(self) -> dict[str, dict[str, Any]]:
        """The fields this group overrides, by joint name (joints still in the scene)."""
        return {
            name: dict(fields) for name, fields in self._joints.items() if self.scene.is_joint(name)
        }

    def set_joint(self, name: str, **changes: Any) -> JointSettings:
        """Override fields of a joint's settings for this group only (``mode``, ``weight``,
        ``limit_margin``, ``max_step``); returns the group's settings of the joint."""
        try:
            settings = dataclasses.replace(self.joint(name), **changes)
        except TypeError as exc:
            raise InputError(f"set_joint: {exc}") from exc
        fields = {**self._joints.get(name, {}), **changes}
        self._joints[name] = {key: getattr(settings, key) for key in fields}
        return settings

    def reset_joint(self, name: str) -> None:
        """Drop this group's overrides of joint ``name`` (it follows the joint's settings)."""
        self.scene.joint_id(name)
        self._joints.pop(name, None)

    # ------------------------------------------------------------------ queries
    def layout(self) -> Layout:
        """Rows and columns resolved against the scene now (:mod:`pinkctl.groups.layout`)."""
        return build_layout(self.scene, self._elements, self.joint)

    @property
    def columns(self) -> tuple[Column, ...]:
        """The joint coordinates the group moves (one per Jacobian column)."""
        return self.layout().columns

    def jacobian(self, q: Any) -> GroupJacobian:
        """Unweighted Jacobian and error at ``q`` (dependent joints set from their masters)."""
        layout = self.layout()
        q_now = self.scene.apply_dependencies(self.scene.check_configuration(q))
        evaluation = evaluate(self.scene, layout, q_now, jacobian=True)
        assert evaluation.J is not None
        return GroupJacobian(evaluation.J, evaluation.e, layout.rows, layout.columns)

    def error(self, q: Any) -> GroupError:
        """Unweighted error at ``q``, ``tip - target`` per constrained axis."""
        layout = self.layout()
        q_now = self.scene.apply_dependencies(self.scene.check_configuration(q))
        return GroupError(evaluate(self.scene, layout, q_now, jacobian=False).e, layout.rows)

    def find_config(self, q: Any, **options: Any) -> FoundConfig:
        """A random search for a configuration that solves this group
        (:func:`pinkctl.groups.find_config`, the seed's ``ikFindConfig``)."""
        return find_config(self, q, **options)

    def solve(self, q: Any) -> GroupResult:
        """Solve this group alone from ``q``: ``(q_new, result_code)``; details in
        :attr:`last_report`."""
        return solve([self], q)
