"""IKElement: one tip that should reach one target, on the axes its constraints name.

An element's error is a 6-vector (``e = tip - target``, the convention of :mod:`pinkctl.ik`):

.. math::

    e_p = R_C^T (p_T - p_G), \\qquad e_r = \\log_3(R_G^T R_T)

with ``T`` the tip, ``G`` the target and ``C`` the constraint base (by default the base,
by default the world): the position rows are the world-frame offset expressed along the
constraint base's axes; the rotation rows are the rotation vector from the target to the tip,
in the target's (equivalently the tip's) axes, so ``e_r[:2] = 0`` exactly when the two z axes
coincide (``ALPHA_BETA``) and ``e_r = 0`` when the orientations do (``+ GAMMA``). The element
keeps the rows its :class:`~pinkctl.groups.flags.Constraint` mask names.

The target belongs to the tip (the seed's target dummy): an element added to a group takes
the target its tip has in the scene (:meth:`~pinkctl.groups.scene.KinematicScene.set_target`),
or gives the tip its own when the tip has none; from then on ``element.target`` reads and
writes the scene's association, so every element on that tip agrees.

The base also bounds the chain: the joints an element moves are those between its base and
its tip. Weights scale the rows in the step (position rows by ``linear * element``, rotation
rows by ``angular * element``); precisions apply to the unweighted errors: the norm of the
constrained position rows [m] and of the constrained rotation rows [rad].
"""

from __future__ import annotations

from typing import Any

from .._validation import Checked, boolean, real_number
from ..errors import InputError
from .flags import Constraint, check_constraints
from .objects import WORLD

__all__ = ["IKElement"]


def _frame_name(value: Any, name: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise InputError(f"{name} must be a frame name, got {value!r}")
    return value


def _precision(value: Any) -> tuple[float, float]:
    linear, angular = _pair(value, "precision", 2)
    return linear, angular


def _weights(value: Any) -> tuple[float, float, float]:
    linear, angular, element = _pair(value, "weights", 3)
    return linear, angular, element


def _pair(value: Any, name: str, size: int) -> tuple[float, ...]:
    try:
        items = list(value)
    except TypeError as exc:
        raise InputError(f"{name} must be {size} numbers, got {value!r}") from exc
    if len(items) != size:
        raise InputError(f"{name} must be {size} numbers, got {value!r}")
    return tuple(real_number(v, f"{name}[{k}]", low=0.0) for k, v in enumerate(items))


class IKElement:
    """A tip frame, a target frame and the constrained axes (see the module docstring).

    Args:
        tip: Frame that moves (a robot frame, a dummy or a scene joint).
        target: Frame the tip should reach; None: the tip's target in the scene (set when
            the element is added to a group).
        base: Frame where the chain starts (None: the world).
        constraint_base: Frame whose axes the position rows use (None: the base).
        constraints: A :class:`Constraint` combination (default ``POSE``).
        precision: ``(linear [m], angular [rad])`` tolerances, >= 0.
        weights: ``(linear, angular, element)`` row weights, >= 0.
        enabled: Whether the element takes part in its group's solve.

    Raises:
        ValueError: A malformed argument (the message names it).
    """

    def __init__(
        self,
        tip: str,
        target: str | None = None,
        *,
        base: str | None = None,
        constraint_base: str | None = None,
        constraints: int = Constraint.POSE,
        precision: tuple[float, float] = (1e-4, 1e-3),
        weights: tuple[float, float, float] = (1.0, 1.0, 1.0),
        enabled: bool = True,
    ) -> None:
        self._tip = _frame_name(tip, "tip")
        self._scene: Any = None  # the scene whose target association this element shows
        self._target: str | None = None
        self.target = target
        self.base = base
        self.constraint_base = constraint_base
        self.constraints = constraints  # type: ignore[assignment]
        self.precision = precision
        self.weights = weights
        self.enabled = enabled

    @property
    def tip(self) -> str:
        """The tip frame (fixed for the element's life)."""
        return self._tip

    @property
    def target(self) -> str | None:
        """The target frame: the tip's target in the scene once the element is in a group
        (setting it sets the tip's target, for every element on that tip)."""
        if self._scene is not None:
            return self._scene.targets.get(self._tip)
        return self._target

    @target.setter
    def target(self, value: str | None) -> None:
        name = _frame_name(value, "target", optional=True)
        if self._scene is not None:
            self._scene.set_target(self._tip, name)
        else:
            self._target = name

    @property
    def scene(self) -> Any:
        """The scene the element was added to (None before its first group)."""
        return self._scene

    def bind(self, scene: Any) -> None:
        """Attach the element to ``scene``'s target associations (done by
        :meth:`~pinkctl.groups.IKGroup.add_element`): the tip takes the element's target
        when it has none; a tip whose target differs is refused.

        Raises:
            ValueError: The element belongs to another scene, neither the element nor its tip
                has a target, the tip already has another target, or a frame is unknown.
        """
        if self._scene is scene:
            return
        if self._scene is not None:
            raise InputError(f"element on tip {self._tip!r} belongs to another scene")
        current = scene.targets.get(self._tip)
        if self._target is None and current is None:
            raise InputError(
                f"target: element on tip {self._tip!r} has none and the tip has no target in "
                "the scene (give one, or scene.set_target)"
            )
        if self._target is not None and current is not None and self._target != current:
            raise InputError(
                f"target {self._target!r}: tip {self._tip!r} already has the target "
                f"{current!r} (scene.set_target({self._tip!r}, None) first, or set "
                "element.target to change it for every element on that tip)"
            )
        if current is None:
            scene.set_target(self._tip, self._target)
        self._scene = scene

    def unbind(self, scene: Any, previous: str | None) -> None:
        """Undo :meth:`bind` (a rejected :meth:`~pinkctl.groups.IKGroup.add_element`):
        restore the tip's ``previous`` target."""
        if self._scene is scene:
            scene.set_target(self._tip, previous)
            self._scene = None

    base = Checked(
        lambda v: None if v == WORLD else _frame_name(v, "base", optional=True),
        "The base frame, or None for the world.",
    )
    constraint_base = Checked(
        lambda v: _frame_name(v, "constraint_base", optional=True),
        "The constraint base frame, or None for the base.",
    )
    constraints = Checked(check_constraints, "The constrained axes.")
    precision = Checked(_precision, "``(linear [m], angular [rad])`` tolerances.")
    weights = Checked(_weights, "``(linear, angular, element)`` row weights.")
    enabled = Checked(lambda v: boolean(v, "enabled"), "Whether the element is solved.")

    def frames(self) -> tuple[str, str | None, str, str]:
        """``(tip, target, base, constraint base)`` with ``"world"`` for a None base (the
        target is None when the tip has none)."""
        base = self.base or WORLD
        return self._tip, self.target, base, self.constraint_base or base

    def __repr__(self) -> str:
        return (
            f"IKElement(tip={self._tip!r}, target={self.target!r}, base={self.base!r}, "
            f"constraint_base={self.constraint_base!r}, constraints={self.constraints!r}, "
            f"precision={self.precision}, weights={self.weights}, enabled={self.enabled})"
        )
