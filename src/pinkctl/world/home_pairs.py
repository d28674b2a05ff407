"""Pairs that are close at home: the one policy of the controller and the global IK.

A robot's home configuration is admissible by definition, yet some of its pairs sit close
there by design (a gripper's jaw beside its wrist, a hand tucked beside the torso, the feet of
a standing robot on the floor). :func:`home_margins` gives each pair of a
:class:`~pinkctl.world.CollisionScene` the margin that keeps home admissible:

- a **self pair** closer than :data:`HOME_CLEARANCE` margins at home keeps **half its home
  clearance** (a row or a test at the full margin would pin the neighbourhood of home: tiago
  lagged a 5 cm circle by 20 mm), and one in contact at home is **not checked** (margin
  ``-inf``; the simulation excludes it too);
- a pair against the **floor** closer than the margin at home keeps half its home clearance
  (0 for a link on the floor);
- every other pair keeps the margin.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .scene import CollisionScene
from .world import FLOOR

__all__ = ["HOME_CLEARANCE", "home_margins"]

#: A self pair closer than this many margins at home is close by design: not checked.
HOME_CLEARANCE = 2.0


def home_margins(
    scene: CollisionScene,
    home: np.ndarray,
    margin: float,
    pairs: Sequence[int] | None = None,
) -> np.ndarray:
    """The margin [m] of each pair at configuration ``home`` (module docstring).

    Args:
        scene: The robot and its world.
        home: The robot's home configuration (``model.nq``).
        margin: The margin every other pair keeps [m], ``>= 0``.
        pairs: Indices of the pairs (in :attr:`~pinkctl.world.CollisionScene.pairs`, the
            geometry model's ``collisionPairs``); default: every pair.

    Returns:
        One margin per pair [m]: ``margin``, half the home clearance, or ``-inf`` (not
        checked).
    """
    at_home = scene.distances(home)
    chosen = range(len(at_home)) if pairs is None else pairs
    margins = np.full(len(chosen), float(margin))
    for k, index in enumerate(chosen):
        d = at_home[index]
        if d.pair.kind == "self" and d.distance < HOME_CLEARANCE * margin:
            margins[k] = 0.5 * d.distance if d.distance > 0.0 else -np.inf
        elif d.pair.body_b == FLOOR and d.distance < margin:
            margins[k] = 0.5 * max(d.distance, 0.0)
    return margins
