"""The rows and columns of a group's Jacobian, resolved against the scene's model.

Rows: per enabled element, the constrained axes in the order x, y, z, alpha, beta, gamma.
Columns: the velocity coordinates of the joints that move in the group: every joint on an
enabled element's chain (from its base to its tip) whose settings let it move, in model order
(one column per coordinate: three for a spherical joint). A dependent joint on a chain is not
a column: it follows its master, so its Jacobian column is folded into the master's (times
``d q_dep / d q_master``), and the master becomes a column if it may move.

The layout is computed at the start of every solve (a handful of Python operations), so
edits of the scene, the elements or the settings always take effect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .element import IKElement
from .flags import AXES
from .joint_settings import JointSettings
from .objects import JointDependency
from .scene import KinematicScene

__all__ = [
    "Column",
    "Columns",
    "ElementLayout",
    "Fold",
    "Layout",
    "Row",
    "build_layout",
    "chain_columns",
    "chain_joints",
]


@dataclass(frozen=True)
class Row:
    """Metadata of a Jacobian row: the element (index in the group) and the axis
    (``"x"``, ``"y"``, ``"z"``, ``"alpha"``, ``"beta"`` or ``"gamma"``)."""

    element: int
    axis: str


@dataclass(frozen=True)
class Column:
    """Metadata of a Jacobian column: the joint and its coordinate (0, or 0-2 for a ball)."""

    joint: str
    coordinate: int


@dataclass(frozen=True)
class ElementLayout:
    """An enabled element resolved: frame indices, rows of its 6-vector, weights."""

    index: int
    tip: int
    target: int
    constraint_base: int
    labels: tuple[str, ...]
    components: np.ndarray
    row_weights: np.ndarray
    linear: np.ndarray
    precision: tuple[float, float]


@dataclass(frozen=True)
class Fold:
    """A dependent joint's column folded into its master's."""

    joint: str  # the dependent joint
    dependent_v: int
    master_v: int
    master_q: int
    law: JointDependency


@dataclass(frozen=True)
class Columns:
    """The columns of a set of joints: metadata, indices, and per-column settings."""

    columns: tuple[Column, ...]
    v_indices: np.ndarray
    q_index: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    weights: np.ndarray
    margins: np.ndarray
    max_steps: np.ndarray
    folds: tuple[Fold, ...]


@dataclass(frozen=True)
class Layout(Columns):
    """Everything a solve needs about a group's rows and columns (per column arrays have the
    length of ``columns``; ``q_index`` is -1 for the coordinates of a spherical joint)."""

    elements: tuple[ElementLayout, ...]
    rows: tuple[Row, ...]

    @property
    def empty(self) -> bool:
        """No row or no column: nothing to solve."""
        return not self.rows or not self.columns


def _element_layout(scene: KinematicScene, index: int, element: IKElement) -> ElementLayout:
    ids = []
    for role, name in zip(("tip", "target", "base", "constraint_base"), element.frames()):
        if name is None:
            raise InputError(
                f"element {index}: tip {element.tip!r} has no target (set element.target, or "
                "scene.set_target)"
            )
        try:
            ids.append(scene.frame_id(name))
        except InputError as exc:
            raise InputError(
                f"element {index}: {role} {name!r} is not a frame of the scene"
            ) from exc
    axes = [axis for bit, bit_axes in AXES if element.constraints & bit for axis in bit_axes]
    linear_weight, angular_weight, element_weight = element.weights
    comps = np.array([component for _, component in axes], dtype=np.intp)
    weights = np.where(comps < 3, linear_weight, angular_weight) * element_weight
    return ElementLayout(
        index=index,
        tip=ids[0],
        target=ids[1],
        constraint_base=ids[3],
        labels=tuple(label for label, _ in axes),
        components=comps,
        row_weights=weights,
        linear=comps < 3,
        precision=element.precision,
    )


def chain_joints(scene: KinematicScene, tip: str, base: str) -> list[int]:
    """Joint indices between frame ``base`` and frame ``tip`` (those moving the tip but not the
    base), with at least one velocity coordinate, in model order."""
    model = scene.model
    tip_joint = model.frames[scene.frame_id(tip)].parentJoint
    base_joint = model.frames[scene.frame_id(base)].parentJoint
    chain = set(model.supports[tip_joint]) - set(model.supports[base_joint])
    return sorted(j for j in chain if model.joints[j].nv > 0)


def _moving_joints(
    scene: KinematicScene, on_chain: set[int], settings: Callable[[str], JointSettings]
) -> tuple[set[int], list[Fold]]:
    """The joints that move (masters of dependent joints included), and the folds."""
    model = scene.model
    dependencies = scene.dependencies
    moving: set[int] = set()
    folds: list[Fold] = []
    for joint in sorted(on_chain):
        name = model.names[joint]
        law = dependencies.get(name)
        if law is None:
            if settings(name).moves:
                moving.add(joint)
        elif settings(law.master).moves:
            master = scene.joint_id(law.master)
            moving.add(master)
            joints = model.joints
            folds.append(
                Fold(name, joints[joint].idx_v, joints[master].idx_v, joints[master].idx_q, law)
            )
    return moving, folds


def chain_columns(
    scene: KinematicScene, on_chain: set[int], settings: Callable[[str], JointSettings]
) -> Columns:
    """The columns of the joints ``on_chain`` (joint indices) whose settings let them move,
    dependent joints folded into their masters (module docstring)."""
    model = scene.model
    moving, folds = _moving_joints(scene, on_chain, settings)
    columns: list[Column] = []
    v_indices: list[int] = []
    q_index: list[int] = []
    per_column: list[tuple[float, float, float, float, float]] = []
    for joint in sorted(moving):
        jmodel = model.joints[joint]
        name = model.names[joint]
        scalar = jmodel.nq == 1 and jmodel.nv == 1
        lower, upper = scene.limits(name) if scalar else (-np.inf, np.inf)
        rotational = not jmodel.shortname().startswith("JointModelP")
        for k in range(jmodel.nv):
            columns.append(Column(name, k))
            v_indices.append(jmodel.idx_v + k)
            q_index.append(jmodel.idx_q if scalar else -1)
            own = settings(name)
            per_column.append(
                (lower, upper, own.weight, own.limit_margin, own.step_limit(rotational))
            )
    # one row per quantity: lower, upper, weight, margin, max step (each row contiguous)
    table = np.array(per_column, dtype=np.float64).reshape(-1, 5).T.copy()
    ints = (np.array(v_indices, dtype=np.intp), np.array(q_index, dtype=np.intp))
    lower, upper, weights, margins, max_steps = table
    return Columns(tuple(columns), *ints, lower, upper, weights, margins, max_steps, tuple(folds))


def build_layout(
    scene: KinematicScene, elements: Sequence[IKElement], settings: Callable[[str], JointSettings]
) -> Layout:
    """Resolve a group's enabled elements and joints against the scene (module docstring).

    Raises:
        ValueError: An element names a frame the scene does not have, or has no target.
    """
    resolved = [_element_layout(scene, k, el) for k, el in enumerate(elements) if el.enabled]
    rows = tuple(Row(layout.index, label) for layout in resolved for label in layout.labels)
    on_chain: set[int] = set()
    for layout in resolved:
        tip, _, base, _ = elements[layout.index].frames()
        on_chain.update(chain_joints(scene, tip, base))
    columns = chain_columns(scene, on_chain, settings)
    return Layout(elements=tuple(resolved), rows=rows, **vars(columns))
