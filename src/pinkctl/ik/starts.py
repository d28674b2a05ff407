"""The random starts of a global search with an integer ``rng`` seed, drawn once per seed.

The native query (:mod:`pinkctl.ik.query`) hands the kernel the same starts as the Python
search draws (:meth:`~pinkctl.ik.joints.JointSubset.sample` on ``np.random.default_rng(seed)``),
so both paths restart from the same configurations; drawing them once per seed saves the
generator's construction and draws on every query.
"""

from __future__ import annotations

import numpy as np

from .joints import JointSubset

__all__ = ["StartCache"]


class StartCache:
    """The random starts of a search with an integer ``rng`` seed, drawn once: the Python
    path's :meth:`~pinkctl.ik.joints.JointSubset.sample` draws from its generator, kept as
    rows of full configurations (extended when a search needs more, by
    :meth:`~pinkctl.ik.joints.JointSubset.samples`: the same configurations).
    """

    def __init__(self, subset: JointSubset, template: np.ndarray, capacity: int = 8) -> None:
        self._subset = subset
        self._template = template
        self._capacity = capacity
        self._made: dict[int, tuple[np.random.Generator, np.ndarray]] = {}

    def rows(self, seed: int, at_least: int) -> np.ndarray:
        """At least ``at_least`` starts of ``seed``, as a C-contiguous (k, nq) array."""
        made = self._made.get(seed)
        if made is not None and len(made[1]) >= at_least:
            return made[1]
        if made is None:
            if len(self._made) >= self._capacity:
                self._made.clear()
            made = (np.random.default_rng(seed), np.empty((0, len(self._template))))
        generator, rows = made
        more = self._subset.samples(generator, self._template, at_least - len(rows))
        rows = np.ascontiguousarray(np.vstack([rows, more]))
        self._made[seed] = (generator, rows)
        return rows
