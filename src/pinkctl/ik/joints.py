"""The joints an IK solve may move, and their limits.

IK works on a subset of the model's joints (by default the robot's controlled joints, and a
floating base's free-flyer root); every other joint keeps the value it has in the seed. IK
iterates are full Pinocchio configurations ``q`` (size ``model.nq``) and steps are tangent
vectors over the moved joints' velocity coordinates (``n`` of them), applied on the manifold
(``pin.integrate``), so quaternions of ball and free joints stay unit quaternions.

A moved joint's *values* are its coordinates in the chart ``q = neutral ⊕ values``: the angle
or displacement of a revolute or prismatic joint, the angle of a continuous joint (Pinocchio
stores ``(cos θ, sin θ)``), the rotation vector of a ball joint, the ``log6`` of a free-flyer's
pose. Only revolute and prismatic joints have limits; a ball joint's rotation and a free
root are unbounded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pinocchio as pin

from ..core.joint_info import joint_info
from ..errors import InputError

__all__ = ["JointSubset"]


def _as_slice(indices: np.ndarray) -> slice | np.ndarray:
    """A slice when the indices are contiguous and increasing (views instead of copies)."""
    if indices.size > 0 and np.array_equal(
        indices, np.arange(indices[0], indices[0] + indices.size)
    ):
        return slice(int(indices[0]), int(indices[0]) + int(indices.size))
    return indices


def _coordinates(
    model: pin.Model, names: Sequence[str], name: str
) -> tuple[list[tuple[int, int, int, float, float]], list[tuple[int, int, int, int, str]]]:
    """The moved coordinates of joints ``names``: per velocity coordinate ``(index in q or
    -1, index in v, entries in q, lower, upper)`` (limits [rad] or [m], infinite for ball and
    free joints), and per ball or free joint ``(idx_q, nq, idx_v, nv, kind)``.

    Raises:
        InputError: An unknown joint, or a mimic follower (no velocity of its own).
    """
    rows: list[tuple[int, int, int, float, float]] = []
    multi: list[tuple[int, int, int, int, str]] = []
    for joint in names:
        info = joint_info(model, joint, what=f"{name}: joint")
        if info.kind == "mimic":
            raise InputError(
                f"{name}: joint {joint!r} has no velocity of its own (a mimic follower); "
                "move its master instead"
            )
        if info.kind in ("scalar", "continuous"):
            rows.append((info.idx_q, info.idx_v, info.nq, info.lower, info.upper))
            continue
        kind = model.joints[model.getJointId(joint)].shortname()
        multi.append((info.idx_q, info.nq, info.idx_v, info.nv, kind))
        rows += [(-1, info.idx_v + k, 0, -np.inf, np.inf) for k in range(info.nv)]
    return rows, multi


class JointSubset:
    """Moved joints: index maps between joint values and Pinocchio ``q``/``v``, and limits.

    Attributes:
        names: Moved joint names, in the order of IK vectors and Jacobian columns.
        n: Number of moved velocity coordinates (one per scalar joint, 3 per ball joint, 6 per
            free-flyer).
        lower: Lower limit per moved coordinate [rad] or [m]; ``-inf`` when unbounded.
        upper: Upper limit per moved coordinate; ``+inf`` when unbounded.
        bounded: Whether each moved coordinate has finite limits.
        simple: True when every moved joint is a plain one-coordinate joint (``nq = nv = 1``),
            so ``q[q_cols]`` holds the joint values directly.
        q_cols: Indices (a slice when contiguous) of the moved coordinates in ``q``, valid
            when ``simple``.
        v_cols: Indices (a slice when contiguous) of the moved coordinates in ``v`` (Jacobian
            columns).
        q_index: Per moved coordinate, the index of its first entry in ``q`` (-1 for the
            coordinates of ball and free joints).
        q_size: Per moved coordinate, its entries in ``q``: 1 (revolute, prismatic), 2 (a
            continuous joint's ``(cos θ, sin θ)``), 0 (part of a ball or free joint).
    """

    def __init__(self, model: pin.Model, joint_names: Sequence[str], *, name: str = "joint_names"):
        names = list(joint_names)
        if not names:
            raise InputError(f"{name}: at least one joint is needed")
        if len(set(names)) != len(names):
            raise InputError(f"{name}: duplicate joint names in {names}")
        rows, multi = _coordinates(model, names, name)
        q_idx, v_idx, nq_per, lower, upper = (list(column) for column in zip(*rows))
        self.model = model
        self.names: list[str] = names
        self.n = len(v_idx)
        self._q_idx = np.array(q_idx, dtype=np.intp)
        self._v_idx = np.array(v_idx, dtype=np.intp)
        self._nq_per = np.array(nq_per, dtype=np.intp)
        self._multi = multi
        self.q_index = self._q_idx
        self.q_size = self._nq_per
        self._neutral = pin.neutral(model)
        self.lower = np.array(lower, dtype=np.float64)
        self.upper = np.array(upper, dtype=np.float64)
        self.bounded = np.isfinite(self.lower) & np.isfinite(self.upper)
        self.simple = bool(np.all(self._nq_per == 1))
        self.q_cols: slice | np.ndarray = _as_slice(self._q_idx) if self.simple else self._q_idx
        self.v_cols: slice | np.ndarray = _as_slice(self._v_idx)
        # Sampling range: the limits, or one turn for an unbounded joint.
        self.sample_low = np.where(self.bounded, self.lower, -np.pi)
        self.sample_high = np.where(self.bounded, self.upper, np.pi)
        self._sample_span = self.sample_high - self.sample_low
        # Limit geometry used by the iteration loop: a joint is "on a limit" when its distance
        # to the centre of its range reaches the half width (relative slack 1e-12 absorbs the
        # rounding of centre and half width; an unbounded joint never is).
        lo_b = np.where(self.bounded, self.lower, 0.0)
        hi_b = np.where(self.bounded, self.upper, 0.0)
        self.middle_values = 0.5 * (lo_b + hi_b)
        self.half_range = np.where(self.bounded, 0.5 * (hi_b - lo_b) * (1.0 - 1e-12), np.inf)
        self._dv = np.zeros(model.nv)
        self._bounded_all = bool(np.all(self.bounded))
        # Only joints with more coordinates than velocities (continuous, ball, free) need
        # normalising; without any, pin.normalize is the identity.
        self._normalizes = model.nq != model.nv
        # A (nq,) seed is a full configuration unless it also has the size of the moved
        # joints' values (then it is read as those, in subset order, unless that is q itself).
        self._full_seed_fast = model.nq != self.n or (
            self.simple and self.q_cols == slice(0, model.nq)
        )
        # Index sets read on every call of values() and clamp(), computed once.
        continuous = self._nq_per == 2
        self._continuous = continuous if bool(np.any(continuous)) else None
        self._continuous_q = self._q_idx[continuous]
        self._continuous_columns = [int(k) for k in np.flatnonzero(continuous)]
        self._scalar = self._nq_per == 1
        self._scalar_q = self._q_idx[self._scalar]
        limited = (self._nq_per == 1) & self.bounded
        self._limited = limited if bool(np.any(limited)) else None
        self._limited_q = self._q_idx[limited]
        self._limited_lower = self.lower[limited]
        self._limited_upper = self.upper[limited]

    def values(self, q: np.ndarray) -> np.ndarray:
        """Joint values (n,) read from a Pinocchio configuration (a copy; module docstring)."""
        if self.simple:
            return np.array(q[self.q_cols], dtype=np.float64)
        if self._multi:
            return pin.difference(self.model, self._neutral, q)[self._v_idx]
        out = q[self._q_idx].astype(np.float64)
        if self._continuous is not None:
            idx = self._continuous_q
            out[self._continuous] = np.arctan2(q[idx + 1], q[idx])
        return out

    def write(self, q: np.ndarray, values: np.ndarray) -> None:
        """Write joint values (n,) into a Pinocchio configuration, in place."""
        if self.simple:
            q[self.q_cols] = values
            return
        q[self._scalar_q] = values[self._scalar]
        for k in self._continuous_columns:
            i = self._q_idx[k]
            q[i] = np.cos(values[k])
            q[i + 1] = np.sin(values[k])
        if self._multi:
            dv = np.zeros(self.model.nv)
            dv[self._v_idx] = values
            moved = pin.integrate(self.model, self._neutral, dv)
            for idx_q, nq, _, _, _ in self._multi:
                q[idx_q : idx_q + nq] = moved[idx_q : idx_q + nq]

    def clamp(self, q: np.ndarray) -> None:
        """Clamp the moved joints of ``q`` into their limits, in place."""
        if self.simple and self._bounded_all:
            view = q[self.q_cols]
            np.minimum(np.maximum(view, self.lower, out=view), self.upper, out=view)
            if not isinstance(self.q_cols, slice):
                q[self.q_cols] = view
            return
        # only revolute and prismatic joints have limits: clip their coordinates in place
        if self._limited is not None:
            idx = self._limited_q
            q[idx] = np.clip(q[idx], self._limited_lower, self._limited_upper)

    def step(self, q: np.ndarray, dq: np.ndarray) -> None:
        """``q ← clamp(q ⊕ dq)`` for a displacement ``dq`` (n,) of the moved joints, in place."""
        if self.simple:
            cols = self.q_cols
            if isinstance(cols, slice):
                view = q[cols]
                view += dq
                if self._bounded_all:
                    np.minimum(np.maximum(view, self.lower, out=view), self.upper, out=view)
                    return
            else:
                q[cols] += dq
            self.clamp(q)
            return
        dv = self._dv
        dv[self.v_cols] = dq
        q[:] = pin.integrate(self.model, q, dv)
        dv[self.v_cols] = 0.0
        self.clamp(q)

    def pinned(self, values: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Joints sitting on a limit that ``dq`` would push further out (boolean mask)."""
        return ((values <= self.lower) & (dq < 0.0)) | ((values >= self.upper) & (dq > 0.0))

    def within_limits(self, q: np.ndarray, tol: float = 1e-12) -> bool:
        """Whether every moved joint of ``q`` lies inside its limits (up to ``tol``)."""
        limited = (self._nq_per == 1) & self.bounded
        vals = q[self._q_idx[limited]]
        return bool(
            np.all(vals >= self.lower[limited] - tol) and np.all(vals <= self.upper[limited] + tol)
        )

    # ------------------------------------------------------------------ seeds, samples
    def sample(self, rng: np.random.Generator, q_template: np.ndarray) -> np.ndarray:
        """A configuration with the moved scalar joints uniform within limits, ball joints at a
        uniformly random rotation, a free-flyer root where the template puts it, and the other
        joints from the template."""
        q = q_template.copy()
        # rng.uniform(low, high), drawn as its C code does (low + (high - low) * u, the same
        # doubles in the same order) without its per-call broadcasting, which costs more than
        # a local solve
        values = rng.random(self.n)
        np.multiply(values, self._sample_span, out=values)
        np.add(values, self.sample_low, out=values)
        if self._multi:
            current = self.values(q_template)
            multi = self._nq_per == 0
            values[multi] = current[multi]
        self.write(q, values)
        for idx_q, nq, _, _, kind in self._multi:
            if kind == "JointModelSpherical":
                quat = rng.normal(size=4)
                q[idx_q : idx_q + nq] = quat / np.linalg.norm(quat)
        return q

    def samples(self, rng: np.random.Generator, q_template: np.ndarray, k: int) -> np.ndarray:
        """``k`` configurations of :meth:`sample`, as a C-contiguous (k, nq) array: with
        scalar and continuous joints only, one (k, n) uniform draw (the same doubles in the same
        order as ``k`` calls), written as ``sample`` writes them."""
        if self._multi:
            return np.array([self.sample(rng, q_template) for _ in range(k)]).reshape(k, -1)
        values = rng.random((k, self.n))
        np.multiply(values, self._sample_span, out=values)
        np.add(values, self.sample_low, out=values)
        rows = np.repeat(q_template[None, :], k, axis=0)
        if self.simple:
            rows[:, self.q_cols] = values
            return rows
        for row, drawn in zip(rows, values):
            self.write(row, drawn)
        return rows

    def middle(self, q_template: np.ndarray) -> np.ndarray:
        """The nominal configuration: moved scalar joints at the middle of their ranges, ball and
        free joints as in the template."""
        q = q_template.copy()
        values = 0.5 * (self.sample_low + self.sample_high)
        if self._multi:
            multi = self._nq_per == 0
            values[multi] = self.values(q_template)[multi]
        self.write(q, values)
        return q

    def parse_seed(
        self, seed: Any, default_q: np.ndarray, *, name: str = "seed", clamp: bool = True
    ) -> np.ndarray:
        """A full, clamped Pinocchio configuration from a user seed.

        Args:
            seed: None (use ``default_q``), a full Pinocchio ``q`` (``model.nq``), the moved
                joints' values (n,), or a mapping joint name → value (joints not named keep
                ``default_q``'s value).
            default_q: Configuration supplying every value the seed does not give.
            name: Argument name used in error messages.
            clamp: Clamp into the limits (False: the caller's loop clamps its start, as the
                native IK loop does).

        Raises:
            ValueError: Wrong size, unknown joint name, or non-finite values.
        """
        if self._is_full_q(seed):  # the common form of a warm start (a result's q_full)
            if not all(map(math.isfinite, seed.tolist())):  # (numpy's reduction is slower)
                raise InputError(f"{name}: values must be finite")
            q = pin.normalize(self.model, seed) if self._normalizes else seed.copy()
        else:
            q = np.array(default_q, dtype=np.float64, copy=True)
            if isinstance(seed, Mapping):
                self._write_named(q, seed, name)
            elif seed is not None:
                self._write_array(q, seed, name)
        if clamp:
            self.clamp(q)
        return q

    def _is_full_q(self, seed: Any) -> bool:
        """Whether ``seed`` is a float64 full ``q`` taken as it is (no conversions)."""
        return (
            self._full_seed_fast
            and type(seed) is np.ndarray
            and seed.dtype == np.float64
            and seed.shape == (self.model.nq,)
        )

    def _write_named(self, q: np.ndarray, seed: Mapping[Any, Any], name: str) -> None:
        """Write a mapping joint name → value [rad] or [m] into ``q`` (one-coordinate and
        continuous joints only)."""
        model = self.model
        for joint, value in seed.items():
            if not isinstance(joint, str) or not model.existJointName(joint):
                raise InputError(f"{name}: {joint!r} is not a joint of the model")
            jmodel = model.joints[model.getJointId(joint)]
            v = float(value)
            if not np.isfinite(v):
                raise InputError(f"{name}: value of {joint!r} must be finite, got {value}")
            if jmodel.nq == 1:
                q[jmodel.idx_q] = v
            elif jmodel.nq == 2 and jmodel.nv == 1:
                q[jmodel.idx_q] = np.cos(v)
                q[jmodel.idx_q + 1] = np.sin(v)
            else:
                raise InputError(f"{name}: joint {joint!r} has {jmodel.nq} coordinates")

    def _write_array(self, q: np.ndarray, seed: Any, name: str) -> None:
        """Write an array seed into ``q``: the moved joints' values (n,) or a full ``q``
        (normalised)."""
        try:
            arr = np.array(seed, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{name}: expected an array of numbers, got {seed!r}") from exc
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{name}: values must be finite")
        if arr.size == self.n:
            self.write(q, arr)
        elif arr.size == self.model.nq:
            q[:] = arr
            if self._normalizes:
                q[:] = pin.normalize(self.model, q)  # unit quaternions, (cos, sin) pairs
        else:
            raise InputError(
                f"{name}: expected {self.n} values (joints {self.names}) or a full "
                f"configuration of size model.nq = {self.model.nq}; got {arr.size}"
            )

    def distance(self, a: np.ndarray, b: np.ndarray) -> float:
        """Euclidean norm of the tangent difference ``b ⊖ a`` over the moved coordinates.

        Continuous joints use the wrapped angle difference, ball and free joints the rotation
        (and translation) between the two.
        """
        if self.simple:
            diff = self.values(a) - self.values(b)
        else:
            diff = pin.difference(self.model, a, b)[self._v_idx]
        return float(np.sqrt(diff @ diff))
